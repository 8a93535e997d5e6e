// Keyspace family: DEL, UNLINK, EXISTS, TOUCH, TYPE, RENAME, RENAMENX, COPY, MOVE, SWAPDB, KEYS,
// SCAN, RANDOMKEY, OBJECT, EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT, TTL/PTTL, EXPIRETIME/PEXPIRETIME,
// PERSIST.
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <random>

#include "gigakv/access_stamp.h"
#include "gigakv/glob.h"
#include "gigakv/large_buffer.h"
#include "persistence/rdb/rdb_io.h"
#include "persistence/rdb/rdb_values.h"
#include "server/commands/args.h"
#include "server/commands/collection_access.h"
#include "server/commands/key_access.h"
#include "server/commands/scan_args.h"
#include "server/keyspace.h"
#include "server/settings.h"

namespace gigakv::server {
namespace {

// Visits keys 1..argc-1 one shard at a time, each looked up as `lookup`; `fn` gets each
// existing key's access.
template <typename Fn>
int64_t ForEachExistingKey(CommandContext& ctx, Lookup lookup, Fn&& fn) {
  int64_t count = 0;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    WithKey(ctx, ctx.arg(i), lookup, [&](KeyAccess& access) {
      if (!access.exists()) return;
      ++count;
      fn(access);
    });
  }
  return count;
}

// `lazy`: its large values count as lazy frees the user asked for (UNLINK). Only the removal
// itself does: a large value that the lookup finds expired is an expiry, freed as any other.
void DelGeneric(CommandContext& ctx, bool lazy) {
  // Redis deletes without a lookup: neither counted nor touched.
  int64_t removed = ForEachExistingKey(ctx, Lookup::kPeek, [&](KeyAccess& access) {
    // A collection of more than Store::kLargeObjectElements elements, or a string of a
    // megabyte or more, is freed on the lazy-free thread (the store's reclaimer), so deleting
    // millions of elements does not stall the I/O thread (Redis's LAZYFREE_THRESHOLD).
    std::optional<Keyspace::UserLazyFreeScope> user_lazy_free;
    if (lazy) user_lazy_free.emplace();
    access.table.Erase(access.slot);
    user_lazy_free.reset();
    access.slot = KeyTable::kNoSlot;
    PublishChange(ctx, access.db, access.key, {kGenericEvents, "del"}, {"DEL", access.key});
  });
  ctx.reply.Integer(removed);
}

// DEL and UNLINK both free large values on the lazy-free thread; they differ in what INFO
// reports, as in Redis: UNLINK's frees (and DEL's with lazyfree-lazy-user-del yes) are lazy
// frees (lazyfreed_objects), DEL's otherwise are not, as Redis frees those in place.
void CmdDel(CommandContext& ctx) { DelGeneric(ctx, ctx.settings().lazyfree_lazy_user_del.get()); }

void CmdUnlink(CommandContext& ctx) { DelGeneric(ctx, /*lazy=*/true); }

void CmdExists(CommandContext& ctx) {
  ctx.reply.Integer(ForEachExistingKey(ctx, Lookup::kReadNoTouch, [](KeyAccess&) {}));
}

// The read lookup touches each key found.
void CmdTouch(CommandContext& ctx) {
  ctx.reply.Integer(ForEachExistingKey(ctx, Lookup::kRead, [](KeyAccess&) {}));
}

void CmdType(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kReadNoTouch, [&](KeyAccess& access) {
    ctx.reply.SimpleString(access.exists() ? KeyTypeName(access.view().type()) : "none");
  });
}

// --- Moving values between keys and databases ----------------------------------------------

// Moves the value of `source` (which must exist), with its TTL and its access stamp as the
// lookup left it, to `key` in `target` (RENAME, MOVE): Redis moves the object, LRU clock or LFU
// counter included. Heap values change owner without being copied.
void MoveValue(KeyAccess& source, KeyTable& target, std::string_view key, uint64_t hash) {
  int64_t expire_ms = source.view().expire_ms;
  ValueSpec spec;
  std::string inline_copy;
  source.table.Release(source.slot, &spec, &inline_copy);
  source.slot = KeyTable::kNoSlot;
  target.Put(key, hash, spec, expire_ms, source.found.access);
}

