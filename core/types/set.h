// Set: Redis's set type, an unordered collection of distinct byte strings, in three encodings
// (OBJECT ENCODING names):
//
//   "intset"    every member is the canonical decimal text of an int64 and there are at most
//               set-max-intset-entries of them: an Intset (sorted array, 2/4/8-byte values).
//   "listpack"  at most set-max-listpack-entries members of at most set-max-listpack-value bytes:
//               a Listpack, one entry per member, unordered.
//   "hashtable" anything larger: a SetHashTable (below).
//
// Conversions go one way (intset -> listpack or hashtable, listpack -> hashtable) and follow
// Redis 7.2's setTypeAdd: an intset that gets a non-integer member becomes a listpack when the
// listpack limits allow it (counting the new member), else a hashtable; an intset that outgrows
// set-max-intset-entries becomes a hashtable. Redis 7.0 has no listpack sets (it says "hashtable"
// for small non-integer sets); we keep the listpack, it is several times smaller.
//
// Threading: not thread-safe; owned by one record and used under its shard's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <variant>

#include "absl/functional/function_ref.h"
#include "core/types/intset.h"
#include "core/types/listpack.h"
#include "gigakv/object.h"

namespace gigakv {

// The hashtable encoding: a flat open-addressing table (linear probing, backward-shift deletion)
// of 8-byte slots referring to members stored back to back in one heap arena:
//
//   slot   := fingerprint:u32 (high) | (arena_offset + 1):u32 (low); 0 = empty
//   arena  := entry*                         (entries of erased members stay as dead bytes
//                                              until the arena is compacted)
//   entry  := length:varint bytes{length}    (varint: 7 bits per byte, low bits first, the high
//                                              bit set on every byte but the last)
//
// fingerprint = upper 32 bits of the member's 64-bit hash. The home slot is
// (fingerprint * capacity) >> 32, so slots are ordered by fingerprint and a scan cursor (a
// fingerprint) stays meaningful across resizes; the probing, deletion and scan walk are
// KeyTable's (core/open_addressing.h). Load is kept in [1/5, 4/5]
// (resizing to 1/2); the arena is compacted when more than half of it is dead. Per member: its
// bytes + 1..5 (the entry) plus 10 to 40 bytes of slots, about 16 on average, and no per-member
// malloc. Lookups O(1) expected. Member bytes are limited to 4 GiB per set (32-bit offsets).
class SetHashTable {
 public:
  static constexpr uint64_t kScanEnd = 1ULL << 32;

  // Room for `expected` members without growing.
  explicit SetHashTable(size_t expected = 0);
  ~SetHashTable();
  SetHashTable(const SetHashTable&) = delete;
  SetHashTable& operator=(const SetHashTable&) = delete;
  std::unique_ptr<SetHashTable> Clone() const;

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool Contains(std::string_view member) const;
  // False if already present.
  bool Insert(std::string_view member);
  // False if absent. `member` may point into this table (it is not read after it is found).
  bool Erase(std::string_view member);
  // The member at a uniformly random slot, or the next occupied one after it; the view is valid
  // until the next mutation. The table must not be empty.
  std::string_view RandomMember(uint64_t random) const;
  void ForEach(absl::FunctionRef<void(std::string_view)> fn) const;
  // Calls fn with every member whose fingerprint lies in [cursor, next), visiting about `count`
  // members; returns next (kScanEnd when done). Every member present for a whole pass is
  // returned, across resizes and compactions.
  uint64_t Scan(uint64_t cursor, size_t count, absl::FunctionRef<void(std::string_view)> fn) const;
  // Heap bytes held: the slot array and the arena.
  size_t MemoryUsage() const;

  static uint32_t Fingerprint(std::string_view member);

 private:
  std::string_view EntryAt(uint64_t slot_value) const;
  // The slot holding `member`, or open_addressing::kNotFound if absent.
  size_t Find(std::string_view member, uint32_t fingerprint) const;
  void Resize(size_t new_capacity);
  uint32_t AppendEntry(std::string_view member);  // Returns the entry's offset.
  void Compact();
  static size_t EntrySize(size_t length);

  uint64_t* slots_ = nullptr;  // Owned (malloc); capacity_ entries.
  size_t capacity_ = 0;
  size_t size_ = 0;
  uint8_t* arena_ = nullptr;  // Owned (malloc).
  size_t arena_used_ = 0;
  size_t arena_capacity_ = 0;
  size_t dead_bytes_ = 0;
};

class Set final : public Object {
 public:
  enum class Encoding : uint8_t { kIntset, kListpack, kHashtable };

