// The keyspace: the store and everything that keeps it within its bounds or tells others what
// changed in it.
//
// Owns:
//  - the Store (shards, key tables, values; core/include/gigakv/store.h) and its clocks: NowMs
//    (the store's clock, exact) and CoarseNowMs (refreshed per batch and by the cron, for access
//    stamps and idle times);
//  - the change stream (gigakv/change_stream.h): every write publishes its record there while it
//    holds the key's shard lock; keys removed by expiry or eviction are published here as
//    explicit DELs with their cause. Consumers (WATCH, blocked clients, the effect sink, later
//    the log and replicas) register on it;
//  - lazy free: one background thread that frees detached tables (FLUSHALL ASYNC) and large
//    values removed from the store, so no I/O thread frees millions of allocations;
//  - active expiry (bounded passes, INFO's expire_cycle_* and expired_stale_perc figures);
//  - memory accounting and eviction (used_memory as last measured, its peak, maxmemory with
//    maxmemory-policy, read from Settings).
// It knows nothing of clients, replies or the network: what a pause or a transaction means for
// expiry and eviction is decided by the caller (Server::Cron, the dispatcher).
//
// Threading: every member is thread-safe. Commands run on any I/O thread against the store under
// its shard locks; the cron thread runs ActiveExpire / SampleStaleKeys (Server::Cron); the
// lazy-free thread only frees.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gigakv/change_stream.h"
#include "gigakv/clock.h"
#include "gigakv/effects.h"
#include "gigakv/store.h"
#include "server/settings.h"

namespace gigakv::server {

class Keyspace {
 public:
  // `settings` must be attached to its config (shards and databases are read once, here) and
  // outlive the keyspace. `clock`: nullptr = system clock.
  Keyspace(const Settings& settings, const Clock* clock);
  // Joins the lazy-free thread after it freed what was queued.
  ~Keyspace();
  Keyspace(const Keyspace&) = delete;
  Keyspace& operator=(const Keyspace&) = delete;

  Store& store() { return *store_; }
  const Store& store() const { return *store_; }

  int64_t NowMs() const { return store_->NowMs(); }
  // A clock for access stamps (LRU/LFU) and idle times, which need no better than a tick:
  // refreshed at every batch of requests and by the cron, so the hot path makes no clock call.
  // (Public: connections and tests refresh it too, and an extra refresh is harmless.)
  int64_t CoarseNowMs() const { return coarse_now_ms_.load(std::memory_order_relaxed); }
  void RefreshCoarseClock() { coarse_now_ms_.store(NowMs(), std::memory_order_relaxed); }

  // --- Change stream ---------------------------------------------------------------------------
  ChangeStream& changes() { return changes_; }

  // --- Lazy free -------------------------------------------------------------------------------
  // Frees detached tables on the background thread (FLUSHALL/FLUSHDB ASYNC). Counted as lazy
  // frees of as many objects as the tables had keys.
  void FreeLater(Store::DetachedTables tables);
  // Frees a large value on the lazy-free thread: the store's reclaimer, for every large value
  // removed or replaced (DEL, UNLINK, SET over it, expiry, eviction). It counts as Redis's lazy
  // free (INFO lazyfreed_objects) only inside a UserLazyFreeScope; otherwise gigakv freed it in
  // the background on its own accord, where Redis would free it in place, and it counts in
  // background_freed_objects instead.
  void FreeLater(std::unique_ptr<Object> object);
  // While one lives on this thread, the values it frees later count as lazy frees the user
  // asked for: UNLINK, and DEL with lazyfree-lazy-user-del yes.
  class UserLazyFreeScope {
   public:
    UserLazyFreeScope();
    ~UserLazyFreeScope();
    UserLazyFreeScope(const UserLazyFreeScope&) = delete;
    UserLazyFreeScope& operator=(const UserLazyFreeScope&) = delete;

   private:
    bool previous_;
  };
  // Objects waiting to be freed as lazy frees (INFO lazyfree_pending_objects).
  size_t lazyfree_pending() const { return lazyfree_pending_.load(std::memory_order_relaxed); }
  // Objects (keys, collections) freed as lazy frees so far (INFO lazyfreed_objects).
  uint64_t lazyfreed_objects() const { return lazyfreed_objects_.load(); }
  // Values freed on the lazy-free thread that are not Redis lazy frees (see FreeLater).
  uint64_t background_freed_objects() const { return background_freed_objects_.load(); }

  // --- Active expiry ---------------------------------------------------------------------------
  bool active_expire_enabled() const { return active_expire_enabled_.load(); }
  // DEBUG SET-ACTIVE-EXPIRE.
  void set_active_expire_enabled(bool enabled) { active_expire_enabled_.store(enabled); }
  // INFO expired_stale_perc / 100.
  double expired_stale_ratio() const { return expired_stale_ratio_.load(); }
  // Milliseconds spent in active expiry, and how many passes stopped at their work limit with
  // due keys left (INFO expire_cycle_cpu_milliseconds, expired_time_cap_reached_count).
  uint64_t expire_cycle_ms() const { return expire_cycle_us_.load() / 1000; }
  uint64_t expire_cycle_cap_reached() const { return expire_cycle_cap_reached_.load(); }

