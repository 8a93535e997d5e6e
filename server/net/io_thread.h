// One I/O thread: its io_context, the connections it serves, and how it batches their work.
//
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
//
// Threading: everything here runs on the thread itself (`thread`, started by the Network), but
// Adopt, which any thread may call, and the construction, OpenReadySet, StartWatching and the
// thread's start, which happen before it runs. Ownership: the Network owns its IoThreads and
// destroys them after their threads ended; an IoThread owns its open connections.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "asio.hpp"
#include "server/net/posting_outbox.h"
#include "server/server.h"

namespace gigakv::server {

class Connection;

class IoThread {
 public:
  explicit IoThread(Server& server) : server_(server) {}
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;

  // Creates the ready set. Before the thread runs.
  absl::Status OpenReadySet();
  // Starts watching the ready set and the idle clients. Before the thread runs.
  void StartWatching();
  // Takes over an accepted descriptor, from any thread: a connection is made for it on this
  // thread, and from then on only this thread touches it.
  void Adopt(int fd);
  // On this thread: closes every connection, stops the idle check and then the io_context
  // (its run() returns).
  void Shutdown();

  // The batch of replies: `connection` has replies to send at the end of this round.
  void QueueWrite(std::shared_ptr<Connection> connection);

  // On this thread, from a busy script's hook (scripting.h): one non-blocking round of the
  // ready set; the connection running the script is left alone (Connection::OnEvents), the
  // others get BUSY or run what may run meanwhile, and their replies go out at once. Also
  // accepts waiting connections (the first thread, which owns the listening sockets: see
  // SetAcceptWhileBusy) and adopts those handed to this thread, so that a client can connect
  // to send SCRIPT KILL.
  void ServeWhileBusy();
  // The first thread's way to accept without its io_context (which is inside the script).
  void SetAcceptWhileBusy(std::function<void()> accept) { accept_while_busy_ = std::move(accept); }

  asio::io_context io{ASIO_CONCURRENCY_HINT_UNSAFE_IO};
  // Where other threads post messages for this thread's clients (posting_outbox.h).
  Mailbox mailbox{io};
  std::thread thread;
  // Every open connection, owned here until it closes.
  std::unordered_map<Connection*, std::shared_ptr<Connection>> connections;
  int ready_set = -1;  // The epoll descriptor; owned and closed by ready_watch_.

 private:
  // Makes connections for the descriptors Adopt queued (on this thread).
  void AdoptQueued();
  std::mutex adopt_mutex_;
  std::vector<int> adopt_queue_;  // Guarded by adopt_mutex_.
  bool adopt_closed_ = false;     // Shut down: Adopt closes what it gets (adopt_mutex_).
  std::function<void()> accept_while_busy_;
  void WatchReady();
  void OnReady();
  void FlushPendingWrites();
  // appendfsync always: the batches whose replies wait for the log's fsync go out once it is
  // done (AppendOnlyLog::WhenDurable), in order.
  void OnDurable();
  // Asks the log for the earliest record a waiting batch needs (once: one request at a time).
  void WaitForDurable();
  // Every second: closes the clients idle for longer than the timeout directive.
  void ArmIdleTimer();

  Server& server_;
  std::unique_ptr<asio::posix::stream_descriptor> ready_watch_;
  bool in_ready_batch_ = false;  // OnReady is running: it flushes the replies itself.
  asio::steady_timer idle_timer_{io};
  // Connections whose replies wait to be sent, in the order their batches ran. Like Redis's
  // clients_pending_write: the replies of all requests that one epoll wake-up delivered go out
  // together, after the last of them has run (FlushPendingWrites), not one by one in between.
  std::vector<std::shared_ptr<Connection>> pending_writes_;
  bool flush_posted_ = false;
  // Batches of replies waiting for the log record they need to be durable.
  struct DurableWait {
    uint64_t record;
    std::shared_ptr<Connection> connection;
  };
  std::vector<DurableWait> durable_waits_;
  bool durable_wait_armed_ = false;
};

}  // namespace gigakv::server
