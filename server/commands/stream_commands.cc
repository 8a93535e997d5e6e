// Stream family (Redis's t_stream.c): XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID, XREAD,
// the consumer groups (XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM) and XINFO.
//
// The structure is core/types/stream.h (Redis's node layout). Handlers parse as Redis does, in
// its order, so the first error is Redis's. Effects are deterministic: XADD publishes the ID it
// chose, and any trimming as "MAXLEN = <length after>" (a trim always removes a prefix of the
// entries, so the resulting length says exactly what went); XTRIM publishes the same form.
// Group state changes are published as Redis propagates them (an XCLAIM ... FORCE JUSTID per
// delivered or claimed entry, XGROUP SETID ... ENTRIESREAD for the group's position), and more
// completely: re-deliveries of a consumer's history and the entries-read counter too, so a replay
// reproduces every counter. XREAD/XREADGROUP with BLOCK park the client (server/blocking.h).
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/types/stream.h"
#include "gigakv/numbers.h"
#include "server/blocking.h"
#include "server/commands/args.h"
#include "server/commands/collection_access.h"
#include "server/commands/key_access.h"
#include "server/settings.h"

namespace gigakv::server {
namespace {

// An argument as Redis's "%s" prints it in an error: up to its first NUL byte.
std::string_view CText(std::string_view arg) { return arg.substr(0, arg.find('\0')); }

// --- IDs -----------------------------------------------------------------------------------------

// Redis's string2ull: the canonical int64 text of a non-negative number, or whatever strtoull
// accepts in full (leading spaces, '+', leading zeros; a '-' it negates).
bool ParseUnsigned(const std::string& text, uint64_t* value) {
  int64_t integer;
  if (ParseInt64(text, &integer)) {
    if (integer < 0) return false;
    *value = static_cast<uint64_t>(integer);
    return true;
  }
  errno = 0;
  char* end = nullptr;
  *value = std::strtoull(text.c_str(), &end, 10);
  return !(errno == EINVAL || errno == ERANGE || text.empty() || *end != '\0');
}

// Redis's streamGenericParseIDOrReply without the reply: "-", "+" (unless `strict`), "ms",
// "ms-seq", and with `seq_given` "ms-*" (seq_given set false). A missing seq is `missing_seq`.
// The text is read as a C string (up to a NUL), at most 127 bytes.
bool ParseIdText(std::string_view arg, StreamID* id, uint64_t missing_seq, bool strict,
                 bool* seq_given) {
  if (arg.size() > 127) return false;
  std::string text(arg.substr(0, arg.find('\0')));
  if (strict && (text == "-" || text == "+")) return false;
  if (seq_given != nullptr) *seq_given = true;
  if (text == "-") {
    *id = StreamID::Min();
    return true;
  }
  if (text == "+") {
    *id = StreamID::Max();
    return true;
  }
  const size_t dash = text.find('-');
  uint64_t ms = 0, seq = missing_seq;
  if (!ParseUnsigned(text.substr(0, dash), &ms)) return false;
  if (dash != std::string::npos) {
    const std::string seq_text = text.substr(dash + 1);
    if (seq_given != nullptr && seq_text == "*") {
      seq = 0;
      *seq_given = false;
    } else if (!ParseUnsigned(seq_text, &seq)) {
      return false;
    }
  }
  *id = {ms, seq};
  return true;
}

// The same, replying Redis's error for a bad ID.
bool ParseIdOrReply(CommandContext& ctx, std::string_view arg, StreamID* id, uint64_t missing_seq,
                    bool strict, bool* seq_given) {
  if (ParseIdText(arg, id, missing_seq, strict, seq_given)) return true;
  ctx.reply.Error(errors::kStreamInvalidId);
  return false;
}

bool ParseStrictIdOrReply(CommandContext& ctx, std::string_view arg, StreamID* id,
                          uint64_t missing_seq, bool* seq_given = nullptr) {
  return ParseIdOrReply(ctx, arg, id, missing_seq, /*strict=*/true, seq_given);
}

// Redis's streamParseIntervalIDOrReply: an ID, "-", "+", or an exclusive "(id".
bool ParseIntervalIdOrReply(CommandContext& ctx, std::string_view arg, StreamID* id,
                            bool* exclusive, uint64_t missing_seq) {
  *exclusive = arg.size() > 1 && arg[0] == '(';
  if (*exclusive) return ParseStrictIdOrReply(ctx, arg.substr(1), id, missing_seq);
  return ParseIdOrReply(ctx, arg, id, missing_seq, /*strict=*/false, nullptr);
}

void ReplyId(CommandContext& ctx, const StreamID& id) { ctx.reply.Bulk(id.ToString()); }

// One entry: [id, [field, value, ...]].
void ReplyEntry(CommandContext& ctx, const StreamID& id,
                absl::Span<const std::string_view> field_values) {
  ctx.reply.ArrayHeader(2);
  ReplyId(ctx, id);
  ctx.reply.ArrayHeader(static_cast<int64_t>(field_values.size()));
  for (std::string_view element : field_values) ctx.reply.Bulk(element);
}

// Entries in [start, end] (reversed: from end down), at most `count` (0 = all), as an array.
void ReplyRange(CommandContext& ctx, const Stream& stream, const StreamID& start,
                const StreamID& end, size_t count, bool reverse) {
  std::vector<std::pair<StreamID, std::vector<std::string>>> entries;
  stream.Range(start, end, reverse,
               [&](const StreamID& id, absl::Span<const std::string_view> field_values) {
                 entries.emplace_back(
                     id, std::vector<std::string>(field_values.begin(), field_values.end()));
                 return count == 0 || entries.size() < count;
               });
  ctx.reply.ArrayHeader(static_cast<int64_t>(entries.size()));
  std::vector<std::string_view> views;
  for (const auto& [id, values] : entries) {
    views.assign(values.begin(), values.end());
    ReplyEntry(ctx, id, views);
  }
}

StreamNodeLimits NodeLimits(CommandContext& ctx) {
  return {ctx.settings().stream_node_max_bytes.get(), ctx.settings().stream_node_max_entries.get()};
}

// --- XADD / XTRIM arguments --------------------------------------------------------------------

struct AddTrimArgs {
  StreamTrim trim;
  bool limit_given = false;
  bool no_mkstream = false;
  bool id_given = false;
  bool seq_given = true;
  StreamID id;
};

// Redis's streamParseAddOrTrimArgsOrReply: options from argument 2; for XADD, stops at the ID
// ("*" or an explicit one). Returns the ID's position for XADD (the end for XTRIM), 0 on error.
size_t ParseAddTrimOrReply(CommandContext& ctx, bool xadd, AddTrimArgs* args) {
  StreamTrim& trim = args->trim;
  size_t i = 2;
  for (; i < ctx.argc(); ++i) {
    const size_t more = ctx.argc() - 1 - i;
    const std::string_view opt = ctx.arg(i);
    if (xadd && opt == "*") break;
    const bool maxlen = ArgIs(opt, "maxlen");
    if ((maxlen || ArgIs(opt, "minid")) && more > 0) {
      if (trim.strategy != StreamTrim::Strategy::kNone) {
        ctx.reply.Error(errors::kStreamMaxlenAndMinid);
        return 0;
      }
      trim.approx = false;
      const std::string_view next = ctx.arg(i + 1);
      if (more >= 2 && next == "~") {
        trim.approx = true;
        ++i;
      } else if (more >= 2 && next == "=") {
        ++i;
      }
      if (maxlen) {
        int64_t value;
        if (!ParseIntOrReply(ctx, ctx.arg(i + 1), &value)) return 0;
        if (value < 0) {
          ctx.reply.Error(errors::kStreamMaxlenNegative);
          return 0;
        }
        trim.maxlen = static_cast<uint64_t>(value);
        trim.strategy = StreamTrim::Strategy::kMaxLen;
      } else {
        if (!ParseStrictIdOrReply(ctx, ctx.arg(i + 1), &trim.minid, 0)) return 0;
        trim.strategy = StreamTrim::Strategy::kMinId;
      }
      ++i;
    } else if (ArgIs(opt, "limit") && more > 0) {
      if (!ParseIntOrReply(ctx, ctx.arg(i + 1), &trim.limit)) return 0;
      if (trim.limit < 0) {
        ctx.reply.Error(errors::kStreamLimitNegative);
        return 0;
      }
      args->limit_given = true;
      ++i;
    } else if (xadd && ArgIs(opt, "nomkstream")) {
      args->no_mkstream = true;
    } else if (xadd) {
      if (!ParseStrictIdOrReply(ctx, opt, &args->id, 0, &args->seq_given)) return 0;
      args->id_given = true;
      break;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return 0;
    }
  }
  if (trim.limit != 0 && trim.strategy == StreamTrim::Strategy::kNone) {
    ctx.reply.Error(errors::kStreamLimitWithoutStrategy);
    return 0;
  }
  if (!xadd && trim.strategy == StreamTrim::Strategy::kNone) {
    ctx.reply.Error(errors::kStreamXtrimNeedsStrategy);
    return 0;
  }
  if (args->limit_given) {
    if (!trim.approx) {
      ctx.reply.Error(errors::kStreamLimitWithoutApprox);
      return 0;
    }
  } else if (trim.approx) {
    // At most 100 nodes' worth of work per trim, as Redis.
    const int64_t node_entries = ctx.settings().stream_node_max_entries.get();
    trim.limit = node_entries > 0 && node_entries <= 10000 ? 100 * node_entries : 10000;
    if (trim.limit > 1000000) trim.limit = 1000000;
  } else {
    trim.limit = 0;
  }
  return i;
}

// The trim part of an effect: "MAXLEN = <length>".
void AppendTrimEffect(const Stream& stream, std::vector<std::string>* effect) {
  effect->push_back("MAXLEN");
  effect->push_back("=");
  effect->push_back(absl::StrCat(stream.length()));
}

// --- Commands ------------------------------------------------------------------------------------

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [...]
void CmdXAdd(CommandContext& ctx) {
  AddTrimArgs args;
  const size_t id_pos = ParseAddTrimOrReply(ctx, /*xadd=*/true, &args);
  if (id_pos == 0) return;
  const size_t field_pos = id_pos + 1;
  if (ctx.argc() < field_pos + 2 || (ctx.argc() - field_pos) % 2 == 1) {
    ctx.reply.Error(FormatText(errors::kWrongArity, {ctx.spec.name}));
    return;
  }
  if (args.id_given && args.seq_given && args.id == StreamID::Min()) {
    ctx.reply.Error(errors::kStreamXaddIdZero);
    return;
  }
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type = false;
    Stream* stream = WriteObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
    if (wrong_type) return;
    std::unique_ptr<Stream> fresh;
    if (stream == nullptr) {
      if (args.no_mkstream) {
        ctx.reply.Null();
        return;
      }
      fresh = std::make_unique<Stream>();
      stream = fresh.get();
    }
    if (stream->last_id() == StreamID::Max()) {
      ctx.reply.Error(errors::kStreamExhausted);
      return;
    }
    std::vector<std::string_view> field_values;
    for (size_t i = field_pos; i < ctx.argc(); ++i) field_values.push_back(ctx.arg(i));
    StreamID added;
    const Stream::AppendStatus status =
        stream->Append(field_values, args.id_given ? &args.id : nullptr, args.seq_given,
                       static_cast<uint64_t>(ctx.store.NowMs()), NodeLimits(ctx), &added);
    if (status != Stream::AppendStatus::kOk) {
      // A stream created for this XADD is dropped (only a payload over 1 GiB fails on a new
      // stream; Redis would keep it, empty).
      ctx.reply.Error(status == Stream::AppendStatus::kIdNotGreater ? errors::kStreamXaddIdSmall
                                                                    : errors::kStreamTooLarge);
      return;
    }
    if (fresh != nullptr) CreateObject(ctx, access, std::move(fresh));
    const std::string id_text = added.ToString();
    ctx.reply.Bulk(id_text);
    int64_t trimmed = 0;
    if (args.trim.strategy != StreamTrim::Strategy::kNone) trimmed = stream->Trim(args.trim);
    std::vector<std::string> effect;
    if (WantsEffects(ctx)) {
      effect = {"XADD", std::string(access.key)};
      if (args.trim.strategy != StreamTrim::Strategy::kNone) AppendTrimEffect(*stream, &effect);
      effect.push_back(id_text);
      for (std::string_view element : field_values) effect.emplace_back(element);
    }
    const ChangedKey changed{access.db, access.key};
    const KeyEvent events[] = {{kStreamEvents, "xadd", access.db, access.key},
                               {kStreamEvents, "xtrim", access.db, access.key}};
    PublishChange(ctx, access.db, absl::MakeConstSpan(&changed, 1),
                  absl::MakeConstSpan(events, trimmed > 0 ? 2 : 1),
                  std::vector<std::string_view>(effect.begin(), effect.end()), /*dirty=*/1);
  });
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
void CmdXTrim(CommandContext& ctx) {
  AddTrimArgs args;
  if (ParseAddTrimOrReply(ctx, /*xadd=*/false, &args) == 0) return;
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type = false;
    Stream* stream = WriteObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
    if (wrong_type) return;
    if (stream == nullptr) {
      ctx.reply.Integer(0);
      return;
    }
    const int64_t deleted = stream->Trim(args.trim);
    ctx.reply.Integer(deleted);
    if (deleted == 0) return;
    std::vector<std::string> effect;
    if (WantsEffects(ctx)) {
      effect = {"XTRIM", std::string(access.key)};
      AppendTrimEffect(*stream, &effect);
    }
    PublishBuiltChange(ctx, access.db, access.key, {kStreamEvents, "xtrim"}, effect,
                       static_cast<uint64_t>(deleted));
  });
}

