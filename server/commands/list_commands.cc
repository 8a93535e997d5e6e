// List family: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LINDEX, LSET, LRANGE, LTRIM, LREM,
// LINSERT, LPOS, LMOVE, RPOPLPUSH, LMPOP and the blocking BLPOP, BRPOP, BLMOVE, BRPOPLPUSH,
// BLMPOP. Values are List objects (core/types/quicklist.h).
//
// Argument errors come in Redis's order (t_list.c): most commands parse their numeric arguments
// before looking at the key, LINDEX/LSET look at the key first. Effects are logged in
// deterministic form: pops log the pop with the count actually popped, moves log LMOVE or
// RPOPLPUSH, blocking commands log their non-blocking equivalent.
#include <algorithm>
#include <charconv>
#include <memory>
#include <string>
#include <vector>

#include "core/types/quicklist.h"
#include "server/blocking.h"
#include "server/client_state.h"
#include "server/commands/args.h"
#include "server/commands/collection_access.h"
#include "server/commands/key_access.h"
#include "server/settings.h"

namespace gigakv::server {
namespace {

std::unique_ptr<List> NewList(CommandContext& ctx) {
  return std::make_unique<List>(ctx.settings().collection_limits().list_max_listpack_size);
}

void ReplyEntry(CommandContext& ctx, const ListpackEntry& entry) {
  if (!entry.is_int) {
    ctx.reply.Bulk(entry.str);
    return;
  }
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), entry.int_value);
  ctx.reply.Bulk(std::string_view(buffer, static_cast<size_t>(end - buffer)));
}

std::string_view EndName(ListEnd end) { return end == ListEnd::kHead ? "LEFT" : "RIGHT"; }

// Parses LEFT|RIGHT; replies a syntax error otherwise.
bool ParseEndOrReply(CommandContext& ctx, std::string_view text, ListEnd* end) {
  if (ArgIs(text, "left")) {
    *end = ListEnd::kHead;
  } else if (ArgIs(text, "right")) {
    *end = ListEnd::kTail;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  return true;
}

// Publishes the change of the key `access` with the command as received as its effect, the name
// in upper case (deterministic commands on the key in argument 1), counting `dirty` changes;
// notifies `event` (class list).
void PublishAsReceived(CommandContext& ctx, const KeyAccess& access, std::string_view event,
                       uint64_t dirty = 1) {
  std::vector<std::string_view> effect;
  std::string name;
  if (WantsEffects(ctx)) {
    name = AsciiUpper(ctx.spec.name);
    effect.assign(ctx.args.begin(), ctx.args.end());
    effect[0] = name;
  }
  PublishChange(ctx, access.db, access.key, {kListEvents, event}, effect, dirty);
}

std::string_view PushEvent(ListEnd end) { return end == ListEnd::kHead ? "lpush" : "rpush"; }
std::string_view PopEvent(ListEnd end) { return end == ListEnd::kHead ? "lpop" : "rpop"; }

// Publishes "LPOP key" or "RPOP key" (count < 0, one element) or "LPOP key count" (count
// elements, as many changes).
void PublishPop(CommandContext& ctx, int db, std::string_view key, ListEnd end, int64_t count) {
  std::string_view name = end == ListEnd::kHead ? "LPOP" : "RPOP";
  const Event event{kListEvents, PopEvent(end)};
  if (count < 0) {
    PublishChange(ctx, db, key, event, {name, key});
  } else {
    IntText count_text(count);
    PublishChange(ctx, db, key, event, {name, key, count_text.view()},
                  static_cast<uint64_t>(count));
  }
}

// --- Push and pop ------------------------------------------------------------------------------

void PushGeneric(CommandContext& ctx, ListEnd end, bool only_if_exists) {
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    List* list = WriteObject<List>(ctx, access, KeyType::kList, &wrong_type);
    if (wrong_type) return;
    if (list == nullptr) {
      if (only_if_exists) {
        ctx.reply.Integer(0);
        return;
      }
      list = CreateObject(ctx, access, NewList(ctx));
    }
    for (size_t i = 2; i < ctx.argc(); ++i) list->Push(end, ctx.arg(i));
    // Replied before the notification, in the order Redis writes them (server/notifications.h).
    ctx.reply.Integer(static_cast<int64_t>(list->size()));
    PublishAsReceived(ctx, access, PushEvent(end), ctx.argc() - 2);
  });
}

