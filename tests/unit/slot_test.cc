#include "gigakv/slot.h"

#include "gtest/gtest.h"

namespace gigakv {
namespace {

TEST(SlotTest, Crc16CheckValue) { EXPECT_EQ(Crc16("123456789"), 0x31C3); }

TEST(SlotTest, KnownRedisSlots) {
  // Values from redis-cli CLUSTER KEYSLOT.
  EXPECT_EQ(KeySlot("foo"), 12182u);
  EXPECT_EQ(KeySlot("bar"), 5061u);
  EXPECT_EQ(KeySlot(""), 0u);
}

TEST(SlotTest, HashTags) {
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("user1000"));
  EXPECT_EQ(KeySlot("foo{}{bar}"), KeySlot("foo{}{bar}"));  // Empty tag: whole key hashed.
  EXPECT_NE(KeySlot("foo{}{bar}"), KeySlot("bar"));
  EXPECT_EQ(KeySlot("foo{{bar}}zap"), KeySlot("{bar"));
  EXPECT_EQ(KeySlot("foo{bar}{zap}"), KeySlot("bar"));
}

}  // namespace
}  // namespace gigakv

#include <random>

namespace gigakv {
namespace {

// The bitwise definition of CRC16/XMODEM, to check the table-driven version against.
uint16_t Crc16Bitwise(std::string_view data) {
  uint16_t crc = 0;
  for (unsigned char byte : data) {
    crc ^= static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc;
}

TEST(SlotTest, SlicedCrcMatchesBitwiseAtEveryLength) {
  std::mt19937 rng(7);
  for (size_t length = 0; length < 100; ++length) {
    std::string data(length, '\0');
    for (char& c : data) c = static_cast<char>(rng());
    EXPECT_EQ(Crc16(data), Crc16Bitwise(data)) << length;
  }
}

}  // namespace
}  // namespace gigakv
