#include "gigakv/shard_mutex.h"

#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace gigakv {
namespace {

TEST(ShardMutexTest, TryLockFailsWhileHeld) {
  ShardMutex mutex;
  EXPECT_TRUE(mutex.try_lock());
  EXPECT_FALSE(mutex.try_lock());
  std::thread other([&] { EXPECT_FALSE(mutex.try_lock()); });
  other.join();
  mutex.unlock();
  EXPECT_TRUE(mutex.try_lock());
  mutex.unlock();
}

// More threads than cores, each holding the lock across a non-atomic read-modify-write and a
// yield: lost updates would show as a short count, a lost wake-up as a hang.
TEST(ShardMutexTest, ContendedIncrementsAreNotLost) {
  ShardMutex mutex;
  uint64_t counter = 0;
  constexpr int kThreads = 8;
  constexpr int kIncrements = 20'000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIncrements; ++i) {
        std::lock_guard<ShardMutex> lock(mutex);
        uint64_t seen = counter;
        if ((i + t) % 512 == 0) std::this_thread::yield();  // Holder preempted: waiters sleep.
        counter = seen + 1;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter, uint64_t{kThreads} * kIncrements);
}

}  // namespace
}  // namespace gigakv
