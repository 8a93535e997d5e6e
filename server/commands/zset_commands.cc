// Sorted-set family: ZADD ZINCRBY ZSCORE ZMSCORE ZCARD ZCOUNT ZLEXCOUNT ZRANGE ZRANGESTORE
// ZRANGEBYSCORE ZREVRANGEBYSCORE ZRANGEBYLEX ZREVRANGEBYLEX ZREVRANGE ZRANK ZREVRANK ZREM
// ZREMRANGEBYRANK ZREMRANGEBYSCORE ZREMRANGEBYLEX ZPOPMIN ZPOPMAX ZMPOP ZRANDMEMBER ZUNION ZINTER
// ZDIFF ZUNIONSTORE ZINTERSTORE ZDIFFSTORE ZINTERCARD ZSCAN BZPOPMIN BZPOPMAX BZMPOP.
//
// core/types/zset.h does the data-structure work. Arguments are checked, and keys looked up, in
// Redis 7.0's order (t_zset.c), so that the same error wins when several apply.
//
// Effects (deterministic, absolute): ZADD/ZINCRBY log `ZADD key score member...` with the
// resulting scores; every removal (ZREM, ZREMRANGEBY*, pops) logs `ZREM key member...` of what was
// actually removed; the *STORE commands log themselves while they hold every key's lock (their
// result depends only on the sources' state, which the log reproduces).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/types/zset.h"
#include "gigakv/glob.h"
#include "protocol/wire_numbers.h"
#include "server/blocking.h"
#include "server/commands/args.h"
#include "server/commands/collection_access.h"
#include "server/commands/key_access.h"
#include "server/commands/scan_args.h"
#include "server/commands/zset_results.h"
#include "server/settings.h"