  // An empty set in the encoding Redis 7.2's setTypeCreate chooses for `first_member` and a hint
  // of how many members will be added: intset for an integer when the hint fits
  // set-max-intset-entries, else listpack when the hint fits set-max-listpack-entries, else a
  // hashtable sized for the hint.
  static std::unique_ptr<Set> Create(std::string_view first_member, size_t size_hint,
                                     const CollectionLimits& limits);
  // An empty intset-encoded set (what the *STORE commands fill, converting as members come).
  Set() = default;
  // How many members an intset may hold under `limits`: set-max-intset-entries clamped to
  // [0, 2^30], as Redis's intsetMaxEntries.
  static size_t MaxIntsetEntries(const CollectionLimits& limits);

  KeyType type() const override { return KeyType::kSet; }
  std::string_view encoding_name() const override;
  size_t MemoryUsage() const override;
  size_t Length() const override;
  Object* Clone() const override;
  void ForEachElement(absl::FunctionRef<void(std::string_view)> fn) const override { ForEach(fn); }

  Encoding encoding() const { return static_cast<Encoding>(rep_.index()); }

  // A set in `encoding` (kIntset or kListpack) holding a copy of `bytes`, as CompactBytes()
  // returned them for that encoding.
  static std::unique_ptr<Set> FromCompact(Encoding encoding, std::string_view bytes);
  // While the set is non-empty in a compact encoding, the Intset's whole buffer (Intset::raw)
  // or the listpack's entries (DenseListpack::entries); else empty. Valid until the next
  // mutation.
  std::string_view CompactBytes() const;
  // Contains() on bytes as CompactBytes() returned them for `encoding` (kIntset or kListpack),
  // read in place: lets a command answer from an inline record without building the set.
  static bool CompactContains(Encoding encoding, std::string_view bytes, std::string_view member);
  bool empty() const { return Length() == 0; }

  // Adds `member`; false if it was present. Converts per the rules above. O(1) expected for the
  // hashtable, O(n) for the compact encodings (n bounded by the limits).
  bool Add(std::string_view member, const CollectionLimits& limits);
  bool Remove(std::string_view member);
  bool Contains(std::string_view member) const;

  // Calls fn with every member (unordered; intsets ascending). The view is valid during the call.
  void ForEach(absl::FunctionRef<void(std::string_view)> fn) const;

  // SSCAN step: calls fn with members and returns the next cursor (0 = done). The compact
  // encodings return everything at once with cursor 0, as Redis does; the hashtable uses
  // fingerprint cursors (every member present for the whole iteration is returned).
  uint64_t Scan(uint64_t cursor, size_t count, absl::FunctionRef<void(std::string_view)> fn) const;

  // SRANDMEMBER's rules for a count: count < 0 gives |count| members, repeats allowed;
  // count >= Length() gives every member; otherwise `count` distinct random members.
  // RandomCount tells how many fn will receive.
  size_t RandomCount(int64_t count) const;
  void RandomMembers(int64_t count, std::mt19937_64& rng,
                     absl::FunctionRef<void(std::string_view)> fn) const;
  // One random member (SRANDMEMBER without count). The set must not be empty.
  std::string RandomMember(std::mt19937_64& rng) const;

  // Removes `count` (< Length()) distinct random members, handing each to fn before it is freed.
  void PopRandom(size_t count, std::mt19937_64& rng, absl::FunctionRef<void(std::string_view)> fn);

  // Exchanges contents (and encodings) with `other`.
  void Swap(Set& other) { rep_.swap(other.rep_); }

  // Test hooks: the underlying structures.
  const Intset* intset() const { return std::get_if<Intset>(&rep_); }
  const SetHashTable* hashtable() const {
    auto* table = std::get_if<std::unique_ptr<SetHashTable>>(&rep_);
    return table == nullptr ? nullptr : table->get();
  }

 private:
  void ConvertToHashtable(size_t expected);
  void ConvertToListpack();

  // The index order matches Encoding.
  std::variant<Intset, DenseListpack, std::unique_ptr<SetHashTable>> rep_;
};

// True when `text` is the canonical decimal text of an int64 (Redis's string2ll: no leading
// zeros or '+', "-0" is not), which intsets store as integers.
bool ParseCanonicalInt64(std::string_view text, int64_t* value);

}  // namespace gigakv
