#include "server/latency_histogram.h"

#include <algorithm>
#include <bit>

namespace gigakv::server {
namespace {

// HdrHistogram for 2 significant digits: 2 * 10^2 = 200 values must be told apart within a
// power of two, so a bucket has 2^8 = 256 steps; its lower half repeats the previous bucket.
constexpr int kSubBucketHalfCountMagnitude = 7;
constexpr int64_t kSubBucketHalfCount = int64_t{1} << kSubBucketHalfCountMagnitude;  // 128
constexpr uint64_t kSubBucketMask = (uint64_t{1} << (kSubBucketHalfCountMagnitude + 1)) - 1;

int BucketIndex(int64_t value) {
  int pow2_ceiling = 64 - std::countl_zero(static_cast<uint64_t>(value) | kSubBucketMask);
  return pow2_ceiling - (kSubBucketHalfCountMagnitude + 1);
}

int64_t SubBucketIndex(int64_t value, int bucket) { return value >> bucket; }

}  // namespace

int LatencyHistogram::IndexOf(int64_t value) {
  int bucket = BucketIndex(value);
  int64_t sub_bucket = SubBucketIndex(value, bucket);
  return static_cast<int>(((static_cast<int64_t>(bucket) + 1) << kSubBucketHalfCountMagnitude) +
                          (sub_bucket - kSubBucketHalfCount));
}

int64_t LatencyHistogram::ValueAtIndex(int index) {
  int bucket = (index >> kSubBucketHalfCountMagnitude) - 1;
  int64_t sub_bucket = (index & (kSubBucketHalfCount - 1)) + kSubBucketHalfCount;
  if (bucket < 0) {
    sub_bucket -= kSubBucketHalfCount;
    bucket = 0;
  }
  return sub_bucket << bucket;
}

int64_t LatencyHistogram::LowestEquivalentValue(int64_t value) {
  int bucket = BucketIndex(value);
  return SubBucketIndex(value, bucket) << bucket;
}

int64_t LatencyHistogram::HighestEquivalentValue(int64_t value) {
  // The sub-bucket index is below 256 by construction, so the range is one step of the bucket.
  return LowestEquivalentValue(value) + (int64_t{1} << BucketIndex(value)) - 1;
}

void LatencyHistogram::Record(int64_t ns, uint64_t count) {
  std::atomic<uint64_t>& counter = counts_[IndexOf(std::clamp(ns, kLowestNs, kHighestNs))];
  counter.store(counter.load(std::memory_order_relaxed) + count, std::memory_order_relaxed);
}

void LatencyHistogram::Reset() {
  for (std::atomic<uint64_t>& counter : counts_) counter.store(0, std::memory_order_relaxed);
}

void LatencyDistribution::Add(const LatencyHistogram& histogram) {
  for (int i = 0; i < LatencyHistogram::kCounters; ++i) {
    uint64_t count = histogram.count_at(i);
    counts_[i] += count;
    total_ += count;
  }
}

int64_t LatencyDistribution::ValueAtPercentile(double percentile) const {
  double requested = std::min(percentile, 100.0);
  auto wanted = static_cast<int64_t>(requested / 100 * static_cast<double>(total_) + 0.5);
  wanted = std::max<int64_t>(wanted, 1);
  uint64_t seen = 0;
  int64_t value = 0;
  for (int i = 0; i < LatencyHistogram::kCounters; ++i) {
    seen += counts_[i];
    if (static_cast<int64_t>(seen) >= wanted) {
      value = LatencyHistogram::ValueAtIndex(i);
      break;
    }
  }
  if (value == 0) return 0;  // Empty (index 0 holds no samples: values are at least 1).
  return percentile == 0.0 ? LatencyHistogram::LowestEquivalentValue(value)
                           : LatencyHistogram::HighestEquivalentValue(value);
}

}  // namespace gigakv::server
