#include "server/net/network.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "asio.hpp"
#include "gigakv/strings.h"
#include "protocol/request_parser.h"
#include "server/commands/collection_access.h"
#include "server/errors.h"
#include "server/net/posting_outbox.h"
#include "spdlog/spdlog.h"

namespace gigakv::server {
namespace {

using asio::ip::tcp;

constexpr size_t kInitialInputBuffer = 16 * 1024;
constexpr size_t kMaxIdleInputBuffer = 64 * 1024;

constexpr std::string_view kProtectedModeDenied =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no password "
    "is set for the default user. In this mode connections are only accepted from the loopback "
    "interface. If you want to connect from external computers to Redis you may adopt one of the "
    "following solutions: 1) Just disable protected mode sending the command 'CONFIG SET "
    "protected-mode no' from the loopback interface by connecting to Redis from the same host "
    "the server is running, however MAKE SURE Redis is not publicly accessible from internet if "
    "you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just "
    "disable the protected mode by editing the Redis configuration file, and setting the protected "
    "mode option to 'no', and then restarting the server. 3) If you started the server manually "
    "just for testing, restart it with the '--protected-mode no' option. 4) Set up an "
    "authentication password for the default user. NOTE: You only need to do one of the above "
    "things in order for the server to start accepting connections from the outside.\r\n";

std::string EndpointText(const tcp::endpoint& endpoint) {
  asio::ip::address address = endpoint.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  }
  return StrCat(address.to_string(), ":", endpoint.port());
}

// "ip:port" of a connected socket's peer (`peer`) or of its own end; empty if unknown.
std::string SocketAddressText(int fd, bool peer) {
  tcp::endpoint endpoint;
  socklen_t length = static_cast<socklen_t>(endpoint.capacity());
  int result = peer ? ::getpeername(fd, endpoint.data(), &length)
                    : ::getsockname(fd, endpoint.data(), &length);
  if (result != 0 || length > endpoint.capacity()) return "";
  endpoint.resize(length);
  return EndpointText(endpoint);
}

class Connection;

// Each I/O thread runs its own io_context, and every socket operation (read, write, close,
// cancel) is started on the thread whose io_context owns the socket: other threads only post.
// That lets asio skip its per-socket reactor lock (UNSAFE_IO keeps the scheduler and
// registration locks, which posts and the acceptor's hand-off need).
//
// The connections' sockets are not asio sockets: like Redis's event loop, the thread keeps them
// in an epoll set of its own (`ready_set`, level-triggered), which the io_context watches as one
// descriptor. When it is readable, OnReady takes every ready connection at once, reads each
// (one recv), runs its commands, and then sends all their replies (FlushPendingWrites). asio's
// per-socket operations would cost a second recv per request at `-P 1` (its speculative read
// after each reply, which finds the socket empty) and a handler per read; here a request costs
// its recv and its send, plus a share of the batch's epoll calls.
struct IoThread {
  asio::io_context io{ASIO_CONCURRENCY_HINT_UNSAFE_IO};
  std::thread thread;
  // Every open connection, owned here until it closes. Touched only on this thread.
  std::unordered_map<Connection*, std::shared_ptr<Connection>> connections;
  int ready_set = -1;  // The epoll descriptor; owned and closed by ready_watch.
  std::unique_ptr<asio::posix::stream_descriptor> ready_watch;
  bool in_ready_batch = false;  // OnReady is running: it flushes the replies itself.
  std::unique_ptr<asio::steady_timer> timeout_timer;
  // Connections whose replies wait to be sent, in the order their batches ran. Like Redis's
  // clients_pending_write: the replies of all requests that one epoll wake-up delivered go out
  // together, after the last of them has run (FlushPendingWrites), not one by one in between.
  std::vector<std::shared_ptr<Connection>> pending_writes;
  bool flush_posted = false;

  absl::Status OpenReadySet();
  void WatchReady();
  void OnReady();
  void QueueWrite(std::shared_ptr<Connection> connection);
  void FlushPendingWrites();
};

class Connection : public std::enable_shared_from_this<Connection>, public OutboxReceiver {
 public:
  Connection(Server& server, IoThread& owner)
      : server_(server),
        owner_(owner),
        client_(std::make_shared<ClientState>(server.clients().NextClientId())) {}

