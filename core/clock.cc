#include "gigakv/clock.h"

#include <chrono>

namespace gigakv {

int64_t SystemClock::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

SystemClock* SystemClock::Get() {
  static SystemClock clock;
  return &clock;
}

}  // namespace gigakv
