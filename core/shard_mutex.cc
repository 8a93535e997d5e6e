#include "gigakv/shard_mutex.h"

namespace gigakv {

void ShardMutex::LockContended() {
  for (int spin = 0; spin < 100; ++spin) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    uint32_t expected = kUnlocked;
    if (state_.load(std::memory_order_relaxed) == kUnlocked &&
        state_.compare_exchange_weak(expected, kLocked, std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
      return;
    }
  }
  // Announce a sleeper, then sleep until the word changes from "waited"; whoever finds it
  // unlocked owns the lock (in the "waited" state, so its unlock wakes the next sleeper).
  while (state_.exchange(kWaited, std::memory_order_acquire) != kUnlocked) {
    state_.wait(kWaited, std::memory_order_relaxed);
  }
}

}  // namespace gigakv
