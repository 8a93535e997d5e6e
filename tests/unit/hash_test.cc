#include "core/types/hash.h"

#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gigakv {
namespace {

using ::testing::ElementsAreArray;
using ::testing::UnorderedElementsAreArray;

using Model = std::unordered_map<std::string, std::string>;

std::map<std::string, std::string> Contents(const Hash& hash) {
  std::map<std::string, std::string> pairs;
  hash.ForEach([&](std::string_view field, std::string_view value) {
    EXPECT_TRUE(pairs.emplace(field, value).second) << "field twice: " << field;
  });
  return pairs;
}

std::map<std::string, std::string> Sorted(const Model& model) {
  return std::map<std::string, std::string>(model.begin(), model.end());
}

CollectionLimits Limits(int64_t entries, int64_t value) {
  CollectionLimits limits;
  limits.hash_max_listpack_entries = entries;
  limits.hash_max_listpack_value = value;
  return limits;
}

// Fields and values drawn from a small space so that updates and deletes hit; some look like
// integers (the listpack stores those as integers), some are empty, some long.
std::string RandomText(std::mt19937_64& rng, int space) {
  int n = static_cast<int>(rng() % static_cast<uint64_t>(space));
  switch (rng() % 6) {
    case 0:
      return std::to_string(n);
    case 1:
      return std::to_string(-n * 1000003LL);
    case 2:
      return n % 7 == 0 ? "" : "0" + std::to_string(n);  // Leading zero: stays a string.
    case 3:
      return std::string(static_cast<size_t>(n % 90), static_cast<char>('a' + n % 26));
    default:
      return "f" + std::to_string(n);
  }
}

struct EncodingCase {
  const char* name;
  int64_t max_entries;
  int64_t max_value;
  int field_space;
};

class HashRandomTest : public ::testing::TestWithParam<EncodingCase> {};

TEST_P(HashRandomTest, MatchesModel) {
  const EncodingCase& param = GetParam();
  CollectionLimits limits = Limits(param.max_entries, param.max_value);
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    Hash hash;
    Model model;
    std::string scratch;
    bool was_table = false;
    for (int step = 0; step < 4000; ++step) {
      std::string field = RandomText(rng, param.field_space);
      switch (rng() % 8) {
        case 0:
        case 1:
        case 2: {
          std::string value = RandomText(rng, 1000);
          bool is_new = model.find(field) == model.end();
          EXPECT_EQ(hash.Set(field, value, limits), is_new);
          model[field] = value;
          break;
        }
        case 3: {
          std::string value = RandomText(rng, 1000);
          bool is_new = model.emplace(field, value).second;
          EXPECT_EQ(hash.SetIfAbsent(field, value, limits), is_new);
          break;
        }
        case 4:
        case 5:
          EXPECT_EQ(hash.Delete(field), model.erase(field) == 1);
          break;
        default: {
          auto it = model.find(field);
          auto value = hash.Get(field, &scratch);
          ASSERT_EQ(value.has_value(), it != model.end()) << field;
          EXPECT_EQ(hash.Contains(field), it != model.end());
          if (it != model.end()) {
            EXPECT_EQ(*value, it->second);
            EXPECT_EQ(hash.ValueLength(field), it->second.size());
          } else {
            EXPECT_EQ(hash.ValueLength(field), 0u);
          }
          // The in-place check of an inline record agrees while the hash is a listpack.
          if (hash.is_listpack()) {
            bool present = it != model.end();
            std::string current = present ? it->second : "v";
            ASSERT_EQ(Hash::CompactHasValue(hash.CompactBytes(), field, current), present) << field;
            ASSERT_FALSE(Hash::CompactHasValue(hash.CompactBytes(), field, current + "x"));
          }
          break;
        }
      }
      ASSERT_EQ(hash.Length(), model.size());
      // One way only: once converted, never back.
      if (was_table) {
        ASSERT_FALSE(hash.is_listpack());
      }
      was_table = !hash.is_listpack();
      if (hash.is_listpack()) {
        ASSERT_LE(static_cast<int64_t>(hash.Length()), param.max_entries);
        EXPECT_EQ(hash.encoding_name(), "listpack");
      } else {
        EXPECT_EQ(hash.encoding_name(), "hashtable");
      }
      if (step % 500 == 0) {
        ASSERT_EQ(Contents(hash), Sorted(model));
      }
    }
    ASSERT_EQ(Contents(hash), Sorted(model));
    std::unique_ptr<Object> copy(hash.Clone());
    EXPECT_EQ(copy->encoding_name(), hash.encoding_name());
    EXPECT_EQ(Contents(static_cast<Hash&>(*copy)), Sorted(model));
    std::vector<std::string> fields;
    hash.ForEachElement([&](std::string_view field) { fields.emplace_back(field); });
    std::vector<std::string> model_fields;
    for (const auto& [field, value] : model) model_fields.push_back(field);
    EXPECT_THAT(fields, UnorderedElementsAreArray(model_fields));
    // Deleting everything leaves an empty hash.
    for (const auto& [field, value] : model) ASSERT_TRUE(hash.Delete(field));
    EXPECT_EQ(hash.Length(), 0u);
    EXPECT_TRUE(Contents(hash).empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Encodings, HashRandomTest,
                         ::testing::Values(EncodingCase{"Listpack", 1 << 20, 1 << 20, 60},
                                           EncodingCase{"Hashtable", 0, 0, 3000},
                                           EncodingCase{"Converting", 40, 64, 120}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(HashTest, ConvertsPastTheEntryLimit) {
  CollectionLimits limits = Limits(4, 64);
  Hash hash;
  for (int i = 0; i < 4; ++i) hash.Set("f" + std::to_string(i), "v", limits);
  EXPECT_EQ(hash.encoding_name(), "listpack");
  hash.Set("f0", "updated", limits);  // Not a new field: no conversion.
  EXPECT_EQ(hash.encoding_name(), "listpack");
  hash.Set("f4", "v", limits);
  EXPECT_EQ(hash.encoding_name(), "hashtable");
  hash.Delete("f4");
  hash.Delete("f3");
  EXPECT_EQ(hash.encoding_name(), "hashtable");
  std::string scratch;
  EXPECT_EQ(hash.Get("f0", &scratch), "updated");
}

TEST(HashTest, ConvertsForALongFieldOrValue) {
  CollectionLimits limits = Limits(128, 8);
  Hash by_value;
  by_value.Set("f", std::string(8, 'v'), limits);
  EXPECT_EQ(by_value.encoding_name(), "listpack");
  by_value.Set("g", std::string(9, 'v'), limits);
  EXPECT_EQ(by_value.encoding_name(), "hashtable");
  Hash by_field;
  by_field.Set(std::string(9, 'f'), "v", limits);
  EXPECT_EQ(by_field.encoding_name(), "hashtable");
}

TEST(HashTest, IntegerLookingTextRoundTrips) {
  for (int64_t entries : {128, 0}) {
    CollectionLimits limits = Limits(entries, 64);
    Hash hash;
    std::vector<std::string> texts = {"0",
                                      "-0",
                                      "007",
                                      "127",
                                      "128",
                                      "-1",
                                      "+5",
                                      "1.5",
                                      " 1",
                                      "9223372036854775807",
                                      "-9223372036854775808",
                                      "9223372036854775808",
                                      ""};
    for (const std::string& text : texts) hash.Set(text, text, limits);
    std::string scratch;
    for (const std::string& text : texts) {
      EXPECT_EQ(hash.Get(text, &scratch), text) << text;
      EXPECT_EQ(hash.ValueLength(text), text.size()) << text;
    }
    EXPECT_EQ(hash.Length(), texts.size());
  }
}

TEST(HashTest, ListpackKeepsInsertionOrder) {
  CollectionLimits limits = Limits(128, 64);
  Hash hash;
  for (const char* field : {"c", "a", "b"}) hash.Set(field, "v", limits);
  hash.Set("a", "w", limits);
  std::vector<std::string> fields;
  hash.ForEachElement([&](std::string_view field) { fields.emplace_back(field); });
  EXPECT_THAT(fields, ElementsAreArray({"c", "a", "b"}));
}

// Scans to the end while the hash changes between calls: every pair present throughout must come
// back, and no field twice.
void CheckScanUnderChanges(const CollectionLimits& limits, int initial, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Hash hash;
  Model model;
  for (int i = 0; i < initial; ++i) {
    std::string field = "k" + std::to_string(i);
    hash.Set(field, "v", limits);
    model[field] = "v";
  }
  std::set<std::string> stable;  // Present since the start and never deleted.
  for (const auto& [field, value] : model) stable.insert(field);
  std::set<std::string> returned;
  uint64_t cursor = 0;
  int calls = 0;
  do {
    size_t count = 1 + rng() % 20;
    cursor = hash.Scan(cursor, count, [&](std::string_view field, std::string_view) {
      EXPECT_TRUE(returned.insert(std::string(field)).second) << "twice: " << field;
    });
    ++calls;
    // Grow or shrink a lot between calls, forcing resizes both ways.
    bool grow = (calls / 10) % 2 == 0;
    for (int i = 0; i < 40; ++i) {
      if (grow) {
        std::string field = "n" + std::to_string(rng() % 100000);
        hash.Set(field, "w", limits);
        model[field] = "w";
      } else if (!model.empty()) {
        auto it = model.begin();
        std::advance(it, static_cast<long>(rng() % model.size()));
        if (stable.count(it->first) && rng() % 4 != 0) continue;  // Keep most stable fields.
        stable.erase(it->first);
        hash.Delete(it->first);
        model.erase(it);
      }
    }
    ASSERT_LT(calls, 100000);
  } while (cursor != 0);
  for (const std::string& field : stable) EXPECT_TRUE(returned.count(field)) << field;
}

TEST(HashTest, ScanReturnsEveryStablePairAcrossResizes) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    CheckScanUnderChanges(Limits(0, 64), 1000, seed);
    CheckScanUnderChanges(Limits(0, 64), 10, seed);
  }
}

TEST(HashTest, ListpackScanReturnsEverythingAtOnce) {
  CollectionLimits limits = Limits(128, 64);
  Hash hash;
  for (int i = 0; i < 50; ++i) hash.Set("f" + std::to_string(i), std::to_string(i), limits);
  std::map<std::string, std::string> seen;
  EXPECT_EQ(hash.Scan(0, 5, [&](std::string_view f, std::string_view v) { seen.emplace(f, v); }),
            0u);
  EXPECT_EQ(seen, Contents(hash));
}

TEST(HashTest, ScanOfAnEmptyOrOutOfRangeCursorEnds) {
  Hash hash;
  int calls = 0;
  auto count_calls = [&](std::string_view, std::string_view) { ++calls; };
  EXPECT_EQ(hash.Scan(0, 10, count_calls), 0u);
  hash.Set("a", "1", Limits(0, 64));
  EXPECT_EQ(hash.Scan(uint64_t{1} << 40, 10, count_calls), 0u);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(hash.Scan(0, 10, count_calls), 0u);
  EXPECT_EQ(calls, 1);
}

class HashRandomPairsTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(HashRandomPairsTest, FollowsHrandfieldRules) {
  CollectionLimits limits = Limits(GetParam(), 64);
  std::mt19937_64 rng(42);
  for (int size : {1, 5, 30, 300}) {
    Hash hash;
    Model model;
    for (int i = 0; i < size; ++i) {
      std::string field = "f" + std::to_string(i);
      std::string value = std::to_string(i * 3);
      hash.Set(field, value, limits);
      model[field] = value;
    }
    for (uint64_t count : {0, 1, 2, 7, 99, 100, 299, 300, 301, 1000}) {
      for (bool distinct : {true, false}) {
        std::vector<std::string> fields;
        hash.RandomPairs(count, distinct, rng, [&](std::string_view f, std::string_view v) {
          auto it = model.find(std::string(f));
          ASSERT_NE(it, model.end()) << f;
          EXPECT_EQ(it->second, v);
          fields.emplace_back(f);
        });
        if (!distinct) {
          EXPECT_EQ(fields.size(), count);
          continue;
        }
        EXPECT_EQ(fields.size(), std::min<uint64_t>(count, model.size()));
        EXPECT_EQ(std::set<std::string>(fields.begin(), fields.end()).size(), fields.size());
      }
    }
    // Independent picks reach every field.
    std::set<std::string> reached;
    hash.RandomPairs(static_cast<uint64_t>(size) * 40, false, rng,
                     [&](std::string_view f, std::string_view) { reached.emplace(f); });
    EXPECT_EQ(reached.size(), model.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Encodings, HashRandomPairsTest, ::testing::Values(1 << 20, 0));

TEST(HashTest, MemoryUsageFollowsContents) {
  CollectionLimits small = Limits(128, 64);
  CollectionLimits large = Limits(0, 64);
  Hash listpack, table;
  size_t listpack_empty = listpack.MemoryUsage();
  for (int i = 0; i < 100; ++i) {
    listpack.Set("field" + std::to_string(i), "value" + std::to_string(i), small);
    table.Set("field" + std::to_string(i), "value" + std::to_string(i), large);
  }
  EXPECT_GT(listpack.MemoryUsage(), listpack_empty + 100 * 12);
  EXPECT_GT(table.MemoryUsage(), 100 * 32);
  size_t full = table.MemoryUsage();
  for (int i = 0; i < 95; ++i) table.Delete("field" + std::to_string(i));
  EXPECT_LT(table.MemoryUsage(), full / 4);  // Blobs freed and the slot array shrank.
}

}  // namespace
}  // namespace gigakv
