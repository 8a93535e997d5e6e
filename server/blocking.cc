// Blocking operations: clients parked on list and sorted-set keys (BLPOP, BZPOPMIN...).
#include "server/blocking.h"

#include <cmath>

#include "gigakv/numbers.h"
#include "server/commands/collection_access.h"

namespace gigakv::server {

bool ParseBlockTimeoutOrReply(CommandContext& ctx, std::string_view text, int64_t* deadline_ms) {
  long double seconds;
  if (!ParseLongDouble(text, &seconds)) {
    ctx.reply.Error(errors::kTimeoutNotFloat);
    return false;
  }
  // Redis's order: the range check comes before the sign check, which looks at the rounded
  // value (so -0.0001 means 0, block forever).
  long double ms = seconds * 1000;
  if (ms > static_cast<long double>(INT64_MAX / 2)) {
    ctx.reply.Error(errors::kTimeoutOutOfRange);
    return false;
  }
  long double rounded = std::ceil(ms);
  if (rounded < 0) {
    ctx.reply.Error(errors::kTimeoutNegative);
    return false;
  }
  auto relative = static_cast<int64_t>(rounded);
  *deadline_ms = relative == 0 ? 0 : ctx.server.NowMs() + relative;
  return true;
}

void BlockOnKeys(CommandContext& ctx, const std::vector<std::string_view>&, int64_t) {
  // Until parking lands, a client that cannot be served now gets the timeout reply.
  ctx.reply.NullArray();
}

void SignalKeyAsReady(CommandContext&, int, std::string_view) {}

}  // namespace gigakv::server
