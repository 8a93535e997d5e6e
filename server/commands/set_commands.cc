// Set family: SADD, SREM, SCARD, SISMEMBER, SMISMEMBER, SMEMBERS, SPOP, SRANDMEMBER, SMOVE, SINTER,
// SINTERCARD, SINTERSTORE, SUNION, SUNIONSTORE, SDIFF, SDIFFSTORE, SSCAN.
//
// Encodings and conversions live in core/types/set.h. Replies follow Redis 7.0 (sets of members
// as RESP3 sets; SRANDMEMBER with a count as an array). Effects: SADD/SREM/SMOVE log themselves
// (deterministic), SPOP logs the SREM of what it popped (or DEL when it took everything), the
// *STORE commands log DEL dst and SADD dst with the result's members.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/types/set.h"
#include "gigakv/glob.h"
#include "server/commands/args.h"
#include "server/commands/collection_access.h"
#include "server/commands/key_access.h"
#include "server/commands/scan_args.h"
#include "server/settings.h"

namespace gigakv::server {
namespace {

// SPOP with a count rebuilds the set from the members that stay when they are at most 1/5 of
// those that go (Redis's SPOP_MOVE_STRATEGY_MUL).
constexpr size_t kSpopMoveStrategyFactor = 5;

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return rng;
}

// Publishes a change of `key` with the effect `name key args[first..]` (the command's own
// arguments from `first`), counting `dirty` changes; notifies `event` (class set).
void PublishWithArgs(CommandContext& ctx, int db, std::string_view event, std::string_view name,
                     std::string_view key, size_t first, uint64_t dirty) {
  std::vector<std::string_view> effect;
  if (WantsEffects(ctx)) {
    effect = {name, key};
    effect.insert(effect.end(), ctx.args.begin() + static_cast<std::ptrdiff_t>(first),
                  ctx.args.end());
  }
  PublishChange(ctx, db, key, {kSetEvents, event}, effect, dirty);
}

void ReplyMembers(CommandContext& ctx, const Set& set) {
  ctx.reply.SetHeader(static_cast<int64_t>(set.Length()));
  set.ForEach([&](std::string_view member) { ctx.reply.Bulk(member); });
}

// Collects bulk replies whose number is known only at the end (SINTER, SSCAN): members are
// encoded once into a per-thread builder, then appended after the header. Bulk strings are the
// same in RESP2 and RESP3, so the bytes need no conversion.
class DeferredMembers {
 public:
  DeferredMembers() { Scratch().buffer().clear(); }
  ~DeferredMembers() {
    std::string& buffer = Scratch().buffer();
    buffer.clear();
    if (buffer.capacity() > kKeepBytes) buffer.shrink_to_fit();
  }
  void Add(std::string_view member) {
    Scratch().Bulk(member);
    ++count_;
  }
  int64_t count() const { return count_; }
  const std::string& encoded() const { return Scratch().buffer(); }

 private:
  static constexpr size_t kKeepBytes = 1 << 20;
  static protocol::ReplyBuilder& Scratch() {
    thread_local protocol::ReplyBuilder scratch;
    return scratch;
  }
  int64_t count_ = 0;
};

// --- Single-key commands -----------------------------------------------------------------------

// True when the key holds an inline set that already has every member in args[from..]: then
// SADD changes nothing and can answer from the record, without building the set and storing it
// back (what a write to an inline collection costs, once per batch of commands).
bool InlineSetHasAll(CommandContext& ctx, const KeyAccess& access, size_t from) {
  if (!access.exists()) return false;
  Set::Encoding encoding;
  if (access.found.kind == ValueKind::kInlineSet) {
    encoding = Set::Encoding::kListpack;
  } else if (access.found.kind == ValueKind::kInlineIntset) {
    encoding = Set::Encoding::kIntset;
  } else {
    return false;
  }
  for (size_t i = from; i < ctx.argc(); ++i) {
    if (!Set::CompactContains(encoding, access.found.str, ctx.arg(i))) return false;
  }
  return true;
}

void CmdSAdd(CommandContext& ctx) {
  CollectionLimits limits = ctx.settings().collection_limits();
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    if (InlineSetHasAll(ctx, access, 2)) {
      ctx.reply.Integer(0);
      return;
    }
    bool wrong_type;
    Set* set = WriteObject<Set>(ctx, access, KeyType::kSet, &wrong_type);
    if (wrong_type) return;
    if (set == nullptr) {
      set = CreateObject(ctx, access, Set::Create(ctx.arg(2), ctx.argc() - 2, limits));
    }
    int64_t added = 0;
    for (size_t i = 2; i < ctx.argc(); ++i) added += set->Add(ctx.arg(i), limits) ? 1 : 0;
    if (added > 0) {
      PublishWithArgs(ctx, access.db, "sadd", "SADD", access.key, 2, static_cast<uint64_t>(added));
    }
    ctx.reply.Integer(added);
  });
}

