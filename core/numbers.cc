#include "gigakv/numbers.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gigakv {

bool ParseInt64(std::string_view text, int64_t* value) {
  if (text.empty() || text.size() > 20) return false;
  const bool negative = text[0] == '-';
  std::string_view digits = negative ? text.substr(1) : text;
  // No leading zeros, no "-0": only the canonical spelling is an integer (as Redis's string2ll).
  if (digits.empty() || (digits[0] == '0' && (digits.size() > 1 || negative))) return false;
  uint64_t magnitude = 0;
  if (digits.size() <= 19) {
    // 19 digits stay below 10^19 < 2^64: no overflow check per digit (a plain multiply-add
    // chain, which matters to INCR).
    for (char c : digits) {
      unsigned digit = static_cast<unsigned>(static_cast<unsigned char>(c)) - '0';
      if (digit > 9) return false;
      magnitude = magnitude * 10 + digit;
    }
  } else {
    for (char c : digits) {
      unsigned digit = static_cast<unsigned>(static_cast<unsigned char>(c)) - '0';
      if (digit > 9 || __builtin_mul_overflow(magnitude, uint64_t{10}, &magnitude) ||
          __builtin_add_overflow(magnitude, uint64_t{digit}, &magnitude)) {
        return false;
      }
    }
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (magnitude > limit) return false;
  *value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

namespace {
// strtod/strtold need a NUL-terminated buffer; client args are not.
constexpr size_t kMaxNumberText = 5 * 1024;
}  // namespace

bool ParseDouble(std::string_view text, double* value) {
  if (text.empty() || text.size() >= kMaxNumberText) return false;
  if (std::isspace(static_cast<unsigned char>(text[0]))) return false;
  char buf[kMaxNumberText];
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  double parsed = std::strtod(buf, &end);
  if (end != buf + text.size()) return false;
  if (errno == ERANGE &&
      (parsed == HUGE_VAL || parsed == -HUGE_VAL || std::fpclassify(parsed) == FP_ZERO)) {
    return false;
  }
  if (std::isnan(parsed)) return false;
  *value = parsed;
  return true;
}

bool ParseLongDouble(std::string_view text, long double* value) {
  if (text.empty() || text.size() >= kMaxNumberText) return false;
  if (std::isspace(static_cast<unsigned char>(text[0]))) return false;
  char buf[kMaxNumberText];
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  long double parsed = std::strtold(buf, &end);
  if (end != buf + text.size()) return false;
  if (errno == ERANGE &&
      (parsed == HUGE_VALL || parsed == -HUGE_VALL || std::fpclassify(parsed) == FP_ZERO)) {
    return false;
  }
  if (std::isnan(parsed)) return false;
  *value = parsed;
  return true;
}

bool FormatLongDouble(long double value, std::string* out) {
  if (std::isinf(value) || std::isnan(value)) return false;
  char buf[5 * 1024];
  int len = std::snprintf(buf, sizeof(buf), "%.17Lf", value);
  if (len <= 0 || static_cast<size_t>(len) >= sizeof(buf)) return false;
  out->assign(buf, static_cast<size_t>(len));
  StripTrailingDecimalZeros(out);
  if (*out == "-0") *out = "0";
  return true;
}

void StripTrailingDecimalZeros(std::string* text) {
  if (text->find('.') == std::string::npos) return;
  text->erase(text->find_last_not_of('0') + 1);
  if (!text->empty() && text->back() == '.') text->pop_back();
}

}  // namespace gigakv
