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

void AppendDecimal(std::string* out, int64_t value) {
  char buf[24];
  char* end = buf + sizeof(buf);
  char* p = end;
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  do {
    *--p = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0);
  if (value < 0) *--p = '-';
  out->append(p, static_cast<size_t>(end - p));
}

std::string DoubleReplyText(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  int len = std::snprintf(buf, sizeof(buf), "%.17g", value);
  return std::string(buf, static_cast<size_t>(len));
}

}  // namespace gigakv::protocol