void CmdSRem(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    Set* set = WriteObject<Set>(ctx, access, KeyType::kSet, &wrong_type);
    if (set == nullptr) {
      if (!wrong_type) ctx.reply.Integer(0);
      return;
    }
    int64_t removed = 0;
    for (size_t i = 2; i < ctx.argc() && !set->empty(); ++i) {
      removed += set->Remove(ctx.arg(i)) ? 1 : 0;
    }
    if (removed > 0) {
      PublishWithArgs(ctx, access.db, "srem", "SREM", access.key, 2,
                      static_cast<uint64_t>(removed));
      DeleteIfEmpty(ctx, access);
    }
    ctx.reply.Integer(removed);
  });
}

void CmdSCard(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type;
    const Set* set = ReadObject<Set>(ctx, access, KeyType::kSet, &wrong_type);
    if (wrong_type) return;
    ctx.reply.Integer(set == nullptr ? 0 : static_cast<int64_t>(set->Length()));
  });
}

void CmdSIsMember(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type;
    const Set* set = ReadObject<Set>(ctx, access, KeyType::kSet, &wrong_type);
    if (wrong_type) return;
    ctx.reply.Integer(set != nullptr && set->Contains(ctx.arg(2)) ? 1 : 0);
  });
}

void CmdSMIsMember(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type;
    const Set* set = ReadObject<Set>(ctx, access, KeyType::kSet, &wrong_type);
    if (wrong_type) return;
    ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argc() - 2));
    for (size_t i = 2; i < ctx.argc(); ++i) {
      ctx.reply.Integer(set != nullptr && set->Contains(ctx.arg(i)) ? 1 : 0);
    }
  });
}

void CmdSMembers(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type;
    const Set* set = ReadObject<Set>(ctx, access, KeyType::kSet, &wrong_type);
    if (wrong_type) return;
    if (set == nullptr) {
      ctx.reply.SetHeader(0);
      return;
    }
    ReplyMembers(ctx, *set);
  });
}

void CmdSRandMember(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  bool with_count = ctx.argc() == 3;
  int64_t count = 0;
  if (with_count) {
    if (!ParseIntOrReply(ctx, ctx.arg(2), &count)) return;
    if (count == INT64_MIN) {
      ctx.reply.Error(errors::kCountOutOfRange);
      return;
    }
  }
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type;
    const Set* set = ReadObject<Set>(ctx, access, KeyType::kSet, &wrong_type);
    if (wrong_type) return;
    if (!with_count) {
      if (set == nullptr) {
        ctx.reply.Null();
      } else {
        ctx.reply.Bulk(set->RandomMember(Rng()));
      }
      return;
    }
    if (set == nullptr || count == 0) {
      ctx.reply.ArrayHeader(0);
      return;
    }
    ctx.reply.ArrayHeader(static_cast<int64_t>(set->RandomCount(count)));
    set->RandomMembers(count, Rng(), [&](std::string_view member) { ctx.reply.Bulk(member); });
  });
}