// Copies the value of `source` into `spec` (deep copy of heap values). Like Redis's COPY, which
// duplicates the object, the copy of an integer is never a shared one (OBJECT REFCOUNT 1).
void CopyValue(KeyAccess& source, ValueSpec* spec, std::string* inline_copy) {
  RecordView view = source.view();
  spec->kind = view.kind;
  spec->unshared = view.kind == ValueKind::kStringInt;
  spec->external = nullptr;
  spec->object = nullptr;
  spec->bytes = {};
  if (view.kind == ValueKind::kStringExternal) {
    spec->external = new std::string(CopyLarge(view.str));
  } else if (view.kind == ValueKind::kObject) {
    spec->object = view.object->Clone();
  } else {
    inline_copy->assign(view.str);
    spec->bytes = *inline_copy;
  }
}

void RenameGeneric(CommandContext& ctx, bool only_if_missing) {
  std::string_view from = ctx.arg(1), to = ctx.arg(2);
  Store::MultiLock lock = ctx.store.LockKeys({from, to});
  KeyAccess source = FindLocked(ctx, from, Lookup::kWrite);
  if (!source.exists()) {
    ctx.reply.Error(errors::kNoSuchKey);
    return;
  }
  if (from == to) {
    if (only_if_missing) {
      ctx.reply.Integer(0);
    } else {
      ctx.reply.Ok();
    }
    return;
  }
  KeyAccess target = FindLocked(ctx, to, Lookup::kWrite);
  if (only_if_missing && target.exists()) {
    ctx.reply.Integer(0);
    return;
  }
  // Put finds the target again itself: erasing the source may have moved its index slot.
  MoveValue(source, target.table, to, target.hash);
  // Redis deletes an existing target and adds the key anew: "new" either way.
  NotifyNewKey(ctx, ctx.db(), to);
  const ChangedKey renamed[] = {{ctx.db(), from}, {ctx.db(), to}};
  const KeyEvent events[] = {{kGenericEvents, "rename_from", ctx.db(), from},
                             {kGenericEvents, "rename_to", ctx.db(), to}};
  const std::string_view effect[] = {"RENAME", from, to};
  PublishChange(ctx, ctx.db(), renamed, events, effect);
  if (only_if_missing) {
    ctx.reply.Integer(1);
  } else {
    ctx.reply.Ok();
  }
}

void CmdRename(CommandContext& ctx) { RenameGeneric(ctx, false); }
void CmdRenameNx(CommandContext& ctx) { RenameGeneric(ctx, true); }