// XRANGE key start end [COUNT n] / XREVRANGE key end start [COUNT n]
void RangeGeneric(CommandContext& ctx, bool reverse) {
  StreamID start, end;
  bool start_exclusive = false, end_exclusive = false;
  if (!ParseIntervalIdOrReply(ctx, ctx.arg(reverse ? 3 : 2), &start, &start_exclusive, 0)) return;
  if (start_exclusive && !start.Increment()) {
    ctx.reply.Error(errors::kStreamInvalidStart);
    return;
  }
  if (!ParseIntervalIdOrReply(ctx, ctx.arg(reverse ? 2 : 3), &end, &end_exclusive, UINT64_MAX)) {
    return;
  }
  if (end_exclusive && !end.Decrement()) {
    ctx.reply.Error(errors::kStreamInvalidEnd);
    return;
  }
  int64_t count = -1;
  for (size_t j = 4; j < ctx.argc(); ++j) {
    if (ArgIs(ctx.arg(j), "count") && j + 1 < ctx.argc()) {
      if (!ParseIntOrReply(ctx, ctx.arg(j + 1), &count)) return;
      if (count < 0) count = 0;
      ++j;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type = false;
    const Stream* stream = ReadObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
    if (wrong_type) return;
    if (stream == nullptr) {
      ctx.reply.ArrayHeader(0);
    } else if (count == 0) {
      ctx.reply.NullArray();
    } else {
      ReplyRange(ctx, *stream, start, end, count < 0 ? 0 : static_cast<size_t>(count), reverse);
    }
  });
}

void CmdXRange(CommandContext& ctx) { RangeGeneric(ctx, false); }
void CmdXRevRange(CommandContext& ctx) { RangeGeneric(ctx, true); }

// XLEN key
void CmdXLen(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type = false;
    const Stream* stream = ReadObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
    if (wrong_type) return;
    ctx.reply.Integer(stream == nullptr ? 0 : static_cast<int64_t>(stream->length()));
  });
}