  // --- Memory and eviction ---------------------------------------------------------------------
  // used_memory (bytes allocated by the process) as last measured, or measured now if `refresh`
  // (which also updates the peak). The cron refreshes it every tick.
  int64_t UsedMemory(bool refresh = false);
  // Whether malloc reports what it holds (glibc's): otherwise (a sanitizer's allocator)
  // used_memory is the resident size, which freeing does not lower (INFO mem_allocator).
  static bool AllocatorReportsUsage();
  int64_t peak_used_memory() const { return peak_used_memory_.load(); }
  int64_t startup_used_memory() const { return startup_used_memory_; }
  bool OverMaxmemory() const {
    int64_t limit = settings_.maxmemory.get();
    return limit > 0 && counted_memory_.load(std::memory_order_relaxed) > limit;
  }
  // Memory that eviction does not count against maxmemory (Redis's
  // freeMemoryGetNotCountedMemory): the append-only log's buffers, which evicting keys cannot
  // shrink (they would only grow with the removals). Set by the log; any thread.
  void set_not_counted_memory(int64_t bytes) {
    not_counted_memory_.store(bytes, std::memory_order_relaxed);
  }
  int64_t not_counted_memory() const { return not_counted_memory_.load(std::memory_order_relaxed); }
  // Whether small integers are shared objects (OBJECT REFCOUNT 2147483647), as in Redis: not
  // under a maxmemory limit with an LRU or LFU policy, where each key needs its own stamp.
  bool SharesSmallIntegers() const;

  // CONFIG RESETSTAT: the expiry and lazy-free counters, and the store's.
  void ResetStats();

 private:
  // --- The owner's work --------------------------------------------------------------------------
  // Not for handlers: the server runs these (Server::Cron, Server::ActiveExpire, and the
  // dispatcher's check before a write), applying the rules a keyspace does not know (client
  // pauses, EXEC).
  friend class Server;
  friend class Dispatcher;

  // Hands the stream's effects to `sink` (the log; tests record them); nullptr detaches it. Set
  // before serving.
  void set_effect_sink(EffectSink* sink);

  // One bounded pass: rounds of at most a fixed number of due deadlines, repeated while a good
  // share of them had expired, ending early after a round once `yield()` is true. Returns true
  // while due keys remain (the caller then runs another pass soon). No-op while disabled.
  bool ActiveExpire(const std::function<bool()>& yield);
  // Samples keys with a TTL and folds the share already past it into expired_stale_ratio, as
  // Redis smooths it (no-op while active expiry is disabled).
  void SampleStaleKeys();

  // Evicts keys by maxmemory-policy while used_memory is over maxmemory (an estimate between
  // refreshes), at most a bounded batch per call. Returns false when over the limit and nothing
  // could be evicted (noeviction, or no candidates): write commands then get OOM. The caller
  // skips it during a client pause (Redis neither evicts nor refuses then).
  bool EvictToLimit();

  struct LazyFreeJob {
    Store::DetachedTables tables;
    std::unique_ptr<Object> object;
    size_t count = 0;       // Units counted in lazyfree_pending_, or in background_freed_objects_.
    bool lazy_free = true;  // A Redis lazy free: counted in lazyfree_pending/lazyfreed_objects.
  };
  // Queues `job` for the lazy-free thread (started on first use), or frees it now once the
  // destructor has stopped that thread.
  void QueueLazyFree(LazyFreeJob job);
  // Frees what `job` holds and counts it; `queued`: it was counted in lazyfree_pending_.
  void FreeNow(LazyFreeJob& job, bool queued);
  // Publishes a key removed by expiry or eviction as DEL key.
  void PublishRemoval(int db, std::string_view key, RemovalCause cause);

  const Settings& settings_;
  std::unique_ptr<Store> store_;
  ChangeStream changes_;
  std::unique_ptr<EffectSinkConsumer> effect_sink_consumer_;
  std::atomic<int64_t> coarse_now_ms_{0};

  std::atomic<bool> active_expire_enabled_{true};
  std::atomic<double> expired_stale_ratio_{0};
  std::atomic<uint64_t> expire_cycle_us_{0};
  std::atomic<uint64_t> expire_cycle_cap_reached_{0};

  std::atomic<int64_t> used_memory_{0};
  std::atomic<int64_t> not_counted_memory_{0};
  // used_memory_ less the not-counted memory, both as of the last refresh (less what eviction
  // freed since): what maxmemory is compared with.
  std::atomic<int64_t> counted_memory_{0};
  std::atomic<int64_t> peak_used_memory_{0};
  int64_t startup_used_memory_ = 0;

  // Background freeing: a queue drained by one thread (started on first use), joined on
  // destruction.
  std::mutex lazyfree_mutex_;
  std::condition_variable lazyfree_cv_;
  std::vector<LazyFreeJob> lazyfree_queue_;  // Guarded by lazyfree_mutex_.
  bool lazyfree_stop_ = false;               // Guarded by lazyfree_mutex_.
  std::atomic<size_t> lazyfree_pending_{0};
  std::atomic<uint64_t> lazyfreed_objects_{0};
  std::atomic<uint64_t> background_freed_objects_{0};
  std::thread lazyfree_thread_;
};

}  // namespace gigakv::server
