// The shared linear-probing pieces (core/open_addressing.h) over a tiny test policy, in both
// shapes (wrapping; with an overflow tail), against a std::map model with fixed seeds. Every SCAN
// step is also compared with the walk the tables had before it was shared, which pins the
// cursors that clients hold.
#include "core/open_addressing.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace gigakv::open_addressing {
namespace {

struct Entry {
  bool used = false;
  uint32_t fingerprint = 0;
  int id = 0;
};

// The smallest policy: a vector of entries. Without wrap-around it has an overflow tail of
// 2 + capacity / 8 slots.
template <bool kWrapping>
class TinySlots {
 public:
  static constexpr bool kWraps = kWrapping;

  explicit TinySlots(size_t capacity)
      : capacity_(capacity), entries_(capacity + (kWrapping ? 0 : 2 + capacity / 8)) {}

  size_t capacity() const { return capacity_; }
  size_t length() const { return entries_.size(); }
  bool IsFree(size_t pos) const {
    ++looks_;
    return !entries_[pos].used;
  }
  uint32_t FingerprintAt(size_t pos) const { return entries_[pos].fingerprint; }
  void Move(size_t from, size_t to) { entries_[to] = entries_[from]; }
  void Free(size_t pos) { entries_[pos] = Entry(); }

  const Entry& at(size_t pos) const { return entries_[pos]; }

  // False when the array has no room (a non-wrapping table would grow).
  bool Insert(uint32_t fingerprint, int id) {
    if (kWrapping && size_ + 1 >= length()) return false;  // Keep one slot free.
    size_t pos = FindFree(*this, Home(fingerprint, capacity_));
    if (pos == kNotFound) return false;
    entries_[pos] = Entry{true, fingerprint, id};
    ++size_;
    return true;
  }
  size_t FindId(uint32_t fingerprint, int id) const {
    return Find(
        *this, Home(fingerprint, capacity_),
        [&](size_t pos) { return entries_[pos].fingerprint == fingerprint; },
        [&](size_t pos) { return entries_[pos].id == id; });
  }
  void Remove(uint32_t fingerprint, int id) {
    size_t pos = FindId(fingerprint, id);
    ASSERT_NE(pos, kNotFound) << id;
    Erase(*this, pos);
    --size_;
  }
  // Stores an element at `pos` as it is, without probing (to build arrays Insert refuses).
  void Fill(size_t pos, uint32_t fingerprint, int id) {
    entries_[pos] = Entry{true, fingerprint, id};
    ++size_;
  }
  size_t size() const { return size_; }
  // IsFree calls so far: the slots a walk looked at.
  size_t looks() const { return looks_; }

