// KeyTable: one database's keys within one shard, stored GigaCache-style.
//
// Records are length-prefixed byte records appended to one growable byte arena; a compact
// open-addressing index (8 bytes a slot) finds them. Overwrites go in place when the new record
// fits, otherwise the record is appended and the old bytes counted as a hole; the arena is
// compacted when holes pass a quarter of it, so memory stays within a fixed factor of live data.
//
// Record grammar (all integers little-endian):
//   record  = header:u8 access:u16 varint(key_len) [varint(value_len)] [expire_ms:i64]
//             key:bytes(key_len) payload
//   header  = kind (bits 0-3, a ValueKind) | has_expire (bit 4)
//   payload = bytes(value_len)          for inline kinds: kStringInt/Embstr/Raw (the string),
//                                       kInlineHash/Set/ZSet (a DenseListpack's entries: its
//                                       buffer without the 8-byte header) and kInlineIntset
//                                       (an Intset's buffer, byte for byte)
//           | pointer:u64               for kStringExternal (std::string*) and kObject (Object*);
//                                       these kinds carry no value_len
//   access  = LRU clock (seconds, 16 bits) or LFU counter, per maxmemory-policy
//
// Index slot grammar: u64 = fingerprint:u32 (high) | (arena_offset + 1):u32 (low); 0 = empty.
// fingerprint = upper 32 bits of the key's 64-bit hash. The home slot is
// (fingerprint * capacity) >> 32, so slots are ordered by fingerprint: that makes SCAN cursors
// (fingerprints) stable across resizes. Linear probing with backward-shift deletion (no
// tombstones); the index grows by 1.25x past 7/8 load and shrinks to 5/8 load below 1/4. The
// probing, deletion and SCAN walk are core/open_addressing.h's, shared with the collections.
// Keys are always compared in full: equal fingerprints never alias two keys.
//
// Contract: not thread-safe; the owning shard's lock must be held. A Slot and any RecordView
// (its string_views) are valid only until the next mutating call on this table.
// Complexity: Find/Put/Erase expected O(1); compaction is O(live bytes) and amortized.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "gigakv/object.h"

namespace gigakv {

struct RecordView {
  ValueKind kind = ValueKind::kStringRaw;
  std::string_view key;
  std::string_view str;      // String kinds: the value bytes (inline or external); inline
                             // collection kinds: the Listpack/Intset buffer.
  Object* object = nullptr;  // kObject only.
  int64_t expire_ms = 0;     // Absolute Unix ms; 0 = no expiry.
  uint16_t access = 0;
  bool unshared = false;  // See ValueSpec::unshared.

  bool is_string() const { return kind <= ValueKind::kStringExternal; }
  KeyType type() const {
    return kind == ValueKind::kObject ? object->type() : InlineCollectionType(kind);
  }
};

// What to store. For kStringExternal, `external` is adopted (must be heap-allocated); for kObject,
// `object` is adopted. Inline kinds copy `bytes`.
struct ValueSpec {
  ValueKind kind = ValueKind::kStringRaw;
  std::string_view bytes;
  std::string* external = nullptr;
  Object* object = nullptr;
  // Redis shares the objects of small integers (OBJECT REFCOUNT 2147483647) except those it
  // duplicated, as COPY does (refcount 1). gigakv has no objects: this flag remembers that a
  // value is such a duplicate. It moves with the record (RENAME, MOVE, SWAPDB, TTL changes) and
  // is dropped by any write of the value, in place (OverwriteInline) or by Put.
  bool unshared = false;
};

class KeyTable {
 public:
  using Slot = uint32_t;
  static constexpr Slot kNoSlot = UINT32_MAX;
  static constexpr uint64_t kScanEnd = 1ULL << 32;  // Fingerprint-space end for ScanRange.

  KeyTable() = default;
  ~KeyTable();
  KeyTable(const KeyTable&) = delete;
  KeyTable& operator=(const KeyTable&) = delete;

  Slot Find(std::string_view key, uint64_t hash) const;
  RecordView View(Slot slot) const;

  // Inserts or overwrites `key`. An overwritten record's external value/object is freed. Returns
  // the key's slot.
  // `may_defer_free`: a large collection replaced may go to the large-object sink; false frees
  // it in place (the caller replaces a temporary object by its own inline form).
  Slot Put(std::string_view key, uint64_t hash, const ValueSpec& value, int64_t expire_ms,
           uint16_t access, bool may_defer_free = true);
  // Put for a caller that has just looked `key` up: `slot` must be what Find(key, hash) returns
  // now (kNoSlot if absent), so the lookup is not repeated. Checked by assert in debug builds.
  Slot PutAt(Slot slot, std::string_view key, uint64_t hash, const ValueSpec& value,
             int64_t expire_ms, uint16_t access, bool may_defer_free = true);
  // Removes the record and frees its external value/object.
  void Erase(Slot slot);
  // Removes the record but hands its external value/object to the caller (who then owns it):
  // `*value` receives the kind and, for inline kinds, a copy of the bytes in `*inline_copy`.
  void Release(Slot slot, ValueSpec* value, std::string* inline_copy);
  // Sets (expire_ms > 0) or clears (0) the expiry. May move the record.
  void SetExpire(Slot slot, int64_t expire_ms);
  void SetAccess(Slot slot, uint16_t access);
  // Rewrites an inline value's bytes in place (INCR from 41 to 42): `bytes` must be exactly as
  // long as the value now stored. Kind, key, TTL and access stamp are kept; `unshared` is
  // cleared (a new value). O(bytes).
  void OverwriteInline(Slot slot, std::string_view bytes);
  // Changes a kStringExternal value in place (SETRANGE, APPEND on a large string): `edit` gets
  // the value to modify, which stays external whatever its new length. Kind, key, TTL and
  // access stamp are kept; `unshared` is cleared. O(what `edit` does): a big string is neither
  // copied nor moved.
  void EditExternal(Slot slot, absl::FunctionRef<void(std::string&)> edit);
  // Sizes the index for `keys` records without growing steps (a load that knows its size).
  // Never shrinks. O(capacity).
  void Reserve(size_t keys);
  // Frees everything.
  void Clear();
  // Exchanges the contents of two tables (SWAPDB, detaching a table to free it unlocked). Each
  // keeps its deadline flag and large-object sink.
  void Swap(KeyTable& other) noexcept;
  // `flag` (owned by the caller, may be shared by many tables) is set whenever a key gets a
  // deadline here; the owner clears it to learn cheaply that no key anywhere has one.
  void set_deadline_flag(std::atomic<bool>* flag) { deadline_flag_ = flag; }
  // Collections of more than this many elements, and string values of at least this many
  // bytes, that a write replaces (Put over them) or Erase removes go to the large-object sink,
  // if one is set, instead of being freed in place (a string as an Object of type kString).
  static constexpr size_t kLargeObjectElements = 64;
  static constexpr size_t kLargeStringBytes = 1 << 20;
  using LargeObjectSink = std::function<void(std::unique_ptr<Object> object)>;
  // `sink` (owned by the caller, may be shared by many tables; empty = free in place) frees
  // large collections off the calling thread, so that no single write or delete takes time
  // proportional to what it drops. Clear() always frees in place. Kept by Swap. The sink may
  // throw: the object is then freed in place.
  void set_large_object_sink(const LargeObjectSink* sink) { large_object_sink_ = sink; }