// XDEL key id [id ...]
void CmdXDel(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type = false;
    Stream* stream = WriteObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
    if (wrong_type) return;
    if (stream == nullptr) {
      ctx.reply.Integer(0);
      return;
    }
    // Every ID is checked before anything is deleted.
    std::vector<StreamID> ids(ctx.argc() - 2);
    for (size_t j = 2; j < ctx.argc(); ++j) {
      if (!ParseStrictIdOrReply(ctx, ctx.arg(j), &ids[j - 2], 0)) return;
    }
    int64_t deleted = 0;
    std::vector<std::string> effect;
    for (const StreamID& id : ids) {
      if (!stream->Delete(id)) continue;
      if (id > stream->max_deleted_id()) stream->set_max_deleted_id(id);
      ++deleted;
      if (WantsEffects(ctx)) effect.push_back(id.ToString());
    }
    ctx.reply.Integer(deleted);
    if (deleted == 0) return;
    if (WantsEffects(ctx)) {
      effect.insert(effect.begin(), {"XDEL", std::string(access.key)});
    }
    PublishBuiltChange(ctx, access.db, access.key, {kStreamEvents, "xdel"}, effect,
                       static_cast<uint64_t>(deleted));
  });
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
void CmdXSetId(CommandContext& ctx) {
  StreamID id, max_deleted;
  int64_t entries_added = -1;
  if (!ParseStrictIdOrReply(ctx, ctx.arg(2), &id, 0)) return;
  for (size_t i = 3; i < ctx.argc();) {
    const bool more = i + 1 < ctx.argc();
    if (ArgIs(ctx.arg(i), "entriesadded") && more) {
      if (!ParseIntOrReply(ctx, ctx.arg(i + 1), &entries_added)) return;
      if (entries_added < 0) {
        ctx.reply.Error(errors::kStreamEntriesAddedNegative);
        return;
      }
      i += 2;
    } else if (ArgIs(ctx.arg(i), "maxdeletedid") && more) {
      if (!ParseStrictIdOrReply(ctx, ctx.arg(i + 1), &max_deleted, 0)) return;
      if (id < max_deleted) {
        ctx.reply.Error(errors::kStreamSetIdBelowMaxDeleted);
        return;
      }
      i += 2;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type = false;
    Stream* stream = WriteObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
    if (wrong_type) return;
    if (stream == nullptr) {
      ctx.reply.Error(errors::kNoSuchKey);
      return;
    }
    if (stream->length() > 0) {
      StreamID top;
      stream->EdgeId(/*first=*/false, &top);
      if (id < top) {
        ctx.reply.Error(errors::kStreamSetIdBelowTop);
        return;
      }
      if (entries_added != -1 && stream->length() > static_cast<uint64_t>(entries_added)) {
        ctx.reply.Error(errors::kStreamEntriesAddedBelowLength);
        return;
      }
    }
    stream->set_last_id(id);
    if (entries_added != -1) stream->set_entries_added(static_cast<uint64_t>(entries_added));
    if (max_deleted != StreamID::Min()) stream->set_max_deleted_id(max_deleted);
    ctx.reply.Ok();
    // The effect states the whole resulting metadata. Redis signals no WATCH (nor a blocked
    // reader: only XADD does).
    PublishBuiltChange(ctx, access.db, access.key, {kStreamEvents, "xsetid"},
                       {"XSETID", std::string(access.key), id.ToString(), "ENTRIESADDED",
                        absl::StrCat(stream->entries_added()), "MAXDELETEDID",
                        stream->max_deleted_id().ToString()},
                       1, /*signals_watchers=*/false);
  });
}

// --- Consumer groups -----------------------------------------------------------------------------

// Publishes a change of `key` made of several effects (each one record; the first counts `dirty`;
// effects left empty when nobody wants them), or one record with no effect when there are none.
// `watchers`: whether WATCH sees it (Redis's signalModifiedKey; the group commands do not call it).
void PublishEffects(CommandContext& ctx, KeyAccess& access, Event event,
                    const std::vector<std::vector<std::string>>& effects, uint64_t dirty,
                    bool watchers) {
  if (effects.empty()) {
    PublishChange(ctx, access.db, access.key, event, absl::Span<const std::string_view>(), dirty,
                  watchers);
    return;
  }
  for (size_t i = 0; i < effects.size(); ++i) {
    std::vector<std::string_view> views(effects[i].begin(), effects[i].end());
    PublishChange(ctx, access.db, access.key, i == 0 ? event : kNoEvent, views, i == 0 ? dirty : 0,
                  watchers);
  }
}

// Appends one effect to `effects`: built by `make` when a consumer wants effects, else empty (so
// that a write publishes as many records whether or not effects are wanted).
template <typename MakeEffect>
void AddEffect(std::vector<std::vector<std::string>>& effects, bool wanted, MakeEffect make) {
  effects.push_back(wanted ? make() : std::vector<std::string>());
}

// The XCLAIM that reproduces a pending entry's state (Redis's streamPropagateXCLAIM).
std::vector<std::string> ClaimEffect(std::string_view key, std::string_view group_name,
                                     const StreamGroup& group, const StreamID& id,
                                     const StreamNack& nack) {
  return {"XCLAIM",
          std::string(key),
          std::string(group_name),
          nack.consumer->name,
          "0",
          id.ToString(),
          "TIME",
          absl::StrCat(nack.delivery_time_ms),
          "RETRYCOUNT",
          absl::StrCat(nack.delivery_count),
          "FORCE",
          "JUSTID",
          "LASTID",
          group.last_id.ToString()};
}

// The XGROUP SETID that reproduces a group's position (Redis's streamPropagateGroupID).
std::vector<std::string> GroupIdEffect(std::string_view key, std::string_view group_name,
                                       const StreamGroup& group) {
  return {"XGROUP",
          "SETID",
          std::string(key),
          std::string(group_name),
          group.last_id.ToString(),
          "ENTRIESREAD",
          absl::StrCat(group.entries_read)};
}

int64_t NowMs(CommandContext& ctx) { return ctx.store.NowMs(); }

// XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER (Redis's xgroupCommand).
void CmdXGroup(CommandContext& ctx) {
  const std::string_view sub = ctx.arg(1);
  const bool create = ArgIs(sub, "create"), setid = ArgIs(sub, "setid");
  bool mkstream = false;
  int64_t entries_read = StreamGroup::kInvalidEntriesRead;
  for (size_t i = 5; i < ctx.argc();) {
    if (create && ArgIs(ctx.arg(i), "mkstream")) {
      mkstream = true;
      ++i;
    } else if ((create || setid) && ArgIs(ctx.arg(i), "entriesread") && i + 1 < ctx.argc()) {
      if (!ParseIntOrReply(ctx, ctx.arg(i + 1), &entries_read)) return;
      if (entries_read < 0 && entries_read != StreamGroup::kInvalidEntriesRead) {
        ctx.reply.Error(errors::kStreamEntriesReadNegative);
        return;
      }
      i += 2;
    } else {
      ReplySubcommandSyntaxError(ctx);
      return;
    }
  }
  WithKey(ctx, ctx.arg(2), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type = false;
    Stream* stream = WriteObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
    if (wrong_type) return;
    const std::string_view key = ctx.arg(2), group_name = ctx.arg(3);
    StreamGroup* group = nullptr;
    if (!mkstream) {
      if (stream == nullptr) {
        ctx.reply.Error(errors::kStreamXgroupNeedsKey);
        return;
      }
      group = stream->FindGroup(group_name);
      if (group == nullptr && !create && !ArgIs(sub, "destroy")) {
        ctx.reply.Error(FormatText(errors::kStreamNoGroupForKey, {CText(group_name), CText(key)}));
        return;
      }
    }
    if (create && ctx.argc() <= 8) {
      StreamID id;
      if (ctx.arg(4) == "$") {
        id = stream != nullptr ? stream->last_id() : StreamID{};
      } else if (!ParseStrictIdOrReply(ctx, ctx.arg(4), &id, 0)) {
        return;
      }
      bool created_stream = false;
      if (stream == nullptr) {
        stream = CreateObject(ctx, access, std::make_unique<Stream>());
        created_stream = true;
      }
      if (stream->CreateGroup(group_name, id, entries_read) == nullptr) {
        ctx.reply.Error(errors::kStreamBusyGroup);
        return;
      }
      ctx.reply.Ok();
      std::vector<std::string> effect = {
          "XGROUP",      "CREATE",      std::string(key),          std::string(group_name),
          id.ToString(), "ENTRIESREAD", absl::StrCat(entries_read)};
      if (created_stream) effect.push_back("MKSTREAM");
      PublishEffects(ctx, access, {kStreamEvents, "xgroup-create"}, {effect}, 1, created_stream);
    } else if (setid && (ctx.argc() == 5 || ctx.argc() == 7)) {
      StreamID id;
      if (ctx.arg(4) == "$") {
        id = stream->last_id();
      } else if (!ParseIdOrReply(ctx, ctx.arg(4), &id, 0, /*strict=*/false, nullptr)) {
        return;
      }
      group->last_id = id;
      group->entries_read = entries_read;
      ctx.reply.Ok();
      PublishEffects(ctx, access, {kStreamEvents, "xgroup-setid"},
                     {GroupIdEffect(key, group_name, *group)}, 1, false);
    } else if (ArgIs(sub, "destroy") && ctx.argc() == 4) {
      if (group == nullptr) {
        ctx.reply.Integer(0);
        return;
      }
      stream->DestroyGroup(group_name);
      ctx.reply.Integer(1);
      PublishEffects(ctx, access, {kStreamEvents, "xgroup-destroy"},
                     {{"XGROUP", "DESTROY", std::string(key), std::string(group_name)}}, 1, false);
      ctx.blocking().SignalKey(access.db, key);  // Its blocked readers get an error.
    } else if (ArgIs(sub, "createconsumer") && ctx.argc() == 5) {
      const bool created = group->CreateConsumer(ctx.arg(4), NowMs(ctx)) != nullptr;
      ctx.reply.Integer(created ? 1 : 0);
      if (!created) return;
      PublishEffects(ctx, access, {kStreamEvents, "xgroup-createconsumer"},
                     {{"XGROUP", "CREATECONSUMER", std::string(key), std::string(group_name),
                       std::string(ctx.arg(4))}},
                     1, false);
    } else if (ArgIs(sub, "delconsumer") && ctx.argc() == 5) {
      if (group->FindConsumer(ctx.arg(4)) == nullptr) {
        ctx.reply.Integer(0);
        return;
      }
      ctx.reply.Integer(static_cast<int64_t>(group->DeleteConsumer(ctx.arg(4))));
      PublishEffects(ctx, access, {kStreamEvents, "xgroup-delconsumer"},
                     {{"XGROUP", "DELCONSUMER", std::string(key), std::string(group_name),
                       std::string(ctx.arg(4))}},
                     1, false);
    } else {
      ReplySubcommandSyntaxError(ctx);
    }
  });
}

