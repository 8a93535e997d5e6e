// Bitmap family: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO.
//
// Bitmaps are plain strings (core/types/bitmap.h does the bit work). Like Redis, every command
// that writes leaves the value with the "raw" encoding and keeps the key's TTL, except BITOP,
// which replaces its destination (no TTL) or deletes it when the result is empty. Argument checks
// and lookups happen in Redis 7.0's order, so the same error wins when several apply.
//
// Effects: writes log themselves as commands (SETBIT, BITFIELD with its write operations, BITOP)
// rather than the resulting value, which can be 512 MB. They depend on nothing but the state, so
// replaying them in order rebuilds the same bitmaps; BITOP logs while it holds the locks of every
// key it reads, so its sources' effects sit on the right side of it in the log.
#include <algorithm>
#include <memory>
#include <string>

#include "core/types/bitmap.h"
#include "server/commands/args.h"
#include "server/commands/key_access.h"
#include "server/settings.h"

namespace gigakv::server {
namespace {

// Parses a bit offset as Redis's getBitOffsetFromArgument: strict integer, at least 0, and its byte
// below proto-max-bulk-len (so 2^32 - 1 by default). With `hash` (BITFIELD), "#N" means N * bits.
bool ParseBitOffsetOrReply(CommandContext& ctx, std::string_view text, bool hash, int bits,
                           uint64_t* offset) {
  bool use_hash = hash && bits > 0 && !text.empty() && text[0] == '#';
  int64_t value;
  if (!ParseInt64(text.substr(use_hash ? 1 : 0), &value)) {
    ctx.reply.Error(errors::kBitOffset);
    return false;
  }
  // Redis multiplies as long long; a product past 2^63 wraps there (and is then usually caught
  // as negative). Wrap the same way so huge "#N" offsets give the same reply.
  if (use_hash) {
    value = static_cast<int64_t>(static_cast<uint64_t>(value) * static_cast<uint64_t>(bits));
  }
  if (value < 0 || (value >> 3) >= ctx.settings().proto_max_bulk_len.get()) {
    ctx.reply.Error(errors::kBitOffset);
    return false;
  }
  *offset = static_cast<uint64_t>(value);
  return true;
}

// BIT or BYTE as the unit of a BITCOUNT/BITPOS range; false (syntax error sent) otherwise.
bool ParseRangeUnitOrReply(CommandContext& ctx, std::string_view text, bool* is_bit) {
  if (ArgIs(text, "bit")) {
    *is_bit = true;
  } else if (ArgIs(text, "byte")) {
    *is_bit = false;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  return true;
}

// --- SETBIT / GETBIT -------------------------------------------------------------------------

void CmdSetBit(CommandContext& ctx) {
  uint64_t offset;
  if (!ParseBitOffsetOrReply(ctx, ctx.arg(2), /*hash=*/false, 0, &offset)) return;
  int64_t on;
  if (!ParseInt64(ctx.arg(3), &on) || (on & ~int64_t{1}) != 0) {
    ctx.reply.Error(errors::kBitValue);
    return;
  }
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    int64_t expire_ms = 0;
    uint16_t stamp = NewStamp(ctx);
    std::unique_ptr<std::string> value;
    if (access.exists()) {
      if (!IsStringOrReply(ctx, access)) return;
      RecordView view = access.view();
      // Nothing to write when the raw value already holds the bit (int and embstr values still
      // become raw, as Redis unshares them before looking).
      bool raw = view.kind == ValueKind::kStringRaw || view.kind == ValueKind::kStringExternal;
      if (raw && BytesForBit(offset) <= view.str.size() && GetBit(view.str, offset) == (on != 0)) {
        ctx.reply.Integer(on);
        return;
      }
      expire_ms = view.expire_ms;
      stamp = OverwriteStamp(ctx, access);
      value = TakeString(access);
    } else {
      value = std::make_unique<std::string>();
      NotifyNewKey(ctx, access.db, access.key);
    }
    size_t old_size = value->size();
    if (value->size() < BytesForBit(offset)) value->resize(BytesForBit(offset), '\0');
    bool old_bit = SetBit(*value, offset, on != 0);
    bool changed = value->size() != old_size || old_bit != (on != 0);
    StoreModified(access, std::move(value), expire_ms, stamp);
    if (changed) {  // Unchanged bits are no change for the log or WATCH, as in Redis.
      PublishChange(ctx, access.db, access.key, {kStringEvents, "setbit"},
                    {"SETBIT", access.key, ctx.arg(2), ctx.arg(3)});
    }
    ctx.reply.Integer(old_bit ? 1 : 0);
  });
}

void CmdGetBit(CommandContext& ctx) {
  uint64_t offset;
  if (!ParseBitOffsetOrReply(ctx, ctx.arg(2), /*hash=*/false, 0, &offset)) return;
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    std::string_view str;
    if (!ReadStringOrReply(ctx, access, 0, &str)) return;
    ctx.reply.Integer(GetBit(str, offset) ? 1 : 0);
  });
}

