#include "core/types/bitmap.h"

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gigakv {
namespace {

// --- The model: one bool per bit, bit 0 = most significant bit of byte 0 ---------------------

std::vector<bool> ToBits(std::string_view bytes) {
  std::vector<bool> bits;
  for (unsigned char c : bytes) {
    for (int i = 7; i >= 0; --i) bits.push_back((c >> i) & 1);
  }
  return bits;
}

std::string FromBits(const std::vector<bool>& bits) {
  std::string bytes((bits.size() + 7) / 8, '\0');
  for (size_t i = 0; i < bits.size(); ++i) {
    if (bits[i]) bytes[i / 8] = static_cast<char>(bytes[i / 8] | (0x80 >> (i % 8)));
  }
  return bytes;
}

uint64_t ModelField(const std::vector<bool>& bits, uint64_t offset, int width) {
  uint64_t value = 0;
  for (int i = 0; i < width; ++i) {
    uint64_t at = offset + static_cast<uint64_t>(i);
    value = (value << 1) | (at < bits.size() && bits[at] ? 1 : 0);
  }
  return value;
}

std::string RandomBytes(std::mt19937_64& rng, size_t max_len) {
  std::string bytes(rng() % (max_len + 1), '\0');
  // Mix dense, sparse and constant bytes so that word-skipping paths get exercised.
  int style = static_cast<int>(rng() % 4);
  for (char& c : bytes) {
    uint8_t value = static_cast<uint8_t>(rng());
    if (style == 1) value = rng() % 16 == 0 ? value : 0;
    if (style == 2) value = rng() % 16 == 0 ? value : 0xFF;
    c = static_cast<char>(value);
  }
  return bytes;
}

// --- Fixed cases -------------------------------------------------------------------------------

TEST(BitmapTest, GetAndSetBitUseRedisBitOrder) {
  std::string bytes(2, '\0');
  EXPECT_FALSE(SetBit(bytes, 7, true));
  EXPECT_EQ(bytes, std::string("\x01\x00", 2));
  EXPECT_FALSE(SetBit(bytes, 8, true));
  EXPECT_EQ(bytes, std::string("\x01\x80", 2));
  EXPECT_TRUE(SetBit(bytes, 7, false));
  EXPECT_TRUE(GetBit(bytes, 8));
  EXPECT_FALSE(GetBit(bytes, 7));
  EXPECT_FALSE(GetBit(bytes, 1000));  // Past the end reads as zero.
  EXPECT_EQ(BytesForBit(0), 1u);
  EXPECT_EQ(BytesForBit(7), 1u);
  EXPECT_EQ(BytesForBit(8), 2u);
  EXPECT_EQ(BytesForBit(4294967295ULL), 536870912u);
}

TEST(BitmapTest, CountBitsMatchesRedisExamples) {
  // The BITCOUNT examples of the Redis documentation ("foobar").
  EXPECT_EQ(CountBits("foobar"), 26u);
  EXPECT_EQ(CountBits("foobar", 0, 7), 4u);
  EXPECT_EQ(CountBits("foobar", 8, 15), 6u);
  EXPECT_EQ(CountBits("foobar", 5, 30), 17u);
  EXPECT_EQ(CountBits(""), 0u);
}

TEST(BitmapTest, NormalizeRange) {
  int64_t start = 0, end = -1;
  EXPECT_TRUE(NormalizeRange(6, &start, &end));
  EXPECT_EQ(start, 0);
  EXPECT_EQ(end, 5);
  start = -100, end = -100;  // Both clamp to the first unit.
  EXPECT_TRUE(NormalizeRange(6, &start, &end));
  EXPECT_EQ(start, 0);
  EXPECT_EQ(end, 0);
  start = 3, end = 100;
  EXPECT_TRUE(NormalizeRange(6, &start, &end));
  EXPECT_EQ(end, 5);
  start = 7, end = 100;
  EXPECT_FALSE(NormalizeRange(6, &start, &end));
  start = 0, end = 0;
  EXPECT_FALSE(NormalizeRange(0, &start, &end));
  start = INT64_MIN, end = INT64_MAX;
  EXPECT_TRUE(NormalizeRange(16, &start, &end));
  EXPECT_EQ(start, 0);
  EXPECT_EQ(end, 15);
}

TEST(BitmapTest, FindBit) {
  std::string bytes("\xff\xf0\x00", 3);
  EXPECT_EQ(FindBit(bytes, false, 0, 23), 12);
  EXPECT_EQ(FindBit(bytes, true, 0, 23), 0);
  EXPECT_EQ(FindBit(bytes, true, 12, 23), -1);
  EXPECT_EQ(FindBit(bytes, false, 0, 11), -1);
  EXPECT_EQ(FindBit(bytes, true, 3, 3), 3);
  std::string zeros(100, '\0');
  zeros[77] = '\x01';
  EXPECT_EQ(FindBit(zeros, true, 0, 799), 77 * 8 + 7);
  EXPECT_EQ(FindBit(zeros, true, 0, 77 * 8 + 6), -1);
}

TEST(BitmapTest, BitOperation) {
  EXPECT_EQ(BitOperation(BitOp::kAnd, {"foo", "ab"}), std::string("`b\x00", 3));
  EXPECT_EQ(BitOperation(BitOp::kOr, {"foo", "ab", ""}), "goo");
  EXPECT_EQ(BitOperation(BitOp::kXor, {"foo", "ab"}), std::string("\x07\x0do", 3));
  EXPECT_EQ(BitOperation(BitOp::kNot, {"foo"}), std::string("\x99\x90\x90", 3));
  EXPECT_EQ(BitOperation(BitOp::kAnd, {"", ""}), "");
  EXPECT_EQ(BitOperation(BitOp::kNot, {""}), "");
}

TEST(BitmapTest, ParseBitfieldType) {
  BitfieldType type;
  ASSERT_TRUE(ParseBitfieldType("i64", &type));
  EXPECT_TRUE(type.is_signed);
  EXPECT_EQ(type.bits, 64);
  ASSERT_TRUE(ParseBitfieldType("u63", &type));
  EXPECT_FALSE(type.is_signed);
  EXPECT_EQ(type.bits, 63);
  ASSERT_TRUE(ParseBitfieldType(std::string_view("u8\0zz", 5), &type));  // C-string parse.
  EXPECT_EQ(type.bits, 8);
  for (std::string_view bad :
       {"u64", "i65", "u0", "i0", "U8", "I8", "x8", "u", "", "u+8", "u08", "u-1", "u8 "}) {
    EXPECT_FALSE(ParseBitfieldType(bad, &type)) << bad;
  }
}

TEST(BitmapTest, FieldsReadAndWriteAcrossBytes) {
  // Redis's example: a 5-bit unsigned 23 at offset 7 gives 00000001 01110000.
  std::string bytes(2, '\0');
  SetField(bytes, 7, 5, 23);
  EXPECT_EQ(bytes, std::string("\x01\x70", 2));
  EXPECT_EQ(GetUnsignedField(bytes, 7, 5), 23u);
  EXPECT_EQ(GetSignedField(bytes, 7, 5), -9);
  // Reads past the end are zero-padded, even a whole 64-bit field at an odd offset.
  std::string ones(3, '\xff');
  EXPECT_EQ(GetUnsignedField(ones, 20, 8), 0xF0u);
  EXPECT_EQ(GetUnsignedField(ones, 3, 63), ((uint64_t{1} << 21) - 1) << 42);
  EXPECT_EQ(GetSignedField(std::string(9, '\xff'), 5, 64), -1);
}

TEST(BitmapTest, OverflowPoliciesMatchRedis) {
  std::string bytes(8, '\0');
  BitfieldType i8{true, 8}, u8{false, 8}, i64{true, 64};
  // Replies observed from redis-server 7.0.15.
  EXPECT_EQ(BitfieldSet(bytes, u8, 0, 256, BitfieldOverflow::kWrap).reply, 0);
  EXPECT_EQ(GetUnsignedField(bytes, 0, 8), 0u);
  EXPECT_TRUE(BitfieldSet(bytes, u8, 0, 256, BitfieldOverflow::kFail).failed);
  BitfieldSet(bytes, u8, 0, 256, BitfieldOverflow::kSat);
  EXPECT_EQ(GetUnsignedField(bytes, 0, 8), 255u);
  BitfieldSet(bytes, u8, 0, -1, BitfieldOverflow::kSat);
  EXPECT_EQ(GetUnsignedField(bytes, 0, 8), 255u);
  BitfieldSet(bytes, i8, 0, -129, BitfieldOverflow::kWrap);
  EXPECT_EQ(GetSignedField(bytes, 0, 8), 127);
  BitfieldSet(bytes, i8, 0, -129, BitfieldOverflow::kSat);
  EXPECT_EQ(GetSignedField(bytes, 0, 8), -128);
  // Redis's arithmetic quirk: far below the range, SAT lands on the maximum.
  BitfieldSet(bytes, i8, 0, INT64_MIN, BitfieldOverflow::kSat);
  EXPECT_EQ(GetSignedField(bytes, 0, 8), 127);
  BitfieldSet(bytes, i8, 0, -9223372036854775807LL + 127, BitfieldOverflow::kSat);
  EXPECT_EQ(GetSignedField(bytes, 0, 8), -128);  // One above the quirk's threshold.
  BitfieldSet(bytes, i8, 0, -9223372036854775807LL + 126, BitfieldOverflow::kSat);
  EXPECT_EQ(GetSignedField(bytes, 0, 8), 127);

  BitfieldSet(bytes, i8, 0, 0, BitfieldOverflow::kWrap);
  EXPECT_EQ(BitfieldIncrBy(bytes, i8, 0, -100, BitfieldOverflow::kWrap).reply, -100);
  EXPECT_EQ(BitfieldIncrBy(bytes, i8, 0, -100, BitfieldOverflow::kWrap).reply, 56);
  EXPECT_EQ(BitfieldIncrBy(bytes, i8, 0, -100, BitfieldOverflow::kSat).reply, -44);
  EXPECT_EQ(BitfieldIncrBy(bytes, i8, 0, -100, BitfieldOverflow::kSat).reply, -128);
  EXPECT_TRUE(BitfieldIncrBy(bytes, i8, 0, -1, BitfieldOverflow::kFail).failed);

  BitfieldSet(bytes, i64, 0, INT64_MAX, BitfieldOverflow::kWrap);
  EXPECT_EQ(BitfieldIncrBy(bytes, i64, 0, 1, BitfieldOverflow::kWrap).reply, INT64_MIN);
  EXPECT_EQ(BitfieldIncrBy(bytes, i64, 0, -1, BitfieldOverflow::kSat).reply, INT64_MIN);
  EXPECT_EQ(BitfieldIncrBy(bytes, i64, 0, INT64_MAX, BitfieldOverflow::kSat).reply, -1);
  EXPECT_EQ(BitfieldIncrBy(bytes, i64, 0, INT64_MAX, BitfieldOverflow::kSat).reply, INT64_MAX - 1);
  EXPECT_EQ(BitfieldIncrBy(bytes, i64, 0, 2, BitfieldOverflow::kSat).reply, INT64_MAX);
  BitfieldSet(bytes, i64, 0, 0, BitfieldOverflow::kWrap);
  EXPECT_EQ(
      BitfieldIncrBy(bytes, BitfieldType{false, 63}, 0, INT64_MIN, BitfieldOverflow::kWrap).reply,
      0);

  BitfieldWrite same = BitfieldSet(bytes, u8, 0, 0, BitfieldOverflow::kWrap);
  EXPECT_FALSE(same.changed);
  EXPECT_TRUE(BitfieldSet(bytes, u8, 0, 1, BitfieldOverflow::kWrap).changed);
}

// --- Randomized: every operation against the bit-by-bit model ----------------------------------

// Model of Redis's overflow semantics in plain 128-bit arithmetic (not Redis's code shape), for
// values in range (GET results) and any increment.
struct ModelWrite {
  bool failed;
  __int128 stored;
};
ModelWrite ModelIncr(__int128 old_value, __int128 incr, BitfieldType type, BitfieldOverflow p) {
  __int128 min = type.is_signed ? -(__int128{1} << (type.bits - 1)) : 0;
  __int128 max =
      type.is_signed ? (__int128{1} << (type.bits - 1)) - 1 : (__int128{1} << type.bits) - 1;
  __int128 sum = old_value + incr;
  if (sum >= min && sum <= max) return {false, sum};
  if (p == BitfieldOverflow::kFail) return {true, 0};
  if (p == BitfieldOverflow::kSat) return {false, sum > max ? max : min};
  __int128 span = __int128{1} << type.bits;
  __int128 wrapped = ((sum - min) % span + span) % span + min;
  return {false, wrapped};
}

TEST(BitmapTest, RandomizedAgainstBitModel) {
  std::mt19937_64 rng(20260517);
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = RandomBytes(rng, 80);
    std::vector<bool> bits = ToBits(bytes);
    uint64_t nbits = bits.size();

    // GetBit / SetBit.
    uint64_t offset = rng() % (nbits + 16);
    EXPECT_EQ(GetBit(bytes, offset), offset < nbits && bits[offset]);
    if (nbits > 0) {
      uint64_t at = rng() % nbits;
      bool value = rng() & 1;
      std::string copy = bytes;
      EXPECT_EQ(SetBit(copy, at, value), bits[at]);
      std::vector<bool> expected = bits;
      expected[at] = value;
      EXPECT_EQ(copy, FromBits(expected));
    }

    // CountBits / FindBit over random ranges.
    uint64_t total = 0;
    for (bool b : bits) total += b;
    EXPECT_EQ(CountBits(bytes), total);
    if (nbits > 0) {
      uint64_t first = rng() % nbits, last = rng() % nbits;
      if (first > last) std::swap(first, last);
      uint64_t count = 0;
      int64_t first_one = -1, first_zero = -1;
      for (uint64_t i = first; i <= last; ++i) {
        count += bits[i];
        if (bits[i] && first_one < 0) first_one = static_cast<int64_t>(i);
        if (!bits[i] && first_zero < 0) first_zero = static_cast<int64_t>(i);
      }
      EXPECT_EQ(CountBits(bytes, first, last), count) << round;
      EXPECT_EQ(FindBit(bytes, true, first, last), first_one) << round;
      EXPECT_EQ(FindBit(bytes, false, first, last), first_zero) << round;
    }

    // BitOperation against per-bit logic.
    int sources = 1 + static_cast<int>(rng() % 4);
    BitOp op = static_cast<BitOp>(rng() % 4);
    if (op == BitOp::kNot) sources = 1;
    std::vector<std::string> owned;
    for (int i = 0; i < sources; ++i) owned.push_back(RandomBytes(rng, 70));
    std::vector<std::string_view> views(owned.begin(), owned.end());
    size_t max_len = 0;
    for (const auto& s : owned) max_len = std::max(max_len, s.size());
    std::vector<std::vector<bool>> source_bits;
    for (const auto& s : owned) source_bits.push_back(ToBits(s));
    std::vector<bool> expected(max_len * 8);
    for (size_t i = 0; i < max_len * 8; ++i) {
      auto bit_of = [&](size_t s) { return i < source_bits[s].size() && source_bits[s][i]; };
      bool acc = bit_of(0);
      if (op == BitOp::kNot) acc = !acc;
      for (int s = 1; s < sources; ++s) {
        bool b = bit_of(static_cast<size_t>(s));
        acc = op == BitOp::kAnd ? (acc && b) : op == BitOp::kOr ? (acc || b) : (acc != b);
      }
      expected[i] = acc;
    }
    ASSERT_EQ(BitOperation(op, views), FromBits(expected)) << round;

    // Bitfields: GET anywhere (zero-padded), SET/INCRBY inside.
    BitfieldType type{(rng() & 1) != 0, 0};
    type.bits = 1 + static_cast<int>(rng() % (type.is_signed ? 64 : 63));
    uint64_t field_at = rng() % (nbits + 40);
    uint64_t raw = ModelField(bits, field_at, type.bits);
    if (type.is_signed) {
      int64_t expected_signed = static_cast<int64_t>(raw);
      if (type.bits < 64 && (raw >> (type.bits - 1)) & 1) {
        expected_signed = static_cast<int64_t>(raw | (~uint64_t{0} << type.bits));
      }
      EXPECT_EQ(GetSignedField(bytes, field_at, type.bits), expected_signed);
    } else {
      EXPECT_EQ(GetUnsignedField(bytes, field_at, type.bits), raw);
    }
    if (nbits >= static_cast<uint64_t>(type.bits)) {
      uint64_t at = rng() % (nbits - static_cast<uint64_t>(type.bits) + 1);
      auto policy = static_cast<BitfieldOverflow>(rng() % 3);
      // Increments: small, near the type's range, or anywhere in int64.
      int64_t incr;
      switch (rng() % 3) {
        case 0:
          incr = static_cast<int64_t>(rng() % 21) - 10;
          break;
        case 1: {
          uint64_t magnitude = rng() >> (64 - type.bits);
          incr = static_cast<int64_t>((rng() & 1) ? magnitude : 0 - magnitude);
          break;
        }
        default:
          incr = static_cast<int64_t>(rng());
          break;
      }
      __int128 old_value = type.is_signed ? __int128{GetSignedField(bytes, at, type.bits)}
                                          : __int128{GetUnsignedField(bytes, at, type.bits)};
      ModelWrite model = ModelIncr(old_value, incr, type, policy);
      std::string copy = bytes;
      BitfieldWrite write = BitfieldIncrBy(copy, type, at, incr, policy);
      ASSERT_EQ(write.failed, model.failed) << round;
      if (model.failed) {
        EXPECT_EQ(copy, bytes);  // FAIL writes nothing.
      } else {
        EXPECT_EQ(write.reply, static_cast<int64_t>(model.stored)) << round;
        std::vector<bool> after = bits;
        uint64_t stored = static_cast<uint64_t>(static_cast<int64_t>(model.stored));
        for (int j = 0; j < type.bits; ++j) {
          after[at + static_cast<uint64_t>(j)] = (stored >> (type.bits - 1 - j)) & 1;
        }
        EXPECT_EQ(copy, FromBits(after)) << round;
        EXPECT_EQ(write.changed, copy != bytes);
      }
      // SET of an in-range value stores it and returns the old one.
      __int128 span_max =
          type.is_signed ? (__int128{1} << (type.bits - 1)) - 1 : (__int128{1} << type.bits) - 1;
      __int128 span_min = type.is_signed ? -(__int128{1} << (type.bits - 1)) : 0;
      __int128 target = span_min + static_cast<__int128>(rng() % 1000);
      if (target > span_max) target = span_max;
      std::string set_copy = bytes;
      BitfieldWrite set = BitfieldSet(set_copy, type, at, static_cast<int64_t>(target), policy);
      EXPECT_FALSE(set.failed);
      EXPECT_EQ(set.reply, static_cast<int64_t>(old_value));
      EXPECT_EQ(type.is_signed ? __int128{GetSignedField(set_copy, at, type.bits)}
                               : __int128{GetUnsignedField(set_copy, at, type.bits)},
                target);
    }
  }
}

}  // namespace
}  // namespace gigakv
