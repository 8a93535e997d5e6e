// TransactionGate: an ExclusiveScope (EXEC) runs only while no registered thread is inside a
// BatchScope, and a thread that gives its slot up (ReleasedScope) lets it through. Every wait
// here is bounded (a hang fails the test instead of blocking it forever).
#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "gtest/gtest.h"
#include "server/transaction.h"

namespace gigakv::server {
namespace {

constexpr auto kBound = std::chrono::seconds(20);

// Polls `done` until it is true or the bound passes.
bool WaitFor(const std::atomic<bool>& done) {
  auto deadline = std::chrono::steady_clock::now() + kBound;
  while (!done.load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(TransactionGateTest, ExclusiveScopeWaitsForBatchesOfOtherThreads) {
  TransactionGate gate;
  std::atomic<bool> in_batch{false}, leave_batch{false}, left_batch{false};
  std::thread io([&] {
    gate.RegisterThisThread();
    {
      TransactionGate::BatchScope batch(gate);
      in_batch = true;
      ASSERT_TRUE(WaitFor(leave_batch));
      left_batch = true;
    }
  });
  ASSERT_TRUE(WaitFor(in_batch));
  std::atomic<bool> exclusive{false};
  bool batch_was_over = false;
  std::thread exec([&] {
    TransactionGate::ExclusiveScope scope(gate);
    batch_was_over = left_batch.load();
    EXPECT_TRUE(TransactionGate::ThisThreadIsExclusive());
    exclusive = true;
  });
  leave_batch = true;
  ASSERT_TRUE(WaitFor(exclusive));
  EXPECT_TRUE(batch_was_over);  // It could only get in once the batch had ended.
  EXPECT_FALSE(TransactionGate::ThisThreadIsExclusive());
  exec.join();
  io.join();
}

TEST(TransactionGateTest, ReleasedScopeLetsAnExecThroughWhileItWaits) {
  TransactionGate gate;
  std::atomic<bool> waiting{false}, exec_done{false}, resumed{false};
  std::thread io([&] {
    gate.RegisterThisThread();
    TransactionGate::BatchScope batch(gate);
    {
      TransactionGate::ReleasedScope released;  // Like CONFIG SET port waiting for thread 0.
      waiting = true;
      ASSERT_TRUE(WaitFor(exec_done));
    }
    resumed = true;
  });
  ASSERT_TRUE(WaitFor(waiting));
  {
    TransactionGate::ExclusiveScope scope(gate);  // Would wait forever without the release.
    exec_done = true;
    EXPECT_FALSE(resumed.load());  // The waiting thread needs its slot back to go on.
  }
  ASSERT_TRUE(WaitFor(resumed));
  io.join();
}

TEST(TransactionGateTest, ExecInsideABatchOfItsOwnThreadDoesNotDeadlock) {
  TransactionGate gate;
  std::atomic<bool> done{false};
  std::thread io([&] {
    gate.RegisterThisThread();
    TransactionGate::BatchScope batch(gate);
    { TransactionGate::ExclusiveScope scope(gate); }
    { TransactionGate::ExclusiveScope again(gate); }
    done = true;
  });
  ASSERT_TRUE(WaitFor(done));
  io.join();
}

TEST(TransactionGateTest, AnExecGetsInAmongBackToBackBatches) {
  TransactionGate gate;
  std::atomic<bool> stop{false}, busy{false};
  std::thread io([&] {
    gate.RegisterThisThread();
    while (!stop.load()) {  // An I/O thread with many clients: one batch right after another.
      TransactionGate::BatchScope batch(gate);
      busy = true;
    }
  });
  ASSERT_TRUE(WaitFor(busy));
  std::atomic<bool> exec_done{false};
  std::thread exec([&] {
    for (int i = 0; i < 100; ++i) TransactionGate::ExclusiveScope scope(gate);
    exec_done = true;
  });
  bool finished = WaitFor(exec_done);
  stop = true;
  exec.join();
  io.join();
  EXPECT_TRUE(finished);
}

}  // namespace
}  // namespace gigakv::server
