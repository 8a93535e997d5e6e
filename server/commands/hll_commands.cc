// HyperLogLog family (Redis's hyperloglog.c): PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST.
//
// A HyperLogLog is a plain string in Redis's own representation (core/types/hyperloglog.h:
// "HYLL" header, sparse or dense registers, cached cardinality), so GET/SET, DUMP/RESTORE and
// snapshots move it between Redis and gigakv unchanged. A string that is not one answers
// "WRONGTYPE Key is not a valid HyperLogLog string value."; a damaged sparse one "INVALIDOBJ".
// Like the bit commands, writes leave the value raw and keep the key's TTL.
//
// Effects: each write logs itself (PFADD, PFMERGE, and PFCOUNT or PFDEBUG when they rewrite
// the value: the cached cardinality, a conversion to dense), as Redis propagates them; given
// the state before, each reproduces the same registers. (Only the sparse/dense choice depends
// on hll-sparse-max-bytes at replay time, as on a Redis replica.) PFADD and PFMERGE notify
// "pfadd"; PFCOUNT's cache update signals WATCH only, as Redis's signalModifiedKey.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/types/hyperloglog.h"
#include "server/commands/args.h"
#include "server/commands/key_access.h"
#include "server/settings.h"

namespace gigakv::server {
namespace {

// Redis's isHLLObjectOrReply on a found key: a string holding a HyperLogLog.
bool IsHllOrReply(CommandContext& ctx, const KeyAccess& access) {
  if (!IsStringOrReply(ctx, access)) return false;
  if (!hll::IsValid(access.view().str)) {
    ctx.reply.Error(errors::kNotHll);
    return false;
  }
  return true;
}

// The command itself as its effect, named in upper case (empty when nobody reads effects).
std::vector<std::string_view> EffectNamed(CommandContext& ctx, std::string_view name) {
  std::vector<std::string_view> effect;
  if (WantsEffects(ctx)) {
    effect.assign(ctx.args.begin(), ctx.args.end());
    effect[0] = name;
  }
  return effect;
}

size_t SparseMaxBytes(CommandContext& ctx) {
  return static_cast<size_t>(ctx.settings().hll_sparse_max_bytes.get());
}

// Rewrites the HyperLogLog at `access` in place: `change` gets the value (a new empty one,
// announced as a new key, when the key is missing) and its result is returned; the value goes
// back raw, with the key's TTL and access stamp, whatever `change` did to it.
template <typename Change>
auto RewriteHll(CommandContext& ctx, KeyAccess& access, Change&& change) {
  int64_t expire_ms = 0;
  uint16_t stamp = NewStamp(ctx);
  std::unique_ptr<std::string> value;
  if (access.exists()) {
    expire_ms = access.view().expire_ms;
    stamp = OverwriteStamp(ctx, access);
    value = TakeString(access);
  } else {
    value = std::make_unique<std::string>(hll::NewSparse());
    NotifyNewKey(ctx, access.db, access.key);
  }
  auto result = change(value.get());
  StoreModified(access, std::move(value), expire_ms, stamp);
  return result;
}

// Redis unshares the value before looking (dbUnshareStringValue): a short HyperLogLog stored
// embedded (by SET or RESTORE) becomes raw even when nothing else changes. Not a change.
void MakeRaw(CommandContext& ctx, KeyAccess& access) {
  if (access.view().kind != ValueKind::kStringEmbstr) return;
  RewriteHll(ctx, access, [](std::string*) { return true; });
}

// PFADD key [element ...]: 1 when a register changed (or the key was made), else 0.
void CmdPfAdd(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    if (access.exists() && !IsHllOrReply(ctx, access)) return;
    uint64_t updated = access.exists() ? 0 : 1;  // A new key counts as an update.
    const bool corrupt = RewriteHll(ctx, access, [&](std::string* value) {
      for (size_t i = 2; i < ctx.argc(); ++i) {
        const int result = hll::Add(value, ctx.arg(i), SparseMaxBytes(ctx));
        if (result < 0) return true;
        updated += result;
      }
      // A corrupt value answers at once, as Redis: no cache invalidation, nothing published.
      if (updated > 0) hll::InvalidateCache(value);
      return false;
    });
    if (updated > 0 && !corrupt) {
      // Redis counts one change per register updated (and one for a new key).
      PublishChange(ctx, access.db, access.key, {kStringEvents, "pfadd"}, EffectNamed(ctx, "PFADD"),
                    updated);
    }
    if (corrupt) {
      ctx.reply.Error(errors::kCorruptHll);
      return;
    }
    ctx.reply.Integer(updated > 0 ? 1 : 0);
  });
}

