#include "server/net/connection.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "gigakv/strings.h"
#include "server/commands/collection_access.h"
#include "spdlog/spdlog.h"

namespace gigakv::server {
namespace {

using asio::ip::tcp;

constexpr size_t kInitialInputBuffer = 16 * 1024;
constexpr size_t kMaxIdleInputBuffer = 64 * 1024;
// A busy connection keeps buffers up to this size from one batch to the next: freeing and
// allocating them again costs page faults on every batch (allocations this large are mapped
// afresh). Buffers above kMaxIdleInputBuffer go back once the client has been idle for
// kIdleReleaseMs (ReleaseIdleBuffers, from the thread's idle check), as Redis's clientsCron
// resizes query buffers.
constexpr size_t kMaxRetainedBuffer = 1024 * 1024;
constexpr int64_t kIdleReleaseMs = 2000;
// A query buffer above this shrinks when the last second's peak used less than half of it
// (Redis's PROTO_RESIZE_THRESHOLD).
constexpr size_t kShrinkableInputBuffer = 32 * 1024;

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

}  // namespace

Connection::Connection(Server& server, IoThread& owner)
    : server_(server),
      owner_(owner),
      client_(std::make_shared<ClientState>(server.clients().NextClientId())) {}

Connection::~Connection() {
  if (fd_ >= 0) ::close(fd_);
  server_.clients().Unregister(client_->id);
}

void Connection::Start(int fd) {
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
  int64_t now = server_.keyspace().NowMs();
  client_->created_ms = now;
  client_->last_interaction_ms = now;
  // Other threads reach this connection only through its outbox, on this thread.
  client_->set_outbox(std::make_unique<PostingOutbox>(
      owner_.mailbox, std::weak_ptr<OutboxReceiver>(shared_from_this())));
  // As in Redis, a client that connects while no password is set starts authenticated.
  client_->authenticated = !server_.settings().password_set.get();
  parser_.set_limits(Limits());
  server_.clients().Register(client_);
  owner_.connections.emplace(this, shared_from_this());
  read_pending_ = true;
}

void Connection::OnMessage(ClientMessage message) {
  switch (message.kind) {
    case ClientMessage::Kind::kUnblockedReply:
      OnUnblocked(std::move(message.bytes));
      break;
    case ClientMessage::Kind::kPushOutput:
      OnPushedOutput(std::move(message.bytes));
      break;
    case ClientMessage::Kind::kPubSubReady:
      OnPubSubReady();
      break;
    case ClientMessage::Kind::kResume:
      RetryAfterPause();
      break;
    case ClientMessage::Kind::kKill:
      Close();
      break;
  }
}

void Connection::Close() {
  if (closed_) return;
  closed_ = true;
  if (client_->blocked.load()) server_.blocking().Remove(client_->id);
  if (client_->monitor.load()) server_.clients().RemoveMonitor(client_->id);
  server_.pubsub().Forget(*client_);
  server_.tracking().Disable(*client_);
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

void Connection::OnEvents() {
  // Closed; or running a command (a script whose thread serves its other connections
  // meanwhile): level-triggered events come back after it.
  if (closed_ || executing_) return;
  if (write_blocked_) {
    SendPending();  // Writable, or an error that the send reports.
  } else if (read_pending_) {
    ReadNow();
  }
  // Otherwise its replies are queued and go out at the end of this batch; a level-triggered
  // event that still holds is reported again after that.
}

void Connection::SetInterest(uint32_t events) {
  if (events == interest_ || closed_) return;
  epoll_event event{};
  event.events = events;
  event.data.ptr = this;
  ::epoll_ctl(owner_.ready_set, EPOLL_CTL_MOD, fd_, &event);
  interest_ = events;
}

protocol::ParserLimits Connection::Limits() const {
  protocol::ParserLimits limits;
  limits.max_bulk_len = server_.settings().proto_max_bulk_len.get();
  limits.unauthenticated = !client_->authenticated && server_.settings().password_set.get();
  return limits;
}

void Connection::EnsureReadSpace() {
  if (begin_ == end_) {
    begin_ = end_ = 0;
    if (capacity_ > kMaxRetainedBuffer) {
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

void Connection::DoRead() {
  if (closed_) return;
  read_pending_ = true;
  SetInterest(EPOLLIN);  // Also after a blocked write, which watched for writability only.
}

void Connection::ReadNow() {
  EnsureReadSpace();
  ssize_t n = ::recv(fd_, input_.get() + end_, capacity_ - end_, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) {
    Close();  // The peer closed the connection, or it failed.
    return;
  }
  read_pending_ = false;
  end_ += n;
  input_peak_ = std::max(input_peak_, end_ - begin_);
  ThreadStats& stats = server_.stats().Local();
  AddOwned(stats.net_input_bytes, n);
  AddOwned(stats.reads_processed, 1);
  server_.keyspace().RefreshCoarseClock();  // One clock read per batch of requests.
  client_->last_interaction_ms.store(server_.keyspace().CoarseNowMs(), std::memory_order_relaxed);
  ProcessInput();
  ContinueAfterInput();
}

void Connection::ContinueAfterInput() {
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

void Connection::Park() {
  parked_ = true;
  int64_t deadline = client_->block_deadline_ms;
  if (deadline <= 0) return;
  ArmBlockTimer();
}

void Connection::ArmTimerUntil(int64_t deadline_ms, void (Connection::*on_fire)()) {
  constexpr int64_t kMaxWaitMs = 3600 * 1000;
  int64_t wait_ms = std::clamp<int64_t>(deadline_ms - server_.keyspace().NowMs(), 0, kMaxWaitMs);
  block_timer_.expires_after(std::chrono::milliseconds(wait_ms));
  block_timer_.async_wait([self = shared_from_this(), on_fire](const asio::error_code& ec) {
    if (!ec) ((*self).*on_fire)();
  });
}

void Connection::OnBlockTimeout() {
  if (closed_ || !parked_) return;
  if (server_.keyspace().NowMs() < client_->block_deadline_ms) {
    ArmBlockTimer();
    return;
  }
  // False when another thread is serving the client right now: its reply is on the way.
  if (!server_.blocking().TimeOut(client_->id)) return;
  // CLIENT REPLY OFF/SKIP: no reply.
  OnUnblocked(client_->reply_suppressed ? std::string() : BlockingRegistry::TimeoutReply(*client_));
}

void Connection::OnUnblocked(std::string reply) {
  if (closed_ || !parked_) return;
  parked_ = false;
  client_->blocked.store(false);
  block_timer_.cancel();
  reply_.buffer().append(reply);
  // Messages the re-run command made for this client (its own keys' notifications) follow its
  // reply, as Redis writes them.
  if (client_->pubsub() != nullptr) server_.pubsub().Drain(*client_, reply_);
  NoteOutput();
  ProcessInput();
  ContinueAfterInput();
}

void Connection::WaitForPause() {
  paused_ = true;
  if (!client_->paused.exchange(true)) server_.clients().paused_clients().fetch_add(1);
  // pause_end_ms() is read after `paused` is published (both sequentially consistent), so
  // an UNPAUSE that missed this client has already cleared it: the wait is then 0.
  ArmTimerUntil(server_.clients().pause_end_ms(), &Connection::RetryAfterPause);
}

void Connection::RetryAfterPause() {
  if (closed_ || !paused_) return;
  paused_ = false;
  block_timer_.cancel();
  if (client_->paused.exchange(false)) server_.clients().paused_clients().fetch_sub(1);
  ProcessInput();  // Waits again if the pause still holds this request.
  ContinueAfterInput();
}

void Connection::OnPushedOutput(std::string output) {
  if (closed_ || close_after_write_ || !client_->monitor.load() ||
      client_->reply_mode == ReplyMode::kOff) {
    return;
  }
  reply_.buffer().append(output);
  QueueOutput();
}

void Connection::OnPubSubReady() {
  if (closed_) return;
  // After QUIT nothing more is added, as Redis writes nothing to a client closing after its
  // reply. Pushes ignore CLIENT REPLY OFF, as in Redis.
  if (close_after_write_) {
    protocol::ReplyBuilder discard(client_->resp);
    server_.pubsub().Drain(*client_, discard);
    return;
  }
  if (server_.pubsub().Drain(*client_, reply_) == 0) return;
  QueueOutput();
}

void Connection::QueueOutput() {
  NoteOutput();
  client_->output_buffer_bytes.store(PendingOutputBytes(), std::memory_order_relaxed);
  CheckOutputBufferLimit();  // A client that does not read is disconnected, as in Redis.
  if (closed_) return;
  if (write_pending_) return;  // FinishWrite sends what arrived meanwhile.
  write_pending_ = true;
  owner_.QueueWrite(shared_from_this());
}

void Connection::ProcessInput() {
  if (parked_ || paused_) {
    // Input keeps arriving while the client waits: it is held, but within the same limit.
    CheckQueryBufferLimit();
    return;
  }
  // An EXEC running on another thread finishes before this batch starts (transaction.h). A
  // busy script does not: the batch then runs without the gate, where the dispatcher refuses
  // all but the commands allowed meanwhile (also when this thread serves it from the script).
  TransactionGate::BatchScope gate(server_.transaction_gate());
  std::optional<Dispatcher::TimedBatch> timed_batch;
  if (!gate.busy()) timed_batch.emplace();
  struct Executing {  // OnEvents leaves the connection alone meanwhile (ServeWhileBusy).
    explicit Executing(bool& flag) : flag(flag) { flag = true; }
    ~Executing() { flag = false; }
    bool& flag;
  } executing(executing_);
  // Small collections written by this batch are stored back inline once, at its end (a busy
  // batch writes none).
  std::optional<InlineCommandScope> inline_batch;
  if (!gate.busy()) inline_batch.emplace(server_.keyspace().store());
  // No read happens during the batch: the free space stays what it is now.
  client_->query_buffer_free.store(capacity_ - end_, std::memory_order_relaxed);
  bool resume_after_busy = false;
  while (begin_ < end_ && !close_after_write_ && !parked_ && !paused_) {
    // Entered without the gate for a busy script that has ended since: the rest of the batch
    // must not run ungated; it runs in a batch of its own right after.
    if (gate.busy() && !server_.transaction_gate().busy()) {
      resume_after_busy = true;
      break;
    }
    std::string_view pending(input_.get() + begin_, end_ - begin_);
    switch (parser_.Feed(pending)) {
      case protocol::RequestParser::Result::kCommand: {
        // CLIENT LIST's qbuf and argv-mem count the running command (qbuf-free is the batch's).
        size_t argv_bytes = 0;
        for (std::string_view arg : parser_.args()) argv_bytes += arg.size();
        client_->query_buffer_bytes.store(end_ - begin_, std::memory_order_relaxed);
        client_->argv_bytes.store(argv_bytes, std::memory_order_relaxed);
        const CommandOutcome outcome =
            server_.dispatcher().Execute(*client_, parser_.args(), reply_);
        if (outcome == CommandOutcome::kPostponed) {
          // CLIENT PAUSE: the request stays in the buffer, parsed again once the pause ends.
          WaitForPause();
          break;
        }
        begin_ += parser_.consumed();
        if (outcome == CommandOutcome::kBlocked) Park();
        parser_.set_limits(Limits());  // AUTH, CONFIG SET proto-max-bulk-len...
        if (client_->close_after_reply) close_after_write_ = true;
        if (server_.lifecycle().shutdown_requested()) close_after_write_ = true;
        break;
      }
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
  if (resume_after_busy) {
    asio::post(owner_.io, [self = shared_from_this()] {
      if (self->closed_ || self->executing_) return;
      self->ProcessInput();
      self->ContinueAfterInput();
    });
    return;
  }
  if (begin_ == end_) begin_ = end_ = 0;  // The whole buffer is free again.
  NoteQueryBuffer();
  NoteOutput();
  CheckOutputBufferLimit();
}

void Connection::NoteQueryBuffer() {
  client_->query_buffer_bytes.store(end_ - begin_, std::memory_order_relaxed);
  client_->query_buffer_free.store(capacity_ - end_, std::memory_order_relaxed);
  client_->argv_bytes.store(0, std::memory_order_relaxed);  // No command running.
}

void Connection::NoteOutput() {
  if (server_.aof().replies_wait()) output_needs_ = server_.aof().appended();
}

void Connection::ReleaseIdleBuffers(int64_t now_ms) {
  if (closed_ || write_pending_ || parked_ || paused_) return;
  // Idle both ways: a subscriber sends nothing but may receive all the time.
  const int64_t last_ms =
      std::max(client_->last_interaction_ms.load(std::memory_order_relaxed), last_write_ms_);
  const size_t peak = std::exchange(input_peak_, end_ - begin_);
  if (begin_ == end_) {
    if (now_ms - last_ms >= kIdleReleaseMs) {
      // Idle: the query buffer goes back entirely, as Redis frees an idle client's.
      input_.reset();
      capacity_ = 0;
    } else if (capacity_ > kShrinkableInputBuffer && peak < capacity_ / 2) {
      // Busy, but the last second needed less than half of it: shrink to the peak seen.
      capacity_ = std::max(peak, kInitialInputBuffer);
      input_.reset(new char[capacity_]);
    }
    begin_ = end_ = 0;
    NoteQueryBuffer();
  }
  if (now_ms - last_ms < kIdleReleaseMs) return;
  if (out_.capacity() > kMaxIdleInputBuffer) std::string().swap(out_);
  if (reply_.buffer().empty() && reply_.buffer().capacity() > kMaxIdleInputBuffer) {
    std::string().swap(reply_.buffer());
  }
}

void Connection::CheckQueryBufferLimit() {
  size_t pending = end_ - begin_;
  client_->query_buffer_bytes.store(pending, std::memory_order_relaxed);
  if (static_cast<int64_t>(pending) > server_.settings().client_query_buffer_limit.get()) {
    spdlog::warn("Closing client {} that reached max query buffer length ({} bytes)", client_->addr,
                 pending);
    server_.stats().client_query_buffer_limit_disconnections.fetch_add(1);
    Close();
  }
}

void Connection::CheckOutputBufferLimit() {
  if (closed_) return;  // Counted once, when it closed.
  // Most clients: not subscribers (no pubsub state), and the normal class has no limit.
  if (client_->pubsub() == nullptr && !server_.settings().normal_output_limit.any()) {
    soft_limit_since_ms_ = 0;
    return;
  }
  // client-output-buffer-limit of the client's class (Redis's checkClientOutputBufferLimits):
  // a subscriber's is pubsub's, any other's normal's (a monitor's too, as Redis classes it).
  const Settings::OutputLimit limit = IsSubscribed(*client_)
                                          ? server_.settings().pubsub_output_limit.get()
                                          : server_.settings().normal_output_limit.get();
  const auto used = static_cast<int64_t>(PendingOutputBytes());
  bool over = limit.hard > 0 && used >= limit.hard;
  if (limit.soft > 0 && used >= limit.soft) {
    // Over the soft limit for longer than its seconds, without falling below it meanwhile.
    const int64_t now_ms = server_.keyspace().CoarseNowMs();
    if (soft_limit_since_ms_ == 0) {
      soft_limit_since_ms_ = now_ms;
    } else if (now_ms - soft_limit_since_ms_ > limit.soft_seconds * 1000) {
      over = true;
    }
  } else {
    soft_limit_since_ms_ = 0;
  }
  if (over) {
    spdlog::warn("Client {} scheduled to be closed ASAP for overcoming of output buffer limits.",
                 client_->addr);
    server_.stats().client_output_buffer_limit_disconnections.fetch_add(1);
    reply_.buffer().clear();
    Close();
  }
}

void Connection::DoWrite() {
  write_pending_ = true;
  if (closed_) {
    write_pending_ = false;
    return;
  }
  out_.swap(reply_.buffer());
  reply_.buffer().clear();
  out_sent_ = 0;
  last_write_ms_ = server_.keyspace().CoarseNowMs();
  SendPending();
}

void Connection::SendPending() {
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

void Connection::FinishWrite(bool failed) {
  write_pending_ = false;
  write_blocked_ = false;
  client_->output_buffer_bytes.store(0, std::memory_order_relaxed);
  out_sent_ = 0;  // PendingOutputBytes counts from here.
  if (out_.capacity() > kMaxRetainedBuffer) {
    std::string().swap(out_);
  } else {
    out_.clear();
  }
  if (failed || closed_) {
    Close();
    return;
  }
  if (!reply_.buffer().empty()) {
    // Replies that arrived while writing (a blocked client's wake-up). With appendfsync
    // always they go through the thread's queue, which holds them until the log has what
    // they may show.
    if (server_.aof().replies_wait()) {
      write_pending_ = true;
      owner_.QueueWrite(shared_from_this());
    } else {
      DoWrite();
    }
  } else if (close_after_write_) {
    Close();
  } else {
    DoRead();
  }
}

}  // namespace gigakv::server