namespace gigakv::server {
namespace {

using absl::StrCat;

// --- Argument parsing --------------------------------------------------------------------------

bool ParseScoreOrReply(CommandContext& ctx, std::string_view text, double* value) {
  if (ParseDouble(text, value)) return true;
  ctx.reply.Error(errors::kNotFloat);
  return false;
}

// One end of a score range as zslParseRange reads it: strtod on the C string (so leading spaces
// and an empty text are accepted, as in Redis), "(" for exclusive, NaN rejected.
bool ParseScoreBound(std::string_view text, double* value, bool* exclusive) {
  std::string copy(text);
  const char* start = copy.c_str();
  *exclusive = false;
  if (!copy.empty() && copy[0] == '(') {
    *exclusive = true;
    ++start;
  }
  char* end = nullptr;
  *value = std::strtod(start, &end);
  return *end == '\0' && !std::isnan(*value);
}

bool ParseScoreRangeOrReply(CommandContext& ctx, std::string_view min, std::string_view max,
                            ZScoreRange* range) {
  if (!ParseScoreBound(min, &range->min, &range->min_exclusive) ||
      !ParseScoreBound(max, &range->max, &range->max_exclusive)) {
    ctx.reply.Error(errors::kMinMaxNotFloat);
    return false;
  }
  return true;
}

bool ParseLexBound(std::string_view text, ZLexRange::Kind* kind, std::string* value) {
  if (text.empty()) return false;
  switch (text[0]) {
    case '+':
    case '-':
      if (text.size() > 1 && text[1] != '\0') return false;
      *kind = text[0] == '+' ? ZLexRange::Kind::kPosInf : ZLexRange::Kind::kNegInf;
      return true;
    case '(':
    case '[':
      *kind = text[0] == '(' ? ZLexRange::Kind::kExclusive : ZLexRange::Kind::kInclusive;
      value->assign(text.substr(1));
      return true;
    default:
      return false;
  }
}

bool ParseLexRangeOrReply(CommandContext& ctx, std::string_view min, std::string_view max,
                          ZLexRange* range) {
  if (!ParseLexBound(min, &range->min_kind, &range->min) ||
      !ParseLexBound(max, &range->max_kind, &range->max)) {
    ctx.reply.Error(errors::kMinMaxNotLexRange);
    return false;
  }
  return true;
}

// Scores as Redis's d2string writes them (ZSCAN, and the effects we log): integral values within
// +-LLONG_MAX/2 as integers, "-0" for negative zero, others as "%.17g" ("inf", "-inf").
std::string ScoreText(double score) {
  constexpr double kIntegerLimit = static_cast<double>(INT64_MAX / 2);
  if (score == 0) return std::signbit(score) ? "-0" : "0";
  if (score >= -kIntegerLimit && score <= kIntegerLimit &&
      static_cast<double>(static_cast<int64_t>(score)) == score) {
    return StrCat(static_cast<int64_t>(score));
  }
  return protocol::DoubleReplyText(score);
}

const CollectionLimits& Limits(CommandContext& ctx) {
  thread_local CollectionLimits limits;
  limits = ctx.settings().collection_limits();
  return limits;
}

using Elements = ZSetElements;

// --- Replies -----------------------------------------------------------------------------------

// Elements as ZRANGE replies them: members, or member/score pairs (flat in RESP2).
void ReplyElements(CommandContext& ctx, const ZSet& zset, size_t begin, size_t end, bool reverse,
                   bool withscores) {
  end = std::min(end, zset.size());
  int64_t count = end > begin ? static_cast<int64_t>(end - begin) : 0;
  if (withscores) {
    ctx.reply.PairArrayHeader(count);
  } else {
    ctx.reply.ArrayHeader(count);
  }
  zset.Visit(begin, end, reverse, [&](std::string_view member, double score) {
    if (withscores) {
      ctx.reply.PairHeader();
      ctx.reply.Bulk(member);
      ctx.reply.Double(score);
    } else {
      ctx.reply.Bulk(member);
    }
  });
}

// Normalizes Redis rank indexes (negative from the end) into an ascending span [begin, end).
std::pair<size_t, size_t> RankSpan(int64_t start, int64_t stop, size_t size) {
  auto length = static_cast<int64_t>(size);
  if (start < 0) start += length;
  if (stop < 0) stop += length;
  if (start < 0) start = 0;
  if (start > stop || start >= length) return {0, 0};
  if (stop >= length) stop = length - 1;
  return {static_cast<size_t>(start), static_cast<size_t>(stop + 1)};
}

// Publishes the removal of `members` (none: no change) from the key as ZREM key members...,
// one change per member; notifies `event` ("zrem"...; kNoEvent for pops, notified already).
void PublishRemovals(CommandContext& ctx, const KeyAccess& access, Event event,
                     const std::vector<std::string>& members) {
  if (members.empty()) return;
  std::vector<std::string_view> effect;
  if (WantsEffects(ctx)) {
    effect = {"ZREM", access.key};
    effect.insert(effect.end(), members.begin(), members.end());
  }
  PublishChange(ctx, access.db, access.key, event, effect, members.size());
}

// Members of the span [begin, end), ascending (for logging what a removal takes).
std::vector<std::string> MembersOf(const ZSet& zset, size_t begin, size_t end) {
  std::vector<std::string> members;
  zset.Visit(begin, end, false,
             [&](std::string_view member, double) { members.emplace_back(member); });
  return members;
}

// --- ZADD / ZINCRBY ----------------------------------------------------------------------------

// True when the key holds an inline sorted set that ZADD (without INCR) would leave as it is:
// every member already has the score given, or is skipped by NX/XX/GT/LT (as ZSet::Add decides).
// Then ZADD answers 0 without building the set and storing it back (what a write to an inline
// collection costs, once per batch of commands); like Redis it then signals no change.
bool InlineZSetUnchanged(CommandContext& ctx, const KeyAccess& access, const ZAddFlags& flags,
                         const std::vector<double>& scores, size_t score_index) {
  if (flags.incr || !access.exists() || access.found.kind != ValueKind::kInlineZSet) return false;
  for (size_t j = 0; j < scores.size(); ++j) {
    std::optional<double> current =
        ZSet::CompactScore(access.found.str, ctx.arg(score_index + 2 * j + 1));
    double score = scores[j];
    bool unchanged = current.has_value()
                         ? flags.nx || score == *current || (flags.gt && score <= *current) ||
                               (flags.lt && score >= *current)
                         : flags.xx;
    if (!unchanged) return false;
  }
  return true;
}

// The shared body of ZADD and ZINCRBY (zaddGenericCommand). `score_index` is where the first
// score-member pair starts, after the options.
void ZAddGeneric(CommandContext& ctx, ZAddFlags flags, bool ch, size_t score_index) {
  size_t elements = ctx.argc() - score_index;
  if (elements == 0 || elements % 2 != 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  elements /= 2;
  if (flags.nx && flags.xx) {
    ctx.reply.Error(errors::kZAddXxNx);
    return;
  }
  if ((flags.gt && flags.nx) || (flags.lt && flags.nx) || (flags.gt && flags.lt)) {
    ctx.reply.Error(errors::kGtLtNx);
    return;
  }
  if (flags.incr && elements > 1) {
    ctx.reply.Error(errors::kZAddIncrPair);
    return;
  }
  std::vector<double> scores(elements);
  for (size_t j = 0; j < elements; ++j) {
    if (!ParseScoreOrReply(ctx, ctx.arg(score_index + 2 * j), &scores[j])) return;
  }
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    if (InlineZSetUnchanged(ctx, access, flags, scores, score_index)) {
      ctx.reply.Integer(0);
      return;
    }
    bool wrong_type;
    auto* zset = WriteObject<ZSet>(ctx, access, KeyType::kZSet, &wrong_type);
    if (wrong_type) return;
    int64_t added = 0, updated = 0, processed = 0;
    double last_score = 0;
    bool nan_error = false;
    std::vector<std::string> effect;
    const bool wants_effects = WantsEffects(ctx);
    bool changed = false;
    if (zset == nullptr && !flags.xx) {
      zset = CreateObject(ctx, access, std::make_unique<ZSet>());
    }
    if (zset != nullptr) {
      const CollectionLimits& limits = Limits(ctx);
      for (size_t j = 0; j < elements; ++j) {
        std::string_view member = ctx.arg(score_index + 2 * j + 1);
        double new_score = 0;
        ZAddOutcome outcome = zset->Add(member, scores[j], flags, limits, &new_score);
        if (outcome == ZAddOutcome::kNan) {
          nan_error = true;  // Only INCR (one pair) gets here: nothing was changed.
          break;
        }
        if (outcome == ZAddOutcome::kSkipped) continue;
        ++processed;
        last_score = new_score;
        if (outcome == ZAddOutcome::kAdded) ++added;
        if (outcome == ZAddOutcome::kUpdated) ++updated;
        if (outcome != ZAddOutcome::kUnchanged) {
          changed = true;
          if (wants_effects) {
            effect.push_back(ScoreText(new_score));
            effect.emplace_back(member);
          }
        }
      }
    }
    // Replied before the notification, in the order Redis writes them.
    if (nan_error) {
      ctx.reply.Error(errors::kZAddNan);
    } else if (flags.incr) {
      if (processed > 0) {
        ctx.reply.Double(last_score);
      } else {
        ctx.reply.Null();
      }
    } else {
      ctx.reply.Integer(ch ? added + updated : added);
    }
    if (changed) {
      if (wants_effects) effect.insert(effect.begin(), {"ZADD", std::string(access.key)});
      PublishBuiltChange(ctx, access.db, access.key, {kZsetEvents, flags.incr ? "zincr" : "zadd"},
                         effect, static_cast<uint64_t>(added + updated));
    }
    if (zset != nullptr) DeleteIfEmpty(ctx, access);  // Never keep an empty set.
  });
}

void CmdZAdd(CommandContext& ctx) {
  ZAddFlags flags;
  bool ch = false;
  size_t i = 2;
  for (; i < ctx.argc(); ++i) {
    std::string_view opt = ctx.arg(i);
    if (ArgIs(opt, "nx")) {
      flags.nx = true;
    } else if (ArgIs(opt, "xx")) {
      flags.xx = true;
    } else if (ArgIs(opt, "ch")) {
      ch = true;
    } else if (ArgIs(opt, "incr")) {
      flags.incr = true;
    } else if (ArgIs(opt, "gt")) {
      flags.gt = true;
    } else if (ArgIs(opt, "lt")) {
      flags.lt = true;
    } else {
      break;
    }
  }
  ZAddGeneric(ctx, flags, ch, i);
}

void CmdZIncrBy(CommandContext& ctx) {
  ZAddFlags flags;
  flags.incr = true;
  ZAddGeneric(ctx, flags, false, 2);
}

// --- Reads of one key --------------------------------------------------------------------------

// Runs fn(const ZSet&) on the sorted set at `key`; replies via `if_missing()` when the key is
// missing; WRONGTYPE when of another type.
template <typename Missing, typename Fn>
void ReadZSet(CommandContext& ctx, std::string_view key, Missing&& if_missing, Fn&& fn) {
  WithKey(ctx, key, Lookup::kRead, [&](KeyAccess& access) {
    bool wrong_type;
    const auto* zset = ReadObject<ZSet>(ctx, access, KeyType::kZSet, &wrong_type);
    if (wrong_type) return;
    if (zset == nullptr) {
      if_missing();
      return;
    }
    fn(*zset);
  });
}

void CmdZCard(CommandContext& ctx) {
  ReadZSet(
      ctx, ctx.arg(1), [&] { ctx.reply.Integer(0); },
      [&](const ZSet& zset) { ctx.reply.Integer(static_cast<int64_t>(zset.size())); });
}

void CmdZScore(CommandContext& ctx) {
  ReadZSet(
      ctx, ctx.arg(1), [&] { ctx.reply.Null(); },
      [&](const ZSet& zset) {
        std::optional<double> score = zset.Score(ctx.arg(2));
        if (score.has_value()) {
          ctx.reply.Double(*score);
        } else {
          ctx.reply.Null();
        }
      });
}

void CmdZMScore(CommandContext& ctx) {
  auto count = static_cast<int64_t>(ctx.argc() - 2);
  ReadZSet(
      ctx, ctx.arg(1),
      [&] {
        ctx.reply.ArrayHeader(count);
        for (int64_t i = 0; i < count; ++i) ctx.reply.Null();
      },
      [&](const ZSet& zset) {
        ctx.reply.ArrayHeader(count);
        for (size_t i = 2; i < ctx.argc(); ++i) {
          std::optional<double> score = zset.Score(ctx.arg(i));
          if (score.has_value()) {
            ctx.reply.Double(*score);
          } else {
            ctx.reply.Null();
          }
        }
      });
}

void ZRankGeneric(CommandContext& ctx, bool reverse) {
  ReadZSet(
      ctx, ctx.arg(1), [&] { ctx.reply.Null(); },
      [&](const ZSet& zset) {
        std::optional<size_t> rank = zset.Rank(ctx.arg(2), reverse);
        if (rank.has_value()) {
          ctx.reply.Integer(static_cast<int64_t>(*rank));
        } else {
          ctx.reply.Null();
        }
      });
}
void CmdZRank(CommandContext& ctx) { ZRankGeneric(ctx, false); }
void CmdZRevRank(CommandContext& ctx) { ZRankGeneric(ctx, true); }

void CmdZCount(CommandContext& ctx) {
  ZScoreRange range;
  if (!ParseScoreRangeOrReply(ctx, ctx.arg(2), ctx.arg(3), &range)) return;
  ReadZSet(
      ctx, ctx.arg(1), [&] { ctx.reply.Integer(0); },
      [&](const ZSet& zset) {
        auto [begin, end] = zset.ScoreSpan(range);
        ctx.reply.Integer(static_cast<int64_t>(end - begin));
      });
}

void CmdZLexCount(CommandContext& ctx) {
  ZLexRange range;
  if (!ParseLexRangeOrReply(ctx, ctx.arg(2), ctx.arg(3), &range)) return;
  ReadZSet(
      ctx, ctx.arg(1), [&] { ctx.reply.Integer(0); },
      [&](const ZSet& zset) {
        auto [begin, end] = zset.LexSpan(range);
        ctx.reply.Integer(static_cast<int64_t>(end - begin));
      });
}

// --- ZRANGE and friends --------------------------------------------------------------------------

enum class RangeType { kAuto, kRank, kScore, kLex };
enum class Direction { kAuto, kForward, kReverse };

// A parsed ZRANGE-family request: which elements of the source to take, in which order.
struct RangeRequest {
  RangeType type = RangeType::kAuto;
  Direction direction = Direction::kAuto;
  bool withscores = false;
  int64_t start = 0, stop = 0;  // Rank type.
  ZScoreRange score;            // Score type.
  ZLexRange lex;                // Lex type.
  int64_t offset = 0;
  int64_t limit = -1;
};

// zrangeGenericCommand's step 1 and 2: options from argv[first + 3], then the range itself.
bool ParseRangeOrReply(CommandContext& ctx, size_t first, bool store, RangeRequest* request) {
  for (size_t j = first + 3; j < ctx.argc(); ++j) {
    size_t left = ctx.argc() - j - 1;
    std::string_view opt = ctx.arg(j);
    if (!store && ArgIs(opt, "withscores")) {
      request->withscores = true;
    } else if (ArgIs(opt, "limit") && left >= 2) {
      if (!ParseIntOrReply(ctx, ctx.arg(j + 1), &request->offset) ||
          !ParseIntOrReply(ctx, ctx.arg(j + 2), &request->limit)) {
        return false;
      }
      j += 2;
    } else if (request->direction == Direction::kAuto && ArgIs(opt, "rev")) {
      request->direction = Direction::kReverse;
    } else if (request->type == RangeType::kAuto && ArgIs(opt, "bylex")) {
      request->type = RangeType::kLex;
    } else if (request->type == RangeType::kAuto && ArgIs(opt, "byscore")) {
      request->type = RangeType::kScore;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  if (request->direction == Direction::kAuto) request->direction = Direction::kForward;
  if (request->type == RangeType::kAuto) request->type = RangeType::kRank;
  if (request->limit != -1 && request->type == RangeType::kRank) {
    ctx.reply.Error(errors::kZRangeLimit);
    return false;
  }
  if (request->withscores && request->type == RangeType::kLex) {
    ctx.reply.Error(errors::kZRangeWithscoresBylex);
    return false;
  }
  size_t min_index = first + 1, max_index = first + 2;
  if (request->direction == Direction::kReverse && request->type != RangeType::kRank) {
    std::swap(min_index, max_index);
  }
  switch (request->type) {
    case RangeType::kAuto:
    case RangeType::kRank:
      return ParseIntOrReply(ctx, ctx.arg(min_index), &request->start) &&
             ParseIntOrReply(ctx, ctx.arg(max_index), &request->stop);
    case RangeType::kScore:
      return ParseScoreRangeOrReply(ctx, ctx.arg(min_index), ctx.arg(max_index), &request->score);
    case RangeType::kLex:
      return ParseLexRangeOrReply(ctx, ctx.arg(min_index), ctx.arg(max_index), &request->lex);
  }
  return false;
}

// The selected elements as an ascending span [begin, end) and a visiting direction.
struct Selection {
  size_t begin = 0, end = 0;
  bool reverse = false;
};

Selection Select(const ZSet& zset, const RangeRequest& request) {
  Selection selection;
  selection.reverse = request.direction == Direction::kReverse;
  size_t size = zset.size();
  if (request.type == RangeType::kRank) {
    auto [begin, end] = RankSpan(request.start, request.stop, size);
    if (selection.reverse && end > begin) {
      // Reverse ranks count from the highest element.
      selection.begin = size - end;
      selection.end = size - begin;
    } else {
      selection.begin = begin;
      selection.end = end;
    }
    return selection;
  }
  if (request.offset < 0 || (request.offset > 0 && static_cast<size_t>(request.offset) >= size)) {
    return selection;
  }
  auto [begin, end] =
      request.type == RangeType::kScore ? zset.ScoreSpan(request.score) : zset.LexSpan(request.lex);
  auto offset = static_cast<size_t>(request.offset);
  size_t available = end - begin > offset ? end - begin - offset : 0;
  size_t take =
      request.limit < 0 ? available : std::min(available, static_cast<size_t>(request.limit));
  if (!selection.reverse) {
    selection.begin = begin + offset;
    selection.end = selection.begin + take;
  } else {
    selection.end = end - std::min(offset, end - begin);
    selection.begin = selection.end - take;
  }
  return selection;
}

void ZRangeGeneric(CommandContext& ctx, RangeType type, Direction direction) {
  RangeRequest request;
  request.type = type;
  request.direction = direction;
  if (!ParseRangeOrReply(ctx, 1, /*store=*/false, &request)) return;
  ReadZSet(
      ctx, ctx.arg(1), [&] { ctx.reply.ArrayHeader(0); },
      [&](const ZSet& zset) {
        Selection selection = Select(zset, request);
        ReplyElements(ctx, zset, selection.begin, selection.end, selection.reverse,
                      request.withscores);
      });
}

void CmdZRange(CommandContext& ctx) { ZRangeGeneric(ctx, RangeType::kAuto, Direction::kAuto); }
void CmdZRevRange(CommandContext& ctx) {
  ZRangeGeneric(ctx, RangeType::kRank, Direction::kReverse);
}
void CmdZRangeByScore(CommandContext& ctx) {
  ZRangeGeneric(ctx, RangeType::kScore, Direction::kForward);
}
void CmdZRevRangeByScore(CommandContext& ctx) {
  ZRangeGeneric(ctx, RangeType::kScore, Direction::kReverse);
}
void CmdZRangeByLex(CommandContext& ctx) {
  ZRangeGeneric(ctx, RangeType::kLex, Direction::kForward);
}
void CmdZRevRangeByLex(CommandContext& ctx) {
  ZRangeGeneric(ctx, RangeType::kLex, Direction::kReverse);
}

void CmdZRangeStore(CommandContext& ctx) {
  RangeRequest request;
  if (!ParseRangeOrReply(ctx, 2, /*store=*/true, &request)) return;
  Store::MultiLock lock = ctx.store.LockKeys({ctx.arg(1), ctx.arg(2)});
  KeyAccess source = FindLocked(ctx, ctx.arg(2), Lookup::kRead);
  bool wrong_type;
  const auto* zset = ReadObject<ZSet>(ctx, source, KeyType::kZSet, &wrong_type);
  if (wrong_type) return;
  Elements elements;
  if (zset != nullptr) {
    Selection selection = Select(*zset, request);
    zset->Visit(selection.begin, selection.end, selection.reverse,
                [&](std::string_view member, double score) {
                  elements.emplace_back(std::string(member), score);
                });
  }
  // Redis sizes the destination by the result's length when it knows it (by rank) and starts
  // from a listpack otherwise, then adds in order (which decides where -0 survives).
  const CollectionLimits& limits = Limits(ctx);
  auto result = std::make_unique<ZSet>();
  if (request.type == RangeType::kRank &&
      static_cast<int64_t>(elements.size()) > limits.zset_max_listpack_entries) {
    result->ConvertToSkiplist();
  }
  double unused;
  for (const auto& [member, score] : elements) result->Add(member, score, {}, limits, &unused);
  KeyAccess dest = FindLocked(ctx, ctx.arg(1), Lookup::kWrite);
  StoreZSetResult(ctx, dest, std::move(result), ctx.spec.name);
}

// --- Removals ------------------------------------------------------------------------------------

void CmdZRem(CommandContext& ctx) {
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    auto* zset = WriteObject<ZSet>(ctx, access, KeyType::kZSet, &wrong_type);
    if (wrong_type) return;
    if (zset == nullptr) {
      ctx.reply.Integer(0);
      return;
    }
    std::vector<std::string> removed;
    for (size_t i = 2; i < ctx.argc(); ++i) {
      if (zset->Remove(ctx.arg(i))) removed.emplace_back(ctx.arg(i));
    }
    if (!removed.empty()) {
      PublishRemovals(ctx, access, {kZsetEvents, "zrem"}, removed);
      DeleteIfEmpty(ctx, access);
    }
    ctx.reply.Integer(static_cast<int64_t>(removed.size()));
  });
}

enum class RemoveBy { kRank, kScore, kLex };

void ZRemRangeGeneric(CommandContext& ctx, RemoveBy by) {
  int64_t start = 0, stop = 0;
  ZScoreRange score;
  ZLexRange lex;
  switch (by) {
    case RemoveBy::kRank:
      if (!ParseIntOrReply(ctx, ctx.arg(2), &start) || !ParseIntOrReply(ctx, ctx.arg(3), &stop)) {
        return;
      }
      break;
    case RemoveBy::kScore:
      if (!ParseScoreRangeOrReply(ctx, ctx.arg(2), ctx.arg(3), &score)) return;
      break;
    case RemoveBy::kLex:
      if (!ParseLexRangeOrReply(ctx, ctx.arg(2), ctx.arg(3), &lex)) return;
      break;
  }
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    auto* zset = WriteObject<ZSet>(ctx, access, KeyType::kZSet, &wrong_type);
    if (wrong_type) return;
    if (zset == nullptr) {
      ctx.reply.Integer(0);
      return;
    }
    std::pair<size_t, size_t> span = by == RemoveBy::kRank    ? RankSpan(start, stop, zset->size())
                                     : by == RemoveBy::kScore ? zset->ScoreSpan(score)
                                                              : zset->LexSpan(lex);
    size_t removed = span.second - span.first;
    if (removed > 0) {
      const std::string_view event = by == RemoveBy::kRank    ? "zremrangebyrank"
                                     : by == RemoveBy::kScore ? "zremrangebyscore"
                                                              : "zremrangebylex";
      PublishRemovals(ctx, access, {kZsetEvents, event}, MembersOf(*zset, span.first, span.second));
      zset->EraseSpan(span.first, span.second);
      DeleteIfEmpty(ctx, access);
    }
    ctx.reply.Integer(static_cast<int64_t>(removed));
  });
}

