#include "gigakv/slot.h"

#include <array>

namespace gigakv {
namespace {

constexpr std::array<uint16_t, 256> MakeCrc16Table() {
  std::array<uint16_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint16_t crc = static_cast<uint16_t>(i << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
    table[i] = crc;
  }
  return table;
}

// Slicing-by-8: table k gives the CRC contribution of a byte followed by k zero bytes, so eight
// input bytes fold in with eight independent lookups instead of a chain of eight dependent ones.
// (CRC is linear over XOR: T[a ^ b] = T[a] ^ T[b].)
constexpr std::array<std::array<uint16_t, 256>, 8> MakeSlicingTables() {
  std::array<std::array<uint16_t, 256>, 8> tables{};
  tables[0] = MakeCrc16Table();
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t i = 0; i < 256; ++i) {
      uint16_t previous = tables[k - 1][i];
      tables[k][i] = static_cast<uint16_t>((previous << 8) ^ tables[0][previous >> 8]);
    }
  }
  return tables;
}

constexpr std::array<std::array<uint16_t, 256>, 8> kCrc16Tables = MakeSlicingTables();

}  // namespace

uint16_t Crc16(std::string_view data) {
  const auto& t = kCrc16Tables;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  uint16_t crc = 0;
  while (n >= 8) {
    crc = static_cast<uint16_t>(t[7][(crc >> 8) ^ p[0]] ^ t[6][(crc & 0xff) ^ p[1]] ^ t[5][p[2]] ^
                                t[4][p[3]] ^ t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]]);
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = static_cast<uint16_t>((crc << 8) ^ t[0][(crc >> 8) ^ *p++]);
  return crc;
}

uint32_t KeySlot(std::string_view key) {
  size_t open = key.find('{');
  if (open != std::string_view::npos) {
    size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close != open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return Crc16(key) & (kClusterSlots - 1);
}

}  // namespace gigakv
