// Linear probing over fingerprint-ordered slot arrays: the probing, backward-shift deletion and
// SCAN cursor walk shared by core's three open-addressing tables, KeyTable (a database's keys),
// SetHashTable (the "hashtable" set encoding) and HashTable (the "hashtable" hash encoding).
//
// A table is an array of slots, each free or holding one element. Every element has a 32-bit
// fingerprint (the upper 32 bits of its 64-bit hash) that never changes, and a home slot
//
//   Home(fingerprint, capacity) = (fingerprint * capacity) >> 32
//
// which is monotone in the fingerprint: slots are ordered by fingerprint, which is what makes a
// fingerprint usable as a SCAN cursor across resizes. Elements are placed by linear probing and
// removed by backward shift (no tombstones), which keeps the probe invariant: an element sits at
// its home or after it, with no free slot in between.
//
// A table describes its slot array with a small policy value (the SlotArray concept below), built
// on the stack per call; everything here is a template over it and inlines: no virtual calls, no
// type erasure, no allocation. The policy must provide:
//
//   static constexpr bool kWraps;   true: probing continues from the last slot to the first, and
//                                   length() == capacity(). false: it never wraps; the array has
//                                   length() > capacity() slots (home slots plus an overflow tail)
//                                   and an element never sits before its home.
//   size_t capacity() const;        home slots (> 0); homes lie in [0, capacity()).
//   size_t length() const;          slots in the array.
//   bool IsFree(size_t pos) const;
//   uint32_t FingerprintAt(size_t pos) const;   `pos` occupied. Called once per slot looked at;
//                                               may be costly (a table that stores no
//                                               fingerprint rehashes the element).
//   void Move(size_t from, size_t to);          `to` takes the element at `from`, which may be
//                                               left as it is (Erase only).
//   void Free(size_t pos);                      (Erase only).
//
// What the tables share, and what they do not:
//   KeyTable, SetHashTable: the same slot word, fingerprint:u32 | (arena_offset + 1):u32 with
//     0 = free, in a wrapping array (OffsetSlots below). They share all of it: Find, insertion,
//     Erase, the re-insertion in slot order that rebuilds the array on a resize, the SCAN walk.
//   HashTable: slot = 16-bit tag | blob pointer, 0 = free. It stores no fingerprint
//     (FingerprintAt rehashes the field) and its array does not wrap: it has an overflow tail,
//     and an insert that would run off it (FindFree returns kNotFound) makes the table grow. It
//     shares Find, FindFree, Erase and the SCAN walk. Its rebuild stays its own: it rehashes
//     every field and may have to retry larger when a probe runs off the new tail.
//   Not shared, because they differ: when to resize and to what (KeyTable: max load 7/8, grows
//     by 1.25x, shrinks to load 5/8 below 1/4; SetHashTable: load kept in [1/5, 4/5], resizes to
//     load 1/2; HashTable: max load 4/5, grows by 1.5x, shrinks to load 1/2 below 1/8: memory per
//     element is tuned per table), how each allocates its array, what a slot's payload refers to
//     and how elements are compared, and the end cursor callers see (HashTable::Scan says 0).
//
// Complexity: at a load bounded below 1, Find, FindFree and Erase take O(1) expected (the length
// of a probe run). A SCAN step looks at O(count / load + the run it stops in) slots expected.
//
// Thread-safety: none. These functions read and write the caller's slot array; callers hold the
// lock that guards their table (the owning shard's lock).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>

