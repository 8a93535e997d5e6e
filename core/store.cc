#include "gigakv/store.h"

#include <algorithm>
#include <bit>
#include <cassert>

#include "gigakv/access_stamp.h"
#include "gigakv/large_buffer.h"
#include "gigakv/numbers.h"
#include "gigakv/slot.h"

namespace gigakv {

void Shard::Init(int databases, std::atomic<bool>* deadline_flag,
                 const KeyTable::LargeObjectSink* large_object_sink) {
  databases_ = databases;
  tables_ = std::make_unique<KeyTable[]>(static_cast<size_t>(databases));
  for (size_t db = 0; db < static_cast<size_t>(databases); ++db) {
    tables_[db].set_deadline_flag(deadline_flag);
    tables_[db].set_large_object_sink(large_object_sink);
  }
}

std::unique_ptr<KeyTable> Shard::DetachTable(int db) {
  auto detached = std::make_unique<KeyTable>();
  detached->Swap(Table(db));
  return detached;
}

void MakeStringSpec(std::string_view value, bool force_raw, ValueSpec* spec) {
  spec->object = nullptr;
  spec->external = nullptr;
  int64_t parsed;
  if (value.size() > StringValue::kInlineMax) {
    spec->kind = ValueKind::kStringExternal;
    spec->external = new std::string(CopyLarge(value));
    spec->bytes = {};
    return;
  }
  spec->bytes = value;
  if (!force_raw && value.size() <= 20 && ParseInt64(value, &parsed)) {
    spec->kind = ValueKind::kStringInt;
  } else if (!force_raw && value.size() <= StringValue::kEmbstrMax) {
    spec->kind = ValueKind::kStringEmbstr;
  } else {
    spec->kind = ValueKind::kStringRaw;
  }
}

Store::Store(StoreOptions options) : options_(options), hash_secret_(KeyHashSecret::Random()) {
  assert(options_.shard_count >= 1 && options_.shard_count <= kClusterSlots &&
         std::has_single_bit(options_.shard_count));
  clock_ = options_.clock != nullptr ? options_.clock : SystemClock::Get();
  shard_shift_ = static_cast<uint32_t>(std::countr_zero(kClusterSlots) -
                                       std::countr_zero(options_.shard_count));
  shards_ = std::make_unique<Shard[]>(options_.shard_count);
  for (uint32_t i = 0; i < options_.shard_count; ++i)
    shards_[i].Init(options_.databases, &may_have_deadlines_, &reclaimer_);
}

Store::~Store() = default;

uint64_t Store::Hash(std::string_view key) const {
  if (options_.hash != nullptr) return options_.hash(key);
  return KeyHash(key, hash_secret_);
}

uint32_t Store::ShardIndex(std::string_view key) const { return KeySlot(key) >> shard_shift_; }

Store::MultiLock::MultiLock(Store* store, ShardList shards)
    : store_(store), shards_(std::move(shards)) {
  for (uint32_t index : shards_) store_->LockShard(store_->shard(index));
}

Store::MultiLock::~MultiLock() {
  if (store_ == nullptr) return;
  for (auto it = shards_.rbegin(); it != shards_.rend(); ++it) {
    store_->shard(*it).mutex_.unlock();
  }
}

bool Store::BeginCapture(ShardCapture* capture) {
  bool expected = false;
  if (!capture_active_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
    return false;
  }
  // All locks at once: no write lands between marking one shard and another, so the capture is
  // of one instant. Raw locks: nothing is pending yet.
  for (uint32_t i = 0; i < options_.shard_count; ++i) shards_[i].mutex_.lock();
  capture_ = capture;
  for (uint32_t i = 0; i < options_.shard_count; ++i) shards_[i].capture_pending_ = true;
  for (uint32_t i = options_.shard_count; i-- > 0;) shards_[i].mutex_.unlock();
  return true;
}

void Store::RunCapture(Shard& shard) {
  shard.capture_pending_ = false;
  capture_->CaptureShard(static_cast<uint32_t>(&shard - shards_.get()), shard);
}

void Store::EndCapture() {
  for (uint32_t i = 0; i < options_.shard_count; ++i) {
    StatsLock lock(shards_[i]);
    shards_[i].capture_pending_ = false;
  }
  // Every shard's mark is gone, so nothing reads capture_ any more.
  capture_ = nullptr;
  capture_active_.store(false, std::memory_order_release);
}

Store::MultiLock Store::LockKeys(absl::Span<const std::string_view> keys, uint32_t* shard_of_key) {
  ShardList indexes;
  indexes.reserve(keys.size());
  for (std::string_view key : keys) indexes.push_back(ShardIndex(key));
  if (shard_of_key != nullptr) std::copy(indexes.begin(), indexes.end(), shard_of_key);
  std::sort(indexes.begin(), indexes.end());
  indexes.erase(std::unique(indexes.begin(), indexes.end()), indexes.end());
  return MultiLock(this, std::move(indexes));
}

Store::MultiLock Store::LockAllShards() {
  ShardList indexes(options_.shard_count);
  for (uint32_t i = 0; i < options_.shard_count; ++i) indexes[i] = i;
  return MultiLock(this, std::move(indexes));
}

void Store::Remove(Shard& shard, int db, uint32_t slot, std::string_view key, RemovalCause cause) {
  std::string key_copy(key);    // `key` points into the record being erased.
  shard.Table(db).Erase(slot);  // A large collection goes to the reclaimer (the tables' sink).
  if (cause == RemovalCause::kExpired) expired_keys_.fetch_add(1, std::memory_order_relaxed);
  if (cause == RemovalCause::kEvicted) evicted_keys_.fetch_add(1, std::memory_order_relaxed);
  if (listener_) listener_(db, key_copy, cause);
}

uint32_t Store::FindLive(Shard& shard, int db, std::string_view key, uint64_t hash,
                         RecordView* found) {
  KeyTable* table = shard.FindTable(db);
  if (table == nullptr) return KeyTable::kNoSlot;
  uint32_t slot = table->Find(key, hash);
  if (slot == KeyTable::kNoSlot) return slot;
  RecordView view = table->View(slot);
  if (IsExpired(view.expire_ms)) {
    if (!expiry_paused_.load(std::memory_order_relaxed)) {
      Remove(shard, db, slot, view.key, RemovalCause::kExpired);
    }
    return KeyTable::kNoSlot;
  }
  if (found != nullptr) *found = view;
  return slot;
}

std::optional<std::string> Store::Get(int db, std::string_view key, bool* wrong_type) {
  uint64_t hash = Hash(key);
  return WithShardOf(key, [&](Shard& s) -> std::optional<std::string> {
    uint32_t slot = FindLive(s, db, key, hash);
    if (slot == KeyTable::kNoSlot) return std::nullopt;
    RecordView view = s.Table(db).View(slot);
    if (!view.is_string()) {
      if (wrong_type != nullptr) *wrong_type = true;
      return std::nullopt;
    }
    return std::string(view.str);
  });
}

void Store::Set(int db, std::string_view key, std::string_view value, int64_t ttl_ms) {
  uint64_t hash = Hash(key);
  int64_t expire_ms = ttl_ms > 0 ? NowMs() + ttl_ms : 0;
  ValueSpec spec;
  MakeStringSpec(value, /*force_raw=*/false, &spec);
  WithShardOf(key, [&](Shard& s) { s.Table(db).Put(key, hash, spec, expire_ms, 0); });
}

bool Store::Del(int db, std::string_view key) {
  uint64_t hash = Hash(key);
  return WithShardOf(key, [&](Shard& s) {
    uint32_t slot = FindLive(s, db, key, hash);
    if (slot == KeyTable::kNoSlot) return false;
    s.Table(db).Erase(slot);
    return true;
  });
}

bool Store::Exists(int db, std::string_view key) {
  uint64_t hash = Hash(key);
  return WithShardOf(key,
                     [&](Shard& s) { return FindLive(s, db, key, hash) != KeyTable::kNoSlot; });
}

std::optional<KeyType> Store::TypeOf(int db, std::string_view key) {
  uint64_t hash = Hash(key);
  return WithShardOf(key, [&](Shard& s) -> std::optional<KeyType> {
    uint32_t slot = FindLive(s, db, key, hash);
    if (slot == KeyTable::kNoSlot) return std::nullopt;
    return s.Table(db).View(slot).type();
  });
}

bool Store::Expire(int db, std::string_view key, int64_t ttl_ms) {
  uint64_t hash = Hash(key);
  return WithShardOf(key, [&](Shard& s) {
    uint32_t slot = FindLive(s, db, key, hash);
    if (slot == KeyTable::kNoSlot) return false;
    if (ttl_ms <= 0) {
      s.Table(db).Erase(slot);
    } else {
      s.Table(db).SetExpire(slot, NowMs() + ttl_ms);
    }
    return true;
  });
}

int64_t Store::PttlMs(int db, std::string_view key) {
  uint64_t hash = Hash(key);
  return WithShardOf(key, [&](Shard& s) -> int64_t {
    uint32_t slot = FindLive(s, db, key, hash);
    if (slot == KeyTable::kNoSlot) return -2;
    int64_t expire_ms = s.Table(db).View(slot).expire_ms;
    if (expire_ms == 0) return -1;
    return std::max<int64_t>(0, expire_ms - NowMs());
  });
}

size_t Store::DbSize(int db) {
  size_t total = 0;
  for (uint32_t i = 0; i < options_.shard_count; ++i) {
    Shard* s = &shards_[i];
    StatsLock lock(*s);
    if (KeyTable* table = s->FindTable(db)) total += table->size();
  }
  return total;
}

size_t Store::ExpiresCount(int db) {
  size_t total = 0;
  for (uint32_t i = 0; i < options_.shard_count; ++i) {
    Shard* s = &shards_[i];
    StatsLock lock(*s);
    if (KeyTable* table = s->FindTable(db)) total += table->expires_count();
  }
  return total;
}

int64_t Store::AverageTtlMs(int db) {
  int64_t sum = 0, count = 0;
  int64_t now = NowMs();
  for (uint32_t i = 0; i < options_.shard_count; ++i) {
    Shard& s = shards_[i];
    StatsLock lock(s);
    if (KeyTable* table = s.FindTable(db)) table->SampleTtls(now, 16, &sum, &count);
  }
  return count == 0 ? 0 : sum / count;
}

uint64_t Store::Scan(int db, uint64_t cursor, size_t count, std::vector<std::string>* keys,
                     const std::function<bool(std::string_view, KeyType)>& filter,
                     const std::function<bool(std::string_view)>& delete_expired) {
  // Cursor layout: shard index in the bits above 32, fingerprint position below.
  uint64_t shard_index = cursor >> 32;
  uint64_t position = cursor & 0xffffffffULL;
  size_t visited = 0;
  count = std::max<size_t>(count, 1);
  std::vector<uint32_t> slots;
  while (shard_index < options_.shard_count && visited < count) {
    Shard& s = shards_[shard_index];
    uint64_t next = KeyTable::kScanEnd;
    {
      ShardLock lock(*this, s);
      KeyTable* table = s.FindTable(db);
      if (table != nullptr) {
        slots.clear();
        next = table->ScanRange(position, count - visited, &slots);
        int64_t now = NowMs();
        std::vector<std::string> expired;
        for (uint32_t slot : slots) {
          RecordView view = table->View(slot);
          ++visited;
          if (view.expire_ms > 0 && view.expire_ms <= now && IsExpired(view.expire_ms)) {
            if (delete_expired && delete_expired(view.key)) expired.emplace_back(view.key);
            continue;
          }
          if (filter && !filter(view.key, view.type())) continue;
          keys->emplace_back(view.key);
        }
        // Deleting moves index entries, so it waits until the step's slots were read.
        for (const std::string& key : expired) FindLive(s, db, key, Hash(key));
      }
    }
    if (next >= KeyTable::kScanEnd) {
      ++shard_index;
      position = 0;
    } else {
      position = next;
    }
  }
  if (shard_index >= options_.shard_count) return 0;
  return (shard_index << 32) | position;
}

Store::DetachedTables Store::FlushDb(int db, const std::function<void()>& before) {
  DetachedTables detached;
  MultiLock lock = LockAllShards();
  if (before) before();
  for (uint32_t i = 0; i < options_.shard_count; ++i) {
    Shard& s = shards_[i];
    if (s.FindTable(db) != nullptr) detached.push_back(s.DetachTable(db));
  }
  return detached;
}

Store::DetachedTables Store::FlushAll(const std::function<void()>& before) {
  DetachedTables detached;
  MultiLock lock = LockAllShards();
  if (before) before();
  for (uint32_t i = 0; i < options_.shard_count; ++i) {
    Shard& s = shards_[i];
    for (int db = 0; db < options_.databases; ++db) {
      if (s.FindTable(db) != nullptr) detached.push_back(s.DetachTable(db));
    }
  }
  return detached;
}

bool Store::SwapDb(int a, int b) {
  if (a < 0 || b < 0 || a >= options_.databases || b >= options_.databases) return false;
  MultiLock lock = LockAllShards();
  for (uint32_t i = 0; i < options_.shard_count; ++i) shards_[i].SwapTables(a, b);
  return true;
}

size_t Store::ActiveExpireCycle(size_t budget) {
  // Every table keeps a heap of its deadlines, so a tick visits only what is due: checking a
  // shard with nothing due costs a lock and a heap-top comparison per database in use.
  if (!may_have_deadlines_.load(std::memory_order_relaxed)) return 0;
  if (expiry_suspended_.load(std::memory_order_relaxed)) return 0;
  // Cleared before the pass: a TTL set meanwhile either sets it again or is seen by the pass
  // (its shard's lock orders the two), which sets it again below.
  may_have_deadlines_.store(false, std::memory_order_relaxed);
  bool saw_deadlines = false;
  size_t removed = 0;
  size_t examined = 0;
  int64_t now = NowMs();
  uint32_t visited = 0;
  for (; visited < options_.shard_count && examined < budget; ++visited) {
    uint32_t index =
        expire_shard_cursor_.fetch_add(1, std::memory_order_relaxed) % options_.shard_count;
    Shard& s = shards_[index];
    ShardLock lock(*this, s);
    for (int db = 0; db < options_.databases && examined < budget; ++db) {
      KeyTable* table = s.FindTable(db);
      if (table == nullptr || table->expires_count() == 0) continue;
      saw_deadlines = true;
      uint32_t fingerprint;
      // At most kMaxExpiredPerShardVisit per visit: the shard's lock is held meanwhile, and
      // clients of its keys wait for it (a shard whose keys all expire together would otherwise
      // be emptied in one go).
      size_t this_visit = 0;
      while (examined < budget && this_visit < kMaxExpiredPerShardVisit &&
             table->PopDue(now, &fingerprint)) {
        ++examined;
        ++this_visit;
        // Several keys may share the fingerprint; remove each that is due.
        for (uint32_t slot = table->FindExpired(fingerprint, now); slot != KeyTable::kNoSlot;
             slot = table->FindExpired(fingerprint, now)) {
          RecordView view = table->View(slot);
          Remove(s, db, slot, view.key, RemovalCause::kExpired);
          ++removed;
          if (table->size() == 0) break;
        }
        if (table->size() == 0) break;
      }
    }
  }
  // A pass cut short by its budget has not seen every shard.
  if (saw_deadlines || visited < options_.shard_count || examined >= budget) {
    may_have_deadlines_.store(true, std::memory_order_relaxed);
  }
  return removed;
}

namespace {

// xorshift64: cheap per-thread randomness for sampling.
uint64_t NextRandom() {
  thread_local uint64_t state = 0x2545F4914F6CDD1DULL;
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

// Larger score = better eviction victim.
double EvictionScore(Store::EvictionPolicy policy, const RecordView& view, int64_t now_ms,
                     int lfu_decay_minutes, uint64_t random) {
  using Policy = Store::EvictionPolicy;
  switch (policy) {
    case Policy::kAllKeysLru:
    case Policy::kVolatileLru:
      return static_cast<double>(IdleSeconds(view.access, now_ms));
    case Policy::kAllKeysLfu:
    case Policy::kVolatileLfu:
      return 255.0 - LfuCounter(view.access, now_ms, lfu_decay_minutes);
    case Policy::kVolatileTtl:
      return -static_cast<double>(view.expire_ms);  // Sooner expiry first.
    default:
      return static_cast<double>(random);
  }
}

}  // namespace

size_t Store::EvictOne(EvictionPolicy policy, int samples, int64_t now_ms, int lfu_decay_minutes) {
  if (policy == EvictionPolicy::kNoEviction) return 0;
  // The chosen victim can vanish between sampling and eviction (another thread deleted or
  // evicted it): pick again a few times before reporting that nothing can be evicted.
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::optional<size_t> bytes = TryEvictOne(policy, samples, now_ms, lfu_decay_minutes);
    if (!bytes) return 0;  // No candidate at all.
    if (*bytes > 0) return *bytes;
  }
  return 0;
}

template <typename Fn>
void Store::ForEachRandomRecord(bool with_ttl_only, int samples, Fn&& fn) {
  int found = 0;
  // Walk the shards from a random one, taking one sample per shard, until enough samples were
  // seen; so even a few volatile keys among millions are found (at worst after one pass).
  uint32_t start = static_cast<uint32_t>(NextRandom() % options_.shard_count);
  for (uint32_t n = 0; n < options_.shard_count && found < samples; ++n) {
    uint32_t index = (start + n) % options_.shard_count;
    Shard& s = shards_[index];
    StatsLock lock(s);
    int first_db = static_cast<int>(NextRandom() % static_cast<uint64_t>(options_.databases));
    for (int d = 0; d < options_.databases; ++d) {
      int db = (first_db + d) % options_.databases;
      KeyTable* table = s.FindTable(db);
      if (table == nullptr || (with_ttl_only && table->expires_count() == 0)) continue;
      size_t capacity = table->capacity();
      size_t position = NextRandom() % capacity;
      uint32_t slot = table->OccupiedAtOrAfter(position);
      // Move on to the next record with a TTL (the table has one).
      for (size_t step = 0; with_ttl_only && table->View(slot).expire_ms == 0 && step < capacity;
           ++step) {
        slot = table->OccupiedAtOrAfter(slot + 1);
      }
      RecordView view = table->View(slot);
      if (with_ttl_only && view.expire_ms == 0) continue;
      ++found;
      fn(index, db, view);
      break;
    }
  }
}

Store::ExpirySample Store::SampleExpired(int samples) {
  ExpirySample result;
  if (!may_have_deadlines_.load(std::memory_order_relaxed)) return result;
  const int64_t now = NowMs();
  ForEachRandomRecord(/*with_ttl_only=*/true, samples, [&](uint32_t, int, const RecordView& view) {
    ++result.sampled;
    if (view.expire_ms <= now) ++result.expired;
  });
  return result;
}

std::optional<size_t> Store::TryEvictOne(EvictionPolicy policy, int samples, int64_t now_ms,
                                         int lfu_decay_minutes) {
  const bool volatile_only =
      policy == EvictionPolicy::kVolatileLru || policy == EvictionPolicy::kVolatileLfu ||
      policy == EvictionPolicy::kVolatileRandom || policy == EvictionPolicy::kVolatileTtl;
  struct Candidate {
    double score;
    uint32_t shard;
    int db;
    std::string key;
  };
  std::optional<Candidate> best;
  ForEachRandomRecord(volatile_only, samples, [&](uint32_t index, int db, const RecordView& view) {
    double score = EvictionScore(policy, view, now_ms, lfu_decay_minutes, NextRandom());
    if (!best || score > best->score) best = Candidate{score, index, db, std::string(view.key)};
  });
  if (!best) return std::nullopt;
  Shard& s = shards_[best->shard];
  ShardLock lock(*this, s);
  KeyTable* table = s.FindTable(best->db);
  if (table == nullptr) return 0;
  uint32_t slot = table->Find(best->key, Hash(best->key));
  if (slot == KeyTable::kNoSlot) return 0;  // Gone meanwhile.
  size_t bytes = table->RecordMemory(slot);
  Remove(s, best->db, slot, best->key, RemovalCause::kEvicted);
  return bytes;
}

size_t Store::UsedMemory() {
  size_t total = 0;
  for (uint32_t i = 0; i < options_.shard_count; ++i) {
    Shard* s = &shards_[i];
    StatsLock lock(*s);
    for (int db = 0; db < options_.databases; ++db) {
      if (KeyTable* table = s->FindTable(db)) total += table->MemoryUsage() + sizeof(KeyTable);
    }
  }
  return total;
}

Store::ArenaStats Store::GetArenaStats() {
  ArenaStats stats;
  for (uint32_t i = 0; i < options_.shard_count; ++i) {
    Shard* s = &shards_[i];
    StatsLock lock(*s);
    for (int db = 0; db < options_.databases; ++db) {
      if (KeyTable* table = s->FindTable(db)) {
        stats.arena_used += table->arena_bytes();
        stats.arena_capacity += table->arena_capacity();
        stats.dead_bytes += table->dead_bytes();
        stats.index_slots += table->capacity();
        stats.keys += table->size();
      }
    }
  }
  return stats;
}

}  // namespace gigakv
