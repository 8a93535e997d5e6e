// String family: GET, SET (EX/PX/EXAT/PXAT/NX/XX/KEEPTTL/GET), GETSET, GETDEL, GETEX, MGET,
// MSET, MSETNX, SETNX, SETEX, PSETEX, APPEND, STRLEN, INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT,
// GETRANGE, SUBSTR, SETRANGE, LCS.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "gigakv/large_buffer.h"
#include "server/commands/args.h"
#include "server/commands/key_access.h"
#include "server/settings.h"

namespace gigakv::server {
namespace {

// Replies the string at `key` (nil if missing); false (WRONGTYPE sent) for other types.
// Uses the record as looked up: call it before the command changes the key.
bool ReplyStringOrWrongType(CommandContext& ctx, KeyAccess& access) {
  if (!access.exists()) {
    ctx.reply.Null();
    return true;
  }
  if (!FoundStringOrReply(ctx, access)) return false;
  const std::string_view value = access.found.str;
  // A big value's room in the reply buffer is mapped at once, not page by page.
  std::string& out = ctx.reply.buffer();
  if (value.size() >= kLargeBufferBytes) ReserveLarge(out, out.size() + value.size() + 32);
  ctx.reply.Bulk(value);
  return true;
}

void CmdGet(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead,
          [&](KeyAccess& access) { ReplyStringOrWrongType(ctx, access); });
}

// --- Expiry arguments shared by SET, GETEX, SETEX, PSETEX ----------------------------------

enum class ExpireUnit { kNone, kEx, kPx, kExAt, kPxAt };

// Converts an expiry argument to absolute ms with Redis's checks; replies the error otherwise.
bool ExpireArgToAbsoluteMsOrReply(CommandContext& ctx, std::string_view text, ExpireUnit unit,
                                  std::string_view command, int64_t* absolute_ms) {
  int64_t value;
  if (!ParseIntOrReply(ctx, text, &value)) return false;
  bool seconds = unit == ExpireUnit::kEx || unit == ExpireUnit::kExAt;
  auto invalid = [&] {
    ctx.reply.Error(FormatText(errors::kExpireInvalid, {command}));
    return false;
  };
  if (value <= 0 || (seconds && value > INT64_MAX / 1000)) return invalid();
  if (seconds) value *= 1000;
  if (unit == ExpireUnit::kEx || unit == ExpireUnit::kPx) {
    int64_t now = ctx.store.NowMs();
    if (value > INT64_MAX - now) return invalid();
    value += now;
  }
  *absolute_ms = value;
  return true;
}

ExpireUnit ExpireUnitOf(std::string_view arg) {
  if (ArgIs(arg, "ex")) return ExpireUnit::kEx;
  if (ArgIs(arg, "px")) return ExpireUnit::kPx;
  if (ArgIs(arg, "exat")) return ExpireUnit::kExAt;
  if (ArgIs(arg, "pxat")) return ExpireUnit::kPxAt;
  return ExpireUnit::kNone;
}

// --- SET ----------------------------------------------------------------------------------

struct SetOptions {
  enum class Condition { kAlways, kIfMissing, kIfExists } condition = Condition::kAlways;
  bool get = false;
  bool keep_ttl = false;
  bool persist = false;                 // GETEX only.
  ExpireUnit unit = ExpireUnit::kNone;  // Which expiry option was given, if any.
  std::string_view expire_arg;
  int64_t expire_ms = 0;  // Absolute; 0 = none. Filled by ResolveExpiryOrReply.
};

// Parses the options of SET (from argument 3) or GETEX (from argument 2) exactly as Redis's
// parseExtendedStringArgumentsOrReply: an expiry option conflicts with the other expiry kinds,
// KEEPTTL and PERSIST, but may repeat itself (the last one wins).
bool ParseStringOptionsOrReply(CommandContext& ctx, bool is_set, SetOptions* options) {
  for (size_t i = is_set ? 3 : 2; i < ctx.argc(); ++i) {
    std::string_view opt = ctx.arg(i);
    bool has_next = i + 1 < ctx.argc();
    ExpireUnit unit = ExpireUnitOf(opt);
    bool other_expiry = options->unit != ExpireUnit::kNone && options->unit != unit;
    if (is_set && ArgIs(opt, "nx") && options->condition != SetOptions::Condition::kIfExists) {
      options->condition = SetOptions::Condition::kIfMissing;
    } else if (is_set && ArgIs(opt, "xx") &&
               options->condition != SetOptions::Condition::kIfMissing) {
      options->condition = SetOptions::Condition::kIfExists;
    } else if (is_set && ArgIs(opt, "get")) {
      options->get = true;
    } else if (is_set && ArgIs(opt, "keepttl") && options->unit == ExpireUnit::kNone) {
      options->keep_ttl = true;
    } else if (!is_set && ArgIs(opt, "persist") && options->unit == ExpireUnit::kNone) {
      options->persist = true;
    } else if (unit != ExpireUnit::kNone && !other_expiry && !options->keep_ttl &&
               !options->persist && has_next) {
      options->unit = unit;
      options->expire_arg = ctx.arg(++i);
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

bool ResolveExpiryOrReply(CommandContext& ctx, std::string_view command, SetOptions* options) {
  if (options->unit == ExpireUnit::kNone) return true;
  return ExpireArgToAbsoluteMsOrReply(ctx, options->expire_arg, options->unit, command,
                                      &options->expire_ms);
}

// The core of SET/SETNX/SETEX/PSETEX/GETSET. Returns whether the value was stored; replies
// only for GET (old value) or WRONGTYPE. Callers reply for the other cases.
enum class SetOutcome { kStored, kNotStored, kWrongType };

SetOutcome SetGeneric(CommandContext& ctx, std::string_view key, std::string_view value,
                      const SetOptions& options) {
  // SET ... GET reads the old value as GET does (Redis's getGenericCommand: a hit or a miss).
  return WithKey(ctx, key, options.get ? Lookup::kRead : Lookup::kWrite, [&](KeyAccess& access) {
    int64_t expire_ms = options.expire_ms;
    if (access.exists()) {
      RecordView old = access.view();
      if (options.get) {
        if (!old.is_string()) {
          ctx.reply.Error(errors::kWrongType);
          return SetOutcome::kWrongType;
        }
        ctx.reply.Bulk(old.str);
      }
      if (options.keep_ttl) expire_ms = old.expire_ms;
    } else if (options.get) {
      ctx.reply.Null();
    }
    if ((options.condition == SetOptions::Condition::kIfMissing && access.exists()) ||
        (options.condition == SetOptions::Condition::kIfExists && !access.exists())) {
      return SetOutcome::kNotStored;
    }
    PutString(ctx, access, value, expire_ms);
    PublishStringSet(ctx, access, {kStringEvents, "set"});
    if (options.unit != ExpireUnit::kNone) Notify(ctx, {kGenericEvents, "expire"}, access.db, key);
    return SetOutcome::kStored;
  });
}

void CmdSet(CommandContext& ctx) {
  SetOptions options;
  if (!ParseStringOptionsOrReply(ctx, /*is_set=*/true, &options) ||
      !ResolveExpiryOrReply(ctx, "set", &options)) {
    return;
  }
  SetOutcome outcome = SetGeneric(ctx, ctx.arg(1), ctx.arg(2), options);
  if (options.get) return;  // The old value (or an error) was the reply.
  if (outcome == SetOutcome::kStored) {
    ctx.reply.Ok();
  } else if (outcome == SetOutcome::kNotStored) {
    ctx.reply.Null();
  }
}

void CmdSetNx(CommandContext& ctx) {
  SetOptions options;
  options.condition = SetOptions::Condition::kIfMissing;
  ctx.reply.Integer(SetGeneric(ctx, ctx.arg(1), ctx.arg(2), options) == SetOutcome::kStored);
}

void SetWithExpire(CommandContext& ctx, ExpireUnit unit, std::string_view command) {
  SetOptions options;
  options.unit = unit;
  if (!ExpireArgToAbsoluteMsOrReply(ctx, ctx.arg(2), unit, command, &options.expire_ms)) return;
  SetGeneric(ctx, ctx.arg(1), ctx.arg(3), options);
  ctx.reply.Ok();
}

void CmdSetEx(CommandContext& ctx) { SetWithExpire(ctx, ExpireUnit::kEx, "setex"); }
void CmdPSetEx(CommandContext& ctx) { SetWithExpire(ctx, ExpireUnit::kPx, "psetex"); }

void CmdGetSet(CommandContext& ctx) {
  SetOptions options;
  options.get = true;
  SetGeneric(ctx, ctx.arg(1), ctx.arg(2), options);
}

void CmdGetDel(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    if (!ReplyStringOrWrongType(ctx, access) || !access.exists()) return;
    access.table.Erase(access.slot);
    PublishChange(ctx, access.db, access.key, {kGenericEvents, "del"}, {"DEL", access.key});
  });
}

void CmdGetEx(CommandContext& ctx) {
  SetOptions options;
  if (!ParseStringOptionsOrReply(ctx, /*is_set=*/false, &options)) return;
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    // Like Redis: a missing key or wrong type is reported before the expiry is validated.
    if (!access.exists()) {
      ctx.reply.Null();
      return;
    }
    if (!access.view().is_string()) {
      ctx.reply.Error(errors::kWrongType);
      return;
    }
    if (!ResolveExpiryOrReply(ctx, "getex", &options)) return;
    ctx.reply.Bulk(access.view().str);
    if (options.unit != ExpireUnit::kNone) {
      if (ctx.store.IsExpired(options.expire_ms)) {
        access.table.Erase(access.slot);  // A time in the past deletes the key.
        PublishChange(ctx, access.db, access.key, {kGenericEvents, "del"}, {"DEL", access.key});
      } else {
        access.table.SetExpire(access.slot, options.expire_ms);
        PublishExpiry(ctx, access);
      }
    } else if (options.persist && access.view().expire_ms != 0) {
      access.table.SetExpire(access.slot, 0);
      PublishExpiry(ctx, access);
    }
  });
}

