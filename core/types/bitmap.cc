#include "core/types/bitmap.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>

#include "gigakv/numbers.h"

namespace gigakv {
namespace {

inline uint8_t ByteAt(std::string_view bytes, uint64_t index) {
  return static_cast<uint8_t>(bytes[static_cast<size_t>(index)]);
}

inline uint64_t LoadWord(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof(word));
  return word;
}

// Mask of the bits of one byte at in-byte positions [from, to] (0 = most significant).
inline uint8_t ByteMask(unsigned from, unsigned to) {
  return static_cast<uint8_t>((0xFFu >> from) & (0xFFu << (7 - to)));
}

uint64_t PopCountBytes(const char* p, size_t count) {
  uint64_t bits = 0;
  // Four independent accumulators let the CPU overlap the popcounts.
  uint64_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  while (count >= 32) {
    c0 += static_cast<uint64_t>(std::popcount(LoadWord(p)));
    c1 += static_cast<uint64_t>(std::popcount(LoadWord(p + 8)));
    c2 += static_cast<uint64_t>(std::popcount(LoadWord(p + 16)));
    c3 += static_cast<uint64_t>(std::popcount(LoadWord(p + 24)));
    p += 32;
    count -= 32;
  }
  bits = c0 + c1 + c2 + c3;
  while (count >= 8) {
    bits += static_cast<uint64_t>(std::popcount(LoadWord(p)));
    p += 8;
    count -= 8;
  }
  while (count-- > 0) bits += static_cast<uint64_t>(std::popcount(static_cast<uint8_t>(*p++)));
  return bits;
}

}  // namespace

bool GetBit(std::string_view bytes, uint64_t offset) {
  uint64_t byte = offset >> 3;
  if (byte >= bytes.size()) return false;
  return (ByteAt(bytes, byte) >> (7 - (offset & 7))) & 1;
}

bool SetBit(std::string& bytes, uint64_t offset, bool value) {
  uint64_t byte = offset >> 3;
  assert(byte < bytes.size());
  auto& cell = reinterpret_cast<uint8_t&>(bytes[static_cast<size_t>(byte)]);
  uint8_t mask = static_cast<uint8_t>(1u << (7 - (offset & 7)));
  bool old = (cell & mask) != 0;
  cell = value ? static_cast<uint8_t>(cell | mask) : static_cast<uint8_t>(cell & ~mask);
  return old;
}

bool NormalizeRange(int64_t length, int64_t* start, int64_t* end) {
  // Redis's order of clamps (bitcountCommand): both ends from the end first, then into range.
  if (*start < 0) *start = length + *start;
  if (*end < 0) *end = length + *end;
  if (*start < 0) *start = 0;
  if (*end < 0) *end = 0;
  if (*end >= length) *end = length - 1;
  return *start <= *end;
}

uint64_t CountBits(std::string_view bytes) { return PopCountBytes(bytes.data(), bytes.size()); }

uint64_t CountBits(std::string_view bytes, uint64_t first, uint64_t last) {
  assert(first <= last && (last >> 3) < bytes.size());
  uint64_t first_byte = first >> 3, last_byte = last >> 3;
  unsigned head = static_cast<unsigned>(first & 7), tail = static_cast<unsigned>(last & 7);
  if (first_byte == last_byte) {
    return static_cast<uint64_t>(
        std::popcount(static_cast<uint8_t>(ByteAt(bytes, first_byte) & ByteMask(head, tail))));
  }
  uint64_t count = static_cast<uint64_t>(
      std::popcount(static_cast<uint8_t>(ByteAt(bytes, first_byte) & ByteMask(head, 7))));
  count += static_cast<uint64_t>(
      std::popcount(static_cast<uint8_t>(ByteAt(bytes, last_byte) & ByteMask(0, tail))));
  count +=
      PopCountBytes(bytes.data() + first_byte + 1, static_cast<size_t>(last_byte - first_byte - 1));
  return count;
}

int64_t FindBit(std::string_view bytes, bool bit, uint64_t first, uint64_t last) {
  assert(first <= last && (last >> 3) < bytes.size());
  uint64_t first_byte = first >> 3, last_byte = last >> 3;
  // Looking for a 0 is looking for a 1 in the complement; `flip` complements each byte read.
  uint8_t flip = bit ? 0 : 0xFF;
  auto first_one = [](uint8_t byte) { return std::countl_zero(byte); };
  for (uint64_t index = first_byte; index <= last_byte;) {
    unsigned from = index == first_byte ? static_cast<unsigned>(first & 7) : 0;
    unsigned to = index == last_byte ? static_cast<unsigned>(last & 7) : 7;
    if (from == 0 && to == 7 && index + 8 <= last_byte) {
      // Whole words in the middle: skip those holding nothing of interest 8 bytes at a time.
      uint64_t word = LoadWord(bytes.data() + index);
      if ((bit ? word : ~word) == 0) {
        index += 8;
        continue;
      }
    }
    uint8_t byte = static_cast<uint8_t>((ByteAt(bytes, index) ^ flip) & ByteMask(from, to));
    if (byte != 0) return static_cast<int64_t>(index * 8 + static_cast<uint64_t>(first_one(byte)));
    ++index;
  }
  return -1;
}