void CmdZRemRangeByRank(CommandContext& ctx) { ZRemRangeGeneric(ctx, RemoveBy::kRank); }
void CmdZRemRangeByScore(CommandContext& ctx) { ZRemRangeGeneric(ctx, RemoveBy::kScore); }
void CmdZRemRangeByLex(CommandContext& ctx) { ZRemRangeGeneric(ctx, RemoveBy::kLex); }

// --- Pops ----------------------------------------------------------------------------------------

// How a pop replies (genericZpopCommand's shapes).
enum class PopShape {
  kSingle,   // ZPOPMIN key: [member, score] flat.
  kCounted,  // ZPOPMIN key count: pairs (flat in RESP2).
  kWithKey,  // BZPOPMIN: [key, member, score].
  kNested,   // ZMPOP / BZMPOP: [key, [[member, score]...]] (nested in both protocols).
};

// Pops up to `count` elements from the sorted set at `access` (existing, non-empty, checked) and
// replies in `shape`.
void PopAndReply(CommandContext& ctx, KeyAccess& access, ZSet& zset, bool max, int64_t count,
                 PopShape shape) {
  size_t size = zset.size();
  size_t take = std::min(size, static_cast<size_t>(count));
  size_t begin = max ? size - take : 0;
  size_t end = begin + take;
  std::vector<std::pair<std::string, double>> popped;
  popped.reserve(take);
  zset.Visit(begin, end, max, [&](std::string_view member, double score) {
    popped.emplace_back(std::string(member), score);
  });
  switch (shape) {
    case PopShape::kSingle:
      ctx.reply.ArrayHeader(static_cast<int64_t>(2 * popped.size()));
      break;
    case PopShape::kCounted:
      ctx.reply.PairArrayHeader(static_cast<int64_t>(popped.size()));
      break;
    case PopShape::kWithKey:
      ctx.reply.ArrayHeader(3);
      ctx.reply.Bulk(access.key);
      break;
    case PopShape::kNested:
      ctx.reply.ArrayHeader(2);
      ctx.reply.Bulk(access.key);
      ctx.reply.ArrayHeader(static_cast<int64_t>(popped.size()));
      break;
  }
  // Redis notifies as it pops the first element: inside the reply, after its headers (a RESP3
  // client listening to its own keys sees the push there). The record then carries no event.
  Notify(ctx, {kZsetEvents, max ? "zpopmax" : "zpopmin"}, access.db, access.key);
  std::vector<std::string> members;
  members.reserve(popped.size());
  for (auto& [member, score] : popped) {
    if (shape == PopShape::kCounted) ctx.reply.PairHeader();
    if (shape == PopShape::kNested) ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(member);
    ctx.reply.Double(score);
    members.push_back(std::move(member));
  }
  zset.EraseSpan(begin, end);
  PublishRemovals(ctx, access, kNoEvent, members);
  DeleteIfEmpty(ctx, access);
}