void CmdXGroupHelp(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CREATE <key> <groupname> <id|$> [option]",
      "    Create a new consumer group. Options are:",
      "    * MKSTREAM",
      "      Create the empty stream if it does not exist.",
      "    * ENTRIESREAD entries_read",
      "      Set the group's entries_read counter (internal use).",
      "CREATECONSUMER <key> <groupname> <consumer>",
      "    Create a new consumer in the specified group.",
      "DELCONSUMER <key> <groupname> <consumer>",
      "    Remove the specified consumer.",
      "DESTROY <key> <groupname>",
      "    Remove the specified group.",
      "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
      "    Set the current group ID and entries_read counter.",
      "HELP",
      "    Prints this help."};
  ctx.reply.ArrayHeader(static_cast<int64_t>(std::size(kLines)));
  for (std::string_view line : kLines) ctx.reply.SimpleString(line);
}

// XACK key group id [id ...]
void CmdXAck(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type = false;
    Stream* stream = WriteObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
    if (wrong_type) return;
    StreamGroup* group = stream == nullptr ? nullptr : stream->FindGroup(ctx.arg(2));
    if (group == nullptr) {
      ctx.reply.Integer(0);
      return;
    }
    std::vector<StreamID> ids(ctx.argc() - 3);
    for (size_t j = 3; j < ctx.argc(); ++j) {
      if (!ParseStrictIdOrReply(ctx, ctx.arg(j), &ids[j - 3], 0)) return;
    }
    std::vector<std::string> effect = {"XACK", std::string(ctx.arg(1)), std::string(ctx.arg(2))};
    int64_t acknowledged = 0;
    for (const StreamID& id : ids) {
      if (!group->Acknowledge(id)) continue;
      ++acknowledged;
      effect.push_back(id.ToString());
    }
    ctx.reply.Integer(acknowledged);
    if (acknowledged == 0) return;
    PublishEffects(ctx, access, kNoEvent, {effect}, static_cast<uint64_t>(acknowledged), false);
  });
}

// The stream at ctx.arg(1) and its group ctx.arg(2), as XPENDING, XCLAIM and XAUTOCLAIM look
// them up; nullptr after replying WRONGTYPE, or Redis's NOGROUP text when either is missing.
StreamGroup* GroupOrReply(CommandContext& ctx, KeyAccess& access, Stream** stream) {
  bool wrong_type = false;
  *stream = WriteObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
  if (wrong_type) return nullptr;
  StreamGroup* group = *stream == nullptr ? nullptr : (*stream)->FindGroup(ctx.arg(2));
  if (group == nullptr) {
    ctx.reply.Error(
        FormatText(errors::kStreamNoKeyOrGroup, {CText(ctx.arg(1)), CText(ctx.arg(2))}));
  }
  return group;
}

// XPENDING key group [[IDLE min-idle] start end count [consumer]]
void CmdXPending(CommandContext& ctx) {
  const bool summary = ctx.argc() == 3;
  if (!summary && (ctx.argc() < 6 || ctx.argc() > 9)) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  StreamID start, end;
  int64_t count = 0, min_idle = 0;
  std::optional<std::string_view> consumer_name;
  if (!summary) {
    size_t first = 3;
    if (ArgIs(ctx.arg(3), "idle")) {
      if (!ParseIntOrReply(ctx, ctx.arg(4), &min_idle)) return;
      if (ctx.argc() < 8) {
        ctx.reply.Error(errors::kSyntax);
        return;
      }
      first += 2;
    }
    if (!ParseIntOrReply(ctx, ctx.arg(first + 2), &count)) return;
    if (count < 0) count = 0;
    bool exclusive = false;
    if (!ParseIntervalIdOrReply(ctx, ctx.arg(first), &start, &exclusive, 0)) return;
    if (exclusive && !start.Increment()) {
      ctx.reply.Error(errors::kStreamInvalidStart);
      return;
    }
    if (!ParseIntervalIdOrReply(ctx, ctx.arg(first + 1), &end, &exclusive, UINT64_MAX)) return;
    if (exclusive && !end.Decrement()) {
      ctx.reply.Error(errors::kStreamInvalidEnd);
      return;
    }
    if (first + 3 < ctx.argc()) consumer_name = ctx.arg(first + 3);
  }
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    Stream* stream = nullptr;
    StreamGroup* group = GroupOrReply(ctx, access, &stream);
    if (group == nullptr) return;
    if (summary) {
      ctx.reply.ArrayHeader(4);
      ctx.reply.Integer(static_cast<int64_t>(group->pel.size()));
      if (group->pel.empty()) {
        ctx.reply.Null();
        ctx.reply.Null();
        ctx.reply.NullArray();
        return;
      }
      ReplyId(ctx, group->pel.begin()->first);
      ReplyId(ctx, group->pel.rbegin()->first);
      int64_t owners = 0;
      for (const auto& [name, consumer] : group->consumers) owners += !consumer->pel.empty();
      ctx.reply.ArrayHeader(owners);
      for (const auto& [name, consumer] : group->consumers) {
        if (consumer->pel.empty()) continue;
        ctx.reply.ArrayHeader(2);
        ctx.reply.Bulk(name);
        ctx.reply.Bulk(absl::StrCat(consumer->pel.size()));
      }
      return;
    }
    const int64_t now = NowMs(ctx);
    std::vector<std::pair<StreamID, const StreamNack*>> found;
    auto collect = [&](const auto& pel) {
      for (auto it = pel.lower_bound(start); count > 0 && it != pel.end() && it->first <= end;
           ++it) {
        const StreamNack& nack = *it->second;
        if (min_idle != 0 && now - nack.delivery_time_ms < min_idle) continue;
        found.emplace_back(it->first, &nack);
        --count;
      }
    };
    if (consumer_name.has_value()) {
      StreamConsumer* consumer = group->FindConsumer(*consumer_name);
      if (consumer == nullptr) {
        ctx.reply.ArrayHeader(0);
        return;
      }
      collect(consumer->pel);
    } else {
      collect(group->pel);
    }
    ctx.reply.ArrayHeader(static_cast<int64_t>(found.size()));
    for (const auto& [id, nack] : found) {
      ctx.reply.ArrayHeader(4);
      ReplyId(ctx, id);
      ctx.reply.Bulk(nack->consumer->name);
      ctx.reply.Integer(std::max<int64_t>(0, now - nack->delivery_time_ms));
      ctx.reply.Integer(static_cast<int64_t>(nack->delivery_count));
    }
  });
}