namespace gigakv::open_addressing {

// What Find and FindFree return when there is no such slot.
inline constexpr size_t kNotFound = SIZE_MAX;
// The cursor past the last fingerprint: Scan returns it when the table is done.
inline constexpr uint64_t kScanEnd = uint64_t{1} << 32;

template <typename Slots>
concept SlotArray = requires(const Slots& slots, size_t pos) {
  { Slots::kWraps } -> std::convertible_to<bool>;
  { slots.capacity() } -> std::same_as<size_t>;
  { slots.length() } -> std::same_as<size_t>;
  { slots.IsFree(pos) } -> std::same_as<bool>;
  { slots.FingerprintAt(pos) } -> std::same_as<uint32_t>;
};

template <typename Slots>
concept MutableSlotArray = SlotArray<Slots> && requires(Slots& slots, size_t pos) {
  slots.Move(pos, pos);
  slots.Free(pos);
};

inline size_t Home(uint32_t fingerprint, size_t capacity) {
  return static_cast<size_t>((static_cast<uint64_t>(fingerprint) * capacity) >> 32);
}

// Moves `pos` to the next slot in probe order: false past the end of a non-wrapping array. (The
// loops of Find, FindFree and Erase spell this step out: the compiler keeps them tighter so.)
template <SlotArray Slots>
inline bool Advance(const Slots& slots, size_t* pos) {
  if (++*pos != slots.length()) return true;
  if constexpr (Slots::kWraps) {
    *pos = 0;
    return true;
  } else {
    return false;
  }
}

// Probes from `home` and returns the first occupied slot for which `filter(pos)` and then
// `match(pos)` are true, or kNotFound once a free slot (or the end of a non-wrapping array) comes
// first. `filter` is the cheap test on the slot alone (a stored fingerprint or tag) that rules out
// most other elements; `match` compares the element itself and is called only when `filter`
// passed. (Two predicates rather than one `filter && match`: the compiler then keeps the probe
// loop as tight as a hand-written one.) A wrapping array must have a free slot.
template <SlotArray Slots, typename Filter, typename Match>
inline size_t Find(const Slots& slots, size_t home, Filter&& filter, Match&& match) {
  for (size_t pos = home;;) {
    if (slots.IsFree(pos)) return kNotFound;
    if (filter(pos)) {
      if (match(pos)) return pos;
    }
    if (++pos == slots.length()) {
      if constexpr (Slots::kWraps) {
        pos = 0;
      } else {
        return kNotFound;
      }
    }
  }
}

// The first free slot at or after `home` (where an element with that home is inserted), or
// kNotFound when a non-wrapping array has none before its end. A wrapping array must have one.
template <SlotArray Slots>
inline size_t FindFree(const Slots& slots, size_t home) {
  size_t pos = home;
  while (!slots.IsFree(pos)) {
    if (++pos == slots.length()) {
      if constexpr (Slots::kWraps) {
        pos = 0;
      } else {
        return kNotFound;
      }
    }
  }
  return pos;
}

// The first occupied slot at or after `start` (< length()), wrapping for a wrapping array;
// kNotFound if there is none. For sampling. O(length()) at worst.
template <SlotArray Slots>
inline size_t NextOccupied(const Slots& slots, size_t start) {
  size_t pos = start;
  for (size_t i = 0; i < slots.length(); ++i) {
    if (!slots.IsFree(pos)) return pos;
    if (!Advance(slots, &pos)) break;
  }
  return kNotFound;
}

// Removes the element at occupied slot `pos` by backward shift: each later element of the probe
// run moves back into the hole when the hole lies on its probe path (between its home and its
// slot), and the last hole is freed. The probe invariant holds afterwards, so Find needs no
// tombstones; the run keeps its order. O(length of the run after `pos`).
template <MutableSlotArray Slots>
inline void Erase(Slots& slots, size_t pos) {
  const size_t capacity = slots.capacity();
  size_t hole = pos;
  for (size_t next = pos;;) {
    if (++next == slots.length()) {
      if constexpr (Slots::kWraps) {
        next = 0;
      } else {
        break;
      }
    }
    if (slots.IsFree(next)) break;
    const size_t home = Home(slots.FingerprintAt(next), capacity);
    // The element stays unless its home lies outside the cyclic range (hole, next]. Without
    // wrap-around, home <= next always holds.
    bool stays;
    if constexpr (Slots::kWraps) {
      stays = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next);
    } else {
      stays = home > hole;
    }
    if (!stays) {
      slots.Move(next, hole);
      hole = next;
    }
  }
  slots.Free(hole);
}

