// Stream: Redis's append-only log of field/value entries keyed by 128-bit IDs (XADD, XRANGE,
// XDEL, XTRIM...), the data-structure half of the stream commands. No RESP, no store.
//
// Layout, as Redis 7.0's (t_stream.c), so node boundaries, trimming with `~`, XINFO's figures and
// the RDB encoding (STREAM_LISTPACKS_2) are Redis's exactly:
//  - Entries live in nodes; a node is one listpack in Redis's byte format (RedisListpack below)
//    keyed in an ordered map by its master ID (the ID of the entry that opened it).
//  - A node's listpack:
//      node        := master-entry entry*
//      master      := count deleted num-fields field{num-fields} 0
//      entry       := flags ms-diff seq-diff [num-fields] (field? value){num-fields} lp-count
//      flags       := bit 0 DELETED | bit 1 SAMEFIELDS (fields omitted: the master's fields)
//      ms-diff     := entry ms - master ms;  seq-diff := entry seq - master seq (mod 2^64, as an
//                     int64 listpack integer)
//      lp-count    := number of listpack elements of the entry before it (3 + values, or
//                     3 + 1 + 2 * fields without SAMEFIELDS), to walk backwards
//    count/deleted are the node's live and deleted-flagged entries. XDEL and exact XTRIM only
//    flag entries; a node is freed when its last live entry goes.
//  - A new node opens when the tail node has >= stream-node-max-entries entries (live + deleted)
//    or when its bytes + the new entry's field and value bytes >= stream-node-max-bytes.
//
// Complexity: Append O(1) amortized (O(node bytes) to compare fields with the master); Range
// O(log nodes + visited node entries); Delete O(log nodes + node entries); Trim O(removed nodes
// + one node's entries).
//
// Not thread-safe: owned by one record, used under its shard's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/btree_map.h"
#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "core/types/listpack.h"
#include "gigakv/object.h"

namespace gigakv {

// A stream entry ID: milliseconds and sequence, ordered as the pair.
struct StreamID {
  uint64_t ms = 0;
  uint64_t seq = 0;

  static constexpr StreamID Min() { return {0, 0}; }
  static constexpr StreamID Max() { return {UINT64_MAX, UINT64_MAX}; }
  friend constexpr auto operator<=>(const StreamID&, const StreamID&) = default;
  // "ms-seq".
  std::string ToString() const;
  // The next ID (seq + 1, carrying into ms); false when this is Max().
  bool Increment();
  // The previous ID; false when this is Min().
  bool Decrement();
};

// Redis's listpack byte format (listpack.c), as stream nodes and the RDB hold it:
//   listpack := total_bytes:u32 LE  count:u16 LE (65535 = too many to count)  entry*  0xFF
//   entry    := encoding payload backlen
//   encoding := 0xxxxxxx uint7 | 10xxxxxx str6 | 110xxxxx int13 | 1110xxxx str12 | 0xF0 str32 |
//               0xF1 i16 | 0xF2 i24 | 0xF3 i32 | 0xF4 i64 (little-endian payloads)
//   backlen  := byte length of (encoding payload), 7 bits per byte, most significant first,
//               every byte but the first with the high bit set (read from the end backwards).
// A value is stored as an integer exactly when it is the canonical text of an int64. Positions
// are byte offsets of entries; kEnd is past the last entry. Mutations invalidate positions.
namespace redis_listpack {

inline constexpr size_t kHeaderSize = 6;
inline constexpr size_t kEnd = SIZE_MAX;

// An empty listpack (header and terminator).
std::string New();
// Appends an entry (integers in the smallest encoding).
void AppendString(std::string* lp, std::string_view value);
void AppendInteger(std::string* lp, int64_t value);
// Replaces the entry at `pos` by an integer; returns the entry's position (unchanged).
size_t ReplaceInteger(std::string* lp, size_t pos, int64_t value);
// Byte size a value takes as an entry (encoding + payload + backlen), as AppendString writes it.
size_t EntrySize(std::string_view value);

size_t First(std::string_view lp);             // kEnd when empty.
size_t Next(std::string_view lp, size_t pos);  // kEnd after the last entry.
size_t Last(std::string_view lp);              // kEnd when empty.
size_t Prev(std::string_view lp, size_t pos);  // kEnd before the first entry.
ListpackEntry Get(std::string_view lp, size_t pos);
// The entry as an integer: its value, or the string parsed as one (0 if it is not).
int64_t GetInteger(std::string_view lp, size_t pos);
uint32_t TotalBytes(std::string_view lp);

}  // namespace redis_listpack

// Node size limits (stream-node-max-bytes, stream-node-max-entries; 0 = no limit).
struct StreamNodeLimits {
  int64_t max_bytes = 4096;
  int64_t max_entries = 100;
};

// XTRIM / XADD trimming (Redis's streamAddTrimArgs).
struct StreamTrim {
  enum class Strategy : uint8_t { kNone, kMaxLen, kMinId } strategy = Strategy::kNone;
  bool approx = false;  // `~`: remove whole nodes only.
  int64_t limit = 0;    // LIMIT: at most this many entries removed (0 = no limit).
  uint64_t maxlen = 0;
  StreamID minid;
};

struct StreamConsumer;

// A delivered, not yet acknowledged entry of a consumer group (Redis's streamNACK).
struct StreamNack {
  int64_t delivery_time_ms = 0;
  uint64_t delivery_count = 1;
  StreamConsumer* consumer = nullptr;  // The owner; its pel points back at this NACK.
};

// A consumer of a group (Redis's streamConsumer). Its pel holds pointers to NACKs the group's
// pel owns.
struct StreamConsumer {
  std::string name;
  int64_t seen_time_ms = 0;
  absl::btree_map<StreamID, StreamNack*> pel;
};

// A consumer group (Redis's streamCG). Consumers are ordered by name bytes (Redis's rax order).
struct StreamGroup {
  static constexpr int64_t kInvalidEntriesRead = -1;  // Redis's SCG_INVALID_ENTRIES_READ.
  StreamID last_id;
  int64_t entries_read = kInvalidEntriesRead;
  absl::btree_map<StreamID, std::unique_ptr<StreamNack>> pel;
  absl::btree_map<std::string, std::unique_ptr<StreamConsumer>> consumers;

