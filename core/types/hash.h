// Hash: the value of a Redis hash key, a map from field to value (both byte strings).
//
// Two encodings, as in Redis, reported by OBJECT ENCODING:
//   "listpack"  : one Listpack holding field, value, field, value... in insertion order. Used
//                 while the hash has at most hash-max-listpack-entries fields and every field and
//                 value is at most hash-max-listpack-value bytes long.
//   "hashtable" : a HashTable (below): one malloc'd blob per field/value pair, referenced from a
//                 flat open-addressing array of tagged pointers.
// The conversion goes one way (listpack -> hashtable), never back, as in Redis.
//
// Complexity: lookups and updates are O(1) expected for "hashtable" and O(bytes) for "listpack"
// (a linear scan of at most hash-max-listpack-entries pairs); the conversion is O(n).
//
// Not thread-safe: owned by one record and used under its shard's lock. Views returned by the
// accessors point into the hash (or into a caller's scratch string) and are valid until the next
// mutation of the hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "core/types/listpack.h"
#include "gigakv/object.h"

namespace gigakv {

// The "hashtable" encoding: an open-addressing table of field/value blobs.
//
//   entry blob := varint(field_len) varint(value_len) field:bytes value:bytes   (one malloc)
//   slot       := tag:u16 (bits 63-48) | blob pointer (bits 47-0); 0 = empty
//   tag        := low 16 bits of the field's 64-bit hash (skips most blob reads on probes)
//   home slot  := (fingerprint * capacity) >> 32, fingerprint = upper 32 bits of the hash
//
// Linear probing without wrap-around: the slot array has `capacity` home slots plus a small
// overflow tail, and an entry never sits before its home; an insert that would run past the tail
// grows the table. Deletion shifts entries back (no tombstones). Maximum load 4/5, growth by
// 1.5x, shrink below 1/8. Because home slots are monotone in the fingerprint, a cursor that is a
// fingerprint position gives scans that survive resizes (see Scan). The probing, deletion and
// scan walk are shared with KeyTable and SetHashTable (core/open_addressing.h).
//
// Complexity: Find/Set/Erase O(1) expected; a resize rehashes every field, O(n).
class HashTable {
 public:
  using PairFn = absl::FunctionRef<void(std::string_view field, std::string_view value)>;

  HashTable() = default;
  ~HashTable();
  HashTable(const HashTable&) = delete;
  HashTable& operator=(const HashTable&) = delete;
  std::unique_ptr<HashTable> Clone() const;

  size_t size() const { return size_; }
  // Heap bytes held: the slot array plus every blob (estimated malloc chunk sizes).
  size_t MemoryUsage() const;

  // The value of `field`, or nullopt.
  std::optional<std::string_view> Find(std::string_view field) const;
  // Sets `field` to `value`; returns true when the field is new.
  bool Set(std::string_view field, std::string_view value);
  // Adds `field` (which must be absent) without checking for it.
  void InsertNew(std::string_view field, std::string_view value);
  // Removes `field`; returns whether it was present.
  bool Erase(std::string_view field);
  // Grows the table (one rehash) so that `entries` pairs fit without another resize.
  void Reserve(size_t entries);

  // Every pair, in slot order.
  void ForEach(PairFn fn) const;
  // Calls fn with every pair whose fingerprint lies in [cursor, next) and returns next (0 when
  // the iteration is complete). At least `count` pairs are visited unless the end comes first.
  // Every pair present for a whole iteration started with cursor 0 is returned exactly once,
  // whatever resizes happen between calls; fingerprints are never split between two calls.
  uint64_t Scan(uint64_t cursor, size_t count, PairFn fn) const;
  // Calls fn with one uniformly chosen pair (the table must not be empty); returns its slot.
  size_t RandomPair(std::mt19937_64& rng, PairFn fn) const;
  // The pair at `slot`, which must be occupied (as returned by RandomPair).
  void PairAt(size_t slot, PairFn fn) const;

 private:
  static constexpr uint64_t kPointerMask = (uint64_t{1} << 48) - 1;

