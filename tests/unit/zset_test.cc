#include "core/types/zset.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gigakv {
namespace {

// The reference model: (score, member) in order, plus member -> score.
struct Model {
  std::set<std::pair<double, std::string>> ordered;
  std::map<std::string, double> scores;

  std::vector<std::pair<double, std::string>> Vector() const {
    return {ordered.begin(), ordered.end()};
  }
  void Erase(const std::string& member) {
    auto it = scores.find(member);
    ordered.erase({it->second, member});
    scores.erase(it);
  }
};

std::vector<std::pair<double, std::string>> Contents(const ZSet& zset) {
  std::vector<std::pair<double, std::string>> out;
  zset.Visit(0, zset.size(), false, [&](std::string_view member, double score) {
    out.emplace_back(score, std::string(member));
  });
  std::vector<std::pair<double, std::string>> backwards;
  zset.Visit(0, zset.size(), true, [&](std::string_view member, double score) {
    backwards.emplace_back(score, std::string(member));
  });
  std::reverse(backwards.begin(), backwards.end());
  EXPECT_EQ(out, backwards);
  return out;
}

CollectionLimits Limits(int64_t entries, int64_t value = 64) {
  CollectionLimits limits;
  limits.zset_max_listpack_entries = entries;
  limits.zset_max_listpack_value = value;
  return limits;
}

TEST(ZSetTest, EmptyIsListpack) {
  ZSet zset;
  EXPECT_EQ(zset.size(), 0u);
  EXPECT_EQ(zset.encoding_name(), "listpack");
  EXPECT_FALSE(zset.Score("x").has_value());
  EXPECT_FALSE(zset.Rank("x", false).has_value());
  EXPECT_FALSE(zset.Remove("x"));
}

TEST(ZSetTest, OrdersByScoreThenMember) {
  for (int64_t entries : {128, 0}) {
    ZSet zset;
    double out;
    CollectionLimits limits = Limits(entries);
    EXPECT_EQ(zset.Add("b", 1, {}, limits, &out), ZAddOutcome::kAdded);
    EXPECT_EQ(zset.Add("a", 1, {}, limits, &out), ZAddOutcome::kAdded);
    EXPECT_EQ(zset.Add("c", 0.5, {}, limits, &out), ZAddOutcome::kAdded);
    EXPECT_EQ(zset.Add("10", -2, {}, limits, &out), ZAddOutcome::kAdded);
    EXPECT_EQ(zset.encoding_name(), entries == 0 ? "skiplist" : "listpack");
    std::vector<std::pair<double, std::string>> expected = {
        {-2, "10"}, {0.5, "c"}, {1, "a"}, {1, "b"}};
    EXPECT_EQ(Contents(zset), expected);
    EXPECT_EQ(zset.Rank("a", false), 2u);
    EXPECT_EQ(zset.Rank("a", true), 1u);
    EXPECT_EQ(zset.Score("10"), -2.0);
  }
}

TEST(ZSetTest, AddFlags) {
  for (int64_t entries : {128, 0}) {
    ZSet zset;
    double out = 0;
    CollectionLimits limits = Limits(entries);
    ZAddFlags nx{.nx = true};
    ZAddFlags xx{.xx = true};
    ZAddFlags gt{.gt = true};
    ZAddFlags lt{.lt = true};
    ZAddFlags incr{.incr = true};
    EXPECT_EQ(zset.Add("m", 5, xx, limits, &out), ZAddOutcome::kSkipped);
    EXPECT_EQ(zset.Add("m", 5, nx, limits, &out), ZAddOutcome::kAdded);
    EXPECT_EQ(zset.Add("m", 6, nx, limits, &out), ZAddOutcome::kSkipped);
    EXPECT_EQ(zset.Add("m", 4, gt, limits, &out), ZAddOutcome::kSkipped);
    EXPECT_EQ(zset.Add("m", 7, gt, limits, &out), ZAddOutcome::kUpdated);
    EXPECT_EQ(out, 7);
    EXPECT_EQ(zset.Add("m", 8, lt, limits, &out), ZAddOutcome::kSkipped);
    EXPECT_EQ(zset.Add("m", 7, {}, limits, &out), ZAddOutcome::kUnchanged);
    EXPECT_EQ(zset.Add("m", 2.5, incr, limits, &out), ZAddOutcome::kUpdated);
    EXPECT_EQ(out, 9.5);
    EXPECT_EQ(zset.Add("m", INFINITY, incr, limits, &out), ZAddOutcome::kUpdated);
    EXPECT_EQ(zset.Add("m", -INFINITY, incr, limits, &out), ZAddOutcome::kNan);
    EXPECT_EQ(zset.Score("m"), INFINITY);
    EXPECT_EQ(zset.Add("n", 3, incr, limits, &out), ZAddOutcome::kAdded);
    EXPECT_EQ(out, 3);
  }
}

TEST(ZSetTest, ScoresRoundTripInListpack) {
  ZSet zset;
  double out;
  const std::vector<double> scores = {
      0, -0.0, 1.1, 0.1, 1e300, -1e-300, INFINITY, -INFINITY, 9007199254740992.0, -42, 127, 3.5e15};
  for (size_t i = 0; i < scores.size(); ++i) {
    zset.Add("m" + std::to_string(i), scores[i], {}, Limits(128), &out);
  }
  ASSERT_EQ(zset.encoding_name(), "listpack");
  for (size_t i = 0; i < scores.size(); ++i) {
    EXPECT_EQ(zset.Score("m" + std::to_string(i)), scores[i]) << i;
  }
  // Redis's listpack stores -0 as the integer 0.
  EXPECT_FALSE(std::signbit(*zset.Score("m1")));
}

TEST(ZSetTest, ConvertsAtTheThresholds) {
  ZSet zset;
  double out;
  CollectionLimits limits = Limits(3, 5);
  zset.Add("a", 1, {}, limits, &out);
  zset.Add("b", 2, {}, limits, &out);
  zset.Add("c", 3, {}, limits, &out);
  EXPECT_EQ(zset.encoding_name(), "listpack");
  zset.Add("d", 4, {}, limits, &out);
  EXPECT_EQ(zset.encoding_name(), "skiplist");

  ZSet by_value;
  by_value.Add("12345", 1, {}, limits, &out);
  EXPECT_EQ(by_value.encoding_name(), "listpack");
  by_value.Add("123456", 1, {}, limits, &out);
  EXPECT_EQ(by_value.encoding_name(), "skiplist");
  // One way: shrinking keeps the skiplist.
  by_value.Remove("123456");
  by_value.Remove("12345");
  EXPECT_EQ(by_value.encoding_name(), "skiplist");
}

TEST(ZSetTest, LexAndScoreSpans) {
  for (int64_t entries : {128, 0}) {
    ZSet zset;
    double out;
    for (char c = 'a'; c <= 'g'; ++c) zset.Add(std::string(1, c), 0, {}, Limits(entries), &out);
    ZLexRange lex;
    lex.min_kind = ZLexRange::Kind::kInclusive;
    lex.min = "b";
    lex.max_kind = ZLexRange::Kind::kExclusive;
    lex.max = "e";
    EXPECT_EQ(zset.LexSpan(lex), (std::pair<size_t, size_t>(1, 4)));
    lex.min_kind = ZLexRange::Kind::kPosInf;
    EXPECT_EQ(zset.LexSpan(lex).first, zset.LexSpan(lex).second);
    ZScoreRange all{-INFINITY, INFINITY, false, false};
    EXPECT_EQ(zset.ScoreSpan(all), (std::pair<size_t, size_t>(0, 7)));
    ZScoreRange none{0, 0, true, false};
    EXPECT_EQ(zset.ScoreSpan(none).first, zset.ScoreSpan(none).second);
  }
}

// Seeded random operations against the model, at both encodings and across the conversion.
void RandomOps(uint32_t seed, int64_t max_entries, int members, int ops) {
  std::mt19937 rng(seed);
  ZSet zset;
  Model model;
  CollectionLimits limits = Limits(max_entries);
  auto random_score = [&]() -> double {
    switch (rng() % 6) {
      case 0:
        return static_cast<double>(static_cast<int>(rng() % 21) - 10);
      case 1:
        return (static_cast<int>(rng() % 2001) - 1000) / 8.0;
      case 2:
        return std::ldexp(1.0, static_cast<int>(rng() % 200) - 100);
      case 3:
        return rng() % 2 ? INFINITY : -INFINITY;
      case 4:
        return 1e300 * (rng() % 3);
      default:
        return static_cast<double>(rng() % 5);
    }
  };
  auto random_member = [&]() {
    int n = static_cast<int>(rng() % members);
    return n % 3 == 0 ? std::to_string(n) : "member:" + std::to_string(n);
  };
  for (int op = 0; op < ops; ++op) {
    switch (rng() % 10) {
      case 0:
      case 1:
      case 2:
      case 3: {  // Add with random flags.
        std::string member = random_member();
        double score = random_score();
        ZAddFlags flags;
        int f = static_cast<int>(rng() % 6);
        flags.nx = f == 1;
        flags.xx = f == 2;
        flags.gt = f == 3;
        flags.lt = f == 4;
        flags.incr = rng() % 4 == 0;
        double out = 0;
        ZAddOutcome outcome = zset.Add(member, score, flags, limits, &out);
        auto it = model.scores.find(member);
        if (it == model.scores.end()) {
          if (flags.xx) {
            ASSERT_EQ(outcome, ZAddOutcome::kSkipped);
          } else {
            ASSERT_EQ(outcome, ZAddOutcome::kAdded);
            model.scores[member] = score;
            model.ordered.insert({score, member});
          }
        } else if (flags.nx) {
          ASSERT_EQ(outcome, ZAddOutcome::kSkipped);
        } else {
          double target = flags.incr ? it->second + score : score;
          if (std::isnan(target)) {
            ASSERT_EQ(outcome, ZAddOutcome::kNan);
          } else if ((flags.lt && target >= it->second) || (flags.gt && target <= it->second)) {
            ASSERT_EQ(outcome, ZAddOutcome::kSkipped);
          } else if (target == it->second) {
            ASSERT_EQ(outcome, ZAddOutcome::kUnchanged);
          } else {
            ASSERT_EQ(outcome, ZAddOutcome::kUpdated);
            ASSERT_EQ(out, target);
            model.Erase(member);
            model.scores[member] = target;
            model.ordered.insert({target, member});
          }
        }
        break;
      }
      case 4: {  // Remove.
        std::string member = random_member();
        bool present = model.scores.count(member) > 0;
        ASSERT_EQ(zset.Remove(member), present);
        if (present) model.Erase(member);
        break;
      }
      case 5: {  // Score and rank.
        std::string member = random_member();
        auto it = model.scores.find(member);
        // The in-place lookup of an inline record agrees while the set is a listpack.
        if (zset.is_listpack()) {
          std::optional<double> in_place = ZSet::CompactScore(zset.CompactBytes(), member);
          ASSERT_EQ(in_place.has_value(), it != model.scores.end()) << member;
          if (in_place.has_value()) {
            ASSERT_EQ(*in_place, it->second) << member;
          }
        }
        if (it == model.scores.end()) {
          ASSERT_FALSE(zset.Score(member).has_value());
          ASSERT_FALSE(zset.Rank(member, false).has_value());
        } else {
          ASSERT_EQ(zset.Score(member), it->second);
          size_t rank = static_cast<size_t>(
              std::distance(model.ordered.begin(), model.ordered.find({it->second, member})));
          ASSERT_EQ(zset.Rank(member, false), rank);
          ASSERT_EQ(zset.Rank(member, true), model.ordered.size() - 1 - rank);
        }
        break;
      }
      case 6: {  // Score span and count.
        ZScoreRange range{random_score(), random_score(), rng() % 2 == 0, rng() % 2 == 0};
        size_t expected_begin = 0, expected_end = 0, index = 0;
        bool seen = false;
        for (const auto& [score, member] : model.ordered) {
          if (ScoreAboveMin(score, range) && ScoreBelowMax(score, range)) {
            if (!seen) expected_begin = index;
            seen = true;
            expected_end = index + 1;
          }
          ++index;
        }
        auto [begin, end] = zset.ScoreSpan(range);
        ASSERT_EQ(end - begin, expected_end - expected_begin);
        if (seen) {
          ASSERT_EQ(begin, expected_begin);
        }
        break;
      }
      case 7: {  // Erase a rank span.
        size_t n = model.ordered.size();
        if (n == 0) break;
        size_t begin = rng() % n;
        size_t end = begin + rng() % 4;
        auto vec = model.Vector();
        ASSERT_EQ(zset.EraseSpan(begin, end), std::min(end, n) - begin);
        for (size_t i = begin; i < std::min(end, n); ++i) model.Erase(vec[i].second);
        break;
      }
      case 8: {  // Element at a rank, visits of a sub-range in both directions.
        size_t n = model.ordered.size();
        if (n == 0) break;
        auto vec = model.Vector();
        size_t rank = rng() % n;
        ZElement element = zset.At(rank);
        ASSERT_EQ(element.member, vec[rank].second);
        ASSERT_EQ(element.score, vec[rank].first);
        size_t end = std::min(n, rank + rng() % 10);
        std::vector<std::string> got;
        zset.Visit(rank, end, true, [&](std::string_view m, double) { got.emplace_back(m); });
        for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], vec[end - 1 - i].second);
        break;
      }
      default: {  // Full comparison, clone and ZSCAN-style iteration.
        ASSERT_EQ(Contents(zset), model.Vector());
        ASSERT_EQ(zset.size(), model.scores.size());
        std::unique_ptr<ZSet> copy(static_cast<ZSet*>(zset.Clone()));
        ASSERT_EQ(Contents(*copy), model.Vector());
        std::set<std::string> scanned;
        uint64_t cursor = 0;
        int rounds = 0;
        do {
          cursor = zset.Scan(cursor, 1 + rng() % 5,
                             [&](std::string_view m, double) { scanned.emplace(m); });
          ASSERT_LT(++rounds, 100000);
        } while (cursor != 0);
        ASSERT_EQ(scanned.size(), model.scores.size());
        break;
      }
    }
  }
  ASSERT_EQ(Contents(zset), model.Vector());
  if (max_entries == 0) {
    EXPECT_EQ(zset.encoding_name(), "skiplist");
  }
  EXPECT_GT(zset.MemoryUsage(), 0u);
}

