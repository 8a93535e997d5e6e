#include "server/server.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "server/cycle_clock.h"

namespace gigakv::server {
namespace {

// Calibrates once per process (several Servers may exist in tests).
void CalibrateCycleClockOnce() {
  static const bool calibrated = [] {
    CycleClock::Calibrate();
    return true;
  }();
  (void)calibrated;
}

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

}  // namespace

void CycleClock::Calibrate() {
  auto start_time = std::chrono::steady_clock::now();
  uint64_t start_ticks = Now();
  while (std::chrono::steady_clock::now() - start_time < std::chrono::milliseconds(5)) {
  }
  uint64_t ticks = Now() - start_ticks;
  double micros =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_time)
          .count();
  if (micros > 0 && ticks > 0) {
    ticks_per_us_ = static_cast<double>(ticks) / micros;
    ns_per_tick_ = 1000.0 / ticks_per_us_;
  }
}

Server::Server(Config& config, ServerOptions options) : config_(config) {
  CalibrateCycleClockOnce();
  StoreOptions store_options;
  settings_.Attach(config_);
  store_options.shard_count = static_cast<uint32_t>(settings_.shards);
  store_options.databases = settings_.databases;
  store_options.clock = options.clock;
  store_ = std::make_unique<Store>(store_options);
  clients_ = std::make_unique<ClientRegistry>(*store_, stats_, watches_);
  // Keys that expire or are evicted leave the log as explicit deletions.
  store_->set_removal_listener([this](int db, std::string_view key, RemovalCause cause) {
    if (!changes_.active()) return;
    const ChangedKey changed{db, key};
    const std::string_view effect[] = {"DEL", key};
    ChangeRecord record;
    record.cause = cause == RemovalCause::kExpired ? ChangeCause::kExpiry : ChangeCause::kEviction;
    record.db = db;
    record.keys = absl::MakeConstSpan(&changed, 1);
    if (changes_.wants_effects()) record.effect = effect;
    changes_.Publish(record);
  });
  // Large collections that expire or are evicted are freed on the lazy-free thread too.
  store_->set_object_reclaimer(
      [this](std::unique_ptr<Object> object) { FreeLater(std::move(object)); });
  start_time_ms_ = store_->NowMs();
  RefreshCoarseClock();
  startup_used_memory_ = AllocatedBytes();
  used_memory_ = startup_used_memory_;
  peak_used_memory_ = startup_used_memory_;
  lastsave_s_ = start_time_ms_ / 1000;
}

Server::~Server() {
  {
    std::lock_guard<std::mutex> lock(lazyfree_mutex_);
    lazyfree_stop_ = true;
  }
  lazyfree_cv_.notify_all();
  if (lazyfree_thread_.joinable()) lazyfree_thread_.join();
}

void Server::FreeLater(Store::DetachedTables tables) {
  if (tables.empty()) return;
  LazyFreeJob job;
  for (const auto& table : tables) job.count += table->size();  // Keys, as Redis counts them.
  job.tables = std::move(tables);
  QueueLazyFree(std::move(job));
}

namespace {
thread_local bool tls_user_lazy_free = false;
}  // namespace

Server::UserLazyFreeScope::UserLazyFreeScope() : previous_(tls_user_lazy_free) {
  tls_user_lazy_free = true;
}
Server::UserLazyFreeScope::~UserLazyFreeScope() { tls_user_lazy_free = previous_; }

void Server::FreeLater(std::unique_ptr<Object> object) {
  if (object == nullptr) return;
  LazyFreeJob job;
  job.count = 1;
  // Redis frees a string in place whatever its size (its free effort is 1), even for UNLINK.
  job.lazy_free = tls_user_lazy_free && object->type() != KeyType::kString;
  job.object = std::move(object);
  QueueLazyFree(std::move(job));
}

void Server::QueueLazyFree(LazyFreeJob job) {
  std::lock_guard<std::mutex> lock(lazyfree_mutex_);
  if (!lazyfree_thread_.joinable()) {
    lazyfree_thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(lazyfree_mutex_);
      while (true) {
        lazyfree_cv_.wait(lock, [this] { return lazyfree_stop_ || !lazyfree_queue_.empty(); });
        if (lazyfree_queue_.empty()) return;  // Stopping with nothing left to free.
        std::vector<LazyFreeJob> batch = std::move(lazyfree_queue_);
        lazyfree_queue_.clear();
        lock.unlock();
        for (LazyFreeJob& done : batch) {
          // The actual freeing, off every I/O thread.
          done.tables.clear();
          done.object.reset();
          if (done.lazy_free) {
            lazyfree_pending_.fetch_sub(done.count, std::memory_order_relaxed);
            lazyfreed_objects_.fetch_add(done.count, std::memory_order_relaxed);
          } else {
            background_freed_objects_.fetch_add(done.count, std::memory_order_relaxed);
          }
        }
        lock.lock();
      }
    });
  }
  const size_t count = job.lazy_free ? job.count : 0;
  lazyfree_queue_.push_back(std::move(job));  // Counted only once queued (it may throw).
  lazyfree_pending_.fetch_add(count, std::memory_order_relaxed);
  lazyfree_cv_.notify_one();
}