// Replies the entry `id` (which exists) as XRANGE does for one entry.
void ReplyOneEntry(CommandContext& ctx, const Stream& stream, const StreamID& id) {
  stream.Range(id, id, false,
               [&](const StreamID& entry_id, absl::Span<const std::string_view> field_values) {
                 ReplyEntry(ctx, entry_id, field_values);
                 return false;
               });
}

bool EntryExists(const Stream& stream, const StreamID& id) {
  bool exists = false;
  stream.Range(id, id, false, [&](const StreamID&, absl::Span<const std::string_view>) {
    exists = true;
    return false;
  });
  return exists;
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-ms] [RETRYCOUNT n]
//        [FORCE] [JUSTID] [LASTID id]
void CmdXClaim(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    Stream* stream = nullptr;
    StreamGroup* group = GroupOrReply(ctx, access, &stream);
    if (group == nullptr) return;
    int64_t min_idle = 0;
    if (!ParseInt64(ctx.arg(4), &min_idle)) {
      ctx.reply.Error(errors::kStreamXclaimMinIdle);
      return;
    }
    if (min_idle < 0) min_idle = 0;
    // IDs until the first argument that is not one; the options follow.
    std::vector<StreamID> ids;
    size_t j = 5;
    for (; j < ctx.argc(); ++j) {
      StreamID id;
      if (!ParseIdText(ctx.arg(j), &id, 0, /*strict=*/true, nullptr)) break;
      ids.push_back(id);
    }
    const int64_t now = NowMs(ctx);
    int64_t retry_count = -1, delivery_time = -1;
    bool force = false, justid = false;
    StreamID last_id;
    for (; j < ctx.argc(); ++j) {
      const bool more = j + 1 < ctx.argc();
      const std::string_view opt = ctx.arg(j);
      if (ArgIs(opt, "force")) {
        force = true;
      } else if (ArgIs(opt, "justid")) {
        justid = true;
      } else if (ArgIs(opt, "idle") && more) {
        if (!ParseInt64(ctx.arg(++j), &delivery_time)) {
          ctx.reply.Error(errors::kStreamXclaimIdle);
          return;
        }
        delivery_time = now - delivery_time;
      } else if (ArgIs(opt, "time") && more) {
        if (!ParseInt64(ctx.arg(++j), &delivery_time)) {
          ctx.reply.Error(errors::kStreamXclaimTime);
          return;
        }
      } else if (ArgIs(opt, "retrycount") && more) {
        if (!ParseInt64(ctx.arg(++j), &retry_count)) {
          ctx.reply.Error(errors::kStreamXclaimRetryCount);
          return;
        }
      } else if (ArgIs(opt, "lastid") && more) {
        if (!ParseStrictIdOrReply(ctx, ctx.arg(++j), &last_id, 0)) return;
      } else {
        ctx.reply.Error(FormatText(errors::kStreamXclaimOption, {CText(opt)}));
        return;
      }
    }
    bool propagate_last_id = false;
    if (last_id > group->last_id) {
      group->last_id = last_id;
      propagate_last_id = true;
    }
    if (delivery_time == -1 || delivery_time < 0 || delivery_time > now) delivery_time = now;
    const bool effects_wanted = WantsEffects(ctx);
    std::vector<std::vector<std::string>> effects;
    uint64_t dirty = 0;
    bool consumer_created = false;
    StreamConsumer* consumer = nullptr;
    const std::string_view key = ctx.arg(1), group_name = ctx.arg(2);
    // The reply's length is known only at the end: collect the entries first.
    std::vector<StreamID> claimed;
    for (const StreamID& id : ids) {
      auto found = group->pel.find(id);
      StreamNack* nack = found == group->pel.end() ? nullptr : found->second.get();
      if (!EntryExists(*stream, id)) {
        if (nack != nullptr) {
          AddEffect(effects, effects_wanted,
                    [&] { return ClaimEffect(key, group_name, *group, id, *nack); });
          propagate_last_id = false;
          ++dirty;
          group->Acknowledge(id);
        }
        continue;
      }
      bool fresh = false;
      if (force && nack == nullptr) {
        // A new NACK counts one delivery, then is claimed like any other (Redis's FORCE).
        nack = group->pel.emplace(id, std::make_unique<StreamNack>()).first->second.get();
        fresh = true;
      }
      if (nack == nullptr) continue;
      if (!fresh && min_idle != 0 && now - nack->delivery_time_ms < min_idle) continue;
      if (consumer == nullptr) {
        consumer = group->FindConsumer(ctx.arg(3));
        if (consumer != nullptr) {
          consumer->seen_time_ms = now;
        } else {
          consumer = group->CreateConsumer(ctx.arg(3), now);
          consumer_created = true;
        }
      }
      nack->delivery_time_ms = delivery_time;
      if (retry_count >= 0) {
        nack->delivery_count = static_cast<uint64_t>(retry_count);
      } else if (!justid) {
        ++nack->delivery_count;
      }
      if (fresh) {
        nack->consumer = consumer;
        consumer->pel[id] = nack;
      } else {
        group->Transfer(nack, id, consumer);
      }
      claimed.push_back(id);
      AddEffect(effects, effects_wanted,
                [&] { return ClaimEffect(key, group_name, *group, id, *nack); });
      propagate_last_id = false;
      ++dirty;
    }
    if (propagate_last_id) {
      AddEffect(effects, effects_wanted, [&] { return GroupIdEffect(key, group_name, *group); });
      ++dirty;
    }
    ctx.reply.ArrayHeader(static_cast<int64_t>(claimed.size()));
    for (const StreamID& id : claimed) {
      if (justid) {
        ReplyId(ctx, id);
      } else {
        ReplyOneEntry(ctx, *stream, id);
      }
    }
    if (consumer_created) {
      Notify(ctx, {kStreamEvents, "xgroup-createconsumer"}, access.db, access.key);
      ++dirty;
    }
    if (dirty != 0) PublishEffects(ctx, access, kNoEvent, effects, dirty, false);
  });
}