 private:
  size_t capacity_;
  std::vector<Entry> entries_;
  size_t size_ = 0;
  mutable size_t looks_ = 0;
};

using Model = std::map<int, uint32_t>;  // id -> fingerprint

// The array rebuilt with `capacity` home slots, elements inserted in slot order as the tables'
// resizes do (larger when a non-wrapping array runs out of tail).
template <bool kWrapping>
TinySlots<kWrapping> Resized(const TinySlots<kWrapping>& old, size_t capacity) {
  while (true) {
    TinySlots<kWrapping> fresh(capacity);
    bool placed_all = true;
    for (size_t pos = 0; pos < old.length() && placed_all; ++pos) {
      if (!old.IsFree(pos)) placed_all = fresh.Insert(old.at(pos).fingerprint, old.at(pos).id);
    }
    if (placed_all) return fresh;
    capacity += capacity / 2 + 1;
  }
}

// Fingerprint distributions: uniform; all in the top 1/64 of the space (one cluster at the end
// that wraps to the front); 12 distinct values (long runs of equal fingerprints); one value.
enum class Spread { kUniform, kTopHeavy, kFewValues, kOneValue };
constexpr Spread kSpreads[] = {Spread::kUniform, Spread::kTopHeavy, Spread::kFewValues,
                               Spread::kOneValue};

uint32_t DrawFingerprint(Spread spread, std::mt19937_64& rng) {
  switch (spread) {
    case Spread::kUniform:
      return static_cast<uint32_t>(rng());
    case Spread::kTopHeavy:
      return 0xfc000000u | static_cast<uint32_t>(rng() & 0x03ffffff);
    case Spread::kFewValues:
      return static_cast<uint32_t>(rng() % 12) * 0x15555555u;
    case Spread::kOneValue:
      return 0xfffffff0u;
  }
  return 0;
}

template <bool kWrapping>
void ExpectProbeInvariant(const TinySlots<kWrapping>& slots) {
  size_t used = 0;
  for (size_t pos = 0; pos < slots.length(); ++pos) {
    if (slots.IsFree(pos)) continue;
    ++used;
    size_t home = Home(slots.FingerprintAt(pos), slots.capacity());
    ASSERT_LT(home, slots.capacity());
    if (!kWrapping) {
      ASSERT_LE(home, pos);
    }
    for (size_t p = home; p != pos; p = p + 1 == slots.length() ? 0 : p + 1) {
      ASSERT_FALSE(slots.IsFree(p))
          << "free slot " << p << " between home " << home << " and " << pos;
    }
  }
  EXPECT_EQ(used, slots.size());
}

template <bool kWrapping>
void ExpectMatchesModel(const TinySlots<kWrapping>& slots, const Model& model) {
  ASSERT_EQ(slots.size(), model.size());
  for (const auto& [id, fingerprint] : model) {
    size_t pos = slots.FindId(fingerprint, id);
    ASSERT_NE(pos, kNotFound) << id;
    EXPECT_EQ(slots.at(pos).id, id);
  }
}

// The walk as KeyTable::ScanRange and SetHashTable::Scan had it before it was shared.
uint64_t ReferenceScan(const TinySlots<true>& slots, uint64_t cursor, size_t count,
                       std::vector<size_t>* out) {
  const size_t capacity = slots.capacity();
  if (cursor >= kScanEnd) return kScanEnd;
  size_t start = Home(static_cast<uint32_t>(cursor), capacity);
  size_t seen = 0;
  size_t logical = start;
  std::vector<std::pair<uint32_t, size_t>> candidates;
  for (;; ++logical) {
    size_t pos = logical % capacity;
    if (slots.IsFree(pos)) {
      if (seen >= count || logical >= capacity) break;
      if (logical - start >= capacity) break;
      continue;
    }
    if (logical - start >= 2 * capacity) break;
    uint32_t fingerprint = slots.FingerprintAt(pos);
    size_t home = Home(fingerprint, capacity);
    size_t unwrapped = home + (pos + capacity - home) % capacity;
    if (fingerprint >= cursor && unwrapped == logical) {
      candidates.emplace_back(fingerprint, pos);
      ++seen;
    }
  }
  uint64_t boundary;
  if (logical >= capacity) {
    boundary = kScanEnd;
  } else {
    boundary = ((static_cast<uint64_t>(logical) << 32) + capacity - 1) / capacity;
    while (boundary > cursor && boundary < kScanEnd &&
           Home(static_cast<uint32_t>(boundary - 1), capacity) >= logical) {
      --boundary;
    }
    if (boundary <= cursor) boundary = cursor + 1;
  }
  for (const auto& [fingerprint, pos] : candidates) {
    if (fingerprint < boundary) out->push_back(pos);
  }
  return boundary;
}

// The walk as HashTable::Scan had it (its end cursor 0 said as kScanEnd). It made no progress for
// count == 0, which no caller passes.
uint64_t ReferenceScan(const TinySlots<false>& slots, uint64_t cursor, size_t count,
                       std::vector<size_t>* out) {
  if (cursor >= kScanEnd) return kScanEnd;
  size_t pos = Home(static_cast<uint32_t>(cursor), slots.capacity());
  size_t seen = 0;
  for (; pos < slots.length(); ++pos) {
    if (slots.IsFree(pos)) {
      if (seen >= count) break;
      continue;
    }
    if (slots.FingerprintAt(pos) < cursor) continue;
    out->push_back(pos);
    ++seen;
  }
  if (pos >= slots.capacity()) return kScanEnd;
  uint64_t boundary =
      ((static_cast<uint64_t>(pos) << 32) + slots.capacity() - 1) / slots.capacity();
  return boundary >= kScanEnd ? kScanEnd : boundary;
}

// One Scan step, checked: it returns exactly the elements whose fingerprint lies in
// [cursor, next), each once, in walk order, at least `count` of them unless it is the last step,
// with next > cursor; and it matches the reference walk, looking at no more slots than it did.
// Appends the ids to `ids`.
template <bool kWrapping>
uint64_t CheckedStep(const TinySlots<kWrapping>& slots, const Model& model, uint64_t cursor,
                     size_t count, std::vector<int>* ids) {
  std::vector<size_t> emitted;
  const size_t looks_before = slots.looks();
  const uint64_t next = Scan(slots, cursor, count, [&](size_t pos) { emitted.push_back(pos); });
  const size_t looks = slots.looks() - looks_before;
  EXPECT_GT(next, cursor);
  EXPECT_LE(next, kScanEnd);
  std::multiset<int> got;
  for (size_t pos : emitted) {
    got.insert(slots.at(pos).id);
    ids->push_back(slots.at(pos).id);
  }
  std::multiset<int> expected;
  for (const auto& [id, fingerprint] : model) {
    if (fingerprint >= cursor && fingerprint < next) expected.insert(id);
  }
  EXPECT_EQ(got, expected) << "cursor " << cursor << " next " << next << " count " << count;
  if (next < kScanEnd) {
    EXPECT_GE(emitted.size(), count) << "cursor " << cursor;
  }
  if (kWrapping || count > 0) {
    std::vector<size_t> reference;
    const size_t reference_looks_before = slots.looks();
    EXPECT_EQ(ReferenceScan(slots, cursor, count, &reference), next) << "cursor " << cursor;
    EXPECT_EQ(reference, emitted) << "cursor " << cursor;
    EXPECT_LE(looks, slots.looks() - reference_looks_before) << "cursor " << cursor;
  }
  return next;
}

template <typename T>
class OpenAddressingTest : public ::testing::Test {
 protected:
  static constexpr bool kWrapping = T::value;
  using Slots = TinySlots<kWrapping>;
};
using Shapes = ::testing::Types<std::true_type, std::false_type>;
class ShapeNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return T::value ? "Wrapping" : "WithTail";
  }
};
TYPED_TEST_SUITE(OpenAddressingTest, Shapes, ShapeNames);

