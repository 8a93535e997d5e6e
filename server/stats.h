// Stats: the server's counters (INFO stats, commandstats, errorstats, latencystats and the
// instantaneous rates).
//
// Threading and cost. Counters bumped by most commands live in one slot per thread that runs
// commands, written only by that thread (AddOwned: a plain load and store, no locked
// instruction, no cache line shared between I/O threads) and summed under a mutex when read.
// Counters of rare events are shared atomics. The rates are sampled by the cron thread only and
// read by any.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "server/latency_histogram.h"

namespace gigakv::server {

// Adds to a counter that only the calling thread writes (a plain load and store, no lock).
inline void AddOwned(std::atomic<uint64_t>& counter, uint64_t amount) {
  counter.store(counter.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
}

// One command's counters on one thread (INFO commandstats, latencystats).
struct CommandCounters {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> ticks{0};  // CycleClock ticks; converted to usec when read.
  std::atomic<uint64_t> rejected_calls{0};
  std::atomic<uint64_t> failed_calls{0};
  // INFO latencystats: created by the owning thread on the command's first timed run (24 KiB,
  // so only for commands the thread runs), then never replaced; owned by these counters.
  std::atomic<LatencyHistogram*> latency{nullptr};

  CommandCounters() = default;
  CommandCounters(const CommandCounters&) = delete;
  CommandCounters& operator=(const CommandCounters&) = delete;
  ~CommandCounters() { delete latency.load(std::memory_order_relaxed); }
};

struct CommandTotals {
  uint64_t calls = 0, usec = 0, rejected_calls = 0, failed_calls = 0;
};

// Counters that most commands bump, one set per thread (see the file comment).
struct ThreadStats {
  std::atomic<uint64_t> keyspace_hits{0};
  std::atomic<uint64_t> keyspace_misses{0};
  std::atomic<uint64_t> dirty{0};  // Changes since the last save (rdb_changes_since_last_save).
  std::atomic<uint64_t> net_input_bytes{0};
  std::atomic<uint64_t> net_output_bytes{0};
  std::atomic<uint64_t> reads_processed{0};   // Socket reads that brought requests.
  std::atomic<uint64_t> writes_processed{0};  // Socket writes of replies.
};

class Stats {
 public:
  // `command_count`: the size of the command table (command ids are dense, CommandTable::IdOf).
  explicit Stats(size_t command_count);
  Stats(const Stats&) = delete;
  Stats& operator=(const Stats&) = delete;

  // --- Rare events, shared by all threads -------------------------------------------------------
  std::atomic<uint64_t> total_connections_received{0};
  std::atomic<uint64_t> rejected_connections{0};
  std::atomic<uint64_t> total_error_replies{0};
  std::atomic<uint64_t> client_query_buffer_limit_disconnections{0};
  std::atomic<uint64_t> client_output_buffer_limit_disconnections{0};
  std::atomic<int64_t> connected_clients{0};

  // --- Per-thread counters --------------------------------------------------------------------
  // The calling thread's counters (registered on first use); only this thread may add to them.
  ThreadStats& Local() { return LocalSlot().stats; }
  // The calling thread's command counters, indexed by command id.
  CommandCounters* LocalCommandCounters() { return LocalSlot().counters.get(); }
  // How many threads have counters here (one slot per thread, however often it switches
  // between Stats objects).
  size_t thread_slot_count();

  struct Totals {
    uint64_t keyspace_hits = 0, keyspace_misses = 0, dirty = 0;
    uint64_t net_input_bytes = 0, net_output_bytes = 0;
    uint64_t reads_processed = 0, writes_processed = 0;
  };
  // ThreadStats summed over every thread.
  Totals totals();
  // One command's counters summed over every thread; its latency samples merged.
  CommandTotals command_totals(uint32_t id);
  LatencyDistribution command_latency(uint32_t id);
  uint64_t total_commands_processed();

  // --- Errors (INFO errorstats) ---------------------------------------------------------------
  // Counts an error reply by its code ("ERR", "WRONGTYPE"...); at most 128 codes, as Redis.
  void CountError(std::string_view code);
  std::map<std::string, uint64_t> ErrorStats();

  // --- Instantaneous rates (cron) -------------------------------------------------------------
  // Takes a sample of the counters the rates follow. Cron thread only.
  void SampleRates(int64_t now_ms);
  // Commands per second over the last ~1.6 s of samples (INFO instantaneous_ops_per_sec).
  int64_t instantaneous_ops_per_sec() const { return ops_rate_.per_second(); }
  // Network input and output in KiB per second, over the same window.
  double instantaneous_input_kbps() const { return input_rate_.per_second() / 1024.0; }
  double instantaneous_output_kbps() const { return output_rate_.per_second() / 1024.0; }

  // CONFIG RESETSTAT: zeroes everything but connected_clients and dirty (which are state, not
  // statistics). A reset racing a command may lose to it.
  void Reset();

 private:
  struct ThreadSlot {
    std::unique_ptr<CommandCounters[]> counters;
    ThreadStats stats;
    std::thread::id owner;  // The thread that adds to it.
  };
  // The rate of a growing counter over a ring of (time, value) samples, like Redis's
  // instantaneous metrics.
  class RateMeter {
   public:
    void Sample(int64_t now_ms, uint64_t value);
    int64_t per_second() const { return per_second_.load(std::memory_order_relaxed); }

   private:
    static constexpr int kSamples = 16;
    std::pair<int64_t, uint64_t> samples_[kSamples] = {};
    int count_ = 0;
    std::atomic<int64_t> per_second_{0};
  };

  // The calling thread's slot. Each thread caches its slots of the last few Stats it used (a
  // thread may serve several servers, as tests do), most recent first: the hot path is the
  // first entry's compare and load, inline; the other entries and registration are out of line.
  ThreadSlot& LocalSlot() {
    const LocalCacheEntry& recent = local_cache_[0];
    if (recent.instance == instance_id_) [[likely]] {
      return *recent.slot;
    }
    return FindLocalSlot();
  }
  // The rest of the cache, then this thread's slot in slots_ (registered if it has none), moved
  // to the front of the cache.
  ThreadSlot& FindLocalSlot();
  struct LocalCacheEntry {
    uint64_t instance = 0;
    ThreadSlot* slot = nullptr;
  };
  static constexpr size_t kLocalCacheEntries = 4;
  static thread_local LocalCacheEntry local_cache_[kLocalCacheEntries];

  const size_t command_count_;
  const uint64_t instance_id_;  // Tells this object's thread-local cache entries from others'.
  std::mutex slots_mutex_;
  std::vector<std::unique_ptr<ThreadSlot>> slots_;
  std::mutex error_mutex_;
  std::map<std::string, uint64_t> error_stats_;
  RateMeter ops_rate_, input_rate_, output_rate_;
};

}  // namespace gigakv::server