  ~Connection() {
    if (fd_ >= 0) ::close(fd_);
    server_.clients().Unregister(client_->id);
  }

  // Takes over an accepted descriptor: from now on it is watched by the thread's ready set
  // (see IoThread) and closed by this connection.
  void Start(int fd) {
    fd_ = fd;
    int flags = ::fcntl(fd_, F_GETFL, 0);
    if (flags < 0 || ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK) != 0) {
      return;  // A recv or send must never block the thread; the destructor closes it.
    }
    int on = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    int keepalive = static_cast<int>(server_.settings().tcp_keepalive_s.get());
    if (keepalive > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
      ::setsockopt(fd_, IPPROTO_TCP, TCP_KEEPIDLE, &keepalive, sizeof(keepalive));
    }
    client_->addr = SocketAddressText(fd_, /*peer=*/true);
    client_->laddr = SocketAddressText(fd_, /*peer=*/false);
    epoll_event event{};
    event.events = interest_ = EPOLLIN;
    event.data.ptr = this;
    if (::epoll_ctl(owner_.ready_set, EPOLL_CTL_ADD, fd_, &event) != 0) {
      spdlog::warn("Cannot watch client socket: {}", std::strerror(errno));
      return;
    }
    client_->fd = fd_;
    int64_t now = server_.NowMs();
    client_->created_ms = now;
    client_->last_interaction_ms = now;
    // Other threads reach this connection only through its outbox, on this thread.
    client_->set_outbox(std::make_unique<PostingOutbox>(
        owner_.io, std::weak_ptr<OutboxReceiver>(shared_from_this())));
    // As in Redis, a client that connects while no password is set starts authenticated.
    client_->authenticated = !server_.settings().password_set.get();
    parser_.set_limits(Limits());
    server_.clients().Register(client_);
    owner_.connections.emplace(this, shared_from_this());
    read_pending_ = true;
  }

  // A message from the client's outbox, on this thread. Each handler drops it once the
  // connection closed.
  void OnMessage(ClientMessage message) override {
    switch (message.kind) {
      case ClientMessage::Kind::kUnblockedReply:
        OnUnblocked(std::move(message.bytes));
        break;
      case ClientMessage::Kind::kPushOutput:
        OnPushedOutput(std::move(message.bytes));
        break;
      case ClientMessage::Kind::kResume:
        RetryAfterPause();
        break;
      case ClientMessage::Kind::kKill:
        Close();
        break;
    }
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    if (client_->blocked.load()) server_.blocking().Remove(client_->id);
    if (client_->monitor.load()) server_.clients().RemoveMonitor(client_->id);
    if (client_->paused.exchange(false)) server_.clients().paused_clients().fetch_sub(1);
    // Gone from CLIENT LIST and connected_clients now, as in Redis, not when the last pending
    // handler lets go of this object (the destructor's second call is then a no-op).
    server_.clients().Unregister(client_->id);
    block_timer_.cancel();
    ::epoll_ctl(owner_.ready_set, EPOLL_CTL_DEL, fd_, nullptr);
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    fd_ = -1;
    // Destroyed by a later handler, never under a caller that may still hold a raw pointer
    // (OnReady's batch of events).
    asio::post(owner_.io, [self = shared_from_this()] {});
    owner_.connections.erase(this);
  }

  // The ready set reported this connection (readable, writable, or an error, which the next
  // recv or send reports).
  void OnEvents() {
    if (closed_) return;
    if (write_blocked_) {
      SendPending();  // Writable, or an error that the send reports.
    } else if (read_pending_) {
      ReadNow();
    }
    // Otherwise its replies are queued and go out at the end of this batch; a level-triggered
    // event that still holds is reported again after that.
  }

  ClientState& client() { return *client_; }

 private:
  friend struct IoThread;  // FlushPendingWrites calls DoWrite.

  // The events the ready set reports for this connection: readable while it wants input,
  // writable while a reply waits for room in the socket.
  void SetInterest(uint32_t events) {
    if (events == interest_ || closed_) return;
    epoll_event event{};
    event.events = events;
    event.data.ptr = this;
    ::epoll_ctl(owner_.ready_set, EPOLL_CTL_MOD, fd_, &event);
    interest_ = events;
  }

