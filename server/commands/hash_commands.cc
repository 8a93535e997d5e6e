// Hash family: HSET, HSETNX, HGET, HMGET, HMSET, HDEL, HLEN, HSTRLEN, HEXISTS, HINCRBY,
// HINCRBYFLOAT, HKEYS, HVALS, HGETALL, HRANDFIELD, HSCAN.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/types/hash.h"
#include "gigakv/glob.h"
#include "server/commands/args.h"
#include "server/commands/collection_access.h"
#include "server/commands/key_access.h"
#include "server/commands/scan_args.h"
#include "server/settings.h"

namespace gigakv::server {
namespace {

// Publishes a change of the key with an effect of many arguments: `command key` then `rest`,
// counting `dirty` changes; notifies `event` (class hash).
void PublishVariadic(CommandContext& ctx, const KeyAccess& access, std::string_view event,
                     std::string_view command, const std::vector<std::string_view>& rest,
                     uint64_t dirty) {
  std::vector<std::string_view> effect;
  if (WantsEffects(ctx)) {
    effect.reserve(rest.size() + 2);
    effect.push_back(command);
    effect.push_back(access.key);
    effect.insert(effect.end(), rest.begin(), rest.end());
  }
  PublishChange(ctx, access.db, access.key, {kHashEvents, event}, effect, dirty);
}

// Runs fn(Hash*) for a read command on the key in argument 1, with the hash or nullptr when the
// key is missing (fn replies the command's empty answer). WRONGTYPE is replied here.
template <typename Fn>
void ReadHash(CommandContext& ctx, Fn&& fn) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type;
    Hash* hash = ReadObject<Hash>(ctx, access, KeyType::kHash, &wrong_type);
    if (!wrong_type) fn(static_cast<const Hash*>(hash));
  });
}

// The hash at the key for a write, created when missing. nullptr after replying WRONGTYPE.
Hash* WriteHashOrCreate(CommandContext& ctx, KeyAccess& access) {
  bool wrong_type;
  Hash* hash = WriteObject<Hash>(ctx, access, KeyType::kHash, &wrong_type);
  if (wrong_type) return nullptr;
  if (hash == nullptr) hash = CreateObject(ctx, access, std::make_unique<Hash>());
  return hash;
}

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return rng;
}

// --- Writes ------------------------------------------------------------------------------------

// HSET key field value [field value ...] and HMSET (same, but replies OK).
// True when the key holds an inline hash in which every field of args[2..] already has the
// value given: then HSET changes nothing in the record and needs neither to build the hash nor
// to store it back (what a write to an inline collection costs, once per batch of commands).
// Not when the limits were lowered below the hash since it was built: HSET then converts it,
// as Redis does even for an update.
bool InlineHashHasAll(CommandContext& ctx, const KeyAccess& access,
                      const CollectionLimits& limits) {
  if (!access.exists() || access.found.kind != ValueKind::kInlineHash) return false;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (static_cast<int64_t>(ctx.arg(i).size()) > limits.hash_max_listpack_value) return false;
  }
  for (size_t i = 2; i < ctx.argc(); i += 2) {
    if (!Hash::CompactHasValue(access.found.str, ctx.arg(i), ctx.arg(i + 1))) return false;
  }
  return static_cast<int64_t>(DenseListpack::EntriesCount(access.found.str) / 2) <=
         limits.hash_max_listpack_entries;
}

void CmdHSet(CommandContext& ctx) {
  if (ctx.argc() % 2 != 0) {
    ReplyWrongArity(ctx.reply, ctx.spec.name);
    return;
  }
  CollectionLimits limits = ctx.settings().collection_limits();
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    int64_t added = 0;
    if (!InlineHashHasAll(ctx, access, limits)) {
      Hash* hash = WriteHashOrCreate(ctx, access);
      if (hash == nullptr) return;
      for (size_t i = 2; i < ctx.argc(); i += 2) {
        added += hash->Set(ctx.arg(i), ctx.arg(i + 1), limits) ? 1 : 0;
      }
    }
    // As in Redis, even a write of the values already there counts as a change (WATCH, the log,
    // dirty).
    if (ctx.spec.name == "hmset") {
      ctx.reply.Ok();
    } else {
      ctx.reply.Integer(added);
    }
    PublishVariadic(ctx, access, "hset", "HSET", {ctx.args.begin() + 2, ctx.args.end()},
                    (ctx.argc() - 2) / 2);
  });
}

void CmdHSetNx(CommandContext& ctx) {
  CollectionLimits limits = ctx.settings().collection_limits();
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    Hash* hash = WriteHashOrCreate(ctx, access);
    if (hash == nullptr) return;
    if (!hash->SetIfAbsent(ctx.arg(2), ctx.arg(3), limits)) {
      ctx.reply.Integer(0);
      return;
    }
    ctx.reply.Integer(1);
    PublishChange(ctx, access.db, access.key, {kHashEvents, "hset"},
                  {"HSET", access.key, ctx.arg(2), ctx.arg(3)});
  });
}

