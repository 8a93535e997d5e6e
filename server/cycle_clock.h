// A cheap clock for timing commands (INFO commandstats usec): the CPU's time-stamp counter,
// read without a system call, converted to microseconds with a rate calibrated once against
// std::chrono::steady_clock. Falls back to steady_clock where there is no TSC.
// Thread-safe after Calibrate() (called once at start-up).
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace gigakv::server {

class CycleClock {
 public:
  static uint64_t Now() {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
#endif
  }

  // Measures ticks per microsecond over a few milliseconds.
  static void Calibrate();

  static uint64_t ToMicros(uint64_t ticks) {
    return ticks_per_us_ > 0 ? static_cast<uint64_t>(static_cast<double>(ticks) / ticks_per_us_)
                             : 0;
  }
  // A multiplication, not a division: it runs for every command (INFO latencystats).
  static uint64_t ToNanos(uint64_t ticks) {
    return static_cast<uint64_t>(static_cast<double>(ticks) * ns_per_tick_);
  }

 private:
  static inline double ticks_per_us_ = 1000.0;  // Nanosecond fallback until calibrated.
  static inline double ns_per_tick_ = 1.0;      // 1000 / ticks_per_us_.
};

// Milliseconds of std::chrono::steady_clock, for intervals that are logged or reported (a
// load's duration, a rewrite's): a system call, unlike CycleClock::Now.
inline int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace gigakv::server