  protocol::ParserLimits Limits() const {
    protocol::ParserLimits limits;
    limits.max_bulk_len = server_.settings().proto_max_bulk_len.get();
    limits.unauthenticated = !client_->authenticated && server_.settings().password_set.get();
    return limits;
  }

  void EnsureReadSpace() {
    if (begin_ == end_) {
      begin_ = end_ = 0;
      if (capacity_ > kMaxIdleInputBuffer) {
        input_.reset();
        capacity_ = 0;
      }
    }
    if (capacity_ == 0) {
      capacity_ = kInitialInputBuffer;
      input_.reset(new char[capacity_]);
    }
    if (end_ < capacity_) return;
    size_t pending = end_ - begin_;
    size_t wanted = std::max(pending + parser_.bytes_hint(), pending + kInitialInputBuffer);
    if (begin_ > 0 && wanted <= capacity_) {
      std::memmove(input_.get(), input_.get() + begin_, pending);
    } else {
      size_t new_capacity = std::max(wanted, capacity_ * 2);
      std::unique_ptr<char[]> grown(new char[new_capacity]);
      std::memcpy(grown.get(), input_.get() + begin_, pending);
      input_ = std::move(grown);
      capacity_ = new_capacity;
    }
    begin_ = 0;
    end_ = pending;
  }

  // Wants input: the ready set reports the socket once it has some (or already has).
  void DoRead() {
    if (closed_) return;
    read_pending_ = true;
    SetInterest(EPOLLIN);  // Also after a blocked write, which watched for writability only.
  }

