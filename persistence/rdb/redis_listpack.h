// Redis 7.0's listpack (its listpack.c), the byte layout inside RDB values of type
// HASH_LISTPACK, ZSET_LISTPACK and the packed nodes of LIST_QUICKLIST_2. Not gigakv's in-memory
// Listpack (core/types/listpack.h), whose layout differs: RDB values are transcoded entry by
// entry, into and out of the writer's and reader's buffers, with no allocation per entry.
//
//   listpack := total_bytes:u32 LE  count:u16 LE (65535 = unknown)  entry*  0xFF
//   entry    := encoding payload backlen
//   encoding := 0xxxxxxx                  uint 0..127
//             | 10xxxxxx str{x}           string of 0..63 bytes
//             | 110xxxxx y:u8             int13 (sign bit 0x10 of x), value x << 8 | y
//             | 1110xxxx y:u8 str{}       string of 64..4095 bytes, length x << 8 | y
//             | 0xF0 len:u32 LE str{len}  longer string
//             | 0xF1 i16 LE | 0xF2 i24 LE | 0xF3 i32 LE | 0xF4 i64 LE
//   backlen  := the byte length of (encoding payload), 7 bits per byte, most significant
//               first; every byte but the first has the high bit set (so it reads backwards).
// A value is stored as an integer exactly when it is the canonical text of an int64 (Redis's
// string2ll), in the smallest encoding that holds it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "core/types/listpack.h"

namespace gigakv::persistence::rdb {

// Appends one listpack to a string, entry by entry.
class RedisListpackBuilder {
 public:
  // Starts the listpack at the end of *out (which must outlive the builder).
  explicit RedisListpackBuilder(std::string* out);
  void Add(std::string_view value);
  void AddInteger(int64_t value);
  void Add(const ListpackEntry& entry) {
    entry.is_int ? AddInteger(entry.int_value) : Add(entry.str);
  }
  // Writes the terminator and the header's size and count. The builder is done afterwards.
  void Finish();
  uint32_t count() const { return count_; }

 private:
  void AddEncoded(const char* encoded, size_t size, std::string_view payload);

  std::string* out_;
  size_t start_;
  uint32_t count_ = 0;
};

// Validates `listpack` as Redis's lpValidateIntegrity(deep) does (header size, terminator, every
// entry's encoding and backlen inside the bounds, the count when known) and calls `fn` for each
// entry in order; entry strings are views into `listpack`. Stops at the first error (a reason)
// or at the first non-OK status from `fn`.
absl::Status ForEachRedisListpackEntry(std::string_view listpack,
                                       absl::FunctionRef<absl::Status(const ListpackEntry&)> fn);

}  // namespace gigakv::persistence::rdb