// --- Multi-key strings ---------------------------------------------------------------------

void CmdMGet(CommandContext& ctx) {
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argc() - 1));
  for (size_t i = 1; i < ctx.argc(); ++i) {
    WithKey(ctx, ctx.arg(i), Lookup::kRead, [&](KeyAccess& access) {
      if (access.exists() && access.view().is_string()) {
        ctx.reply.Bulk(access.view().str);
      } else {
        ctx.reply.Null();
      }
    });
  }
}

// MSET and MSETNX lock every shard involved first, so other clients see all or none of the
// keys set.
bool MSetGeneric(CommandContext& ctx, bool only_if_none_exist) {
  const size_t pairs = (ctx.argc() - 1) / 2;
  absl::InlinedVector<std::string_view, 16> keys;
  for (size_t i = 1; i < ctx.argc(); i += 2) keys.push_back(ctx.arg(i));
  absl::InlinedVector<uint32_t, 16> shard_of_key(keys.size());
  Store::MultiLock lock = ctx.store.LockKeys(keys, shard_of_key.data());
  if (only_if_none_exist) {
    for (size_t j = 0; j < pairs; ++j) {
      if (FindLockedInShard(ctx, keys[j], shard_of_key[j], Lookup::kWrite).exists()) return false;
    }
  }
  for (size_t j = 0; j < pairs; ++j) {
    KeyAccess access = FindLockedInShard(ctx, keys[j], shard_of_key[j], Lookup::kWrite);
    PutString(ctx, access, ctx.arg(2 * j + 2), 0);
    PublishStringSet(ctx, access, {kStringEvents, "set"});
  }
  return true;
}

