// MULTI/EXEC support: what makes EXEC atomic (TransactionGate) and what makes WATCH work
// (WatchRegistry). The commands themselves are in commands/transaction_commands.cc; queueing
// happens in Dispatcher::Execute (dispatcher.cc).
//
// Atomicity. Every I/O thread registers a gate slot (a mutex of its own) and holds it while it
// runs a batch of commands (BatchScope, taken by the connection). EXEC takes every slot, in
// registration order, after giving up its own, under one exec mutex (ExclusiveScope): while it
// runs its queued commands no other I/O thread is running any command. The cost on the normal
// path is one uncontended lock of a thread-private mutex per batch of requests. The cron thread
// (cron.h) registers too and runs each pass of active expiry and eviction in a batch scope, so
// no key is removed between a transaction's writes: a change-stream consumer sees an EXEC's group
// whole, before or after any expiry. Lazy free takes no gate: it frees what is already unlinked.
//
// Deadlock freedom: a thread waits for slots only while holding the exec mutex and no slot of
// its own; a thread holding its slot never waits for another slot. Shard locks are taken only
// inside commands, after the gate.
//
// WATCH. WatchRegistry maps (db, key) to the clients watching it. It consumes the keyspace's
// change stream (gigakv/change_stream.h), asking for keys only and only while some key is
// watched: every record names exactly the keys a write changed (a failed SETNX or a DEL of a
// missing key publishes nothing), and removals by expiry and eviction are records too, so EXEC
// fails only when a watched key really changed, as in Redis. A flush or SWAPDB changes only the
// watched keys that existed (on either side), as in Redis: the record's key probe tells.
// A counting filter of the watched keys (server/key_filter.h) lets the records of unwatched
// keys (nearly all of them) pass without touching the registry's mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gigakv/change_stream.h"
#include "gigakv/shard_mutex.h"
#include "server/key_filter.h"

namespace gigakv::server {

class ClientState;

class TransactionGate {
 public:
  // Each I/O thread takes its own slot once per batch of commands, uncontended unless an EXEC
  // is waiting: ShardMutex makes that an inlined atomic instead of two pthread calls.
  using SlotMutex = ShardMutex;

  TransactionGate() = default;
  TransactionGate(const TransactionGate&) = delete;
  TransactionGate& operator=(const TransactionGate&) = delete;

  // Gives the calling thread a slot of this gate (an I/O thread, before it serves clients).
  // Threads that never register (tests) are not gated.
  void RegisterThisThread();

  // Held by an I/O thread while it runs a batch of commands. No-op on unregistered threads.
  // A contended wait (an EXEC or a script waits for the slots or holds them) polls with
  // backoff instead of sleeping on a lock, so that once a script runs past
  // busy-reply-threshold (SetBusy) the batch goes on without the slot: busy() is then true and
  // the dispatcher answers BUSY to all but the commands allowed meanwhile (SCRIPT KILL,
  // SHUTDOWN...). This also holds on the script's own thread, which serves its other
  // connections from the script's hook.
  class BatchScope {
   public:
    // `wait_for_script` false: while a script waits for or holds the gate, do not wait at all
    // (busy() is then true at once): the cron, which must keep watching the script.
    explicit BatchScope(TransactionGate& gate, bool wait_for_script = true);
    ~BatchScope();
    BatchScope(const BatchScope&) = delete;
    BatchScope& operator=(const BatchScope&) = delete;
    // Entered without the slot, because a busy script holds the gate.
    bool busy() const { return busy_; }

   private:
    TransactionGate& gate_;
    SlotMutex* slot_;
    bool busy_ = false;
  };

  // Held by EXEC while it runs its queued commands: no other registered thread runs a command
  // meanwhile. May be taken inside the caller's own BatchScope.
  class ExclusiveScope {
   public:
    explicit ExclusiveScope(TransactionGate& gate);
    ~ExclusiveScope();
    ExclusiveScope(const ExclusiveScope&) = delete;
    ExclusiveScope& operator=(const ExclusiveScope&) = delete;

   private:
    TransactionGate& gate_;
    SlotMutex* own_slot_;
  };

  // Around a script (EVAL), opened before its ExclusiveScope: batches that start meanwhile poll
  // for their slot (BatchScope), so that they can answer BUSY once the script is busy.
  class ScriptScope {
   public:
    explicit ScriptScope(TransactionGate& gate);
    ~ScriptScope();
    ScriptScope(const ScriptScope&) = delete;
    ScriptScope& operator=(const ScriptScope&) = delete;

   private:
    TransactionGate& gate_;
  };