// PFCOUNT key: the cached cardinality, or a fresh one stored in the header (a change, as in
// Redis, though PFCOUNT is a read-only command).
void CountOne(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    if (!access.exists()) {
      ctx.reply.Integer(0);
      return;
    }
    if (!IsHllOrReply(ctx, access)) return;
    MakeRaw(ctx, access);
    uint64_t cardinality = 0;
    if (hll::CachedCardinality(access.view().str, &cardinality)) {
      ctx.reply.Integer(static_cast<int64_t>(cardinality));
      return;
    }
    bool cache_updated = false;
    const bool ok = RewriteHll(ctx, access, [&](std::string* value) {
      return hll::Count(value, &cardinality, &cache_updated);
    });
    if (!ok) {
      ctx.reply.Error(errors::kCorruptHll);
      return;
    }
    if (cache_updated) {
      PublishChange(ctx, access.db, access.key, Event{}, {"PFCOUNT", access.key});
    }
    ctx.reply.Integer(static_cast<int64_t>(cardinality));
  });
}

// The union of `keys`' registers into `registers` (missing keys are empty), checked in argument
// order as Redis does (the first bad key answers). Sets *any_dense when one of them is dense and
// *first_live (if given) when keys[0] was found. False when an error was replied. Call with every
// key's shard locked.
bool MergeKeysOrReply(CommandContext& ctx, absl::Span<const std::string_view> keys,
                      uint8_t* registers, bool* any_dense, bool* first_live = nullptr) {
  for (size_t i = 0; i < keys.size(); ++i) {
    KeyAccess access = FindLocked(ctx, keys[i], Lookup::kRead);
    if (!access.exists()) continue;
    if (i == 0 && first_live != nullptr) *first_live = true;
    if (!IsHllOrReply(ctx, access)) return false;
    const std::string_view value = access.view().str;
    if (!hll::IsSparse(value)) *any_dense = true;
    if (!hll::MergeInto(value, registers)) {
      ctx.reply.Error(errors::kCorruptHll);
      return false;
    }
  }
  return true;
}

// PFCOUNT key key...: the cardinality of the union, computed apart (no key changes).
void CountUnion(CommandContext& ctx) {
  const absl::Span<const std::string_view> keys(ctx.args.data() + 1, ctx.argc() - 1);
  Store::MultiLock lock =
      ctx.store.LockKeys(std::vector<std::string_view>(keys.begin(), keys.end()));
  std::array<uint8_t, hll::kRegisters> registers{};
  bool any_dense = false;
  if (!MergeKeysOrReply(ctx, keys, registers.data(), &any_dense)) return;
  ctx.reply.Integer(static_cast<int64_t>(hll::CountRegisters(registers.data())));
}

void CmdPfCount(CommandContext& ctx) {
  if (ctx.argc() == 2) {
    CountOne(ctx);
  } else {
    CountUnion(ctx);
  }
}