// Whether Redis could allocate an XAUTOCLAIM's transient array of `count` deleted IDs (16 bytes
// each), which it allocates up front: jemalloc maps it without reserving memory, so only the
// address space limits it. redis-server 7.0.15 on x86-64 Linux accepts COUNT 5,497,558,138,880
// (80 TiB) and refuses one more, whatever the host's RAM.
bool TransientArrayFits(int64_t count) { return count <= int64_t{5'497'558'138'880}; }

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
void CmdXAutoClaim(CommandContext& ctx) {
  int64_t min_idle = 0;
  if (!ParseInt64(ctx.arg(4), &min_idle)) {
    ctx.reply.Error(errors::kStreamXautoclaimMinIdle);
    return;
  }
  if (min_idle < 0) min_idle = 0;
  StreamID start;
  bool exclusive = false;
  if (!ParseIntervalIdOrReply(ctx, ctx.arg(5), &start, &exclusive, 0)) return;
  if (exclusive && !start.Increment()) {
    ctx.reply.Error(errors::kStreamInvalidStart);
    return;
  }
  int64_t count = 100;
  bool justid = false;
  constexpr int64_t kAttemptsFactor = 10;
  for (size_t j = 6; j < ctx.argc(); ++j) {
    if (ArgIs(ctx.arg(j), "count") && j + 1 < ctx.argc()) {
      constexpr int64_t kMaxCount = INT64_MAX / 16;  // LONG_MAX / max(sizeof(streamID), 10)
      if (!ParseInt64(ctx.arg(j + 1), &count) || count < 1 || count > kMaxCount) {
        ctx.reply.Error(errors::kStreamCountNotPositive);
        return;
      }
      ++j;
    } else if (ArgIs(ctx.arg(j), "justid")) {
      justid = true;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    Stream* stream = nullptr;
    StreamGroup* group = GroupOrReply(ctx, access, &stream);
    if (group == nullptr) return;
    if (!TransientArrayFits(count)) {
      ctx.reply.Error(errors::kStreamCountTooHigh);
      return;
    }
    const int64_t now = NowMs(ctx);
    const std::string_view key = ctx.arg(1), group_name = ctx.arg(2);
    const bool effects_wanted = WantsEffects(ctx);
    std::vector<std::vector<std::string>> effects;
    std::vector<StreamID> claimed, deleted;
    StreamConsumer* consumer = nullptr;
    bool consumer_created = false;
    uint64_t dirty = 0;
    int64_t attempts = count * kAttemptsFactor;
    bool reached_end = false;
    std::optional<StreamID> last_seen;
    StreamID cursor = start;
    bool first = true;
    while (attempts-- > 0 && count > 0) {
      auto it = first ? group->pel.lower_bound(cursor) : group->pel.upper_bound(cursor);
      first = false;
      if (it == group->pel.end()) {
        reached_end = true;
        break;
      }
      const StreamID id = it->first;
      StreamNack* nack = it->second.get();
      cursor = id;
      last_seen = id;
      if (!EntryExists(*stream, id)) {
        AddEffect(effects, effects_wanted,
                  [&] { return ClaimEffect(key, group_name, *group, id, *nack); });
        ++dirty;
        group->Acknowledge(id);
        deleted.push_back(id);
        --count;
        continue;
      }
      if (min_idle != 0 && now - nack->delivery_time_ms < min_idle) continue;
      if (consumer == nullptr) {
        consumer = group->FindConsumer(ctx.arg(3));
        if (consumer != nullptr) {
          consumer->seen_time_ms = now;
        } else {
          consumer = group->CreateConsumer(ctx.arg(3), now);
          consumer_created = true;
        }
      }
      group->Transfer(nack, id, consumer);
      nack->delivery_time_ms = now;
      if (!justid) ++nack->delivery_count;
      claimed.push_back(id);
      AddEffect(effects, effects_wanted,
                [&] { return ClaimEffect(key, group_name, *group, id, *nack); });
      ++dirty;
      --count;
    }
    // The next ID to scan from: the first pending entry after the last one looked at.
    StreamID next_start;
    if (!reached_end) {
      auto next = last_seen.has_value() ? group->pel.upper_bound(*last_seen)
                                        : group->pel.lower_bound(start);
      if (next != group->pel.end()) next_start = next->first;
    }
    ctx.reply.ArrayHeader(3);
    ReplyId(ctx, next_start);
    ctx.reply.ArrayHeader(static_cast<int64_t>(claimed.size()));
    for (const StreamID& id : claimed) {
      if (justid) {
        ReplyId(ctx, id);
      } else {
        ReplyOneEntry(ctx, *stream, id);
      }
    }
    ctx.reply.ArrayHeader(static_cast<int64_t>(deleted.size()));
    for (const StreamID& id : deleted) ReplyId(ctx, id);
    if (consumer_created) {
      Notify(ctx, {kStreamEvents, "xgroup-createconsumer"}, access.db, access.key);
      ++dirty;
    }
    if (dirty != 0) PublishEffects(ctx, access, kNoEvent, effects, dirty, false);
  });
}

// Whether the command runs from a Lua script (whose fake client has the address "lua").
bool FromScript(const CommandContext& ctx) { return ctx.client.addr == "lua"; }