void CmdMSet(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) {
    ReplyWrongArity(ctx.reply, "mset");
    return;
  }
  MSetGeneric(ctx, false);
  ctx.reply.Ok();
}

void CmdMSetNx(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) {
    ReplyWrongArity(ctx.reply, "msetnx");
    return;
  }
  ctx.reply.Integer(MSetGeneric(ctx, true) ? 1 : 0);
}

// --- In-place edits --------------------------------------------------------------------------

int64_t MaxStringSize(CommandContext& ctx) { return ctx.settings().proto_max_bulk_len.get(); }

// Changes the large (external) string at `access` in place with `edit` (SETRANGE, APPEND):
// neither copied nor moved, as Redis changes its sds. Returns the new length.
size_t EditLargeString(CommandContext& ctx, KeyAccess& access,
                       absl::FunctionRef<void(std::string&)> edit) {
  size_t length = 0;
  access.table.EditExternal(access.slot, [&](std::string& stored) {
    edit(stored);
    length = stored.size();
  });
  access.table.SetAccess(access.slot, OverwriteStamp(ctx, access));
  return length;
}

// APPEND replays as APPEND: logging the whole value would make repeated appends quadratic.
void PublishAppend(CommandContext& ctx, KeyAccess& access) {
  PublishChange(ctx, access.db, access.key, {kStringEvents, "append"},
                {"APPEND", access.key, ctx.arg(2)});
}

