// Strict number text parsing and formatting for values and command arguments, matching
// Redis's string2ll / string2ld / ld2string rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gigakv {

// Redis's string2ll: optional '-', decimal digits, no leading zeros (except "0"), no spaces,
// no '+', must fit in int64. Returns false otherwise.
bool ParseInt64(std::string_view text, int64_t* value);

// Redis's string2d-like parsing for doubles given by clients ("1.5", "inf", "-inf", "1e10").
// Rejects empty text, leading spaces, trailing garbage and NaN.
bool ParseDouble(std::string_view text, double* value);

// Redis's string2ld for long doubles (INCRBYFLOAT). Rejects NaN, leading spaces and garbage.
bool ParseLongDouble(std::string_view text, long double* value);

// Redis's ld2string in humanfriendly mode: "%.17Lf" with trailing zeros (and a trailing '.')
// stripped; used by INCRBYFLOAT and HINCRBYFLOAT. Returns false for inf/NaN.
bool FormatLongDouble(long double value, std::string* out);
// Drops the trailing zeros of a decimal fraction, then a dot left alone ("1.500" -> "1.5",
// "2.000" -> "2"); text without a dot is left as it is.
void StripTrailingDecimalZeros(std::string* text);

}  // namespace gigakv