void ZPopGeneric(CommandContext& ctx, bool max) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  int64_t count = 1;
  PopShape shape = PopShape::kSingle;
  if (ctx.argc() == 3) {
    if (!ParseIntAtLeastOrReply(ctx, ctx.arg(2), 0, errors::kMustBePositive, &count)) return;
    shape = PopShape::kCounted;
  }
  WithKey(ctx, ctx.arg(1), Lookup::kWrite, [&](KeyAccess& access) {
    bool wrong_type;
    auto* zset = WriteObject<ZSet>(ctx, access, KeyType::kZSet, &wrong_type);
    if (wrong_type) return;
    if (zset == nullptr || count == 0) {  // COUNT 0 is checked after the type, as in Redis.
      ctx.reply.ArrayHeader(0);
      return;
    }
    PopAndReply(ctx, access, *zset, max, count, shape);
  });
}

void CmdZPopMin(CommandContext& ctx) { ZPopGeneric(ctx, false); }
void CmdZPopMax(CommandContext& ctx) { ZPopGeneric(ctx, true); }

// Pops from the first non-empty key of `keys`. Returns true when it replied (served or an error),
// false when every key was missing (nothing sent).
// Pops from the first key holding a non-empty sorted set, with every key in `keys` already
// locked by the caller (blocking variants park under the same locks, so no ZADD slips in between
// the look and the park). Returns false when no key could serve; a WRONGTYPE reply counts as
// served.
bool PopFirstOfLocked(CommandContext& ctx, const std::vector<std::string_view>& keys, bool max,
                      int64_t count, PopShape shape) {
  for (std::string_view key : keys) {
    KeyAccess access = FindLocked(ctx, key, Lookup::kWrite);
    bool wrong_type;
    auto* zset = WriteObject<ZSet>(ctx, access, KeyType::kZSet, &wrong_type);
    if (wrong_type) return true;
    if (zset == nullptr || zset->size() == 0) continue;
    PopAndReply(ctx, access, *zset, max, count, shape);
    return true;
  }
  return false;
}