  // One recv per readiness event, as in Redis: what is left is reported again by the
  // level-triggered ready set.
  void ReadNow() {
    EnsureReadSpace();
    ssize_t n = ::recv(fd_, input_.get() + end_, capacity_ - end_, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {
      Close();  // The peer closed the connection, or it failed.
      return;
    }
    read_pending_ = false;
    end_ += n;
    ThreadStats& stats = server_.stats().Local();
    AddOwned(stats.net_input_bytes, n);
    AddOwned(stats.reads_processed, 1);
    server_.RefreshCoarseClock();  // One clock read per batch of requests.
    client_->last_interaction_ms.store(server_.CoarseNowMs(), std::memory_order_relaxed);
    ProcessInput();
    ContinueAfterInput();
  }

  // After a batch of commands: write their replies (reading resumes when the write completes),
  // or read more. A parked client keeps reading, so a disconnect is noticed while it waits.
  void ContinueAfterInput() {
    if (closed_) return;
    if (!reply_.buffer().empty()) {
      if (!write_pending_) {
        write_pending_ = true;  // No read until the replies are out.
        owner_.QueueWrite(shared_from_this());
      }
    } else if (close_after_write_) {
      if (!write_pending_) Close();
    } else if (!write_pending_) {
      DoRead();
    }
  }

  // The client's command blocked (BLPOP...): run nothing more until a reply ends the wait.
  void Park() {
    parked_ = true;
    int64_t deadline = client_->block_deadline_ms;
    if (deadline <= 0) return;
    ArmBlockTimer();
  }

  void ArmBlockTimer() { ArmTimerUntil(client_->block_deadline_ms, &Connection::OnBlockTimeout); }

  // Calls `on_fire` at `deadline_ms` (or after an hour, whichever is first: a far deadline in
  // one wait would overflow the timer's nanosecond clock, so the handler re-checks and re-arms).
  // Replaces any wait already armed.
  void ArmTimerUntil(int64_t deadline_ms, void (Connection::*on_fire)()) {
    constexpr int64_t kMaxWaitMs = 3600 * 1000;
    int64_t wait_ms = std::clamp<int64_t>(deadline_ms - server_.NowMs(), 0, kMaxWaitMs);
    block_timer_.expires_after(std::chrono::milliseconds(wait_ms));
    block_timer_.async_wait([self = shared_from_this(), on_fire](const asio::error_code& ec) {
      if (!ec) ((*self).*on_fire)();
    });
  }

  void OnBlockTimeout() {
    if (closed_ || !parked_) return;
    if (server_.NowMs() < client_->block_deadline_ms) {
      ArmBlockTimer();
      return;
    }
    // False when another thread is serving the client right now: its reply is on the way.
    if (!server_.blocking().TimeOut(client_->id)) return;
    // CLIENT REPLY OFF/SKIP: no reply.
    OnUnblocked(client_->reply_suppressed ? std::string()
                                          : BlockingRegistry::TimeoutReply(*client_));
  }

  // The reply that ends a wait (served, timed out or CLIENT UNBLOCK); then the commands that
  // arrived meanwhile run.
  void OnUnblocked(std::string reply) {
    if (closed_ || !parked_) return;
    parked_ = false;
    client_->blocked.store(false);
    block_timer_.cancel();
    reply_.buffer().append(reply);
    ProcessInput();
    ContinueAfterInput();
  }

  // CLIENT PAUSE holds this client's next request: wait for the pause's end (a timer) or for
  // the server to announce a change (UNPAUSE, a new pause), then try the request again.
  void WaitForPause() {
    paused_ = true;
    if (!client_->paused.exchange(true)) server_.clients().paused_clients().fetch_add(1);
    // pause_end_ms() is read after `paused` is published (both sequentially consistent), so
    // an UNPAUSE that missed this client has already cleared it: the wait is then 0.
    ArmTimerUntil(server_.clients().pause_end_ms(), &Connection::RetryAfterPause);
  }

  void RetryAfterPause() {
    if (closed_ || !paused_) return;
    paused_ = false;
    block_timer_.cancel();
    if (client_->paused.exchange(false)) server_.clients().paused_clients().fetch_sub(1);
    ProcessInput();  // Waits again if the pause still holds this request.
    ContinueAfterInput();
  }

  // Output from another thread (MONITOR's lines): after the replies already queued, sent with
  // them, or at once when none are pending.
  // Lines that arrive once the client stopped monitoring (RESET), while its replies are off, or
  // once it is closing after QUIT, are dropped, as Redis adds none then.
  void OnPushedOutput(std::string output) {
    if (closed_ || close_after_write_ || !client_->monitor.load() ||
        client_->reply_mode == ReplyMode::kOff) {
      return;
    }
    reply_.buffer().append(output);
    client_->output_buffer_bytes.store(PendingOutputBytes(), std::memory_order_relaxed);
    CheckOutputBufferLimit();  // A monitor that does not read is disconnected, as in Redis.
    if (closed_) return;
    if (write_pending_) return;  // FinishWrite sends what arrived meanwhile.
    write_pending_ = true;
    owner_.QueueWrite(shared_from_this());
  }

  void ProcessInput() {
    if (parked_ || paused_) {
      // Input keeps arriving while the client waits: it is held, but within the same limit.
      CheckQueryBufferLimit();
      return;
    }
    // An EXEC running on another thread finishes before this batch starts (transaction.h).
    TransactionGate::BatchScope gate(server_.transaction_gate());
    Server::TimedBatch timed_batch;
    // Small collections written by this batch are stored back inline once, at its end.
    InlineCommandScope inline_batch(server_.store());
    while (begin_ < end_ && !close_after_write_ && !parked_ && !paused_) {
      std::string_view pending(input_.get() + begin_, end_ - begin_);
      switch (parser_.Feed(pending)) {
        case protocol::RequestParser::Result::kCommand:
          server_.Execute(*client_, parser_.args(), reply_);
          if (client_->postponed) {
            // CLIENT PAUSE: the request stays in the buffer, parsed again once the pause ends.
            client_->postponed = false;
            WaitForPause();
            break;
          }
          begin_ += parser_.consumed();
          if (client_->blocked.load(std::memory_order_acquire)) Park();
          parser_.set_limits(Limits());  // AUTH, CONFIG SET proto-max-bulk-len...
          if (client_->close_after_reply) close_after_write_ = true;
          if (server_.shutdown_requested()) close_after_write_ = true;
          break;
        case protocol::RequestParser::Result::kEmpty:
          begin_ += parser_.consumed();
          break;
        case protocol::RequestParser::Result::kNeedMore:
          CheckQueryBufferLimit();
          return;
        case protocol::RequestParser::Result::kError:
          reply_.Error("ERR " + parser_.error_text());
          server_.stats().total_error_replies.fetch_add(1, std::memory_order_relaxed);
          server_.stats().CountError("ERR");
          close_after_write_ = true;
          return;
      }
    }
    client_->query_buffer_bytes.store(end_ - begin_, std::memory_order_relaxed);
    CheckOutputBufferLimit();
  }

  void CheckQueryBufferLimit() {
    size_t pending = end_ - begin_;
    client_->query_buffer_bytes.store(pending, std::memory_order_relaxed);
    if (static_cast<int64_t>(pending) > server_.settings().client_query_buffer_limit.get()) {
      spdlog::warn("Closing client {} that reached max query buffer length ({} bytes)",
                   client_->addr, pending);
      server_.stats().client_query_buffer_limit_disconnections.fetch_add(1);
      Close();
    }
  }

  // Replies not yet handed to the socket: the batch being built plus what is left of the one
  // being sent.
  size_t PendingOutputBytes() const { return reply_.buffer().size() + (out_.size() - out_sent_); }

  void CheckOutputBufferLimit() {
    // Normal clients: only the hard limit applies (to all output not yet sent).
    int64_t hard = server_.settings().normal_output_hard_limit.get();
    if (hard > 0 && static_cast<int64_t>(PendingOutputBytes()) > hard) {
      spdlog::warn("Client {} scheduled to be closed for overcoming of output buffer limits.",
                   client_->addr);
      server_.stats().client_output_buffer_limit_disconnections.fetch_add(1);
      reply_.buffer().clear();
      Close();
    }
  }

  // Sends the replies now (the I/O thread's flush, or a write completion that found more).
  void DoWrite() {
    write_pending_ = true;
    if (closed_) {
      write_pending_ = false;
      return;
    }
    out_.swap(reply_.buffer());
    reply_.buffer().clear();
    out_sent_ = 0;
    SendPending();
  }

  // Sends what is left of `out_`. Most batches of replies fit the socket's send buffer and go
  // at once; the rest waits for the ready set to report the socket writable.
  void SendPending() {
    AddOwned(server_.stats().Local().writes_processed, 1);
    while (out_sent_ < out_.size()) {
      ssize_t n = ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL);
      if (n >= 0) {
        out_sent_ += n;
        AddOwned(server_.stats().Local().net_output_bytes, n);  // Counted as sent, as Redis does.
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        write_blocked_ = true;
        SetInterest(EPOLLOUT);
        client_->output_buffer_bytes.store(out_.size() - out_sent_, std::memory_order_relaxed);
        return;
      } else if (errno != EINTR) {
        FinishWrite(/*failed=*/true);
        return;
      }
    }
    FinishWrite(/*failed=*/false);
  }

