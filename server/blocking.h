// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP,
// XREAD and XREADGROUP with BLOCK), and
// WAIT, which blocks on no key until its timeout (BlockWithoutKeys).
//
// How a blocking handler works: it parses its arguments (timeout with ParseBlockTimeoutOrReply),
// looks at its keys in order and, when one can serve it, replies exactly as the non-blocking
// variant would and returns. When none can, it calls BlockOnKeys and returns without replying.
// The client is then parked: its connection runs no further commands until it is served or times
// out. When a change record names a key it waits on (from any I/O thread), the
// blocked command is run again from scratch with the same arguments, for the clients blocked on
// that key in the order they blocked; a run that calls BlockOnKeys again leaves the client blocked
// where it was in the queue. At the deadline the client gets a null array (RESP2 `*-1`, RESP3
// `_`), as Redis replies to a timed-out blocking command.
//
// Threading and locks: BlockOnKeys and the change records run under the shard locks of the keys
// involved, then take the registry's mutex; the registry never takes a shard lock while holding
// its mutex, and serving (which runs commands, so takes shard locks) happens with no lock held, at
// the end of Dispatcher::Execute. Registering under the key's lock is what prevents lost wake-ups:
// a push either happens before the blocking command looked at the key, or after the client is in
// the queue.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gigakv/change_stream.h"
#include "gigakv/object.h"
#include "server/command.h"
#include "server/key_filter.h"

namespace gigakv::server {

class ClientState;

// Parses a blocking timeout in seconds (a decimal or float text, sub-second precision) as Redis:
// "timeout is not a float or out of range", "timeout is negative"; a deadline too far to
// represent means "block forever", as it does in Redis 7.0.
// Sets *deadline_ms to the absolute deadline in unix ms, or 0 for "block forever" (timeout 0).
bool ParseBlockTimeoutOrReply(CommandContext& ctx, std::string_view text, int64_t* deadline_ms);

// The same for a timeout in milliseconds given as an integer (WAIT): "timeout is not an integer
// or out of range", then the checks above.
bool ParseMillisecondTimeoutOrReply(CommandContext& ctx, std::string_view text,
                                    int64_t* deadline_ms);

// Parks the client on `keys` (in the client's database) until served or until `deadline_ms`
// (0 = forever). Where a client cannot block (an in-process client without a connection) it
// replies the timeout reply (null array) at once instead, as Redis does inside MULTI.
void BlockOnKeys(CommandContext& ctx, const std::vector<std::string_view>& keys,
                 int64_t deadline_ms, const std::vector<std::string>* rerun_args = nullptr);

// Parks the client on no key, until `deadline_ms` (0 = forever) or CLIENT UNBLOCK; it then gets
// the integer 0 (WAIT's count of replicas). Returns false, without replying, when the client
// cannot block (inside MULTI, or an in-process client).
bool BlockWithoutKeys(CommandContext& ctx, int64_t deadline_ms);

// The clients blocked on keys, shared by all I/O threads. Owned by the Server.
//
// Wake-ups come from the change stream: while any client is blocked, the registry consumes the
// keys of every change record that Redis signals (a push, a *STORE, RENAME/COPY/MOVE onto the
// key, SWAPDB bringing in a database, XADD; not the records that signal no watcher either, such
// as XACK or XGROUP SETID) and marks those a client waits on ready. Removals (DEL, expiry,
// eviction, flushes, SWAPDB) are signalled too: they serve nobody, but end the wait of XREADGROUP
// clients whose stream is gone (Redis's "UNBLOCKED the stream key no longer exists").
// The waiters of a list or sorted set are served in the order they blocked until one cannot be;
// every waiter of a stream is tried, since each reads from its own position.
// With nobody blocked it asks for nothing.
class BlockingRegistry : public ChangeConsumer {
 public:
  explicit BlockingRegistry(ChangeStream& changes);
  ~BlockingRegistry() override;
  BlockingRegistry(const BlockingRegistry&) = delete;
  BlockingRegistry& operator=(const BlockingRegistry&) = delete;

  // ChangeConsumer: signals the record's keys (see above).
  void OnChange(const ChangeRecord& record) override;
  // Signals (db, key) for a change that publishes no signalling record (XGROUP DESTROY, whose
  // blocked readers get an error). Called under the key's shard lock.
  void SignalKey(int db, std::string_view key);

  // Registers ctx.client as waiting (see BlockOnKeys). Returns false when the client cannot
  // block. During a re-run of the client's own blocked command it only notes that the client
  // stays blocked.
  // With `times_out_with_zero` the wait ends unserved with the integer 0 instead of a null array.
  // `rerun_args`, when given, is the command re-run when a key is ready instead of ctx.args
  // (XREAD's "$" resolved to the ID it stood for when the client blocked).
  bool Block(CommandContext& ctx, const std::vector<std::string_view>& keys, int64_t deadline_ms,
             bool times_out_with_zero = false,
             const std::vector<std::string>* rerun_args = nullptr);

  // Serves the waiters of the keys signalled on this thread, until no ready key is left, running
  // their commands again through `dispatcher`. Called by Dispatcher::Execute with no lock held;
  // a no-op when nothing was signalled.
  void ServeReadyKeys(Dispatcher& dispatcher, Store& store);
  static bool HasReadyKeys();
  // For threads that change keys outside Dispatcher::Execute (the cron thread's active expiry):
  // serves what their changes signalled. Call with no lock held.
  void ServeKeysSignalledHere(Dispatcher& dispatcher, Store& store);

