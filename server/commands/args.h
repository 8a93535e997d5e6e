// Small typed readers for command arguments. Functions ending in OrReply have already sent the
// error reply (Redis's exact text) when they return false/nullopt.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "gigakv/numbers.h"
#include "gigakv/strings.h"
#include "server/command.h"
#include "server/errors.h"

namespace gigakv::server {

inline bool ParseIntOrReply(CommandContext& ctx, std::string_view text, int64_t* value) {
  if (ParseInt64(text, value)) return true;
  ctx.reply.Error(errors::kNotInteger);
  return false;
}

// An integer of at least `minimum`, else the error `message` (how Redis checks counts, numkeys,
// LIMIT... with getRangeLongFromObjectOrReply / getPositiveLongFromObjectOrReply and a custom
// message: a non-number gets the same message).
inline bool ParseIntAtLeastOrReply(CommandContext& ctx, std::string_view text, int64_t minimum,
                                   std::string_view message, int64_t* value) {
  if (ParseInt64(text, value) && *value >= minimum) return true;
  ctx.reply.Error(message);
  return false;
}

inline bool ArgIs(std::string_view arg, std::string_view word) {
  return EqualsIgnoreCase(arg, word);
}

// The database index argument of SELECT/MOVE/COPY: "value is not an integer or out of range"
// when not a number, "DB index is out of range" when outside [0, databases).
bool ParseDbIndexOrReply(CommandContext& ctx, std::string_view text, int* db);

}  // namespace gigakv::server