  // Slot index holding `field` (hash given), or open_addressing::kNotFound.
  size_t FindSlot(std::string_view field, uint64_t hash) const;
  // Puts an existing blob into the array; false when it would run past the tail.
  bool Place(uint64_t hash, uint8_t* blob);
  void Rebuild(size_t capacity);
  void MaybeGrowFor(size_t entries);
  // InsertNew with the field's hash already computed.
  void InsertNewHashed(std::string_view field, std::string_view value, uint64_t hash);

  uint64_t* slots_ = nullptr;  // Owned (calloc); `length_` slots.
  size_t capacity_ = 0;        // Home slots; home positions are in [0, capacity_).
  size_t length_ = 0;          // capacity_ plus the overflow tail.
  size_t size_ = 0;
  size_t blob_bytes_ = 0;
};

class Hash final : public Object {
 public:
  using PairFn = HashTable::PairFn;

  Hash();
  ~Hash() override;
  Hash(const Hash&) = delete;
  Hash& operator=(const Hash&) = delete;

  KeyType type() const override { return KeyType::kHash; }
  std::string_view encoding_name() const override;
  size_t MemoryUsage() const override;
  size_t Length() const override;
  Object* Clone() const override;
  // Fields only, in iteration order.
  void ForEachElement(absl::FunctionRef<void(std::string_view)> fn) const override;

  bool is_listpack() const { return table_ == nullptr; }

  // A "listpack" hash holding a copy of `bytes`, as CompactBytes() returned them.
  static std::unique_ptr<Hash> FromListpack(std::string_view bytes);
  // The listpack's entries (DenseListpack::entries) while the hash is a non-empty "listpack",
  // else empty. Valid until the next mutation.
  std::string_view CompactBytes() const { return is_listpack() ? listpack_.entries() : ""; }
  // Whether `bytes` (as CompactBytes() returned them, e.g. an inline record) hold `field` with
  // exactly `value`, read in place without building the hash. O(n).
  static bool CompactHasValue(std::string_view bytes, std::string_view field,
                              std::string_view value);

  // Sets `field` to `value`; returns true when the field is new. Converts to "hashtable" first if
  // the field or value is longer than hash-max-listpack-value, and after inserting if the hash
  // has more than hash-max-listpack-entries fields.
  bool Set(std::string_view field, std::string_view value, const CollectionLimits& limits);
  // Sets `field` only when absent; returns whether it did.
  bool SetIfAbsent(std::string_view field, std::string_view value, const CollectionLimits& limits);

  // The value of `field` (a view into the hash, or into *scratch), or nullopt.
  std::optional<std::string_view> Get(std::string_view field, std::string* scratch) const;
  bool Contains(std::string_view field) const;
  // Byte length of the value of `field`, 0 when absent (HSTRLEN).
  size_t ValueLength(std::string_view field) const;
  // Removes `field`; returns whether it was present. The caller deletes an emptied hash.
  bool Delete(std::string_view field);

  // Every pair: insertion order for "listpack", slot order for "hashtable".
  void ForEach(PairFn fn) const;
  // HSCAN: "listpack" returns every pair and cursor 0; "hashtable" as HashTable::Scan.
  uint64_t Scan(uint64_t cursor, size_t count, PairFn fn) const;
  // HRANDFIELD: `count` pairs chosen at random. distinct = false: each pick is independent and
  // uniform (repeats allowed). distinct = true: min(count, size) different pairs; all of them,
  // in iteration order, when count >= size. O(count) expected, or O(size) when count is more than
  // a third of the size.
  void RandomPairs(uint64_t count, bool distinct, std::mt19937_64& rng, PairFn fn) const;

  // Switches to "hashtable" now (a no-op when already there). Set() does it by itself.
  void ConvertToTable();
  // Switches to "hashtable" sized for `fields` fields, so that adding that many rehashes
  // nothing (a loader that knows the count up front).
  void ConvertToTableFor(size_t fields);

 private:
  // Converts to "hashtable" when `text` is longer than hash-max-listpack-value.
  void ConvertIfTooLong(std::string_view text, const CollectionLimits& limits);

  DenseListpack listpack_;            // "listpack": field, value, field, value...
  std::unique_ptr<HashTable> table_;  // "hashtable" when set; listpack_ is then empty.
};

}  // namespace gigakv
