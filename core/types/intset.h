// Intset: a sorted array of distinct int64 values in one contiguous heap buffer, stored at the
// narrowest width (2, 4 or 8 bytes) that fits every value. The small encoding of sets whose
// members are all integers ("intset" in OBJECT ENCODING). Not thread-safe; owned by one set and
// used under its shard's lock.
//
// Byte format (native byte order; the buffer never leaves the process):
//
//   intset := width:u32 count:u32 value{count}
//   value  := int16 | int32 | int64          (all of `width` bytes), strictly ascending
//
// The width only grows: adding a value that does not fit re-encodes every value at the wider
// width (the new value is then the first or the last). An empty intset holds no buffer (8 bytes:
// the pointer). Complexity: Contains O(log n), Add/Remove O(n) (memmove), Get O(1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gigakv {

class Intset {
 public:
  Intset() = default;
  ~Intset();
  Intset(Intset&& other) noexcept : data_(other.data_) { other.data_ = nullptr; }
  Intset& operator=(Intset&& other) noexcept;
  Intset(const Intset&) = delete;
  Intset& operator=(const Intset&) = delete;
  Intset Clone() const;
  // An intset holding a copy of `bytes`, a buffer as raw() returns it (the format above; empty
  // for an empty intset). The bytes are trusted, not validated.
  static Intset FromBytes(std::string_view bytes);
  // The whole buffer, empty when the intset is empty. Valid until the next mutation.
  std::string_view raw() const;

  size_t size() const;
  bool empty() const { return data_ == nullptr; }
  // Bytes per value: 2, 4 or 8 (2 when empty).
  size_t width() const;
  // Buffer size in bytes (0 when empty), for memory accounting.
  size_t bytes() const;

  bool Contains(int64_t value) const;
  // Contains() on a buffer as raw() returns it, read in place (inline records). O(log n).
  static bool RawContains(std::string_view raw, int64_t value);
  // Inserts `value` in order; false if it was already present.
  bool Add(int64_t value);
  // Removes `value`; false if it was absent. Frees the buffer when the last value goes.
  bool Remove(int64_t value);
  // The value at `index` in ascending order; index < size().
  int64_t Get(size_t index) const;
  // Removes the value at `index`; index < size().
  void RemoveAt(size_t index);
  int64_t Min() const { return Get(0); }
  int64_t Max() const { return Get(size() - 1); }
  void Clear();

  // The width needed to hold `value`.
  static size_t WidthFor(int64_t value);

 private:
  static constexpr size_t kHeader = 8;
  // Binary search: true and *index = position if found, else *index = insertion point.
  bool Search(int64_t value, size_t* index) const;
  void Set(size_t index, int64_t value);
  void SetCount(size_t count);
  // Re-encodes at `width` with room for `count` values.
  void Upgrade(size_t new_width, size_t count);

  uint8_t* data_ = nullptr;  // Owned; malloc'd; nullptr when empty.
};

}  // namespace gigakv