void CmdLPush(CommandContext& ctx) { PushGeneric(ctx, ListEnd::kHead, false); }
void CmdRPush(CommandContext& ctx) { PushGeneric(ctx, ListEnd::kTail, false); }
void CmdLPushX(CommandContext& ctx) { PushGeneric(ctx, ListEnd::kHead, true); }
void CmdRPushX(CommandContext& ctx) { PushGeneric(ctx, ListEnd::kTail, true); }

// Pops up to `count` elements from `end` and replies them as an array (count >= 0) or one
// element as a bulk (count < 0). The list must not be empty. Logs the pop; deletes the emptied
// key, so `access` must be current (no other key of its table written since the lookup).
void PopAndReply(CommandContext& ctx, KeyAccess& access, List* list, ListEnd end, int64_t count) {
  std::string value;
  if (count < 0) {
    list->Pop(end, &value);
    ctx.reply.Bulk(value);
  } else {
    auto popped = static_cast<int64_t>(std::min<uint64_t>(count, list->size()));
    ctx.reply.ArrayHeader(popped);
    for (int64_t i = 0; i < popped; ++i) {
      list->Pop(end, &value);
      ctx.reply.Bulk(value);
    }
    count = popped;
  }
  PublishPop(ctx, access.db, access.key, end, count);
  DeleteIfEmpty(ctx, access);
}

void PopGeneric(CommandContext& ctx, ListEnd end) {
  if (ctx.argc() > 3) {
    ReplyWrongArity(ctx.reply, ctx.spec.name);
    return;
  }
  bool has_count = ctx.argc() == 3;
  int64_t count = -1;
  if (has_count && (!ParseInt64(ctx.arg(2), &count) || count < 0)) {
    ctx.reply.Error(errors::kMustBePositive);
    return;
  }
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    List* list = WriteObject<List>(ctx, access, KeyType::kList, &wrong_type);
    if (wrong_type) return;
    if (list == nullptr) {
      has_count ? ctx.reply.NullArray() : ctx.reply.Null();
      return;
    }
    if (count == 0) {
      ctx.reply.ArrayHeader(0);
      return;
    }
    PopAndReply(ctx, access, list, end, count);
  });
}

void CmdLPop(CommandContext& ctx) { PopGeneric(ctx, ListEnd::kHead); }
void CmdRPop(CommandContext& ctx) { PopGeneric(ctx, ListEnd::kTail); }

// --- Reads -------------------------------------------------------------------------------------

void CmdLLen(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type;
    List* list = ReadObject<List>(ctx, access, KeyType::kList, &wrong_type);
    if (wrong_type) return;
    ctx.reply.Integer(list == nullptr ? 0 : static_cast<int64_t>(list->size()));
  });
}

void CmdLIndex(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type;
    List* list = ReadObject<List>(ctx, access, KeyType::kList, &wrong_type);
    if (wrong_type) return;
    if (list == nullptr) {
      ctx.reply.Null();
      return;
    }
    int64_t index;
    if (!ParseIntOrReply(ctx, ctx.arg(2), &index)) return;
    List::Cursor cursor = list->Seek(index);
    if (!cursor.valid()) {
      ctx.reply.Null();
      return;
    }
    ReplyEntry(ctx, list->Get(cursor));
  });
}