// ZMPOP / BZMPOP arguments from `numkeys_index`: numkeys key... MIN|MAX [COUNT count].
bool ParseMPopOrReply(CommandContext& ctx, size_t numkeys_index,
                      std::vector<std::string_view>* keys, bool* max, int64_t* count) {
  int64_t numkeys;
  if (!ParseIntAtLeastOrReply(ctx, ctx.arg(numkeys_index), 1, errors::kNumkeysPositive, &numkeys)) {
    return false;
  }
  if (static_cast<uint64_t>(numkeys) >= ctx.argc() - numkeys_index - 1) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  size_t where_index = numkeys_index + static_cast<size_t>(numkeys) + 1;
  if (ArgIs(ctx.arg(where_index), "min")) {
    *max = false;
  } else if (ArgIs(ctx.arg(where_index), "max")) {
    *max = true;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  *count = -1;
  for (size_t j = where_index + 1; j < ctx.argc(); ++j) {
    bool more = j + 1 < ctx.argc();
    if (*count == -1 && ArgIs(ctx.arg(j), "count") && more) {
      ++j;
      if (!ParseIntAtLeastOrReply(ctx, ctx.arg(j), 1, errors::kCountPositive, count)) return false;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  if (*count == -1) *count = 1;
  keys->assign(ctx.args.begin() + static_cast<std::ptrdiff_t>(numkeys_index + 1),
               ctx.args.begin() + static_cast<std::ptrdiff_t>(where_index));
  return true;
}

void CmdZMPop(CommandContext& ctx) {
  std::vector<std::string_view> keys;
  bool max;
  int64_t count;
  if (!ParseMPopOrReply(ctx, 1, &keys, &max, &count)) return;
  Store::MultiLock lock = ctx.store.LockKeys(keys);
  if (!PopFirstOfLocked(ctx, keys, max, count, PopShape::kNested)) ctx.reply.NullArray();
}

void BZPopGeneric(CommandContext& ctx, bool max) {
  int64_t deadline_ms;
  if (!ParseBlockTimeoutOrReply(ctx, ctx.arg(ctx.argc() - 1), &deadline_ms)) return;
  std::vector<std::string_view> keys(ctx.args.begin() + 1, ctx.args.end() - 1);
  Store::MultiLock lock = ctx.store.LockKeys(keys);
  if (PopFirstOfLocked(ctx, keys, max, 1, PopShape::kWithKey)) return;
  BlockOnKeys(ctx, keys, deadline_ms);
}

void CmdBZPopMin(CommandContext& ctx) { BZPopGeneric(ctx, false); }
void CmdBZPopMax(CommandContext& ctx) { BZPopGeneric(ctx, true); }

void CmdBZMPop(CommandContext& ctx) {
  int64_t deadline_ms;
  if (!ParseBlockTimeoutOrReply(ctx, ctx.arg(1), &deadline_ms)) return;
  std::vector<std::string_view> keys;
  bool max;
  int64_t count;
  if (!ParseMPopOrReply(ctx, 2, &keys, &max, &count)) return;
  Store::MultiLock lock = ctx.store.LockKeys(keys);
  if (PopFirstOfLocked(ctx, keys, max, count, PopShape::kNested)) return;
  BlockOnKeys(ctx, keys, deadline_ms);
}

// --- ZRANDMEMBER
// -----------------------------------------------------------------------------------

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return rng;
}

void CmdZRandMember(CommandContext& ctx) {
  if (ctx.argc() == 2) {
    ReadZSet(
        ctx, ctx.arg(1), [&] { ctx.reply.Null(); },
        [&](const ZSet& zset) { ctx.reply.Bulk(zset.At(Rng()() % zset.size()).member); });
    return;
  }
  int64_t value;
  if (!ParseIntOrReply(ctx, ctx.arg(2), &value)) return;
  if (value < -INT64_MAX) {
    ctx.reply.Error(errors::kCountOutOfRange);
    return;
  }
  bool withscores = false;
  if (ctx.argc() > 4 || (ctx.argc() == 4 && !ArgIs(ctx.arg(3), "withscores"))) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (ctx.argc() == 4) {
    withscores = true;
    if (value < -INT64_MAX / 2 || value > INT64_MAX / 2) {
      ctx.reply.Error(errors::kValueOutOfRange);
      return;
    }
  }
  bool distinct = value >= 0;
  uint64_t count = distinct ? static_cast<uint64_t>(value) : static_cast<uint64_t>(-value);
  ReadZSet(
      ctx, ctx.arg(1), [&] { ctx.reply.ArrayHeader(0); },
      [&](const ZSet& zset) {
        size_t size = zset.size();
        auto emit = [&](std::string_view member, double score) {
          if (withscores) {
            ctx.reply.PairHeader();
            ctx.reply.Bulk(member);
            ctx.reply.Double(score);
          } else {
            ctx.reply.Bulk(member);
          }
        };
        auto header = [&](uint64_t n) {
          if (withscores) {
            ctx.reply.PairArrayHeader(static_cast<int64_t>(n));
          } else {
            ctx.reply.ArrayHeader(static_cast<int64_t>(n));
          }
        };
        if (count == 0) {
          ctx.reply.ArrayHeader(0);
          return;
        }
        if (!distinct) {  // Repeats allowed: independent draws.
          header(count);
          for (uint64_t i = 0; i < count; ++i) {
            size_t rank = Rng()() % size;
            zset.Visit(rank, rank + 1, false, emit);
          }
          return;
        }
        if (count >= size) {  // The whole set.
          header(size);
          zset.Visit(0, size, false, emit);
          return;
        }
        // Distinct ranks by Floyd's sampling, replied in random order.
        absl::flat_hash_set<size_t> chosen;
        std::vector<size_t> ranks;
        ranks.reserve(count);
        for (size_t j = size - count; j < size; ++j) {
          size_t r = Rng()() % (j + 1);
          if (!chosen.insert(r).second) {
            chosen.insert(j);
            ranks.push_back(j);
          } else {
            ranks.push_back(r);
          }
        }
        std::shuffle(ranks.begin(), ranks.end(), Rng());
        header(count);
        for (size_t rank : ranks) zset.Visit(rank, rank + 1, false, emit);
      });
}

// --- ZSCAN
// -----------------------------------------------------------------------------------------

void CmdZScan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursorOrReply(ctx, ctx.arg(2), &cursor)) return;
  ReadZSet(
      ctx, ctx.arg(1), [&] { ReplyEmptyScan(ctx); },
      [&](const ZSet& zset) {
        ScanOptions options;
        if (!ParseScanOptionsOrReply(ctx, 3, /*allow_type=*/false, &options)) return;
        std::vector<std::pair<std::string, double>> found;
        uint64_t next = zset.Scan(cursor, static_cast<size_t>(options.count),
                                  [&](std::string_view member, double score) {
                                    if (options.Matches(member)) {
                                      found.emplace_back(std::string(member), score);
                                    }
                                  });
        ctx.reply.ArrayHeader(2);
        ctx.reply.Bulk(StrCat(next));
        ctx.reply.ArrayHeader(static_cast<int64_t>(2 * found.size()));
        // Redis writes listpack scores as d2string stored them, skiplist scores with "%.17g".
        bool listpack = zset.is_listpack();
        for (const auto& [member, score] : found) {
          ctx.reply.Bulk(member);
          ctx.reply.Bulk(listpack ? ScoreText(score) : protocol::DoubleReplyText(score));
        }
      });
}

