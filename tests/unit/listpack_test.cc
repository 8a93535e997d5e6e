#include "core/types/listpack.h"

#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"

namespace gigakv {
namespace {

// Reads the whole listpack forwards and checks that walking it backwards agrees.
template <typename L>
std::deque<std::string> Contents(const L& lp) {
  std::deque<std::string> forward;
  for (typename L::Pos pos = lp.First(); pos != L::kEnd; pos = lp.Next(pos)) {
    forward.push_back(lp.Get(pos).ToString());
  }
  std::deque<std::string> backward;
  for (typename L::Pos pos = lp.Last(); pos != L::kEnd; pos = lp.Prev(pos)) {
    backward.push_front(lp.Get(pos).ToString());
  }
  EXPECT_EQ(forward, backward);
  EXPECT_EQ(forward.size(), lp.size());
  return forward;
}

// Every test runs on both variants: with backlens (lists) and without (DenseListpack).
template <typename L>
class ListpackTest : public ::testing::Test {
 protected:
  // Bytes a backlen adds to an entry of `encoded` bytes in this variant.
  static size_t Backlen(size_t bytes) { return std::is_same_v<L, Listpack> ? bytes : 0; }
};
using ListpackTypes = ::testing::Types<Listpack, DenseListpack>;
TYPED_TEST_SUITE(ListpackTest, ListpackTypes);

TYPED_TEST(ListpackTest, EmptyHoldsNoBuffer) {
  TypeParam lp;
  EXPECT_EQ(lp.size(), 0u);
  EXPECT_EQ(lp.bytes(), 0u);
  EXPECT_EQ(lp.First(), TypeParam::kEnd);
  EXPECT_EQ(lp.Last(), TypeParam::kEnd);
  EXPECT_EQ(lp.Seek(0), TypeParam::kEnd);
  EXPECT_EQ(lp.Find("x", lp.First()), TypeParam::kEnd);
}

TYPED_TEST(ListpackTest, IntegersRoundTripAsTheirCanonicalText) {
  TypeParam lp;
  const std::vector<std::string> values = {"0",
                                           "127",
                                           "128",
                                           "-1",
                                           "32767",
                                           "-32768",
                                           "8388607",
                                           "-8388608",
                                           "2147483647",
                                           "-2147483648",
                                           "9223372036854775807",
                                           "-9223372036854775808",
                                           "-0",
                                           "007",
                                           "+5",
                                           "1 ",
                                           "",
                                           "9223372036854775808",
                                           "abc"};
  for (const auto& v : values) lp.Append(v);
  std::deque<std::string> expected(values.begin(), values.end());
  EXPECT_EQ(Contents(lp), expected);
  EXPECT_TRUE(lp.Get(lp.Seek(0)).is_int);
  EXPECT_FALSE(lp.Get(lp.Seek(12)).is_int);  // "-0" stays a string.
  EXPECT_FALSE(lp.Get(lp.Seek(13)).is_int);  // "007" too.
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(lp.Find(values[i], lp.First()), lp.Seek(static_cast<int64_t>(i))) << values[i];
    EXPECT_TRUE(lp.Get(lp.Seek(static_cast<int64_t>(i))).Equals(values[i]));
    EXPECT_EQ(lp.Get(lp.Seek(static_cast<int64_t>(i))).Length(), values[i].size());
  }
}

TYPED_TEST(ListpackTest, LongStringsUseWiderHeaders) {
  TypeParam lp;
  std::string s63(63, 'a'), s64(64, 'b'), s4095(4095, 'c'), s4096(4096, 'd'), big(100000, 'e');
  for (const auto* s : {&s63, &s64, &s4095, &s4096, &big}) lp.Append(*s);
  EXPECT_EQ(Contents(lp), (std::deque<std::string>{s63, s64, s4095, s4096, big}));
  EXPECT_EQ(lp.Find(s4096, lp.First()), lp.Seek(3));
  EXPECT_EQ(TypeParam::EntrySize(s63), 1 + 63 + TestFixture::Backlen(1));
  EXPECT_EQ(TypeParam::EntrySize(s64), 2 + 64 + TestFixture::Backlen(1));
  EXPECT_EQ(TypeParam::EntrySize(big), 5 + 100000 + TestFixture::Backlen(3));
}

TYPED_TEST(ListpackTest, FindWithSkipLooksOnlyAtFields) {
  TypeParam lp;
  for (const char* s : {"f1", "v", "v", "f2", "f3", "v3"}) lp.Append(s);
  EXPECT_EQ(lp.Find("v", lp.First(), 1), lp.Seek(2));
  EXPECT_EQ(lp.Find("f2", lp.First(), 1), TypeParam::kEnd);
  EXPECT_EQ(lp.Find("f3", lp.First(), 1), lp.Seek(4));
}

// Find compares short entries word by word: strings of every length up to 40 that differ from
// the one looked up in a single byte (first, middle or last) or only in length must never match,
// and the one equal string must be found, at any position. Checked against a linear model.
TYPED_TEST(ListpackTest, FindMatchesOnlyEqualStringsOfEveryShortLength) {
  std::mt19937_64 rng(20261205);
  for (size_t length = 0; length <= 40; ++length) {
    std::string wanted(length, 'a');
    for (char& c : wanted) c = static_cast<char>('a' + rng() % 3);
    std::vector<std::string> model;
    for (size_t at = 0; at < length; at += std::max<size_t>(1, length / 3)) {
      std::string near = wanted;
      near[at] = static_cast<char>(near[at] ^ 0x20);
      model.push_back(near);
    }
    if (length > 0) {
      model.push_back(wanted.substr(1));
      std::string last_differs = wanted;
      last_differs.back() = static_cast<char>(last_differs.back() + 1);
      model.push_back(last_differs);
    }
    model.push_back(wanted + "x");
    model.insert(model.begin() + static_cast<long>(rng() % (model.size() + 1)), wanted);
    TypeParam lp;
    for (const std::string& entry : model) lp.Insert(TypeParam::kEnd, entry);
    const auto found = lp.Find(wanted, lp.First());
    ASSERT_NE(found, TypeParam::kEnd) << length;
    EXPECT_EQ(lp.Get(found).ToString(), wanted) << length;
    size_t index = 0;
    for (auto pos = lp.First(); pos != found; pos = lp.Next(pos)) ++index;
    EXPECT_EQ(model[index], wanted) << length;
    EXPECT_EQ(std::count(model.begin(), model.end(), wanted), 1) << length;
  }
}

TEST(DenseListpackTest, EntriesFindPairReadsTheValueOfAKeyInPlace) {
  DenseListpack lp;
  // "v" is a value, then a key; "7" and "-3" are stored as integers.
  for (const char* s : {"f1", "v", "v", "f2", "7", "-3", "f3", "text"}) lp.Append(s);
  ListpackEntry value;
  ASSERT_TRUE(DenseListpack::EntriesFindPair(lp.entries(), "v", &value));
  EXPECT_EQ(value.ToString(), "f2");  // The pair at index 2, not the value at index 1.
  ASSERT_TRUE(DenseListpack::EntriesFindPair(lp.entries(), "7", &value));
  EXPECT_TRUE(value.is_int);
  EXPECT_EQ(value.int_value, -3);
  ASSERT_TRUE(DenseListpack::EntriesFindPair(lp.entries(), "f3", &value));
  EXPECT_EQ(value.ToString(), "text");
  EXPECT_FALSE(DenseListpack::EntriesFindPair(lp.entries(), "f2", &value));    // A value only.
  EXPECT_FALSE(DenseListpack::EntriesFindPair(lp.entries(), "text", &value));  // Likewise.
  EXPECT_FALSE(DenseListpack::EntriesFindPair(lp.entries(), "missing", &value));
  EXPECT_FALSE(DenseListpack::EntriesFindPair("", "f1", &value));
  EXPECT_EQ(DenseListpack::EntriesCount(lp.entries()), 8u);
  EXPECT_EQ(DenseListpack::EntriesCount(""), 0u);
  // A key without its value (not a pair listpack) is not found rather than read past the end.
  DenseListpack odd;
  odd.Append("k");
  EXPECT_FALSE(DenseListpack::EntriesFindPair(odd.entries(), "k", &value));
}

TYPED_TEST(ListpackTest, CloneIsDeep) {
  TypeParam lp;
  lp.Append("a");
  lp.Append("12");
  TypeParam copy = lp.Clone();
  lp.Erase(lp.First());
  EXPECT_EQ(Contents(copy), (std::deque<std::string>{"a", "12"}));
  EXPECT_EQ(Contents(lp), (std::deque<std::string>{"12"}));
}

// A seeded random sequence of operations against std::deque.
TYPED_TEST(ListpackTest, RandomOperationsMatchDequeModel) {
  std::mt19937_64 rng(42);
  auto random_value = [&]() -> std::string {
    switch (rng() % 4) {
      case 0:
        return std::to_string(static_cast<int64_t>(rng()) >> (rng() % 64));
      case 1:
        return std::string(rng() % 100, static_cast<char>('a' + rng() % 26));
      case 2:
        return std::string(rng() % 5000, 'x');
      default:
        return "k" + std::to_string(rng() % 50);
    }
  };
  TypeParam lp;
  std::deque<std::string> model;
  for (int step = 0; step < 20000; ++step) {
    auto n = static_cast<int64_t>(model.size());
    switch (rng() % 6) {
      case 0:
      case 1: {  // Insert anywhere.
        int64_t index = n == 0 ? 0 : static_cast<int64_t>(rng() % (n + 1));
        std::string v = random_value();
        typename TypeParam::Pos at = index == n ? TypeParam::kEnd : lp.Seek(index);
        typename TypeParam::Pos pos = lp.Insert(at, v);
        model.insert(model.begin() + index, v);
        ASSERT_EQ(lp.Get(pos).ToString(), v);
        break;
      }
      case 2: {  // Erase a run.
        if (n == 0) break;
        int64_t index = static_cast<int64_t>(rng() % n);
        size_t count = 1 + rng() % 3;
        lp.Erase(lp.Seek(index), count);
        model.erase(model.begin() + index,
                    model.begin() + std::min<int64_t>(n, index + static_cast<int64_t>(count)));
        break;
      }
      case 3: {  // Replace.
        if (n == 0) break;
        int64_t index = static_cast<int64_t>(rng() % n);
        std::string v = random_value();
        lp.Replace(lp.Seek(index), v);
        model[index] = v;
        break;
      }
      case 4: {  // Seek from either end.
        if (n == 0) break;
        int64_t index = static_cast<int64_t>(rng() % n);
        ASSERT_EQ(lp.Get(lp.Seek(index)).ToString(), model[index]);
        ASSERT_EQ(lp.Get(lp.Seek(index - n)).ToString(), model[index]);
        break;
      }
      default: {  // Find.
        std::string v = random_value();
        typename TypeParam::Pos pos = lp.Find(v, lp.First());
        auto it = std::find(model.begin(), model.end(), v);
        typename TypeParam::Pos expected =
            it == model.end() ? TypeParam::kEnd : lp.Seek(it - model.begin());
        ASSERT_EQ(pos, expected);
      }
    }
    if (model.size() > 300) {
      lp.Clear();
      model.clear();
    }
    if (step % 500 == 0) {
      ASSERT_EQ(Contents(lp), model);
    }
  }
  ASSERT_EQ(Contents(lp), model);
}

TYPED_TEST(ListpackTest, SplitAtAndAppendAllMoveEntries) {
  for (size_t at = 0; at <= 5; ++at) {
    TypeParam lp;
    std::deque<std::string> expected;
    for (int i = 0; i < 5; ++i) {
      std::string v = i % 2 ? std::string(70 + i, 'x') : std::to_string(i * 1000);
      lp.Append(v);
      expected.push_back(v);
    }
    TypeParam tail = lp.SplitAt(lp.Seek(static_cast<int64_t>(at)));
    std::deque<std::string> head_part(expected.begin(), expected.begin() + at);
    std::deque<std::string> tail_part(expected.begin() + at, expected.end());
    EXPECT_EQ(Contents(lp), head_part);
    EXPECT_EQ(Contents(tail), tail_part);
    lp.AppendAll(std::move(tail));
    EXPECT_TRUE(tail.empty());
    EXPECT_EQ(Contents(lp), expected);
  }
}

TEST(DenseListpackTest, EntriesHaveNoBacklenAndBuffersRoundTrip) {
  DenseListpack dense;
  Listpack plain;
  const std::string long_value(200, 'x');
  for (std::string_view value : {std::string_view("abc"), std::string_view("12"),
                                 std::string_view("-70000"), std::string_view(long_value)}) {
    dense.Append(value);
    plain.Append(value);
  }
  // Backlens: 1 byte for each of the three short entries, 2 for the 202-byte one.
  EXPECT_EQ(dense.bytes() + 5, plain.bytes());
  EXPECT_EQ(dense.entries().size(), dense.bytes() - 8);  // Without the header.
  DenseListpack copy = DenseListpack::FromEntries(dense.entries());
  EXPECT_EQ(copy.size(), 4u);
  EXPECT_EQ(copy.bytes(), dense.bytes());
  EXPECT_EQ(copy.entries(), dense.entries());
  EXPECT_EQ(Contents(copy), Contents(dense));
  EXPECT_EQ(copy.Get(copy.Last()).ToString(), std::string(200, 'x'));
  EXPECT_EQ(copy.Get(copy.Prev(copy.Last())).int_value, -70000);
  EXPECT_TRUE(DenseListpack::FromEntries("").empty());
  EXPECT_EQ(DenseListpack().entries(), "");
  // Listpacks with backlens rebuild the same way.
  Listpack from_plain = Listpack::FromEntries(plain.entries());
  EXPECT_EQ(Contents(from_plain), Contents(plain));
  EXPECT_EQ(from_plain.bytes(), plain.bytes());
}

}  // namespace
}  // namespace gigakv
