// Listpack: a compact sequence of entries (byte strings, with integer-looking strings stored as
// integers) in one contiguous heap buffer. The small encoding of hashes, sets and sorted sets and
// the node format of lists (quicklist). Not thread-safe; owned by one collection, used under its
// shard's lock.
//
// Byte format (all integers little-endian):
//
//   listpack   := total_bytes:u32 count:u32 entry* (no terminator; total_bytes bounds the walk)
//   entry      := encoding payload backlen
//   encoding   := 0b0xxxxxxx                     uint 0..127 in the low 7 bits, no payload
//               | 0b10xxxxxx                     string, length 0..63 in the low 6 bits
//               | 0b1100xxxx lenlo:u8            string, length 64..4095 (12 bits, high in xxxx)
//               | 0b11100000 len:u32             string, any longer length
//               | 0b11110001 v:i16               integer
//               | 0b11110010 v:i24               integer
//               | 0b11110011 v:i32               integer
//               | 0b11110100 v:i64               integer
//   backlen    := the byte length of (encoding payload) as a reverse varint: 7 bits per byte,
//                 read from the entry's last byte backwards; every byte but the one read last has
//                 the high bit set. 1 byte below 128, 2 below 16384, at most 5.
//
// Two variants share this format and code: Listpack (entries as above) and DenseListpack, whose
// entries have no backlen (entry := encoding payload), one byte or more less per entry. A
// DenseListpack walks backwards by walking forwards from the start (Last/Prev/Seek near the end
// are O(n)); it holds the small encodings of hashes, sets and sorted sets, which are bounded in
// size and walked forwards. Lists (quicklist nodes) use Listpack.
//
// A string is stored as an integer exactly when it is the canonical decimal text of an int64
// (no leading zeros or '+', "-0" is a string), so reading it back gives the same bytes.
//
// Positions (`Pos`) are byte offsets of entries and are invalidated by any mutation; mutators
// return the position that remains meaningful. An empty listpack holds no buffer (8 bytes: the
// pointer). Complexity: access by position O(1), by index O(n), insert/erase O(bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"

namespace gigakv {

// One entry as read: either an integer or a view into the listpack's buffer (valid until the
// next mutation).
struct ListpackEntry {
  bool is_int = false;
  int64_t int_value = 0;
  std::string_view str;

  // The entry's bytes: `str`, or the integer's decimal text written into `scratch`.
  std::string_view View(std::string* scratch) const;
  std::string ToString() const;
  bool Equals(std::string_view value) const;
  size_t Length() const;  // Byte length of the string form.
};

// kBacklen: whether entries end with a backlen (Listpack) or not (DenseListpack).
template <bool kBacklen>
class BasicListpack {
 public:
  using Pos = uint32_t;
  static constexpr Pos kEnd = UINT32_MAX;
  static constexpr Pos kFirstPos = 8;  // First() of every non-empty listpack (after the header).

  BasicListpack() = default;
  ~BasicListpack();
  BasicListpack(BasicListpack&& other) noexcept : data_(other.data_) { other.data_ = nullptr; }
  BasicListpack& operator=(BasicListpack&& other) noexcept;
  BasicListpack(const BasicListpack&) = delete;
  BasicListpack& operator=(const BasicListpack&) = delete;
  BasicListpack Clone() const;
  // A listpack holding a copy of `entries`, which must be entries as entries() returns them
  // (empty for an empty listpack); the header is rebuilt (counting the entries, O(n)). The bytes
  // are trusted, not validated.
  static BasicListpack FromEntries(std::string_view entries);
  // A listpack of `count` entries whose `body_size` bytes after the header are written by
  // `write_body` (trusted, not validated; count must match). List also uses it to hold a
  // compressed node: a buffer whose header is valid but whose body is opaque, on which only
  // size(), bytes(), entries() (the body), Clone() and destruction may be used.
  static BasicListpack Build(uint32_t count, size_t body_size,
                             absl::FunctionRef<void(char* body)> write_body);
  // The buffer without its header: every entry, back to back (empty when the listpack is empty).
  // With the entries' length, enough to rebuild the listpack. Valid until the next mutation.
  std::string_view entries() const;