void CmdAppend(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    std::string value;
    int64_t expire_ms = 0;
    if (access.exists()) {
      if (!IsStringOrReply(ctx, access)) return;
      RecordView view = access.view();
      if (static_cast<int64_t>(view.str.size() + ctx.arg(2).size()) > MaxStringSize(ctx)) {
        ctx.reply.Error(errors::kStringTooLong);
        return;
      }
      if (view.kind == ValueKind::kStringExternal) {
        // Amortized O(appended bytes), as Redis's sdscatlen.
        const size_t length = EditLargeString(ctx, access, [&](std::string& stored) {
          ReserveLarge(stored, stored.size() + ctx.arg(2).size());  // Amortized.
          stored.append(ctx.arg(2));
        });
        PublishAppend(ctx, access);
        ctx.reply.Integer(static_cast<int64_t>(length));
        return;
      }
      ReserveLarge(value, view.str.size() + ctx.arg(2).size());
      value.assign(view.str);
      expire_ms = view.expire_ms;
    }
    value.append(ctx.arg(2));
    const auto length = static_cast<int64_t>(value.size());
    // Appended strings are "raw" in Redis, whatever their content.
    PutOwnedString(ctx, access, std::move(value), expire_ms, /*force_raw=*/access.exists());
    PublishAppend(ctx, access);
    ctx.reply.Integer(length);
  });
}

void CmdStrlen(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    std::string_view value;
    if (ReadStringOrReply(ctx, access, 0, &value)) {
      ctx.reply.Integer(static_cast<int64_t>(value.size()));
    }
  });
}

void CmdGetRange(CommandContext& ctx) {
  int64_t start, end;
  if (!ParseIntOrReply(ctx, ctx.arg(2), &start) || !ParseIntOrReply(ctx, ctx.arg(3), &end)) return;
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    if (!access.exists()) {
      ctx.reply.Bulk("");
      return;
    }
    if (!IsStringOrReply(ctx, access)) return;
    RecordView view = access.view();
    int64_t length = static_cast<int64_t>(view.str.size());
    if (start < 0 && end < 0 && start > end) {
      ctx.reply.Bulk("");
      return;
    }
    if (start < 0) start = length + start;
    if (end < 0) end = length + end;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= length) end = length - 1;
    if (length == 0 || start > end) {
      ctx.reply.Bulk("");
      return;
    }
    ctx.reply.Bulk(
        view.str.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1)));
  });
}

// Writes `patch` at `offset`, growing `value` with zero bytes first when it is shorter.
void PatchString(std::string& value, size_t offset, std::string_view patch) {
  const size_t end = offset + patch.size();
  if (value.size() < end) {
    ReserveLarge(value, end);
    value.resize(end, '\0');
  }
  value.replace(offset, patch.size(), patch);
}

void PublishSetRange(CommandContext& ctx, KeyAccess& access, std::string_view patch) {
  PublishChange(ctx, access.db, access.key, {kStringEvents, "setrange"},
                {"SETRANGE", access.key, ctx.arg(2), patch});
}