// --- ZUNION / ZINTER / ZDIFF and their STORE forms, ZINTERCARD
// ---------------------------------------

enum class SetOp { kUnion, kInter, kDiff };
enum class Aggregate { kSum, kMin, kMax };

// One input of a set operation: a sorted set, a set (every member scores 1) or nothing.
struct Source {
  const ZSet* zset = nullptr;
  const Object* set = nullptr;
  double weight = 1;
  size_t size() const { return zset ? zset->size() : set ? set->Length() : 0; }
  // Set members, indexed on first use for lookups.
  mutable std::unique_ptr<absl::flat_hash_set<std::string>> set_index;

  template <typename Fn>
  void ForEach(Fn&& fn) const {
    if (zset != nullptr) {
      zset->Visit(0, zset->size(), false, fn);
    } else if (set != nullptr) {
      set->ForEachElement([&](std::string_view member) { fn(member, 1.0); });
    }
  }
  std::optional<double> Find(std::string_view member) const {
    if (zset != nullptr) return zset->Score(member);
    if (set == nullptr) return std::nullopt;
    if (!set_index) {
      set_index = std::make_unique<absl::flat_hash_set<std::string>>();
      set->ForEachElement([&](std::string_view m) { set_index->emplace(m); });
    }
    if (set_index->contains(absl::string_view(member.data(), member.size()))) return 1.0;
    return std::nullopt;
  }
};

