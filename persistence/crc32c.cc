#include "persistence/crc32c.h"

#include "persistence/reflected_crc.h"

namespace gigakv::persistence {

uint32_t Crc32cExtend(uint32_t crc, std::string_view data) {
  return ~ReflectedCrc<uint32_t, 0x82F63B78u>::Update(~crc, data);
}

}  // namespace gigakv::persistence
