// Checking one of gigakv's log files (log_format.h, log_record.h), or a Redis AOF's RESP
// commands, for gigakv-check-aof: every
// record is read and decoded; the result says how the file ends (cleanly, in a torn tail, in
// corruption) with the offset and reason of the first problem, counts records per command, and
// can print each record as readable commands.
//
// Pure over a SequentialFile: thread-safe per call, no shared state. Memory: one block and the
// largest record.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "persistence/file_system.h"
#include "persistence/log/log_reader.h"
#include "persistence/log/redis_aof_reader.h"

namespace gigakv::persistence::log {

struct LogCheckResult {
  LogReader::Outcome outcome = LogReader::Outcome::kEnd;  // kEnd: the file is sound.
  uint64_t problem_offset = 0;
  std::string problem;     // Reader's or decoder's reason; empty when sound.
  uint64_t valid_end = 0;  // Where --fix cuts the file.
  uint64_t records = 0;
  uint64_t effects = 0;
  std::map<std::string, uint64_t> per_command;  // Upper-case command name -> effects.
};

// Reads `file` from its start. With `dump`, each record is appended to *dump as lines
// ("db 0: SET k v", a transaction between "MULTI" and "EXEC", "timestamp 1700000000"),
// arguments quoted as redis-cli prints them when they need it.
LogCheckResult CheckLog(SequentialFile& file, std::string* dump = nullptr);

struct RedisAofCheckResult {
  RedisAofReader::Outcome outcome = RedisAofReader::Outcome::kEnd;  // kEnd: the file is sound.
  uint64_t problem_offset = 0;
  std::string problem;
  uint64_t valid_end = 0;  // Where --fix cuts a truncated file (before an unfinished MULTI).
  uint64_t commands = 0;
  std::map<std::string, uint64_t> per_command;  // Upper-case command name -> count.
};

// Reads the RESP commands of a Redis AOF (redis_aof_reader.h) from `file`, positioned at
// `offset` (after an RDB preamble, or 0). A MULTI without its EXEC at the end is a truncation
// (Redis reverts it). With `dump`, each command is appended as a line ("SET k v").
RedisAofCheckResult CheckRedisAof(SequentialFile& file, uint64_t offset, uint64_t file_size,
                                  std::string* dump = nullptr);

}  // namespace gigakv::persistence::log
