// Sorted sets computed by a command (ZUNIONSTORE, ZRANGESTORE, GEOSEARCHSTORE, GEORADIUS ...
// STORE, and the replied ZUNION/ZINTER/ZDIFF): how they are built and stored, shared by the zset
// and geo families (zset_commands.cc). Run under the destination's shard lock.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/types/zset.h"
#include "server/command.h"
#include "server/commands/key_access.h"

namespace gigakv::server {

using ZSetElements = std::vector<std::pair<std::string, double>>;

// A computed sorted set built as Redis builds it: a skiplist, turned into a listpack when it is
// `stored` and small enough (zset-max-listpack-entries/-value). So a -0 score survives exactly
// when Redis keeps it (skiplists keep it; listpacks store the integer 0). Results that are only
// replied stay skiplists, as in Redis. `elements` must not repeat a member.
std::unique_ptr<ZSet> BuildZSetResult(CommandContext& ctx, const ZSetElements& elements,
                                      bool stored);

// Stores `result` at `dest` (replacing whatever is there, without TTL) and publishes the command
// itself as the effect with the keyspace event `event` (Redis's names: "zunionstore",
// "geosearchstore"...); or, when the result is empty, deletes the destination ("del"). Replies
// the result's size. The command must be deterministic given its sources (it is logged as is).
// `dirty` is Redis's rdb_changes_since_last_save increment for a stored result (1 for the ZSET
// commands, the result's size for the geo ones); a deletion counts 1.
void StoreZSetResult(CommandContext& ctx, KeyAccess& dest, std::unique_ptr<ZSet> result,
                     std::string_view event, uint64_t dirty = 1);

}  // namespace gigakv::server
