// One client connection: reads requests from its socket, runs every complete command in the
// buffer, and writes all their replies with one send (queued with its I/O thread's other
// writes, see io_thread.h). It parks while a blocking command waits, holds its request while
// CLIENT PAUSE does, and enforces the query and output buffer limits.
//
// Threading: a connection lives on one I/O thread for its whole life and every method runs on
// that thread; its handlers never run concurrently. Other threads reach it only through its
// client's outbox (client_outbox.h), whose messages this thread hands to OnMessage.
//
// Ownership: the IoThread's `connections` map owns it while it is open; pending handlers (timers,
// posted messages) hold it or a weak reference. The ClientState is shared with the client
// registry and with the parts that keep clients (blocked waiters, monitors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "asio.hpp"
#include "protocol/reply_builder.h"
#include "protocol/request_parser.h"
#include "server/client_state.h"
#include "server/net/io_thread.h"
#include "server/net/posting_outbox.h"
#include "server/server.h"

namespace gigakv::server {

class Connection : public std::enable_shared_from_this<Connection>, public OutboxReceiver {
 public:
  // A connection of `owner`'s thread, with a new client id; Start gives it its socket.
  Connection(Server& server, IoThread& owner);
  // Unregisters the client (if Close did not) and closes the socket if still open.
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Takes over an accepted descriptor: from now on it is watched by the thread's ready set
  // (see IoThread) and closed by this connection.
  void Start(int fd);

  // A message from the client's outbox, on this thread. Each handler drops it once the
  // connection closed.
  void OnMessage(ClientMessage message) override;

  // Closes the socket and leaves every registry (blocked, monitors, paused, clients) now;
  // the object itself is destroyed by a later handler. Idempotent.
  void Close();

  // The ready set reported this connection (readable, writable, or an error, which the next
  // recv or send reports).
  void OnEvents();
  // Running a command right now (a busy script's thread serves its other connections).
  bool executing() const { return executing_; }

  ClientState& client() { return *client_; }

  // The thread's idle check: a client idle for a while gives back buffers a burst made large.
  void ReleaseIdleBuffers(int64_t now_ms);
  // The log record (AppendOnlyLog::appended) as it was when output was last added: with
  // appendfsync always, no byte of the pending output may be sent before it is durable (the
  // output may show any write applied until then, this client's or another's).
  uint64_t output_needs() const { return output_needs_; }

 private:
  friend class IoThread;  // FlushPendingWrites calls DoWrite.

  // The events the ready set reports for this connection: readable while it wants input,
  // writable while a reply waits for room in the socket.
  void SetInterest(uint32_t events);

  protocol::ParserLimits Limits() const;

  void EnsureReadSpace();

  // Wants input: the ready set reports the socket once it has some (or already has).
  void DoRead();

  // One recv per readiness event, as in Redis: what is left is reported again by the
  // level-triggered ready set.
  void ReadNow();

  // After a batch of commands: write their replies (reading resumes when the write completes),
  // or read more. A parked client keeps reading, so a disconnect is noticed while it waits.
  void ContinueAfterInput();

  // The client's command blocked (BLPOP...): run nothing more until a reply ends the wait.
  void Park();

  void ArmBlockTimer() { ArmTimerUntil(client_->block_deadline_ms, &Connection::OnBlockTimeout); }

  // Calls `on_fire` at `deadline_ms` (or after an hour, whichever is first: a far deadline in
  // one wait would overflow the timer's nanosecond clock, so the handler re-checks and re-arms).
  // Replaces any wait already armed.
  void ArmTimerUntil(int64_t deadline_ms, void (Connection::*on_fire)());

  void OnBlockTimeout();

  // The reply that ends a wait (served, timed out or CLIENT UNBLOCK); then the commands that
  // arrived meanwhile run.
  void OnUnblocked(std::string reply);

  // CLIENT PAUSE holds this client's next request: wait for the pause's end (a timer) or for
  // the server to announce a change (UNPAUSE, a new pause), then try the request again.
  void WaitForPause();

  void RetryAfterPause();

  // Output from another thread (MONITOR's lines): after the replies already queued, sent with
  // them, or at once when none are pending.
  // Lines that arrive once the client stopped monitoring (RESET), while its replies are off, or
  // once it is closing after QUIT, are dropped, as Redis adds none then.
  void OnPushedOutput(std::string output);

  // Pub/Sub messages wait in the client's queue (pubsub.h): into the output they go, behind
  // the replies already there.
  void OnPubSubReady();

  // Output was added outside a batch of commands: send it with the thread's next flush.
  void QueueOutput();

  void ProcessInput();

  void CheckQueryBufferLimit();

  // Replies not yet handed to the socket: the batch being built plus what is left of the one
  // being sent.
  size_t PendingOutputBytes() const { return reply_.buffer().size() + (out_.size() - out_sent_); }

  void CheckOutputBufferLimit();

  // Sends the replies now (the I/O thread's flush, or a write completion that found more).
  void DoWrite();

  // Sends what is left of `out_`. Most batches of replies fit the socket's send buffer and go
  // at once; the rest waits for the ready set to report the socket writable.
  void SendPending();

  void FinishWrite(bool failed);

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
  // The most input bytes waiting at once since the last ReleaseIdleBuffers: a buffer far above
  // it shrinks (Redis's querybuf_peak).
  size_t input_peak_ = 0;
  // Publishes qbuf/qbuf-free/argv-mem for CLIENT LIST (ClientState) with no command running.
  void NoteQueryBuffer();
  std::string out_;
  uint64_t output_needs_ = 0;
  // Output was added: it needs what the log has appended so far.
  void NoteOutput();
  bool closed_ = false;
  bool close_after_write_ = false;
  bool read_pending_ = false;
  bool write_pending_ = false;
  bool write_blocked_ = false;  // The socket is full: the rest of `out_` waits for EPOLLOUT.
  bool executing_ = false;      // Inside ProcessInput (see OnEvents).
  bool parked_ = false;         // Blocked in BLPOP & co.
  bool paused_ = false;         // Its next request waits for CLIENT PAUSE to end.
  // When the output went over client-output-buffer-limit's soft limit (0: it is not over).
  int64_t soft_limit_since_ms_ = 0;
  int64_t last_write_ms_ = 0;  // When output was last handed to the socket (coarse clock).
  asio::steady_timer block_timer_{owner_.io};
};

}  // namespace gigakv::server
