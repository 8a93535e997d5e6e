#include "server/net/io_thread.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gigakv/strings.h"
#include "server/net/connection.h"
#include "spdlog/spdlog.h"

namespace gigakv::server {

absl::Status IoThread::OpenReadySet() {
  ready_set = ::epoll_create1(EPOLL_CLOEXEC);
  if (ready_set < 0) {
    return absl::InternalError(StrCat("epoll_create1: ", std::strerror(errno)));
  }
  ready_watch_ = std::make_unique<asio::posix::stream_descriptor>(io, ready_set);
  return absl::OkStatus();
}

void IoThread::WatchReady() {
  ready_watch_->async_wait(asio::posix::stream_descriptor::wait_read,
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
    in_ready_batch_ = true;
    for (int i = 0; i < count; ++i) {
      // Alive: Close() defers the destruction to a later handler.
      static_cast<Connection*>(events[i].data.ptr)->OnEvents();
    }
    in_ready_batch_ = false;
    // Messages this round posted for the thread's own clients (PUBLISH to a subscriber of this
    // thread) join this round's replies, as Redis writes them in the same event-loop round.
    mailbox.DeliverPending();
    FlushPendingWrites();
  }
  asio::post(io, [this] { OnReady(); });
}

void IoThread::ServeWhileBusy() {
  if (accept_while_busy_) accept_while_busy_();
  AdoptQueued();
  constexpr int kMaxEvents = 64;
  epoll_event events[kMaxEvents];
  const int count = ::epoll_wait(ready_set, events, kMaxEvents, 0);
  const bool was_in_batch = in_ready_batch_;
  in_ready_batch_ = true;
  for (int i = 0; i < count; ++i) static_cast<Connection*>(events[i].data.ptr)->OnEvents();
  in_ready_batch_ = was_in_batch;
  // Also the replies of the round the script started in (its clients wait for them before
  // sending more), but not the script's own connection's: its reply is being built.
  if (pending_writes_.empty()) return;
  std::vector<std::shared_ptr<Connection>> running;
  std::erase_if(pending_writes_, [&](const std::shared_ptr<Connection>& connection) {
    if (!connection->executing()) return false;
    running.push_back(connection);
    return true;
  });
  if (!pending_writes_.empty()) FlushPendingWrites();
  for (auto& connection : running) pending_writes_.push_back(std::move(connection));
}

void IoThread::QueueWrite(std::shared_ptr<Connection> connection) {
  pending_writes_.push_back(std::move(connection));
  if (flush_posted_ || in_ready_batch_) return;
  flush_posted_ = true;
  // Runs after the handlers already queued: the rest of this wake-up's reads.
  asio::post(io, [this] { FlushPendingWrites(); });
}

void IoThread::FlushPendingWrites() {
  flush_posted_ = false;
  std::vector<std::shared_ptr<Connection>> batch;
  batch.swap(pending_writes_);
  AppendOnlyLog& aof = server_.aof();
  if (aof.replies_wait()) {
    // No reply may show a write before the log has it: a connection's output waits for the
    // records appended when it was produced (Redis sends its replies after the fsync of its
    // event loop round). While the log fails, that means every reply waits (Redis exits).
    const uint64_t durable = aof.durable();
    for (auto& connection : batch) {
      const uint64_t needed = connection->output_needs();
      if (needed > durable) {
        durable_waits_.push_back({needed, std::move(connection)});
      } else {
        connection->DoWrite();
      }
    }
    if (!durable_waits_.empty()) WaitForDurable();
  } else {
    for (auto& connection : batch) connection->DoWrite();
  }
  batch.clear();
  if (pending_writes_.empty()) pending_writes_.swap(batch);  // Keeps the capacity.
}

void IoThread::WaitForDurable() {
  if (durable_wait_armed_) return;
  uint64_t first = UINT64_MAX;
  for (const DurableWait& wait : durable_waits_) first = std::min(first, wait.record);
  durable_wait_armed_ = true;
  server_.aof().WhenDurable(this, first, [this] { asio::post(io, [this] { OnDurable(); }); });
}

void IoThread::OnDurable() {
  durable_wait_armed_ = false;
  AppendOnlyLog& aof = server_.aof();
  const uint64_t durable = aof.durable();
  // A closed log (shutdown) waits for nothing. Connections need no order among themselves
  // (each has one batch of replies at a time).
  const bool release_all = !aof.enabled();
  std::vector<std::shared_ptr<Connection>> ready;
  for (size_t i = 0; i < durable_waits_.size();) {
    // Output added while waiting may need more (a blocked client served meanwhile).
    durable_waits_[i].record =
        std::max(durable_waits_[i].record, durable_waits_[i].connection->output_needs());
    if (release_all || durable_waits_[i].record <= durable) {
      ready.push_back(std::move(durable_waits_[i].connection));
      durable_waits_[i] = std::move(durable_waits_.back());
      durable_waits_.pop_back();
    } else {
      ++i;
    }
  }
  for (auto& connection : ready) connection->DoWrite();
  if (!durable_waits_.empty()) WaitForDurable();
}

void IoThread::StartWatching() {
  ArmIdleTimer();
  WatchReady();
}

void IoThread::Adopt(int fd) {
  {
    std::lock_guard lock(adopt_mutex_);
    if (adopt_closed_) {  // Shut down: nobody would ever serve it.
      ::close(fd);
      return;
    }
    adopt_queue_.push_back(fd);
  }
  asio::post(io, [this] { AdoptQueued(); });
}

void IoThread::AdoptQueued() {
  std::vector<int> fds;
  {
    std::lock_guard lock(adopt_mutex_);
    fds.swap(adopt_queue_);
  }
  for (int fd : fds) std::make_shared<Connection>(server_, *this)->Start(fd);
}

void IoThread::ArmIdleTimer() {
  idle_timer_.expires_after(std::chrono::seconds(1));
  idle_timer_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    int64_t timeout_s = server_.settings().timeout_s.get();
    const int64_t now_ms = server_.keyspace().NowMs();
    for (const auto& entry : connections) entry.first->ReleaseIdleBuffers(now_ms);
    if (timeout_s > 0) {
      int64_t now = server_.keyspace().NowMs();
      std::vector<Connection*> idle;
      for (const auto& entry : connections) {
        Connection* connection = entry.first;
        // Like Redis, clients waiting in a blocking command are not idle, and monitors (replicas
        // to Redis) and subscribers never time out.
        if (connection->client().blocked.load() || connection->client().monitor.load() ||
            IsSubscribed(connection->client()) || connection->client().paused.load()) {
          continue;
        }
        if (now - connection->client().last_interaction_ms.load() > timeout_s * 1000) {
          idle.push_back(connection);
        }
      }
      for (Connection* connection : idle) connection->Close();
    }
    ArmIdleTimer();
  });
}

void IoThread::Shutdown() {
  server_.aof().ForgetWaiters(this);
  durable_waits_.clear();
  std::vector<Connection*> open;
  for (const auto& entry : connections) open.push_back(entry.first);
  for (Connection* connection : open) connection->Close();
  idle_timer_.cancel();
  {
    std::lock_guard lock(adopt_mutex_);
    adopt_closed_ = true;
    for (int fd : adopt_queue_) ::close(fd);
    adopt_queue_.clear();
  }
  io.stop();
}

}  // namespace gigakv::server
