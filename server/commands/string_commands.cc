// String family (minimal set for now): GET, SET with all options, INCR, DECR, INCRBY, DECRBY.
#include "absl/strings/str_format.h"
#include "gigakv/strings.h"
#include "server/commands/args.h"
#include "server/server.h"

namespace gigakv::server {
namespace {

// Reads the string at `key` under its shard lock and replies it (or nil / WRONGTYPE).
void CmdGet(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  uint64_t hash = ctx.store.Hash(key);
  int db = ctx.db();
  ctx.store.WithShardOf(key, [&](Shard& shard) {
    uint32_t slot = ctx.store.FindLive(shard, db, key, hash);
    if (slot == KeyTable::kNoSlot) {
      ctx.server.stats().keyspace_misses.fetch_add(1, std::memory_order_relaxed);
      ctx.reply.Null();
      return;
    }
    RecordView view = shard.Table(db).View(slot);
    if (!view.is_string()) {
      ctx.reply.Error(errors::kWrongType);
      return;
    }
    ctx.server.stats().keyspace_hits.fetch_add(1, std::memory_order_relaxed);
    ctx.reply.Bulk(view.str);
  });
}

struct SetOptions {
  enum class Condition { kAlways, kIfMissing, kIfExists } condition = Condition::kAlways;
  bool get = false;
  bool keep_ttl = false;
  int64_t expire_ms = 0;  // Absolute; 0 = none.
};

// Parses SET's options (Redis's parseExtendedStringArgumentsOrReply rules).
bool ParseSetOptionsOrReply(CommandContext& ctx, SetOptions* options) {
  enum Unit { kNone, kEx, kPx, kExAt, kPxAt } unit = kNone;
  std::string_view expire_arg;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    std::string_view opt = ctx.arg(i);
    bool has_next = i + 1 < ctx.argc();
    if (ArgIs(opt, "nx") && options->condition != SetOptions::Condition::kIfExists) {
      options->condition = SetOptions::Condition::kIfMissing;
    } else if (ArgIs(opt, "xx") && options->condition != SetOptions::Condition::kIfMissing) {
      options->condition = SetOptions::Condition::kIfExists;
    } else if (ArgIs(opt, "get")) {
      options->get = true;
    } else if (ArgIs(opt, "keepttl") && unit == kNone) {
      options->keep_ttl = true;
    } else if (unit == kNone && !options->keep_ttl && has_next &&
               (ArgIs(opt, "ex") || ArgIs(opt, "px") || ArgIs(opt, "exat") ||
                ArgIs(opt, "pxat"))) {
      unit = ArgIs(opt, "ex") ? kEx : ArgIs(opt, "px") ? kPx : ArgIs(opt, "exat") ? kExAt : kPxAt;
      expire_arg = ctx.arg(++i);
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  if (unit == kNone) return true;
  int64_t value;
  if (!ParseIntOrReply(ctx, expire_arg, &value)) return false;
  bool seconds = unit == kEx || unit == kExAt;
  auto invalid = [&] {
    ctx.reply.Error(FormatText(errors::kExpireInvalid, {"set"}));
    return false;
  };
  if (value <= 0 || (seconds && value > INT64_MAX / 1000)) return invalid();
  if (seconds) value *= 1000;
  if (unit == kEx || unit == kPx) {
    int64_t now = ctx.store.NowMs();
    if (value > INT64_MAX - now) return invalid();
    value += now;
  }
  options->expire_ms = value;
  return true;
}

void CmdSet(CommandContext& ctx) {
  SetOptions options;
  if (!ParseSetOptionsOrReply(ctx, &options)) return;
  std::string_view key = ctx.arg(1);
  std::string_view value = ctx.arg(2);
  uint64_t hash = ctx.store.Hash(key);
  int db = ctx.db();
  ValueSpec spec;
  MakeStringSpec(value, /*force_raw=*/false, &spec);
  bool stored = ctx.store.WithShardOf(key, [&](Shard& shard) {
    KeyTable& table = shard.Table(db);
    uint32_t slot = ctx.store.FindLive(shard, db, key, hash);
    bool exists = slot != KeyTable::kNoSlot;
    int64_t expire_ms = options.expire_ms;
    if (exists) {
      RecordView old = table.View(slot);
      if (options.get) {
        if (!old.is_string()) {
          ctx.reply.Error(errors::kWrongType);
          return false;
        }
        ctx.reply.Bulk(old.str);
      }
      if (options.keep_ttl) expire_ms = old.expire_ms;
    } else if (options.get) {
      ctx.reply.Null();
    }
    if ((options.condition == SetOptions::Condition::kIfMissing && exists) ||
        (options.condition == SetOptions::Condition::kIfExists && !exists)) {
      if (!options.get) ctx.reply.Null();
      return false;
    }
    table.Put(key, hash, spec, expire_ms, 0);
    if (!options.get) ctx.reply.Ok();
    return true;
  });
  if (!stored) {
    delete spec.external;  // Not adopted by the table.
    return;
  }
  ctx.server.stats().dirty.fetch_add(1, std::memory_order_relaxed);
}

// INCR/DECR/INCRBY/DECRBY: adds `delta` to the integer at `key` (0 if missing), keeping its TTL.
void IncrementBy(CommandContext& ctx, int64_t delta) {
  std::string_view key = ctx.arg(1);
  uint64_t hash = ctx.store.Hash(key);
  int db = ctx.db();
  ctx.store.WithShardOf(key, [&](Shard& shard) {
    KeyTable& table = shard.Table(db);
    uint32_t slot = ctx.store.FindLive(shard, db, key, hash);
    int64_t current = 0;
    int64_t expire_ms = 0;
    if (slot != KeyTable::kNoSlot) {
      RecordView view = table.View(slot);
      if (!view.is_string()) {
        ctx.reply.Error(errors::kWrongType);
        return;
      }
      if (!ParseInt64(view.str, &current)) {
        ctx.reply.Error(errors::kNotInteger);
        return;
      }
      expire_ms = view.expire_ms;
    }
    if ((delta < 0 && current < 0 && delta < INT64_MIN - current) ||
        (delta > 0 && current > 0 && delta > INT64_MAX - current)) {
      ctx.reply.Error(errors::kOverflow);
      return;
    }
    int64_t result = current + delta;
    char buf[24];
    int len = absl::SNPrintF(buf, sizeof(buf), "%d", result);
    ValueSpec spec;
    spec.kind = ValueKind::kStringInt;
    spec.bytes = std::string_view(buf, static_cast<size_t>(len));
    table.Put(key, hash, spec, expire_ms, 0);
    ctx.server.stats().dirty.fetch_add(1, std::memory_order_relaxed);
    ctx.reply.Integer(result);
  });
}

void CmdIncr(CommandContext& ctx) { IncrementBy(ctx, 1); }
void CmdDecr(CommandContext& ctx) { IncrementBy(ctx, -1); }

void CmdIncrBy(CommandContext& ctx) {
  int64_t delta;
  if (!ParseIntOrReply(ctx, ctx.arg(2), &delta)) return;
  IncrementBy(ctx, delta);
}

void CmdDecrBy(CommandContext& ctx) {
  int64_t delta;
  if (!ParseIntOrReply(ctx, ctx.arg(2), &delta)) return;
  if (delta == INT64_MIN) {
    ctx.reply.Error("ERR decrement would overflow");
    return;
  }
  IncrementBy(ctx, -delta);
}

}  // namespace

const std::vector<CommandSpec>& StringCommands() {
  static const std::vector<CommandSpec> kCommands = {
      {"get", 2, kReadonly | kFast, 1, 1, 1, CmdGet, "string", "Get the value of a key."},
      {"set", -3, kWrite | kDenyOom, 1, 1, 1, CmdSet, "string",
       "Set the string value of a key."},
      {"incr", 2, kWrite | kDenyOom | kFast, 1, 1, 1, CmdIncr, "string",
       "Increment the integer value of a key by one."},
      {"decr", 2, kWrite | kDenyOom | kFast, 1, 1, 1, CmdDecr, "string",
       "Decrement the integer value of a key by one."},
      {"incrby", 3, kWrite | kDenyOom | kFast, 1, 1, 1, CmdIncrBy, "string",
       "Increment the integer value of a key by the given amount."},
      {"decrby", 3, kWrite | kDenyOom | kFast, 1, 1, 1, CmdDecrBy, "string",
       "Decrement the integer value of a key by the given number."},
  };
  return kCommands;
}

}  // namespace gigakv::server
