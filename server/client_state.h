// Per-client state that commands read and change: selected database, protocol version,
// authentication, name and library info, reply mode. Owned by its connection; fields read by
// other threads (CLIENT LIST, INFO) are atomics or guarded by `mutex`.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/client_outbox.h"

namespace gigakv::server {

struct CommandSpec;
class PubSubClient;

enum class ReplyMode : uint8_t { kOn, kOff, kSkipNext, kSkipThis };

class ClientState {
 public:
  explicit ClientState(uint64_t id) : id(id) {}

  const uint64_t id;
  std::atomic<int> db{0};
  int resp = 2;
  bool authenticated = false;
  bool close_after_reply = false;
  ReplyMode reply_mode = ReplyMode::kOn;
  bool no_evict = false;
  bool no_touch = false;
  std::atomic<int64_t> created_ms{0};
  std::atomic<int64_t> last_interaction_ms{0};
  std::atomic<uint64_t> commands_processed{0};
  // The query buffer as CLIENT LIST shows it (qbuf, qbuf-free, argv-mem), written by the
  // client's own thread before each command and after each batch: unprocessed bytes (the running
  // command's included), free space after them, and the running command's argument bytes.
  std::atomic<size_t> query_buffer_bytes{0};
  std::atomic<size_t> query_buffer_free{0};
  std::atomic<size_t> argv_bytes{0};
  std::atomic<size_t> output_buffer_bytes{0};
  std::string addr = "127.0.0.1:0";  // Set once at accept.
  std::string laddr = "127.0.0.1:0";
  int fd = -1;

  // Guarded by `mutex` (read by CLIENT LIST on other threads).
  std::string name() const {
    std::lock_guard<std::mutex> lock(mutex);
    return name_;
  }
  void set_name(std::string value) {
    std::lock_guard<std::mutex> lock(mutex);
    name_ = std::move(value);
  }
  std::string lib_name() const {
    std::lock_guard<std::mutex> lock(mutex);
    return lib_name_;
  }
  std::string lib_ver() const {
    std::lock_guard<std::mutex> lock(mutex);
    return lib_ver_;
  }
  void set_lib_name(std::string value) {
    std::lock_guard<std::mutex> lock(mutex);
    lib_name_ = std::move(value);
  }
  void set_lib_ver(std::string value) {
    std::lock_guard<std::mutex> lock(mutex);
    lib_ver_ = std::move(value);
  }
  // Name of the last command run; points at the command table's static names.
  std::atomic<const char*> last_command{"NULL"};

  // The client's outbox (client_outbox.h): how any thread reaches the client's own thread
  // (CLIENT KILL, the reply that ends a blocked wait, MONITOR lines, the end of a pause). Set
  // by the connection before the client is registered and never changed after, so other threads
  // that found the client through the registry read it without a lock. None for in-process
  // clients, which therefore never block, never wait for a pause and cannot monitor.
  void set_outbox(std::unique_ptr<ClientOutbox> outbox) { outbox_ = std::move(outbox); }
  bool has_outbox() const { return outbox_ != nullptr; }
  // Posts a message to the outbox, from any thread; a no-op without one.
  void Post(ClientMessage::Kind kind, std::string bytes = {}) const {
    if (outbox_ != nullptr) outbox_->Post(ClientMessage{kind, std::move(bytes)});
  }

