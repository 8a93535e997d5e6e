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
