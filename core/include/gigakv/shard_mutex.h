// ShardMutex: the lock of one store shard (store.h), a BasicLockable/Lockable usable with
// std::lock_guard and std::unique_lock. Uncontended lock and unlock are one inlined atomic
// instruction each (std::mutex goes through two pthread calls, a few % of a pipelined GET). A
// contended lock spins briefly, then sleeps on the lock word (C++20 atomic wait: a futex on
// Linux), so a preempted holder costs the waiters no CPU. Not recursive; no fairness guarantee.
//
// States: 0 unlocked, 1 locked, 2 locked and maybe waited on (unlock then wakes one sleeper;
// a woken thread takes the lock in state 2, so a wake is never lost).
#pragma once

#include <atomic>
#include <cstdint>

namespace gigakv {

class ShardMutex {
 public:
  ShardMutex() = default;
  ShardMutex(const ShardMutex&) = delete;
  ShardMutex& operator=(const ShardMutex&) = delete;

  void lock() {
    uint32_t expected = kUnlocked;
    if (state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire,
                                       std::memory_order_relaxed)) [[likely]] {
      return;
    }
    LockContended();
  }
  bool try_lock() {
    uint32_t expected = kUnlocked;
    return state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  void unlock() {
    if (state_.exchange(kUnlocked, std::memory_order_release) == kWaited) [[unlikely]] {
      state_.notify_one();
    }
  }

 private:
  static constexpr uint32_t kUnlocked = 0;
  static constexpr uint32_t kLocked = 1;
  static constexpr uint32_t kWaited = 2;

  void LockContended();

  std::atomic<uint32_t> state_{kUnlocked};
};

}  // namespace gigakv
