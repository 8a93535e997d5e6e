#include "server/latency_histogram.h"

#include <random>

#include "gtest/gtest.h"

namespace gigakv::server {
namespace {

// The bucket arithmetic of HdrHistogram with lowest value 1 and 2 significant digits, the
// histogram Redis 7.0 keeps per command: exact below 256, then 128 steps per power of two.
TEST(LatencyHistogramTest, BucketsAreHdrHistogramsForTwoDigits) {
  for (int64_t value : {1, 2, 127, 128, 255}) {
    EXPECT_EQ(LatencyHistogram::IndexOf(value), value);
    EXPECT_EQ(LatencyHistogram::LowestEquivalentValue(value), value);
    EXPECT_EQ(LatencyHistogram::HighestEquivalentValue(value), value);
  }
  // 256..511 step 2, 512..1023 step 4, 1024..2047 step 8.
  EXPECT_EQ(LatencyHistogram::IndexOf(256), 256);
  EXPECT_EQ(LatencyHistogram::IndexOf(257), 256);
  EXPECT_EQ(LatencyHistogram::IndexOf(258), 257);
  EXPECT_EQ(LatencyHistogram::IndexOf(512), 384);
  EXPECT_EQ(LatencyHistogram::HighestEquivalentValue(256), 257);
  // Redis's familiar readings: 1 µs reads 1.003, 2 µs 2.007, 4 µs 4.015.
  EXPECT_EQ(LatencyHistogram::HighestEquivalentValue(1000), 1003);
  EXPECT_EQ(LatencyHistogram::HighestEquivalentValue(2000), 2007);
  EXPECT_EQ(LatencyHistogram::HighestEquivalentValue(4000), 4015);
  EXPECT_EQ(LatencyHistogram::LowestEquivalentValue(2007), 2000);
  // The top of the range, 1 s, lands in the last bucket.
  int top = LatencyHistogram::IndexOf(LatencyHistogram::kHighestNs);
  EXPECT_LT(top, LatencyHistogram::kCounters);
  EXPECT_GE(top, LatencyHistogram::kCounters - 128);
}

TEST(LatencyHistogramTest, IndexAndValueRoundTripEverywhere) {
  std::mt19937_64 random(7);
  for (int i = 0; i < 100000; ++i) {
    int64_t value = static_cast<int64_t>(random() % LatencyHistogram::kHighestNs) + 1;
    int index = LatencyHistogram::IndexOf(value);
    ASSERT_GE(index, 0);
    ASSERT_LT(index, LatencyHistogram::kCounters);
    int64_t lowest = LatencyHistogram::ValueAtIndex(index);
    ASSERT_EQ(lowest, LatencyHistogram::LowestEquivalentValue(value));
    ASSERT_LE(lowest, value);
    ASSERT_GE(LatencyHistogram::HighestEquivalentValue(value), value);
    // Two significant digits: the bucket is within 1% of the value.
    ASSERT_LE(LatencyHistogram::HighestEquivalentValue(value) - lowest, value / 100 + 1);
  }
}

TEST(LatencyHistogramTest, PercentilesOfRecordedSamples) {
  LatencyHistogram histogram;
  histogram.Record(1000, 98);  // 98 samples of 1 µs
  histogram.Record(5000, 1);
  histogram.Record(2'000'000'000, 1);  // clamped to 1 s
  LatencyDistribution distribution;
  distribution.Add(histogram);
  EXPECT_EQ(distribution.total(), 100u);
  EXPECT_EQ(distribution.ValueAtPercentile(50), 1003);
  EXPECT_EQ(distribution.ValueAtPercentile(98), 1003);
  EXPECT_EQ(distribution.ValueAtPercentile(99), 5023);
  EXPECT_EQ(distribution.ValueAtPercentile(100),
            LatencyHistogram::HighestEquivalentValue(LatencyHistogram::kHighestNs));
  EXPECT_EQ(distribution.ValueAtPercentile(0), 1000);  // the lowest equivalent value
  EXPECT_EQ(distribution.ValueAtPercentile(250),
            distribution.ValueAtPercentile(100));  // capped at 100

  // Values below 1 ns count as 1 ns, as Redis records them.
  LatencyHistogram zero;
  zero.Record(0, 3);
  LatencyDistribution zeros;
  zeros.Add(zero);
  EXPECT_EQ(zeros.ValueAtPercentile(50), 1);
}

TEST(LatencyHistogramTest, DistributionsMergeThreadsAndResetEmpties) {
  LatencyHistogram a, b;
  a.Record(100, 1);
  b.Record(300, 3);
  LatencyDistribution merged;
  merged.Add(a);
  merged.Add(b);
  EXPECT_EQ(merged.total(), 4u);
  EXPECT_EQ(merged.ValueAtPercentile(25), 100);
  EXPECT_EQ(merged.ValueAtPercentile(50), 301);
  b.Reset();
  LatencyDistribution after;
  after.Add(a);
  after.Add(b);
  EXPECT_EQ(after.total(), 1u);
  EXPECT_EQ(LatencyDistribution().ValueAtPercentile(50), 0);
}

}  // namespace
}  // namespace gigakv::server
