#include "server/keyspace.h"

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

namespace gigakv::server {
namespace {

int64_t AllocatedBytes() {
  // Everything the process has allocated through malloc, like Redis's used_memory (which asks
  // its allocator): heap chunks in use plus mmapped chunks.
  struct mallinfo2 info = mallinfo2();
  int64_t allocated = static_cast<int64_t>(info.uordblks + info.hblkhd);
  if (allocated > 0) return allocated;
  // Another allocator (e.g. a sanitizer's) answers nothing: the resident size is the next best.
  std::ifstream statm("/proc/self/statm");
  int64_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * sysconf(_SC_PAGESIZE);
}

thread_local bool tls_user_lazy_free = false;

}  // namespace

Keyspace::Keyspace(const Settings& settings, const Clock* clock) : settings_(settings) {
  StoreOptions store_options;
  store_options.shard_count = static_cast<uint32_t>(settings_.shards);
  store_options.databases = settings_.databases;
  store_options.clock = clock;
  store_ = std::make_unique<Store>(store_options);
  // Keys that expire or are evicted leave the stream as explicit deletions.
  store_->set_removal_listener(
      [this](int db, std::string_view key, RemovalCause cause) { PublishRemoval(db, key, cause); });
  // Large collections that expire or are evicted are freed on the lazy-free thread too.
  store_->set_object_reclaimer(
      [this](std::unique_ptr<Object> object) { FreeLater(std::move(object)); });
  RefreshCoarseClock();
  startup_used_memory_ = AllocatedBytes();
  used_memory_ = startup_used_memory_;
  counted_memory_ = startup_used_memory_;
  peak_used_memory_ = startup_used_memory_;
}

Keyspace::~Keyspace() {
  {
    std::lock_guard<std::mutex> lock(lazyfree_mutex_);
    lazyfree_stop_ = true;
  }
  lazyfree_cv_.notify_all();
  if (lazyfree_thread_.joinable()) lazyfree_thread_.join();
}

void Keyspace::PublishRemoval(int db, std::string_view key, RemovalCause cause) {
  if (!changes_.active()) return;
  const ChangedKey changed{db, key};
  const std::string_view effect[] = {"DEL", key};
  ChangeRecord record;
  record.cause = cause == RemovalCause::kExpired ? ChangeCause::kExpiry : ChangeCause::kEviction;
  record.db = db;
  record.keys = absl::MakeConstSpan(&changed, 1);
  if (changes_.wants_effects()) record.effect = effect;
  changes_.Publish(record);
}

void Keyspace::set_effect_sink(EffectSink* sink) {
  if (effect_sink_consumer_ != nullptr) {
    changes_.RemoveConsumer(effect_sink_consumer_.get());
    effect_sink_consumer_.reset();
  }
  if (sink == nullptr) return;
  effect_sink_consumer_ = std::make_unique<EffectSinkConsumer>(*sink);
  changes_.AddConsumer(effect_sink_consumer_.get());
  changes_.SetInterest(effect_sink_consumer_.get(), ChangeConsumer::Interest::kEffects);
}

Keyspace::UserLazyFreeScope::UserLazyFreeScope() : previous_(tls_user_lazy_free) {
  tls_user_lazy_free = true;
}
Keyspace::UserLazyFreeScope::~UserLazyFreeScope() { tls_user_lazy_free = previous_; }

void Keyspace::FreeLater(Store::DetachedTables tables) {
  if (tables.empty()) return;
  LazyFreeJob job;
  for (const auto& table : tables) job.count += table->size();  // Keys, as Redis counts them.
  job.tables = std::move(tables);
  QueueLazyFree(std::move(job));
}

void Keyspace::FreeLater(std::unique_ptr<Object> object) {
  if (object == nullptr) return;
  LazyFreeJob job;
  job.count = 1;
  // Redis frees a string in place whatever its size (its free effort is 1), even for UNLINK.
  job.lazy_free = tls_user_lazy_free && object->type() != KeyType::kString;
  job.object = std::move(object);
  QueueLazyFree(std::move(job));
}

void Keyspace::QueueLazyFree(LazyFreeJob job) {
  std::unique_lock<std::mutex> lock(lazyfree_mutex_);
  if (lazyfree_stop_) {
    // The destructor stopped (or joined) the thread: free here rather than start another one
    // nothing would join.
    lock.unlock();
    FreeNow(job, /*queued=*/false);
    return;
  }
  if (!lazyfree_thread_.joinable()) {
    lazyfree_thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(lazyfree_mutex_);
      while (true) {
        lazyfree_cv_.wait(lock, [this] { return lazyfree_stop_ || !lazyfree_queue_.empty(); });
        if (lazyfree_queue_.empty()) return;  // Stopping with nothing left to free.
        std::vector<LazyFreeJob> batch = std::move(lazyfree_queue_);
        lazyfree_queue_.clear();
        lock.unlock();
        for (LazyFreeJob& done : batch) FreeNow(done, /*queued=*/true);  // Off every I/O thread.
        lock.lock();
      }
    });
  }
  const size_t count = job.lazy_free ? job.count : 0;
  lazyfree_queue_.push_back(std::move(job));  // Counted only once queued (it may throw).
  lazyfree_pending_.fetch_add(count, std::memory_order_relaxed);
  lazyfree_cv_.notify_one();
}

