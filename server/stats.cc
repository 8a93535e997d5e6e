#include "server/stats.h"

#include "server/cycle_clock.h"

namespace gigakv::server {
namespace {
std::atomic<uint64_t> next_stats_instance{1};
}  // namespace

Stats::Stats(size_t command_count)
    : command_count_(command_count), instance_id_(next_stats_instance.fetch_add(1)) {}

thread_local Stats::LocalCacheEntry Stats::local_cache_[Stats::kLocalCacheEntries];

Stats::ThreadSlot& Stats::FindLocalSlot() {
  size_t at = 1;
  while (at < kLocalCacheEntries && local_cache_[at].instance != instance_id_) ++at;
  LocalCacheEntry entry;
  if (at < kLocalCacheEntries) {
    entry = local_cache_[at];
  } else {
    // Not cached (first use, or pushed out by other Stats): this thread's slot, if it has one,
    // so a thread that keeps switching between many servers still has one slot in each.
    at = kLocalCacheEntries - 1;  // The least recent entry gives way.
    std::lock_guard<std::mutex> lock(slots_mutex_);
    const std::thread::id self = std::this_thread::get_id();
    for (const auto& slot : slots_) {
      if (slot->owner == self) entry = {instance_id_, slot.get()};
    }
    if (entry.slot == nullptr) {
      auto slot = std::make_unique<ThreadSlot>();
      slot->counters = std::make_unique<CommandCounters[]>(command_count_);
      slot->owner = self;
      slots_.push_back(std::move(slot));
      entry = {instance_id_, slots_.back().get()};
    }
  }
  for (; at > 0; --at) local_cache_[at] = local_cache_[at - 1];
  local_cache_[0] = entry;
  return *entry.slot;
}

size_t Stats::thread_slot_count() {
  std::lock_guard<std::mutex> lock(slots_mutex_);
  return slots_.size();
}

Stats::Totals Stats::totals() {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  Totals totals;
  std::lock_guard<std::mutex> lock(slots_mutex_);
  for (const auto& slot : slots_) {
    totals.keyspace_hits += slot->stats.keyspace_hits.load(kRelaxed);
    totals.keyspace_misses += slot->stats.keyspace_misses.load(kRelaxed);
    totals.dirty += slot->stats.dirty.load(kRelaxed);
    totals.net_input_bytes += slot->stats.net_input_bytes.load(kRelaxed);
    totals.net_output_bytes += slot->stats.net_output_bytes.load(kRelaxed);
    totals.reads_processed += slot->stats.reads_processed.load(kRelaxed);
    totals.writes_processed += slot->stats.writes_processed.load(kRelaxed);
  }
  return totals;
}

CommandTotals Stats::command_totals(uint32_t id) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  CommandTotals totals;
  std::lock_guard<std::mutex> lock(slots_mutex_);
  for (const auto& slot : slots_) {
    const CommandCounters& c = slot->counters[id];
    totals.calls += c.calls.load(kRelaxed);
    totals.usec += CycleClock::ToMicros(c.ticks.load(kRelaxed));
    totals.rejected_calls += c.rejected_calls.load(kRelaxed);
    totals.failed_calls += c.failed_calls.load(kRelaxed);
  }
  return totals;
}

LatencyDistribution Stats::command_latency(uint32_t id) {
  LatencyDistribution distribution;
  std::lock_guard<std::mutex> lock(slots_mutex_);
  for (const auto& slot : slots_) {
    const LatencyHistogram* histogram = slot->counters[id].latency.load(std::memory_order_acquire);
    if (histogram != nullptr) distribution.Add(*histogram);
  }
  return distribution;
}

uint64_t Stats::total_commands_processed() {
  uint64_t total = 0;
  std::lock_guard<std::mutex> lock(slots_mutex_);
  for (const auto& slot : slots_) {
    for (size_t id = 0; id < command_count_; ++id) {
      total += slot->counters[id].calls.load(std::memory_order_relaxed);
    }
  }
  return total;
}

void Stats::CountError(std::string_view code) {
  std::lock_guard<std::mutex> lock(error_mutex_);
  // Redis caps distinct error codes at 128 to bound memory.
  auto it = error_stats_.find(std::string(code));
  if (it != error_stats_.end()) {
    ++it->second;
  } else if (error_stats_.size() < 128) {
    error_stats_.emplace(std::string(code), 1);
  }
}

std::map<std::string, uint64_t> Stats::ErrorStats() {
  std::lock_guard<std::mutex> lock(error_mutex_);
  return error_stats_;
}

void Stats::SampleRates(int64_t now_ms) {
  Totals sums = totals();
  ops_rate_.Sample(now_ms, total_commands_processed());
  input_rate_.Sample(now_ms, sums.net_input_bytes);
  output_rate_.Sample(now_ms, sums.net_output_bytes);
}

void Stats::Reset() {
  {
    std::lock_guard<std::mutex> lock(slots_mutex_);
    for (const auto& slot : slots_) {
      for (size_t i = 0; i < command_count_; ++i) {
        CommandCounters& counters = slot->counters[i];
        counters.calls = 0;
        counters.ticks = 0;
        counters.rejected_calls = 0;
        counters.failed_calls = 0;
        LatencyHistogram* latency = counters.latency.load(std::memory_order_acquire);
        if (latency != nullptr) latency->Reset();
      }
      slot->stats.keyspace_hits = 0;
      slot->stats.keyspace_misses = 0;
      slot->stats.net_input_bytes = 0;
      slot->stats.net_output_bytes = 0;
      slot->stats.reads_processed = 0;
      slot->stats.writes_processed = 0;
    }
  }
  {
    std::lock_guard<std::mutex> lock(error_mutex_);
    error_stats_.clear();
  }
  total_connections_received = 0;
  rejected_connections = 0;
  total_error_replies = 0;
  client_query_buffer_limit_disconnections = 0;
  client_output_buffer_limit_disconnections = 0;
}

void Stats::RateMeter::Sample(int64_t now_ms, uint64_t value) {
  // A counter that went down was reset (CONFIG RESETSTAT): start the ring again from it.
  if (count_ > 0 && value < samples_[(count_ - 1) % kSamples].second) {
    count_ = 0;
    per_second_.store(0, std::memory_order_relaxed);
  }
  // Rate over the oldest sample still in the ring.
  int index = count_ % kSamples;
  const auto& oldest = count_ >= kSamples ? samples_[index] : samples_[0];
  if (count_ > 0 && now_ms > oldest.first) {
    per_second_.store(static_cast<int64_t>((value - oldest.second) * 1000 /
                                           static_cast<uint64_t>(now_ms - oldest.first)),
                      std::memory_order_relaxed);
  }
  samples_[index] = {now_ms, value};
  ++count_;
}

}  // namespace gigakv::server