void CmdSPop(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  bool with_count = ctx.argc() == 3;
  int64_t count = 1;
  if (with_count && (!ParseInt64(ctx.arg(2), &count) || count < 0)) {
    ctx.reply.Error(errors::kMustBePositive);
    return;
  }
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    Set* set = WriteObject<Set>(ctx, access, KeyType::kSet, &wrong_type);
    if (wrong_type) return;
    if (set == nullptr) {
      if (with_count) {
        ctx.reply.SetHeader(0);
      } else {
        ctx.reply.Null();
      }
      return;
    }
    if (count == 0) {
      ctx.reply.SetHeader(0);
      return;
    }
    // Redis notifies before it replies the members; the records below then carry no event.
    Notify(ctx, {kSetEvents, "spop"}, access.db, access.key);
    size_t size = set->Length();
    if (static_cast<uint64_t>(count) >= size && with_count) {
      // Everything goes: reply the whole set and delete the key.
      ReplyMembers(ctx, *set);
      RemoveKey(access);
      PublishChange(ctx, access.db, access.key, kNoEvent, {"DEL", access.key}, size);
      NotifyDeleted(ctx, access.db, access.key);
      return;
    }
    bool logging = WantsEffects(ctx);
    std::vector<std::string> effect;
    if (logging) {
      effect.reserve(static_cast<size_t>(count) + 2);
      effect.emplace_back("SREM");
      effect.emplace_back(access.key);
    }
    size_t remaining = size - static_cast<size_t>(count);
    if (with_count && remaining * kSpopMoveStrategyFactor <= static_cast<size_t>(count)) {
      // Most members go (Redis's "case 3"): choose the few that stay, rebuild the set from them
      // (so its encoding is chosen afresh, as Redis does) and reply what is left in the old one.
      CollectionLimits limits = ctx.settings().collection_limits();
      std::vector<std::string> kept;
      kept.reserve(remaining);
      set->RandomMembers(static_cast<int64_t>(remaining), Rng(),
                         [&](std::string_view member) { kept.emplace_back(member); });
      std::unique_ptr<Set> popped = Set::Create(kept.front(), remaining, limits);
      for (const std::string& member : kept) {
        popped->Add(member, limits);
        set->Remove(member);
      }
      set->Swap(*popped);  // The key now holds the kept members; `popped` the others.
      ctx.reply.SetHeader(count);
      popped->ForEach([&](std::string_view member) {
        ctx.reply.Bulk(member);
        if (logging) effect.emplace_back(member);
      });
      PublishBuiltChange(ctx, access.db, access.key, kNoEvent, effect,
                         static_cast<uint64_t>(count));
      return;
    }
    if (with_count) ctx.reply.SetHeader(count);
    set->PopRandom(static_cast<size_t>(count), Rng(), [&](std::string_view member) {
      ctx.reply.Bulk(member);
      if (logging) effect.emplace_back(member);
    });
    PublishBuiltChange(ctx, access.db, access.key, kNoEvent, effect, static_cast<uint64_t>(count));
    DeleteIfEmpty(ctx, access);
  });
}

// --- SSCAN -------------------------------------------------------------------------------------

void CmdSScan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursorOrReply(ctx, ctx.arg(2), &cursor)) return;
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type;
    const Set* set = ReadObject<Set>(ctx, access, KeyType::kSet, &wrong_type);
    if (wrong_type) return;
    if (set == nullptr) {  // Options are not even parsed for a missing key (as Redis).
      ReplyEmptyScan(ctx);
      return;
    }
    ScanOptions options;
    if (!ParseScanOptionsOrReply(ctx, 3, /*allow_type=*/false, &options)) return;
    DeferredMembers members;
    uint64_t next =
        set->Scan(cursor, static_cast<size_t>(options.count), [&](std::string_view member) {
          if (options.Matches(member)) members.Add(member);
        });
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(StrCat(next));
    ctx.reply.ArrayHeader(members.count());
    ctx.reply.Raw(members.encoded());
  });
}

// --- SMOVE -------------------------------------------------------------------------------------

