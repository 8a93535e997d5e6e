#include "server/network.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "asio.hpp"
#include "gigakv/strings.h"
#include "protocol/request_parser.h"
#include "server/commands/collection_access.h"
#include "server/errors.h"
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

class Connection;

// Each I/O thread runs its own io_context, and every socket operation (read, write, close,
// cancel) is started on the thread whose io_context owns the socket: other threads only post.
// That lets asio skip its per-socket reactor lock (UNSAFE_IO keeps the scheduler and
// registration locks, which posts and the acceptor's hand-off need).
struct IoThread {
  asio::io_context io{ASIO_CONCURRENCY_HINT_UNSAFE_IO};
  std::thread thread;
  std::unordered_set<Connection*> connections;  // Touched only on this thread.
  std::unique_ptr<asio::steady_timer> timeout_timer;
  // Connections whose replies wait to be sent, in the order their batches ran. Like Redis's
  // clients_pending_write: the replies of all requests that one epoll wake-up delivered go out
  // together, after the last of them has run (FlushPendingWrites), not one by one in between.
  std::vector<std::shared_ptr<Connection>> pending_writes;
  bool flush_posted = false;

  void QueueWrite(std::shared_ptr<Connection> connection);
  void FlushPendingWrites();
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Server& server, IoThread& owner, tcp::socket socket)
      : server_(server),
        owner_(owner),
        socket_(std::move(socket)),
        client_(std::make_shared<ClientState>(server.NextClientId())) {}

  ~Connection() { server_.UnregisterClient(client_->id); }

  void Start() {
    asio::error_code ec;
    socket_.set_option(tcp::no_delay(true), ec);
    socket_.non_blocking(true, ec);  // DoWrite's direct send must never block the thread.
    int keepalive = static_cast<int>(server_.config().GetInt("tcp-keepalive"));
    if (keepalive > 0) {
      socket_.set_option(asio::socket_base::keep_alive(true), ec);
      int fd = socket_.native_handle();
      ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &keepalive, sizeof(keepalive));
    }
    auto remote = socket_.remote_endpoint(ec);
    if (!ec) client_->addr = EndpointText(remote);
    auto local = socket_.local_endpoint(ec);
    if (!ec) client_->laddr = EndpointText(local);
    client_->fd = socket_.native_handle();
    int64_t now = server_.NowMs();
    client_->created_ms = now;
    client_->last_interaction_ms = now;
    std::weak_ptr<Connection> weak = shared_from_this();
    asio::io_context* io = &owner_.io;
    client_->kill = [weak, io] {
      asio::post(*io, [weak] {
        if (auto self = weak.lock()) self->Close();
      });
    };
    client_->deliver_unblocked = [weak, io](std::string reply) {
      asio::post(*io, [weak, reply = std::move(reply)]() mutable {
        if (auto self = weak.lock()) self->OnUnblocked(std::move(reply));
      });
    };
    // As in Redis, a client that connects while no password is set starts authenticated.
    client_->authenticated = !server_.password_set();
    parser_.set_limits(Limits());
    server_.RegisterClient(client_);
    owner_.connections.insert(this);
    DoRead();
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    if (client_->blocked.load()) server_.blocking().Remove(client_->id);
    // Gone from CLIENT LIST and connected_clients now, as in Redis, not when the last pending
    // handler lets go of this object (the destructor's second call is then a no-op).
    server_.UnregisterClient(client_->id);
    block_timer_.cancel();
    owner_.connections.erase(this);
    asio::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }

  ClientState& client() { return *client_; }

 private:
  friend struct IoThread;  // FlushPendingWrites calls DoWrite.

  protocol::ParserLimits Limits() const {
    protocol::ParserLimits limits;
    limits.max_bulk_len = server_.proto_max_bulk_len();
    limits.unauthenticated = !client_->authenticated && server_.password_set();
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

  void DoRead() {
    if (closed_ || read_pending_) return;
    read_pending_ = true;
    EnsureReadSpace();
    socket_.async_read_some(
        asio::buffer(input_.get() + end_, capacity_ - end_),
        [self = shared_from_this()](const asio::error_code& ec, size_t n) { self->OnRead(ec, n); });
  }

  void OnRead(const asio::error_code& ec, size_t n) {
    read_pending_ = false;
    if (ec || closed_) {
      Close();
      return;
    }
    end_ += n;
    ThreadStats& stats = server_.LocalStats();
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

  // Waits at most an hour at a time (a far deadline in one wait would overflow the timer's
  // nanosecond clock); OnBlockTimeout re-arms until the deadline has passed.
  void ArmBlockTimer() {
    constexpr int64_t kMaxWaitMs = 3600 * 1000;
    int64_t wait_ms =
        std::clamp<int64_t>(client_->block_deadline_ms - server_.NowMs(), 0, kMaxWaitMs);
    block_timer_.expires_after(std::chrono::milliseconds(wait_ms));
    block_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
      if (!ec) self->OnBlockTimeout();
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
    protocol::ReplyBuilder timeout;
    timeout.set_resp_version(client_->resp);
    if (!client_->reply_suppressed) timeout.NullArray();  // CLIENT REPLY OFF/SKIP: no reply.
    OnUnblocked(std::move(timeout.buffer()));
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

  void ProcessInput() {
    if (parked_) {
      // Input keeps arriving while the client waits: it is held, but within the same limit.
      CheckQueryBufferLimit();
      return;
    }
    // An EXEC running on another thread finishes before this batch starts (transaction.h).
    TransactionGate::BatchScope gate(server_.transaction_gate());
    Server::TimedBatch timed_batch;
    // Small collections written by this batch are stored back inline once, at its end.
    InlineCommandScope inline_batch(server_.store());
    while (begin_ < end_ && !close_after_write_ && !parked_) {
      std::string_view pending(input_.get() + begin_, end_ - begin_);
      switch (parser_.Feed(pending)) {
        case protocol::RequestParser::Result::kCommand:
          server_.Execute(*client_, parser_.args(), reply_);
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
          server_.CountError("ERR");
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
    if (static_cast<int64_t>(pending) > server_.query_buffer_limit()) {
      spdlog::warn("Closing client {} that reached max query buffer length ({} bytes)",
                   client_->addr, pending);
      server_.stats().client_query_buffer_limit_disconnections.fetch_add(1);
      Close();
    }
  }

  void CheckOutputBufferLimit() {
    // Normal clients: only the hard limit applies to one batch of replies.
    int64_t hard = server_.normal_output_hard_limit();
    if (hard > 0 && static_cast<int64_t>(reply_.buffer().size()) > hard) {
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
    // Most batches of replies fit the socket's send buffer: send them now, and go straight on
    // to reading, without a trip of the write's completion through the event loop. Only what
    // does not fit waits for the socket to become writable.
    asio::error_code ec;
    size_t sent = socket_.write_some(asio::buffer(out_), ec);
    AddOwned(server_.LocalStats().writes_processed, 1);
    if (ec == asio::error::would_block || ec == asio::error::try_again) ec.clear();
    if (ec || sent == out_.size()) {
      OnWrite(ec, sent);
      return;
    }
    client_->output_buffer_bytes.store(out_.size() - sent, std::memory_order_relaxed);
    asio::async_write(socket_, asio::buffer(out_.data() + sent, out_.size() - sent),
                      [self = shared_from_this(), sent](const asio::error_code& error, size_t n) {
                        AddOwned(self->server_.LocalStats().writes_processed, 1);
                        self->OnWrite(error, sent + n);
                      });
  }

  void OnWrite(const asio::error_code& ec, size_t n) {
    write_pending_ = false;
    AddOwned(server_.LocalStats().net_output_bytes, n);
    client_->output_buffer_bytes.store(0, std::memory_order_relaxed);
    if (out_.capacity() > kMaxIdleInputBuffer) {
      std::string().swap(out_);
    } else {
      out_.clear();
    }
    if (ec || closed_) {
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
  tcp::socket socket_;
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
  bool parked_ = false;  // Blocked in BLPOP & co.
  asio::steady_timer block_timer_{owner_.io};
};

void IoThread::QueueWrite(std::shared_ptr<Connection> connection) {
  pending_writes.push_back(std::move(connection));
  if (flush_posted) return;
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
  std::thread cron_thread;
  std::mutex cron_mutex;
  std::condition_variable cron_cv;
  bool stopping = false;
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
    if (server.stats().connected_clients.load() >= server.config().GetInt("maxclients")) {
      std::string reply = StrCat("-", errors::kMaxClients, "\r\n");
      asio::write(socket, asio::buffer(reply), ec);
      server.stats().rejected_connections.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (server.config().GetBool("protected-mode") && server.config().IsDefaultBind() &&
        !server.password_set()) {
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
    // Hand the descriptor to `target`, which registers it with its own reactor: from then on
    // only `target`'s thread touches it (see IoThread).
    tcp protocol = socket.local_endpoint(ec).protocol();
    if (ec) return;
    int fd = socket.release(ec);
    if (ec) return;
    asio::post(target.io, [this, &target, protocol, fd] {
      tcp::socket own(target.io);
      asio::error_code assign_ec;
      own.assign(protocol, fd, assign_ec);
      if (assign_ec) {
        ::close(fd);
        return;
      }
      std::make_shared<Connection>(server, target, std::move(own))->Start();
    });
  }

  void ArmTimeoutTimer(IoThread& thread) {
    thread.timeout_timer->expires_after(std::chrono::seconds(1));
    thread.timeout_timer->async_wait([this, &thread](const asio::error_code& ec) {
      if (ec) return;
      int64_t timeout_s = server.config().GetInt("timeout");
      if (timeout_s > 0) {
        int64_t now = server.NowMs();
        std::vector<Connection*> idle;
        for (Connection* connection : thread.connections) {
          // Like Redis, clients waiting in a blocking command are not idle.
          if (connection->client().blocked.load()) continue;
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
    int port = static_cast<int>(server.config().GetInt("port"));
    int backlog = static_cast<int>(server.config().GetInt("tcp-backlog"));
    std::vector<std::string> addresses = SplitNonEmpty(server.config().Get("bind"), ' ');
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

  // Cron every 1000/hz ms. While active expiry has a backlog (many keys due at once), its
  // bounded passes also run every millisecond in between, so a mass expiry clears quickly without
  // any single pass holding a shard for long.
  void CronLoop() {
    using Clock = std::chrono::steady_clock;
    std::unique_lock<std::mutex> lock(cron_mutex);
    Clock::time_point next_cron = Clock::now();
    bool expiry_backlog = false;
    while (!stopping) {
      if (Clock::now() >= next_cron) {
        int64_t hz = std::max<int64_t>(1, server.config().GetInt("hz"));
        next_cron = Clock::now() + std::chrono::milliseconds(1000 / hz);
      }
      Clock::time_point wake =
          expiry_backlog ? std::min(next_cron, Clock::now() + std::chrono::milliseconds(1))
                         : next_cron;
      cron_cv.wait_until(lock, wake);
      if (stopping) break;
      lock.unlock();
      expiry_backlog = Clock::now() >= next_cron ? server.Cron() : server.ActiveExpire();
      lock.lock();
    }
  }
};

Network::Network(Server& server) : impl_(std::make_unique<Impl>(server)) {}

Network::~Network() {
  Stop();
  Wait();
}

int Network::port() const { return impl_->bound_port; }

absl::Status Network::Start() {
  int count = static_cast<int>(impl_->server.config().GetInt("io-threads"));
  for (int i = 0; i < std::max(1, count); ++i) {
    auto thread = std::make_unique<IoThread>();
    thread->timeout_timer = std::make_unique<asio::steady_timer>(thread->io);
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
    IoThread* raw = thread.get();
    TransactionGate* gate = &impl_->server.transaction_gate();
    thread->thread = std::thread([raw, gate] {
      gate->RegisterThisThread();  // Its batches of commands then wait for a running EXEC.
      auto guard = asio::make_work_guard(raw->io);
      raw->io.run();
    });
  }
  impl_->cron_thread = std::thread([this] { impl_->CronLoop(); });
  return absl::OkStatus();
}

void Network::Stop() {
  if (impl_->stopped.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lock(impl_->cron_mutex);
    impl_->stopping = true;
  }
  impl_->cron_cv.notify_all();
  for (auto& thread : impl_->threads) {
    IoThread* raw = thread.get();
    asio::post(raw->io, [this, raw] {
      if (raw == impl_->threads[0].get()) {
        asio::error_code ec;
        for (auto& acceptor : impl_->acceptors) acceptor->close(ec);
        if (impl_->signals) impl_->signals->cancel(ec);
      }
      std::vector<Connection*> open(raw->connections.begin(), raw->connections.end());
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
  if (impl_->cron_thread.joinable()) impl_->cron_thread.join();
}

}  // namespace gigakv::server
