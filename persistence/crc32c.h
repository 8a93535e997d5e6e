// CRC32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78), as used by iSCSI (RFC 3720)
// and LevelDB-style log framing. Debian 12's abseil has no CRC32C, so gigakv carries its own:
// SSE4.2's crc32 instruction where the CPU has it, else slicing-by-8 tables
// (persistence/reflected_crc.h). Thread-safe, no allocation.
#pragma once

#include <cstdint>
#include <string_view>

namespace gigakv::persistence {

// Extends `crc` (the CRC of some prefix) with `data`. Crc32c("") == 0.
uint32_t Crc32cExtend(uint32_t crc, std::string_view data);
inline uint32_t Crc32c(std::string_view data) { return Crc32cExtend(0, data); }
// The table-driven implementation alone (tests compare it with the hardware one).
uint32_t Crc32cExtendPortable(uint32_t crc, std::string_view data);

// Masking as LevelDB does, so a CRC stored inside checksummed data does not checksum to a
// constant: rotate right by 15 and add a constant.
inline uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t UnmaskCrc(uint32_t masked) {
  uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace gigakv::persistence
