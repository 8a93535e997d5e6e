#include "core/types/intset.h"

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace gigakv {
namespace {

std::vector<int64_t> Contents(const Intset& ints) {
  std::vector<int64_t> values;
  for (size_t i = 0; i < ints.size(); ++i) values.push_back(ints.Get(i));
  return values;
}

TEST(IntsetTest, EmptyHoldsNoBuffer) {
  Intset ints;
  EXPECT_TRUE(ints.empty());
  EXPECT_EQ(ints.size(), 0u);
  EXPECT_EQ(ints.bytes(), 0u);
  EXPECT_FALSE(ints.Contains(0));
  EXPECT_FALSE(ints.Remove(0));
}

TEST(IntsetTest, WidthGrowsWithTheValues) {
  Intset ints;
  EXPECT_TRUE(ints.Add(5));
  EXPECT_EQ(ints.width(), 2u);
  EXPECT_TRUE(ints.Add(-32768));
  EXPECT_EQ(ints.width(), 2u);
  EXPECT_TRUE(ints.Add(32768));
  EXPECT_EQ(ints.width(), 4u);
  EXPECT_TRUE(ints.Add(INT64_MIN));
  EXPECT_EQ(ints.width(), 8u);
  EXPECT_EQ(ints.bytes(), 8u + 4 * 8);
  EXPECT_EQ(Contents(ints), (std::vector<int64_t>{INT64_MIN, -32768, 5, 32768}));
  // Removing the wide values keeps the width (it only grows), and lookups of values wider than
  // the width are answered without a search.
  EXPECT_TRUE(ints.Remove(INT64_MIN));
  EXPECT_EQ(ints.width(), 8u);
  EXPECT_FALSE(ints.Add(5));
  EXPECT_TRUE(ints.Contains(32768));
  Intset narrow;
  narrow.Add(1);
  EXPECT_FALSE(narrow.Contains(INT64_MAX));
  EXPECT_FALSE(narrow.Remove(1LL << 40));
}

TEST(IntsetTest, UpgradePutsANegativeValueFirstAndAPositiveOneLast) {
  Intset ints;
  for (int64_t v : {3, 1, 2}) ints.Add(v);
  ints.Add(-(1LL << 33));
  EXPECT_EQ(Contents(ints), (std::vector<int64_t>{-(1LL << 33), 1, 2, 3}));
  Intset other;
  for (int64_t v : {3, 1, 2}) other.Add(v);
  other.Add(1LL << 33);
  EXPECT_EQ(Contents(other), (std::vector<int64_t>{1, 2, 3, 1LL << 33}));
}

TEST(IntsetTest, CloneIsDeep) {
  Intset ints;
  for (int64_t v = 0; v < 100; ++v) ints.Add(v * 1000);
  Intset copy = ints.Clone();
  ints.Remove(0);
  EXPECT_EQ(copy.size(), 100u);
  EXPECT_TRUE(copy.Contains(0));
  EXPECT_EQ(ints.size(), 99u);
}

TEST(IntsetTest, RemovingTheLastValueFreesTheBuffer) {
  Intset ints;
  ints.Add(7);
  ints.RemoveAt(0);
  EXPECT_TRUE(ints.empty());
  EXPECT_EQ(ints.bytes(), 0u);
}

// Seeded random operations against std::set, with values drawn from all three widths.
TEST(IntsetTest, RandomOperationsMatchStdSet) {
  for (uint64_t seed : {1u, 2u, 3u, 42u}) {
    std::mt19937_64 rng(seed);
    Intset ints;
    std::set<int64_t> model;
    auto draw = [&]() -> int64_t {
      switch (rng() % 4) {
        case 0:
          return static_cast<int64_t>(rng() % 200) - 100;
        case 1:
          return static_cast<int16_t>(rng());
        case 2:
          return static_cast<int32_t>(rng());
        default:
          return static_cast<int64_t>(rng() % 3 == 0 ? rng() : rng() % 1000000);
      }
    };
    for (int step = 0; step < 20000; ++step) {
      int64_t value = draw();
      ASSERT_EQ(Intset::RawContains(ints.raw(), value), model.count(value) == 1) << value;
      switch (rng() % 5) {
        case 0:
        case 1:
          ASSERT_EQ(ints.Add(value), model.insert(value).second) << value;
          break;
        case 2:
          ASSERT_EQ(ints.Remove(value), model.erase(value) == 1) << value;
          ASSERT_FALSE(Intset::RawContains(ints.raw(), value)) << value;
          break;
        case 3:
          if (!model.empty()) {
            size_t index = rng() % model.size();
            auto it = std::next(model.begin(), static_cast<long>(index));
            ASSERT_EQ(ints.Get(index), *it);
            ints.RemoveAt(index);
            model.erase(it);
          }
          break;
        default:
          ASSERT_EQ(ints.Contains(value), model.count(value) == 1) << value;
          break;
      }
      ASSERT_EQ(ints.size(), model.size());
      if (step % 1000 == 0) {
        ASSERT_EQ(Contents(ints), std::vector<int64_t>(model.begin(), model.end()));
        size_t width = 2;
        for (int64_t v : model) width = std::max(width, Intset::WidthFor(v));
        ASSERT_GE(ints.width(), width);
      }
    }
    EXPECT_EQ(Contents(ints), std::vector<int64_t>(model.begin(), model.end()));
  }
}

}  // namespace
}  // namespace gigakv