  // Blocking commands (server/blocking.h). `blocked` is set when the client's command parks it
  // (the connection then stops running commands) and cleared by the connection when a reply
  // ends the wait; that reply comes through the outbox (kUnblockedReply).
  std::atomic<bool> blocked{false};
  int64_t block_deadline_ms = 0;  // 0 = forever. Written before `blocked` is set.
  // What the client gets when its wait ends unserved (timeout, CLIENT UNBLOCK): a null array for
  // commands blocked on keys, 0 for WAIT. Written before `blocked` is set.
  bool block_times_out_with_zero = false;
  // The reply of the command being run is discarded (CLIENT REPLY OFF or SKIP); a blocked
  // command keeps this for the reply that ends its wait. Set by Dispatcher::Execute.
  bool reply_suppressed = false;
  // Dispatcher::Execute is re-running this client's blocked command (served from another thread):
  // no OOM refusal (Redis serves blocked clients without one) and no second count in the stats.
  bool rerunning_blocked = false;
  // MONITOR: the client receives a line per command any client runs
  // (ClientRegistry::FeedMonitors), posted to its outbox (kPushOutput) behind the replies
  // already queued.
  std::atomic<bool> monitor{false};
  // CLIENT PAUSE (ClientRegistry::PostponesCommand): when the dispatcher leaves a request unrun
  // (CommandOutcome::kPostponed) the connection keeps it; `paused` while it waits; a kResume
  // message asks the connection to try its request again.
  std::atomic<bool> paused{false};

  // The last command name this client sent, byte for byte, and what the command table resolved
  // it to: a pipeline repeats one command, which then skips the lookup. Dispatcher::Execute's own
  // (not when re-running a blocked command); `last_command_spec` points into the static table.
  static constexpr size_t kLastCommandNameMax = 16;
  char last_command_name[kLastCommandNameMax];
  uint8_t last_command_name_len = 0;
  const CommandSpec* last_command_spec = nullptr;
  uint32_t last_command_id = 0;

  // MULTI/EXEC (server/transaction.h). Touched only on the client's own thread, except
  // `multi_count`, which CLIENT LIST reads: queued commands while in MULTI, else -1.
  struct Transaction {
    bool active = false;   // Between MULTI and EXEC/DISCARD.
    bool aborted = false;  // A command was rejected while queueing: EXEC answers EXECABORT.
    uint32_t flags = 0;    // Union of the queued commands' flags (EXEC is deny-oom if any is).
    std::vector<std::vector<std::string>> commands;
  };
  Transaction multi;
  std::atomic<int> multi_count{-1};
  bool in_exec = false;  // EXEC is running the queued commands: blocking commands don't block.
  // The append-only log's replay client: FUNCTION LOAD runs without its time limit.
  bool replaying = false;

  // Pub/Sub (server/pubsub.h): the client's subscriptions and the messages queued for it,
  // created by its first subscription (PubSub, on the client's own thread) and destroyed with
  // the client, which then leaves every channel. Any thread may read it once set.
  PubSubClient* pubsub() const { return pubsub_.load(std::memory_order_acquire); }
  // The client's Pub/Sub state, made by `make` if it has none yet; any thread (client tracking
  // queues invalidations for clients that never subscribed).
  template <typename Make>
  PubSubClient* EnsurePubSub(Make make) {
    std::lock_guard<std::mutex> lock(mutex);
    if (pubsub_owner_ == nullptr) {
      pubsub_owner_ = make();
      pubsub_.store(pubsub_owner_.get(), std::memory_order_release);
    }
    return pubsub_owner_.get();
  }

  // Client-side caching (server/tracking.h): TrackingFlag bits and the REDIRECT id, written on
  // the client's own thread (kTrackingBrokenRedirect by any), read by any; `tracking_resp`
  // mirrors `resp` for other threads. `tracking_caching` (CLIENT CACHING given for the next
  // command) and the BCAST prefixes (sorted): own thread only.
  std::atomic<uint32_t> tracking{0};
  std::atomic<uint64_t> tracking_redirect{0};
  std::atomic<int> tracking_resp{2};
  bool tracking_caching = false;
  std::vector<std::string> tracking_prefixes;

 private:
  std::unique_ptr<ClientOutbox> outbox_;
  mutable std::mutex mutex;
  std::string name_;
  std::string lib_name_;
  std::string lib_ver_;
  std::atomic<PubSubClient*> pubsub_{nullptr};
  // Last: destroyed first, so the client leaves the channels while the rest is intact.
  std::shared_ptr<PubSubClient> pubsub_owner_;
};

}  // namespace gigakv::server