void CmdLRange(CommandContext& ctx) {
  int64_t start, stop;
  if (!ParseIntOrReply(ctx, ctx.arg(2), &start) || !ParseIntOrReply(ctx, ctx.arg(3), &stop)) {
    return;
  }
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type;
    List* list = ReadObject<List>(ctx, access, KeyType::kList, &wrong_type);
    if (wrong_type) return;
    auto length = list == nullptr ? 0 : static_cast<int64_t>(list->size());
    if (start < 0) start = std::max<int64_t>(start + length, 0);
    if (stop < 0) stop += length;
    if (start > stop || start >= length) {
      ctx.reply.ArrayHeader(0);
      return;
    }
    stop = std::min(stop, length - 1);
    ctx.reply.ArrayHeader(stop - start + 1);
    List::Cursor cursor = list->Seek(start);
    for (int64_t i = start; i <= stop; ++i, cursor = list->Next(cursor)) {
      ReplyEntry(ctx, list->Get(cursor));
    }
  });
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len].
void CmdLPos(CommandContext& ctx) {
  int64_t rank = 1, count = -1, maxlen = 0;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    std::string_view option = ctx.arg(i);
    bool more = i + 1 < ctx.argc();
    if (ArgIs(option, "rank") && more) {
      if (!ParseIntOrReply(ctx, ctx.arg(++i), &rank)) return;
      if (rank == 0) {
        ctx.reply.Error(errors::kLposRankZero);
        return;
      }
    } else if (ArgIs(option, "count") && more) {
      if (!ParseIntAtLeastOrReply(ctx, ctx.arg(++i), 0, errors::kLposCountNegative, &count)) return;
    } else if (ArgIs(option, "maxlen") && more) {
      if (!ParseIntAtLeastOrReply(ctx, ctx.arg(++i), 0, errors::kLposMaxlenNegative, &maxlen)) {
        return;
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  bool from_tail = rank < 0;
  uint64_t wanted_rank = 1;
  if (rank == INT64_MIN) {
    // Redis negates the rank, which leaves INT64_MIN negative: every match qualifies, and its
    // COUNT test (matches - rank + 1 >= count) overflows and never stops the scan.
    if (count > 0) count = 0;
  } else {
    wanted_rank = static_cast<uint64_t>(from_tail ? -rank : rank);
  }
  std::string_view element = ctx.arg(2);
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type;
    List* list = ReadObject<List>(ctx, access, KeyType::kList, &wrong_type);
    if (wrong_type) return;
    if (list == nullptr) {
      count >= 0 ? ctx.reply.ArrayHeader(0) : ctx.reply.Null();
      return;
    }
    auto length = static_cast<int64_t>(list->size());
    std::vector<int64_t> found;
    uint64_t matches = 0;
    int64_t scanned = 0;
    for (List::Cursor cursor = list->Seek(from_tail ? -1 : 0);
         cursor.valid() && (maxlen == 0 || scanned < maxlen);
         cursor = from_tail ? list->Prev(cursor) : list->Next(cursor), ++scanned) {
      if (!list->Get(cursor).Equals(element)) continue;
      if (++matches < wanted_rank) continue;
      found.push_back(from_tail ? length - scanned - 1 : scanned);
      if (count < 0 || (count > 0 && static_cast<int64_t>(found.size()) >= count)) break;
    }
    if (count >= 0) {
      ctx.reply.ArrayHeader(static_cast<int64_t>(found.size()));
      for (int64_t index : found) ctx.reply.Integer(index);
    } else if (found.empty()) {
      ctx.reply.Null();
    } else {
      ctx.reply.Integer(found[0]);
    }
  });
}

// --- Writes in place ---------------------------------------------------------------------------

void CmdLSet(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    List* list = WriteObject<List>(ctx, access, KeyType::kList, &wrong_type);
    if (wrong_type) return;
    if (list == nullptr) {
      ctx.reply.Error(errors::kNoSuchKey);
      return;
    }
    int64_t index;
    if (!ParseIntOrReply(ctx, ctx.arg(2), &index)) return;
    if (!list->Set(index, ctx.arg(3))) {
      ctx.reply.Error(errors::kIndexOutOfRange);
      return;
    }
    ctx.reply.Ok();  // Replied before the notification, in the order Redis writes them.
    PublishAsReceived(ctx, access, "lset");
  });
}