std::string BitOperation(BitOp op, const std::vector<std::string_view>& sources) {
  assert(!sources.empty() && (op != BitOp::kNot || sources.size() == 1));
  size_t max_len = 0;
  for (std::string_view source : sources) max_len = std::max(max_len, source.size());
  std::string result(max_len, '\0');
  if (max_len == 0) return result;
  auto* out = reinterpret_cast<uint8_t*>(result.data());
  if (op == BitOp::kNot) {
    for (size_t i = 0; i < max_len; ++i) out[i] = static_cast<uint8_t>(~ByteAt(sources[0], i));
    return result;
  }
  auto combine = [op](uint8_t a, uint8_t b) -> uint8_t {
    switch (op) {
      case BitOp::kAnd:
        return a & b;
      case BitOp::kOr:
        return a | b;
      default:
        return a ^ b;
    }
  };
  // One pass per source over contiguous memory, which the compiler vectorizes. Bytes past the end
  // of a source count as zero.
  // (A missing key is an empty view whose data() may be null: memcpy must not see it.)
  if (!sources[0].empty()) std::memcpy(out, sources[0].data(), sources[0].size());
  for (size_t s = 1; s < sources.size(); ++s) {
    std::string_view source = sources[s];
    const auto* in = reinterpret_cast<const uint8_t*>(source.data());
    size_t i = 0;
    for (; i < source.size(); ++i) out[i] = combine(out[i], in[i]);
    if (op == BitOp::kAnd) std::fill(out + i, out + max_len, 0);  // x AND 0 = 0.
    // OR and XOR with zero bytes leave the result unchanged.
  }
  return result;
}

// --- Bitfields ---------------------------------------------------------------------------------

bool ParseBitfieldType(std::string_view text, BitfieldType* type) {
  if (text.empty() || (text[0] != 'i' && text[0] != 'u')) return false;
  std::string_view digits = text.substr(1);
  digits = digits.substr(0, digits.find('\0'));  // Redis parses the rest as a C string.
  int64_t bits;
  if (!ParseInt64(digits, &bits)) return false;
  bool is_signed = text[0] == 'i';
  if (bits < 1 || bits > (is_signed ? 64 : 63)) return false;
  type->is_signed = is_signed;
  type->bits = static_cast<int>(bits);
  return true;
}

uint64_t GetUnsignedField(std::string_view bytes, uint64_t offset, int bits) {
  assert(bits >= 1 && bits <= 64);
  // Up to 64 bits starting anywhere in a byte span at most 9 bytes: copy them zero-padded.
  uint8_t buf[9] = {};
  uint64_t first = offset >> 3;
  for (uint64_t i = 0; i < 9 && first + i < bytes.size(); ++i) buf[i] = ByteAt(bytes, first + i);
  uint64_t high = 0;
  for (int i = 0; i < 8; ++i) high = (high << 8) | buf[i];
  unsigned shift = static_cast<unsigned>(offset & 7);
  if (shift != 0) high = (high << shift) | (buf[8] >> (8 - shift));
  return high >> (64 - bits);
}

int64_t GetSignedField(std::string_view bytes, uint64_t offset, int bits) {
  uint64_t value = GetUnsignedField(bytes, offset, bits);
  if (bits < 64 && (value >> (bits - 1)) & 1) value |= ~uint64_t{0} << bits;  // Sign-extend.
  return static_cast<int64_t>(value);
}

void SetField(std::string& bytes, uint64_t offset, int bits, uint64_t value) {
  assert(bits >= 1 && bits <= 64 &&
         ((offset + static_cast<uint64_t>(bits) - 1) >> 3) < bytes.size());
  for (int j = 0; j < bits; ++j) {
    SetBit(bytes, offset + static_cast<uint64_t>(j), (value >> (bits - 1 - j)) & 1);
  }
}

// The arithmetic below mirrors Redis's checkUnsignedBitfieldOverflow / checkSignedBitfieldOverflow
// with its wrap-around made explicit (unsigned operations), so that out-of-range SET values give
// the very same results as redis-server.
int CheckUnsignedOverflow(uint64_t value, int64_t incr, int bits, BitfieldOverflow policy,
                          uint64_t* limit) {
  uint64_t max = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
  auto max_incr = static_cast<int64_t>(max - value);
  auto min_incr = static_cast<int64_t>(uint64_t{0} - value);
  auto wrap = [&] {
    uint64_t mask = bits == 64 ? 0 : ~uint64_t{0} << bits;
    *limit = (value + static_cast<uint64_t>(incr)) & ~mask;
  };
  if (value > max || (incr > 0 && incr > max_incr)) {
    if (policy == BitfieldOverflow::kWrap) wrap();
    if (policy == BitfieldOverflow::kSat) *limit = max;
    return 1;
  }
  if (incr < 0 && incr < min_incr) {
    if (policy == BitfieldOverflow::kWrap) {
      wrap();
      return 1;  // Redis reports a wrapped underflow as 1 too; only the sign of 0 matters.
    }
    if (policy == BitfieldOverflow::kSat) *limit = 0;
    return -1;
  }
  return 0;
}

