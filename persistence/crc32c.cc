#include "persistence/crc32c.h"

#include <cstring>

#include "persistence/reflected_crc.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace gigakv::persistence {

namespace {

using TableCrc32c = ReflectedCrc<uint32_t, 0x82F63B78u>;

#if defined(__x86_64__)
// SSE4.2's crc32 instruction computes exactly CRC32C's register update, 8 bytes per step
// (about 10x the tables' speed): the log checksums every record on its hot path.
__attribute__((target("sse4.2"))) uint32_t HardwareUpdate(uint32_t crc, std::string_view data) {
  const char* p = data.data();
  size_t n = data.size();
  uint64_t wide = crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    wide = _mm_crc32_u64(wide, word);
    p += 8;
    n -= 8;
  }
  uint32_t narrow = static_cast<uint32_t>(wide);
  while (n-- > 0) narrow = _mm_crc32_u8(narrow, static_cast<uint8_t>(*p++));
  return narrow;
}

bool HasHardwareCrc() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t Crc32cExtend(uint32_t crc, std::string_view data) {
#if defined(__x86_64__)
  if (HasHardwareCrc()) return ~HardwareUpdate(~crc, data);
#endif
  return ~TableCrc32c::Update(~crc, data);
}

uint32_t Crc32cExtendPortable(uint32_t crc, std::string_view data) {
  return ~TableCrc32c::Update(~crc, data);
}

}  // namespace gigakv::persistence
