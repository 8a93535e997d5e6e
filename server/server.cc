#include "server/server.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "absl/strings/str_format.h"
#include "gigakv/numbers.h"
#include "gigakv/strings.h"
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
  if (Paused()) return true;  // As Redis: no eviction, and no OOM refusal, during a pause.
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

void Server::RegisterClient(const std::shared_ptr<ClientState>& client) {
  std::lock_guard<std::mutex> lock(clients_mutex_);
  clients_[client->id] = client;
  stats_.connected_clients.store(static_cast<int64_t>(clients_.size()));
}

void Server::PauseClients(int64_t end_ms, PauseType type) {
  {
    std::lock_guard<std::mutex> lock(pause_mutex_);
    if (!Paused()) ClearPauseLocked();  // A pause that ended is forgotten, type and all.
    if (static_cast<int>(type) > pause_type_.load()) pause_type_.store(static_cast<int>(type));
    if (end_ms > pause_end_ms_.load()) pause_end_ms_.store(end_ms);
    store_->SetExpiryPaused(true);
  }
  UnpauseWaiters();  // Those that may now run (ALL became WRITE...) or wait on a new end.
}

void Server::UnpauseClients() {
  {
    std::lock_guard<std::mutex> lock(pause_mutex_);
    ClearPauseLocked();
  }
  UnpauseWaiters();
}

void Server::ForgetEndedPause() {
  if (pause_type_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(pause_mutex_);
  if (pause_type_.load() != 0 && !Paused()) ClearPauseLocked();
}

void Server::ClearPauseLocked() {
  pause_type_.store(static_cast<int>(PauseType::kNone));
  pause_end_ms_.store(0);
  store_->SetExpiryPaused(false);
}

void Server::UnpauseWaiters() {
  for (const std::shared_ptr<ClientState>& client : Clients()) {
    if (client->paused.load() && client->resume_paused) client->resume_paused();
  }
}

bool Server::PostponesCommand(const CommandSpec& spec, const ClientState& client) const {
  if (!client.resume_paused || !Paused()) return false;
  if (pause_type_.load(std::memory_order_relaxed) == static_cast<int>(PauseType::kAll)) {
    return true;
  }
  // WRITE: commands that write, and EXEC of a transaction that queued one.
  return (spec.flags & kWrite) || (spec.name == "exec" && (client.multi.flags & kWrite));
}

void Server::AddMonitor(const std::shared_ptr<ClientState>& client) {
  std::lock_guard<std::mutex> lock(monitors_mutex_);
  if (client->monitor.exchange(true)) return;
  monitors_.push_back(client);
  monitor_count_.store(static_cast<int>(monitors_.size()), std::memory_order_relaxed);
}

void Server::RemoveMonitor(uint64_t client_id) {
  std::lock_guard<std::mutex> lock(monitors_mutex_);
  for (auto it = monitors_.begin(); it != monitors_.end(); ++it) {
    if ((*it)->id != client_id) continue;
    (*it)->monitor.store(false);
    monitors_.erase(it);
    break;
  }
  monitor_count_.store(static_cast<int>(monitors_.size()), std::memory_order_relaxed);
}

namespace {

// Redis's sdscatrepr: a quoted string with \\ \" \n \r \t \a \b escaped and other bytes
// outside printable ASCII as \xhh.
void AppendQuotedRepr(std::string* out, std::string_view text) {
  out->push_back('"');
  for (unsigned char c : text) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '"':
        out->append("\\\"");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\a':
        out->append("\\a");
        break;
      case '\b':
        out->append("\\b");
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out->push_back(static_cast<char>(c));
        } else {
          absl::StrAppendFormat(out, "\\x%02x", c);
        }
    }
  }
  out->push_back('"');
}

// Arguments MONITOR shows as "(redacted)", as Redis 7.0 does: AUTH's, and HELLO's AUTH pair.
// Only where Redis gets to redacting them: AUTH with at most 2 arguments, HELLO with protocol
// version 2 or 3.
bool IsRedacted(const std::vector<std::string_view>& args, size_t index) {
  if (EqualsIgnoreCase(args[0], "auth")) return index >= 1 && args.size() <= 3;
  int64_t version = 0;
  if (!EqualsIgnoreCase(args[0], "hello") || args.size() < 2 || !ParseInt64(args[1], &version) ||
      version < 2 || version > 3) {
    return false;
  }
  // HELLO's options as its parser walks them: AUTH user pass, SETNAME name.
  for (size_t i = 2; i < args.size() && i < index; ++i) {
    const size_t more = args.size() - 1 - i;
    if (EqualsIgnoreCase(args[i], "auth") && more >= 2) {
      if (index == i + 1 || index == i + 2) return true;
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "setname") && more >= 1) {
      ++i;
    } else {
      return false;  // A syntax error ends HELLO's parsing there.
    }
  }
  return false;
}

}  // namespace

void Server::FeedMonitors(const ClientState& client, const std::vector<std::string_view>& args,
                          protocol::ReplyBuilder* own_reply) {
  int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  std::string line = absl::StrFormat("+%d.%06d [%d %s]", now_us / 1000000, now_us % 1000000,
                                     client.db.load(std::memory_order_relaxed), client.addr);
  for (size_t i = 0; i < args.size(); ++i) {
    line.push_back(' ');
    AppendQuotedRepr(&line, IsRedacted(args, i) ? std::string_view("(redacted)") : args[i]);
  }
  line.append("\r\n");
  std::lock_guard<std::mutex> lock(monitors_mutex_);
  for (const std::shared_ptr<ClientState>& monitor : monitors_) {
    if (monitor.get() == &client && own_reply != nullptr) {
      own_reply->buffer().append(line);  // Right behind the command's reply, as in Redis.
    } else if (monitor->deliver_output) {
      monitor->deliver_output(line);
    }
  }
}

void Server::UnregisterClient(uint64_t id) {
  watches_.UnwatchAll(id);
  std::lock_guard<std::mutex> lock(clients_mutex_);
  clients_.erase(id);
  stats_.connected_clients.store(static_cast<int64_t>(clients_.size()));
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

std::vector<std::shared_ptr<ClientState>> Server::Clients() {
  std::vector<std::shared_ptr<ClientState>> result;
  {
    std::lock_guard<std::mutex> lock(clients_mutex_);
    result.reserve(clients_.size());
    for (auto& [id, client] : clients_) result.push_back(client);
  }
  std::sort(result.begin(), result.end(),
            [](const auto& a, const auto& b) { return a->id < b->id; });
  return result;
}

std::shared_ptr<ClientState> Server::FindClient(uint64_t id) {
  std::lock_guard<std::mutex> lock(clients_mutex_);
  auto it = clients_.find(id);
  return it == clients_.end() ? nullptr : it->second;
}

bool Server::ActiveExpire() {
  if (!active_expire_enabled_.load() || Paused()) return false;  // Redis pauses it too.
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
  ForgetEndedPause();
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