// XREAD [COUNT n] [BLOCK ms] STREAMS key [key ...] id [id ...]
// XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms] [NOACK] STREAMS key [key ...] id [id ...]
// (Redis's xreadCommand.)
void ReadGeneric(CommandContext& ctx, bool xreadgroup) {
  int64_t deadline_ms = -1;  // -1: no BLOCK.
  int64_t count = 0;
  size_t streams_arg = 0, streams_count = 0;
  bool noack = false, count_given = false;
  std::optional<std::string_view> group_name, consumer_name;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    const size_t more = ctx.argc() - i - 1;
    const std::string_view opt = ctx.arg(i);
    if (ArgIs(opt, "block") && more > 0) {
      if (FromScript(ctx)) {
        ctx.reply.Error(FormatText(errors::kStreamBlockFromScript, {ctx.arg(0)}));
        return;
      }
      if (!ParseMillisecondTimeoutOrReply(ctx, ctx.arg(++i), &deadline_ms)) return;
    } else if (ArgIs(opt, "count") && more > 0) {
      if (!ParseIntOrReply(ctx, ctx.arg(++i), &count)) return;
      if (count < 0) count = 0;
      count_given = true;
    } else if (ArgIs(opt, "streams") && more > 0) {
      streams_arg = i + 1;
      streams_count = ctx.argc() - streams_arg;
      if (streams_count % 2 != 0) {
        ctx.reply.Error(errors::kStreamUnbalanced);
        return;
      }
      streams_count /= 2;
      break;
    } else if (ArgIs(opt, "group") && more >= 2) {
      if (!xreadgroup) {
        ctx.reply.Error(errors::kStreamGroupOnlyInXreadgroup);
        return;
      }
      group_name = ctx.arg(i + 1);
      consumer_name = ctx.arg(i + 2);
      i += 2;
    } else if (ArgIs(opt, "noack")) {
      if (!xreadgroup) {
        ctx.reply.Error(errors::kStreamNoackOnlyInXreadgroup);
        return;
      }
      noack = true;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if (streams_arg == 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (xreadgroup && !group_name.has_value()) {
    ctx.reply.Error(errors::kStreamMissingGroup);
    return;
  }
  std::vector<std::string_view> keys;
  for (size_t i = 0; i < streams_count; ++i) keys.push_back(ctx.arg(streams_arg + i));
  Store::MultiLock lock = ctx.store.LockKeys(keys);

  // A blocked client's re-run (server/blocking.h; narrowed to the one key that was signalled) is
  // served as Redis's serveClientsBlockedOnStreamKey: a group reader whose stream is gone or is
  // no longer a stream, or whose group is gone, gets an error; a reader is served as soon as the
  // stream's last ID passed its position, even when those entries were deleted since.
  const bool rerun = ctx.client.rerunning_blocked;

  // Checks every key, group and ID before serving anything. ">" is kept as Max().
  std::vector<StreamID> ids(streams_count);
  std::vector<bool> resolved_dollar(streams_count, false);
  for (size_t i = 0; i < streams_count; ++i) {
    const std::string_view key = keys[i], id_text = ctx.arg(streams_arg + streams_count + i);
    KeyAccess access = FindLocked(ctx, key, Lookup::kRead);
    if (rerun && xreadgroup && (!access.exists() || access.view().type() != KeyType::kStream)) {
      ctx.reply.Error(errors::kStreamBlockedKeyDeleted);
      return;
    }
    bool wrong_type = false;
    Stream* stream = WriteObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
    if (wrong_type) return;
    if (group_name.has_value() &&
        (stream == nullptr || stream->FindGroup(*group_name) == nullptr)) {
      ctx.reply.Error(
          rerun ? errors::kStreamBlockedGroupDestroyed
                : FormatText(errors::kStreamNoGroupInXreadgroup, {CText(key), CText(*group_name)}));
      return;
    }
    if (id_text == "$") {
      if (xreadgroup) {
        ctx.reply.Error(errors::kStreamDollarInXreadgroup);
        return;
      }
      ids[i] = stream != nullptr ? stream->last_id() : StreamID{};
      resolved_dollar[i] = true;
      continue;
    }
    if (id_text == ">") {
      if (!xreadgroup) {
        ctx.reply.Error(errors::kStreamGreaterOnlyInXreadgroup);
        return;
      }
      ids[i] = StreamID::Max();
      continue;
    }
    if (!ParseStrictIdOrReply(ctx, id_text, &ids[i], 0)) return;
  }

  // Serve what can be served now.
  const int64_t now = NowMs(ctx);
  const bool effects_wanted = WantsEffects(ctx);
  struct Served {
    size_t index;
    std::vector<std::pair<StreamID, std::vector<std::string>>> entries;
    std::vector<bool> missing;  // History entries no longer in the stream (a nil body).
  };
  std::vector<Served> served;
  for (size_t i = 0; i < streams_count; ++i) {
    KeyAccess access = FindLocked(ctx, keys[i], Lookup::kRead);
    bool wrong_type = false;
    Stream* stream = WriteObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
    if (stream == nullptr) continue;
    StreamGroup* group = group_name.has_value() ? stream->FindGroup(*group_name) : nullptr;
    StreamID after = ids[i];
    bool serve = false, history = false;
    // The newest entry that can be served: the last live one, or on a re-run the stream's last
    // ID (Redis's blocked path compares s->last_id, its synchronous path streamLastValidID).
    StreamID top;
    if (rerun) {
      top = stream->last_id();
    } else if (stream->length() > 0) {
      stream->EdgeId(false, &top);
    }
    if (group != nullptr) {
      if (after != StreamID::Max()) {
        serve = history = true;
      } else if ((rerun || stream->length() > 0) && top > group->last_id) {
        serve = true;
        after = group->last_id;
      }
    } else if (rerun || stream->length() > 0) {
      serve = top > after;
    }
    if (!serve) continue;
    Served result{i, {}, {}};
    StreamID start = after;
    start.Increment();
    auto copy_entry = [&](const StreamID& id, absl::Span<const std::string_view> field_values) {
      result.entries.emplace_back(
          id, std::vector<std::string>(field_values.begin(), field_values.end()));
      result.missing.push_back(false);
    };
    std::vector<std::vector<std::string>> effects;
    bool consumer_created = false;
    if (group == nullptr) {
      stream->Range(start, StreamID::Max(), false,
                    [&](const StreamID& id, absl::Span<const std::string_view> field_values) {
                      copy_entry(id, field_values);
                      return count == 0 || result.entries.size() < static_cast<size_t>(count);
                    });
    } else {
      StreamConsumer* consumer = group->FindConsumer(*consumer_name);
      if (consumer != nullptr) {
        consumer->seen_time_ms = now;
      } else {
        consumer = group->CreateConsumer(*consumer_name, now);
        consumer_created = true;
        Notify(ctx, {kStreamEvents, "xgroup-createconsumer"}, access.db, access.key);
        // Published first in any case (Redis propagates it only with NOACK, where no XCLAIM
        // creates the consumer; a history read of a new consumer would leave it out).
        {
          AddEffect(effects, effects_wanted, [&] {
            return std::vector<std::string>{"XGROUP", "CREATECONSUMER", std::string(keys[i]),
                                            std::string(*group_name), std::string(*consumer_name)};
          });
        }
      }
      if (history) {
        // The consumer's own pending entries from `start`: each delivered again.
        for (auto it = consumer->pel.lower_bound(start);
             it != consumer->pel.end() &&
             (count == 0 || result.entries.size() < static_cast<size_t>(count));
             ++it) {
          const size_t before = result.entries.size();
          stream->Range(it->first, it->first, false, [&](const StreamID& id, auto field_values) {
            copy_entry(id, field_values);
            return false;
          });
          if (result.entries.size() == before) {
            result.entries.emplace_back(it->first, std::vector<std::string>());
            result.missing.push_back(true);
          } else {
            ++it->second->delivery_count;
            it->second->delivery_time_ms = now;
            AddEffect(effects, effects_wanted, [&] {
              return ClaimEffect(keys[i], *group_name, *group, it->first, *it->second);
            });
          }
        }
      } else {
        const StreamID last_before = group->last_id;
        stream->DeliverNew(
            *group, consumer, static_cast<size_t>(count), noack, now,
            [&](const StreamID& id, absl::Span<const std::string_view> fv) { copy_entry(id, fv); });
        if (!noack) {
          for (const auto& [id, values] : result.entries) {
            AddEffect(effects, effects_wanted, [&] {
              return ClaimEffect(keys[i], *group_name, *group, id, *group->pel.at(id));
            });
          }
        }
        if (group->last_id != last_before) {
          AddEffect(effects, effects_wanted,
                    [&] { return GroupIdEffect(keys[i], *group_name, *group); });
        }
      }
      if (!effects.empty() || consumer_created) {
        PublishEffects(ctx, access, kNoEvent, effects, consumer_created ? 2 : 1, false);
      }
    }
    served.push_back(std::move(result));
  }

  if (!served.empty()) {
    ctx.reply.KeyedPairsHeader(static_cast<int64_t>(served.size()));
    std::vector<std::string_view> views;
    for (const Served& result : served) {
      ctx.reply.KeyedPairHeader();
      ctx.reply.Bulk(keys[result.index]);
      ctx.reply.ArrayHeader(static_cast<int64_t>(result.entries.size()));
      for (size_t e = 0; e < result.entries.size(); ++e) {
        const auto& [id, values] = result.entries[e];
        if (result.missing[e]) {
          ctx.reply.ArrayHeader(2);
          ReplyId(ctx, id);
          ctx.reply.NullArray();
          continue;
        }
        views.assign(values.begin(), values.end());
        ReplyEntry(ctx, id, views);
      }
    }
    return;
  }
  if (deadline_ms == -1) {
    ctx.reply.NullArray();
    return;
  }
  // Block. The command re-run when a stream changes has "$" replaced by the ID it stood for now,
  // and a COUNT of 1000 when none was given (Redis's XREAD_BLOCKED_DEFAULT_COUNT).
  std::vector<std::string> rerun_args(ctx.args.begin(), ctx.args.end());
  for (size_t i = 0; i < streams_count; ++i) {
    if (resolved_dollar[i]) rerun_args[streams_arg + streams_count + i] = ids[i].ToString();
  }
  if (!count_given) {
    rerun_args.insert(rerun_args.begin() + static_cast<long>(streams_arg) - 1, {"COUNT", "1000"});
  }
  BlockOnKeys(ctx, keys, deadline_ms, &rerun_args);
}

void CmdXRead(CommandContext& ctx) { ReadGeneric(ctx, false); }
void CmdXReadGroup(CommandContext& ctx) { ReadGeneric(ctx, true); }

// --- XINFO ---------------------------------------------------------------------------------------

// A group's lag, or nil when it cannot be known (Redis's streamReplyWithCGLag).
void ReplyLag(CommandContext& ctx, const Stream& stream, const StreamGroup& group) {
  const std::optional<int64_t> lag = stream.GroupLag(group);
  if (lag.has_value()) {
    ctx.reply.Integer(*lag);
  } else {
    ctx.reply.Null();
  }
}

// XINFO STREAM key [FULL [COUNT n]]
void CmdXInfoStream(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(2), Lookup::kRead, [&](KeyAccess& access) {
    if (!access.exists()) {
      ctx.reply.Error(errors::kNoSuchKey);
      return;
    }
    bool wrong_type = false;
    Stream* stream = WriteObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
    if (wrong_type) return;
    // Options are parsed after the key is found, as Redis does.
    bool full = false;
    int64_t count = 10;
    const size_t options = ctx.argc() - 3;
    if (options != 0) {
      if ((options != 1 && options != 3) || !ArgIs(ctx.arg(3), "full") ||
          (options == 3 && !ArgIs(ctx.arg(4), "count"))) {
        ReplySubcommandSyntaxError(ctx);
        return;
      }
      full = true;
      if (options == 3) {
        if (!ParseIntOrReply(ctx, ctx.arg(5), &count)) return;
        if (count < 0) count = 10;
      }
    }
    ctx.reply.MapHeader(full ? 9 : 10);
    ctx.reply.Bulk("length");
    ctx.reply.Integer(static_cast<int64_t>(stream->length()));
    ctx.reply.Bulk("radix-tree-keys");
    ctx.reply.Integer(static_cast<int64_t>(stream->node_count()));
    ctx.reply.Bulk("radix-tree-nodes");
    ctx.reply.Integer(static_cast<int64_t>(stream->RaxNodeCount()));
    ctx.reply.Bulk("last-generated-id");
    ReplyId(ctx, stream->last_id());
    ctx.reply.Bulk("max-deleted-entry-id");
    ReplyId(ctx, stream->max_deleted_id());
    ctx.reply.Bulk("entries-added");
    ctx.reply.Integer(static_cast<int64_t>(stream->entries_added()));
    ctx.reply.Bulk("recorded-first-entry-id");
    ReplyId(ctx, stream->first_id());
    auto entries_read = [&](const StreamGroup& group) {
      if (group.entries_read == StreamGroup::kInvalidEntriesRead) {
        ctx.reply.Null();
      } else {
        ctx.reply.Integer(group.entries_read);
      }
    };
    auto lag = [&](const StreamGroup& group) { ReplyLag(ctx, *stream, group); };
    if (!full) {
      ctx.reply.Bulk("groups");
      ctx.reply.Integer(static_cast<int64_t>(stream->groups().size()));
      for (const bool last : {false, true}) {
        ctx.reply.Bulk(last ? "last-entry" : "first-entry");
        bool emitted = false;
        stream->Range(StreamID::Min(), StreamID::Max(), last,
                      [&](const StreamID& id, absl::Span<const std::string_view> field_values) {
                        ReplyEntry(ctx, id, field_values);
                        emitted = true;
                        return false;
                      });
        if (!emitted) ctx.reply.Null();
      }
      return;
    }
    ctx.reply.Bulk("entries");
    ReplyRange(ctx, *stream, StreamID::Min(), StreamID::Max(), static_cast<size_t>(count), false);
    ctx.reply.Bulk("groups");
    ctx.reply.ArrayHeader(static_cast<int64_t>(stream->groups().size()));
    const auto limit = static_cast<size_t>(count);
    for (const auto& [name, group] : stream->groups()) {
      ctx.reply.MapHeader(7);
      ctx.reply.Bulk("name");
      ctx.reply.Bulk(name);
      ctx.reply.Bulk("last-delivered-id");
      ReplyId(ctx, group->last_id);
      ctx.reply.Bulk("entries-read");
      entries_read(*group);
      ctx.reply.Bulk("lag");
      lag(*group);
      ctx.reply.Bulk("pel-count");
      ctx.reply.Integer(static_cast<int64_t>(group->pel.size()));
      ctx.reply.Bulk("pending");
      const size_t shown = limit == 0 ? group->pel.size() : std::min(limit, group->pel.size());
      ctx.reply.ArrayHeader(static_cast<int64_t>(shown));
      size_t emitted = 0;
      for (const auto& [id, nack] : group->pel) {
        if (emitted++ == shown) break;
        ctx.reply.ArrayHeader(4);
        ReplyId(ctx, id);
        ctx.reply.Bulk(nack->consumer->name);
        ctx.reply.Integer(nack->delivery_time_ms);
        ctx.reply.Integer(static_cast<int64_t>(nack->delivery_count));
      }
      ctx.reply.Bulk("consumers");
      ctx.reply.ArrayHeader(static_cast<int64_t>(group->consumers.size()));
      for (const auto& [consumer_name, consumer] : group->consumers) {
        ctx.reply.MapHeader(4);
        ctx.reply.Bulk("name");
        ctx.reply.Bulk(consumer_name);
        ctx.reply.Bulk("seen-time");
        ctx.reply.Integer(consumer->seen_time_ms);
        ctx.reply.Bulk("pel-count");
        ctx.reply.Integer(static_cast<int64_t>(consumer->pel.size()));
        ctx.reply.Bulk("pending");
        const size_t mine =
            limit == 0 ? consumer->pel.size() : std::min(limit, consumer->pel.size());
        ctx.reply.ArrayHeader(static_cast<int64_t>(mine));
        size_t listed = 0;
        for (const auto& [id, nack] : consumer->pel) {
          if (listed++ == mine) break;
          ctx.reply.ArrayHeader(3);
          ReplyId(ctx, id);
          ctx.reply.Integer(nack->delivery_time_ms);
          ctx.reply.Integer(static_cast<int64_t>(nack->delivery_count));
        }
      }
    }
  });
}

// XINFO GROUPS key
void CmdXInfoGroups(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(2), Lookup::kRead, [&](KeyAccess& access) {
    if (!access.exists()) {
      ctx.reply.Error(errors::kNoSuchKey);
      return;
    }
    bool wrong_type = false;
    Stream* stream = WriteObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
    if (wrong_type) return;
    ctx.reply.ArrayHeader(static_cast<int64_t>(stream->groups().size()));
    for (const auto& [name, group] : stream->groups()) {
      ctx.reply.MapHeader(6);
      ctx.reply.Bulk("name");
      ctx.reply.Bulk(name);
      ctx.reply.Bulk("consumers");
      ctx.reply.Integer(static_cast<int64_t>(group->consumers.size()));
      ctx.reply.Bulk("pending");
      ctx.reply.Integer(static_cast<int64_t>(group->pel.size()));
      ctx.reply.Bulk("last-delivered-id");
      ReplyId(ctx, group->last_id);
      ctx.reply.Bulk("entries-read");
      if (group->entries_read == StreamGroup::kInvalidEntriesRead) {
        ctx.reply.Null();
      } else {
        ctx.reply.Integer(group->entries_read);
      }
      ctx.reply.Bulk("lag");
      ReplyLag(ctx, *stream, *group);
    }
  });
}

