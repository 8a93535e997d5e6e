#include "gigakv/key_hash.h"

#include <bit>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"

namespace gigakv {
namespace {

TEST(KeyHashTest, DistinctKeysOfEveryLengthGetDistinctHashes) {
  const KeyHashSecret secret = KeyHashSecret::FromSeed(1);
  // Numbered keys cut or padded to every length from 0 to 40 bytes, so each load path (0-3, 4-7,
  // 8-16 and longer keys) is covered; cutting makes some equal, hence the set.
  absl::flat_hash_set<std::string> keys;
  for (int i = 0; i < 300'000; ++i) {
    std::string key = "key:" + std::to_string(i);
    key.resize(static_cast<size_t>(i % 41), static_cast<char>('a' + i % 7));
    keys.insert(std::move(key));
  }
  absl::flat_hash_set<uint64_t> hashes;
  absl::flat_hash_set<uint32_t> fingerprints;  // The index's high 32 bits.
  for (const std::string& key : keys) {
    uint64_t h = KeyHash(key, secret);
    hashes.insert(h);
    fingerprints.insert(static_cast<uint32_t>(h >> 32));
  }
  EXPECT_EQ(hashes.size(), keys.size());
  // 32-bit fingerprints of ~100k keys: a few birthday collisions expected, not more.
  EXPECT_GE(fingerprints.size() + 20, keys.size());
}

TEST(KeyHashTest, EveryInputBitAffectsAboutHalfTheOutputBits) {
  const KeyHashSecret secret = KeyHashSecret::FromSeed(7);
  for (size_t length : {1u, 3u, 5u, 8u, 12u, 16u, 17u, 33u}) {
    std::string key(length, 'x');
    uint64_t base = KeyHash(key, secret);
    double total = 0;
    int flips = 0;
    for (size_t byte = 0; byte < length; ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string changed = key;
        changed[byte] = static_cast<char>(changed[byte] ^ (1 << bit));
        total += std::popcount(KeyHash(changed, secret) ^ base);
        ++flips;
      }
    }
    double average = total / flips;
    EXPECT_GT(average, 24) << "length " << length;
    EXPECT_LT(average, 40) << "length " << length;
  }
}

TEST(KeyHashTest, TheSecretChangesEveryHash) {
  const KeyHashSecret a = KeyHashSecret::FromSeed(1);
  const KeyHashSecret b = KeyHashSecret::FromSeed(2);
  for (std::string key : {"", "a", "key:000001", "a much longer key with several words"}) {
    EXPECT_NE(KeyHash(key, a), KeyHash(key, b)) << key;
    EXPECT_EQ(KeyHash(key, a), KeyHash(key, KeyHashSecret::FromSeed(1))) << key;
  }
  EXPECT_NE(KeyHash(std::string_view("a\0", 2), a), KeyHash("a", a));
}

}  // namespace
}  // namespace gigakv
