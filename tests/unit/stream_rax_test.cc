// RaxNodeCount (core/types/stream_rax.h) against XINFO STREAM's radix-tree-nodes as redis-server
// 7.0.15 reported it. Goldens came from a fresh key `s`, `CONFIG SET stream-node-max-entries N`
// (N = 1 unless said: one node per entry), `XADD s <id> f v` in the order listed, then the listed
// XDEL/XTRIM; the node keys were read back from DUMP and radix-tree-keys matched their number.
#include "core/types/stream_rax.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace gigakv {
namespace {

constexpr uint64_t kMax = UINT64_MAX;

using Ids = std::vector<std::pair<uint64_t, uint64_t>>;

size_t Count(const Ids& ids) {
  std::vector<RaxKey> keys;
  for (const auto& [ms, seq] : ids) keys.push_back(StreamRaxKey(ms, seq));
  std::sort(keys.begin(), keys.end());
  return RaxNodeCount(keys);
}

// ms-first..ms-last.
Ids Range(uint64_t ms, uint64_t first, uint64_t last) {
  Ids ids;
  for (uint64_t seq = first; seq <= last; ++seq) ids.push_back({ms, seq});
  return ids;
}

Ids Without(Ids ids, const Ids& removed) {
  std::erase_if(ids, [&](const auto& id) {
    return std::find(removed.begin(), removed.end(), id) != removed.end();
  });
  return ids;
}

TEST(StreamRaxTest, KeyEncodingIsBigEndianMsThenSeq) {
  const RaxKey key = StreamRaxKey(0x0102030405060708, 0x1112131415161718);
  EXPECT_EQ(key, (RaxKey{1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18}));
}

// XADD s 1-1; XDEL s 1-1 -> keys 0, nodes 1 (the head).
TEST(StreamRaxTest, EmptyIsTheHeadAlone) { EXPECT_EQ(Count({}), 1u); }

// XADD s 5-3 -> 2; XADD s 18446744073709551615-18446744073709551615 (alone) -> 2.
TEST(StreamRaxTest, OneKeyIsARunAndALeaf) {
  EXPECT_EQ(Count({{5, 3}}), 2u);
  EXPECT_EQ(Count({{kMax, kMax}}), 2u);
  EXPECT_EQ(Count({{0, 0}}), 2u);
}

// XADD s 1-0 -> 2; 1-1 -> 4; 1-2 -> 5; XDEL s 1-1 -> 4; XDEL s 1-0 -> 2.
TEST(StreamRaxTest, KeysDifferingInTheLastByte) {
  EXPECT_EQ(Count({{1, 0}, {1, 1}}), 4u);
  EXPECT_EQ(Count({{1, 0}, {1, 1}, {1, 2}}), 5u);
  EXPECT_EQ(Count({{1, 0}, {1, 2}}), 4u);
  EXPECT_EQ(Count({{1, 2}}), 2u);
}

// XADD s 72057594037927936-0 -> 2; 144115188075855872-0 -> 5; 18446744073709551615-1 -> 7;
// XDEL s 144115188075855872-0 -> 5; XTRIM s MAXLEN 1 -> 2.
TEST(StreamRaxTest, KeysDifferingInTheFirstByte) {
  const uint64_t a = uint64_t{1} << 56, b = uint64_t{1} << 57;
  EXPECT_EQ(Count({{a, 0}, {b, 0}}), 5u);
  EXPECT_EQ(Count({{a, 0}, {b, 0}, {kMax, 1}}), 7u);
  EXPECT_EQ(Count({{a, 0}, {kMax, 1}}), 5u);
  EXPECT_EQ(Count({{kMax, 1}}), 2u);
}

// XADD s 1-0 .. 1-299 -> 304; XDEL s 1-100 -> 303; XDEL s 1-256 1-257 -> 301;
// XTRIM s MAXLEN 250 -> 254; XTRIM s MINID 1-256 -> 44 (42 keys); XTRIM s MINID ~ 1-290 -> 12;
// XTRIM s MAXLEN 1 -> 2.
TEST(StreamRaxTest, ThreeHundredConsecutiveIdsThenDeletes) {
  Ids ids = Range(1, 0, 299);
  EXPECT_EQ(Count(ids), 304u);
  ids = Without(ids, {{1, 100}});
  EXPECT_EQ(Count(ids), 303u);
  ids = Without(ids, {{1, 256}, {1, 257}});
  EXPECT_EQ(Count(ids), 301u);
  ids.erase(ids.begin(), ids.begin() + 47);  // MAXLEN 250: 1-0 .. 1-46 go.
  EXPECT_EQ(Count(ids), 254u);
  EXPECT_EQ(Count(Range(1, 258, 299)), 44u);
  EXPECT_EQ(Count(Range(1, 290, 299)), 12u);
  EXPECT_EQ(Count({{1, 299}}), 2u);
}

// XADD s 1-0 -> 2; 1-300 -> 6; 256-0 -> 10; 65536-5 -> 13; 1099511627776-34359738368 -> 17;
// 18446744073709551615-1 -> 20; 18446744073709551615-18446744073709551615 -> 24; XDEL s 256-0
// -> 21; XDEL s 18446744073709551615-1 -> 17; XTRIM s MINID 65536-5 -> 9.
TEST(StreamRaxTest, IdsOfVariedShapes) {
  const Ids ids = {
      {1, 0},    {1, 300},    {256, 0}, {65536, 5}, {uint64_t{1} << 40, uint64_t{1} << 35},
      {kMax, 1}, {kMax, kMax}};
  const size_t golden[] = {2, 6, 10, 13, 17, 20, 24};
  for (size_t n = 1; n <= ids.size(); ++n) {
    EXPECT_EQ(Count(Ids(ids.begin(), ids.begin() + n)), golden[n - 1]) << n;
  }
  EXPECT_EQ(Count(Without(ids, {{256, 0}})), 21u);
  EXPECT_EQ(Count(Without(ids, {{256, 0}, {kMax, 1}})), 17u);
  EXPECT_EQ(Count({{65536, 5}, {uint64_t{1} << 40, uint64_t{1} << 35}, {kMax, kMax}}), 9u);
}

// Keys are master IDs. stream-node-max-entries 2: XADD s 7-0 .. 7-9 -> 7 (nodes 7-0 7-2 7-4 7-6
// 7-8); XDEL s 7-2 7-3 -> 6; XDEL s 7-5 -> 6 (node 7-4 keeps 7-4); XTRIM s MAXLEN ~ 3 -> 4.
// stream-node-max-entries 3: XADD s 1-1 .. 1-10 -> 6 (nodes 1-1 1-4 1-7 1-10); XDEL s 1-4 1-5 1-6
// -> 5; XTRIM s MINID 1-8 -> 4.
TEST(StreamRaxTest, MultiEntryNodesCountTheirMasterIds) {
  EXPECT_EQ(Count({{7, 0}, {7, 2}, {7, 4}, {7, 6}, {7, 8}}), 7u);
  EXPECT_EQ(Count({{7, 0}, {7, 4}, {7, 6}, {7, 8}}), 6u);
  EXPECT_EQ(Count({{7, 6}, {7, 8}}), 4u);
  EXPECT_EQ(Count({{1, 1}, {1, 4}, {1, 7}, {1, 10}}), 6u);
  EXPECT_EQ(Count({{1, 1}, {1, 7}, {1, 10}}), 5u);
  EXPECT_EQ(Count({{1, 7}, {1, 10}}), 4u);
}

// The same key set by two histories gives the same count. A: XADD s 1-0, 1-5, 2-0 -> 8.
// B: XADD s 0-1 .. 0-3 -> 5; 1-0 .. 1-5 -> 15; 1-300 -> 18; 2-0 -> 20; XDEL s 1-1 1-2 1-3 1-4
// 1-300 -> 13; XTRIM s MINID 1-0 -> 8.
TEST(StreamRaxTest, HistoryDoesNotMatter) {
  Ids b = Range(0, 1, 3);
  EXPECT_EQ(Count(b), 5u);
  for (const auto& id : Range(1, 0, 5)) b.push_back(id);
  EXPECT_EQ(Count(b), 15u);
  b.push_back({1, 300});
  EXPECT_EQ(Count(b), 18u);
  b.push_back({2, 0});
  EXPECT_EQ(Count(b), 20u);
  b = Without(b, {{1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 300}});
  EXPECT_EQ(Count(b), 13u);
  EXPECT_EQ(Count({{1, 0}, {1, 5}, {2, 0}}), 8u);
}

// Independent definition: a trie prefix is a rax node when it is the root, a whole key, a
// branching point (two or more next bytes) or a child of a branching point.
size_t CountByPrefixes(const std::set<RaxKey>& keys) {
  std::set<std::string> prefixes;
  for (const RaxKey& key : keys) {
    for (size_t len = 0; len <= key.size(); ++len) prefixes.emplace(key.begin(), key.begin() + len);
  }
  auto branches = [&](const std::string& prefix) {
    std::set<char> next;
    for (auto it = prefixes.upper_bound(prefix);
         it != prefixes.end() && it->compare(0, prefix.size(), prefix) == 0; ++it) {
      if (it->size() == prefix.size() + 1) next.insert(it->back());
    }
    return next.size() >= 2;
  };
  size_t nodes = 0;
  for (const std::string& p : prefixes) {
    nodes += p.empty() || p.size() == 16 || branches(p) || branches(p.substr(0, p.size() - 1));
  }
  return std::max<size_t>(nodes, 1);
}

TEST(StreamRaxTest, MatchesThePrefixDefinitionOnRandomKeySets) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::set<RaxKey> keys;
    const int alphabet = 1 + static_cast<int>(rng() % 3);
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      RaxKey key;
      for (uint8_t& byte : key) byte = static_cast<uint8_t>(rng() % alphabet * 0x7f);
      keys.insert(key);
    }
    const std::vector<RaxKey> sorted(keys.begin(), keys.end());
    EXPECT_EQ(RaxNodeCount(sorted), CountByPrefixes(keys)) << round;
  }
}

}  // namespace
}  // namespace gigakv