void AggregateInto(double* target, double value, Aggregate aggregate) {
  switch (aggregate) {
    case Aggregate::kSum:
      *target += value;
      if (std::isnan(*target)) *target = 0.0;  // inf + -inf: Redis's convention.
      break;
    case Aggregate::kMin:
      *target = value < *target ? value : *target;
      break;
    case Aggregate::kMax:
      *target = value > *target ? value : *target;
      break;
  }
}

// zunionInterDiffGenericCommand. `dest_index` is 0 for the non-storing forms.
void SetOpGeneric(CommandContext& ctx, size_t dest_index, size_t numkeys_index, SetOp op,
                  bool cardinality_only) {
  int64_t numkeys;
  if (!ParseIntOrReply(ctx, ctx.arg(numkeys_index), &numkeys)) return;
  if (numkeys < 1) {
    ctx.reply.Error(FormatText(errors::kAtLeastOneKey, {ctx.spec.name}));
    return;
  }
  if (static_cast<uint64_t>(numkeys) > ctx.argc() - numkeys_index - 1) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  auto setnum = static_cast<size_t>(numkeys);
  std::vector<std::string_view> lock_keys(
      ctx.args.begin() + static_cast<std::ptrdiff_t>(numkeys_index + 1),
      ctx.args.begin() + static_cast<std::ptrdiff_t>(numkeys_index + 1 + setnum));
  if (dest_index != 0) lock_keys.push_back(ctx.arg(dest_index));
  Store::MultiLock lock = ctx.store.LockKeys(lock_keys);
  std::vector<Source> sources(setnum);
  for (size_t i = 0; i < setnum; ++i) {
    KeyAccess access = FindLocked(ctx, ctx.arg(numkeys_index + 1 + i), Lookup::kRead);
    if (!access.exists()) continue;
    RecordView view = access.view();
    KeyType type = view.type();
    if (type != KeyType::kZSet && type != KeyType::kSet) {
      ctx.reply.Error(errors::kWrongType);
      return;
    }
    const Object* object = ObjectForRead(view);
    if (type == KeyType::kZSet) {
      sources[i].zset = static_cast<const ZSet*>(object);
    } else {
      sources[i].set = object;
    }
  }
  Aggregate aggregate = Aggregate::kSum;
  bool withscores = false;
  int64_t limit = 0;
  for (size_t j = numkeys_index + 1 + setnum; j < ctx.argc();) {
    size_t remaining = ctx.argc() - j;
    std::string_view opt = ctx.arg(j);
    if (op != SetOp::kDiff && !cardinality_only && remaining >= setnum + 1 &&
        ArgIs(opt, "weights")) {
      ++j;
      for (size_t i = 0; i < setnum; ++i, ++j) {
        if (!ParseDouble(ctx.arg(j), &sources[i].weight)) {
          ctx.reply.Error(errors::kWeightNotFloat);
          return;
        }
      }
    } else if (op != SetOp::kDiff && !cardinality_only && remaining >= 2 &&
               ArgIs(opt, "aggregate")) {
      std::string_view how = ctx.arg(j + 1);
      if (ArgIs(how, "sum")) {
        aggregate = Aggregate::kSum;
      } else if (ArgIs(how, "min")) {
        aggregate = Aggregate::kMin;
      } else if (ArgIs(how, "max")) {
        aggregate = Aggregate::kMax;
      } else {
        ctx.reply.Error(errors::kSyntax);
        return;
      }
      j += 2;
    } else if (dest_index == 0 && !cardinality_only && ArgIs(opt, "withscores")) {
      withscores = true;
      ++j;
    } else if (cardinality_only && remaining >= 2 && ArgIs(opt, "limit")) {
      if (!ParseIntAtLeastOrReply(ctx, ctx.arg(j + 1), 0, errors::kLimitNegative, &limit)) return;
      j += 2;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }

  Elements found;
  int64_t cardinality = 0;
  if (op == SetOp::kInter) {
    // Smallest input first (as Redis orders them; the aggregation order follows).
    std::stable_sort(sources.begin(), sources.end(),
                     [](const Source& a, const Source& b) { return a.size() < b.size(); });
    if (sources[0].size() > 0) {
      bool stop = false;
      sources[0].ForEach([&](std::string_view member, double first_score) {
        if (stop) return;
        double score = sources[0].weight * first_score;
        if (std::isnan(score)) score = 0;
        size_t j = 1;
        for (; j < setnum; ++j) {
          std::optional<double> value =
              (sources[j].zset != nullptr && sources[j].zset == sources[0].zset) ||
                      (sources[j].set != nullptr && sources[j].set == sources[0].set)
                  ? std::optional<double>(first_score)
                  : sources[j].Find(member);
          if (!value.has_value()) break;
          AggregateInto(&score, *value * sources[j].weight, aggregate);
        }
        if (j != setnum) return;
        if (cardinality_only) {
          ++cardinality;
          if (limit > 0 && cardinality >= limit) stop = true;
        } else {
          found.emplace_back(std::string(member), score);
        }
      });
    }
  } else if (op == SetOp::kUnion) {
    std::stable_sort(sources.begin(), sources.end(),
                     [](const Source& a, const Source& b) { return a.size() < b.size(); });
    absl::flat_hash_map<std::string, double> accumulator;
    for (const Source& source : sources) {
      source.ForEach([&](std::string_view member, double value) {
        double score = source.weight * value;
        if (std::isnan(score)) score = 0;
        auto [it, inserted] = accumulator.try_emplace(std::string(member), score);
        if (!inserted) AggregateInto(&it->second, score, aggregate);
      });
    }
    found.assign(accumulator.begin(), accumulator.end());
  } else {
    if (sources[0].size() > 0) {
      sources[0].ForEach([&](std::string_view member, double score) {
        for (size_t j = 1; j < setnum; ++j) {
          if ((sources[j].zset != nullptr && sources[j].zset == sources[0].zset) ||
              (sources[j].set != nullptr && sources[j].set == sources[0].set) ||
              sources[j].Find(member).has_value()) {
            return;
          }
        }
        found.emplace_back(std::string(member), score);
      });
    }
  }

  if (cardinality_only) {
    ctx.reply.Integer(cardinality);
    return;
  }
  std::unique_ptr<ZSet> result = BuildZSetResult(ctx, found, /*stored=*/dest_index != 0);
  if (dest_index != 0) {
    KeyAccess dest = FindLocked(ctx, ctx.arg(dest_index), Lookup::kWrite);
    StoreZSetResult(ctx, dest, std::move(result), ctx.spec.name);
    return;
  }
  ReplyElements(ctx, *result, 0, result->size(), false, withscores);
}

void CmdZUnion(CommandContext& ctx) { SetOpGeneric(ctx, 0, 1, SetOp::kUnion, false); }
void CmdZInter(CommandContext& ctx) { SetOpGeneric(ctx, 0, 1, SetOp::kInter, false); }
void CmdZDiff(CommandContext& ctx) { SetOpGeneric(ctx, 0, 1, SetOp::kDiff, false); }
void CmdZUnionStore(CommandContext& ctx) { SetOpGeneric(ctx, 1, 2, SetOp::kUnion, false); }
void CmdZInterStore(CommandContext& ctx) { SetOpGeneric(ctx, 1, 2, SetOp::kInter, false); }
void CmdZDiffStore(CommandContext& ctx) { SetOpGeneric(ctx, 1, 2, SetOp::kDiff, false); }
void CmdZInterCard(CommandContext& ctx) { SetOpGeneric(ctx, 0, 1, SetOp::kInter, true); }

}  // namespace

