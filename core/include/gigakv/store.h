// gigakv's keyspace: the embeddable store.
//
// A Store holds `databases` logical databases split over `shard_count` shards. A key's shard comes
// from its Redis Cluster slot (CRC16 of the key or its {hash tag}, see slot.h); each shard holds,
// per database, one KeyTable (arena + index, see core/key_table.h) and a lock. All databases of a
// shard share its lock, which makes SWAPDB, MOVE and COPY ... DB cheap and atomic.
//
// Threading: every method of Store is thread-safe. Shard-level access (WithShard, LockKeys) gives
// a locked Shard; what you do with it must stay inside the lock's scope. Multi-key operations lock
// the shards they touch in ascending index order, so they never deadlock with each other.
//
// Point-in-time capture (forkless snapshots): BeginCapture marks every shard; the first lock of
// a marked shard after that, by anyone, hands the shard to the capture before the locker sees it
// (see ShardCapture). So a snapshot thread that locks each shard in turn, and the clients whose
// writes get there first, together capture exactly the dataset as of BeginCapture, one shard at
// a time, without copying the store.
//
// Expiry: keys carry absolute expiry times (Unix ms, from the injected Clock). Every lookup
// through Shard::FindLive deletes an expired key first (lazy expiry); ActiveExpireCycle() removes
// expired keys nobody touches. Both report removals to the expiry listener (stats, the log).
//
// Errors: the embedding API reports wrong-type access as std::nullopt / false with a WrongType
// flag where it matters; it never throws except std::bad_alloc.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "gigakv/clock.h"
#include "gigakv/key_hash.h"
#include "gigakv/key_table.h"
#include "gigakv/object.h"
#include "gigakv/shard_mutex.h"

namespace gigakv {

struct StoreOptions {
  uint32_t shard_count = 1024;  // Power of two in [1, 16384].
  int databases = 16;
  const Clock* clock = nullptr;  // nullptr = SystemClock.
  // 64-bit key hash for the in-shard index; nullptr = the default strong hash. Tests inject weak
  // hashes to force collisions.
  uint64_t (*hash)(std::string_view key) = nullptr;
};

// Removal reasons reported to the listener.
enum class RemovalCause : uint8_t { kExpired, kEvicted };
// Called with the shard lock held, right after `key` left database `db`. Must not call back
// into the Store.
using RemovalListener = std::function<void(int db, std::string_view key, RemovalCause cause)>;

// One shard: the per-database tables of the keys whose slots map here, and its lock. Aligned to
// a cache line so neighbouring shards' locks never share one.
class alignas(64) Shard {
 public:
  Shard() = default;
  // `deadline_flag`, `large_object_sink`: see KeyTable::set_deadline_flag and
  // set_large_object_sink.
  void Init(int databases, std::atomic<bool>* deadline_flag,
            const KeyTable::LargeObjectSink* large_object_sink);

  // The table of database `db` (always present; empty until used). Lock must be held.
  KeyTable& Table(int db) { return tables_[static_cast<size_t>(db)]; }
  // The table of `db`, or nullptr if it holds no keys. Lock must be held.
  KeyTable* FindTable(int db) {
    KeyTable& table = tables_[static_cast<size_t>(db)];
    return table.size() == 0 ? nullptr : &table;
  }
  void SwapTables(int a, int b) { Table(a).Swap(Table(b)); }
  // Moves database `db`'s keys into a new table (for freeing outside the lock).
  std::unique_ptr<KeyTable> DetachTable(int db);

  int databases() const { return databases_; }

