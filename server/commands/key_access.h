// Shared helpers for handlers that work on keys: lock the key's shard, find it with lazy expiry,
// count keyspace hits/misses, and check types. Used by every keyspace-touching family.
#pragma once

#include <string_view>

#include "gigakv/access_stamp.h"
#include "gigakv/store.h"
#include "server/command.h"
#include "server/errors.h"
#include "server/server.h"

namespace gigakv::server {

// A key looked up under its shard's lock. `slot` is KeyTable::kNoSlot when the key is missing
// (or was just found expired). Valid only inside the WithKey callback.
// `slot` is kept current by every command that changes the key through it (Put returns the new
// slot, Erase/Release reset it to kNoSlot), so writes can use KeyTable::PutAt.
struct KeyAccess {
  Shard& shard;
  KeyTable& table;
  int db;
  std::string_view key;
  uint64_t hash;
  uint32_t slot;
  // The record as the lookup found it (meaningful only when exists()). Readers use it to skip
  // a second decode; it goes stale as soon as the command changes the key: use view() then.
  RecordView found{};

  bool exists() const { return slot != KeyTable::kNoSlot; }
  RecordView view() const { return table.View(slot); }
};

// Runs fn(KeyAccess&) with `key`'s shard locked, in the client's database (or `db` if given).
template <typename Fn>
decltype(auto) WithKey(CommandContext& ctx, std::string_view key, Fn&& fn, int db = -1) {
  if (db < 0) db = ctx.db();
  uint64_t hash = ctx.store.Hash(key);
  return ctx.store.WithShardOf(key, [&](Shard& shard) {
    // The lookup writes the record straight into `access` (a copy of it stalls the load that
    // reads it back).
    KeyAccess access{shard, shard.Table(db), db, key, hash, KeyTable::kNoSlot};
    access.slot = ctx.store.FindLive(shard, db, key, hash, &access.found);
    return fn(access);
  });
}

// Looks up `key`, whose shard (`shard_index`) the caller has locked and knows (from
// Store::LockKeys), in the client's database (or `db` if given).
inline KeyAccess FindLockedInShard(CommandContext& ctx, std::string_view key, uint32_t shard_index,
                                   int db = -1) {
  if (db < 0) db = ctx.db();
  uint64_t hash = ctx.store.Hash(key);
  Shard& shard = ctx.store.shard(shard_index);
  KeyAccess access{shard, shard.Table(db), db, key, hash, KeyTable::kNoSlot};
  access.slot = ctx.store.FindLive(shard, db, key, hash, &access.found);
  return access;
}

// Looks up `key` in an already locked shard (multi-key commands holding a MultiLock).
inline KeyAccess FindLocked(CommandContext& ctx, std::string_view key, int db = -1) {
  return FindLockedInShard(ctx, key, ctx.store.ShardIndex(key), db);
}

// Replies WRONGTYPE and returns false when the key exists and does not hold a string.
inline bool IsStringOrReply(CommandContext& ctx, const KeyAccess& access) {
  if (access.exists() && !access.view().is_string()) {
    ctx.reply.Error(errors::kWrongType);
    return false;
  }
  return true;
}

// IsStringOrReply on the record as looked up (KeyAccess::found): for readers, before the
// command changes the key.
inline bool FoundStringOrReply(CommandContext& ctx, const KeyAccess& access) {
  if (access.exists() && !access.found.is_string()) {
    ctx.reply.Error(errors::kWrongType);
    return false;
  }
  return true;
}

// Counts a read lookup in INFO's keyspace_hits / keyspace_misses.
inline void CountLookup(CommandContext& ctx, bool hit) {
  ThreadStats& stats = ctx.server.LocalStats();
  AddOwned(hit ? stats.keyspace_hits : stats.keyspace_misses, 1);
}

// The access stamp for a record written now (LRU clock or fresh LFU counter).
inline uint16_t NewStamp(CommandContext& ctx) {
  return NewAccessStamp(ctx.server.access_mode(), ctx.server.CoarseNowMs());
}

// Forward declarations (defined below).
inline void Touch(CommandContext& ctx, KeyAccess& access, uint16_t current_stamp);
inline void Touch(CommandContext& ctx, KeyAccess& access);

// The read path of commands on strings that answer an integer for a missing key (STRLEN,
// GETBIT, BITCOUNT, BITPOS): counts the lookup, replies `if_missing` or WRONGTYPE and returns
// false when there is no string to work on; otherwise sets `*value` and marks the key accessed.
inline bool ReadStringOrReply(CommandContext& ctx, KeyAccess& access, int64_t if_missing,
                              std::string_view* value) {
  CountLookup(ctx, access.exists());
  if (!access.exists()) {
    ctx.reply.Integer(if_missing);
    return false;
  }
  if (!FoundStringOrReply(ctx, access)) return false;
  *value = access.found.str;
  Touch(ctx, access, access.found.access);
  return true;
}

// Marks the key as accessed now (LRU clock or LFU counter, for eviction and OBJECT IDLETIME /
// FREQ) unless the client asked for CLIENT NO-TOUCH.
inline void Touch(CommandContext& ctx, KeyAccess& access, uint16_t current_stamp) {
  if (ctx.client.no_touch || !access.exists()) return;
  thread_local uint64_t random_state = 0x9e3779b97f4a7c15ULL ^ ctx.client.id;
  random_state ^= random_state << 13;
  random_state ^= random_state >> 7;
  random_state ^= random_state << 17;
  access.table.SetAccess(
      access.slot,
      TouchAccessStamp(ctx.server.access_mode(), current_stamp, ctx.server.CoarseNowMs(),
                       random_state, ctx.server.lfu_log_factor(), ctx.server.lfu_decay_minutes()));
}

inline void Touch(CommandContext& ctx, KeyAccess& access) {
  if (ctx.client.no_touch || !access.exists()) return;
  Touch(ctx, access, access.view().access);
}

// Hands a write's effect to the log. Call it while the key's shard lock is held, so effects on
// one key reach the log in the order they were applied. Free when no log is attached.
inline void LogEffect(CommandContext& ctx, int db, std::initializer_list<std::string_view> args) {
  if (!ctx.server.logging_effects()) return;
  ctx.server.LogEffect(db, std::vector<std::string>(args.begin(), args.end()));
}

// Logs the key's current string value with its absolute expiry: SET key value [PXAT ms].
inline void LogStringSet(CommandContext& ctx, const KeyAccess& access) {
  if (!ctx.server.logging_effects()) return;
  RecordView view = access.view();
  std::vector<std::string> args = {"SET", std::string(access.key), std::string(view.str)};
  if (view.expire_ms > 0) {
    args.emplace_back("PXAT");
    args.push_back(std::to_string(view.expire_ms));
  }
  ctx.server.LogEffect(access.db, std::move(args));
}

// Logs the key's expiry as it now stands: PEXPIREAT key ms, or PERSIST key.
inline void LogExpiry(CommandContext& ctx, const KeyAccess& access) {
  if (!ctx.server.logging_effects()) return;
  int64_t expire_ms = access.view().expire_ms;
  if (expire_ms > 0) {
    ctx.server.LogEffect(access.db,
                         {"PEXPIREAT", std::string(access.key), std::to_string(expire_ms)});
  } else {
    ctx.server.LogEffect(access.db, {"PERSIST", std::string(access.key)});
  }
}

// Counts one change for rdb_changes_since_last_save.
inline void CountDirty(CommandContext& ctx, uint64_t changes = 1) {
  AddOwned(ctx.server.LocalStats().dirty, changes);
}

// Stores `value` as a string at the key, with `expire_ms` (0 = none). Chooses the encoding.
inline void PutString(CommandContext& ctx, KeyAccess& access, std::string_view value,
                      int64_t expire_ms, bool force_raw = false) {
  ValueSpec spec;
  MakeStringSpec(value, force_raw, &spec);
  access.slot =
      access.table.PutAt(access.slot, access.key, access.hash, spec, expire_ms, NewStamp(ctx));
}

}  // namespace gigakv::server