// One SCAN step: calls `emit(pos)` for the slot of every element whose fingerprint lies in
// [cursor, next), in walk order (slot order from Home(cursor), wrapping), and returns `next`
// (> cursor), or kScanEnd when no fingerprint at or past `cursor` is left. At least `count`
// elements are emitted unless kScanEnd is returned: the walk goes on to the end of the probe run
// in which it saw the count-th. `cursor` >= kScanEnd returns kScanEnd at once. `emit` must not
// change the array; emit(pos) comes right after the FingerprintAt(pos) call for that slot, so a
// policy may keep what it decoded there for `emit`.
//
// Cursor semantics: a cursor is a fingerprint position, independent of the capacity. A scan
// starts at 0 and ends when kScanEnd is returned. The ranges [cursor, next) of successive steps
// are disjoint and cover [0, 2^32), and fingerprints never change, so every element present for
// the whole scan is returned at least once (in fact exactly once), whatever inserts, erases and
// resizes happen between steps; elements added or removed during the scan may or may not be.
//
// Why the range is complete: elements with fingerprint >= cursor have homes >= Home(cursor). The
// walk stops at a free slot, so (probe invariant) every element whose home lies before that slot
// has been visited: [cursor, ceil(stop * 2^32 / capacity)) is complete. In a wrapping array a walk
// that passes the end goes on past the front until a free slot, and covers everything up to
// kScanEnd; an element is counted once, at its unwrapped position (home plus displacement), so
// front elements seen again after wrapping are skipped. Progress: next > cursor, also for
// count == 0 (an empty home slot means no element has the cursor's fingerprint).
template <SlotArray Slots, typename Emit>
uint64_t Scan(const Slots& slots, uint64_t cursor, size_t count, Emit&& emit) {
  if (cursor >= kScanEnd) return kScanEnd;
  const size_t capacity = slots.capacity();
  const size_t start = Home(static_cast<uint32_t>(cursor), capacity);
  size_t seen = 0;
  size_t logical = start;  // Position in the unwrapped walk: start, start + 1, ...
  size_t pos = start;      // Its slot.
  while (true) {
    if constexpr (Slots::kWraps) {
      if (logical - start >= 2 * capacity) break;  // Defensive: the array has no free slot.
    }
    if (slots.IsFree(pos)) {
      if (seen >= count || logical >= capacity) break;
    } else {
      const uint32_t fingerprint = slots.FingerprintAt(pos);
      bool first_visit = true;
      if constexpr (Slots::kWraps) {
        const size_t home = Home(fingerprint, capacity);
        first_visit = (pos >= home ? pos : pos + capacity) == logical;
      }
      if (fingerprint >= cursor && first_visit) {
        emit(pos);
        ++seen;
      }
    }
    ++logical;
    if (!Advance(slots, &pos)) break;
  }
  if (logical >= capacity) return kScanEnd;
  // The smallest fingerprint whose home is >= logical: ceil(logical * 2^32 / capacity).
  const uint64_t boundary = ((static_cast<uint64_t>(logical) << 32) + capacity - 1) / capacity;
  return boundary > cursor ? boundary : cursor + 1;
}

// The slot array of KeyTable and SetHashTable (docs/store-format.md), a view of `capacity` 8-byte
// words, wrapping around:
//
//   word := fingerprint:u32 (bits 63-32) | (arena_offset + 1):u32 (bits 31-0); 0 = free
//
// Offsets are below UINT32_MAX. The fingerprint is stored: FingerprintAt is a load, and a resize
// re-inserts words without reading any element.
class OffsetSlots {
 public:
  static constexpr bool kWraps = true;

  OffsetSlots(uint64_t* words, size_t capacity) : words_(words), capacity_(capacity) {}

  static uint64_t MakeWord(uint32_t fingerprint, size_t offset) {
    return (static_cast<uint64_t>(fingerprint) << 32) | (static_cast<uint64_t>(offset) + 1);
  }
  static uint64_t WithOffset(uint64_t word, size_t offset) {
    return (word & 0xffffffff00000000ULL) | (static_cast<uint64_t>(offset) + 1);
  }
  static uint32_t FingerprintOf(uint64_t word) { return static_cast<uint32_t>(word >> 32); }
  static uint32_t OffsetOf(uint64_t word) { return static_cast<uint32_t>(word) - 1; }

  size_t capacity() const { return capacity_; }
  size_t length() const { return capacity_; }
  bool IsFree(size_t pos) const { return words_[pos] == 0; }
  uint32_t FingerprintAt(size_t pos) const { return FingerprintOf(words_[pos]); }
  void Move(size_t from, size_t to) { words_[to] = words_[from]; }
  void Free(size_t pos) { words_[pos] = 0; }

  size_t Home(uint32_t fingerprint) const { return open_addressing::Home(fingerprint, capacity_); }

  // The slot of the element with `fingerprint` for which `match(word)` is true, or kNotFound.
  // The array must not be empty (capacity > 0) and must have a free slot.
  template <typename Match>
  size_t Find(uint32_t fingerprint, Match&& match) const {
    return open_addressing::Find(
        *this, Home(fingerprint), [&](size_t pos) { return FingerprintAt(pos) == fingerprint; },
        [&](size_t pos) { return match(words_[pos]); });
  }

  // Stores `word` in the first free slot from its home and returns the slot. There must be one.
  size_t Insert(uint64_t word) {
    const size_t pos = FindFree(*this, Home(FingerprintOf(word)));
    words_[pos] = word;
    return pos;
  }

  // Inserts the words of `old` (`old_capacity` slots, 0 = free) in slot order, which is how a
  // resize rebuilds the array: this array must be all free and have room. O(old_capacity)
  // expected.
  void InsertAll(const uint64_t* old, size_t old_capacity) {
    for (size_t i = 0; i < old_capacity; ++i) {
      if (old[i] != 0) Insert(old[i]);
    }
  }

 private:
  uint64_t* words_;
  size_t capacity_;
};

}  // namespace gigakv::open_addressing