  size_t size() const;  // Number of entries.
  bool empty() const { return size() == 0; }
  size_t bytes() const;  // Buffer size in bytes (0 when empty), for memory accounting.

  // Walking. First/Last return kEnd when empty; Next/Prev return kEnd past the ends.
  Pos First() const;
  Pos Last() const;
  Pos Next(Pos pos) const;
  Pos Prev(Pos pos) const;
  // The entry at `index` (negative counts from the end, -1 = last); kEnd when out of range.
  // O(n) from the nearer end.
  Pos Seek(int64_t index) const;

  ListpackEntry Get(Pos pos) const;
  bool EntryEquals(Pos pos, std::string_view value) const { return Get(pos).Equals(value); }

  // Finds the first entry equal to `value` among the entries at `start`, then every
  // (skip + 1)-th one after it (skip = 1 looks at the fields of field/value pairs). kEnd if none.
  Pos Find(std::string_view value, Pos start, size_t skip = 0) const;
  // Whether `entries` (bytes as entries() returns them) hold an entry equal to `value`, read in
  // place without building a listpack: for inline records. O(n).
  static bool EntriesContain(std::string_view entries, std::string_view value);
  // The number of entries in `entries` (bytes as entries() returns them). O(n).
  static size_t EntriesCount(std::string_view entries);
  // For entries holding key, value, key, value... (a hash's fields and values, a sorted set's
  // members and scores), read in place like EntriesContain: finds the pair whose key equals
  // `key` and sets *value to its second entry (a view into `entries`). False when absent. O(n).
  static bool EntriesFindPair(std::string_view entries, std::string_view key, ListpackEntry* value);
  // Calls fn with each entry of `entries` (bytes as entries() returns them) in order, read in
  // place: for encoders that transcode an inline record without building the collection. O(n).
  static void ForEachEntry(std::string_view entries,
                           absl::FunctionRef<void(const ListpackEntry&)> fn);

  // Inserts `value` before the entry at `before` (kEnd appends); returns the new entry's position.
  Pos Insert(Pos before, std::string_view value);
  Pos InsertInt(Pos before, int64_t value);
  void Append(std::string_view value) { Insert(kEnd, value); }
  void Prepend(std::string_view value) { Insert(First(), value); }
  // Replaces the entry at `pos`; returns its (unchanged) position.
  Pos Replace(Pos pos, std::string_view value);
  // Erases `count` entries starting at `pos` (fewer if the end comes first); returns the position
  // of the entry that followed them, or kEnd.
  Pos Erase(Pos pos, size_t count = 1);
  void Clear();

  // Bulk moves for list nodes (split and merge), O(bytes) with one memcpy: moves the entries from
  // `pos` to the end into the returned listpack (this keeps the ones before `pos`), and appends
  // all of `other`'s entries to this one (leaving `other` empty).
  BasicListpack SplitAt(Pos pos);
  void AppendAll(BasicListpack&& other);

  // Bytes an entry holding `value` would take (for size limits such as list-max-listpack-size).
  static size_t EntrySize(std::string_view value);

 private:
  uint8_t* Resize(size_t new_total);  // Keeps the header, updates total_bytes.
  uint32_t total() const;
  void SetCount(uint32_t count);
  Pos SpliceIn(Pos before, const uint8_t* encoded, size_t encoded_size);

  uint8_t* data_ = nullptr;  // Owned; malloc'd; nullptr when empty.
};

extern template class BasicListpack<true>;
extern template class BasicListpack<false>;
using Listpack = BasicListpack<true>;
using DenseListpack = BasicListpack<false>;

}  // namespace gigakv
