#include "core/types/set.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "gtest/gtest.h"

namespace gigakv {
namespace {

std::multiset<std::string> Members(const Set& set) {
  std::multiset<std::string> members;
  set.ForEach([&](std::string_view member) { members.emplace(member); });
  return members;
}

std::multiset<std::string> Sorted(const std::unordered_set<std::string>& model) {
  return std::multiset<std::string>(model.begin(), model.end());
}

CollectionLimits Limits(int64_t intset_entries, int64_t listpack_entries,
                        int64_t listpack_value = 64) {
  CollectionLimits limits;
  limits.set_max_intset_entries = intset_entries;
  limits.set_max_listpack_entries = listpack_entries;
  limits.set_max_listpack_value = listpack_value;
  return limits;
}

TEST(ParseCanonicalInt64Test, AcceptsOnlyCanonicalText) {
  int64_t v;
  for (const char* good : {"0", "-1", "123", "9223372036854775807", "-9223372036854775808"}) {
    EXPECT_TRUE(ParseCanonicalInt64(good, &v)) << good;
    EXPECT_EQ(std::to_string(v), good);
  }
  for (const char* bad : {"", "-", "-0", "01", "+1", " 1", "1 ", "1.0", "9223372036854775808",
                          "-9223372036854775809", "abc", "0x10"}) {
    EXPECT_FALSE(ParseCanonicalInt64(bad, &v)) << bad;
  }
}

TEST(SetTest, CreateChoosesTheEncodingLikeRedis72) {
  CollectionLimits limits = Limits(4, 3);
  EXPECT_EQ(Set::Create("1", 4, limits)->encoding_name(), "intset");
  EXPECT_EQ(Set::Create("1", 5, limits)->encoding_name(), "hashtable");
  EXPECT_EQ(Set::Create("a", 3, limits)->encoding_name(), "listpack");
  EXPECT_EQ(Set::Create("a", 4, limits)->encoding_name(), "hashtable");
  EXPECT_EQ(Set::Create("1", 2, Limits(0, 3))->encoding_name(), "listpack");
}

TEST(SetTest, IntsetOutgrowingItsLimitBecomesAHashtable) {
  CollectionLimits limits = Limits(3, 10);
  Set set;
  for (const char* m : {"1", "2", "3"}) EXPECT_TRUE(set.Add(m, limits));
  EXPECT_EQ(set.encoding_name(), "intset");
  EXPECT_FALSE(set.Add("3", limits));
  EXPECT_TRUE(set.Add("4", limits));
  EXPECT_EQ(set.encoding_name(), "hashtable");
  EXPECT_EQ(Members(set), (std::multiset<std::string>{"1", "2", "3", "4"}));
}

TEST(SetTest, IntsetGettingAStringBecomesAListpackWhenItFits) {
  CollectionLimits limits = Limits(10, 3, 5);
  Set set;
  set.Add("1", limits);
  set.Add("22", limits);
  EXPECT_TRUE(set.Add("abc", limits));
  EXPECT_EQ(set.encoding_name(), "listpack");
  EXPECT_EQ(Members(set), (std::multiset<std::string>{"1", "22", "abc"}));
  EXPECT_TRUE(set.Contains("22"));  // Integers stored in the listpack still match their text.
  // Full listpack: the next member converts.
  EXPECT_TRUE(set.Add("d", limits));
  EXPECT_EQ(set.encoding_name(), "hashtable");

  // Too many integers for the listpack: straight to a hashtable.
  Set many;
  for (const char* m : {"1", "2", "3"}) many.Add(m, limits);
  EXPECT_TRUE(many.Add("x", limits));
  EXPECT_EQ(many.encoding_name(), "hashtable");

  // An integer longer than set-max-listpack-value: hashtable too.
  Set wide;
  wide.Add("123456", limits);
  EXPECT_TRUE(wide.Add("x", limits));
  EXPECT_EQ(wide.encoding_name(), "hashtable");

  // A member longer than the value limit.
  Set longer;
  longer.Add("1", limits);
  EXPECT_TRUE(longer.Add("abcdef", limits));
  EXPECT_EQ(longer.encoding_name(), "hashtable");
}

TEST(SetTest, ListpackConvertsOnALongMember) {
  CollectionLimits limits = Limits(10, 10, 5);
  auto set = Set::Create("a", 1, limits);
  set->Add("a", limits);
  EXPECT_EQ(set->encoding_name(), "listpack");
  set->Add("abcdef", limits);
  EXPECT_EQ(set->encoding_name(), "hashtable");
  EXPECT_EQ(Members(*set), (std::multiset<std::string>{"a", "abcdef"}));
}

TEST(SetTest, ConversionsGoOneWay) {
  CollectionLimits limits = Limits(2, 2);
  Set set;
  for (const char* m : {"1", "2", "3"}) set.Add(m, limits);
  ASSERT_EQ(set.encoding_name(), "hashtable");
  set.Remove("1");
  set.Remove("2");
  EXPECT_EQ(set.encoding_name(), "hashtable");
  EXPECT_EQ(set.Length(), 1u);
}

// The three encodings, each forced by the limits and the member kinds.
struct EncodingCase {
  const char* name;
  CollectionLimits limits;
  bool integers;
  size_t universe;
};

class SetEncodingTest : public ::testing::TestWithParam<EncodingCase> {
 protected:
  std::string Draw(std::mt19937_64& rng) const {
    const EncodingCase& c = GetParam();
    size_t n = rng() % c.universe;
    if (c.integers) return std::to_string(static_cast<int64_t>(n) * 7919 - 50000);
    switch (n % 4) {
      case 0:
        return "m" + std::to_string(n);
      case 1:
        return std::to_string(n);  // Integers among strings.
      case 2:
        return std::string(n % 300, static_cast<char>('a' + n % 26)) + std::to_string(n);
      default:
        return std::string("\0bin", 4) + std::to_string(n);
    }
  }
};

TEST_P(SetEncodingTest, RandomOperationsMatchStdUnorderedSet) {
  const EncodingCase& c = GetParam();
  for (uint64_t seed : {7u, 8u, 9u}) {
    std::mt19937_64 rng(seed);
    Set set;
    std::unordered_set<std::string> model;
    for (int step = 0; step < 6000; ++step) {
      std::string member = Draw(rng);
      switch (rng() % 6) {
        case 0:
        case 1:
        case 2:
          ASSERT_EQ(set.Add(member, c.limits), model.insert(member).second);
          break;
        case 3:
          ASSERT_EQ(set.Remove(member), model.erase(member) == 1);
          break;
        case 4:
          ASSERT_EQ(set.Contains(member), model.count(member) == 1);
          // The in-place check of an inline record agrees while the set is compact.
          if (set.encoding() != Set::Encoding::kHashtable && !set.empty()) {
            ASSERT_EQ(Set::CompactContains(set.encoding(), set.CompactBytes(), member),
                      model.count(member) == 1)
                << member;
          }
          break;
        default:
          if (!model.empty() && rng() % 8 == 0) {
            size_t count = rng() % model.size();
            std::vector<std::string> popped;
            set.PopRandom(count, rng, [&](std::string_view m) { popped.emplace_back(m); });
            ASSERT_EQ(popped.size(), count);
            for (const std::string& m : popped) ASSERT_EQ(model.erase(m), 1u) << "popped " << m;
          }
          break;
      }
      ASSERT_EQ(set.Length(), model.size());
      if (step % 500 == 0) {
        ASSERT_EQ(Members(set), Sorted(model));
      }
    }
    EXPECT_EQ(Members(set), Sorted(model));
    EXPECT_STREQ(std::string(set.encoding_name()).c_str(), c.name);
    std::unique_ptr<Object> copy(set.Clone());
    set.Add("after-clone", c.limits);
    EXPECT_EQ(Members(static_cast<const Set&>(*copy)), Sorted(model));
    EXPECT_EQ(copy->encoding_name(), c.name);
    EXPECT_GT(set.MemoryUsage(), sizeof(Set));
  }
}

TEST_P(SetEncodingTest, RandomMembersFollowSrandmemberRules) {
  const EncodingCase& c = GetParam();
  std::mt19937_64 rng(11);
  Set set;
  std::unordered_set<std::string> model;
  while (model.size() < std::min<size_t>(c.universe / 2, 400)) {
    std::string member = Draw(rng);
    set.Add(member, c.limits);
    model.insert(member);
  }
  ASSERT_EQ(std::string(set.encoding_name()), c.name);
  size_t size = model.size();
  for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{2}, static_cast<int64_t>(size / 3),
                        static_cast<int64_t>(size / 2), static_cast<int64_t>(size - 1),
                        static_cast<int64_t>(size), static_cast<int64_t>(size + 5), int64_t{-1},
                        int64_t{-5}, -static_cast<int64_t>(size * 2)}) {
    std::vector<std::string> got;
    set.RandomMembers(count, rng, [&](std::string_view m) { got.emplace_back(m); });
    ASSERT_EQ(got.size(), set.RandomCount(count)) << count;
    size_t expected = count < 0 ? static_cast<size_t>(-count) : std::min<size_t>(count, size);
    ASSERT_EQ(got.size(), expected) << count;
    for (const std::string& m : got) ASSERT_EQ(model.count(m), 1u) << m;
    if (count >= 0) {
      std::set<std::string> distinct(got.begin(), got.end());
      EXPECT_EQ(distinct.size(), got.size()) << "repeats with count " << count;
    }
  }
  // Negative counts allow repeats: with twice as many picks as members, some must repeat.
  std::vector<std::string> many;
  set.RandomMembers(-static_cast<int64_t>(size * 2), rng,
                    [&](std::string_view m) { many.emplace_back(m); });
  EXPECT_LT(std::set<std::string>(many.begin(), many.end()).size(), many.size());
  // Every member can come out.
  std::set<std::string> seen;
  for (int i = 0; i < 200 && seen.size() < size; ++i) {
    set.RandomMembers(-static_cast<int64_t>(size), rng,
                      [&](std::string_view m) { seen.emplace(m); });
  }
  EXPECT_EQ(seen.size(), size);
  EXPECT_EQ(model.count(set.RandomMember(rng)), 1u);
}