  // The client's deadline passed (its connection's timer): true when it was still waiting and is
  // now removed (the caller sends the timeout reply); false when it was already served or is
  // being served right now (then whoever serves it will deliver a reply).
  bool TimeOut(uint64_t client_id);
  // CLIENT UNBLOCK: like TimeOut, but delivers the reply itself (`error` empty = the timeout
  // reply, else that error). Returns whether the client was blocked.
  bool Unblock(uint64_t client_id, std::string_view error);
  // The client's connection closed: forget it.
  void Remove(uint64_t client_id);

  size_t blocked_clients() const { return count_.load(std::memory_order_relaxed); }

  // The reply that ends the client's wait unserved (timeout, CLIENT UNBLOCK without ERROR).
  static std::string TimeoutReply(const ClientState& client);

 private:
  struct Waiter {
    std::shared_ptr<ClientState> client;
    int db = 0;
    KeyType wanted = KeyType::kList;  // The key type that can serve it (list, zset, stream).
    bool group_reader = false;        // XREADGROUP: ends with an error when its stream goes.
    // Its stream was removed by expiry, eviction or a flush: the wait ends with UNBLOCKED
    // whatever the key holds when it is served.
    bool stream_removed = false;
    std::vector<std::string> keys;
    std::vector<std::string> args;  // The command, re-run when a key is ready.
    bool serving = false;           // A thread is re-running its command now.
    bool reblocked = false;         // That re-run blocked again.
    bool timed_out = false;         // Its deadline passed while it was being served.
    std::string unblock_error;      // CLIENT UNBLOCK ... ERROR while being served.
    bool unblock_requested = false;
    bool disconnected = false;      // Its connection closed while it was being served.
    bool reply_suppressed = false;  // CLIENT REPLY OFF/SKIP: the wait ends with no reply.
    // Keys of it that became ready during its re-run (looked at again if it stays blocked).
    std::vector<std::pair<int, std::string>> signalled_while_serving;
  };
  using KeyId = std::pair<int, std::string>;

  // Notes that (db, key) may serve its waiters; they are served at the end of the current
  // command on this thread (ServeReadyKeys).
  void SignalReady(int db, std::string_view key);
  // Signals every key of `db` (every database for -1) that clients wait on (SWAPDB brought in a
  // new database), or with `group_readers_only` those XREADGROUP clients wait on (a flush
  // emptied it: only they have something to be told). O(keys waited on).
  void SignalDb(int db, bool group_readers_only);
  // Updates the stream interest after count_ changed; called with mutex_ held.
  void UpdateInterestLocked();

  std::shared_ptr<Waiter> ClaimFirst(int db, const std::string& key, KeyType type);
  // Marks `waiter` as being served by this thread for (db, key); false if another thread
  // serves it now (which then notes that (db, key) was signalled meanwhile).
  bool ClaimLocked(const std::shared_ptr<Waiter>& waiter, int db, const std::string& key);
  // The stream readers waiting on (db, key), in the order they blocked (only those of a group
  // with `group_readers_only`).
  std::vector<std::shared_ptr<Waiter>> StreamWaiters(int db, const std::string& key,
                                                     bool group_readers_only);
  // Re-runs the claimed `waiter`'s command narrowed to `key` and delivers its reply, or leaves
  // it blocked in its place: returns true in that case.
  bool Serve(const std::shared_ptr<Waiter>& waiter, const std::string& key, Dispatcher& dispatcher);
  // Ends the wait of the XREADGROUP clients blocked on (db, key), whose stream is gone, with
  // Redis's UNBLOCKED error (no re-run: the key may come back meanwhile); with `removed_only`,
  // of those marked by MarkStreamRemoved.
  void FailGroupReaders(int db, const std::string& key, bool removed_only);
  // Marks the XREADGROUP clients blocked on (db, key) as having lost their stream (see
  // Waiter::stream_removed). Called under the key's shard lock.
  void MarkStreamRemoved(int db, std::string_view key);
  // Claims and serves each of `waiters` still blocked and not served elsewhere.
  void ServeEach(const std::vector<std::shared_ptr<Waiter>>& waiters, int db,
                 const std::string& key, Dispatcher& dispatcher);
  void RemoveLocked(const std::shared_ptr<Waiter>& waiter);
  // Posts `reply` to the waiter's outbox, which wakes it.
  static void Deliver(const Waiter& waiter, std::string reply);
  // The waiter's command narrowed to the key that became ready (BLPOP k1 k2 0 served by k2 runs
  // as BLPOP k2 0): Redis pops from the ready key even when an earlier key has another type.
  static std::vector<std::string> ArgsForReadyKey(const std::vector<std::string>& args,
                                                  const std::string& key);

  std::mutex mutex_;
  absl::flat_hash_map<KeyId, std::deque<std::shared_ptr<Waiter>>> by_key_;
  absl::flat_hash_map<uint64_t, std::shared_ptr<Waiter>> by_client_;
  std::atomic<size_t> count_{0};
  std::atomic<size_t> group_readers_{0};  // Blocked XREADGROUP clients.
  // The (db, key) pairs clients wait on, one count per waiter and key: the records of other
  // keys pass SignalReady without the mutex.
  KeyCountingFilter waiting_keys_;
  ChangeStream& changes_;
  bool interested_ = false;  // Guarded by mutex_.
};

}  // namespace gigakv::server