void CmdSMove(CommandContext& ctx) {
  std::string_view source_key = ctx.arg(1), destination_key = ctx.arg(2), member = ctx.arg(3);
  CollectionLimits limits = ctx.settings().collection_limits();
  Store::MultiLock lock = ctx.store.LockKeys({source_key, destination_key});
  bool same_key = source_key == destination_key;
  // Look both keys up before touching anything (lazy expiry, then Redis's checks in order). The
  // same key is not looked up twice: a second lookup could expire the object the first returned.
  KeyAccess source = FindLocked(ctx, source_key, Lookup::kWrite);
  Set* source_set = source.exists() && source.view().type() == KeyType::kSet
                        ? static_cast<Set*>(ObjectForWrite(source))
                        : nullptr;
  bool source_wrong = source.exists() && source_set == nullptr;
  bool destination_exists = source.exists(), destination_wrong = source_wrong;
  Set* destination_set = source_set;
  if (!same_key) {
    KeyAccess destination = FindLocked(ctx, destination_key, Lookup::kWrite);
    destination_exists = destination.exists();
    destination_wrong = destination.exists() && destination.view().type() != KeyType::kSet;
    destination_set = destination_exists && !destination_wrong
                          ? static_cast<Set*>(ObjectForWrite(destination))
                          : nullptr;
  }
  if (!source.exists()) {
    ctx.reply.Integer(0);
    return;
  }
  if (source_wrong || destination_wrong) {
    ctx.reply.Error(errors::kWrongType);
    return;
  }
  if (same_key) {
    ctx.reply.Integer(source_set->Contains(member) ? 1 : 0);
    return;
  }
  if (!source_set->Remove(member)) {
    ctx.reply.Integer(0);
    return;
  }
  // Redis's order of notifications: "srem" and the emptied source's "del", the destination's
  // "new", then its "sadd" (with the change record, when the member was added).
  Notify(ctx, {kSetEvents, "srem"}, ctx.db(), source_key);
  if (source_set->empty()) {
    KeyAccess emptied = FindLocked(ctx, source_key, Lookup::kPeek);
    RemoveKey(emptied);
    NotifyDeleted(ctx, ctx.db(), source_key);
  }
  if (!destination_exists) {
    KeyAccess destination = FindLocked(ctx, destination_key, Lookup::kPeek);
    destination_set = CreateObject(ctx, destination, Set::Create(member, 1, limits));
  }
  // Redis counts the removal, and the addition if the destination did not have the member; the
  // destination changed (for WATCH) only then.
  const bool added = destination_set->Add(member, limits);
  const ChangedKey moved[] = {{ctx.db(), source_key}, {ctx.db(), destination_key}};
  const KeyEvent added_event{kSetEvents, "sadd", ctx.db(), destination_key};
  const std::string_view effect[] = {"SMOVE", source_key, destination_key, member};
  PublishChange(ctx, ctx.db(), absl::MakeConstSpan(moved, added ? 2 : 1),
                absl::MakeConstSpan(&added_event, added ? 1 : 0), effect, added ? 2 : 1);
  ctx.reply.Integer(1);
}

// --- Multi-key algebra -------------------------------------------------------------------------

// The sets at `keys`, with their shards locked by the caller: nullptr for a missing key.
// Lookups are reads (also for the *STORE commands, as in Redis 7.0) and run in argument order
// (lazy expiry); the first key of another type gets WRONGTYPE and false. Object pointers are
// taken in a second pass that expires nothing, so a key repeated in `keys` cannot free an object
// handed out earlier.
bool CollectSetsOrReply(CommandContext& ctx, const std::vector<std::string_view>& keys,
                        std::vector<const Set*>* sets) {
  for (std::string_view key : keys) {
    KeyAccess access = FindLocked(ctx, key, Lookup::kRead);
    if (!access.exists()) continue;
    if (access.view().type() != KeyType::kSet) {
      ctx.reply.Error(errors::kWrongType);
      return false;
    }
  }
  sets->assign(keys.size(), nullptr);
  int db = ctx.db();
  for (size_t i = 0; i < keys.size(); ++i) {
    KeyTable& table = ctx.store.shard(ctx.store.ShardIndex(keys[i])).Table(db);
    KeyTable::Slot slot = table.Find(keys[i], ctx.store.Hash(keys[i]));
    if (slot != KeyTable::kNoSlot) {
      (*sets)[i] = static_cast<const Set*>(ObjectForRead(table.View(slot)));
    }
  }
  return true;
}

// Calls fn with each member of the intersection (stops early once fn returns false).
template <typename Fn>
void ForEachInIntersection(std::vector<const Set*> sets, Fn&& fn) {
  // Walk the smallest set; probe the others from smallest to largest.
  std::sort(sets.begin(), sets.end(),
            [](const Set* a, const Set* b) { return a->Length() < b->Length(); });
  bool more = true;
  sets[0]->ForEach([&](std::string_view member) {
    if (!more) return;
    for (size_t j = 1; j < sets.size(); ++j) {
      if (sets[j] != sets[0] && !sets[j]->Contains(member)) return;
    }
    more = fn(member);
  });
}