void Keyspace::FreeNow(LazyFreeJob& job, bool queued) {
  job.tables.clear();
  job.object.reset();
  if (job.lazy_free) {
    if (queued) lazyfree_pending_.fetch_sub(job.count, std::memory_order_relaxed);
    lazyfreed_objects_.fetch_add(job.count, std::memory_order_relaxed);
  } else {
    background_freed_objects_.fetch_add(job.count, std::memory_order_relaxed);
  }
}

bool Keyspace::ActiveExpire(const std::function<bool()>& yield) {
  if (!active_expire_enabled_.load()) return false;
  // Bounded work per call: at most this many due deadlines popped per round; rounds repeat while
  // a good share of them had expired (like Redis's adaptive cycle).
  constexpr size_t kBudget = 20000;
  auto start = std::chrono::steady_clock::now();
  bool backlog = true;  // Unless a round finds few due keys.
  for (int round = 0; round < 16 && backlog; ++round) {
    backlog = store_->ActiveExpireCycle(kBudget) >= kBudget / 10;
    if (yield && yield()) break;
  }
  expire_cycle_us_.fetch_add(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::steady_clock::now() - start)
                                .count()));
  if (backlog) expire_cycle_cap_reached_.fetch_add(1);
  return backlog;  // Still removing at full rate: more keys are due.
}

void Keyspace::SampleStaleKeys() {
  if (!active_expire_enabled_.load()) return;
  // INFO expired_stale_perc: the share of keys with a TTL already past it when the cycle starts,
  // from 20 samples, smoothed over ticks exactly as Redis does.
  Store::ExpirySample sample = store_->SampleExpired(20);
  double current = sample.sampled > 0 ? static_cast<double>(sample.expired) / sample.sampled : 0;
  expired_stale_ratio_.store(current * 0.05 + expired_stale_ratio_.load() * 0.95);
}

bool Keyspace::AllocatorReportsUsage() {
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd > 0;
}

int64_t Keyspace::UsedMemory(bool refresh) {
  if (refresh) {
    int64_t used = AllocatedBytes();
    used_memory_.store(used);
    counted_memory_.store(used - not_counted_memory());
    int64_t peak = peak_used_memory_.load();
    while (used > peak && !peak_used_memory_.compare_exchange_weak(peak, used)) {
    }
  }
  return used_memory_.load(std::memory_order_relaxed);
}

bool Keyspace::EvictToLimit() {
  int64_t limit = settings_.maxmemory.get();
  int64_t used = counted_memory_.load(std::memory_order_relaxed);
  if (limit <= 0 || used <= limit) return true;
  Store::EvictionPolicy policy = settings_.maxmemory_policy.get();
  if (policy == Store::EvictionPolicy::kNoEviction) return false;
  // Bounded work per command, as Redis bounds its eviction loop; the rest happens on the next
  // commands and the cron tick refreshes the real figure.
  int64_t freed = 0;
  for (int evicted = 0; freed < used - limit && evicted < 64; ++evicted) {
    size_t bytes = store_->EvictOne(policy, settings_.maxmemory_samples.get(), CoarseNowMs(),
                                    settings_.lfu_decay_minutes.get());
    if (bytes == 0) break;
    freed += static_cast<int64_t>(bytes);
  }
  used_memory_.fetch_sub(freed, std::memory_order_relaxed);
  counted_memory_.fetch_sub(freed, std::memory_order_relaxed);
  // Like Redis, a command is refused only when nothing could be evicted; a partial pass (budget
  // used up) lets it run and later commands continue evicting.
  return freed > 0;
}

bool Keyspace::SharesSmallIntegers() const {
  using Policy = Store::EvictionPolicy;
  Policy policy = settings_.maxmemory_policy.get();
  bool lru_or_lfu = policy == Policy::kAllKeysLru || policy == Policy::kAllKeysLfu ||
                    policy == Policy::kVolatileLru || policy == Policy::kVolatileLfu;
  return !(settings_.maxmemory.get() > 0 && lru_or_lfu);
}

void Keyspace::ResetStats() {
  expired_stale_ratio_ = 0;
  expire_cycle_us_ = 0;
  expire_cycle_cap_reached_ = 0;
  lazyfreed_objects_ = 0;
  background_freed_objects_ = 0;
  store_->ResetStats();
}

}  // namespace gigakv::server
