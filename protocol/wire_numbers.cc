#include "protocol/wire_numbers.h"

#include <cmath>
#include <cstdio>

namespace gigakv::protocol {

bool ParseRespInteger(std::string_view text, int64_t* value) {
  if (text.empty() || text.size() > 20) return false;
  size_t i = 0;
  bool negative = text[0] == '-';
  if (negative) {
    i = 1;
    if (text.size() == 1) return false;
  }
  if (text.size() == 1 && text[0] == '0') {
    *value = 0;
    return true;
  }
  if (text[i] < '1' || text[i] > '9') return false;
  uint64_t magnitude = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (magnitude > (UINT64_MAX - digit) / 10) return false;
    magnitude = magnitude * 10 + digit;
  }
  uint64_t limit = negative ? static_cast<uint64_t>(INT64_MAX) + 1 : INT64_MAX;
  if (magnitude > limit) return false;
  *value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

char* WriteDecimalBackward(char* end, int64_t value) {
  // Two digits per step from a table of "00".."99": half the divisions of one per digit.
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  char* p = end;
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  while (magnitude >= 100) {
    const char* pair = kPairs + 2 * (magnitude % 100);
    magnitude /= 100;
    *--p = pair[1];
    *--p = pair[0];
  }
  if (magnitude >= 10) {
    const char* pair = kPairs + 2 * magnitude;
    *--p = pair[1];
    *--p = pair[0];
  } else {
    *--p = static_cast<char>('0' + magnitude);
  }
  if (value < 0) *--p = '-';
  return p;
}

void AppendDecimal(std::string* out, int64_t value) {
  char buf[kMaxDecimalChars];
  char* end = buf + sizeof(buf);
  char* start = WriteDecimalBackward(end, value);
  out->append(start, static_cast<size_t>(end - start));
}

std::string DoubleReplyText(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  int len = std::snprintf(buf, sizeof(buf), "%.17g", value);
  return std::string(buf, static_cast<size_t>(len));
}

}  // namespace gigakv::protocol