  void FinishWrite(bool failed) {
    write_pending_ = false;
    write_blocked_ = false;
    client_->output_buffer_bytes.store(0, std::memory_order_relaxed);
    out_sent_ = 0;  // PendingOutputBytes counts from here.
    if (out_.capacity() > kMaxIdleInputBuffer) {
      std::string().swap(out_);
    } else {
      out_.clear();
    }
    if (failed || closed_) {
      Close();
      return;
    }
    if (!reply_.buffer().empty()) {
      DoWrite();  // Replies that arrived while writing (a blocked client's wake-up).
    } else if (close_after_write_) {
      Close();
    } else {
      DoRead();
    }
  }

  Server& server_;
  IoThread& owner_;
  int fd_ = -1;
  uint32_t interest_ = 0;  // What the ready set reports (SetInterest).
  size_t out_sent_ = 0;    // Bytes of `out_` already sent.
  std::shared_ptr<ClientState> client_;
  protocol::RequestParser parser_;
  protocol::ReplyBuilder reply_;
  std::unique_ptr<char[]> input_;
  size_t capacity_ = 0;
  size_t begin_ = 0;
  size_t end_ = 0;
  std::string out_;
  bool closed_ = false;
  bool close_after_write_ = false;
  bool read_pending_ = false;
  bool write_pending_ = false;
  bool write_blocked_ = false;  // The socket is full: the rest of `out_` waits for EPOLLOUT.
  bool parked_ = false;         // Blocked in BLPOP & co.
  bool paused_ = false;         // Its next request waits for CLIENT PAUSE to end.
  asio::steady_timer block_timer_{owner_.io};
};