int64_t Server::UsedMemory(bool refresh) {
  if (refresh) {
    int64_t used = AllocatedBytes();
    used_memory_.store(used);
    int64_t peak = peak_used_memory_.load();
    while (used > peak && !peak_used_memory_.compare_exchange_weak(peak, used)) {
    }
  }
  return used_memory_.load(std::memory_order_relaxed);
}

bool Server::EvictToLimit() {
  if (clients_->Paused())
    return true;  // As Redis: no eviction, and no OOM refusal, during a pause.
  int64_t limit = settings_.maxmemory.get();
  int64_t used = used_memory_.load(std::memory_order_relaxed);
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
  // Like Redis, a command is refused only when nothing could be evicted; a partial pass (budget
  // used up) lets it run and later commands continue evicting.
  return freed > 0;
}

void Server::ResetStats() {
  stats_.Reset();
  expire_cycle_us_ = 0;
  expire_cycle_cap_reached_ = 0;
  lazyfreed_objects_ = 0;
  background_freed_objects_ = 0;
  store_->ResetStats();
}

void Server::set_effect_sink(EffectSink* sink) {
  if (effect_sink_consumer_ != nullptr) {
    changes_.RemoveConsumer(effect_sink_consumer_.get());
    effect_sink_consumer_.reset();
  }
  if (sink == nullptr) return;
  effect_sink_consumer_ = std::make_unique<EffectSinkConsumer>(*sink);
  changes_.AddConsumer(effect_sink_consumer_.get());
  changes_.SetInterest(effect_sink_consumer_.get(), ChangeConsumer::Interest::kEffects);
}

void Server::DiscardTransaction(ClientState& client) {
  client.multi = ClientState::Transaction{};
  client.multi_count.store(-1, std::memory_order_relaxed);
  watches_.UnwatchAll(client.id);
}

bool Server::ActiveExpire() {
  if (!active_expire_enabled_.load() || clients_->Paused()) return false;  // Redis pauses it too.
  // Bounded work per call: at most this many due deadlines popped per round; rounds repeat while
  // a good share of them had expired (like Redis's adaptive cycle).
  constexpr size_t kBudget = 20000;
  auto start = std::chrono::steady_clock::now();
  bool backlog = true;  // Unless a round finds few due keys.
  for (int round = 0; round < 16 && backlog; ++round) {
    backlog = store_->ActiveExpireCycle(kBudget) >= kBudget / 10;
    // The cron runs this in a batch scope: an EXEC waiting for it (and every I/O thread waiting
    // behind that EXEC) gets in after one round; the cron comes back within a millisecond.
    if (transaction_gate_.exec_waiting()) break;
  }
  expire_cycle_us_.fetch_add(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::steady_clock::now() - start)
                                .count()));
  if (backlog) expire_cycle_cap_reached_.fetch_add(1);
  return backlog;  // Still removing at full rate: more keys are due.
}

bool Server::Cron() {
  // A pause that ran out stops costing commands a clock read, and keys expire again.
  clients_->ForgetEndedPause();
  bool expiry_backlog = false;
  if (active_expire_enabled_.load()) {
    // INFO expired_stale_perc: the share of keys with a TTL already past it when the cycle
    // starts, from 20 samples, smoothed over ticks exactly as Redis does.
    Store::ExpirySample sample = store_->SampleExpired(20);
    double current = sample.sampled > 0 ? static_cast<double>(sample.expired) / sample.sampled : 0;
    expired_stale_ratio_.store(current * 0.05 + expired_stale_ratio_.load() * 0.95);
    expiry_backlog = ActiveExpire();
  }
  UsedMemory(/*refresh=*/true);
  RefreshCoarseClock();
  EvictToLimit();  // Also evict when no command arrives.

  stats_.SampleRates(NowMs());
  return expiry_backlog;
}

}  // namespace gigakv::server