TYPED_TEST(OpenAddressingTest, FindInsertEraseFollowTheModel) {
  using Slots = typename TestFixture::Slots;
  std::mt19937_64 rng(7);
  for (Spread spread : kSpreads) {
    for (size_t capacity : {1, 2, 8, 13, 64}) {
      Slots slots(capacity);
      Model model;
      int next_id = 0;
      for (int op = 0; op < 600; ++op) {
        if (model.empty() || rng() % 5 < 3) {
          uint32_t fingerprint = DrawFingerprint(spread, rng);
          if (slots.Insert(fingerprint, next_id)) model[next_id] = fingerprint;
          ++next_id;
        } else {
          auto it = model.begin();
          std::advance(it, static_cast<long>(rng() % model.size()));
          slots.Remove(it->second, it->first);
          model.erase(it);
        }
        ASSERT_NO_FATAL_FAILURE(ExpectProbeInvariant(slots));
        ASSERT_NO_FATAL_FAILURE(ExpectMatchesModel(slots, model));
        EXPECT_EQ(slots.FindId(DrawFingerprint(spread, rng), -1), kNotFound);
      }
    }
  }
}

// Without wrap-around, probes run off the end of the tail instead of around.
TEST(OpenAddressingProbeTest, FindFreeReportsAFullTail) {
  TinySlots<false> slots(8);  // 8 home slots and a tail of 3.
  for (int id = 0; id < 11; ++id) ASSERT_TRUE(slots.Insert(0, id));
  EXPECT_EQ(FindFree(slots, 7), kNotFound);
  EXPECT_FALSE(slots.Insert(0xffffffffu, 11));
  EXPECT_EQ(slots.FindId(0xffffffffu, 11), kNotFound);
}

