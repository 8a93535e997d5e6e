#include "persistence/crc32c.h"

#include <string>

#include "gtest/gtest.h"

namespace gigakv::persistence {
namespace {

// RFC 3720, appendix B.4.
TEST(Crc32cTest, Rfc3720Vectors) {
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8a9136aau);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62a8ab43u);
  std::string ascending(32, '\0'), descending(32, '\0');
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<char>(i);
    descending[i] = static_cast<char>(31 - i);
  }
  EXPECT_EQ(Crc32c(ascending), 0x46dd794eu);
  EXPECT_EQ(Crc32c(descending), 0x113fdb5cu);
  EXPECT_EQ(Crc32c("123456789"), 0xe3069283u);
}

TEST(Crc32cTest, ExtendEqualsWhole) {
  std::string data = "hello world, this is a longer buffer to cross 8-byte words";
  for (size_t split = 0; split <= data.size(); ++split) {
    EXPECT_EQ(Crc32cExtend(Crc32c(data.substr(0, split)), data.substr(split)), Crc32c(data));
  }
}

TEST(Crc32cTest, PortableAgreesWithTheDefault) {
  EXPECT_EQ(Crc32cExtendPortable(0, "123456789"), 0xe3069283u);
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 131 + 7));
  for (size_t size = 0; size <= data.size(); size += 13) {
    for (size_t start : {size_t{0}, size_t{1}, size_t{5}}) {
      if (start > size) continue;
      const std::string_view piece = std::string_view(data).substr(start, size - start);
      EXPECT_EQ(Crc32cExtend(0x12345678u, piece), Crc32cExtendPortable(0x12345678u, piece));
    }
  }
}

TEST(Crc32cTest, MaskRoundTrips) {
  uint32_t crc = Crc32c("foo");
  EXPECT_NE(MaskCrc(crc), crc);
  EXPECT_EQ(UnmaskCrc(MaskCrc(crc)), crc);
}

}  // namespace
}  // namespace gigakv::persistence