  StreamConsumer* FindConsumer(std::string_view name);
  // Creates the consumer (seen now); nullptr if it exists.
  StreamConsumer* CreateConsumer(std::string_view name, int64_t now_ms);
  // Deletes the consumer and its pending entries; returns how many were pending.
  size_t DeleteConsumer(std::string_view name);
  // Gives the NACK of `id` (created if missing, with count 1) to `consumer`, delivered at
  // `now_ms`: Redis's bookkeeping when XREADGROUP delivers an entry. Returns the NACK.
  StreamNack* Deliver(const StreamID& id, StreamConsumer* consumer, int64_t now_ms);
  // Moves an existing NACK to `consumer` (XCLAIM), keeping its times.
  void Transfer(StreamNack* nack, const StreamID& id, StreamConsumer* consumer);
  // XACK of one ID: true if it was pending.
  bool Acknowledge(const StreamID& id);
};

class Stream final : public Object {
 public:
  enum class AppendStatus : uint8_t {
    kOk,
    kIdNotGreater,  // The ID is not greater than last_id (Redis's EDOM), or seq overflowed.
    kTooLarge,      // Fields and values exceed the node's 32-bit size (Redis's ERANGE).
  };

  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  KeyType type() const override { return KeyType::kStream; }
  std::string_view encoding_name() const override { return "stream"; }
  size_t MemoryUsage() const override;
  size_t Length() const override { return length_; }
  Object* Clone() const override;
  // Every entry's ID text ("ms-seq"), in order.
  void ForEachElement(absl::FunctionRef<void(std::string_view)> fn) const override;

  uint64_t length() const { return length_; }
  const StreamID& last_id() const { return last_id_; }
  const StreamID& first_id() const { return first_id_; }  // {0,0} when empty.
  const StreamID& max_deleted_id() const { return max_deleted_id_; }
  uint64_t entries_added() const { return entries_added_; }
  size_t node_count() const { return nodes_.size(); }
  // The node count of the radix tree Redis would hold the nodes in (XINFO STREAM's
  // radix-tree-nodes): see core/types/stream_rax.h. O(nodes).
  size_t RaxNodeCount() const;

  // XSETID's fields (the caller validated them against the content).
  void set_last_id(const StreamID& id) { last_id_ = id; }
  void set_max_deleted_id(const StreamID& id) { max_deleted_id_ = id; }
  void set_entries_added(uint64_t value) { entries_added_ = value; }

