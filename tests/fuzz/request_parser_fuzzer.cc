// libFuzzer target for the request parser (protocol/request_parser.h) and, on the same bytes, the
// reply parser (protocol/resp_reader.h). See docs/fuzzing.md for how to run it.
//
// Input layout (the fuzzer mutates the header like any other byte):
//   byte 0      flags:  bit0 max_bulk_len      = byte 1          (else the 512 MB default)
//                       bit1 max_multibulk_len = byte 2          (else the 1M default)
//                       bit2 max_inline_len    = byte 3          (else the 64 KiB default)
//                       bit3 after every kNeedMore, feed the same bytes again (must be idempotent)
//   bytes 1..3  the small limits above
//   bytes 4..7  fragment sizes: read i delivers header[4 + i % 4] + 1 bytes (1..256)
//   bytes 8..   the stream a client sends (and, separately, a reply stream for ParseReply)
// Seed files in corpus/ therefore start with 8 header bytes; "\0\0\0\0\xff\xff\xff\xff" means
// default limits and 256-byte reads.
//
// What is checked (any violation calls abort(), which libFuzzer reports as a crash):
// - Per Feed(): consumed() <= input size; consumed() > 0 on kCommand/kEmpty and 0 otherwise; a
//   multibulk command's arg views lie inside the consumed bytes of the buffer passed to that Feed
//   and re-serialize to exactly those bytes (modulo the LF/CRLF bytes Redis does not verify); an
//   inline request ends at its first LF; kError carries a "Protocol error: " text; bytes_hint() is
//   a true lower bound (the request does not complete before that many more bytes arrive).
// - Every Feed() gets a fresh heap buffer of exactly the unconsumed size, like a connection that
//   moves its data between reads, so AddressSanitizer catches reads past the end and any pointer
//   the parser keeps across calls.
// - Differential: the stream parsed from one buffer and parsed read-by-read gives the same
//   sequence of commands, empty requests and errors, and the same leftover and bytes_hint().
//   The only tolerated difference (see kStrictLimits) is the one Redis has too: the "too big ..."
//   checks fire on buffered bytes without a line end, so a fragmented read can hit them on a line
//   that the whole-buffer parse sees complete (and longer than the limit).
// - After kError the parser is never fed again.
// - ParseReply: result in [-1, size]; a complete value parses the same from exactly its bytes; no
//   strict prefix of a complete value is complete or malformed; prefixes of an incomplete input
//   are incomplete; consecutive replies are parsed like a pipelining client does.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/request_parser.h"
#include "protocol/resp_reader.h"

namespace gigakv::protocol {
namespace {

// Set to 1 (-DGIGAKV_FUZZ_STRICT_LIMITS=1) to also require that the "too big" limits do not
// depend on how the stream is split into reads.
#ifndef GIGAKV_FUZZ_STRICT_LIMITS
#define GIGAKV_FUZZ_STRICT_LIMITS 0
#endif
constexpr bool kStrictLimits = GIGAKV_FUZZ_STRICT_LIMITS != 0;

constexpr size_t kHeaderSize = 8;
using Result = RequestParser::Result;

[[noreturn]] void Fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "request_parser_fuzzer: invariant violated: %s %s\n", what, detail.c_str());
  std::abort();
}