void CmdSetRange(CommandContext& ctx) {
  int64_t offset;
  if (!ParseIntOrReply(ctx, ctx.arg(2), &offset)) return;
  if (offset < 0) {
    ctx.reply.Error(errors::kOffsetOutOfRange);
    return;
  }
  std::string_view patch = ctx.arg(3);
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    std::string value;
    int64_t expire_ms = 0;
    if (access.exists()) {
      if (!IsStringOrReply(ctx, access)) return;
      RecordView view = access.view();
      if (patch.empty()) {
        ctx.reply.Integer(static_cast<int64_t>(view.str.size()));
        return;
      }
      if (offset > MaxStringSize(ctx) - static_cast<int64_t>(patch.size())) {
        ctx.reply.Error(errors::kStringTooLong);
        return;
      }
      if (view.kind == ValueKind::kStringExternal) {
        // O(patch) plus the zeroes of any growth, as Redis.
        const size_t length = EditLargeString(ctx, access, [&](std::string& stored) {
          PatchString(stored, static_cast<size_t>(offset), patch);
        });
        PublishSetRange(ctx, access, patch);
        ctx.reply.Integer(static_cast<int64_t>(length));
        return;
      }
      value.assign(view.str);
      expire_ms = view.expire_ms;
    } else if (patch.empty()) {
      ctx.reply.Integer(0);  // Nothing to write: the key is not created.
      return;
    } else if (offset > MaxStringSize(ctx) - static_cast<int64_t>(patch.size())) {
      ctx.reply.Error(errors::kStringTooLong);
      return;
    }
    PatchString(value, static_cast<size_t>(offset), patch);
    const auto length = static_cast<int64_t>(value.size());
    PutOwnedString(ctx, access, std::move(value), expire_ms, /*force_raw=*/true);
    PublishSetRange(ctx, access, patch);
    ctx.reply.Integer(length);
  });
}

// --- Counters ----------------------------------------------------------------------------------

// Reads the number stored at the key for a counter update into *current (left as it is when the
// key is missing); replies WRONGTYPE or `not_a_number` and returns false when it cannot be
// used. The record stays readable as access.found until the command changes it.
template <typename Number>
bool ReadNumberOrReply(CommandContext& ctx, KeyAccess& access,
                       bool (*parse)(std::string_view, Number*), std::string_view not_a_number,
                       Number* current) {
  if (!access.exists()) return true;
  if (!FoundStringOrReply(ctx, access)) return false;
  if (!parse(access.found.str, current)) {
    ctx.reply.Error(not_a_number);
    return false;
  }
  return true;
}

// INCR of a non-negative integer not ending in 9, or DECR of a positive one not ending in 0,
// changes only its last digit: the new digits, written into `buffer` (18 bytes), straight from
// the stored text with neither parsing nor formatting. Empty in every other case (the text has
// at most 18 digits, so no overflow is possible here).
std::string_view LastDigitStepped(const KeyAccess& access, int64_t delta, char* buffer) {
  if (!access.exists() || access.found.kind != ValueKind::kStringInt) return {};
  std::string_view old = access.found.str;
  if (old.empty() || old.size() > 18 || old[0] == '-') return {};
  char& last = buffer[old.size() - 1];
  if (delta == 1 && old.back() != '9') {
    std::memcpy(buffer, old.data(), old.size());
    ++last;
  } else if (delta == -1 && old.back() != '0') {  // Positive: "0" ends in 0; "1" becomes "0".
    std::memcpy(buffer, old.data(), old.size());
    --last;
  } else {
    return {};
  }
  return std::string_view(buffer, old.size());
}

