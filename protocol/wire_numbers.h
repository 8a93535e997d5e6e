// Integer text as it appears in RESP framing (counts and lengths) and in replies.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gigakv::protocol {

// Strict decimal int64: optional '-', digits, no leading zeros, no '+' or spaces (Redis's
// string2ll, which redis-server applies to multibulk and bulk lengths).
bool ParseRespInteger(std::string_view text, int64_t* value);

// Appends the decimal form of `value`.
void AppendDecimal(std::string* out, int64_t value);

// Writes the decimal form of `value` so that it ends just before `end`; returns where it starts.
// The caller provides at least kMaxDecimalChars bytes before `end`.
constexpr size_t kMaxDecimalChars = 20;  // "-9223372036854775808"
char* WriteDecimalBackward(char* end, int64_t value);

// "%.17g" as Redis prints doubles in replies; "inf" / "-inf" for infinities.
std::string DoubleReplyText(double value);

}  // namespace gigakv::protocol
