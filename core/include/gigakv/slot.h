// Redis Cluster key slots: CRC16 (XMODEM) of the key, or of the first non-empty `{hash tag}`,
// modulo 16384. gigakv picks a key's shard from its slot so keys sharing a hash tag share a shard.
#pragma once

#include <cstdint>
#include <string_view>

namespace gigakv {

inline constexpr uint32_t kClusterSlots = 16384;

// CRC16-CCITT (XMODEM): poly 0x1021, init 0, no reflection. Crc16("123456789") == 0x31C3.
uint16_t Crc16(std::string_view data);

// The cluster slot of `key` in [0, 16384), honouring hash tags exactly like Redis's keyHashSlot.
uint32_t KeySlot(std::string_view key);

}  // namespace gigakv