void CmdCopy(CommandContext& ctx) {
  std::string_view from = ctx.arg(1), to = ctx.arg(2);
  int target_db = ctx.db();
  bool replace = false;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    if (ArgIs(ctx.arg(i), "replace")) {
      replace = true;
    } else if (ArgIs(ctx.arg(i), "db") && i + 1 < ctx.argc()) {
      if (!ParseDbIndexOrReply(ctx, ctx.arg(++i), &target_db)) return;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if (from == to && target_db == ctx.db()) {
    ctx.reply.Error(errors::kSameObject);
    return;
  }
  Store::MultiLock lock = ctx.store.LockKeys({from, to});
  KeyAccess source = FindLocked(ctx, from, Lookup::kRead);
  if (!source.exists()) {
    ctx.reply.Integer(0);
    return;
  }
  KeyAccess target = FindLocked(ctx, to, Lookup::kWrite, target_db);
  if (target.exists() && !replace) {
    ctx.reply.Integer(0);
    return;
  }
  ValueSpec spec;
  std::string inline_copy;
  CopyValue(source, &spec, &inline_copy);
  int64_t expire_ms = source.view().expire_ms;
  target.table.Put(to, target.hash, spec, expire_ms, NewStamp(ctx));
  NotifyNewKey(ctx, target_db, to);  // Redis deletes a replaced target and adds the copy anew.
  const ChangedKey copied{target_db, to};
  const KeyEvent event{kGenericEvents, "copy_to", target_db, to};
  IntText target_text(target_db);
  const std::string_view effect[] = {"COPY", from, to, "DB", target_text.view(), "REPLACE"};
  PublishChange(ctx, ctx.db(), absl::MakeConstSpan(&copied, 1), absl::MakeConstSpan(&event, 1),
                effect);
  ctx.reply.Integer(1);
}

void CmdMove(CommandContext& ctx) {
  int target_db;
  if (!ParseDbIndexOrReply(ctx, ctx.arg(2), &target_db)) return;
  if (target_db == ctx.db()) {
    ctx.reply.Error(errors::kSameObject);
    return;
  }
  std::string_view key = ctx.arg(1);
  // Both databases' tables for this key live in the same shard: one lock covers the move.
  WithKey(ctx, key, Lookup::kWrite, [&](KeyAccess& source) {
    if (!source.exists()) {
      ctx.reply.Integer(0);
      return;
    }
    KeyTable& target_table = source.shard.Table(target_db);
    if (FindLocked(ctx, key, Lookup::kWrite, target_db).exists()) {
      ctx.reply.Integer(0);
      return;
    }
    MoveValue(source, target_table, key, source.hash);
    NotifyNewKey(ctx, target_db, key);
    const ChangedKey moved[] = {{source.db, key}, {target_db, key}};
    const KeyEvent events[] = {{kGenericEvents, "move_from", source.db, key},
                               {kGenericEvents, "move_to", target_db, key}};
    IntText target_text(target_db);
    const std::string_view effect[] = {"MOVE", key, target_text.view()};
    PublishChange(ctx, source.db, moved, events, effect);
    ctx.reply.Integer(1);
  });
}

void CmdSwapDb(CommandContext& ctx) {
  int64_t a, b;
  if (!ParseInt64(ctx.arg(1), &a)) {
    ctx.reply.Error("ERR invalid first DB index");
    return;
  }
  if (!ParseInt64(ctx.arg(2), &b)) {
    ctx.reply.Error("ERR invalid second DB index");
    return;
  }
  if (a < 0 || b < 0 || a >= ctx.store.databases() || b >= ctx.store.databases()) {
    ctx.reply.Error(errors::kDbIndexOutOfRange);
    return;
  }
  {
    // Published under all shard locks so no write of either database falls on the wrong side
    // of it. A watched key of either database changes if it exists on either side.
    Store::MultiLock lock = ctx.store.LockAllShards();
    const std::function<bool(int, std::string_view)> exists_on_either_side =
        [&](int, std::string_view key) {
          Shard& shard = ctx.store.shard(ctx.store.ShardIndex(key));
          return ctx.store.HasRecord(shard, static_cast<int>(a), key) ||
                 ctx.store.HasRecord(shard, static_cast<int>(b), key);
        };
    PublishDatabaseChange(ctx, ChangeScope::kSwapDatabases, ctx.db(),
                          {"SWAPDB", ctx.arg(1), ctx.arg(2)}, exists_on_either_side,
                          /*dirty=*/1, static_cast<int>(a), static_cast<int>(b));
    for (uint32_t i = 0; i < ctx.store.shard_count(); ++i) {
      ctx.store.shard(i).SwapTables(static_cast<int>(a), static_cast<int>(b));
    }
  }
  ctx.reply.Ok();
}

// --- Iteration ---------------------------------------------------------------------------------

void CmdKeys(CommandContext& ctx) {
  std::string_view pattern = ctx.arg(1);
  bool all = pattern == "*";
  std::vector<std::string> keys;
  uint64_t cursor = 0;
  do {
    cursor = ctx.store.Scan(ctx.db(), cursor, SIZE_MAX, &keys, [&](std::string_view key, KeyType) {
      return all || GlobMatch(pattern, key);
    });
  } while (cursor != 0);
  ctx.reply.ArrayHeader(static_cast<int64_t>(keys.size()));
  for (const std::string& key : keys) ctx.reply.Bulk(key);
}

bool ParseTypeName(std::string_view name, KeyType* type) {
  for (KeyType candidate :
       {KeyType::kString, KeyType::kList, KeyType::kSet, KeyType::kZSet, KeyType::kHash,
        KeyType::kStream}) {
    if (EqualsIgnoreCase(name, KeyTypeName(candidate))) {
      *type = candidate;
      return true;
    }
  }
  return false;
}

void CmdScan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursorOrReply(ctx, ctx.arg(1), &cursor)) return;
  ScanOptions options;
  if (!ParseScanOptionsOrReply(ctx, 2, /*allow_type=*/true, &options)) return;
  KeyType type = KeyType::kString;
  bool known_type = !options.has_type || ParseTypeName(options.type, &type);
  std::vector<std::string> keys;
  uint64_t next = ctx.store.Scan(
      ctx.db(), cursor, static_cast<size_t>(options.count), &keys,
      [&](std::string_view key, KeyType key_type) {
        if (options.has_type && (!known_type || key_type != type)) return false;
        return options.Matches(key);
      },
      // As in Redis 7.0: expired keys are removed only if they match the pattern.
      [&](std::string_view key) { return options.Matches(key); });
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(StrCat(next));
  ctx.reply.ArrayHeader(static_cast<int64_t>(keys.size()));
  for (const std::string& key : keys) ctx.reply.Bulk(key);
}

