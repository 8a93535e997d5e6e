// Reads the commands of a Redis append-only file: the RESP text Redis writes to its AOF (a
// Redis 7 appendonlydir's .incr.aof and .base.aof files, a Redis 6 appendonly.aof, or the tail
// after a Redis 6 file's RDB preamble), so that gigakv can start from Redis's files.
//
// Grammar (Redis 7.0's aof.c writes it with catAppendOnlyGenericCommand and reads it with
// loadSingleAppendOnlyFile):
//
//   file       := { annotation | command }
//   annotation := '#' { any byte but LF } LF        ("#TS:<unix seconds>" with
//                                                    aof-timestamp-enabled)
//   command    := '*' argc EOL { '$' len EOL <len bytes> CRLF }   (argc times, argc >= 1)
//   EOL        := CRLF | LF                         (Redis writes CRLF; its reader takes lines)
//   argc, len  := decimal digits
//
// Redis itself is lenient where this reader is strict: it reads the numbers with atoi/strtol
// (ignoring trailing junk) and never checks the CRLF after an argument. Redis never writes such
// bytes, so here they are damage (kBadFormat), not data: a length that went wrong is caught at
// the next argument instead of loading garbage.
//
// The end of the file inside a command (a crash in the middle of a write) is kTruncated with
// valid_end() just past the last complete command: what aof-load-truncated cuts, as Redis does
// (Redis 7 also reverts an unfinished MULTI at the end; that is the replayer's business).
//
// Annotations are at most 1024 bytes, as Redis's fgets buffer reads them (a longer one is
// kBadFormat, as in Redis).
//
// Not thread-safe; one reader per file. Memory: a 64 KiB buffer plus the largest command (with
// file_size given, never more than the file holds).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "persistence/file_system.h"

namespace gigakv::persistence::log {

class RedisAofReader {
 public:
  enum class Outcome {
    kCommand,    // *args holds the next command (args[0] its name as written).
    kEnd,        // Clean end of the file after a complete command or annotation.
    kTruncated,  // The file ends inside the command at problem_offset().
    kBadFormat,  // Not Redis's AOF grammar at problem_offset(): problem() says how.
    kIoError,    // Reading failed: io_status().
  };

  // `file` (not owned) must outlive the reader; it is read from its current position, which is
  // `start_offset` bytes into the file (after an RDB preamble, or 0). `file_size`, when known:
  // an argument said to end past it is a truncation at once, without reading the rest.
  RedisAofReader(SequentialFile* file, uint64_t start_offset,
                 uint64_t file_size = std::numeric_limits<uint64_t>::max());

  // The next command. *args point into the reader's buffer and stay valid until the next call.
  // After anything but kCommand, every later call returns the same.
  Outcome ReadCommand(std::vector<std::string_view>* args);

  // File offset of the command last returned.
  uint64_t command_offset() const { return command_offset_; }
  // File offset just past the last complete command (the start offset before any).
  uint64_t valid_end() const { return valid_end_; }
  // After kTruncated or kBadFormat: where the problem begins, and what it is.
  uint64_t problem_offset() const { return problem_offset_; }
  const std::string& problem() const { return problem_; }
  const absl::Status& io_status() const { return io_status_; }

 private:
  struct Span {
    size_t begin;
    size_t size;
  };
  enum class Parse { kOk, kNeedMore, kBad };

  // Makes at least `n` bytes available from pos_ (reading more); false at the end of the file
  // or on an I/O error (io_status_ set).
  bool Ensure(size_t n);
  // Parses the line at pos_ (a number after `prefix`) into *value and moves pos_ past it.
  Parse ReadNumberLine(char prefix, const char* what, uint64_t* value);
  Outcome Fail(Outcome outcome, uint64_t offset, std::string problem);

  SequentialFile* file_;
  uint64_t file_size_;
  std::string buffer_;          // Unconsumed input from buffer_offset_.
  uint64_t buffer_offset_ = 0;  // File offset of buffer_[0].
  size_t pos_ = 0;              // Next unparsed byte of buffer_.
  bool end_of_file_ = false;    // The file has no bytes after buffer_.
  std::vector<Span> spans_;     // The arguments of the command being read.
  uint64_t command_offset_ = 0;
  uint64_t valid_end_ = 0;
  Outcome outcome_ = Outcome::kCommand;
  uint64_t problem_offset_ = 0;
  std::string problem_;
  absl::Status io_status_;
};

}  // namespace gigakv::persistence::log