TEST_P(SetEncodingTest, FullScanReturnsEveryMemberPresentThroughout) {
  const EncodingCase& c = GetParam();
  std::mt19937_64 rng(21);
  Set set;
  std::unordered_set<std::string> stable;  // Present for the whole iteration.
  std::vector<std::string> churn;
  while (stable.size() < std::min<size_t>(c.universe / 2, 400)) {
    std::string member = Draw(rng);
    if (set.Add(member, c.limits)) stable.insert(member);
  }
  std::string encoding(set.encoding_name());
  ASSERT_EQ(encoding, c.name);
  std::multiset<std::string> returned;
  uint64_t cursor = 0;
  int calls = 0;
  do {
    cursor = set.Scan(cursor, 1 + rng() % 20, [&](std::string_view m) { returned.emplace(m); });
    // Churn between calls: add and remove members that are not in `stable` (the table grows and
    // shrinks under the cursor).
    for (int i = 0; i < 30; ++i) {
      std::string extra = "churn" + std::to_string(rng() % 2000);
      if (set.Add(extra, c.limits)) churn.push_back(extra);
    }
    while (churn.size() > 10) {
      set.Remove(churn.back());
      churn.pop_back();
    }
    ASSERT_LT(++calls, 100000);
  } while (cursor != 0);
  for (const std::string& m : stable) EXPECT_EQ(returned.count(m), 1u) << m;
}