void CmdLTrim(CommandContext& ctx) {
  int64_t start, stop;
  if (!ParseIntOrReply(ctx, ctx.arg(2), &start) || !ParseIntOrReply(ctx, ctx.arg(3), &stop)) {
    return;
  }
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    List* list = WriteObject<List>(ctx, access, KeyType::kList, &wrong_type);
    if (wrong_type) return;
    if (list == nullptr) {
      ctx.reply.Ok();
      return;
    }
    auto length = static_cast<int64_t>(list->size());
    if (start < 0) start = std::max<int64_t>(start + length, 0);
    if (stop < 0) stop += length;
    int64_t from_head, from_tail;
    if (start > stop || start >= length) {
      from_head = length;  // Out of range: everything goes.
      from_tail = 0;
    } else {
      stop = std::min(stop, length - 1);
      from_head = start;
      from_tail = length - stop - 1;
    }
    list->Erase(ListEnd::kHead, static_cast<size_t>(from_head));
    list->Erase(ListEnd::kTail, static_cast<size_t>(from_tail));
    // Logged even when nothing was trimmed: Redis counts any LTRIM of a list as a change of the
    // key (WATCH), though not in the dirty counter.
    PublishAsReceived(ctx, access, "ltrim", static_cast<uint64_t>(from_head + from_tail));
    if (from_head + from_tail > 0) DeleteIfEmpty(ctx, access);
    ctx.reply.Ok();
  });
}

void CmdLRem(CommandContext& ctx) {
  int64_t count;
  if (!ParseIntOrReply(ctx, ctx.arg(2), &count)) return;
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    List* list = WriteObject<List>(ctx, access, KeyType::kList, &wrong_type);
    if (wrong_type) return;
    if (list == nullptr) {
      ctx.reply.Integer(0);
      return;
    }
    size_t removed = list->Remove(ctx.arg(3), count);
    if (removed > 0) {
      PublishAsReceived(ctx, access, "lrem", removed);
      DeleteIfEmpty(ctx, access);
    }
    ctx.reply.Integer(static_cast<int64_t>(removed));
  });
}

void CmdLInsert(CommandContext& ctx) {
  bool after;
  if (ArgIs(ctx.arg(2), "after")) {
    after = true;
  } else if (ArgIs(ctx.arg(2), "before")) {
    after = false;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    List* list = WriteObject<List>(ctx, access, KeyType::kList, &wrong_type);
    if (wrong_type) return;
    if (list == nullptr) {
      ctx.reply.Integer(0);
      return;
    }
    if (!list->InsertAtPivot(ctx.arg(3), ctx.arg(4), after)) {
      ctx.reply.Integer(-1);
      return;
    }
    PublishAsReceived(ctx, access, "linsert");
    ctx.reply.Integer(static_cast<int64_t>(list->size()));
  });
}

// --- Multi-key moves and pops ------------------------------------------------------------------

enum class Served { kYes, kNothing, kError };  // kError: WRONGTYPE was replied.

// LMOVE's body under the keys' locks: pops from `source` at `from`, pushes to `destination` at
// `to` and replies the element. kNothing (no reply) when the source is missing.
Served MoveLocked(CommandContext& ctx, std::string_view source, std::string_view destination,
                  ListEnd from, ListEnd to, bool log_as_rpoplpush) {
  KeyAccess src = FindLocked(ctx, source, Lookup::kWrite);
  bool wrong_type;
  List* src_list = WriteObject<List>(ctx, src, KeyType::kList, &wrong_type);
  if (wrong_type) return Served::kError;
  if (src_list == nullptr) return Served::kNothing;
  KeyAccess dst = FindLocked(ctx, destination, Lookup::kWrite);
  List* dst_list = WriteObject<List>(ctx, dst, KeyType::kList, &wrong_type);
  if (wrong_type) return Served::kError;
  std::string value;
  src_list->Pop(from, &value);
  // Creating the destination may move index slots: the source is found again to delete it.
  if (dst_list == nullptr) dst_list = CreateObject(ctx, dst, NewList(ctx));
  dst_list->Push(to, value);
  const bool emptied = src_list->empty();
  // As Redis: the push's notification, the reply, the pop's, then the source's deletion.
  Notify(ctx, {kListEvents, PushEvent(to)}, ctx.db(), destination);
  ctx.reply.Bulk(value);
  const ChangedKey moved[] = {{ctx.db(), source}, {ctx.db(), destination}};
  const KeyEvent popped{kListEvents, PopEvent(from), ctx.db(), source};
  const std::string_view rpoplpush[] = {"RPOPLPUSH", source, destination};
  const std::string_view lmove[] = {"LMOVE", source, destination, EndName(from), EndName(to)};
  PublishChange(ctx, ctx.db(), moved, absl::MakeConstSpan(&popped, 1),
                log_as_rpoplpush ? absl::MakeConstSpan(rpoplpush) : absl::MakeConstSpan(lmove));
  if (emptied) {
    KeyAccess again = FindLocked(ctx, source, Lookup::kPeek);
    DeleteIfEmpty(ctx, again);
  }
  return Served::kYes;
}

