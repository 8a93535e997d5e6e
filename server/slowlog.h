// The slow log (SLOWLOG GET/LEN/RESET): commands that ran for at least slowlog-log-slower-than
// microseconds, newest first, at most slowlog-max-len of them, as Redis 7.0 keeps them.
//
// An entry holds what Redis's does: a unique id (growing from 0, not reset by RESET), the Unix
// time in seconds when the command ended, its execution time in microseconds, its arguments
// (at most 32: the 32nd becomes "... (N more arguments)"; an argument longer than 128 bytes is
// cut to 128 followed by "... (N more bytes)"; secrets such as AUTH's are "(redacted)"), the
// client's address and its name.
//
// Thread-safe: Push, Get, Len and Reset take one mutex; Push is called only for slow commands.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace gigakv::server {

struct SlowLogEntry {
  uint64_t id = 0;
  int64_t unix_seconds = 0;
  int64_t duration_us = 0;
  std::vector<std::string> args;
  std::string client_addr;
  std::string client_name;
};

class SlowLog {
 public:
  static constexpr size_t kMaxArgs = 32;
  static constexpr size_t kMaxArgBytes = 128;

  // Records a command (the arguments as received; trimmed and redacted here), keeping at most
  // `max_len` entries (the oldest go first; 0 keeps none).
  void Push(const std::vector<std::string_view>& args, int64_t duration_us, int64_t unix_seconds,
            std::string client_addr, std::string client_name, size_t max_len);
  // The newest `count` entries, newest first (all of them when count is negative).
  std::vector<SlowLogEntry> Get(int64_t count) const;
  size_t Len() const;
  void Reset();

  // The arguments as an entry stores them (exposed for tests).
  static std::vector<std::string> EntryArgs(const std::vector<std::string_view>& args);

  // Whether a command (its CommandFlag bits and arguments) must be timed for the slow log at
  // `threshold_us` (slowlog-log-slower-than; < 0 = off). Commands flagged skip_slowlog (EXEC:
  // the commands it runs are logged) never are. While the log is off only admin commands are
  // (a CONFIG SET may turn it on, and Redis logs that one). At threshold 0 every other command
  // is, and above it every command neither fast nor kBoundedWork. A fast or kBoundedWork
  // command, whose work its
  // arguments bound, is timed only when a generous estimate of that work, 10 x (1 us per
  // argument + 1 ns per argument byte), reaches a positive threshold: a pipeline of small GETs
  // or SETs saves the clock reads, and MSET of thousands of pairs or SET of megabytes is still
  // timed. O(arguments).
  static bool NeedsTiming(uint32_t command_flags, const std::vector<std::string_view>& args,
                          int64_t threshold_us);

 private:
  mutable std::mutex mutex_;
  std::deque<SlowLogEntry> entries_;  // Newest first.
  uint64_t next_id_ = 0;
};

}  // namespace gigakv::server
