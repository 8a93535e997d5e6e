// The varint coder: golden bytes, round trips at every length boundary.
#include "core/varint.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace gigakv::varint {
namespace {

std::string Encode(uint64_t value) {
  char buffer[kMaxBytes];
  char* end = Put(buffer, value);
  return std::string(buffer, end);
}

TEST(VarintTest, GoldenBytes) {
  EXPECT_EQ(Encode(0), std::string("\x00", 1));
  EXPECT_EQ(Encode(1), "\x01");
  EXPECT_EQ(Encode(127), "\x7f");
  EXPECT_EQ(Encode(128), "\x80\x01");
  EXPECT_EQ(Encode(300), "\xac\x02");
  EXPECT_EQ(Encode(16383), "\xff\x7f");
  EXPECT_EQ(Encode(16384), std::string("\x80\x80\x01"));
  EXPECT_EQ(Encode(UINT64_MAX), "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01");
}

TEST(VarintTest, SizeMatchesBytesWrittenAndValuesRoundTrip) {
  for (int bits = 0; bits <= 64; ++bits) {
    for (int delta : {-1, 0, 1}) {
      uint64_t value = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) + delta;
      if (bits == 0 && delta < 0) continue;
      std::string bytes = Encode(value);
      EXPECT_EQ(bytes.size(), Size(value)) << value;
      ASSERT_LE(bytes.size(), kMaxBytes);
      uint64_t decoded = 0;
      const uint8_t* begin = reinterpret_cast<const uint8_t*>(bytes.data());
      const uint8_t* end = Get(begin, &decoded);
      EXPECT_EQ(decoded, value);
      EXPECT_EQ(end - begin, static_cast<ptrdiff_t>(bytes.size()));
    }
  }
}

}  // namespace
}  // namespace gigakv::varint