  // XADD: appends an entry with `field_values` (field, value, field, value...; non-empty, even).
  // The ID: with `id` and `seq_given`, that ID; with `id` only ("ms-*"), that ms and seq 0, or
  // last_id.seq + 1 when ms equals last_id.ms; without `id`, Redis's streamNextID of
  // `now_ms` (max(now, last ms), seq carried). The ID must exceed last_id.
  AppendStatus Append(absl::Span<const std::string_view> field_values, const StreamID* id,
                      bool seq_given, uint64_t now_ms, const StreamNodeLimits& limits,
                      StreamID* added);

  // Calls fn(id, field_values) for each live entry with start <= id <= end, ascending, or
  // descending with `reverse`, until fn returns false. field_values alternates fields and values
  // (views valid during the call only). fn must not modify the stream.
  void Range(const StreamID& start, const StreamID& end, bool reverse,
             absl::FunctionRef<bool(const StreamID&, absl::Span<const std::string_view>)> fn) const;

  // XDEL of one ID: true if a live entry was flagged deleted (max_deleted_id is updated by the
  // caller's rule: the command raises it to the greatest ID it deleted).
  bool Delete(const StreamID& id);

  // Redis's streamTrim; returns the number of entries removed.
  int64_t Trim(const StreamTrim& trim);

  // The first or last live entry's ID (Redis's streamGetEdgeID); false when empty.
  bool EdgeId(bool first, StreamID* id) const;

  // --- Consumer groups (ordered by name bytes) ---
  StreamGroup* FindGroup(std::string_view name);
  const StreamGroup* FindGroup(std::string_view name) const;
  // nullptr if the group exists.
  StreamGroup* CreateGroup(std::string_view name, const StreamID& last_id, int64_t entries_read);
  bool DestroyGroup(std::string_view name);
  const absl::btree_map<std::string, std::unique_ptr<StreamGroup>>& groups() const {
    return groups_;
  }

  // Redis's streamEstimateDistanceFromFirstEverEntry: the entries-read counter a group whose last
  // delivered ID is `id` would have, or StreamGroup::kInvalidEntriesRead when it cannot be known.
  int64_t EstimateDistance(const StreamID& id) const;
  // Redis's streamRangeHasTombstones: whether a deleted entry may lie in [start, end].
  bool RangeHasTombstones(const StreamID& start, const StreamID& end) const;
  // XREADGROUP ">": delivers up to `count` (0 = all) entries after the group's last ID to
  // `consumer` (nullptr with `noack`... the consumer is needed only for the NACKs), advancing the
  // group's last ID and entries-read as Redis does, and creating/transferring NACKs unless
  // `noack`. Calls fn(id, field_values) for each (views valid during the call).
  void DeliverNew(StreamGroup& group, StreamConsumer* consumer, size_t count, bool noack,
                  int64_t now_ms,
                  absl::FunctionRef<void(const StreamID&, absl::Span<const std::string_view>)> fn);
  // The group's lag (XINFO GROUPS; negative when the group's entries-read was set past the
  // entries added), or nullopt when it cannot be known (Redis replies nil).
  std::optional<int64_t> GroupLag(const StreamGroup& group) const;

  // Nodes as Redis's RDB writes them: fn(master ID, listpack bytes), in order.
  void ForEachNode(absl::FunctionRef<void(const StreamID&, std::string_view)> fn) const;
  // RDB loading: adds a node whose listpack passed IsValidNode; false if a node with that master
  // ID exists. The loader sets the metadata afterwards (setters, set_length, set_first_id).
  bool AddNode(const StreamID& master, std::string listpack);
  // Whether `listpack`, already checked to be a well-formed Redis listpack (every entry's
  // encoding and backlen in bounds), has a stream node's structure: Redis's deep
  // streamValidateListpackIntegrity (master entry, then exactly count + deleted entries, each
  // with integer flags, ID deltas, field counts and a matching lp-count), and no negative count.
  // Every Stream method is safe on nodes that pass.
  static bool IsValidNode(std::string_view listpack);
  void set_length(uint64_t length) { length_ = length; }
  void set_first_id(const StreamID& id) { first_id_ = id; }

 private:
  // Visits one node's entries (live and deleted) forward: fn(pos of flags, id, flags).
  template <typename Fn>
  static void ForEachNodeEntry(std::string_view lp, const StreamID& master, Fn&& fn);

  absl::btree_map<StreamID, std::string> nodes_;  // master ID -> listpack
  absl::btree_map<std::string, std::unique_ptr<StreamGroup>> groups_;
  uint64_t length_ = 0;
  StreamID last_id_;
  StreamID first_id_;
  StreamID max_deleted_id_;
  uint64_t entries_added_ = 0;
};

}  // namespace gigakv
