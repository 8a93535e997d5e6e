// Table-driven reflected CRCs (LSB-first, as CRC32C and Redis's CRC-64/Jones are defined), with
// slicing-by-8 tables built at compile time: about 1-2 GB/s on one core. One template for every
// width, so each CRC is a polynomial and its pre/post conditioning.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace gigakv::persistence {

// Update() loads 8 input bytes as one little-endian word.
static_assert(std::endian::native == std::endian::little, "ReflectedCrc assumes little-endian");

template <typename Word, Word kReflectedPolynomial>
class ReflectedCrc {
 public:
  // Extends the raw register `crc` (no conditioning) with `data`. Little-endian hosts.
  static Word Update(Word crc, std::string_view data) {
    const auto& t = kTables.t;
    const unsigned char* p = reinterpret_cast<const unsigned char*>(data.data());
    size_t n = data.size();
    while (n >= 8) {
      uint64_t word;
      std::memcpy(&word, p, 8);
      word ^= static_cast<uint64_t>(crc);
      // The register is at most 8 bytes wide: all of it is folded in with the 8 bytes.
      crc = t[7][word & 0xff] ^ t[6][(word >> 8) & 0xff] ^ t[5][(word >> 16) & 0xff] ^
            t[4][(word >> 24) & 0xff] ^ t[3][(word >> 32) & 0xff] ^ t[2][(word >> 40) & 0xff] ^
            t[1][(word >> 48) & 0xff] ^ t[0][word >> 56];
      p += 8;
      n -= 8;
    }
    while (n-- > 0) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
    return crc;
  }

 private:
  struct Tables {
    std::array<std::array<Word, 256>, 8> t{};
    constexpr Tables() {
      for (uint32_t i = 0; i < 256; ++i) {
        Word crc = i;
        for (int bit = 0; bit < 8; ++bit) {
          crc = (crc >> 1) ^ ((crc & 1) ? kReflectedPolynomial : Word{0});
        }
        t[0][i] = crc;
      }
      for (uint32_t i = 0; i < 256; ++i) {
        for (size_t k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
      }
    }
  };
  static constexpr Tables kTables{};
};

}  // namespace gigakv::persistence
