// Shared helpers for handlers that work on keys: lock the key's shard, find it with lazy expiry,
// check types, write strings and publish changes. Used by every keyspace-touching family.
//
// Bookkeeping lives in the access, not in the handlers:
//  - Every lookup (WithKey, FindLocked, FindLockedInShard) takes a Lookup that says what it
//    counts and touches, as Redis's lookupKeyRead / lookupKeyWrite and their LOOKUP_NOTOUCH /
//    LOOKUP_NOSTATS flags do (db.c lookupKey): a read lookup counts a keyspace hit or miss in
//    INFO, a write lookup counts nothing; both mark a found key accessed (LRU clock or LFU
//    counter, for eviction and OBJECT IDLETIME / FREQ) unless the client asked for CLIENT
//    NO-TOUCH. A key is touched whatever its type: a WRONGTYPE reply follows the lookup.
//  - Every write publishes its change (PublishChange & co.), and publishing counts the
//    change's dirty increment (rdb_changes_since_last_save), whether or not the change stream
//    has a consumer. Handlers count neither hits nor changes themselves.
#pragma once

#include <charconv>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/types/span.h"
#include "gigakv/access_stamp.h"
#include "gigakv/change_stream.h"
#include "gigakv/store.h"
#include "server/client_state.h"
#include "server/command.h"
#include "server/errors.h"
#include "server/keyspace.h"
#include "server/notifications.h"
#include "server/settings.h"
#include "server/stats.h"

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

// What a lookup counts and touches (see the top of this file).
enum class Lookup : uint8_t {
  kRead,         // lookupKeyRead: counts a hit or a miss, touches a found key.
  kReadNoTouch,  // LOOKUP_NOTOUCH: counts a hit or a miss only (EXISTS, TYPE, TTL).
  kInspect,      // LOOKUP_NOTOUCH | LOOKUP_NONOTIFY: as kReadNoTouch, no "keymiss" (OBJECT).
  kWrite,        // lookupKeyWrite: touches a found key, counts nothing.
  // Neither: where Redis reads its dictionary without a lookup (DEL, UNLINK), and for a
  // second lookup of a key the command already looked up (to delete or create it after a change).
  kPeek,
};

namespace key_access_internal {

// Marks the record at `slot` accessed now, from its stamp `current_stamp`, unless the client
// asked for CLIENT NO-TOUCH; returns the record's stamp afterwards. Under LRU the stamp is the
// coarse clock's second, written only when it moved (most touches in a busy second write
// nothing); under LFU the counter grows by Redis's logarithmic rule.
inline uint16_t Touch(CommandContext& ctx, KeyTable& table, uint32_t slot, uint16_t current_stamp) {
  if (ctx.client.no_touch) return current_stamp;
  const Settings& settings = ctx.settings();
  const int64_t now_ms = ctx.keyspace().CoarseNowMs();
  uint16_t stamp;
  if (settings.access_mode() == AccessMode::kLru) {
    stamp = LruAccessStamp(now_ms);
  } else {
    thread_local uint64_t random_state = 0x9e3779b97f4a7c15ULL ^ ctx.client.id;
    random_state ^= random_state << 13;
    random_state ^= random_state >> 7;
    random_state ^= random_state << 17;
    stamp = TouchAccessStamp(AccessMode::kLfu, current_stamp, now_ms, random_state,
                             settings.lfu_log_factor.get(), settings.lfu_decay_minutes.get());
  }
  if (stamp != current_stamp) table.SetAccess(slot, stamp);
  return stamp;
}

// The bookkeeping of a lookup that found `access` (or not). A touch also updates
// `access.found.access`, which OverwriteStamp reads.
inline void AfterLookup(CommandContext& ctx, KeyAccess& access, Lookup lookup) {
  if (lookup == Lookup::kRead || lookup == Lookup::kReadNoTouch || lookup == Lookup::kInspect) {
    ThreadStats& stats = ctx.stats().Local();
    AddOwned(access.exists() ? stats.keyspace_hits : stats.keyspace_misses, 1);
    if (!access.exists() && lookup != Lookup::kInspect) {
      KeyspaceNotifier& notifier = ctx.notifier();
      if (notifier.wants(kKeyMissEvents)) {
        notifier.Notify({kKeyMissEvents, "keymiss", access.db, access.key});
      }
    }
  }
  if ((lookup == Lookup::kRead || lookup == Lookup::kWrite) && access.exists()) {
    access.found.access = Touch(ctx, access.table, access.slot, access.found.access);
  }
}

// Counts `changes` changes in rdb_changes_since_last_save.
inline void CountDirty(CommandContext& ctx, uint64_t changes) {
  if (changes != 0) AddOwned(ctx.stats().Local().dirty, changes);
}

}  // namespace key_access_internal