// --- BITCOUNT / BITPOS -----------------------------------------------------------------------

// Inclusive bit bounds of a normalized range in BIT or BYTE units.
uint64_t FirstBitOf(int64_t start, bool is_bit) {
  return is_bit ? static_cast<uint64_t>(start) : static_cast<uint64_t>(start) * 8;
}
uint64_t LastBitOf(int64_t end, bool is_bit) {
  return is_bit ? static_cast<uint64_t>(end) : static_cast<uint64_t>(end) * 8 + 7;
}

// BITCOUNT key [start end [BYTE|BIT]]. Redis 7.0 looks the key up before parsing the range, so a
// missing key answers 0 whatever the arguments.
void CmdBitCount(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    std::string_view str;
    if (!ReadStringOrReply(ctx, access, 0, &str)) return;
    if (ctx.argc() == 2) {
      ctx.reply.Integer(static_cast<int64_t>(CountBits(str)));
      return;
    }
    if (ctx.argc() != 4 && ctx.argc() != 5) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
    int64_t start, end;
    if (!ParseIntOrReply(ctx, ctx.arg(2), &start) || !ParseIntOrReply(ctx, ctx.arg(3), &end)) {
      return;
    }
    // Checked before the unit, as Redis does: "-1 -2 FOO" answers 0, not a syntax error.
    if (start < 0 && end < 0 && start > end) {
      ctx.reply.Integer(0);
      return;
    }
    bool is_bit = false;
    if (ctx.argc() == 5 && !ParseRangeUnitOrReply(ctx, ctx.arg(4), &is_bit)) return;
    int64_t length = static_cast<int64_t>(str.size()) * (is_bit ? 8 : 1);
    if (!NormalizeRange(length, &start, &end)) {
      ctx.reply.Integer(0);
      return;
    }
    ctx.reply.Integer(
        static_cast<int64_t>(CountBits(str, FirstBitOf(start, is_bit), LastBitOf(end, is_bit))));
  });
}

// BITPOS key bit [start [end [BYTE|BIT]]].
void CmdBitPos(CommandContext& ctx) {
  int64_t bit;
  if (!ParseIntOrReply(ctx, ctx.arg(2), &bit)) return;
  if (bit != 0 && bit != 1) {
    ctx.reply.Error(errors::kBitArgument);
    return;
  }
  WithKey(ctx, ctx.arg(1), Lookup::kRead, [&](KeyAccess& access) {
    // A missing key is an endless run of zeros.
    std::string_view str;
    if (!ReadStringOrReply(ctx, access, bit ? -1 : 0, &str)) return;
    int64_t start = 0;
    int64_t end = static_cast<int64_t>(str.size()) - 1;
    bool is_bit = false, end_given = false;
    if (ctx.argc() >= 4 && ctx.argc() <= 6) {
      if (!ParseIntOrReply(ctx, ctx.arg(3), &start)) return;
      // Redis reads the unit before the end, so "1 x FOO" is a syntax error.
      if (ctx.argc() == 6 && !ParseRangeUnitOrReply(ctx, ctx.arg(5), &is_bit)) return;
      if (ctx.argc() >= 5) {
        if (!ParseIntOrReply(ctx, ctx.arg(4), &end)) return;
        end_given = true;
      }
    } else if (ctx.argc() != 3) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
    int64_t length = static_cast<int64_t>(str.size()) * (is_bit ? 8 : 1);
    if (!NormalizeRange(length, &start, &end)) {
      ctx.reply.Integer(-1);  // An empty range holds neither a 0 nor a 1.
      return;
    }
    uint64_t last = LastBitOf(end, is_bit);
    int64_t pos = FindBit(str, bit != 0, FirstBitOf(start, is_bit), last);
    // Without an explicit end the string counts as zero-padded on the right, so a clear bit is
    // always found: the first one past the string.
    if (pos < 0 && bit == 0 && !end_given) pos = static_cast<int64_t>(last + 1);
    ctx.reply.Integer(pos);
  });
}

