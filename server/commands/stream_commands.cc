// Stream family (Redis's t_stream.c): XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID.
//
// The structure is core/types/stream.h (Redis's node layout). Handlers parse as Redis does, in
// its order, so the first error is Redis's. Effects are deterministic: XADD publishes the ID it
// chose, and any trimming as "MAXLEN = <length after>" (a trim always removes a prefix of the
// entries, so the resulting length says exactly what went); XTRIM publishes the same form.
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
#include "server/commands/args.h"
#include "server/commands/collection_access.h"
#include "server/commands/key_access.h"
#include "server/settings.h"

namespace gigakv::server {
namespace {

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

// Redis's streamGenericParseIDOrReply: "-", "+" (unless `strict`), "ms", "ms-seq", and with
// `seq_given` "ms-*" (seq_given set false). A missing seq is `missing_seq`. The text is read as a
// C string (up to a NUL), at most 127 bytes.
bool ParseIdOrReply(CommandContext& ctx, std::string_view arg, StreamID* id, uint64_t missing_seq,
                    bool strict, bool* seq_given) {
  auto invalid = [&] {
    ctx.reply.Error(errors::kStreamInvalidId);
    return false;
  };
  if (arg.size() > 127) return invalid();
  std::string text(arg.substr(0, arg.find('\0')));
  if (strict && (text == "-" || text == "+")) return invalid();
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
  if (!ParseUnsigned(text.substr(0, dash), &ms)) return invalid();
  if (dash != std::string::npos) {
    const std::string seq_text = text.substr(dash + 1);
    if (seq_given != nullptr && seq_text == "*") {
      seq = 0;
      *seq_given = false;
    } else if (!ParseUnsigned(seq_text, &seq)) {
      return invalid();
    }
  }
  *id = {ms, seq};
  return true;
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
    // The effect states the whole resulting metadata.
    PublishChange(
        ctx, access.db, access.key, {kStreamEvents, "xsetid"},
        {"XSETID", access.key, id.ToString(), "ENTRIESADDED", absl::StrCat(stream->entries_added()),
         "MAXDELETEDID", stream->max_deleted_id().ToString()});
  });
}

}  // namespace

const std::vector<CommandBinding>& StreamCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"xadd", CmdXAdd}, {"xtrim", CmdXTrim}, {"xrange", CmdXRange}, {"xrevrange", CmdXRevRange},
      {"xlen", CmdXLen}, {"xdel", CmdXDel},   {"xsetid", CmdXSetId},
  };
  return kCommands;
}

}  // namespace gigakv::server
