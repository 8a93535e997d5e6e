// Shared helpers for handlers that work on keys: lock the key's shard, find it with lazy expiry,
// count keyspace hits/misses, and check types. Used by every keyspace-touching family.
#pragma once

#include <charconv>
#include <string_view>

#include "absl/types/span.h"
#include "gigakv/access_stamp.h"
#include "gigakv/change_stream.h"
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
  ThreadStats& stats = ctx.server.stats().Local();
  AddOwned(hit ? stats.keyspace_hits : stats.keyspace_misses, 1);
}

// The access stamp for a record written now (LRU clock or fresh LFU counter).
inline uint16_t NewStamp(CommandContext& ctx) {
  return NewAccessStamp(ctx.server.settings().access_mode(), ctx.server.keyspace().CoarseNowMs());
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
      TouchAccessStamp(ctx.server.settings().access_mode(), current_stamp, ctx.server.keyspace().CoarseNowMs(),
                       random_state, ctx.server.settings().lfu_log_factor.get(),
                       ctx.server.settings().lfu_decay_minutes.get()));
}

inline void Touch(CommandContext& ctx, KeyAccess& access) {
  if (ctx.client.no_touch || !access.exists()) return;
  Touch(ctx, access, access.view().access);
}

// --- Publishing changes ---------------------------------------------------------------------
// Every write publishes what it changed on the change stream (gigakv/change_stream.h) while it
// holds the shard lock(s) of the keys: the keys, and the deterministic effect that reproduces
// the change. Free (one relaxed load) while nobody consumes the stream. Effects that take work
// to build are built only when WantsEffects(ctx); the keys are always given.

// An integer's decimal text in a buffer of its own, for effects built from views.
class IntText {
 public:
  explicit IntText(int64_t value) {
    size_ =
        static_cast<size_t>(std::to_chars(buffer_, buffer_ + sizeof(buffer_), value).ptr - buffer_);
  }
  std::string_view view() const { return {buffer_, size_}; }

 private:
  char buffer_[24];
  size_t size_;
};

inline bool WantsEffects(CommandContext& ctx) { return ctx.server.keyspace().changes().wants_effects(); }

// `keys` (each in its database) changed in a way `effect`, run in `db`, reproduces.
inline void PublishChange(CommandContext& ctx, int db, absl::Span<const ChangedKey> keys,
                          absl::Span<const std::string_view> effect, bool signals_watchers = true) {
  ChangeStream& changes = ctx.server.keyspace().changes();
  if (!changes.active()) return;
  ChangeRecord record;
  record.db = db;
  record.keys = keys;
  if (changes.wants_effects()) record.effect = effect;
  record.signals_watchers = signals_watchers;
  changes.Publish(record);
}

// One key changed, reproduced by `effect` (run in `db`).
inline void PublishChange(CommandContext& ctx, int db, std::string_view key,
                          std::initializer_list<std::string_view> effect) {
  const ChangedKey changed{db, key};
  PublishChange(ctx, db, absl::MakeConstSpan(&changed, 1),
                absl::MakeConstSpan(effect.begin(), effect.size()));
}

// One key changed; `effect` was built by the caller if WantsEffects (else it may be empty).
inline void PublishBuiltChange(CommandContext& ctx, int db, std::string_view key,
                               const std::vector<std::string>& effect,
                               bool signals_watchers = true) {
  if (!ctx.server.keyspace().changes().active()) return;
  std::vector<std::string_view> views(effect.begin(), effect.end());
  const ChangedKey changed{db, key};
  PublishChange(ctx, db, absl::MakeConstSpan(&changed, 1), views, signals_watchers);
}

// A change of whole databases (FLUSHDB, FLUSHALL, SWAPDB a b), published with every shard locked
// and before the change: `key_existed` answers for the state the change starts from.
inline void PublishDatabaseChange(CommandContext& ctx, ChangeScope scope, int db,
                                  std::initializer_list<std::string_view> effect,
                                  const std::function<bool(int, std::string_view)>& key_existed,
                                  int swap_a = 0, int swap_b = 0) {
  ChangeStream& changes = ctx.server.keyspace().changes();
  if (!changes.active()) return;
  ChangeRecord record;
  record.cause = scope == ChangeScope::kSwapDatabases ? ChangeCause::kSwapDb : ChangeCause::kFlush;
  record.scope = scope;
  record.db = db;
  record.swapped_dbs[0] = swap_a;
  record.swapped_dbs[1] = swap_b;
  if (changes.wants_effects()) record.effect = absl::MakeConstSpan(effect.begin(), effect.size());
  record.key_existed = &key_existed;
  changes.Publish(record);
}

// The key now holds the string it holds, with its absolute expiry: SET key value [PXAT ms].
inline void PublishStringSet(CommandContext& ctx, const KeyAccess& access) {
  if (!ctx.server.keyspace().changes().active()) return;
  if (!WantsEffects(ctx)) {  // Keys only: no need to look at the value.
    PublishChange(ctx, access.db, access.key, {});
    return;
  }
  RecordView view = access.view();
  if (view.expire_ms <= 0) {
    PublishChange(ctx, access.db, access.key, {"SET", access.key, view.str});
    return;
  }
  IntText deadline(view.expire_ms);
  PublishChange(ctx, access.db, access.key, {"SET", access.key, view.str, "PXAT", deadline.view()});
}

// The key's expiry as it now stands: PEXPIREAT key ms, or PERSIST key.
inline void PublishExpiry(CommandContext& ctx, const KeyAccess& access) {
  if (!ctx.server.keyspace().changes().active()) return;
  if (!WantsEffects(ctx)) {  // Keys only: no need to look at the value.
    PublishChange(ctx, access.db, access.key, {});
    return;
  }
  int64_t expire_ms = access.view().expire_ms;
  if (expire_ms > 0) {
    IntText deadline(expire_ms);
    PublishChange(ctx, access.db, access.key, {"PEXPIREAT", access.key, deadline.view()});
  } else {
    PublishChange(ctx, access.db, access.key, {"PERSIST", access.key});
  }
}

// Counts one change for rdb_changes_since_last_save.
inline void CountDirty(CommandContext& ctx, uint64_t changes = 1) {
  AddOwned(ctx.server.stats().Local().dirty, changes);
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