std::unique_ptr<ZSet> BuildZSetResult(CommandContext& ctx, const ZSetElements& elements,
                                      bool stored) {
  const CollectionLimits& limits = Limits(ctx);
  size_t longest = 0;
  for (const auto& element : elements) longest = std::max(longest, element.first.size());
  auto result = std::make_unique<ZSet>();
  if (!stored || static_cast<int64_t>(elements.size()) > limits.zset_max_listpack_entries ||
      static_cast<int64_t>(longest) > limits.zset_max_listpack_value) {
    result->ConvertToSkiplist();
  }
  double unused;
  for (const auto& [member, score] : elements) result->Add(member, score, {}, limits, &unused);
  return result;
}

void StoreZSetResult(CommandContext& ctx, KeyAccess& dest, std::unique_ptr<ZSet> result,
                     std::string_view event_name, uint64_t dirty) {
  auto size = static_cast<int64_t>(result->size());
  // "new", the reply, then the command's event or "del": the order Redis writes them.
  if (size > 0) {
    ReplaceWithObject(ctx, dest, std::move(result));
    ctx.reply.Integer(size);
    const ChangedKey stored{dest.db, dest.key};
    // The command itself is deterministic given its sources; its name upper case, as every
    // effect's (change_stream.h).
    const std::string name = AsciiUpper(ctx.args[0]);
    std::vector<std::string_view> effect(ctx.args.begin(), ctx.args.end());
    effect[0] = name;
    const KeyEvent event{kZsetEvents, event_name, dest.db, dest.key};
    PublishChange(ctx, dest.db, absl::MakeConstSpan(&stored, 1), absl::MakeConstSpan(&event, 1),
                  effect, dirty);
  } else {
    ctx.reply.Integer(0);
    if (dest.exists()) {
      RemoveKey(dest);
      PublishChange(ctx, dest.db, dest.key, {kGenericEvents, "del"}, {"DEL", dest.key});
    }
  }
}

const std::vector<CommandBinding>& ZSetCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"zadd", CmdZAdd},
      {"zincrby", CmdZIncrBy},
      {"zscore", CmdZScore},
      {"zmscore", CmdZMScore},
      {"zcard", CmdZCard},
      {"zcount", CmdZCount},
      {"zlexcount", CmdZLexCount},
      {"zrange", CmdZRange},
      {"zrangestore", CmdZRangeStore},
      {"zrangebyscore", CmdZRangeByScore},
      {"zrevrangebyscore", CmdZRevRangeByScore},
      {"zrangebylex", CmdZRangeByLex},
      {"zrevrangebylex", CmdZRevRangeByLex},
      {"zrevrange", CmdZRevRange},
      {"zrank", CmdZRank},
      {"zrevrank", CmdZRevRank},
      {"zrem", CmdZRem},
      {"zremrangebyrank", CmdZRemRangeByRank},
      {"zremrangebyscore", CmdZRemRangeByScore},
      {"zremrangebylex", CmdZRemRangeByLex},
      {"zpopmin", CmdZPopMin},
      {"zpopmax", CmdZPopMax},
      {"zmpop", CmdZMPop},
      {"zrandmember", CmdZRandMember},
      {"zunion", CmdZUnion},
      {"zinter", CmdZInter},
      {"zdiff", CmdZDiff},
      {"zunionstore", CmdZUnionStore},
      {"zinterstore", CmdZInterStore},
      {"zdiffstore", CmdZDiffStore},
      {"zintercard", CmdZInterCard},
      {"zscan", CmdZScan},
      {"bzpopmin", CmdBZPopMin},
      {"bzpopmax", CmdBZPopMax},
      {"bzmpop", CmdBZMPop},
  };
  return kCommands;
}

}  // namespace gigakv::server
