// Incremental parser for client requests: RESP multibulk (`*N\r\n$len\r\n...`) and inline
// commands (`SET k "a b"\n`), as redis-server accepts them.
//
// Grammar (what Redis 7.0 accepts from clients):
//   request   = multibulk | inline
//   multibulk = "*" count CRLF { "$" len CRLF bytes(len) CRLF }   ; count bulk strings
//               count <= 1,048,576 (else "invalid multibulk length"); count <= 0 -> no command
//               len in [0, proto-max-bulk-len] (else "invalid bulk length")
//               before AUTH (when required): count <= 10, len <= 16384
//   Count lines and inline lines are "too big" once 64 KiB are buffered without their line end
//   (as in Redis, a longer line that arrives whole in one read is accepted).
//   inline    = line LF                                           ; optional CR before LF
//               line split into words like redis-cli does (sdssplitargs: "..." with \n \t \xHH
//               escapes, '...'); an unbalanced quote is "unbalanced quotes in request"
//
// Contract:
// - Feed() is given the whole unconsumed input (the bytes after the last completed request).
//   It may be called again with the same prefix plus more bytes; it remembers how far it got, so
//   a 100 MB bulk arriving in 16 KB reads is scanned once, not once per read.
// - A completed request's arguments are string_views into the buffer passed to that Feed() call;
//   they stay valid until the caller discards those bytes.
// - After kError, the parser must not be fed again; error_text() is the exact Redis text without
//   the "-ERR " prefix (e.g. "Protocol error: invalid bulk length"). The caller replies and closes.
// - Not thread-safe; one parser per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gigakv::protocol {

struct ParserLimits {
  int64_t max_bulk_len = 512LL * 1024 * 1024;  // proto-max-bulk-len
  int64_t max_multibulk_len = 1024 * 1024;
  size_t max_inline_len = 64 * 1024;
  // A client that must still authenticate may send at most 10 arguments of at most 16 KiB each
  // ("unauthenticated multibulk/bulk length"), so it cannot make the server buffer much.
  bool unauthenticated = false;
};

class RequestParser {
 public:
  enum class Result {
    kCommand,   // A full request is ready: args() and consumed().
    kEmpty,     // An empty request (blank inline line, "*0"): skip consumed() bytes.
    kNeedMore,  // Everything given was consumed into state; feed more bytes.
    kError,     // Protocol error; see error_text().
  };

  explicit RequestParser(ParserLimits limits = {}) : limits_(limits) {}

  // Parses from the start of `input` (the unconsumed bytes). On kCommand/kEmpty the first
  // consumed() bytes form the request; call Feed again with the rest.
  Result Feed(std::string_view input);

  const std::vector<std::string_view>& args() const { return args_; }
  size_t consumed() const { return consumed_; }
  const std::string& error_text() const { return error_; }
  // A lower bound on how many more input bytes the current request needs (0 = unknown); lets the
  // connection size its buffer once for a large bulk.
  size_t bytes_hint() const { return bytes_hint_; }
  void set_limits(ParserLimits limits) { limits_ = limits; }

 private:
  enum class State { kStart, kBulkHeader, kBulkBody };

  Result ParseInline(std::string_view input);
  Result Fail(std::string text);
  void Reset();

  ParserLimits limits_;
  State state_ = State::kStart;
  size_t pos_ = 0;                                // Bytes of the current request already parsed.
  int64_t remaining_bulks_ = 0;                   // Bulks still expected in the current multibulk.
  int64_t bulk_len_ = 0;                          // Length of the bulk being read.
  std::vector<std::pair<size_t, size_t>> spans_;  // (offset, length) of finished args.
  std::vector<std::string_view> args_;
  std::vector<std::string> inline_storage_;  // Inline words that needed unescaping.
  size_t consumed_ = 0;
  size_t bytes_hint_ = 0;
  std::string error_;
};

// Splits a line into words with redis-cli/sdssplitargs quoting rules. Returns false on
// unbalanced quotes.
bool SplitInlineArgs(std::string_view line, std::vector<std::string>* out);

}  // namespace gigakv::protocol