int CheckSignedOverflow(int64_t value, int64_t incr, int bits, BitfieldOverflow policy,
                        int64_t* limit) {
  int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  int64_t min = -max - 1;
  auto max_incr = static_cast<int64_t>(static_cast<uint64_t>(max) - static_cast<uint64_t>(value));
  auto min_incr = static_cast<int64_t>(static_cast<uint64_t>(min) - static_cast<uint64_t>(value));
  auto wrap = [&] {
    uint64_t sum = static_cast<uint64_t>(value) + static_cast<uint64_t>(incr);
    if (bits < 64) {
      uint64_t mask = ~uint64_t{0} << bits;
      bool negative = (sum >> (bits - 1)) & 1;
      sum = negative ? sum | mask : sum & ~mask;
    }
    *limit = static_cast<int64_t>(sum);
  };
  if (value > max || (bits != 64 && incr > max_incr) ||
      (value >= 0 && incr > 0 && incr > max_incr)) {
    if (policy == BitfieldOverflow::kWrap) wrap();
    if (policy == BitfieldOverflow::kSat) *limit = max;
    return 1;
  }
  if (value < min || (bits != 64 && incr < min_incr) ||
      (value < 0 && incr < 0 && incr < min_incr)) {
    if (policy == BitfieldOverflow::kWrap) {
      wrap();
      return 1;
    }
    if (policy == BitfieldOverflow::kSat) *limit = min;
    return -1;
  }
  return 0;
}

namespace {

// SET and INCRBY share one path, as in Redis: compute the new value, apply the policy, write
// unless FAIL tripped.
BitfieldWrite BitfieldWriteGeneric(std::string& bytes, BitfieldType type, uint64_t offset,
                                   int64_t operand, bool is_incr, BitfieldOverflow policy) {
  BitfieldWrite result;
  if (type.is_signed) {
    int64_t old_value = GetSignedField(bytes, offset, type.bits);
    int64_t wrapped = 0;
    int64_t new_value;
    bool overflow;
    if (is_incr) {
      overflow = CheckSignedOverflow(old_value, operand, type.bits, policy, &wrapped) != 0;
      new_value = overflow ? wrapped
                           : static_cast<int64_t>(static_cast<uint64_t>(old_value) +
                                                  static_cast<uint64_t>(operand));
    } else {
      overflow = CheckSignedOverflow(operand, 0, type.bits, policy, &wrapped) != 0;
      new_value = overflow ? wrapped : operand;
    }
    if (overflow && policy == BitfieldOverflow::kFail) {
      result.failed = true;
      return result;
    }
    result.reply = is_incr ? new_value : old_value;
    SetField(bytes, offset, type.bits, static_cast<uint64_t>(new_value));
    result.changed = old_value != new_value;
    return result;
  }
  uint64_t old_value = GetUnsignedField(bytes, offset, type.bits);
  uint64_t wrapped = 0;
  uint64_t new_value;
  bool overflow;
  if (is_incr) {
    overflow = CheckUnsignedOverflow(old_value, operand, type.bits, policy, &wrapped) != 0;
    new_value = overflow ? wrapped : old_value + static_cast<uint64_t>(operand);
  } else {
    new_value = static_cast<uint64_t>(operand);
    overflow = CheckUnsignedOverflow(new_value, 0, type.bits, policy, &wrapped) != 0;
    if (overflow) new_value = wrapped;
  }
  if (overflow && policy == BitfieldOverflow::kFail) {
    result.failed = true;
    return result;
  }
  result.reply = static_cast<int64_t>(is_incr ? new_value : old_value);
  SetField(bytes, offset, type.bits, new_value);
  result.changed = old_value != new_value;
  return result;
}

}  // namespace

BitfieldWrite BitfieldSet(std::string& bytes, BitfieldType type, uint64_t offset, int64_t value,
                          BitfieldOverflow policy) {
  return BitfieldWriteGeneric(bytes, type, offset, value, /*is_incr=*/false, policy);
}

BitfieldWrite BitfieldIncrBy(std::string& bytes, BitfieldType type, uint64_t offset, int64_t incr,
                             BitfieldOverflow policy) {
  return BitfieldWriteGeneric(bytes, type, offset, incr, /*is_incr=*/true, policy);
}

}  // namespace gigakv
