// SHA-1 against FIPS 180 test vectors and the script names redis-server gives (SCRIPT LOAD).
#include "gigakv/sha1.h"

#include <string>

#include "gtest/gtest.h"

namespace gigakv {
namespace {

TEST(Sha1Test, MatchesPublishedVectors) {
  EXPECT_EQ(Sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(Sha1Hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

// Lengths around the padding boundaries (55, 56, 63, 64, 65 bytes) against known digests.
TEST(Sha1Test, PaddingBoundaries) {
  EXPECT_EQ(Sha1Hex(std::string(55, 'a')), "c1c8bbdc22796e28c0e15163d20899b65621d65a");
  EXPECT_EQ(Sha1Hex(std::string(56, 'a')), "c2db330f6083854c99d4b5bfb6e8f29f201be699");
  EXPECT_EQ(Sha1Hex(std::string(64, 'a')), "0098ba824b5c16427bd7a1122a5a442a25ec644d");
}

// What redis-server 7.0 answers to SCRIPT LOAD of these bodies.
TEST(Sha1Test, RedisScriptNames) {
  EXPECT_EQ(Sha1Hex("return 1"), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
}

}  // namespace
}  // namespace gigakv