void CmdHDel(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    Hash* hash = WriteObject<Hash>(ctx, access, KeyType::kHash, &wrong_type);
    if (wrong_type) return;
    std::vector<std::string_view> deleted;
    if (hash != nullptr) {
      for (size_t i = 2; i < ctx.argc() && hash->Length() > 0; ++i) {
        if (hash->Delete(ctx.arg(i))) deleted.push_back(ctx.arg(i));
      }
    }
    if (!deleted.empty()) {
      PublishVariadic(ctx, access, "hdel", "HDEL", deleted, deleted.size());
      DeleteIfEmpty(ctx, access);
    }
    ctx.reply.Integer(static_cast<int64_t>(deleted.size()));
  });
}

void CmdHIncrBy(CommandContext& ctx) {
  int64_t increment;
  if (!ParseIntOrReply(ctx, ctx.arg(3), &increment)) return;
  CollectionLimits limits = ctx.settings().collection_limits();
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    Hash* hash = WriteObject<Hash>(ctx, access, KeyType::kHash, &wrong_type);
    if (wrong_type) return;
    int64_t current = 0;
    std::string scratch;
    if (hash != nullptr) {
      std::optional<std::string_view> value = hash->Get(ctx.arg(2), &scratch);
      if (value && !ParseInt64(*value, &current)) {
        ctx.reply.Error(errors::kHashNotInteger);
        return;
      }
    }
    if ((increment < 0 && current < 0 && increment < INT64_MIN - current) ||
        (increment > 0 && current > 0 && increment > INT64_MAX - current)) {
      ctx.reply.Error(errors::kOverflow);
      return;
    }
    int64_t result = current + increment;
    std::string text = absl::StrCat(result);
    if (hash == nullptr) hash = CreateObject(ctx, access, std::make_unique<Hash>());
    hash->Set(ctx.arg(2), text, limits);
    ctx.reply.Integer(result);
    PublishChange(ctx, access.db, access.key, {kHashEvents, "hincrby"},
                  {"HSET", access.key, ctx.arg(2), text});
  });
}

void CmdHIncrByFloat(CommandContext& ctx) {
  long double increment;
  if (!ParseLongDouble(ctx.arg(3), &increment)) {
    ctx.reply.Error(errors::kNotFloat);
    return;
  }
  if (std::isnan(increment) || std::isinf(increment)) {
    ctx.reply.Error(errors::kNanOrInfinity);
    return;
  }
  CollectionLimits limits = ctx.settings().collection_limits();
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    Hash* hash = WriteObject<Hash>(ctx, access, KeyType::kHash, &wrong_type);
    if (wrong_type) return;
    long double current = 0;
    std::string scratch;
    if (hash != nullptr) {
      std::optional<std::string_view> value = hash->Get(ctx.arg(2), &scratch);
      if (value && !ParseLongDouble(*value, &current)) {
        ctx.reply.Error(errors::kHashNotFloat);
        return;
      }
    }
    long double result = current + increment;
    std::string text;
    if (std::isnan(result) || std::isinf(result) || !FormatLongDouble(result, &text)) {
      ctx.reply.Error(errors::kIncrFloatNanOrInf);
      return;
    }
    if (hash == nullptr) hash = CreateObject(ctx, access, std::make_unique<Hash>());
    hash->Set(ctx.arg(2), text, limits);
    // Replicas and the log get the result, not the increment: float arithmetic may differ.
    ctx.reply.Bulk(text);
    PublishChange(ctx, access.db, access.key, {kHashEvents, "hincrbyfloat"},
                  {"HSET", access.key, ctx.arg(2), text});
  });
}

// --- Reads -------------------------------------------------------------------------------------

void CmdHGet(CommandContext& ctx) {
  ReadHash(ctx, [&](const Hash* hash) {
    std::string scratch;
    std::optional<std::string_view> value;
    if (hash != nullptr) value = hash->Get(ctx.arg(2), &scratch);
    if (value) {
      ctx.reply.Bulk(*value);
    } else {
      ctx.reply.Null();
    }
  });
}

void CmdHMGet(CommandContext& ctx) {
  ReadHash(ctx, [&](const Hash* hash) {
    ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argc() - 2));
    std::string scratch;
    for (size_t i = 2; i < ctx.argc(); ++i) {
      std::optional<std::string_view> value;
      if (hash != nullptr) value = hash->Get(ctx.arg(i), &scratch);
      if (value) {
        ctx.reply.Bulk(*value);
      } else {
        ctx.reply.Null();
      }
    }
  });
}

void CmdHLen(CommandContext& ctx) {
  ReadHash(ctx, [&](const Hash* hash) {
    ctx.reply.Integer(hash == nullptr ? 0 : static_cast<int64_t>(hash->Length()));
  });
}

void CmdHStrLen(CommandContext& ctx) {
  ReadHash(ctx, [&](const Hash* hash) {
    ctx.reply.Integer(hash == nullptr ? 0 : static_cast<int64_t>(hash->ValueLength(ctx.arg(2))));
  });
}