// --- BITOP -------------------------------------------------------------------------------------

void CmdBitOp(CommandContext& ctx) {
  std::string_view name = ctx.arg(1);
  BitOp op;
  std::string_view op_name;  // Upper case, for the log.
  if (ArgIs(name, "and")) {
    op = BitOp::kAnd;
    op_name = "AND";
  } else if (ArgIs(name, "or")) {
    op = BitOp::kOr;
    op_name = "OR";
  } else if (ArgIs(name, "xor")) {
    op = BitOp::kXor;
    op_name = "XOR";
  } else if (ArgIs(name, "not")) {
    op = BitOp::kNot;
    op_name = "NOT";
  } else {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (op == BitOp::kNot && ctx.argc() != 4) {
    ctx.reply.Error(errors::kBitopNot);
    return;
  }
  std::vector<std::string_view> keys(ctx.args.begin() + 2, ctx.args.end());
  Store::MultiLock lock = ctx.store.LockKeys(keys);
  size_t source_count = ctx.argc() - 3;
  // First pass: lazy expiry and type checks, in argument order (the first WRONGTYPE wins).
  std::vector<bool> present(source_count, false);
  for (size_t i = 0; i < source_count; ++i) {
    KeyAccess access = FindLocked(ctx, ctx.arg(3 + i), Lookup::kRead);
    if (!access.exists()) continue;
    if (!access.view().is_string()) {
      ctx.reply.Error(errors::kWrongType);
      return;
    }
    present[i] = true;
  }
  // Second pass: views of the values. Lookups here must not delete anything (a key expiring
  // between the passes would move or free records other views point into), so they use the
  // table directly; a key live in the first pass counts as live for the whole command.
  std::vector<std::string_view> sources(source_count);
  int db = ctx.db();
  for (size_t i = 0; i < source_count; ++i) {
    if (!present[i]) continue;
    std::string_view key = ctx.arg(3 + i);
    KeyTable& table = ctx.store.shard(ctx.store.ShardIndex(key)).Table(db);
    KeyTable::Slot slot = table.Find(key, ctx.store.Hash(key));
    sources[i] = table.View(slot).str;
  }
  auto result = std::make_unique<std::string>(BitOperation(op, sources));
  int64_t length = static_cast<int64_t>(result->size());
  // The views are dead from here on: the destination lookup may expire or overwrite records.
  KeyAccess dest = FindLocked(ctx, ctx.arg(2), Lookup::kWrite);
  if (length > 0) {
    if (!dest.exists()) NotifyNewKey(ctx, dest.db, dest.key);
    StoreModified(dest, std::move(result), /*expire_ms=*/0, OverwriteStamp(ctx, dest));
    std::vector<std::string> effect;
    if (WantsEffects(ctx)) {
      effect = {"BITOP", std::string(op_name)};
      for (size_t i = 2; i < ctx.argc(); ++i) effect.emplace_back(ctx.arg(i));
    }
    PublishBuiltChange(ctx, dest.db, dest.key, {kStringEvents, "set"}, effect);
  } else if (dest.exists()) {
    dest.table.Erase(dest.slot);  // An empty result deletes the destination.
    PublishChange(ctx, dest.db, dest.key, {kGenericEvents, "del"}, {"DEL", dest.key});
  }
  ctx.reply.Integer(length);
}

// --- BITFIELD / BITFIELD_RO ------------------------------------------------------------------

struct BitfieldOp {
  enum class Kind { kGet, kSet, kIncrBy } kind;
  BitfieldType type;
  uint64_t offset;
  int64_t operand;  // SET value or INCRBY increment.
  BitfieldOverflow overflow;
  size_t arg_index;  // Where the subcommand's name is in the arguments (for the log).
};

// Parses every subcommand first, as Redis does: any error means nothing runs.
bool ParseBitfieldOpsOrReply(CommandContext& ctx, std::vector<BitfieldOp>* ops,
                             uint64_t* highest_write_bit, bool* read_only) {
  BitfieldOverflow overflow = BitfieldOverflow::kWrap;
  *read_only = true;
  *highest_write_bit = 0;
  for (size_t j = 2; j < ctx.argc(); ++j) {
    size_t remaining = ctx.argc() - j - 1;
    std::string_view sub = ctx.arg(j);
    BitfieldOp op{};
    if (ArgIs(sub, "get") && remaining >= 2) {
      op.kind = BitfieldOp::Kind::kGet;
    } else if (ArgIs(sub, "set") && remaining >= 3) {
      op.kind = BitfieldOp::Kind::kSet;
    } else if (ArgIs(sub, "incrby") && remaining >= 3) {
      op.kind = BitfieldOp::Kind::kIncrBy;
    } else if (ArgIs(sub, "overflow") && remaining >= 1) {
      std::string_view policy = ctx.arg(++j);
      if (ArgIs(policy, "wrap")) {
        overflow = BitfieldOverflow::kWrap;
      } else if (ArgIs(policy, "sat")) {
        overflow = BitfieldOverflow::kSat;
      } else if (ArgIs(policy, "fail")) {
        overflow = BitfieldOverflow::kFail;
      } else {
        ctx.reply.Error(errors::kOverflowType);
        return false;
      }
      continue;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
    if (!ParseBitfieldType(ctx.arg(j + 1), &op.type)) {
      ctx.reply.Error(errors::kBitfieldType);
      return false;
    }
    if (!ParseBitOffsetOrReply(ctx, ctx.arg(j + 2), /*hash=*/true, op.type.bits, &op.offset)) {
      return false;
    }
    if (op.kind != BitfieldOp::Kind::kGet) {
      *read_only = false;
      *highest_write_bit =
          std::max(*highest_write_bit, op.offset + static_cast<uint64_t>(op.type.bits) - 1);
      if (!ParseIntOrReply(ctx, ctx.arg(j + 3), &op.operand)) return false;
    }
    op.overflow = overflow;
    op.arg_index = j;
    ops->push_back(op);
    j += op.kind == BitfieldOp::Kind::kGet ? 2 : 3;
  }
  return true;
}

void ReplyBitfieldGet(CommandContext& ctx, std::string_view bytes, const BitfieldOp& op) {
  if (op.type.is_signed) {
    ctx.reply.Integer(GetSignedField(bytes, op.offset, op.type.bits));
  } else {
    ctx.reply.Integer(static_cast<int64_t>(GetUnsignedField(bytes, op.offset, op.type.bits)));
  }
}

// Publishes BITFIELD key [OVERFLOW policy SET|INCRBY type offset operand]...: the write operations
// only (all of them: even those that fail decide how far the key is padded), each with the
// overflow policy it ran under. Counts `changes` changes.
void PublishBitfieldWrites(CommandContext& ctx, const KeyAccess& access,
                           const std::vector<BitfieldOp>& ops, uint64_t changes) {
  // Padding alone fails no WATCH: Redis signals only writes that changed bits.
  const bool touches_watchers = changes > 0;
  const Event event = changes > 0 ? Event{kStringEvents, "setbit"} : kNoEvent;
  if (!WantsEffects(ctx)) {
    PublishBuiltChange(ctx, access.db, access.key, event, {}, changes, touches_watchers);
    return;
  }
  std::vector<std::string> effect = {"BITFIELD", std::string(access.key)};
  for (const BitfieldOp& op : ops) {
    if (op.kind == BitfieldOp::Kind::kGet) continue;
    effect.emplace_back("OVERFLOW");
    effect.emplace_back(op.overflow == BitfieldOverflow::kWrap  ? "WRAP"
                        : op.overflow == BitfieldOverflow::kSat ? "SAT"
                                                                : "FAIL");
    effect.emplace_back(op.kind == BitfieldOp::Kind::kSet ? "SET" : "INCRBY");
    for (size_t i = 1; i <= 3; ++i) effect.emplace_back(ctx.arg(op.arg_index + i));
  }
  PublishBuiltChange(ctx, access.db, access.key, event, effect, changes, touches_watchers);
}

void BitfieldGeneric(CommandContext& ctx, bool only_reads_allowed) {
  std::vector<BitfieldOp> ops;
  uint64_t highest_write_bit;
  bool read_only;
  if (!ParseBitfieldOpsOrReply(ctx, &ops, &highest_write_bit, &read_only)) return;
  if (!read_only && only_reads_allowed) {
    ctx.reply.Error(errors::kBitfieldRo);
    return;
  }
  // Like Redis: a read lookup when every operation is a GET, a write lookup otherwise.
  WithKey(ctx, ctx.arg(1), read_only ? Lookup::kRead : Lookup::kWrite, [&](KeyAccess& access) {
    if (read_only) {
      std::string_view bytes;
      if (access.exists()) {
        if (!IsStringOrReply(ctx, access)) return;
        RecordView view = access.view();
        bytes = view.str;
      }
      ctx.reply.ArrayHeader(static_cast<int64_t>(ops.size()));
      for (const BitfieldOp& op : ops) ReplyBitfieldGet(ctx, bytes, op);
      return;
    }
    // Writes: like Redis, the key is created (or padded) up to the farthest bit any write may
    // touch before the operations run, even those that then fail with OVERFLOW FAIL.
    int64_t expire_ms = 0;
    uint16_t stamp = NewStamp(ctx);
    std::unique_ptr<std::string> value;
    if (access.exists()) {
      if (!IsStringOrReply(ctx, access)) return;
      RecordView view = access.view();
      expire_ms = view.expire_ms;
      stamp = OverwriteStamp(ctx, access);
      value = TakeString(access);
    } else {
      value = std::make_unique<std::string>();
      NotifyNewKey(ctx, access.db, access.key);
    }
    bool grown = false;
    if (value->size() < BytesForBit(highest_write_bit)) {
      value->resize(BytesForBit(highest_write_bit), '\0');
      grown = true;
    }
    uint64_t changes = 0;
    ctx.reply.ArrayHeader(static_cast<int64_t>(ops.size()));
    for (const BitfieldOp& op : ops) {
      if (op.kind == BitfieldOp::Kind::kGet) {
        ReplyBitfieldGet(ctx, *value, op);
        continue;
      }
      BitfieldWrite write =
          op.kind == BitfieldOp::Kind::kSet
              ? BitfieldSet(*value, op.type, op.offset, op.operand, op.overflow)
              : BitfieldIncrBy(*value, op.type, op.offset, op.operand, op.overflow);
      if (write.failed) {
        ctx.reply.Null();
        continue;
      }
      ctx.reply.Integer(write.reply);
      if (grown || write.changed) ++changes;
    }
    StoreModified(access, std::move(value), expire_ms, stamp);
    // Writes that leave every bit as it was change nothing (no effect, no WATCH touch), as in
    // Redis. Padding the key is logged even when every write then failed, but, as Redis does not
    // signal it, it fails no WATCH.
    if (changes > 0 || grown) PublishBitfieldWrites(ctx, access, ops, changes);
  });
}

void CmdBitfield(CommandContext& ctx) { BitfieldGeneric(ctx, /*only_reads_allowed=*/false); }
void CmdBitfieldRo(CommandContext& ctx) { BitfieldGeneric(ctx, /*only_reads_allowed=*/true); }

}  // namespace

const std::vector<CommandBinding>& BitmapCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"setbit", CmdSetBit},          {"getbit", CmdGetBit}, {"bitcount", CmdBitCount},
      {"bitpos", CmdBitPos},          {"bitop", CmdBitOp},   {"bitfield", CmdBitfield},
      {"bitfield_ro", CmdBitfieldRo},
  };
  return kCommands;
}

}  // namespace gigakv::server