INSTANTIATE_TEST_SUITE_P(Encodings, SetEncodingTest,
                         ::testing::Values(EncodingCase{"intset", Limits(100000, 128), true, 600},
                                           EncodingCase{"listpack", Limits(512, 100000, 400), false,
                                                        300},
                                           EncodingCase{"hashtable", Limits(4, 4), false, 3000}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(SetHashTableTest, ScanCoversEveryMemberAcrossResizes) {
  SetHashTable table;
  for (int i = 0; i < 5000; ++i) table.Insert("k" + std::to_string(i));
  std::set<std::string> returned;
  uint64_t cursor = 0;
  int round = 0;
  do {
    cursor = table.Scan(cursor, 50, [&](std::string_view m) { returned.emplace(m); });
    // Shrink hard in the middle of the iteration: members k0..k4999 not yet erased must still
    // come back; erase only "x" members added on the side.
    if (++round == 10) {
      for (int i = 0; i < 20000; ++i) table.Insert("x" + std::to_string(i));
    }
    if (round == 20) {
      for (int i = 0; i < 20000; ++i) table.Erase("x" + std::to_string(i));
    }
  } while (cursor != SetHashTable::kScanEnd);
  for (int i = 0; i < 5000; ++i) EXPECT_EQ(returned.count("k" + std::to_string(i)), 1u) << i;
}

TEST(SetHashTableTest, ArenaIsCompactedAfterManyErases) {
  SetHashTable table;
  for (int i = 0; i < 10000; ++i) table.Insert(std::string(50, 'v') + std::to_string(i));
  size_t full = table.MemoryUsage();
  for (int i = 0; i < 9900; ++i) table.Erase(std::string(50, 'v') + std::to_string(i));
  EXPECT_LT(table.MemoryUsage(), full / 10);
  for (int i = 9900; i < 10000; ++i) {
    EXPECT_TRUE(table.Contains(std::string(50, 'v') + std::to_string(i)));
  }
  EXPECT_EQ(table.size(), 100u);
}

TEST(SetHashTableTest, EmptyAndLongMembers) {
  SetHashTable table;
  std::string long_member(100000, 'z');
  EXPECT_TRUE(table.Insert(""));
  EXPECT_TRUE(table.Insert(long_member));
  EXPECT_FALSE(table.Insert(""));
  EXPECT_TRUE(table.Contains(long_member));
  EXPECT_FALSE(table.Contains(std::string(99999, 'z')));
  EXPECT_TRUE(table.Erase(long_member));
  EXPECT_TRUE(table.Erase(""));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.MemoryUsage(), 0u);
}

}  // namespace
}  // namespace gigakv