void CmdRandomKey(CommandContext& ctx) {
  thread_local std::mt19937_64 rng(std::random_device{}());
  Store& store = ctx.store;
  int db = ctx.db();
  uint32_t shards = store.shard_count();
  uint32_t first = static_cast<uint32_t>(rng() % shards);
  // Try shards from a random start; within a shard, a random occupied slot. Expired keys found
  // this way are deleted and the pick retried (bounded).
  for (int attempt = 0; attempt < 100; ++attempt) {
    bool any = false;
    for (uint32_t n = 0; n < shards; ++n) {
      Shard& shard = store.shard((first + n) % shards);
      Store::ShardLock lock(store, shard);
      KeyTable* table = shard.FindTable(db);
      if (table == nullptr) continue;
      any = true;
      uint32_t slot = table->OccupiedAtOrAfter(static_cast<size_t>(rng() % table->capacity()));
      RecordView view = table->View(slot);
      if (store.IsExpired(view.expire_ms)) {
        std::string key(view.key);
        store.FindLive(shard, db, key, store.Hash(key));  // Deletes it (lazy expiry).
        break;
      }
      ctx.reply.Bulk(view.key);
      return;
    }
    if (!any) break;
    first = static_cast<uint32_t>(rng() % shards);
  }
  ctx.reply.Null();
}

// --- OBJECT ----------------------------------------------------------------------------------

std::string_view EncodingName(const RecordView& view) {
  switch (view.kind) {
    case ValueKind::kStringInt:
      return "int";
    case ValueKind::kStringEmbstr:
      return "embstr";
    case ValueKind::kStringRaw:
    case ValueKind::kStringExternal:
      return "raw";
    case ValueKind::kObject:
      return view.object->encoding_name();
    case ValueKind::kInlineHash:
    case ValueKind::kInlineSet:
    case ValueKind::kInlineZSet:
      return "listpack";
    case ValueKind::kInlineIntset:
      return "intset";
  }
  return "unknown";
}

bool LfuPolicy(CommandContext& ctx) { return ctx.settings().access_mode() == AccessMode::kLfu; }

void CmdObjectEncoding(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(2), Lookup::kInspect, [&](KeyAccess& access) {
    if (!access.exists()) {
      ctx.reply.Null();
      return;
    }
    ctx.reply.Bulk(EncodingName(access.view()));
  });
}

void CmdObjectRefcount(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(2), Lookup::kInspect, [&](KeyAccess& access) {
    if (!access.exists()) {
      ctx.reply.Null();
      return;
    }
    RecordView view = access.view();
    int64_t number;
    // Redis shares the objects of small integers and reports them as referenced INT_MAX times,
    // except under a maxmemory limit with an LRU or LFU policy (each key then needs its own
    // access stamp; Redis decides when the value is stored, gigakv when asked) and except the
    // duplicates COPY makes (refcount 1; the record's `unshared` flag).
    bool shared = ctx.keyspace().SharesSmallIntegers() && view.kind == ValueKind::kStringInt &&
                  !view.unshared && ParseInt64(view.str, &number) && number >= 0 && number < 10000;
    ctx.reply.Integer(shared ? INT32_MAX : 1);
  });
}

// OBJECT IDLETIME / FREQ: like Redis, a missing key is nil before the policy is checked.
void CmdObjectIdletime(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(2), Lookup::kInspect, [&](KeyAccess& access) {
    if (!access.exists()) {
      ctx.reply.Null();
    } else if (LfuPolicy(ctx)) {
      ctx.reply.Error(
          "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
          "switching between policies at runtime LRU and LFU data will take some time to adjust.");
    } else {
      ctx.reply.Integer(IdleSeconds(access.view().access, ctx.keyspace().CoarseNowMs()));
    }
  });
}

