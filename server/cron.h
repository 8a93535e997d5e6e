// The server's periodic work on a thread of its own: Server::Cron `hz` times a second (active
// expiry, used memory and eviction, the coarse clock, rates), and, while active expiry has a
// backlog (many keys due at once), bounded Server::ActiveExpire passes every millisecond in
// between, so a mass expiry clears quickly without any single pass holding a shard for long.
//
// Threading: the thread registers with the transaction gate (transaction.h) and runs each pass
// inside a batch scope, as an I/O thread runs a batch of commands: no pass runs while an EXEC
// does. So an expiry or eviction never lands between the writes of a transaction, and the
// change stream shows it before or after the transaction's group, as a replica or the log must
// apply it. Start and Stop are called from one thread (main's).
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

namespace gigakv::server {

class Server;

class CronThread {
 public:
  explicit CronThread(Server& server) : server_(server) {}
  ~CronThread() { Stop(); }
  CronThread(const CronThread&) = delete;
  CronThread& operator=(const CronThread&) = delete;

  // Starts the thread; its first pass runs one period (1000/hz ms) later.
  void Start();
  // Ends the thread after the pass in progress, if any. Idempotent.
  void Stop();

 private:
  void Loop();
  // The busy-script watchdog (ScriptCache::WatchForBusy) every 50 ms, on a thread of its own
  // that never waits for the gate: the cron's own work may (a BGSAVE takes it), and a script
  // that never ends must still become busy and killable.
  void WatchScripts();

  Server& server_;
  std::thread thread_;
  std::thread watchdog_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // Guarded by mutex_.
};

}  // namespace gigakv::server