absl::Status IoThread::OpenReadySet() {
  ready_set = ::epoll_create1(EPOLL_CLOEXEC);
  if (ready_set < 0) {
    return absl::InternalError(StrCat("epoll_create1: ", std::strerror(errno)));
  }
  ready_watch = std::make_unique<asio::posix::stream_descriptor>(io, ready_set);
  return absl::OkStatus();
}

void IoThread::WatchReady() {
  ready_watch->async_wait(asio::posix::stream_descriptor::wait_read,
                          [this](const asio::error_code& ec) {
                            if (ec == asio::error::operation_aborted) return;  // Shutting down.
                            if (ec) spdlog::warn("Waiting for client sockets: {}", ec.message());
                            OnReady();
                          });
}

void IoThread::OnReady() {
  // Rounds follow each other without a trip through asio's reactor while connections keep
  // becoming ready; after kMaxRounds the other handlers (timers, posts) get their turn.
  constexpr int kMaxEvents = 256;
  constexpr int kMaxRounds = 16;
  epoll_event events[kMaxEvents];
  for (int round = 0; round < kMaxRounds; ++round) {
    int count = ::epoll_wait(ready_set, events, kMaxEvents, 0);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) spdlog::warn("epoll_wait on client sockets: {}", std::strerror(errno));
    if (count <= 0) {
      WatchReady();  // Idle: wait in the reactor.
      return;
    }
    in_ready_batch = true;
    for (int i = 0; i < count; ++i) {
      // Alive: Close() defers the destruction to a later handler.
      static_cast<Connection*>(events[i].data.ptr)->OnEvents();
    }
    in_ready_batch = false;
    FlushPendingWrites();
  }
  asio::post(io, [this] { OnReady(); });
}

void IoThread::QueueWrite(std::shared_ptr<Connection> connection) {
  pending_writes.push_back(std::move(connection));
  if (flush_posted || in_ready_batch) return;
  flush_posted = true;
  // Runs after the handlers already queued: the rest of this wake-up's reads.
  asio::post(io, [this] { FlushPendingWrites(); });
}

void IoThread::FlushPendingWrites() {
  flush_posted = false;
  std::vector<std::shared_ptr<Connection>> batch;
  batch.swap(pending_writes);
  for (auto& connection : batch) connection->DoWrite();
  batch.clear();
  if (pending_writes.empty()) pending_writes.swap(batch);  // Keeps the capacity.
}

}  // namespace

struct Network::Impl {
  explicit Impl(Server& server) : server(server) {}

  Server& server;
  std::vector<std::unique_ptr<IoThread>> threads;
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors;
  std::vector<std::unique_ptr<tcp::acceptor>> retired_acceptors;
  std::unique_ptr<asio::signal_set> signals;
  std::atomic<size_t> next_thread{0};
  std::atomic<bool> stopped{false};
  int bound_port = 0;

  void Accept(tcp::acceptor& acceptor) {
    IoThread& target = *threads[next_thread.fetch_add(1) % threads.size()];
    // Accepted on the acceptor's thread (0); the descriptor moves to `target` in OnAccepted.
    acceptor.async_accept(
        [this, &acceptor, &target](const asio::error_code& ec, tcp::socket socket) {
          if (ec == asio::error::operation_aborted) return;
          if (!ec) OnAccepted(target, std::move(socket));
          Accept(acceptor);
        });
  }