void CmdObjectFreq(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(2), Lookup::kInspect, [&](KeyAccess& access) {
    if (!access.exists()) {
      ctx.reply.Null();
    } else if (!LfuPolicy(ctx)) {
      ctx.reply.Error(
          "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
          "that when switching between policies at runtime LRU and LFU data will take some time "
          "to adjust.");
    } else {
      ctx.reply.Integer(LfuCounter(access.view().access, ctx.keyspace().CoarseNowMs(),
                                   ctx.settings().lfu_decay_minutes.get()));
    }
  });
}

void CmdObjectHelp(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ENCODING <key>",
      "    Return the kind of internal representation used in order to store the value",
      "    associated with a <key>.",
      "FREQ <key>",
      "    Return the access frequency index of the <key>. The returned integer is",
      "    proportional to the logarithm of the recent access frequency of the key.",
      "IDLETIME <key>",
      "    Return the idle time of the <key>, that is the approximated number of",
      "    seconds elapsed since the last access to the key.",
      "REFCOUNT <key>",
      "    Return the number of references of the value associated with the specified",
      "    <key>.",
      "HELP",
      "    Prints this help."};
  ctx.reply.ArrayHeader(static_cast<int64_t>(std::size(kLines)));
  for (std::string_view line : kLines) ctx.reply.SimpleString(line);
}

// --- Expiry ------------------------------------------------------------------------------------

// EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT with NX/XX/GT/LT (Redis's expireGenericCommand).
void ExpireGeneric(CommandContext& ctx, bool relative, bool seconds) {
  bool nx = false, xx = false, gt = false, lt = false;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    std::string_view opt = ctx.arg(i);
    if (ArgIs(opt, "nx")) {
      nx = true;
    } else if (ArgIs(opt, "xx")) {
      xx = true;
    } else if (ArgIs(opt, "gt")) {
      gt = true;
    } else if (ArgIs(opt, "lt")) {
      lt = true;
    } else {
      ctx.reply.Error(StrCat("ERR Unsupported option ", opt));
      return;
    }
  }
  if (nx && (xx || gt || lt)) {
    ctx.reply.Error(errors::kNxXxGtLt);
    return;
  }
  if (gt && lt) {
    ctx.reply.Error("ERR GT and LT options at the same time are not compatible");
    return;
  }
  int64_t when;  // Parsed after the options, as Redis does.
  if (!ParseIntOrReply(ctx, ctx.arg(2), &when)) return;
  auto invalid = [&] { ctx.reply.Error(FormatText(errors::kExpireInvalid, {ctx.spec.name})); };
  if (seconds) {
    if (when > INT64_MAX / 1000 || when < INT64_MIN / 1000) return invalid();
    when *= 1000;
  }
  if (relative) {
    int64_t now = ctx.store.NowMs();
    if (when > INT64_MAX - now) return invalid();
    when += now;
  }
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    if (!access.exists()) {
      ctx.reply.Integer(0);
      return;
    }
    int64_t current = access.view().expire_ms;  // 0 = none (infinite).
    if ((nx && current != 0) || (xx && current == 0) || (gt && (current == 0 || when <= current)) ||
        (lt && current != 0 && when >= current)) {
      ctx.reply.Integer(0);
      return;
    }
    // Reply and notification in the order Redis writes them (a RESP3 client that listens to
    // its own keys sees the difference).
    if (when <= 0 || ctx.store.IsExpired(when)) {
      access.table.Erase(access.slot);  // A deadline already passed deletes the key.
      PublishChange(ctx, access.db, access.key, {kGenericEvents, "del"}, {"DEL", access.key});
      ctx.reply.Integer(1);
    } else {
      access.table.SetExpire(access.slot, when);
      ctx.reply.Integer(1);
      PublishExpiry(ctx, access);
    }
  });
}

void CmdExpire(CommandContext& ctx) { ExpireGeneric(ctx, true, true); }
void CmdPExpire(CommandContext& ctx) { ExpireGeneric(ctx, true, false); }
void CmdExpireAt(CommandContext& ctx) { ExpireGeneric(ctx, false, true); }
void CmdPExpireAt(CommandContext& ctx) { ExpireGeneric(ctx, false, false); }