#define FUZZ_CHECK(cond, ...)                                    \
  do {                                                           \
    if (!(cond)) Fail("(" #cond ")" __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

std::string Escape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

struct Event {
  Result result;
  std::vector<std::string> args;  // kCommand
  size_t consumed = 0;            // kCommand/kEmpty
  std::string error;              // kError

  bool operator==(const Event&) const = default;

  std::string Describe() const {
    switch (result) {
      case Result::kCommand: {
        std::string s = "command(" + std::to_string(consumed) + ")";
        for (const std::string& a : args) s += " \"" + Escape(a) + "\"";
        return s;
      }
      case Result::kEmpty:
        return "empty(" + std::to_string(consumed) + ")";
      case Result::kError:
        return "error: " + error;
      case Result::kNeedMore:
        return "need-more";
    }
    return "?";
  }
};

struct Run {
  std::vector<Event> events;
  size_t leftover = 0;  // Unconsumed bytes at the end (when the run did not stop on an error).
  size_t hint = 0;      // bytes_hint() after the final kNeedMore.
};

bool Inside(std::string_view inner, const char* begin, const char* end) {
  if (inner.empty())
    return inner.data() == nullptr || (inner.data() >= begin && inner.data() <= end);
  return inner.data() >= begin && inner.data() + inner.size() <= end;
}

// Checks a multibulk command against the bytes it was parsed from: the canonical encoding of
// args must equal buf[0, consumed) except for the bytes the parser (like Redis) skips without
// looking at: the byte after each header's CR, and the two bytes after each bulk body.
void CheckMultibulkRoundTrip(std::string_view buf, const std::vector<std::string_view>& args,
                             size_t consumed) {
  std::string canon;
  std::string unchecked;  // Parallel to canon: 1 = byte not verified by the parser.
  auto add = [&](std::string_view bytes, bool checked) {
    canon.append(bytes);
    unchecked.append(bytes.size(), checked ? 0 : 1);
  };
  // The count line is "*<count>\r\n"; the parser's count may be written only one way (no
  // leading zeros or '+'), so it compares byte for byte.
  add("*" + std::to_string(args.size()) + "\r", true);
  add("\n", false);
  for (std::string_view a : args) {
    add("$" + std::to_string(a.size()) + "\r", true);
    add("\n", false);
    add(a, true);
    add("\r\n", false);
  }
  FUZZ_CHECK(canon.size() == consumed, "multibulk size " + std::to_string(canon.size()) +
                                           " vs consumed " + std::to_string(consumed));
  for (size_t i = 0; i < consumed; ++i) {
    FUZZ_CHECK(unchecked[i] || canon[i] == buf[i],
               "multibulk byte " + std::to_string(i) + " of " + Escape(buf.substr(0, consumed)));
  }
}

// One Feed() on a fresh exact-size copy of `pending`, with the per-call invariants.
Event FeedOnce(RequestParser& parser, const std::string& pending) {
  std::unique_ptr<char[]> copy(new char[pending.size() + 1]);  // +1: new char[0] edge case.
  std::memcpy(copy.get(), pending.data(), pending.size());
  std::string_view buf(copy.get(), pending.size());
  const char* begin = buf.data();

  Event ev;
  ev.result = parser.Feed(buf);
  const size_t consumed = parser.consumed();
  FUZZ_CHECK(consumed <= buf.size());
  switch (ev.result) {
    case Result::kCommand: {
      FUZZ_CHECK(consumed > 0);
      FUZZ_CHECK(!parser.args().empty());
      const bool multibulk = buf[0] == '*';
      for (std::string_view a : parser.args()) {
        // Inline words live in the parser's own storage (unescaped copies), so only multibulk
        // args can be checked against the buffer; for both, the copy below makes ASan check
        // that the view is readable memory.
        if (multibulk) FUZZ_CHECK(Inside(a, begin, begin + consumed), "arg outside buffer");
        ev.args.emplace_back(a);
      }
      if (multibulk) {
        CheckMultibulkRoundTrip(buf, parser.args(), consumed);
      } else {
        FUZZ_CHECK(buf[consumed - 1] == '\n');
        FUZZ_CHECK(std::memchr(begin, '\n', consumed - 1) == nullptr);
      }
      ev.consumed = consumed;
      break;
    }
    case Result::kEmpty:
      FUZZ_CHECK(consumed > 0);
      FUZZ_CHECK(parser.args().empty());
      if (buf[0] != '*') {
        FUZZ_CHECK(buf[consumed - 1] == '\n');
        FUZZ_CHECK(std::memchr(begin, '\n', consumed - 1) == nullptr);
      } else {
        // "*<count <= 0>\r\n": the first CR ends the count line.
        const void* cr = std::memchr(begin, '\r', buf.size());
        FUZZ_CHECK(cr != nullptr);
        FUZZ_CHECK(static_cast<const char*>(cr) - begin + 2 == static_cast<ptrdiff_t>(consumed));
      }
      ev.consumed = consumed;
      break;
    case Result::kNeedMore:
      FUZZ_CHECK(consumed == 0);
      FUZZ_CHECK(parser.args().empty());
      break;
    case Result::kError:
      ev.error = parser.error_text();
      FUZZ_CHECK(ev.error.rfind("Protocol error: ", 0) == 0, ev.error);
      break;
  }
  return ev;
}

struct Options {
  ParserLimits limits;
  bool refeed = false;
  uint8_t frag[4] = {255, 255, 255, 255};
};

// Feeds `stream` to a parser as reads of the given sizes (a single read if `whole`), consuming
// completed requests as server/net/connection.cc does.
Run Parse(std::string_view stream, const Options& opt, bool whole) {
  RequestParser parser(opt.limits);
  Run run;
  std::string pending;
  size_t offset = 0;
  size_t read_index = 0;
  // bytes_hint() bookkeeping: the current request needs at least this many bytes in total.
  size_t min_request_size = 0;
  while (offset < stream.size()) {
    size_t n = whole ? stream.size() : static_cast<size_t>(opt.frag[read_index++ % 4]) + 1;
    n = std::min(n, stream.size() - offset);
    pending.append(stream.substr(offset, n));
    offset += n;
    while (!pending.empty()) {
      Event ev = FeedOnce(parser, pending);
      if (ev.result == Result::kNeedMore) {
        if (opt.refeed) {
          size_t hint = parser.bytes_hint();
          Event again = FeedOnce(parser, pending);
          FUZZ_CHECK(again == ev, "refeed: " + again.Describe());
          FUZZ_CHECK(parser.bytes_hint() == hint);
        }
        if (parser.bytes_hint() > 0) {
          FUZZ_CHECK(pending.size() + parser.bytes_hint() >= min_request_size, "hint shrank");
          min_request_size = pending.size() + parser.bytes_hint();
        }
        run.hint = parser.bytes_hint();
        break;
      }
      run.events.push_back(ev);
      if (ev.result == Result::kError) return run;  // Never feed a parser after kError.
      FUZZ_CHECK(ev.consumed >= min_request_size,
                 "bytes_hint promised " + std::to_string(min_request_size) + ", request was " +
                     std::to_string(ev.consumed));
      min_request_size = 0;
      pending.erase(0, ev.consumed);
      run.hint = 0;
    }
  }
  run.leftover = pending.size();
  return run;
}

bool IsTooBig(const Event& ev) {
  return ev.result == Result::kError && ev.error.find("too big") != std::string::npos;
}

void CompareRuns(std::string_view stream, const Options& opt, const Run& whole,
                 const Run& fragmented) {
  if (whole.events == fragmented.events) {
    const bool errored = !whole.events.empty() && whole.events.back().result == Result::kError;
    if (!errored) {
      FUZZ_CHECK(whole.leftover == fragmented.leftover);
      FUZZ_CHECK(whole.hint == fragmented.hint);
    }
    return;
  }
  // Tolerated: the fragmented run stopped on a "too big" error at a line that the whole run saw
  // complete; the whole run then failed on that request too, accepted a request longer than
  // max_inline_len, or is still waiting for the rest of one. Everything before must match.
  bool tolerated = false;
  if (!kStrictLimits && !fragmented.events.empty() && IsTooBig(fragmented.events.back())) {
    const size_t k = fragmented.events.size() - 1;
    if (whole.events.size() >= k &&
        std::equal(fragmented.events.begin(), fragmented.events.begin() + k,
                   whole.events.begin())) {
      if (whole.events.size() == k) {
        tolerated = whole.leftover > opt.limits.max_inline_len;
      } else {
        const Event& w = whole.events[k];
        tolerated = w.result == Result::kError || w.consumed > opt.limits.max_inline_len;
      }
    }
  }
  if (tolerated) return;
  std::string detail = "whole vs fragmented differ; stream=\"" + Escape(stream) + "\"\n";
  size_t n = std::max(whole.events.size(), fragmented.events.size());
  for (size_t i = 0; i < n; ++i) {
    detail += "  #" + std::to_string(i) +
              " whole: " + (i < whole.events.size() ? whole.events[i].Describe() : "-") +
              "\n       frag:  " +
              (i < fragmented.events.size() ? fragmented.events[i].Describe() : "-") + "\n";
  }
  Fail("differential", detail);
}

void FuzzRequestParser(std::string_view stream, const Options& opt) {
  Run whole = Parse(stream, opt, /*whole=*/true);
  Run fragmented = Parse(stream, opt, /*whole=*/false);
  CompareRuns(stream, opt, whole, fragmented);
}

// ParseReply on an exact-size copy so reads past the end are caught.
int64_t ParseReplyCopy(std::string_view input, RespValue* out) {
  std::unique_ptr<char[]> copy(new char[input.size() + 1]);
  std::memcpy(copy.get(), input.data(), input.size());
  int64_t r = ParseReply(std::string_view(copy.get(), input.size()), out);
  FUZZ_CHECK(r >= -1 && r <= static_cast<int64_t>(input.size()), std::to_string(r));
  if (r > 0) (void)out->DebugString();
  return r;
}

void FuzzReplyParser(std::string_view input, size_t cut_seed) {
  RespValue value;
  int64_t r = ParseReplyCopy(input, &value);
  if (r > 0) {
    RespValue exact;
    FUZZ_CHECK(ParseReplyCopy(input.substr(0, static_cast<size_t>(r)), &exact) == r);
    FUZZ_CHECK(exact.DebugString() == value.DebugString());
    RespValue shorter;
    FUZZ_CHECK(ParseReplyCopy(input.substr(0, static_cast<size_t>(r) - 1), &shorter) == 0,
               "strict prefix of a complete reply is not incomplete");
  }
  if (!input.empty()) {
    // Any prefix is incomplete or gives the same answer as the whole input.
    size_t k = cut_seed % input.size();
    RespValue part;
    int64_t pr = ParseReplyCopy(input.substr(0, k), &part);
    if (r > 0) {
      FUZZ_CHECK(pr == (static_cast<int64_t>(k) >= r ? r : 0));
    } else {
      FUZZ_CHECK(pr == 0 || pr == r, std::to_string(pr) + " vs " + std::to_string(r));
    }
  }
  // Consecutive replies, as a pipelining client reads them.
  size_t pos = 0;
  while (pos < input.size()) {
    RespValue next;
    int64_t used = ParseReplyCopy(input.substr(pos), &next);
    if (used <= 0) break;
    pos += static_cast<size_t>(used);
  }
}

}  // namespace
}  // namespace gigakv::protocol

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gigakv::protocol;
  if (size < kHeaderSize) {
    FuzzReplyParser(std::string_view(reinterpret_cast<const char*>(data), size), 0);
    return 0;
  }
  Options opt;
  const uint8_t flags = data[0];
  if (flags & 1) opt.limits.max_bulk_len = data[1];
  if (flags & 2) opt.limits.max_multibulk_len = data[2];
  if (flags & 4) opt.limits.max_inline_len = data[3];
  opt.refeed = (flags & 8) != 0;
  std::memcpy(opt.frag, data + 4, 4);
  std::string_view stream(reinterpret_cast<const char*>(data) + kHeaderSize, size - kHeaderSize);

  FuzzRequestParser(stream, opt);
  FuzzReplyParser(stream, static_cast<size_t>(data[4]) << 8 | data[5]);
  return 0;
}
