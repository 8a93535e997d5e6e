// KeyHash: the 64-bit hash of a key for the shard indexes (key_table.h): the high 32 bits are
// the index fingerprint, the rest picks the home slot. Multiply-fold mixing (the 128-bit product
// of two 64-bit words, high half XOR low half) over 8-byte loads: a handful of instructions for
// the short keys Redis workloads use, with full avalanche. Keyed by a secret drawn at random per
// Store, so which keys collide cannot be known from outside (no hash flooding); the secret words
// enter every multiplication, so no chosen input zeroes a product without knowing them.
//
// Thread-safe (pure). O(key length).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace gigakv {

struct KeyHashSecret {
  uint64_t s0, s1, s2;

  // A secret derived from `seed` by splitmix64 steps (odd words, so no multiplier is even).
  static KeyHashSecret FromSeed(uint64_t seed) {
    auto next = [&seed] {
      uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      return (z ^ (z >> 31)) | 1;
    };
    uint64_t s0 = next();
    uint64_t s1 = next();
    return {s0, s1, next()};
  }

  // A secret seeded from std::random_device (each Store draws one).
  static KeyHashSecret Random();
  // One secret for the whole process, drawn at first use; for hash tables inside collections
  // (hash fields, set and sorted-set members), which need no per-store secret.
  static const KeyHashSecret& ForProcess();
};

namespace key_hash_internal {

inline uint64_t Fold(uint64_t a, uint64_t b) {
  unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}
inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace key_hash_internal

inline uint64_t KeyHash(std::string_view key, const KeyHashSecret& secret) {
  using key_hash_internal::Fold;
  using key_hash_internal::Load32;
  using key_hash_internal::Load64;
  const char* p = key.data();
  const size_t n = key.size();
  uint64_t state = secret.s0 ^ n;
  uint64_t a = 0;
  uint64_t b = 0;
  if (n <= 16) {
    if (n >= 8) {
      a = Load64(p);
      b = Load64(p + n - 8);
    } else if (n >= 4) {
      a = Load32(p);
      b = Load32(p + n - 4);
    } else if (n > 0) {
      a = static_cast<uint64_t>(static_cast<uint8_t>(p[0])) << 16 |
          static_cast<uint64_t>(static_cast<uint8_t>(p[n / 2])) << 8 |
          static_cast<uint64_t>(static_cast<uint8_t>(p[n - 1]));
    }
  } else {
    size_t left = n;
    while (left > 16) {
      state = Fold(Load64(p) ^ secret.s1, Load64(p + 8) ^ state);
      p += 16;
      left -= 16;
    }
    a = Load64(p + left - 16);
    b = Load64(p + left - 8);
  }
  return Fold(secret.s2 ^ n, Fold(a ^ secret.s1, b ^ state));
}

}  // namespace gigakv