TYPED_TEST(OpenAddressingTest, NextOccupied) {
  typename TestFixture::Slots slots(16);
  EXPECT_EQ(NextOccupied(slots, 0), kNotFound);
  ASSERT_TRUE(slots.Insert(0x10000000u, 1));  // Home 1.
  EXPECT_EQ(NextOccupied(slots, 0), 1u);
  EXPECT_EQ(NextOccupied(slots, 1), 1u);
  EXPECT_EQ(NextOccupied(slots, 2), TestFixture::kWrapping ? 1u : kNotFound);
}

// Every step of full passes and of steps from arbitrary cursors returns exactly its range, over
// loads up to the fullest the array allows, all fingerprint spreads and small counts.
TYPED_TEST(OpenAddressingTest, EveryScanStepReturnsExactlyItsRange) {
  using Slots = typename TestFixture::Slots;
  std::mt19937_64 rng(11);
  for (Spread spread : kSpreads) {
    for (size_t capacity : {1, 2, 3, 8, 40, 257}) {
      // Loads: a quarter, 4/5 and 7/8 (the tables' maxima), and full (all but one slot when
      // wrapping; until the tail is full otherwise).
      for (size_t wanted : {capacity / 4, capacity * 4 / 5, capacity * 7 / 8, 2 * capacity + 8}) {
        Slots slots(capacity);
        Model model;
        for (int id = 0; static_cast<size_t>(id) < wanted; ++id) {
          uint32_t fingerprint = DrawFingerprint(spread, rng);
          if (!slots.Insert(fingerprint, id)) break;
          model[id] = fingerprint;
        }
        ASSERT_NO_FATAL_FAILURE(ExpectProbeInvariant(slots));
        for (size_t count : {size_t{1}, size_t{2}, size_t{5}, size_t{1000}}) {
          std::vector<int> ids;
          uint64_t cursor = 0;
          int steps = 0;
          do {
            cursor = CheckedStep(slots, model, cursor, count, &ids);
            ASSERT_LT(++steps, 10000);
          } while (cursor != kScanEnd);
          std::multiset<int> all(ids.begin(), ids.end());
          EXPECT_EQ(all.size(), model.size());
          EXPECT_EQ(std::set<int>(ids.begin(), ids.end()).size(), model.size());
        }
        for (int i = 0; i < 30; ++i) {
          std::vector<int> ids;
          uint64_t cursor = rng() % 2 ? static_cast<uint32_t>(rng()) : DrawFingerprint(spread, rng);
          CheckedStep(slots, model, cursor, rng() % 4, &ids);  // count 0 included.
        }
      }
    }
  }
}

