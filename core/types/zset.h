// ZSet: a sorted set (members with double scores, ordered by score, then by member bytes), the
// data-structure half of Redis's sorted-set commands. No RESP, no store.
//
// Two encodings, as in Redis (OBJECT ENCODING names):
//  - "listpack": one Listpack of alternating member and score entries, sorted. Used while the set
//    holds at most zset-max-listpack-entries members of at most zset-max-listpack-value bytes.
//    Score entry grammar (see docs/store-format.md):
//      score := int64 entry                  integral scores with |score| < 2^53 (-0 stored as 0)
//             | string of 9 bytes: f64 'd'   any other score, IEEE-754 little-endian, then 'd'
//    (the trailing 'd' keeps the 9 bytes from ever reading as a canonical integer text).
//  - "skiplist": a counted B+tree of element pointers ordered by (score, member), giving rank
//    queries in O(log n), plus a flat hash set of the same pointers keyed by member. Each element
//    is one malloc'd blob:
//      element := score:f64 member_len:varint member_bytes
//    (varint: 7 bits per byte, low bits first, high bit set on every byte but the last).
// Conversion is one way (listpack -> skiplist), when an add would break either limit.
//
// Positions are ranks: 0 is the lowest (score, member). Most queries are expressed as rank spans
// [begin, end) (ScoreSpan, LexSpan) followed by a visit or an erase over that span.
//
// Complexity (n = size): listpack operations are O(n); skiplist lookups by member O(1), rank and
// span queries O(log n), visiting k elements O(log n + k), erasing k elements O(k log n).
//
// Not thread-safe: owned by one record, used under its shard's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/functional/function_ref.h"
#include "core/types/listpack.h"
#include "gigakv/object.h"

namespace gigakv {

// A score interval with optional exclusive ends ("(1.5"); ±inf allowed.
struct ZScoreRange {
  double min = 0;
  double max = 0;
  bool min_exclusive = false;
  bool max_exclusive = false;
};

// A member interval for the BYLEX commands: "-" and "+" are the unbounded ends, "[x" inclusive,
// "(x" exclusive.
struct ZLexRange {
  enum class Kind : uint8_t { kNegInf, kPosInf, kInclusive, kExclusive };
  Kind min_kind = Kind::kNegInf;
  Kind max_kind = Kind::kPosInf;
  std::string min;
  std::string max;
};

// ZADD's conditions (Redis's ZADD_IN_* flags).
struct ZAddFlags {
  bool nx = false;    // Only add new members.
  bool xx = false;    // Only update existing members.
  bool gt = false;    // Update only when the new score is greater.
  bool lt = false;    // Update only when the new score is lower.
  bool incr = false;  // The score is an increment of the current one (0 for a new member).
};

enum class ZAddOutcome : uint8_t {
  kAdded,      // A new member.
  kUpdated,    // An existing member whose score changed.
  kUnchanged,  // An existing member kept its score (same score).
  kSkipped,    // Not applied because of NX/XX/GT/LT (ZADD INCR then replies nil).
  kNan,        // INCR produced NaN; nothing changed.
};

struct ZElement {
  std::string member;
  double score = 0;
};

class ZSet final : public Object {
 public:
  ZSet() = default;
  ~ZSet() override;
  ZSet(const ZSet&) = delete;
  ZSet& operator=(const ZSet&) = delete;

  // Object.
  KeyType type() const override { return KeyType::kZSet; }
  std::string_view encoding_name() const override;
  size_t MemoryUsage() const override;
  size_t Length() const override { return size(); }
  Object* Clone() const override;
  void ForEachElement(absl::FunctionRef<void(std::string_view)> fn) const override;

  size_t size() const;
  bool is_listpack() const { return large_ == nullptr; }

  // A listpack-encoded set holding a copy of `bytes`, as CompactBytes() returned them.
  static std::unique_ptr<ZSet> FromListpack(std::string_view bytes);
  // The listpack's entries (DenseListpack::entries) while the set is a non-empty listpack, else
  // empty. Valid until the next mutation.
  std::string_view CompactBytes() const { return is_listpack() ? listpack_.entries() : ""; }
  // The score of `member` in `bytes` (as CompactBytes() returned them, e.g. an inline record),
  // read in place without building the set; nullopt when absent. O(n).
  static std::optional<double> CompactScore(std::string_view bytes, std::string_view member);

  // Adds or updates `member` (Redis's zsetAdd). *new_score receives the member's score after the
  // call for kAdded/kUpdated/kUnchanged. Converts to the skiplist encoding first when the add
  // would exceed `limits`.
  ZAddOutcome Add(std::string_view member, double score, const ZAddFlags& flags,
                  const CollectionLimits& limits, double* new_score);
  // Converts to the skiplist encoding now (no-op if already there).
  void ConvertToSkiplist();

  std::optional<double> Score(std::string_view member) const;
  // The member's rank (0 = lowest score; with `reverse`, 0 = highest); nullopt when absent.
  std::optional<size_t> Rank(std::string_view member, bool reverse) const;
  bool Remove(std::string_view member);

  // Rank spans [begin, end) in ascending order; begin == end when empty.
  std::pair<size_t, size_t> ScoreSpan(const ZScoreRange& range) const;
  std::pair<size_t, size_t> LexSpan(const ZLexRange& range) const;

  // Calls fn(member, score) for the ranks [begin, end) (end clipped to size()), ascending, or
  // descending from end - 1 down to begin with `reverse`. The member view is valid during the
  // call only. fn must not modify the set.
  void Visit(size_t begin, size_t end, bool reverse,
             absl::FunctionRef<void(std::string_view, double)> fn) const;
  // The element at `rank` (< size()).
  ZElement At(size_t rank) const;
  // Erases the ranks [begin, end) (end clipped to size()); returns how many were erased.
  size_t EraseSpan(size_t begin, size_t end);

  // ZSCAN: from `cursor` (0 = start), visits at least `count` elements (all of them for the
  // listpack encoding, and every element sharing the last visited score) and returns the next
  // cursor, 0 when done. The cursor encodes a score, so elements present for the whole scan are
  // visited at least once whatever is added or removed meanwhile.
  uint64_t Scan(uint64_t cursor, size_t count,
                absl::FunctionRef<void(std::string_view, double)> fn) const;

 private:
  struct Large;

  // Listpack helpers.
  void ListpackInsert(std::string_view member, double score);
  DenseListpack::Pos ListpackFind(std::string_view member, double* score) const;
  // First rank whose element satisfies a monotone (false...true) predicate.
  size_t LowerBound(absl::FunctionRef<bool(std::string_view, double)> pred) const;

  DenseListpack listpack_;  // The listpack encoding (empty once converted).
  Large* large_ = nullptr;  // The skiplist encoding; owned; nullptr while a listpack.
};

// Ordering helpers shared with the command layer and tests.
// Redis's lexicographic comparison of members (memcmp, then length).
inline int CompareMembers(std::string_view a, std::string_view b) { return a.compare(b); }
bool ScoreAboveMin(double score, const ZScoreRange& range);
bool ScoreBelowMax(double score, const ZScoreRange& range);
bool MemberAboveMin(std::string_view member, const ZLexRange& range);
bool MemberBelowMax(std::string_view member, const ZLexRange& range);

}  // namespace gigakv
