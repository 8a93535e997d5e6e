// The one varint coder of core's byte formats (key table records, hash pair blobs, set entries,
// zset element blobs; docs/store-format.md).
//
// Grammar:
//   varint := (1xxxxxxx)* 0xxxxxxx     -- 7 bits per byte, low bits first (LEB128)
// An unsigned 64-bit value takes 1 to 10 bytes; values below 128 take one.
//
// Readers trust their input: these formats live in memory the process wrote itself, so Get does
// no bounds checking (a decoder of bytes from outside must check them first).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gigakv::varint {

inline constexpr size_t kMaxBytes = 10;

// Bytes Put writes for `value`.
constexpr size_t Size(uint64_t value) {
  size_t size = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++size;
  }
  return size;
}

// Writes `value` at `p` (room for Size(value) bytes) and returns the byte after it.
template <typename Byte>
Byte* Put(Byte* p, uint64_t value) {
  static_assert(sizeof(Byte) == 1);
  while (value >= 0x80) {
    *p++ = static_cast<Byte>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  *p++ = static_cast<Byte>(value);
  return p;
}

// Reads the varint at `p` into *value and returns the byte after it.
template <typename Byte>
const Byte* Get(const Byte* p, uint64_t* value) {
  static_assert(sizeof(Byte) == 1);
  uint64_t result = 0;
  int shift = 0;
  while (true) {
    uint8_t byte = static_cast<uint8_t>(*p++);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
    shift += 7;
  }
  *value = result;
  return p;
}

}  // namespace gigakv::varint