  // A script holding the gate ran past busy-reply-threshold (true) or is ending (false, set
  // while it still holds the gate).
  void SetBusy(bool busy) { busy_.store(busy, std::memory_order_release); }
  bool busy() const { return busy_.load(std::memory_order_acquire); }

  // Gives up the calling thread's slot while it waits for another I/O thread (CONFIG SET port
  // waits for the thread that owns the listeners), so an EXEC waiting for that slot cannot
  // deadlock with it. Must not be used inside an ExclusiveScope (see ThisThreadIsExclusive).
  class ReleasedScope {
   public:
    ReleasedScope();
    ~ReleasedScope();
    ReleasedScope(const ReleasedScope&) = delete;
    ReleasedScope& operator=(const ReleasedScope&) = delete;

   private:
    SlotMutex* slot_;
  };
  // True while the calling thread runs an EXEC (holds every slot): it must not wait for
  // another I/O thread, which may be blocked on its slot.
  static bool ThisThreadIsExclusive();
  // An EXEC is waiting for the slots: long background work in a batch scope (the cron's active
  // expiry) ends its pass early so as not to hold every I/O thread up behind it.
  bool exec_waiting() const { return exec_waiting_.load(std::memory_order_relaxed) > 0; }

 private:
  struct alignas(64) Slot {
    SlotMutex mutex;
  };
  SlotMutex* SlotOfThisThread();
  std::mutex exec_mutex_;  // Serializes EXECs and registration.
  // EXECs waiting for the slots: new batches let them in first (a mutex is not fair, and an
  // I/O thread busy with many clients re-takes its slot at once).
  std::atomic<int> exec_waiting_{0};
  std::atomic<int> scripts_{0};  // Scripts waiting for or holding the gate.
  std::atomic<bool> busy_{false};
  std::vector<std::unique_ptr<Slot>> slots_;  // Grows only; guarded by exec_mutex_.
};

class WatchRegistry : public ChangeConsumer {
 public:
  // Registers with `changes` (which must outlive the registry's use), interested in nothing
  // until a key is watched.
  explicit WatchRegistry(ChangeStream& changes);
  ~WatchRegistry() override;
  WatchRegistry(const WatchRegistry&) = delete;
  WatchRegistry& operator=(const WatchRegistry&) = delete;

  // True while any client watches a key.
  bool active() const { return watched_entries_.load(std::memory_order_relaxed) > 0; }

  // Client `client_id` watches `key` in `db`. `expire_ms` is the key's absolute expiry when it
  // exists with a TTL, else 0: EXEC fails once that time has passed, even if the key was not
  // removed yet. Call with the key's shard lock held, so no write slips in between the caller's
  // lookup and the registration. Watching a key twice is a no-op.
  void Watch(uint64_t client_id, int db, std::string_view key, int64_t expire_ms);
  // Forgets the client's watches and its dirty mark (EXEC, DISCARD, UNWATCH, RESET, disconnect).
  void UnwatchAll(uint64_t client_id);
  // True if a key the client watches changed, or expired by `now_ms`, since it was watched.
  bool IsDirty(uint64_t client_id, int64_t now_ms);

  // Marks the watchers of `key` in `db` (any thread; may be called under shard locks).
  void Touch(int db, std::string_view key);

  // ChangeConsumer: marks the watchers of the keys a record changed.
  void OnChange(const ChangeRecord& record) override;

 private:
  struct KeyRef {
    int db;
    std::string key;
    bool operator==(const KeyRef& other) const { return db == other.db && key == other.key; }
    template <typename H>
    friend H AbslHashValue(H state, const KeyRef& ref) {
      return H::combine(std::move(state), ref.db, ref.key);
    }
  };
  struct ClientWatches {
    std::vector<std::pair<KeyRef, int64_t>> keys;  // With their expiry at WATCH time.
    bool dirty = false;
  };
  void TouchLocked(const KeyRef& ref);
  // Marks the watchers of each watched key of `db` (every database if db < 0) that `existed`.
  void TouchExisting(int db, const std::function<bool(int db, std::string_view key)>& existed);

  ChangeStream& changes_;
  KeyCountingFilter filter_;  // The watched (db, key) pairs, one count per watch.

  std::mutex mutex_;
  absl::flat_hash_map<KeyRef, std::vector<uint64_t>> watchers_;  // Key -> client ids.
  absl::flat_hash_map<uint64_t, ClientWatches> clients_;
  std::atomic<size_t> watched_entries_{0};
};

// Leaves MULTI (dropping the queued commands) and forgets the client's WATCHes (DISCARD, EXEC,
// RESET). On the client's own thread.
void DiscardTransaction(ClientState& client, WatchRegistry& watches);

}  // namespace gigakv::server