// INCR/DECR/INCRBY/DECRBY: adds `delta` to the integer at `key` (0 if missing), keeping its TTL.
void IncrementBy(CommandContext& ctx, int64_t delta) {
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    char digits[24];
    std::string_view text = LastDigitStepped(access, delta, digits);
    if (text.empty()) {
      int64_t current = 0;
      if (!ReadNumberOrReply(ctx, access, ParseInt64, errors::kNotInteger, &current)) return;
      if ((delta < 0 && current < 0 && delta < INT64_MIN - current) ||
          (delta > 0 && current > 0 && delta > INT64_MAX - current)) {
        ctx.reply.Error(errors::kOverflow);
        return;
      }
      text = std::string_view(
          digits,
          static_cast<size_t>(std::to_chars(digits, digits + sizeof(digits), current + delta).ptr -
                              digits));
    }
    // The record as found, read in place (a copy of it stalls on the fields just written).
    const bool existed = access.exists();
    const RecordView& old = access.found;
    // Most increments keep the number of digits: rewrite them in place, as Redis updates an
    // int-encoded object in place.
    if (existed && old.kind == ValueKind::kStringInt && old.str.size() == text.size()) {
      access.table.OverwriteInline(access.slot, text);
      access.table.SetAccess(access.slot, OverwriteStamp(ctx, access));
    } else {
      ValueSpec spec;
      spec.kind = ValueKind::kStringInt;
      spec.bytes = text;
      access.slot = access.table.PutAt(access.slot, access.key, access.hash, spec,
                                       existed ? old.expire_ms : 0, OverwriteStamp(ctx, access));
      if (!existed) NotifyNewKey(ctx, access.db, access.key);
    }
    PublishStringSet(ctx, access, {kStringEvents, "incrby"});
    ctx.reply.IntegerText(text);  // The canonical digits just stored.
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

void CmdIncrByFloat(CommandContext& ctx) {
  long double increment;
  if (!ParseLongDouble(ctx.arg(2), &increment)) {
    ctx.reply.Error(errors::kNotFloat);
    return;
  }
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    long double current = 0;
    if (!ReadNumberOrReply(ctx, access, ParseLongDouble, errors::kNotFloat, &current)) {
      return;
    }
    long double result = current + increment;
    std::string text;
    if (std::isnan(result) || std::isinf(result) || !FormatLongDouble(result, &text)) {
      ctx.reply.Error(errors::kIncrFloatNanOrInf);
      return;
    }
    // Redis stores the result as a string object (embstr), never with the int encoding.
    ValueSpec spec;
    spec.kind =
        text.size() <= StringValue::kEmbstrMax ? ValueKind::kStringEmbstr : ValueKind::kStringRaw;
    spec.bytes = text;
    int64_t expire_ms = access.exists() ? access.found.expire_ms : 0;  // Kept, as in Redis.
    if (!access.exists()) NotifyNewKey(ctx, access.db, access.key);
    access.slot = access.table.PutAt(access.slot, access.key, access.hash, spec, expire_ms,
                                     OverwriteStamp(ctx, access));
    PublishStringSet(ctx, access, {kStringEvents, "incrbyfloat"});
    ctx.reply.Bulk(text);
  });
}

// --- LCS ---------------------------------------------------------------------------------------

