#include "server/cron.h"

#include <algorithm>
#include <chrono>

#include "server/server.h"
#include "server/transaction.h"

namespace gigakv::server {

void CronThread::Start() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
  watchdog_ = std::thread([this] { WatchScripts(); });
}

void CronThread::WatchScripts() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::milliseconds(50));
    if (stopping_) break;
    lock.unlock();
    server_.scripts().WatchForBusy(server_.settings().busy_reply_threshold.get(),
                                   server_.transaction_gate());
    lock.lock();
  }
}

void CronThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (watchdog_.joinable()) watchdog_.join();
}

void CronThread::Loop() {
  using Clock = std::chrono::steady_clock;
  server_.transaction_gate().RegisterThisThread();
  std::unique_lock<std::mutex> lock(mutex_);
  Clock::time_point next_cron = Clock::now();
  bool expiry_backlog = false;
  while (!stopping_) {
    if (Clock::now() >= next_cron) {
      int64_t hz = std::max<int64_t>(1, server_.settings().hz.get());
      next_cron = Clock::now() + std::chrono::milliseconds(1000 / hz);
    }
    Clock::time_point wake = expiry_backlog
                                 ? std::min(next_cron, Clock::now() + std::chrono::milliseconds(1))
                                 : next_cron;
    wake_.wait_until(lock, wake);
    if (stopping_) break;
    lock.unlock();
    {
      // Not behind a script (skipped while one waits or runs: it may run long).
      TransactionGate::BatchScope gate(server_.transaction_gate(), /*wait_for_script=*/false);
      if (!gate.busy()) {
        expiry_backlog = Clock::now() >= next_cron ? server_.Cron() : server_.ActiveExpire();
        // Streams that expired here end the wait of their XREADGROUP clients (blocking.h):
        // inside the gate, as an I/O thread serves, so no EXEC or script runs meanwhile. What
        // is signalled while the gate is busy waits for the next round.
        server_.blocking().ServeKeysSignalledHere(server_.dispatcher(), server_.keyspace().store());
      }
    }
    lock.lock();
  }
}

}  // namespace gigakv::server