// Elements present for the whole scan come back exactly once with count = 1 and other small
// counts, while other elements are inserted and erased and the array grows and shrinks between
// steps.
TYPED_TEST(OpenAddressingTest, ScanSurvivesChangesBetweenSteps) {
  using Slots = typename TestFixture::Slots;
  std::mt19937_64 rng(13);
  for (Spread spread : {Spread::kUniform, Spread::kTopHeavy, Spread::kFewValues}) {
    for (size_t count : {size_t{1}, size_t{3}, size_t{17}}) {
      Slots slots(64);
      Model model;
      int next_id = 0;
      auto insert = [&](uint32_t fingerprint) {
        // Grow at 7/8, as KeyTable does, or when a tail is full.
        if ((slots.size() + 1) * 8 > slots.capacity() * 7) {
          slots = Resized(slots, slots.capacity() + slots.capacity() / 4);
        }
        while (!slots.Insert(fingerprint, next_id)) {
          slots = Resized(slots, slots.capacity() + slots.capacity() / 2);
        }
        model[next_id++] = fingerprint;
      };
      for (int i = 0; i < 48; ++i) insert(DrawFingerprint(spread, rng));
      std::set<int> stable;
      for (const auto& [id, fingerprint] : model) stable.insert(id);
      std::multiset<int> returned;
      uint64_t cursor = 0;
      int steps = 0;
      do {
        std::vector<int> ids;
        cursor = CheckedStep(slots, model, cursor, count, &ids);
        returned.insert(ids.begin(), ids.end());
        // Churn: new elements, erasures of non-stable ones and a few stable ones (which drop out
        // of what must be returned), growth and shrinkage.
        for (int i = 0; i < 6; ++i) insert(DrawFingerprint(spread, rng));
        for (int i = 0; i < 5 && !model.empty(); ++i) {
          auto it = model.begin();
          std::advance(it, static_cast<long>(rng() % model.size()));
          if (stable.count(it->first) != 0) {
            if (rng() % 8 != 0) continue;
            stable.erase(it->first);
          }
          slots.Remove(it->second, it->first);
          model.erase(it);
        }
        if (steps % 7 == 6 && slots.size() * 4 < slots.capacity() * 3) {
          slots = Resized(slots, std::max<size_t>(slots.size() * 8 / 5, 8));
        }
        ASSERT_NO_FATAL_FAILURE(ExpectProbeInvariant(slots));
        ASSERT_LT(++steps, 100000);
      } while (cursor != kScanEnd);
      for (int id : stable) EXPECT_EQ(returned.count(id), 1u) << id;
    }
  }
}

// A cluster at the end of a wrapping array that continues at its front: every step returns its
// part once, and the front elements whose homes are at the front are not taken twice.
TEST(OpenAddressingScanTest, WrappedClusterIsReturnedOnce) {
  TinySlots<true> slots(8);
  Model model;
  // Homes 7, 7, 7, 6: slots 7, 0, 1, 6. Then homes 0 and 1: slots 2 and 3.
  const std::pair<int, uint32_t> elements[] = {{1, 0xf0000000u}, {2, 0xf1000000u},
                                               {3, 0xf2000000u}, {4, 0xc0000000u},
                                               {5, 0x01000000u}, {6, 0x20000000u}};
  for (const auto& [id, fingerprint] : elements) {
    ASSERT_TRUE(slots.Insert(fingerprint, id));
    model[id] = fingerprint;
  }
  EXPECT_EQ(slots.at(0).id, 2);
  EXPECT_EQ(slots.at(1).id, 3);
  EXPECT_EQ(slots.at(2).id, 5);
  EXPECT_EQ(slots.at(3).id, 6);
  // From 0: the walk passes the wrapped elements 2 and 3 (fingerprints past the cursor, but homes
  // at the end) and stops at the first free slot, 4: [0, 0x80000000) holds 5 and 6.
  std::vector<int> ids;
  EXPECT_EQ(CheckedStep(slots, model, 0, 1, &ids), 0x80000000u);
  EXPECT_EQ(ids, (std::vector<int>{5, 6}));
  // From 0x80000000 (home 4, free): 4 and 1 at the end, then 2 and 3 after the wrap; 5 and 6,
  // seen again, are not taken.
  ids.clear();
  EXPECT_EQ(CheckedStep(slots, model, 0x80000000u, 1, &ids), kScanEnd);
  EXPECT_EQ(ids, (std::vector<int>{4, 1, 2, 3}));
}

