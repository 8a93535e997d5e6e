// Arguments shared by SCAN, HSCAN, SSCAN and ZSCAN: the cursor and the MATCH / COUNT (and, for
// SCAN, TYPE) options, parsed as Redis 7.0 does. Functions ending in OrReply have sent the error
// reply when they return false.
#pragma once

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gigakv/glob.h"
#include "server/commands/args.h"

namespace gigakv::server {

// Redis's parseScanCursorOrReply (strtoul rules): "" is 0 and a sign is accepted; a leading
// space, trailing bytes or overflow give "ERR invalid cursor".
inline bool ParseScanCursorOrReply(CommandContext& ctx, std::string_view arg, uint64_t* cursor) {
  std::string text(arg);
  char* end = nullptr;
  errno = 0;
  *cursor = std::strtoull(text.c_str(), &end, 10);
  if ((!text.empty() && std::isspace(static_cast<unsigned char>(text[0]))) ||
      end != text.c_str() + text.size() || errno == ERANGE) {
    ctx.reply.Error(errors::kInvalidCursor);
    return false;
  }
  return true;
}

struct ScanOptions {
  int64_t count = 10;
  std::string_view pattern;
  bool has_pattern = false;  // MATCH given with anything but "*" (an empty pattern matches "").
  std::string_view type;     // SCAN's TYPE; empty when absent.
  bool has_type = false;

  bool Matches(std::string_view name) const { return !has_pattern || GlobMatch(pattern, name); }
};

// Parses "[MATCH pattern] [COUNT count]" (plus "[TYPE type]" when `allow_type`) from argument
// `first` on: every option takes a value, COUNT must be a positive integer, anything else is a
// syntax error.
inline bool ParseScanOptionsOrReply(CommandContext& ctx, size_t first, bool allow_type,
                                    ScanOptions* options) {
  for (size_t i = first; i < ctx.argc(); i += 2) {
    if (i + 1 >= ctx.argc()) {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
    std::string_view option = ctx.arg(i), value = ctx.arg(i + 1);
    if (ArgIs(option, "count")) {
      if (!ParseIntOrReply(ctx, value, &options->count)) return false;
      if (options->count < 1) {
        ctx.reply.Error(errors::kSyntax);
        return false;
      }
    } else if (ArgIs(option, "match")) {
      options->pattern = value;
      options->has_pattern = value != "*";
    } else if (allow_type && ArgIs(option, "type")) {
      options->type = value;
      options->has_type = true;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

// The reply to a *SCAN of a missing key: cursor 0, no elements.
inline void ReplyEmptyScan(CommandContext& ctx) {
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk("0");
  ctx.reply.ArrayHeader(0);
}

}  // namespace gigakv::server
