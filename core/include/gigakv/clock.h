// Time source for the store. Everything that depends on time (TTL, LRU clock) reads it through a
// Clock so tests can inject a manual one and stay deterministic.
#pragma once

#include <atomic>
#include <cstdint>

namespace gigakv {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch. Thread-safe.
  virtual int64_t NowMs() const = 0;
};

// Wall-clock time (CLOCK_REALTIME), as Redis uses for absolute expiry times.
class SystemClock final : public Clock {
 public:
  int64_t NowMs() const override;
  static SystemClock* Get();
};

// A clock that only moves when told to; for tests. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 1'700'000'000'000) : now_ms_(start_ms) {}
  int64_t NowMs() const override { return now_ms_.load(std::memory_order_relaxed); }
  void SetMs(int64_t ms) { now_ms_.store(ms, std::memory_order_relaxed); }
  void AdvanceMs(int64_t ms) { now_ms_.fetch_add(ms, std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace gigakv