TEST(ZSetTest, RandomOpsListpack) { RandomOps(1, 1 << 20, 60, 20000); }
TEST(ZSetTest, RandomOpsSkiplist) { RandomOps(2, 0, 60, 20000); }
TEST(ZSetTest, RandomOpsSkiplistManyMembers) { RandomOps(3, 0, 3000, 20000); }
TEST(ZSetTest, RandomOpsAcrossConversion) { RandomOps(4, 40, 80, 20000); }

TEST(ZSetTest, LargeAscendingAndDescendingInsertsAndDrain) {
  ZSet zset;
  double out;
  const int n = 20000;
  for (int i = 0; i < n; ++i) zset.Add("a" + std::to_string(i), i, {}, Limits(128), &out);
  for (int i = 0; i < n; ++i) zset.Add("b" + std::to_string(i), -i, {}, Limits(128), &out);
  ASSERT_EQ(zset.size(), 2u * n);
  // a0 and b0 share score 0: the member bytes order them.
  EXPECT_EQ(zset.Rank("a0", false), static_cast<size_t>(n - 1));
  EXPECT_EQ(zset.Rank("b0", false), static_cast<size_t>(n));
  EXPECT_EQ(zset.At(0).member, "b" + std::to_string(n - 1));
  // Pop from both ends, as ZPOPMIN / ZPOPMAX do.
  while (zset.size() > 2) {
    zset.EraseSpan(0, 1);
    zset.EraseSpan(zset.size() - 1, zset.size());
  }
  EXPECT_EQ(zset.At(0).member, "a0");
  EXPECT_EQ(zset.At(1).member, "b0");
  zset.EraseSpan(0, 2);
  EXPECT_EQ(zset.size(), 0u);
}

