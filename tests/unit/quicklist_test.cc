#include "core/types/quicklist.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gigakv {
namespace {

// Reads the list forwards with cursors, checks that walking backwards and ForEachElement agree.
std::deque<std::string> Contents(const List& list) {
  std::deque<std::string> forward;
  for (List::Cursor c = list.Seek(0); c.valid(); c = list.Next(c)) {
    forward.push_back(list.Get(c).ToString());
  }
  std::deque<std::string> backward;
  for (List::Cursor c = list.Seek(-1); c.valid(); c = list.Prev(c)) {
    backward.push_front(list.Get(c).ToString());
  }
  std::deque<std::string> visited;
  list.ForEachElement([&](std::string_view v) { visited.emplace_back(v); });
  EXPECT_EQ(forward, backward);
  EXPECT_EQ(forward, visited);
  EXPECT_EQ(forward.size(), list.size());
  return forward;
}

TEST(QuicklistTest, EmptyList) {
  List list;
  EXPECT_EQ(list.size(), 0u);
  EXPECT_EQ(list.node_count(), 0u);
  EXPECT_FALSE(list.Seek(0).valid());
  EXPECT_FALSE(list.Seek(-1).valid());
  std::string value;
  EXPECT_FALSE(list.Pop(ListEnd::kHead, &value));
  EXPECT_FALSE(list.Set(0, "x"));
  EXPECT_FALSE(list.InsertAtPivot("p", "x", true));
  EXPECT_EQ(list.Remove("x", 0), 0u);
  EXPECT_EQ(list.encoding_name(), "quicklist");
  EXPECT_EQ(list.type(), KeyType::kList);
  EXPECT_TRUE(list.CheckInvariants());
}

TEST(QuicklistTest, PushPopBothEndsAcrossNodes) {
  List list(4);
  for (int i = 0; i < 10; ++i) list.Push(ListEnd::kTail, std::to_string(i));
  for (int i = 1; i <= 10; ++i) list.Push(ListEnd::kHead, std::to_string(-i));
  EXPECT_EQ(list.size(), 20u);
  EXPECT_EQ(list.node_count(), 6u);  // 10 at each end in nodes of at most 4 entries.
  EXPECT_TRUE(list.CheckInvariants());
  std::string value;
  ASSERT_TRUE(list.Pop(ListEnd::kHead, &value));
  EXPECT_EQ(value, "-10");
  ASSERT_TRUE(list.Pop(ListEnd::kTail, &value));
  EXPECT_EQ(value, "9");
  EXPECT_EQ(list.Get(list.Seek(0)).ToString(), "-9");
  EXPECT_EQ(list.Get(list.Seek(9)).ToString(), "0");
  EXPECT_EQ(list.Get(list.Seek(-1)).ToString(), "8");
  EXPECT_FALSE(list.Seek(18).valid());
  EXPECT_FALSE(list.Seek(-19).valid());
}

TEST(QuicklistTest, NodesSplitExactlyAtTheBound) {
  List by_count(4);
  for (int i = 0; i < 4; ++i) by_count.Push(ListEnd::kTail, "e");
  EXPECT_EQ(by_count.node_count(), 1u);
  by_count.Push(ListEnd::kTail, "e");
  EXPECT_EQ(by_count.node_count(), 2u);

  // 4 KiB nodes: a listpack is an 8-byte header plus entries; a 62-byte string takes
  // 1 + 62 + 1 = 64 bytes, so 63 of them (4040 bytes) fit and the 64th (4104) does not.
  List by_bytes(-1);
  std::string value(62, 'v');
  ASSERT_EQ(Listpack::EntrySize(value), 64u);
  for (int i = 0; i < 63; ++i) by_bytes.Push(ListEnd::kHead, value);
  EXPECT_EQ(by_bytes.node_count(), 1u);
  by_bytes.Push(ListEnd::kHead, value);
  EXPECT_EQ(by_bytes.node_count(), 2u);
  EXPECT_TRUE(by_bytes.CheckInvariants());
}

// Bytes that do not compress, so that node sizes and memory are those of plain listpacks.
std::string Incompressible(size_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>('a' + rng() % 26);
  return bytes;
}

TEST(QuicklistTest, ByteLimitedNodesAndOversizedElements) {
  List list(-1);  // 4 KiB nodes.
  std::string big = Incompressible(5000, 1);
  for (int i = 0; i < 100; ++i) list.Push(ListEnd::kTail, Incompressible(100, 2 + i));
  EXPECT_GE(list.node_count(), 3u);
  list.Push(ListEnd::kTail, big);
  list.Push(ListEnd::kHead, big);
  EXPECT_TRUE(list.CheckInvariants());
  EXPECT_EQ(list.Get(list.Seek(0)).ToString(), big);
  EXPECT_EQ(list.Get(list.Seek(-1)).ToString(), big);
  EXPECT_TRUE(list.Set(50, big));
  EXPECT_TRUE(list.CheckInvariants());
  EXPECT_EQ(list.Get(list.Seek(50)).ToString(), big);
  EXPECT_GT(list.MemoryUsage(), 3 * big.size() + 100 * 100);
}

TEST(QuicklistTest, RemovalsMergeSmallNeighbours) {
  List list(4);
  for (int i = 0; i < 16; ++i) list.Push(ListEnd::kTail, i % 2 ? "x" : std::to_string(i));
  EXPECT_EQ(list.node_count(), 4u);
  EXPECT_EQ(list.Remove("x", 0), 8u);
  EXPECT_EQ(list.node_count(), 2u);
  EXPECT_TRUE(list.CheckInvariants());
  EXPECT_EQ(Contents(list), (std::deque<std::string>{"0", "2", "4", "6", "8", "10", "12", "14"}));
}

TEST(QuicklistTest, RingGrowsAndShrinksWithTheNodeCount) {
  List list(1);  // One node per element.
  size_t inline_usage = list.MemoryUsage();
  for (int i = 0; i < 1000; ++i) list.Push(ListEnd::kTail, std::to_string(i));
  EXPECT_EQ(list.node_count(), 1000u);
  size_t full_usage = list.MemoryUsage();
  EXPECT_GE(full_usage, inline_usage + 1000 * sizeof(void*));
  list.Erase(ListEnd::kHead, 990);
  EXPECT_EQ(list.node_count(), 10u);
  EXPECT_LT(list.MemoryUsage(), inline_usage + 64 * sizeof(void*) + 10 * 32);
  EXPECT_EQ(list.Get(list.Seek(0)).ToString(), "990");
  list.Erase(ListEnd::kTail, 9);
  EXPECT_EQ(list.node_count(), 1u);  // Back to the inline node.
  EXPECT_TRUE(list.CheckInvariants());
  EXPECT_EQ(Contents(list), std::deque<std::string>{"990"});
}

TEST(QuicklistTest, CloneIsDeep) {
  List list(2);
  for (int i = 0; i < 7; ++i) list.Push(ListEnd::kTail, std::to_string(i));
  std::unique_ptr<List> copy(static_cast<List*>(list.Clone()));
  list.Set(0, "changed");
  EXPECT_EQ(Contents(*copy), (std::deque<std::string>{"0", "1", "2", "3", "4", "5", "6"}));
  EXPECT_TRUE(copy->CheckInvariants());
}

TEST(QuicklistTest, FullNodesAreCompressedAndReadBack) {
  List list;  // 8 KiB nodes.
  std::deque<std::string> model;
  char buffer[16];
  for (int i = 0; i < 5000; ++i) {
    std::snprintf(buffer, sizeof(buffer), "m:%08d", i);
    list.Push(ListEnd::kTail, buffer);
    model.emplace_back(buffer);
  }
  ASSERT_GE(list.node_count(), 7u);
  // Every node but the tail one, which takes the pushes, overflowed and was compressed.
  for (size_t i = 0; i + 1 < list.node_count(); ++i) EXPECT_TRUE(list.IsNodeCompressed(i)) << i;
  EXPECT_FALSE(list.IsNodeCompressed(list.node_count() - 1));
  EXPECT_LT(list.MemoryUsage(), 5000u * 12 / 2);  // 12 bytes per plain entry.
  EXPECT_TRUE(list.CheckInvariants());
  std::unique_ptr<List> copy(static_cast<List*>(list.Clone()));
  // Reads in the middle decode copies: the nodes stay compressed. Reads from two lists in turn
  // share the per-thread cache of one decompressed node.
  for (int64_t index : {2500, 1200, 2501, 4000}) {
    EXPECT_EQ(list.Get(list.Seek(index)).ToString(), model[index]);
    EXPECT_EQ(copy->Get(copy->Seek(index)).ToString(), model[index]);
  }
  for (size_t i = 1; i + 1 < list.node_count(); ++i) EXPECT_TRUE(list.IsNodeCompressed(i)) << i;
  EXPECT_EQ(Contents(list), model);
  // A read of the compressed head node decompresses it in place.
  EXPECT_EQ(list.Get(list.Seek(10)).ToString(), model[10]);
  EXPECT_FALSE(list.IsNodeCompressed(0));
  EXPECT_TRUE(copy->IsNodeCompressed(0));
  // A change in the middle decompresses the node and compresses it again: the copy's cached
  // node must not be served for the changed one.
  ASSERT_TRUE(list.Set(2500, "changed"));
  EXPECT_EQ(list.Get(list.Seek(2500)).ToString(), "changed");
  EXPECT_EQ(copy->Get(copy->Seek(2500)).ToString(), model[2500]);
  EXPECT_TRUE(list.IsNodeCompressed(list.Seek(2500).node));
  // Pops decompress an end node in place.
  std::string value;
  ASSERT_TRUE(copy->Pop(ListEnd::kHead, &value));
  EXPECT_EQ(value, model.front());
  EXPECT_FALSE(copy->IsNodeCompressed(0));
  model.pop_front();
  EXPECT_EQ(Contents(*copy), model);
  model.push_front(value);
  model[2500] = "changed";
  EXPECT_TRUE(list.CheckInvariants());
  EXPECT_EQ(Contents(list), model);
}

TEST(QuicklistTest, IncompressibleNodesStayPlain) {
  List list;
  for (int i = 0; i < 200; ++i) list.Push(ListEnd::kTail, Incompressible(100, 100 + i));
  ASSERT_GE(list.node_count(), 3u);
  for (size_t i = 0; i < list.node_count(); ++i) EXPECT_FALSE(list.IsNodeCompressed(i));
  EXPECT_TRUE(list.CheckInvariants());
}

std::string RandomValue(std::mt19937_64& rng, int large_percent) {
  if (rng() % 3 == 0) {  // Compressible: shared prefixes and few distinct digits.
    return "item:" + std::to_string(rng() % 300);
  }
  switch (rng() % 4) {
    case 0:
      return std::to_string(static_cast<int64_t>(rng() % 2000) - 1000);
    case 1:
      return std::string(1, static_cast<char>('a' + rng() % 5));
    case 2:
      if (static_cast<int>(rng() % 100) < large_percent) {
        return std::string(3000 + rng() % 3000, static_cast<char>('A' + rng() % 3));
      }
      return std::string(1 + rng() % 70, static_cast<char>('k' + rng() % 3));
    default:
      return std::to_string(rng());
  }
}

// Starts from `prefill` compressible elements; adds to *compressed_steps the number of steps that
// ended with at least one compressed node.
void RandomOpsAgainstDeque(int64_t fill, uint64_t seed, int large_percent, size_t prefill = 0,
                           int* compressed_steps = nullptr) {
  SCOPED_TRACE(::testing::Message() << "fill " << fill << " seed " << seed);
  std::mt19937_64 rng(seed);
  List list(fill);
  std::deque<std::string> model;
  for (size_t i = 0; i < prefill; ++i) {
    std::string value = "prefill:" + std::to_string(i % 1000);
    list.Push(ListEnd::kTail, value);
    model.push_back(value);
  }
  for (int step = 0; step < 4000; ++step) {
    std::string value = RandomValue(rng, large_percent);
    auto length = static_cast<int64_t>(model.size());
    switch (rng() % 11) {
      case 0:
      case 1:
        list.Push(ListEnd::kTail, value);
        model.push_back(value);
        break;
      case 2:
      case 3:
        list.Push(ListEnd::kHead, value);
        model.push_front(value);
        break;
      case 4: {
        std::string popped;
        bool head = rng() % 2 == 0;
        ASSERT_EQ(list.Pop(head ? ListEnd::kHead : ListEnd::kTail, &popped), !model.empty());
        if (!model.empty()) {
          ASSERT_EQ(popped, head ? model.front() : model.back());
          head ? model.pop_front() : model.pop_back();
        }
        break;
      }
      case 5: {
        int64_t index = static_cast<int64_t>(rng() % (length + 2)) - (length + 2) / 2;
        bool in_range = index >= -length && index < length;
        ASSERT_EQ(list.Set(index, value), in_range);
        if (in_range) model[index < 0 ? index + length : index] = value;
        break;
      }
      case 6: {
        std::string pivot =
            model.empty() || rng() % 4 == 0 ? RandomValue(rng, 0) : model[rng() % model.size()];
        bool after = rng() % 2 == 0;
        auto it = std::find(model.begin(), model.end(), pivot);
        ASSERT_EQ(list.InsertAtPivot(pivot, value, after), it != model.end());
        if (it != model.end()) model.insert(after ? it + 1 : it, value);
        break;
      }
      case 7: {
        std::string target = model.empty() ? value : model[rng() % model.size()];
        int64_t count = static_cast<int64_t>(rng() % 5) - 2;
        size_t expected = 0;
        size_t limit = count == 0 ? SIZE_MAX : static_cast<size_t>(std::abs(count));
        if (count >= 0) {
          for (auto it = model.begin(); it != model.end() && expected < limit;) {
            if (*it == target) {
              it = model.erase(it);
              ++expected;
            } else {
              ++it;
            }
          }
        } else {
          for (size_t i = model.size(); i-- > 0 && expected < limit;) {
            if (model[i] == target) {
              model.erase(model.begin() + static_cast<int64_t>(i));
              ++expected;
            }
          }
        }
        ASSERT_EQ(list.Remove(target, count), expected);
        break;
      }
      case 8: {
        size_t count = rng() % 6;
        bool head = rng() % 2 == 0;
        list.Erase(head ? ListEnd::kHead : ListEnd::kTail, count);
        for (size_t i = 0; i < count && !model.empty(); ++i) {
          head ? model.pop_front() : model.pop_back();
        }
        break;
      }
      case 9: {
        int64_t index = static_cast<int64_t>(rng() % (length + 2)) - (length + 2) / 2;
        List::Cursor c = list.Seek(index);
        bool in_range = index >= -length && index < length;
        ASSERT_EQ(c.valid(), in_range);
        if (in_range) {
          ASSERT_EQ(list.Get(c).ToString(), model[index < 0 ? index + length : index]);
        }
        break;
      }
      default: {
        std::unique_ptr<List> copy(static_cast<List*>(list.Clone()));
        ASSERT_TRUE(copy->CheckInvariants());
        ASSERT_EQ(Contents(*copy), model);
        break;
      }
    }
    ASSERT_EQ(list.size(), model.size()) << "step " << step;
    ASSERT_TRUE(list.CheckInvariants()) << "step " << step;
    if (compressed_steps != nullptr) {
      for (size_t i = 0; i < list.node_count(); ++i) {
        if (list.IsNodeCompressed(i)) {
          ++*compressed_steps;
          break;
        }
      }
    }
    if (step % 97 == 0) {
      ASSERT_EQ(Contents(list), model) << "step " << step;
    }
  }
  ASSERT_EQ(Contents(list), model);
}

TEST(QuicklistTest, RandomOpsTinyNodes) {
  for (int64_t fill : {1, 2, 3, 4}) {
    for (uint64_t seed : {1u, 2u, 3u}) RandomOpsAgainstDeque(fill, seed, 0);
  }
}

TEST(QuicklistTest, RandomOpsDefaultNodes) {
  int compressed_steps = 0;
  for (uint64_t seed : {11u, 12u}) RandomOpsAgainstDeque(-2, seed, 0, 3000, &compressed_steps);
  for (uint64_t seed : {13u, 14u}) RandomOpsAgainstDeque(128, seed, 0, 3000, &compressed_steps);
  EXPECT_GT(compressed_steps, 1000);  // The operations ran on compressed nodes too.
}

TEST(QuicklistTest, RandomOpsLargeElements) {
  for (int64_t fill : {-1, -2, 4}) RandomOpsAgainstDeque(fill, 21, 30);
}

}  // namespace
}  // namespace gigakv