  void OnAccepted(IoThread& target, tcp::socket socket) {
    server.stats().total_connections_received.fetch_add(1, std::memory_order_relaxed);
    asio::error_code ec;
    if (server.stats().connected_clients.load() >= server.settings().maxclients.get()) {
      std::string reply = StrCat("-", errors::kMaxClients, "\r\n");
      asio::write(socket, asio::buffer(reply), ec);
      server.stats().rejected_connections.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (server.settings().protected_mode.get() && server.config().IsDefaultBind() &&
        !server.settings().password_set.get()) {
      auto remote = socket.remote_endpoint(ec);
      if (!ec && !remote.address().is_loopback() &&
          !(remote.address().is_v6() && remote.address().to_v6().is_v4_mapped() &&
            asio::ip::make_address_v4(asio::ip::v4_mapped, remote.address().to_v6())
                .is_loopback())) {
        asio::write(socket, asio::buffer(kProtectedModeDenied), ec);
        server.stats().rejected_connections.fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
    // Hand the descriptor to `target`, which adds it to its own ready set: from then on
    // only `target`'s thread touches it (see IoThread).
    int fd = socket.release(ec);
    if (ec) return;
    asio::post(target.io,
               [this, &target, fd] { std::make_shared<Connection>(server, target)->Start(fd); });
  }

  void ArmTimeoutTimer(IoThread& thread) {
    thread.timeout_timer->expires_after(std::chrono::seconds(1));
    thread.timeout_timer->async_wait([this, &thread](const asio::error_code& ec) {
      if (ec) return;
      int64_t timeout_s = server.settings().timeout_s.get();
      if (timeout_s > 0) {
        int64_t now = server.NowMs();
        std::vector<Connection*> idle;
        for (const auto& entry : thread.connections) {
          Connection* connection = entry.first;
          // Like Redis, clients waiting in a blocking command are not idle, and monitors (replicas
          // to Redis) never time out.
          if (connection->client().blocked.load() || connection->client().monitor.load() ||
              connection->client().paused.load()) {
            continue;
          }
          if (now - connection->client().last_interaction_ms.load() > timeout_s * 1000) {
            idle.push_back(connection);
          }
        }
        for (Connection* connection : idle) connection->Close();
      }
      ArmTimeoutTimer(thread);
    });
  }

  // Replaces the listening sockets after CONFIG SET port/bind. Runs on thread 0, which owns the
  // acceptors; on failure nothing listens until the caller restores the old values and rebinds.
  absl::Status Rebind(std::string_view name) {
    asio::error_code ec;
    for (auto& acceptor : acceptors) acceptor->close(ec);
    // Closed acceptors may still have an aborted accept handler queued: keep them alive.
    for (auto& acceptor : acceptors) retired_acceptors.push_back(std::move(acceptor));
    acceptors.clear();
    bound_port = 0;
    absl::Status status = Bind();
    if (!status.ok()) {
      acceptors.clear();
      return absl::UnavailableError(name == "port" ? "Unable to listen on this port"
                                                   : "Failed to bind to specified addresses.");
    }
    for (auto& acceptor : acceptors) Accept(*acceptor);
    server.tcp_port = bound_port;
    spdlog::info("Listening again on port {} ({} changed)", bound_port, name);
    return absl::OkStatus();
  }

  absl::Status Bind() {
    int port = static_cast<int>(server.settings().port.get());
    int backlog = static_cast<int>(server.settings().tcp_backlog);
    std::vector<std::string> addresses = SplitNonEmpty(server.settings().bind.get(), ' ');
    asio::io_context& io = threads[0]->io;
    for (std::string address : addresses) {
      bool optional = !address.empty() && address[0] == '-';
      if (optional) address.erase(0, 1);
      if (address == "*") address = "0.0.0.0";
      if (address == "::*") address = "::";
      asio::error_code ec;
      asio::ip::address ip = asio::ip::make_address(address, ec);
      if (ec) {
        if (optional) continue;
        return absl::InvalidArgumentError(StrCat("Invalid bind address '", address, "'"));
      }
      auto acceptor = std::make_unique<tcp::acceptor>(io);
      tcp::endpoint endpoint(ip, static_cast<unsigned short>(bound_port != 0 ? bound_port : port));
      acceptor->open(endpoint.protocol(), ec);
      if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
      if (!ec && ip.is_v6()) acceptor->set_option(asio::ip::v6_only(true), ec);
      if (!ec) acceptor->bind(endpoint, ec);
      if (!ec) acceptor->listen(backlog, ec);
      if (ec) {
        if (optional) continue;
        return absl::UnavailableError(StrCat("Could not create server TCP listening socket ",
                                             address, ":", port, ": ", ec.message()));
      }
      if (bound_port == 0) bound_port = acceptor->local_endpoint().port();
      acceptors.push_back(std::move(acceptor));
    }
    if (acceptors.empty() && port != 0) {
      return absl::UnavailableError("Failed listening on any bind address");
    }
    return absl::OkStatus();
  }
};

Network::Network(Server& server) : impl_(std::make_unique<Impl>(server)) {}

Network::~Network() {
  Stop();
  Wait();
}

int Network::port() const { return impl_->bound_port; }

absl::Status Network::Start() {
  int count = static_cast<int>(impl_->server.settings().io_threads);
  for (int i = 0; i < std::max(1, count); ++i) {
    auto thread = std::make_unique<IoThread>();
    thread->timeout_timer = std::make_unique<asio::steady_timer>(thread->io);
    if (absl::Status status = thread->OpenReadySet(); !status.ok()) return status;
    impl_->threads.push_back(std::move(thread));
  }
  absl::Status status = impl_->Bind();
  if (!status.ok()) {
    impl_->acceptors.clear();
    impl_->threads.clear();
    return status;
  }
  impl_->server.tcp_port = impl_->bound_port;
  for (auto& acceptor : impl_->acceptors) impl_->Accept(*acceptor);
  impl_->signals = std::make_unique<asio::signal_set>(impl_->threads[0]->io, SIGINT, SIGTERM);
  impl_->signals->async_wait([this](const asio::error_code& ec, int signal) {
    if (ec) return;
    spdlog::warn("Received {}, scheduling shutdown...", signal == SIGINT ? "SIGINT" : "SIGTERM");
    impl_->server.RequestShutdown();
  });
  impl_->server.set_on_shutdown([this] { Stop(); });
  impl_->server.config().AddApplier([this](std::string_view name) -> absl::Status {
    if (name != "port" && name != "bind") return absl::OkStatus();
    if (impl_->stopped.load()) return absl::OkStatus();
    asio::io_context& io = impl_->threads[0]->io;
    if (io.get_executor().running_in_this_thread()) return impl_->Rebind(name);
    // CONFIG SET runs on some I/O thread; the acceptors belong to thread 0, which may be
    // waiting for this thread's gate slot (transaction.h): give it up while waiting. Inside EXEC
    // this thread holds every slot, so thread 0 may never get to run the rebind.
    if (TransactionGate::ThisThreadIsExclusive()) {
      return absl::FailedPreconditionError(
          "changing port or bind inside MULTI/EXEC is only possible on the first I/O thread");
    }
    std::promise<absl::Status> done;
    std::string changed(name);
    asio::post(io, [this, &done, changed] { done.set_value(impl_->Rebind(changed)); });
    TransactionGate::ReleasedScope released;
    return done.get_future().get();
  });
  for (auto& thread : impl_->threads) {
    impl_->ArmTimeoutTimer(*thread);
    thread->WatchReady();
    IoThread* raw = thread.get();
    TransactionGate* gate = &impl_->server.transaction_gate();
    thread->thread = std::thread([raw, gate] {
      gate->RegisterThisThread();  // Its batches of commands then wait for a running EXEC.
      auto guard = asio::make_work_guard(raw->io);
      raw->io.run();
    });
  }
  return absl::OkStatus();
}

void Network::Stop() {
  if (impl_->stopped.exchange(true)) return;
  for (auto& thread : impl_->threads) {
    IoThread* raw = thread.get();
    asio::post(raw->io, [this, raw] {
      if (raw == impl_->threads[0].get()) {
        asio::error_code ec;
        for (auto& acceptor : impl_->acceptors) acceptor->close(ec);
        if (impl_->signals) impl_->signals->cancel(ec);
      }
      std::vector<Connection*> open;
      for (const auto& entry : raw->connections) open.push_back(entry.first);
      for (Connection* connection : open) connection->Close();
      raw->timeout_timer->cancel();
      raw->io.stop();
    });
  }
}

void Network::Wait() {
  for (auto& thread : impl_->threads) {
    if (thread->thread.joinable() && thread->thread.get_id() != std::this_thread::get_id()) {
      thread->thread.join();
    }
  }
}

}  // namespace gigakv::server
