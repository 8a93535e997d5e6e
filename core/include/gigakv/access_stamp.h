// The 16-bit access stamp every record carries, for approximated LRU or LFU eviction and
// OBJECT IDLETIME / OBJECT FREQ.
//
//   LRU stamp = Unix seconds mod 65536 (idle times wrap after ~18 hours, enough to rank keys)
//   LFU stamp = minutes mod 256 (bits 15-8) | logarithmic counter (bits 7-0)
//
// The LFU counter follows Redis: new keys start at 5, an access increments it with probability
// 1 / ((counter - 5) * log_factor + 1), and it decays by one per `decay_minutes` idle.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

namespace gigakv {

enum class AccessMode : uint8_t { kLru, kLfu };

inline constexpr uint8_t kLfuInitialCounter = 5;

uint16_t NewAccessStamp(AccessMode mode, int64_t now_ms);
// The LRU stamp of an access at `now_ms` (what NewAccessStamp and TouchAccessStamp give in LRU
// mode), inline for the lookup path.
inline uint16_t LruAccessStamp(int64_t now_ms) { return static_cast<uint16_t>(now_ms / 1000); }
// The stamp after one access. `random` is a uniformly random 64-bit value.
uint16_t TouchAccessStamp(AccessMode mode, uint16_t stamp, int64_t now_ms, uint64_t random,
                          int log_factor = 10, int decay_minutes = 1);
// LRU: seconds since the last access.
int64_t IdleSeconds(uint16_t stamp, int64_t now_ms);
// LFU: the counter after decay (what OBJECT FREQ reports).
uint8_t LfuCounter(uint16_t stamp, int64_t now_ms, int decay_minutes = 1);

}  // namespace gigakv
