// Parser for server replies (RESP2 and RESP3), used by the client library, tests and tools.
//
// Grammar: value = simple | error | integer | bulk | array | null | double | bool | map | set
//   | push | verbatim | bignum | attribute; aggregates are "<type><count>\r\n" followed by count
//   values (maps: 2*count). "$-1" and "*-1" are RESP2 nulls.
//
// Contract: ParseReply() parses one complete value from the start of `input`; it returns the
// number of bytes used, 0 if `input` holds only part of a value, or -1 on malformed input.
// Stateless; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gigakv::protocol {

struct RespValue {
  enum class Type {
    kSimpleString,
    kError,
    kInteger,
    kBulk,
    kNull,
    kArray,
    kMap,
    kSet,
    kPush,
    kDouble,
    kBool,
    kVerbatim,
    kBigNumber,
    kAttribute,
  };
  Type type = Type::kNull;
  std::string str;      // simple, error, bulk, verbatim (with "fmt:" prefix), bignum, double text
  int64_t integer = 0;  // integer, bool (0/1)
  std::vector<RespValue> elements;  // array/set/push; map: key, value, key, value...

  bool is_error() const { return type == Type::kError; }
  // A compact human-readable rendering, for test failure messages and tools.
  std::string DebugString() const;
};

int64_t ParseReply(std::string_view input, RespValue* out);

}  // namespace gigakv::protocol