// XINFO CONSUMERS key group
void CmdXInfoConsumers(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(2), Lookup::kRead, [&](KeyAccess& access) {
    if (!access.exists()) {
      ctx.reply.Error(errors::kNoSuchKey);
      return;
    }
    bool wrong_type = false;
    Stream* stream = WriteObject<Stream>(ctx, access, KeyType::kStream, &wrong_type);
    if (wrong_type) return;
    StreamGroup* group = stream->FindGroup(ctx.arg(3));
    if (group == nullptr) {
      ctx.reply.Error(
          FormatText(errors::kStreamNoGroupForKey, {CText(ctx.arg(3)), CText(ctx.arg(2))}));
      return;
    }
    const int64_t now = NowMs(ctx);
    ctx.reply.ArrayHeader(static_cast<int64_t>(group->consumers.size()));
    for (const auto& [name, consumer] : group->consumers) {
      ctx.reply.MapHeader(3);
      ctx.reply.Bulk("name");
      ctx.reply.Bulk(name);
      ctx.reply.Bulk("pending");
      ctx.reply.Integer(static_cast<int64_t>(consumer->pel.size()));
      ctx.reply.Bulk("idle");
      ctx.reply.Integer(std::max<int64_t>(0, now - consumer->seen_time_ms));
    }
  });
}

void CmdXInfoHelp(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CONSUMERS <key> <groupname>",
      "    Show consumers of <groupname>.",
      "GROUPS <key>",
      "    Show the stream consumer groups.",
      "STREAM <key> [FULL [COUNT <count>]",
      "    Show information about the stream.",
      "HELP",
      "    Prints this help."};
  ctx.reply.ArrayHeader(static_cast<int64_t>(std::size(kLines)));
  for (std::string_view line : kLines) ctx.reply.SimpleString(line);
}

}  // namespace

const std::vector<CommandBinding>& StreamCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"xadd", CmdXAdd},
      {"xtrim", CmdXTrim},
      {"xrange", CmdXRange},
      {"xrevrange", CmdXRevRange},
      {"xlen", CmdXLen},
      {"xdel", CmdXDel},
      {"xsetid", CmdXSetId},
      {"xgroup", nullptr},
      {"xgroup|create", CmdXGroup},
      {"xgroup|setid", CmdXGroup},
      {"xgroup|destroy", CmdXGroup},
      {"xgroup|createconsumer", CmdXGroup},
      {"xgroup|delconsumer", CmdXGroup},
      {"xgroup|help", CmdXGroupHelp},
      {"xack", CmdXAck},
      {"xpending", CmdXPending},
      {"xclaim", CmdXClaim},
      {"xautoclaim", CmdXAutoClaim},
      {"xread", CmdXRead},
      {"xreadgroup", CmdXReadGroup},
      {"xinfo", nullptr},
      {"xinfo|stream", CmdXInfoStream},
      {"xinfo|groups", CmdXInfoGroups},
      {"xinfo|consumers", CmdXInfoConsumers},
      {"xinfo|help", CmdXInfoHelp},
  };
  return kCommands;
}

}  // namespace gigakv::server
