// Per-command latency distributions for INFO latencystats (latency-tracking yes).
//
// The layout is that of the HdrHistogram Redis 7.0 keeps per command: values in nanoseconds from
// 1 to 1,000,000,000 (1 s), 2 significant digits. Values below 256 ns are counted exactly;
// above, each power of two is cut into 128 equal steps. So percentiles read back from the same
// buckets Redis reads them from, and print the same way (a command of 1 µs reads p50=1.003).
//
// LatencyHistogram is recorded into by one thread only (its owner, an I/O thread) and read by
// any thread: counters are relaxed atomics, written with a plain load and store. A reader may
// see a sample in one counter and not yet in another; percentiles are statistics, so that is
// fine. LatencyDistribution merges histograms (one per thread) for reading percentiles.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace gigakv::server {

class LatencyHistogram {
 public:
  static constexpr int64_t kLowestNs = 1;
  static constexpr int64_t kHighestNs = 1'000'000'000;
  // Buckets: 23 powers of two above the exact range, 128 counters each, plus the exact range's
  // first half: (23 + 1) * 128 counters.
  static constexpr int kCounters = 24 * 128;

  // Adds `count` samples of `ns` nanoseconds, clamped to [kLowestNs, kHighestNs] as Redis clamps
  // them. Owner thread only. O(1).
  void Record(int64_t ns, uint64_t count);
  // Sets every counter to 0 (CONFIG RESETSTAT). A sample recorded concurrently may be lost.
  void Reset();
  uint64_t count_at(int index) const { return counts_[index].load(std::memory_order_relaxed); }

  // HdrHistogram's index arithmetic (bucket of 128 steps, step within it) for 2 digits and a
  // lowest value of 1.
  static int IndexOf(int64_t value);
  static int64_t ValueAtIndex(int index);
  static int64_t LowestEquivalentValue(int64_t value);
  static int64_t HighestEquivalentValue(int64_t value);

 private:
  std::array<std::atomic<uint64_t>, kCounters> counts_{};
};

class LatencyDistribution {
 public:
  void Add(const LatencyHistogram& histogram);
  uint64_t total() const { return total_; }
  // hdr_value_at_percentile: the highest value equivalent to the sample at `percentile` (0-100;
  // for 0, the lowest equivalent value). 0 when empty.
  int64_t ValueAtPercentile(double percentile) const;

 private:
  std::array<uint64_t, LatencyHistogram::kCounters> counts_{};
  uint64_t total_ = 0;
};

}  // namespace gigakv::server