  size_t size() const { return size_; }
  size_t expires_count() const { return expires_; }
  // Heap bytes this table holds: arena capacity, index, external values and objects.
  size_t MemoryUsage() const;
  size_t arena_bytes() const { return arena_used_; }
  size_t arena_capacity() const { return arena_capacity_; }
  size_t dead_bytes() const { return dead_bytes_; }
  size_t capacity() const { return capacity_; }
  // Bytes of one record including its external payload (MEMORY USAGE).
  size_t RecordMemory(Slot slot) const;

  // Appends the slots of all records whose fingerprint lies in [cursor, next) to `out`, visiting
  // roughly `count` records; returns `next` (kScanEnd when the table is done). Ranges are disjoint
  // and fingerprints do not change on resize, so every key present for a whole pass is returned
  // exactly once, even if the table grows or shrinks between calls.
  uint64_t ScanRange(uint64_t cursor, size_t count, std::vector<Slot>* out) const;
  // The occupied slot at or after `start` (wrapping), or kNoSlot if empty. For sampling.
  Slot OccupiedAtOrAfter(size_t start) const;

  // --- Deadlines (active expiry) --------------------------------------------------------------
  // Every record given an expiry also gets an entry in a min-heap of (deadline, fingerprint),
  // 8 bytes each: deadline as ms since a per-table base (clamped to 32 bits, ~49 days; a clamped
  // entry is pushed again when it comes up early), fingerprint to find the record. Entries go
  // stale when a key is deleted or its expiry changes; they are skipped when popped, and the heap
  // is rebuilt from the index when stale entries outnumber live ones.

  // Pops the next entry whose deadline is <= now_ms; false if none is due.
  bool PopDue(int64_t now_ms, uint32_t* fingerprint);
  // A record with this fingerprint whose expiry is set and <= now_ms, or kNoSlot.
  Slot FindExpired(uint32_t fingerprint, int64_t now_ms) const;
  // Sum and count of the remaining TTLs (deadline - now_ms > 0) of up to `limit` heap entries:
  // a sample for INFO's avg_ttl (stale entries may be counted).
  void SampleTtls(int64_t now_ms, size_t limit, int64_t* sum_ms, int64_t* count) const;
  // Records pending in the heap (live and stale).
  size_t deadline_entries() const { return deadlines_.size(); }

  // Test hook: the fingerprint of a slot.
  uint32_t FingerprintAt(Slot slot) const { return static_cast<uint32_t>(index_[slot] >> 32); }

 private:
  uint32_t OffsetOf(Slot slot) const { return static_cast<uint32_t>(index_[slot]) - 1; }
  size_t RecordSize(uint32_t offset) const;
  uint32_t AppendRecord(size_t size);
  void WriteRecord(uint32_t offset, std::string_view key, const ValueSpec& value, int64_t expire_ms,
                   uint16_t access);
  // Frees the record's external value or object; a large object goes to the sink when
  // `may_defer` and one is set.
  void FreePayload(uint32_t offset, bool may_defer = true);
  void EraseImpl(Slot slot, bool free_payload);
  void GrowIndex();
  void MaybeShrinkIndex();
  void ResizeIndex(size_t new_capacity);
  void MaybeCompact();
  void Compact();
  void PushDeadline(uint32_t fingerprint, int64_t expire_ms);
  void RebuildDeadlines();

  uint64_t* index_ = nullptr;
  size_t capacity_ = 0;
  size_t size_ = 0;
  size_t expires_ = 0;
  char* arena_ = nullptr;
  size_t arena_used_ = 0;
  size_t arena_capacity_ = 0;
  size_t dead_bytes_ = 0;
  size_t external_bytes_ = 0;
  std::atomic<bool>* deadline_flag_ = nullptr;
  const LargeObjectSink* large_object_sink_ = nullptr;
  std::vector<uint64_t> deadlines_;  // Min-heap of (deadline offset << 32 | fingerprint).
  int64_t deadline_base_ms_ = 0;
};

// Encoded size of a record (exposed for tests and memory estimates).
size_t EncodedRecordSize(std::string_view key, const ValueSpec& value, bool has_expire);

}  // namespace gigakv
