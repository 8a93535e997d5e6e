// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP).
//
// How a blocking handler works: it parses its arguments (timeout with ParseBlockTimeoutOrReply),
// looks at its keys in order and, when one can serve it, replies exactly as the non-blocking
// variant would and returns. When none can, it calls BlockOnKeys and returns without replying.
// The client is then parked: its connection runs no further commands until it is served or times
// out. When a key it waits on is signalled ready (SignalKeyAsReady, from any I/O thread), the
// blocked command is run again from scratch with the same arguments, for the clients blocked on
// that key in the order they blocked; a run that calls BlockOnKeys again leaves the client blocked
// where it was in the queue. At the deadline the client gets a null array (RESP2 `*-1`, RESP3
// `_`), as Redis replies to a timed-out blocking command.
//
// Threading: handlers call these under no shard lock other than the ones their lookups took
// (BlockOnKeys may be called while holding key locks). Thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "server/command.h"

namespace gigakv::server {

// Parses a blocking timeout in seconds (a decimal or float text, sub-second precision) as Redis:
// "timeout is not a float or out of range", "timeout is negative", "timeout is out of range".
// Sets *deadline_ms to the absolute deadline in unix ms, or 0 for "block forever" (timeout 0).
bool ParseBlockTimeoutOrReply(CommandContext& ctx, std::string_view text, int64_t* deadline_ms);

// Parks the client on `keys` (in the client's database) until served or until `deadline_ms`
// (0 = forever). Inside MULTI/EXEC (and anywhere a client cannot block) it replies the timeout
// reply (null array) at once instead, as Redis does.
void BlockOnKeys(CommandContext& ctx, const std::vector<std::string_view>& keys,
                 int64_t deadline_ms);

}  // namespace gigakv::server