// Deep trees (three levels of 64-way nodes): random inserts, then removals of random members and
// random rank spans, which split and merge inner nodes; ranks checked against a sorted model.
TEST(ZSetTest, DeepTreeChurn) {
  std::mt19937 rng(7);
  ZSet zset;
  Model model;
  double out;
  for (int i = 0; i < 60000; ++i) {
    std::string member = "m" + std::to_string(rng() % 200000);
    double score = static_cast<double>(rng() % 1000);
    if (model.scores.count(member)) continue;
    ASSERT_EQ(zset.Add(member, score, {}, Limits(0), &out), ZAddOutcome::kAdded);
    model.scores[member] = score;
    model.ordered.insert({score, member});
  }
  auto check = [&] {
    std::vector<std::pair<double, std::string>> expected = model.Vector();
    ASSERT_EQ(zset.size(), expected.size());
    for (size_t i = 0; i < expected.size(); i += 97) {
      ASSERT_EQ(zset.Rank(expected[i].second, false), i);
      ASSERT_EQ(zset.At(i).member, expected[i].second);
    }
  };
  check();
  std::vector<std::string> members;
  for (const auto& [member, score] : model.scores) members.push_back(member);
  std::shuffle(members.begin(), members.end(), rng);
  for (size_t i = 0; i < members.size() / 2; ++i) {
    ASSERT_TRUE(zset.Remove(members[i]));
    model.Erase(members[i]);
  }
  check();
  while (zset.size() > 100) {
    size_t begin = rng() % zset.size();
    size_t end = begin + rng() % 500;
    std::vector<std::pair<double, std::string>> expected = model.Vector();
    zset.EraseSpan(begin, end);
    for (size_t i = begin; i < std::min(end, expected.size()); ++i) {
      model.Erase(expected[i].second);
    }
    ASSERT_EQ(zset.size(), model.scores.size());
  }
  check();
  EXPECT_EQ(Contents(zset), model.Vector());
}

}  // namespace
}  // namespace gigakv