// A wrapping array with no free slot (never the case in the tables) still ends the walk, and
// the element that wrapped to the front is taken once.
TEST(OpenAddressingScanTest, ArrayWithoutFreeSlotEnds) {
  TinySlots<true> slots(4);
  // Homes 3 (wrapped to slot 0), 1, 2, 3.
  Model model = {{5, 0xf8000000u}, {2, 0x50000000u}, {3, 0x90000000u}, {4, 0xd0000000u}};
  slots.Fill(0, 0xf8000000u, 5);
  slots.Fill(1, 0x50000000u, 2);
  slots.Fill(2, 0x90000000u, 3);
  slots.Fill(3, 0xd0000000u, 4);
  for (size_t count : {size_t{1}, size_t{100}}) {
    std::vector<int> ids;
    EXPECT_EQ(CheckedStep(slots, model, 0, count, &ids), kScanEnd);
    EXPECT_EQ(ids, (std::vector<int>{2, 3, 4, 5}));
    ids.clear();
    EXPECT_EQ(CheckedStep(slots, model, 0x60000000u, count, &ids), kScanEnd);
    EXPECT_EQ(ids, (std::vector<int>{3, 4, 5}));
  }
}

TYPED_TEST(OpenAddressingTest, CursorPastTheEndReturnsNothing) {
  typename TestFixture::Slots slots(8);
  ASSERT_TRUE(slots.Insert(0xffffffffu, 1));
  int calls = 0;
  EXPECT_EQ(Scan(slots, kScanEnd, 10, [&](size_t) { ++calls; }), kScanEnd);
  EXPECT_EQ(Scan(slots, uint64_t{1} << 40, 10, [&](size_t) { ++calls; }), kScanEnd);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(Scan(slots, 0xffffffffu, 10, [&](size_t) { ++calls; }), kScanEnd);
  EXPECT_EQ(calls, 1);
}

TEST(OffsetSlotsTest, WordLayout) {
  const uint64_t word = OffsetSlots::MakeWord(0x12345678u, 0);
  EXPECT_EQ(word, 0x1234567800000001ULL);
  EXPECT_EQ(OffsetSlots::FingerprintOf(word), 0x12345678u);
  EXPECT_EQ(OffsetSlots::OffsetOf(word), 0u);
  EXPECT_EQ(OffsetSlots::WithOffset(word, 0xfffffffdu), 0x12345678fffffffeULL);
  EXPECT_EQ(OffsetSlots::OffsetOf(OffsetSlots::WithOffset(word, 41)), 41u);
}

TEST(OffsetSlotsTest, InsertFindInsertAll) {
  std::vector<uint64_t> words(8, 0);
  OffsetSlots slots(words.data(), words.size());
  // Two elements with home 7: the second wraps to slot 0.
  EXPECT_EQ(slots.Insert(OffsetSlots::MakeWord(0xf0000000u, 10)), 7u);
  EXPECT_EQ(slots.Insert(OffsetSlots::MakeWord(0xf0000000u, 20)), 0u);
  auto offset_is = [](uint32_t offset) {
    return [offset](uint64_t word) { return OffsetSlots::OffsetOf(word) == offset; };
  };
  EXPECT_EQ(slots.Find(0xf0000000u, offset_is(20)), 0u);
  EXPECT_EQ(slots.Find(0xf0000000u, offset_is(30)), kNotFound);
  Erase(slots, 7);
  EXPECT_EQ(words[7], OffsetSlots::MakeWord(0xf0000000u, 20));  // Shifted back to its home.
  EXPECT_EQ(words[0], 0u);
  std::vector<uint64_t> larger(16, 0);
  OffsetSlots(larger.data(), larger.size()).InsertAll(words.data(), words.size());
  EXPECT_EQ(larger[15], OffsetSlots::MakeWord(0xf0000000u, 20));
}

}  // namespace
}  // namespace gigakv::open_addressing