void CmdHExists(CommandContext& ctx) {
  ReadHash(ctx, [&](const Hash* hash) {
    ctx.reply.Integer(hash != nullptr && hash->Contains(ctx.arg(2)) ? 1 : 0);
  });
}

enum class Parts { kFields, kValues, kBoth };

void ReplyAll(CommandContext& ctx, Parts parts) {
  ReadHash(ctx, [&](const Hash* hash) {
    auto length = static_cast<int64_t>(hash == nullptr ? 0 : hash->Length());
    if (parts == Parts::kBoth) {
      ctx.reply.MapHeader(length);
    } else {
      ctx.reply.ArrayHeader(length);
    }
    if (hash == nullptr) return;
    hash->ForEach([&](std::string_view field, std::string_view value) {
      if (parts != Parts::kValues) ctx.reply.Bulk(field);
      if (parts != Parts::kFields) ctx.reply.Bulk(value);
    });
  });
}

void CmdHKeys(CommandContext& ctx) { ReplyAll(ctx, Parts::kFields); }
void CmdHVals(CommandContext& ctx) { ReplyAll(ctx, Parts::kValues); }
void CmdHGetAll(CommandContext& ctx) { ReplyAll(ctx, Parts::kBoth); }

// HRANDFIELD key [count [WITHVALUES]]
void CmdHRandField(CommandContext& ctx) {
  if (ctx.argc() == 2) {
    ReadHash(ctx, [&](const Hash* hash) {
      if (hash == nullptr) {
        ctx.reply.Null();
        return;
      }
      hash->RandomPairs(1, false, Rng(),
                        [&](std::string_view field, std::string_view) { ctx.reply.Bulk(field); });
    });
    return;
  }
  int64_t count;
  if (!ParseIntOrReply(ctx, ctx.arg(2), &count)) return;
  if (count == INT64_MIN) {
    ctx.reply.Error(errors::kCountOutOfRange);
    return;
  }
  bool with_values = false;
  if (ctx.argc() > 4 || (ctx.argc() == 4 && !ArgIs(ctx.arg(3), "withvalues"))) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (ctx.argc() == 4) {
    with_values = true;
    // Redis bounds the count so that count * 2 replies cannot overflow.
    if (count < -(INT64_MAX / 2) || count > INT64_MAX / 2) {
      ctx.reply.Error(errors::kValueOutOfRange);
      return;
    }
  }
  ReadHash(ctx, [&](const Hash* hash) {
    if (hash == nullptr || count == 0) {
      ctx.reply.ArrayHeader(0);
      return;
    }
    bool distinct = count > 0;
    uint64_t wanted = distinct ? static_cast<uint64_t>(count) : static_cast<uint64_t>(-count);
    uint64_t replies = distinct ? std::min<uint64_t>(wanted, hash->Length()) : wanted;
    if (with_values) {
      ctx.reply.PairArrayHeader(static_cast<int64_t>(replies));
    } else {
      ctx.reply.ArrayHeader(static_cast<int64_t>(replies));
    }
    hash->RandomPairs(wanted, distinct, Rng(), [&](std::string_view field, std::string_view value) {
      if (with_values) ctx.reply.PairHeader();
      ctx.reply.Bulk(field);
      if (with_values) ctx.reply.Bulk(value);
    });
  });
}

// HSCAN key cursor [MATCH pattern] [COUNT count]
void CmdHScan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursorOrReply(ctx, ctx.arg(2), &cursor)) return;
  ReadHash(ctx, [&](const Hash* hash) {
    if (hash == nullptr) {
      // Redis answers a missing key before looking at the options.
      ReplyEmptyScan(ctx);
      return;
    }
    ScanOptions options;
    if (!ParseScanOptionsOrReply(ctx, 3, /*allow_type=*/false, &options)) return;
    std::vector<std::pair<std::string, std::string>> pairs;
    uint64_t next = hash->Scan(cursor, static_cast<size_t>(options.count),
                               [&](std::string_view field, std::string_view value) {
                                 if (!options.Matches(field)) return;
                                 pairs.emplace_back(field, value);
                               });
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(absl::StrCat(next));
    ctx.reply.ArrayHeader(static_cast<int64_t>(pairs.size() * 2));
    for (const auto& [field, value] : pairs) {
      ctx.reply.Bulk(field);
      ctx.reply.Bulk(value);
    }
  });
}

}  // namespace

const std::vector<CommandBinding>& HashCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"hset", CmdHSet},
      {"hsetnx", CmdHSetNx},
      {"hget", CmdHGet},
      {"hmget", CmdHMGet},
      {"hmset", CmdHSet},
      {"hdel", CmdHDel},
      {"hlen", CmdHLen},
      {"hstrlen", CmdHStrLen},
      {"hexists", CmdHExists},
      {"hincrby", CmdHIncrBy},
      {"hincrbyfloat", CmdHIncrByFloat},
      {"hkeys", CmdHKeys},
      {"hvals", CmdHVals},
      {"hgetall", CmdHGetAll},
      {"hrandfield", CmdHRandField},
      {"hscan", CmdHScan},
  };
  return kCommands;
}

}  // namespace gigakv::server