// TTL, PTTL, EXPIRETIME, PEXPIRETIME.
void TtlGeneric(CommandContext& ctx, bool milliseconds, bool absolute) {
  WithKey(ctx, ctx.arg(1), Lookup::kReadNoTouch, [&](KeyAccess& access) {
    if (!access.exists()) {
      ctx.reply.Integer(-2);
      return;
    }
    int64_t expire_ms = access.view().expire_ms;
    if (expire_ms == 0) {
      ctx.reply.Integer(-1);
      return;
    }
    int64_t value = absolute ? expire_ms : std::max<int64_t>(0, expire_ms - ctx.store.NowMs());
    // Round to seconds without overflowing near INT64_MAX (value is never negative here).
    ctx.reply.Integer(
        milliseconds ? value : static_cast<int64_t>((static_cast<uint64_t>(value) + 500) / 1000));
  });
}

void CmdTtl(CommandContext& ctx) { TtlGeneric(ctx, false, false); }
void CmdPTtl(CommandContext& ctx) { TtlGeneric(ctx, true, false); }
void CmdExpireTime(CommandContext& ctx) { TtlGeneric(ctx, false, true); }
void CmdPExpireTime(CommandContext& ctx) { TtlGeneric(ctx, true, true); }

void CmdPersist(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    if (!access.exists() || access.view().expire_ms == 0) {
      ctx.reply.Integer(0);
      return;
    }
    access.table.SetExpire(access.slot, 0);
    PublishExpiry(ctx, access);
    ctx.reply.Integer(1);
  });
}

// --- DUMP / RESTORE --------------------------------------------------------------------------
// The payload is Redis's: one RDB value (type byte and value), the RDB version (2 bytes LE) and
// the CRC-64 of what precedes it (persistence/rdb/rdb_format.h), so payloads move between
// gigakv and Redis both ways.

void CmdDump(CommandContext& ctx) {
  std::string payload;
  const bool found = WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    if (!access.exists()) return false;
    payload =
        persistence::rdb::EncodeDumpPayload(access.view(), ctx.settings().rdbcompression.get());
    return true;
  });
  if (found) {
    ctx.reply.Bulk(payload);
  } else {
    ctx.reply.Null();
  }
}

// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency], checked in
// Redis 7.0's order: options, the key's absence, the TTL, the payload's footer, its value.
void CmdRestore(CommandContext& ctx) {
  bool replace = false, absttl = false;
  int64_t idle_s = -1, freq = -1;
  for (size_t i = 4; i < ctx.argc(); ++i) {
    const bool has_value = i + 1 < ctx.argc();
    if (ArgIs(ctx.arg(i), "replace")) {
      replace = true;
    } else if (ArgIs(ctx.arg(i), "absttl")) {
      absttl = true;
    } else if (ArgIs(ctx.arg(i), "idletime") && has_value && freq == -1) {
      if (!ParseIntOrReply(ctx, ctx.arg(++i), &idle_s)) return;
      if (idle_s < 0) return ctx.reply.Error("ERR Invalid IDLETIME value, must be >= 0");
    } else if (ArgIs(ctx.arg(i), "freq") && has_value && idle_s == -1) {
      if (!ParseIntOrReply(ctx, ctx.arg(++i), &freq)) return;
      if (freq < 0 || freq > 255) {
        return ctx.reply.Error("ERR Invalid FREQ value, must be >= 0 and <= 255");
      }
    } else {
      return ctx.reply.Error(errors::kSyntax);
    }
  }
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    if (!replace && access.exists()) {
      return ctx.reply.Error(errors::kBusyKey);
    }
    int64_t ttl = 0;
    if (!ParseIntOrReply(ctx, ctx.arg(2), &ttl)) return;
    if (ttl < 0) return ctx.reply.Error("ERR Invalid TTL value, must be >= 0");
    std::string_view value_bytes;
    if (absl::Status status = persistence::rdb::VerifyDumpPayload(ctx.arg(3), &value_bytes);
        !status.ok()) {
      return ctx.reply.Error(errors::kBadDumpPayload);
    }
    persistence::rdb::RdbReader reader(value_bytes);
    absl::StatusOr<uint8_t> type = reader.ReadByte();
    if (!type.ok()) return ctx.reply.Error(errors::kBadDataFormat);
    // ReadValue refuses unknown types, streams and modules itself.
    absl::StatusOr<persistence::rdb::LoadedValue> loaded =
        persistence::rdb::ReadValue(reader, *type, ctx.settings().collection_limits(),
                                    static_cast<uint64_t>(ctx.settings().proto_max_bulk_len.get()));
    if (!loaded.ok() || loaded->kind == persistence::rdb::LoadedValue::Kind::kEmpty) {
      return ctx.reply.Error(errors::kBadDataFormat);
    }
    const bool deleted = access.exists();
    if (deleted) {
      access.table.Erase(access.slot);
      access.slot = KeyTable::kNoSlot;
    }
    int64_t expire_ms = ttl == 0 ? 0 : (absttl ? ttl : ctx.keyspace().NowMs() + ttl);
    if (expire_ms < 0 || ctx.store.IsExpired(expire_ms)) {
      // Already expired: nothing is stored; a replaced key is gone, as DEL.
      if (deleted) {
        PublishChange(ctx, access.db, access.key, {kGenericEvents, "del"}, {"DEL", access.key});
      }
      return ctx.reply.Ok();
    }
    // The access stamp Redis's objectSetLRUOrLFU gives: the asked idle time under an LRU
    // policy, the asked counter under an LFU one, else a fresh stamp.
    const int64_t now_ms = ctx.keyspace().CoarseNowMs();
    uint16_t stamp = NewStamp(ctx);
    if (ctx.settings().access_mode() == AccessMode::kLfu && freq >= 0) {
      stamp = static_cast<uint16_t>((NewAccessStamp(AccessMode::kLfu, now_ms) & 0xff00) | freq);
    } else if (ctx.settings().access_mode() == AccessMode::kLru && idle_s >= 0) {
      stamp = LruAccessStamp(now_ms - idle_s * 1000);
    }
    NotifyNewKey(ctx, access.db, access.key);  // Added anew, as Redis (a replaced key too).
    ValueSpec spec;
    if (loaded->kind == persistence::rdb::LoadedValue::Kind::kString) {
      MakeStringSpec(loaded->string, /*force_raw=*/false, &spec);
      access.slot =
          access.table.PutAt(access.slot, access.key, access.hash, spec, expire_ms, stamp);
    } else {
      spec.kind = ValueKind::kObject;
      spec.object = loaded->object.release();
      const bool compact_kind = spec.object->type() != KeyType::kList;
      access.slot =
          access.table.PutAt(access.slot, access.key, access.hash, spec, expire_ms, stamp);
      if (compact_kind) NoteInlineWriteBack(access.db, access.key);  // Stored back inline.
    }
    // The effect: RESTORE with the absolute deadline, as Redis propagates it.
    IntText deadline(expire_ms);
    std::vector<std::string_view> effect = {"RESTORE", access.key, deadline.view(), ctx.arg(3),
                                            "REPLACE"};
    if (expire_ms != 0) effect.push_back("ABSTTL");
    PublishChange(ctx, access.db, access.key, {kGenericEvents, "restore"}, effect);
    ctx.reply.Ok();
  });
}

}  // namespace

const std::vector<CommandBinding>& KeyspaceCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"del", CmdDel, kBoundedWork},
      {"unlink", CmdUnlink},
      {"exists", CmdExists},
      {"touch", CmdTouch},
      {"type", CmdType},
      {"rename", CmdRename},
      {"renamenx", CmdRenameNx},
      {"copy", CmdCopy},
      {"dump", CmdDump},
      {"restore", CmdRestore},
      {"move", CmdMove},
      {"swapdb", CmdSwapDb},
      {"keys", CmdKeys},
      {"scan", CmdScan},
      {"randomkey", CmdRandomKey},
      {"object", nullptr},
      {"object|encoding", CmdObjectEncoding},
      {"object|refcount", CmdObjectRefcount},
      {"object|idletime", CmdObjectIdletime},
      {"object|freq", CmdObjectFreq},
      {"object|help", CmdObjectHelp},
      {"expire", CmdExpire},
      {"pexpire", CmdPExpire},
      {"expireat", CmdExpireAt},
      {"pexpireat", CmdPExpireAt},
      {"ttl", CmdTtl},
      {"pttl", CmdPTtl},
      {"expiretime", CmdExpireTime},
      {"pexpiretime", CmdPExpireTime},
      {"persist", CmdPersist},
  };
  return kCommands;
}

}  // namespace gigakv::server
