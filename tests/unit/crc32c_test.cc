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

TEST(Crc32cTest, MaskRoundTrips) {
  uint32_t crc = Crc32c("foo");
  EXPECT_NE(MaskCrc(crc), crc);
  EXPECT_EQ(UnmaskCrc(MaskCrc(crc)), crc);
}

}  // namespace
}  // namespace gigakv::persistence