// Runs fn(KeyAccess&) with `key`'s shard locked, in the client's database (or `db` if given),
// after a lookup of kind `lookup`.
template <typename Fn>
decltype(auto) WithKey(CommandContext& ctx, std::string_view key, Lookup lookup, Fn&& fn,
                       int db = -1) {
  if (db < 0) db = ctx.db();
  uint64_t hash = ctx.store.Hash(key);
  return ctx.store.WithShardOf(key, [&](Shard& shard) {
    // The lookup writes the record straight into `access` (a copy of it stalls the load that
    // reads it back).
    KeyAccess access{shard, shard.Table(db), db, key, hash, KeyTable::kNoSlot};
    access.slot = ctx.store.FindLive(shard, db, key, hash, &access.found);
    key_access_internal::AfterLookup(ctx, access, lookup);
    return fn(access);
  });
}

// Looks up `key`, whose shard (`shard_index`) the caller has locked and knows (from
// Store::LockKeys), in the client's database (or `db` if given).
inline KeyAccess FindLockedInShard(CommandContext& ctx, std::string_view key, uint32_t shard_index,
                                   Lookup lookup, int db = -1) {
  if (db < 0) db = ctx.db();
  uint64_t hash = ctx.store.Hash(key);
  Shard& shard = ctx.store.shard(shard_index);
  KeyAccess access{shard, shard.Table(db), db, key, hash, KeyTable::kNoSlot};
  access.slot = ctx.store.FindLive(shard, db, key, hash, &access.found);
  key_access_internal::AfterLookup(ctx, access, lookup);
  return access;
}

// Finds `key` again in its locked shard without lazy expiry: for a multi-key command that already
// looked it up (and found it live) earlier in the same command, as Redis's fixed command time
// makes a second lookup agree with the first.
inline KeyAccess FindLockedAgain(CommandContext& ctx, std::string_view key, Lookup lookup) {
  const int db = ctx.db();
  const uint64_t hash = ctx.store.Hash(key);
  Shard& shard = ctx.store.shard(ctx.store.ShardIndex(key));
  KeyAccess access{shard, shard.Table(db), db, key, hash, KeyTable::kNoSlot};
  access.slot = access.table.Find(key, hash);
  if (access.exists()) access.found = access.table.View(access.slot);
  key_access_internal::AfterLookup(ctx, access, lookup);
  return access;
}

