// Redis's older compact encodings, which gigakv only reads (from RDB values of old types; Redis
// 7.0 reads them too but no longer writes them). Each walker validates the bytes as Redis's deep
// integrity check does before the entries are used, and never reads outside the given bytes.
//
// ziplist (RDB types LIST_ZIPLIST, ZSET_ZIPLIST, HASH_ZIPLIST, and LIST_QUICKLIST nodes):
//   ziplist  := zlbytes:u32 LE  zltail:u32 LE  zllen:u16 LE (65535 = unknown)  entry*  0xFF
//   entry    := prevlen encoding payload
//   prevlen  := u8 (< 254) | 0xFE u32 LE           the byte length of the previous entry
//                                                   (0 for the first)
//   encoding := 00xxxxxx                            string of x bytes (0..63)
//             | 01xxxxxx y:u8                       string of x << 8 | y bytes (14 bits)
//             | 10______ len:u32 BE                 string of len bytes
//             | 0xC0 i16 LE | 0xD0 i32 LE | 0xE0 i64 LE | 0xF0 i24 LE | 0xFE i8
//             | 0xF1..0xFD                          immediate integer 0..12 (x - 0xF1), no payload
//   zltail is the offset of the last entry (of the header's end when there is none).
//
// zipmap (RDB type HASH_ZIPMAP, Redis < 2.6):
//   zipmap   := zmlen:u8 (254 = unknown)  pair*  0xFF
//   pair     := len field len free:u8 value unused{free}
//   len      := u8 (< 254) | 0xFE u32 LE (host order in Redis; little-endian in practice)
//
// intset (RDB type SET_INTSET): encoding:u32 LE (2, 4 or 8)  length:u32 LE  value{length}, each
// value a little-endian signed integer of `encoding` bytes, strictly ascending, length > 0.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "core/types/listpack.h"

namespace gigakv::persistence::rdb {

// Validates `ziplist` as Redis's ziplistValidateIntegrity(deep) does (header size and tail,
// terminator, every entry's encoding, bounds and prevlen, the count when known) and calls `fn`
// for each entry in order (strings are views into `ziplist`). Stops at the first problem (an
// error whose message is the reason) or the first non-OK status from `fn`; on an error `fn` may
// have seen some of the entries already.
absl::Status ForEachZiplistEntry(std::string_view ziplist,
                                 absl::FunctionRef<absl::Status(const ListpackEntry&)> fn);

// Validates `zipmap` as zipmapValidateIntegrity(deep) does (terminator, every pair inside the
// bounds, at least one pair, the count unless unknown) and calls `fn` with each pair.
absl::Status ForEachZipmapPair(
    std::string_view zipmap,
    absl::FunctionRef<absl::Status(std::string_view field, std::string_view value)> fn);

// Validates `intset` as intsetValidateIntegrity(deep) does (encoding, size, non-empty, strictly
// ascending); sets *count and *width on success.
absl::Status ValidateIntset(std::string_view intset, uint32_t* count, uint32_t* width);
// The value at `index` of an intset ValidateIntset accepted.
int64_t IntsetValueAt(std::string_view intset, uint32_t width, uint32_t index);

}  // namespace gigakv::persistence::rdb