 private:
  friend class Store;
  // Locked only through Store (ShardLock, WithShardOf, LockKeys), which runs a pending capture.
  ShardMutex mutex_;
  bool capture_pending_ = false;  // Guarded by mutex_; see Store::BeginCapture.
  int databases_ = 0;
  std::unique_ptr<KeyTable[]> tables_;
};

class Store {
 public:
  explicit Store(StoreOptions options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const StoreOptions& options() const { return options_; }
  int databases() const { return options_.databases; }
  uint32_t shard_count() const { return options_.shard_count; }
  int64_t NowMs() const { return clock_->NowMs(); }
  const Clock& clock() const { return *clock_; }

  uint64_t Hash(std::string_view key) const;
  uint32_t ShardIndex(std::string_view key) const;
  Shard& shard(uint32_t index) { return shards_[index]; }

  void set_removal_listener(RemovalListener listener) { listener_ = std::move(listener); }
  // Receives the collections of more than kLargeObjectElements elements (and the strings of at
  // least KeyTable::kLargeStringBytes) that any removal drops (DEL, expiry, eviction) or a
  // write replaces (SET over a big hash), to free them off
  // the calling thread (the server hands them to its lazy-free thread): see
  // KeyTable::set_large_object_sink. Without one they are freed in place. Set before use;
  // called under a shard lock.
  using ObjectReclaimer = KeyTable::LargeObjectSink;
  static constexpr size_t kLargeObjectElements = KeyTable::kLargeObjectElements;
  void set_object_reclaimer(ObjectReclaimer reclaimer) { reclaimer_ = std::move(reclaimer); }

  // --- Locked access -----------------------------------------------------------------------

  // Holds one shard's lock (running its pending capture first, see BeginCapture).
  class ShardLock {
   public:
    ShardLock(Store& store, Shard& shard) : shard_(shard) { store.LockShard(shard); }
    ~ShardLock() { shard_.mutex_.unlock(); }
    ShardLock(const ShardLock&) = delete;
    ShardLock& operator=(const ShardLock&) = delete;

   private:
    Shard& shard_;
  };

  // Runs fn(Shard&) with `key`'s shard locked and returns its result.
  template <typename Fn>
  decltype(auto) WithShardOf(std::string_view key, Fn&& fn) {
    Shard& s = shard(ShardIndex(key));
    ShardLock lock(*this, s);
    return fn(s);
  }

  // Holds the locks of a set of shards (ascending order); released on destruction.
  using ShardList = std::vector<uint32_t>;  // Shard indexes, ascending.
  class MultiLock {
   public:
    MultiLock(MultiLock&&) = default;
    ~MultiLock();
    const ShardList& shards() const { return shards_; }

   private:
    friend class Store;
    MultiLock(Store* store, ShardList shards);
    Store* store_;
    ShardList shards_;
  };
  // Locks the shards of `keys`, in ascending order. `shard_of_key`, when not null, receives
  // each key's shard index (keys.size() entries), so the caller need not hash the keys again.
  MultiLock LockKeys(absl::Span<const std::string_view> keys, uint32_t* shard_of_key = nullptr);
  MultiLock LockAllShards();

  // Lookup with lazy expiry: returns the key's slot in `shard.Table(db)` or KeyTable::kNoSlot;
  // an expired key is deleted (and reported) first, unless expiry is paused (then it only
  // reads as missing). The shard's lock must be held.
  // `found`, when given, receives the live record's view (left untouched for a missing key), so
  // a reader need not decode the record again.
  uint32_t FindLive(Shard& shard, int db, std::string_view key, uint64_t hash,
                    RecordView* found = nullptr);
  // True if `key` has a record in `db`, expired or not (nothing is removed). Lock must be held.
  bool HasRecord(Shard& shard, int db, std::string_view key) {
    KeyTable* table = shard.FindTable(db);
    return table != nullptr && table->Find(key, Hash(key)) != KeyTable::kNoSlot;
  }
  // True if a record with this expiry is expired now (never while expiry is suspended).
  bool IsExpired(int64_t expire_ms) const {
    return expire_ms > 0 && expire_ms <= NowMs() &&
           !expiry_suspended_.load(std::memory_order_relaxed);
  }

  // --- Point-in-time capture ------------------------------------------------------------------

  // Receives each shard's contents as of BeginCapture.
  class ShardCapture {
   public:
    virtual ~ShardCapture() = default;
    // Called exactly once per shard between BeginCapture and EndCapture, with the shard locked,
    // before anything else reads or changes it after BeginCapture: so `shard` holds what it held
    // then. Runs on whichever thread locked the shard first (a client's, the snapshot's): keep it
    // to copying or encoding the shard's records, without calling back into the Store or taking
    // locks other than leaf locks of its own. Must not throw (catch and remember failures).
    virtual void CaptureShard(uint32_t index, Shard& shard) noexcept = 0;
  };
  // Marks every shard for `capture`, atomically for all writers (all shard locks are held while
  // marking: O(shards)). False, doing nothing, if another capture is in progress. `capture` must
  // outlive EndCapture.
  bool BeginCapture(ShardCapture* capture);
  // Captures shard `index` now if nobody has yet (the snapshot thread's walk: lock, unlock).
  void CaptureShardNow(uint32_t index) { ShardLock lock(*this, shard(index)); }
  // Ends the capture: shards not captured yet are left out (an aborted snapshot) and the
  // capture object is no longer called. Call once per successful BeginCapture.
  void EndCapture();
  bool capture_in_progress() const { return capture_active_.load(std::memory_order_acquire); }

  // --- Embedding API (each call locks what it needs) --------------------------------------

  // The string value of `key`; nullopt if missing. `wrong_type` (optional) is set when the key
  // holds a non-string.
  std::optional<std::string> Get(int db, std::string_view key, bool* wrong_type = nullptr);
  // Sets a string value; ttl_ms > 0 sets an expiry relative to now, 0 keeps none.
  void Set(int db, std::string_view key, std::string_view value, int64_t ttl_ms = 0);
  bool Del(int db, std::string_view key);
  bool Exists(int db, std::string_view key);
  // The key's type, or nullopt when it is missing or expired.
  std::optional<KeyType> TypeOf(int db, std::string_view key);
  // Sets a relative expiry; false if the key is missing.
  bool Expire(int db, std::string_view key, int64_t ttl_ms);
  // Remaining time to live in ms: -2 missing, -1 no expiry.
  int64_t PttlMs(int db, std::string_view key);
  // Keys in `db` (including not-yet-collected expired ones, as Redis's DBSIZE).
  size_t DbSize(int db);
  // Keys with an expiry in `db`.
  size_t ExpiresCount(int db);
  // Estimated average remaining TTL (ms) of `db`'s keys with an expiry, from a sample of each
  // table's deadlines; 0 if none (INFO keyspace avg_ttl).
  int64_t AverageTtlMs(int db);
  // One SCAN step: appends up to about `count` keys; returns the next cursor (0 = done). Every
  // key present during the whole iteration is returned exactly once. Expired keys are skipped;
  // those for which `delete_expired` (if given) returns true are also removed (and reported):
  // Redis's SCAN removes the expired keys that match its pattern, and leaves the others.
  uint64_t Scan(int db, uint64_t cursor, size_t count, std::vector<std::string>* keys,
                const std::function<bool(std::string_view key, KeyType type)>& filter = nullptr,
                const std::function<bool(std::string_view key)>& delete_expired = nullptr);
  // Empties database `db` (or all of them). With every shard locked, `before` (if given) runs
  // (it may look at the keys about to go, without locking) and the tables are detached and
  // returned, so the caller chooses where the memory is freed (FLUSHALL ASYNC frees it on a
  // background thread); dropping the result frees it right away. O(shards) under the locks.
  using DetachedTables = std::vector<std::unique_ptr<KeyTable>>;
  [[nodiscard]] DetachedTables FlushDb(int db, const std::function<void()>& before = nullptr);
  [[nodiscard]] DetachedTables FlushAll(const std::function<void()>& before = nullptr);
  bool SwapDb(int a, int b);

  // Active expiry: pops up to `budget` due deadlines across shards (round robin, each table's
  // deadline heap) and deletes the keys that are expired. Returns the number deleted.
  // Thread-safe; bounded work per call.
  size_t ActiveExpireCycle(size_t budget);
  // Due deadlines popped per shard (and database) per visit of ActiveExpireCycle: bounds how long
  // one shard's lock is held by expiry (about 0.1 ms).
  static constexpr size_t kMaxExpiredPerShardVisit = 128;

  // --- Eviction ------------------------------------------------------------------------------

  enum class EvictionPolicy {
    kNoEviction,
    kAllKeysLru,
    kAllKeysLfu,
    kAllKeysRandom,
    kVolatileLru,
    kVolatileLfu,
    kVolatileRandom,
    kVolatileTtl,
  };
  // Evicts one key chosen by `policy` among about `samples` randomly sampled keys (volatile
  // policies consider only keys with a TTL), like Redis's approximated LRU/LFU. Returns the bytes
  // the victim's record held (0 if nothing could be evicted). Reports the removal (kEvicted).
  // `now_ms` is the coarse clock the access stamps use; LFU counters decay by one per
  // `lfu_decay_minutes` idle (lfu-decay-time). Thread-safe; locks one shard at a time.
  size_t EvictOne(EvictionPolicy policy, int samples, int64_t now_ms, int lfu_decay_minutes = 1);
  uint64_t evicted_keys() const { return evicted_keys_.load(std::memory_order_relaxed); }

  // Samples up to `samples` random keys that have a TTL (one per shard, from a random shard on)
  // and counts those already past it, for INFO expired_stale_perc. Call it before an active
  // expiry cycle to see the share that cycle will find expired. Thread-safe.
  struct ExpirySample {
    int sampled = 0;
    int expired = 0;
  };
  ExpirySample SampleExpired(int samples);

  // --- Stats ---------------------------------------------------------------------------------
  // Heap bytes held by all tables (arenas, indexes, external values). O(shards x databases).
  size_t UsedMemory();
  struct ArenaStats {
    size_t arena_used = 0;
    size_t arena_capacity = 0;
    size_t dead_bytes = 0;
    size_t index_slots = 0;
    size_t keys = 0;
  };
  ArenaStats GetArenaStats();
  uint64_t expired_keys() const { return expired_keys_.load(std::memory_order_relaxed); }
  // While set, lookups leave expired keys in place (they read as missing) and nothing is
  // counted as expired by them: the server's CLIENT PAUSE, during which Redis deletes no key.
  void SetExpiryPaused(bool paused) { expiry_paused_.store(paused, std::memory_order_relaxed); }
  // While set, every key is live whatever its deadline (lookups find it, active expiry and SCAN
  // leave it, IsExpired says no): replaying a log, whose effects were applied before their keys
  // expired (Redis expires nothing while loading, either). Expiry resumes when cleared.
  void SetExpirySuspended(bool suspended) {
    expiry_suspended_.store(suspended, std::memory_order_relaxed);
  }
  void ResetStats() {
    expired_keys_.store(0, std::memory_order_relaxed);
    evicted_keys_.store(0, std::memory_order_relaxed);
  }

 private:
  void LockShard(Shard& shard) {
    shard.mutex_.lock();
    if (shard.capture_pending_) [[unlikely]]
      RunCapture(shard);
  }
  // Clears the shard's mark and hands it to the capture. Lock held.
  void RunCapture(Shard& shard);
  // Locks for reading figures only (sizes, samples): a pending capture is not run, since
  // nothing changes. Not for anything that may delete or modify a record.
  class StatsLock {
   public:
    explicit StatsLock(Shard& shard) : shard_(shard) { shard_.mutex_.lock(); }
    ~StatsLock() { shard_.mutex_.unlock(); }
    StatsLock(const StatsLock&) = delete;
    StatsLock& operator=(const StatsLock&) = delete;

   private:
    Shard& shard_;
  };
  void Remove(Shard& shard, int db, uint32_t slot, std::string_view key, RemovalCause cause);
  // One sampling round: nullopt if no candidate was found, 0 if the victim vanished.
  std::optional<size_t> TryEvictOne(EvictionPolicy policy, int samples, int64_t now_ms,
                                    int lfu_decay_minutes);
  // Calls fn(shard index, db, record) with the shard locked for up to `samples` random records,
  // one per shard, walking from a random shard; `with_ttl_only` skips records without a TTL.
  template <typename Fn>
  void ForEachRandomRecord(bool with_ttl_only, int samples, Fn&& fn);

  StoreOptions options_;
  const Clock* clock_;
  KeyHashSecret hash_secret_;  // Random per store (key_hash.h).
  uint32_t shard_shift_;       // slot >> shard_shift_ = shard index.
  std::unique_ptr<Shard[]> shards_;
  RemovalListener listener_;
  ObjectReclaimer reclaimer_;
  std::atomic<uint64_t> expired_keys_{0};
  std::atomic<bool> expiry_paused_{false};
  std::atomic<bool> expiry_suspended_{false};
  std::atomic<uint64_t> evicted_keys_{0};
  std::atomic<uint32_t> expire_shard_cursor_{0};
  // Set when any key gets a TTL; cleared by an active expiry pass that finds no TTL in any shard,
  // so that an idle store's expiry ticks (SampleExpired, ActiveExpireCycle) skip the walk over
  // every shard and database. Own cache line: writers only read it, almost always.
  alignas(64) std::atomic<bool> may_have_deadlines_{true};
  ShardCapture* capture_ = nullptr;  // Read under a marked shard's lock; see BeginCapture.
  std::atomic<bool> capture_active_{false};
};

// Chooses Redis's string encoding for a value: int for canonical int64 text up to 20 chars,
// embstr up to 44 bytes, raw beyond (and for values past the inline limit, an external string).
// `*external_holder` receives the heap copy when one is needed; ownership passes to the table.
struct StringValue {
  static constexpr size_t kEmbstrMax = 44;
  // Values longer than this live outside the arena, so compaction never copies them.
  static constexpr size_t kInlineMax = 4096;
};
// Fills `spec` for storing `value` as a string. A heap copy is made for values past kInlineMax.
void MakeStringSpec(std::string_view value, bool force_raw, ValueSpec* spec);

}  // namespace gigakv