void CmdLcs(CommandContext& ctx) {
  // Read both strings under the locks of both shards. As in Redis, both keys are looked up (and
  // counted, and touched) before their types are checked, and both before the options are read:
  // a syntax error still counts the lookups, and WRONGTYPE wins over a bad option.
  std::string a, b;
  {
    Store::MultiLock lock = ctx.store.LockKeys({ctx.arg(1), ctx.arg(2)});
    bool wrong_type = false;
    for (int which = 0; which < 2; ++which) {
      KeyAccess access = FindLocked(ctx, ctx.arg(1 + static_cast<size_t>(which)), Lookup::kRead);
      if (!access.exists()) continue;
      RecordView view = access.view();
      if (view.is_string()) {
        (which == 0 ? a : b).assign(view.str);
      } else {
        wrong_type = true;
      }
    }
    if (wrong_type) {
      ctx.reply.Error("ERR The specified keys must contain string values");
      return;
    }
  }
  bool want_len = false, want_idx = false, with_match_len = false;
  int64_t min_match_len = 0;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    if (ArgIs(ctx.arg(i), "len")) {
      want_len = true;
    } else if (ArgIs(ctx.arg(i), "idx")) {
      want_idx = true;
    } else if (ArgIs(ctx.arg(i), "withmatchlen")) {
      with_match_len = true;
    } else if (ArgIs(ctx.arg(i), "minmatchlen") && i + 1 < ctx.argc()) {
      if (!ParseIntOrReply(ctx, ctx.arg(++i), &min_match_len)) return;
      if (min_match_len < 0) min_match_len = 0;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if (want_len && want_idx) {
    ctx.reply.Error("ERR If you want both the length and indexes, please just use IDX.");
    return;
  }
  // Classic O(n*m) dynamic programming table, as Redis does (uint32 cells).
  size_t n = a.size(), m = b.size();
  if ((n + 1) * (m + 1) > (1ULL << 32) / sizeof(uint32_t)) {
    ctx.reply.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    return;
  }
  std::vector<uint32_t> table((n + 1) * (m + 1), 0);
  auto cell = [&](size_t i, size_t j) -> uint32_t& { return table[i * (m + 1) + j]; };
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      cell(i, j) =
          a[i - 1] == b[j - 1] ? cell(i - 1, j - 1) + 1 : std::max(cell(i - 1, j), cell(i, j - 1));
    }
  }
  uint32_t length = cell(n, m);
  if (want_len) {
    ctx.reply.Integer(length);
    return;
  }
  // Walk back from the end, collecting the common string and the matching ranges.
  std::string common(length, '\0');
  struct Range {
    size_t a_start, a_end, b_start, b_end;
  };
  std::vector<Range> matches;
  size_t i = n, j = m, idx = length;
  bool in_range = false;
  Range current{};
  auto flush = [&] {
    if (in_range && static_cast<int64_t>(current.a_end - current.a_start + 1) >= min_match_len) {
      matches.push_back(current);
    }
    in_range = false;
  };
  while (i > 0 && j > 0) {
    if (a[i - 1] == b[j - 1]) {
      common[--idx] = a[i - 1];
      if (in_range && current.a_start == i && current.b_start == j) {
        current.a_start = i - 1;
        current.b_start = j - 1;
      } else {
        flush();
        current = Range{i - 1, i - 1, j - 1, j - 1};
        in_range = true;
      }
      --i;
      --j;
    } else if (cell(i - 1, j) > cell(i, j - 1)) {
      flush();
      --i;
    } else {
      flush();
      --j;
    }
  }
  flush();
  if (!want_idx) {
    ctx.reply.Bulk(common);
    return;
  }
  ctx.reply.MapHeader(2);
  ctx.reply.Bulk("matches");
  ctx.reply.ArrayHeader(static_cast<int64_t>(matches.size()));
  for (const Range& range : matches) {
    ctx.reply.ArrayHeader(with_match_len ? 3 : 2);
    ctx.reply.ArrayHeader(2);
    ctx.reply.Integer(static_cast<int64_t>(range.a_start));
    ctx.reply.Integer(static_cast<int64_t>(range.a_end));
    ctx.reply.ArrayHeader(2);
    ctx.reply.Integer(static_cast<int64_t>(range.b_start));
    ctx.reply.Integer(static_cast<int64_t>(range.b_end));
    if (with_match_len) ctx.reply.Integer(static_cast<int64_t>(range.a_end - range.a_start + 1));
  }
  ctx.reply.Bulk("len");
  ctx.reply.Integer(length);
}

}  // namespace

const std::vector<CommandBinding>& StringCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"get", CmdGet},
      {"set", CmdSet, kBoundedWork},
      {"setnx", CmdSetNx},
      {"setex", CmdSetEx, kBoundedWork},
      {"psetex", CmdPSetEx, kBoundedWork},
      {"getset", CmdGetSet},
      {"getdel", CmdGetDel},
      {"getex", CmdGetEx},
      {"mget", CmdMGet},
      {"mset", CmdMSet, kBoundedWork},
      {"msetnx", CmdMSetNx, kBoundedWork},
      {"append", CmdAppend},
      {"strlen", CmdStrlen},
      {"getrange", CmdGetRange},
      {"substr", CmdGetRange},
      {"setrange", CmdSetRange},
      {"incr", CmdIncr},
      {"decr", CmdDecr},
      {"incrby", CmdIncrBy},
      {"decrby", CmdDecrBy},
      {"incrbyfloat", CmdIncrByFloat},
      {"lcs", CmdLcs},
  };
  return kCommands;
}

}  // namespace gigakv::server