// Runs a move with both keys locked. When the source is missing, parks the client on it (with
// the locks held, so no push slips in between) for BLMOVE/BRPOPLPUSH, or replies nil.
void MoveGeneric(CommandContext& ctx, ListEnd from, ListEnd to, bool log_as_rpoplpush,
                 bool blocking, int64_t deadline_ms) {
  std::string_view source = ctx.arg(1), destination = ctx.arg(2);
  Store::MultiLock lock = ctx.store.LockKeys({source, destination});
  if (MoveLocked(ctx, source, destination, from, to, log_as_rpoplpush) != Served::kNothing) return;
  // Inside EXEC nothing blocks; Redis then answers a null bulk here (BLPOP's null array
  // is for timeouts).
  if (blocking && !ctx.client.in_exec) {
    BlockOnKeys(ctx, {source}, deadline_ms);
  } else {
    ctx.reply.Null();
  }
}

void CmdLMove(CommandContext& ctx) {
  ListEnd from, to;
  if (!ParseEndOrReply(ctx, ctx.arg(3), &from) || !ParseEndOrReply(ctx, ctx.arg(4), &to)) return;
  MoveGeneric(ctx, from, to, false, false, 0);
}

void CmdRPopLPush(CommandContext& ctx) {
  MoveGeneric(ctx, ListEnd::kTail, ListEnd::kHead, true, false, 0);
}

void CmdBLMove(CommandContext& ctx) {
  ListEnd from, to;
  if (!ParseEndOrReply(ctx, ctx.arg(3), &from) || !ParseEndOrReply(ctx, ctx.arg(4), &to)) return;
  int64_t deadline_ms;
  if (!ParseBlockTimeoutOrReply(ctx, ctx.arg(5), &deadline_ms)) return;
  MoveGeneric(ctx, from, to, false, true, deadline_ms);
}

void CmdBRPopLPush(CommandContext& ctx) {
  int64_t deadline_ms;
  if (!ParseBlockTimeoutOrReply(ctx, ctx.arg(3), &deadline_ms)) return;
  MoveGeneric(ctx, ListEnd::kTail, ListEnd::kHead, true, true, deadline_ms);
}

// Pops from the first non-empty list among `keys` (the caller holds their locks). With count < 0
// (BLPOP, BRPOP) replies [key, element]; otherwise (LMPOP, BLMPOP) [key, [elements...]] with up
// to `count` elements.
Served PopFirstNonEmptyLocked(CommandContext& ctx, const std::vector<std::string_view>& keys,
                              ListEnd end, int64_t count) {
  for (std::string_view key : keys) {
    KeyAccess access = FindLocked(ctx, key, Lookup::kWrite);
    bool wrong_type;
    List* list = WriteObject<List>(ctx, access, KeyType::kList, &wrong_type);
    if (wrong_type) return Served::kError;
    if (list == nullptr) continue;
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(key);
    PopAndReply(ctx, access, list, end, count);
    return Served::kYes;
  }
  return Served::kNothing;
}

// BLPOP/BRPOP key [key ...] timeout.
void BlockingPopGeneric(CommandContext& ctx, ListEnd end) {
  int64_t deadline_ms;
  if (!ParseBlockTimeoutOrReply(ctx, ctx.arg(ctx.argc() - 1), &deadline_ms)) return;
  std::vector<std::string_view> keys(ctx.args.begin() + 1, ctx.args.end() - 1);
  // Parks with the keys still locked, so that no push slips in between the look and the park.
  Store::MultiLock lock = ctx.store.LockKeys(keys);
  if (PopFirstNonEmptyLocked(ctx, keys, end, -1) == Served::kNothing) {
    BlockOnKeys(ctx, keys, deadline_ms);
  }
}