// PFMERGE destkey [sourcekey ...]: the destination (itself one of the sources, as in Redis)
// becomes the union; dense when any source is.
void CmdPfMerge(CommandContext& ctx) {
  const absl::Span<const std::string_view> keys(ctx.args.data() + 1, ctx.argc() - 1);
  Store::MultiLock lock =
      ctx.store.LockKeys(std::vector<std::string_view>(keys.begin(), keys.end()));
  std::array<uint8_t, hll::kRegisters> registers{};
  bool any_dense = false;
  bool dest_live = false;
  if (!MergeKeysOrReply(ctx, keys, registers.data(), &any_dense, &dest_live)) return;
  // The destination as the merge saw it: a key live then is not expired by a second lookup (its
  // registers are in the union; a DEL logged before the PFMERGE would leave them out on replay).
  KeyAccess dest = dest_live ? FindLockedAgain(ctx, ctx.arg(1), Lookup::kWrite)
                             : FindLocked(ctx, ctx.arg(1), Lookup::kWrite);
  const bool ok = RewriteHll(ctx, dest, [&](std::string* value) {
    return hll::StoreMerged(value, registers.data(), any_dense, SparseMaxBytes(ctx));
  });
  if (!ok) {
    ctx.reply.Error(errors::kCorruptHll);
    return;
  }
  // A PFADD event: in theory a mass-add of elements (Redis's words).
  PublishChange(ctx, dest.db, dest.key, {kStringEvents, "pfadd"}, EffectNamed(ctx, "PFMERGE"));
  ctx.reply.Ok();
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key.
void CmdPfDebug(CommandContext& ctx) {
  const std::string_view subcommand = ctx.arg(1);
  WithKey(ctx, ctx.arg(2), Lookup::kWrite, [&](KeyAccess& access) {
    if (!access.exists()) {
      ctx.reply.Error("ERR The specified key does not exist");
      return;
    }
    if (!IsHllOrReply(ctx, access)) return;
    MakeRaw(ctx, access);
    const bool getreg = ArgIs(subcommand, "getreg");
    const bool todense = ArgIs(subcommand, "todense");
    if (getreg || todense) {
      bool converted = false;
      std::array<uint8_t, hll::kRegisters> registers{};
      if (hll::IsSparse(access.view().str)) {
        const bool ok =
            RewriteHll(ctx, access, [](std::string* value) { return hll::ToDense(value) > 0; });
        if (!ok) {
          ctx.reply.Error(errors::kCorruptHll);
          return;
        }
        converted = true;
        // Logged as the conversion alone, whichever subcommand made it; Redis counts the change
        // but signals no watcher.
        const std::array<std::string_view, 3> effect = {"PFDEBUG", "TODENSE", access.key};
        PublishChange(ctx, access.db, access.key, Event{}, effect, /*dirty=*/1,
                      /*signals_watchers=*/false);
      }
      if (todense) {
        ctx.reply.Integer(converted ? 1 : 0);
        return;
      }
      hll::MergeInto(access.view().str, registers.data());
      ctx.reply.ArrayHeader(hll::kRegisters);
      for (uint8_t value : registers) ctx.reply.Integer(value);
    } else if (ArgIs(subcommand, "decode")) {
      std::string decoded;
      if (!hll::DebugDecode(access.view().str, &decoded)) {
        ctx.reply.Error("ERR HLL encoding is not sparse");
        return;
      }
      ctx.reply.Bulk(decoded);
    } else if (ArgIs(subcommand, "encoding")) {
      ctx.reply.SimpleString(hll::EncodingName(access.view().str));
    } else {
      ctx.reply.Error(StrCat("ERR Unknown PFDEBUG subcommand '", subcommand, "'"));
    }
  });
}

void CmdPfSelfTest(CommandContext& ctx) {
  const std::string failure = hll::SelfTest(SparseMaxBytes(ctx));
  if (!failure.empty()) {
    ctx.reply.Error(failure);
    return;
  }
  ctx.reply.Ok();
}

}  // namespace

const std::vector<CommandBinding>& HllCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"pfadd", CmdPfAdd},           {"pfcount", CmdPfCount, kLoggedRead | kMayReplicate},
      {"pfmerge", CmdPfMerge},       {"pfdebug", CmdPfDebug},
      {"pfselftest", CmdPfSelfTest},
  };
  return kCommands;
}

}  // namespace gigakv::server
