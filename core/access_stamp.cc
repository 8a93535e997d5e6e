#include "gigakv/access_stamp.h"

namespace gigakv {
namespace {

uint8_t Minutes(int64_t now_ms) { return static_cast<uint8_t>(now_ms / 60000); }

}  // namespace

uint16_t NewAccessStamp(AccessMode mode, int64_t now_ms) {
  if (mode == AccessMode::kLru) return static_cast<uint16_t>(now_ms / 1000);
  return static_cast<uint16_t>((Minutes(now_ms) << 8) | kLfuInitialCounter);
}

uint8_t LfuCounter(uint16_t stamp, int64_t now_ms, int decay_minutes) {
  uint8_t counter = static_cast<uint8_t>(stamp & 0xff);
  uint8_t elapsed = static_cast<uint8_t>(Minutes(now_ms) - static_cast<uint8_t>(stamp >> 8));
  int periods = decay_minutes > 0 ? elapsed / decay_minutes : 0;
  return periods >= counter ? 0 : static_cast<uint8_t>(counter - periods);
}

uint16_t TouchAccessStamp(AccessMode mode, uint16_t stamp, int64_t now_ms, uint64_t random,
                          int log_factor, int decay_minutes) {
  if (mode == AccessMode::kLru) return static_cast<uint16_t>(now_ms / 1000);
  uint8_t counter = LfuCounter(stamp, now_ms, decay_minutes);
  if (counter < 255) {
    double base = counter > kLfuInitialCounter ? counter - kLfuInitialCounter : 0;
    double probability = 1.0 / (base * log_factor + 1);
    double draw = static_cast<double>(random >> 11) / static_cast<double>(1ULL << 53);
    if (draw < probability) ++counter;
  }
  return static_cast<uint16_t>((Minutes(now_ms) << 8) | counter);
}

int64_t IdleSeconds(uint16_t stamp, int64_t now_ms) {
  return static_cast<uint16_t>(static_cast<uint16_t>(now_ms / 1000) - stamp);
}

}  // namespace gigakv
