// Keyspace family (minimal set for now): DEL, UNLINK, EXISTS.
#include "server/commands/args.h"
#include "server/server.h"

namespace gigakv::server {
namespace {

// Counts keys 1..argc-1 that exist; with `remove`, deletes them. Locks each key's shard in turn:
// DEL of several keys is not atomic across shards in Redis's sense only if another client races
// on those exact keys, and each key's removal is itself atomic.
int64_t ForEachExistingKey(CommandContext& ctx, bool remove) {
  int64_t count = 0;
  int db = ctx.db();
  for (size_t i = 1; i < ctx.argc(); ++i) {
    std::string_view key = ctx.arg(i);
    uint64_t hash = ctx.store.Hash(key);
    ctx.store.WithShardOf(key, [&](Shard& shard) {
      uint32_t slot = ctx.store.FindLive(shard, db, key, hash);
      if (slot == KeyTable::kNoSlot) return;
      ++count;
      if (remove) shard.Table(db).Erase(slot);
    });
  }
  return count;
}

void CmdDel(CommandContext& ctx) {
  int64_t removed = ForEachExistingKey(ctx, /*remove=*/true);
  ctx.server.stats().dirty.fetch_add(static_cast<uint64_t>(removed), std::memory_order_relaxed);
  ctx.reply.Integer(removed);
}

void CmdExists(CommandContext& ctx) { ctx.reply.Integer(ForEachExistingKey(ctx, false)); }

}  // namespace

const std::vector<CommandSpec>& KeyspaceCommands() {
  static const std::vector<CommandSpec> kCommands = {
      {"del", -2, kWrite, 1, -1, 1, CmdDel, "generic", "Delete a key."},
      {"unlink", -2, kWrite | kFast, 1, -1, 1, CmdDel, "generic",
       "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but "
       "non blocking.",
       "4.0.0"},
      {"exists", -2, kReadonly | kFast, 1, -1, 1, CmdExists, "generic",
       "Determine if a key exists.", "1.0.0"},
  };
  return kCommands;
}

}  // namespace gigakv::server