enum class SetOp { kUnion, kDiff };

// The union or difference of `sets` (nullptr = empty set) as a new set, built the way Redis's
// *STORE commands build it (from an empty intset, converting as members come).
std::unique_ptr<Set> Combine(const std::vector<const Set*>& sets, SetOp op,
                             const CollectionLimits& limits) {
  auto result = std::make_unique<Set>();
  if (op == SetOp::kUnion) {
    for (const Set* set : sets) {
      if (set != nullptr) set->ForEach([&](std::string_view m) { result->Add(m, limits); });
    }
    return result;
  }
  const Set* first = sets[0];
  if (first == nullptr) return result;
  for (size_t j = 1; j < sets.size(); ++j) {
    if (sets[j] == first) return result;  // A - ... - A is empty.
  }
  first->ForEach([&](std::string_view member) {
    for (size_t j = 1; j < sets.size(); ++j) {
      if (sets[j] != nullptr && sets[j]->Contains(member)) return;
    }
    result->Add(member, limits);
  });
  return result;
}

// Stores `result` at the destination (deleting it when the result is empty) and replies its
// size. Called with the locks held; logs DEL dst and SADD dst members; notifies `event`
// ("sinterstore"...), or "del" when an empty result deletes the destination. Redis replies
// before it notifies, except on SINTERSTORE's shortcut for a missing source (`del_first`).
void StoreResult(CommandContext& ctx, std::string_view destination_key, std::unique_ptr<Set> result,
                 std::string_view event, bool del_first = false) {
  KeyAccess destination = FindLocked(ctx, destination_key, Lookup::kWrite);
  int64_t size = static_cast<int64_t>(result->Length());
  bool existed = destination.exists();
  if (size == 0) {
    if (!del_first) ctx.reply.Integer(0);
    if (existed) {
      RemoveKey(destination);
      PublishChange(ctx, destination.db, destination_key, {kGenericEvents, "del"},
                    {"DEL", destination_key});
    }
    if (del_first) ctx.reply.Integer(0);
    return;
  }
  // Redis counts the store as one change: the DEL that clears the way counts none.
  if (existed) {
    PublishChange(ctx, destination.db, destination_key, kNoEvent, {"DEL", destination_key},
                  /*dirty=*/0);
  }
  // Owned copies: an intset's members are formatted into a scratch buffer.
  std::vector<std::string> effect;
  if (WantsEffects(ctx)) {
    effect.reserve(static_cast<size_t>(size) + 2);
    effect = {"SADD", std::string(destination_key)};
    result->ForEach([&](std::string_view member) { effect.emplace_back(member); });
  }
  ReplaceWithObject(ctx, destination, std::move(result));
  ctx.reply.Integer(size);
  PublishBuiltChange(ctx, destination.db, destination_key, {kSetEvents, event}, effect);
}

// SINTER (no destination) and SINTERSTORE. The empty string is a valid destination key.
void InterGeneric(CommandContext& ctx, std::optional<std::string_view> destination,
                  size_t first_key) {
  std::vector<std::string_view> keys(ctx.args.begin() + static_cast<long>(first_key),
                                     ctx.args.end());
  std::vector<std::string_view> locked = keys;
  const bool store = destination.has_value();
  if (store) locked.push_back(*destination);
  Store::MultiLock lock = ctx.store.LockKeys(locked);
  std::vector<const Set*> sets;
  if (!CollectSetsOrReply(ctx, keys, &sets)) return;
  bool any_missing = std::find(sets.begin(), sets.end(), nullptr) != sets.end();
  if (store) {
    CollectionLimits limits = ctx.settings().collection_limits();
    auto result = std::make_unique<Set>();
    if (!any_missing) {
      ForEachInIntersection(sets, [&](std::string_view member) {
        result->Add(member, limits);
        return true;
      });
    }
    StoreResult(ctx, *destination, std::move(result), "sinterstore",
                /*del_first=*/any_missing);
    return;
  }
  DeferredMembers members;
  if (!any_missing) {
    ForEachInIntersection(sets, [&](std::string_view member) {
      members.Add(member);
      return true;
    });
  }
  ctx.reply.SetHeader(members.count());
  ctx.reply.Raw(members.encoded());
}