void CmdBLPop(CommandContext& ctx) { BlockingPopGeneric(ctx, ListEnd::kHead); }
void CmdBRPop(CommandContext& ctx) { BlockingPopGeneric(ctx, ListEnd::kTail); }

// Parses "numkeys key... LEFT|RIGHT [COUNT count]" starting at `numkeys_index`, in Redis's order
// of checks.
bool ParseMultiPopOrReply(CommandContext& ctx, size_t numkeys_index,
                          std::vector<std::string_view>* keys, ListEnd* end, int64_t* count) {
  int64_t numkeys;
  if (!ParseIntAtLeastOrReply(ctx, ctx.arg(numkeys_index), 1, errors::kNumkeysPositive, &numkeys)) {
    return false;
  }
  if (static_cast<uint64_t>(numkeys) >= ctx.argc() - numkeys_index - 1) {
    ctx.reply.Error(errors::kSyntax);  // No room for LEFT|RIGHT after the keys.
    return false;
  }
  size_t where_index = numkeys_index + static_cast<size_t>(numkeys) + 1;
  if (!ParseEndOrReply(ctx, ctx.arg(where_index), end)) return false;
  *count = -1;
  for (size_t i = where_index + 1; i < ctx.argc(); ++i) {
    if (*count == -1 && ArgIs(ctx.arg(i), "count") && i + 1 < ctx.argc()) {
      if (!ParseIntAtLeastOrReply(ctx, ctx.arg(++i), 1, errors::kCountPositive, count)) {
        return false;
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  if (*count == -1) *count = 1;
  keys->assign(ctx.args.begin() + static_cast<ptrdiff_t>(numkeys_index) + 1,
               ctx.args.begin() + static_cast<ptrdiff_t>(where_index));
  return true;
}

void CmdLMPop(CommandContext& ctx) {
  std::vector<std::string_view> keys;
  ListEnd end;
  int64_t count;
  if (!ParseMultiPopOrReply(ctx, 1, &keys, &end, &count)) return;
  Store::MultiLock lock = ctx.store.LockKeys(keys);
  if (PopFirstNonEmptyLocked(ctx, keys, end, count) == Served::kNothing) ctx.reply.NullArray();
}

void CmdBLMPop(CommandContext& ctx) {
  // Redis checks numkeys, LEFT|RIGHT and COUNT before the timeout.
  std::vector<std::string_view> keys;
  ListEnd end;
  int64_t count;
  if (!ParseMultiPopOrReply(ctx, 2, &keys, &end, &count)) return;
  int64_t deadline_ms;
  if (!ParseBlockTimeoutOrReply(ctx, ctx.arg(1), &deadline_ms)) return;
  Store::MultiLock lock = ctx.store.LockKeys(keys);
  if (PopFirstNonEmptyLocked(ctx, keys, end, count) == Served::kNothing) {
    BlockOnKeys(ctx, keys, deadline_ms);
  }
}

}  // namespace

const std::vector<CommandBinding>& ListCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"lpush", CmdLPush},         {"rpush", CmdRPush},   {"lpushx", CmdLPushX},
      {"rpushx", CmdRPushX},       {"lpop", CmdLPop},     {"rpop", CmdRPop},
      {"llen", CmdLLen},           {"lindex", CmdLIndex}, {"lset", CmdLSet},
      {"lrange", CmdLRange},       {"ltrim", CmdLTrim},   {"lrem", CmdLRem},
      {"linsert", CmdLInsert},     {"lpos", CmdLPos},     {"lmove", CmdLMove},
      {"rpoplpush", CmdRPopLPush}, {"lmpop", CmdLMPop},   {"blpop", CmdBLPop},
      {"brpop", CmdBRPop},         {"blmove", CmdBLMove}, {"brpoplpush", CmdBRPopLPush},
      {"blmpop", CmdBLMPop},
  };
  return kCommands;
}

}  // namespace gigakv::server