// Looks up `key` in an already locked shard (multi-key commands holding a MultiLock).
inline KeyAccess FindLocked(CommandContext& ctx, std::string_view key, Lookup lookup, int db = -1) {
  return FindLockedInShard(ctx, key, ctx.store.ShardIndex(key), lookup, db);
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

// The access stamp for a record written now (LRU clock or fresh LFU counter).
inline uint16_t NewStamp(CommandContext& ctx) {
  const int64_t now_ms = ctx.keyspace().CoarseNowMs();
  const AccessMode mode = ctx.settings().access_mode();
  return mode == AccessMode::kLru ? LruAccessStamp(now_ms) : NewAccessStamp(mode, now_ms);
}

// The stamp for a value that replaces the one the write lookup found (or creates the key): a
// fresh stamp, except that under LFU the key keeps the counter the lookup just touched, as
// Redis's dbOverwrite keeps the old object's LFU field.
inline uint16_t OverwriteStamp(CommandContext& ctx, const KeyAccess& access) {
  if (access.exists() && ctx.settings().access_mode() == AccessMode::kLfu) {
    return access.found.access;
  }
  return NewStamp(ctx);
}

// --- Writing a string in place (bit and HyperLogLog commands) -------------------------------

// Takes the string at `access` (existing, string-typed) out of its record for modification.
// Large values live in a heap string owned by the record: that string is detached without a
// copy (the record is removed until StoreModified puts it back), so SETBIT on a 512 MB bitmap
// does not copy 512 MB. Small values are copied.
std::unique_ptr<std::string> TakeString(KeyAccess& access);

// Stores a modified string at the key as a raw string (Redis's encoding for values written in
// place), with `expire_ms` (0 = none) and access stamp `stamp`: OverwriteStamp of the write
// lookup, taken before TakeString (which removes the record, so the stamp a later
// OverwriteStamp would see is gone).
void StoreModified(KeyAccess& access, std::unique_ptr<std::string> value, int64_t expire_ms,
                   uint16_t stamp);

// The read path of commands on strings that answer an integer for a missing key (STRLEN,
// GETBIT, BITCOUNT, BITPOS), after a Lookup::kRead: replies `if_missing` or WRONGTYPE and
// returns false when there is no string to work on; otherwise sets `*value`.
inline bool ReadStringOrReply(CommandContext& ctx, const KeyAccess& access, int64_t if_missing,
                              std::string_view* value) {
  if (!access.exists()) {
    ctx.reply.Integer(if_missing);
    return false;
  }
  if (!FoundStringOrReply(ctx, access)) return false;
  *value = access.found.str;
  return true;
}

// --- Publishing changes ---------------------------------------------------------------------
// Every write publishes what it changed on the change stream (gigakv/change_stream.h) while it
// holds the shard lock(s) of the keys: the keys, and the deterministic effect that reproduces
// the change. Free (one relaxed load) while nobody consumes the stream. Effects that take work
// to build are built only when WantsEffects(ctx); the keys are always given.
//
// Publishing also counts the change in rdb_changes_since_last_save, always (with or without a
// consumer): `dirty` is Redis's increment for it, 1 by default. A command whose increment is
// not one per record passes its own: the number of fields, members or elements it changed
// (HSET f1 v1 f2 v2 counts 2, LPUSH k a b c 3), or 0 for a record Redis does not count (LTRIM
// that trims nothing, the DEL before a *STORE's new value).

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

inline bool WantsEffects(CommandContext& ctx) { return ctx.keyspace().changes().wants_effects(); }

// The keyspace notification a change of one key makes (server/notifications.h): its class and
// Redis's event name for the command ("set", "lpush", "hincrbyfloat"...). Every Publish* below
// takes the write's event, so no write can publish a change without deciding its notification:
// the record carries the event Redis emits after the change; kNoEvent when the command notified
// already with Notify (where Redis notifies before replying but the effect is known only after,
// e.g. SPOP, ZPOPMIN) or when Redis notifies nothing.
struct Event {
  KeyEventClass type;
  std::string_view name;
};
// For a change Redis makes without a notification (BITFIELD that only padded the key).
inline constexpr Event kNoEvent{static_cast<KeyEventClass>(0), ""};

// `keys` (each in its database) changed in a way `effect`, run in `db`, reproduces, making the
// notifications `events`.
inline void PublishChange(CommandContext& ctx, int db, absl::Span<const ChangedKey> keys,
                          absl::Span<const KeyEvent> events,
                          absl::Span<const std::string_view> effect, uint64_t dirty = 1,
                          bool signals_watchers = true) {
  key_access_internal::CountDirty(ctx, dirty);
  ChangeStream& changes = ctx.keyspace().changes();
  if (!changes.active()) return;
  ChangeRecord record;
  record.db = db;
  record.keys = keys;
  record.events = events;
  if (changes.wants_effects()) record.effect = effect;
  record.signals_watchers = signals_watchers;
  changes.Publish(record);
}

// One key changed with the notification `event`, reproduced by `effect` (`effect` built by the
// caller if WantsEffects, else it may be empty).
inline void PublishChange(CommandContext& ctx, int db, std::string_view key, Event event,
                          absl::Span<const std::string_view> effect, uint64_t dirty = 1,
                          bool signals_watchers = true) {
  const ChangedKey changed{db, key};
  const KeyEvent key_event{event.type, event.name, db, key};
  PublishChange(ctx, db, absl::MakeConstSpan(&changed, 1),
                absl::MakeConstSpan(&key_event, event.type != 0 ? 1 : 0), effect, dirty,
                signals_watchers);
}

// The same with the effect spelled out.
inline void PublishChange(CommandContext& ctx, int db, std::string_view key, Event event,
                          std::initializer_list<std::string_view> effect, uint64_t dirty = 1) {
  PublishChange(ctx, db, key, event, absl::MakeConstSpan(effect.begin(), effect.size()), dirty);
}

// One key changed; `effect` was built by the caller if WantsEffects (else it may be empty).
inline void PublishBuiltChange(CommandContext& ctx, int db, std::string_view key, Event event,
                               const std::vector<std::string>& effect, uint64_t dirty = 1,
                               bool signals_watchers = true) {
  if (!ctx.keyspace().changes().active()) {
    key_access_internal::CountDirty(ctx, dirty);
    return;
  }
  std::vector<std::string_view> views(effect.begin(), effect.end());
  PublishChange(ctx, db, key, event, views, dirty, signals_watchers);
}

// Notifications that are not a change record's (server/notifications.h): "new" where a key is
// added, as Redis's dbAdd; "del" where a command deletes the collection it emptied, after the
// command's own event. No-ops (one relaxed load) unless the class is selected.
// A write whose change makes two events names the second with Notify (SET ... EX: "set", then
// "expire").
inline void Notify(CommandContext& ctx, Event event, int db, std::string_view key) {
  ctx.notifier().Notify({event.type, event.name, db, key});
}
inline void NotifyNewKey(CommandContext& ctx, int db, std::string_view key) {
  Notify(ctx, {kNewKeyEvents, "new"}, db, key);
}
inline void NotifyDeleted(CommandContext& ctx, int db, std::string_view key) {
  Notify(ctx, {kGenericEvents, "del"}, db, key);
}

// A change of whole databases (FLUSHDB, FLUSHALL, SWAPDB a b), published with every shard locked
// and before the change: `key_existed` answers for the state the change starts from. `dirty`:
// as Redis counts it, the number of keys a flush removes, 1 for SWAPDB.
inline void PublishDatabaseChange(CommandContext& ctx, ChangeScope scope, int db,
                                  std::initializer_list<std::string_view> effect,
                                  const std::function<bool(int, std::string_view)>& key_existed,
                                  uint64_t dirty, int swap_a = 0, int swap_b = 0) {
  key_access_internal::CountDirty(ctx, dirty);
  ChangeStream& changes = ctx.keyspace().changes();
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

namespace key_access_internal {
// PublishStringSet's work while the stream has listeners (out of line: the common case, nobody
// listening, stays a load and a count in the caller).
void PublishStringSetRecord(CommandContext& ctx, const KeyAccess& access, Event event,
                            uint64_t dirty);
}  // namespace key_access_internal

// The key now holds the string it holds, with its absolute expiry: SET key value [PXAT ms].
inline void PublishStringSet(CommandContext& ctx, const KeyAccess& access, Event event,
                             uint64_t dirty = 1) {
  if (!ctx.keyspace().changes().active()) [[likely]] {  // Nobody listens: only the count.
    key_access_internal::CountDirty(ctx, dirty);
    return;
  }
  key_access_internal::PublishStringSetRecord(ctx, access, event, dirty);
}

// The key's expiry as it now stands: PEXPIREAT key ms ("expire"), or PERSIST key ("persist").
inline void PublishExpiry(CommandContext& ctx, const KeyAccess& access) {
  if (!ctx.keyspace().changes().active()) {
    key_access_internal::CountDirty(ctx, 1);
    return;
  }
  int64_t expire_ms = access.view().expire_ms;
  const Event event{kGenericEvents, expire_ms > 0 ? "expire" : "persist"};
  if (!WantsEffects(ctx)) {  // Keys only: no effect to build.
    PublishChange(ctx, access.db, access.key, event, {});
  } else if (expire_ms > 0) {
    IntText deadline(expire_ms);
    PublishChange(ctx, access.db, access.key, event, {"PEXPIREAT", access.key, deadline.view()});
  } else {
    PublishChange(ctx, access.db, access.key, event, {"PERSIST", access.key});
  }
}

// Stores `value` as a string at the key, with `expire_ms` (0 = none). Chooses the encoding.
// Notifies "new" when it adds the key.
inline void PutString(CommandContext& ctx, KeyAccess& access, std::string_view value,
                      int64_t expire_ms, bool force_raw = false) {
  if (!access.exists()) NotifyNewKey(ctx, access.db, access.key);
  ValueSpec spec;
  MakeStringSpec(value, force_raw, &spec);
  access.slot = access.table.PutAt(access.slot, access.key, access.hash, spec, expire_ms,
                                   OverwriteStamp(ctx, access));
}

// PutString for a value the caller built and gives away: a large one becomes the stored
// external string itself, without another copy (SETRANGE, APPEND).
inline void PutOwnedString(CommandContext& ctx, KeyAccess& access, std::string value,
                           int64_t expire_ms, bool force_raw) {
  if (value.size() <= StringValue::kInlineMax) {
    PutString(ctx, access, value, expire_ms, force_raw);
    return;
  }
  if (!access.exists()) NotifyNewKey(ctx, access.db, access.key);
  ValueSpec spec;
  spec.kind = ValueKind::kStringExternal;
  spec.external = new std::string(std::move(value));
  access.slot = access.table.PutAt(access.slot, access.key, access.hash, spec, expire_ms,
                                   OverwriteStamp(ctx, access));
}

}  // namespace gigakv::server