void CmdSInter(CommandContext& ctx) { InterGeneric(ctx, std::nullopt, 1); }
void CmdSInterStore(CommandContext& ctx) { InterGeneric(ctx, ctx.arg(1), 2); }

void CmdSInterCard(CommandContext& ctx) {
  int64_t numkeys;
  if (!ParseIntAtLeastOrReply(ctx, ctx.arg(1), 1, errors::kNumkeysPositive, &numkeys)) return;
  if (static_cast<uint64_t>(numkeys) > ctx.argc() - 2) {
    ctx.reply.Error(errors::kNumkeysTooMany);
    return;
  }
  int64_t limit = 0;
  for (size_t i = 2 + static_cast<size_t>(numkeys); i < ctx.argc(); i += 2) {
    if (ArgIs(ctx.arg(i), "limit") && i + 1 < ctx.argc()) {
      if (!ParseIntAtLeastOrReply(ctx, ctx.arg(i + 1), 0, errors::kLimitNegative, &limit)) return;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  std::vector<std::string_view> keys(ctx.args.begin() + 2,
                                     ctx.args.begin() + 2 + static_cast<long>(numkeys));
  Store::MultiLock lock = ctx.store.LockKeys(keys);
  std::vector<const Set*> sets;
  if (!CollectSetsOrReply(ctx, keys, &sets)) return;
  int64_t cardinality = 0;
  if (std::find(sets.begin(), sets.end(), nullptr) == sets.end()) {
    ForEachInIntersection(sets, [&](std::string_view) {
      ++cardinality;
      return limit == 0 || cardinality < limit;
    });
  }
  ctx.reply.Integer(cardinality);
}

// SUNION, SDIFF (no destination) and SUNIONSTORE, SDIFFSTORE.
void UnionDiffGeneric(CommandContext& ctx, std::optional<std::string_view> destination,
                      size_t first_key, SetOp op) {
  std::vector<std::string_view> keys(ctx.args.begin() + static_cast<long>(first_key),
                                     ctx.args.end());
  std::vector<std::string_view> locked = keys;
  const bool store = destination.has_value();
  if (store) locked.push_back(*destination);
  Store::MultiLock lock = ctx.store.LockKeys(locked);
  std::vector<const Set*> sets;
  if (!CollectSetsOrReply(ctx, keys, &sets)) return;
  CollectionLimits limits = ctx.settings().collection_limits();
  std::unique_ptr<Set> result = Combine(sets, op, limits);
  if (store) {
    StoreResult(ctx, *destination, std::move(result),
                op == SetOp::kUnion ? "sunionstore" : "sdiffstore");
    return;
  }
  ReplyMembers(ctx, *result);
}

void CmdSUnion(CommandContext& ctx) { UnionDiffGeneric(ctx, std::nullopt, 1, SetOp::kUnion); }
void CmdSUnionStore(CommandContext& ctx) { UnionDiffGeneric(ctx, ctx.arg(1), 2, SetOp::kUnion); }
void CmdSDiff(CommandContext& ctx) { UnionDiffGeneric(ctx, std::nullopt, 1, SetOp::kDiff); }
void CmdSDiffStore(CommandContext& ctx) { UnionDiffGeneric(ctx, ctx.arg(1), 2, SetOp::kDiff); }

}  // namespace

const std::vector<CommandBinding>& SetCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"sadd", CmdSAdd},
      {"srem", CmdSRem},
      {"scard", CmdSCard},
      {"sismember", CmdSIsMember},
      {"smismember", CmdSMIsMember},
      {"smembers", CmdSMembers},
      {"spop", CmdSPop},
      {"srandmember", CmdSRandMember},
      {"smove", CmdSMove},
      {"sinter", CmdSInter},
      {"sintercard", CmdSInterCard},
      {"sinterstore", CmdSInterStore},
      {"sunion", CmdSUnion},
      {"sunionstore", CmdSUnionStore},
      {"sdiff", CmdSDiff},
      {"sdiffstore", CmdSDiffStore},
      {"sscan", CmdSScan},
  };
  return kCommands;
}

}  // namespace gigakv::server
