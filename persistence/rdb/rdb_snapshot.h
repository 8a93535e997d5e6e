// Point-in-time RDB snapshots of a live Store, without fork (SAVE, BGSAVE, the log's rewrite).
//
// Begin() is the snapshot's instant: it marks every shard (Store::BeginCapture). From then on,
// the first thread to lock a marked shard encodes the shard's records into an RDB chunk before it
// reads or changes anything (Store::ShardCapture); WriteTo() walks the shards in order, locking
// each one (which captures it unless a client's lock got there first) and passes the chunks to
// the sink as they come. So the file holds exactly the dataset as of Begin() while clients keep
// reading and writing, and the extra memory is the chunks waiting for the sink: the one the walk
// just encoded plus those clients encoded meanwhile (each one shard's keys), never a copy of the
// store.
//
// File layout: the header and AUX fields (RdbFileInfo); the function libraries (SetFunctions);
// `SELECTDB db RESIZEDB keys expires` for each database in use, with its sizes counted right after
// the instant (a sizing hint for the loader); then one run per shard and database, `SELECTDB db`
// and the keys, the SELECTDB left out when the run before was of the same database (redis-server
// and gigakv load any number of SELECTDB runs, in any order); EOF and the CRC-64. Keys already
// expired but not yet removed are written with their expiry, as Redis writes them; the loader drops
// them.
//
// Threading: Begin, WriteTo and the accessors are for the snapshot's owner (one thread at a
// time; progress accessors from any thread); CaptureShard runs on any thread under a shard lock,
// taking only the snapshot's queue lock (a leaf). Cancel may be called from any thread.
// Costs: a client that touches a shard the walk has not reached waits while that shard's keys
// are encoded (about 1,000 small keys, tens of microseconds, with the default 1024 shards; a
// shard holding one huge collection waits for all of it).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gigakv/access_stamp.h"
#include "gigakv/store.h"
#include "persistence/rdb/rdb_file.h"
#include "persistence/rdb/rdb_io.h"

namespace gigakv::persistence::rdb {

struct SnapshotOptions {
  RdbWriter::Options writer;  // rdbcompression, rdbchecksum.
  RdbFileInfo info;
  // The per-key access field Redis writes for the eviction policy in force: IDLE under an LRU
  // policy, FREQ under an LFU one, none otherwise.
  enum class AccessField : uint8_t { kNone, kIdle, kFreq };
  AccessField access_field = AccessField::kNone;
  int lfu_decay_minutes = 1;
  // rdb-key-save-delay (a test knob): the walk sleeps this many microseconds per key it writes,
  // asked before each shard's keys (so a CONFIG SET applies to a save in progress); unset = 0.
  std::function<int64_t()> key_delay_us;
  // Writes are handed to the sink in pieces of about this size.
  size_t flush_bytes = 256 * 1024;
};

class RdbSnapshot final : public Store::ShardCapture {
 public:
  RdbSnapshot(Store& store, SnapshotOptions options);
  ~RdbSnapshot() override;  // Ends the capture if WriteTo did not.
  RdbSnapshot(const RdbSnapshot&) = delete;
  RdbSnapshot& operator=(const RdbSnapshot&) = delete;

  // Takes the snapshot's instant. False if another capture of the store is in progress. Counts
  // each database's keys and expires first (the file's RESIZEDB hints, keys_at_begin()): exact
  // when the caller keeps writers out meanwhile, as Snapshots does, else a close hint.
  bool Begin();
  // Writes the whole file to `sink` (after Begin), then ends the capture. Returns the sink's
  // first error, absl::CancelledError after Cancel(), or ResourceExhausted if a chunk could not
  // be allocated. Call once.
  absl::Status WriteTo(const RdbSink& sink);
  // The function libraries' code (FUNCTION2 items, written after the AUX fields), taken at the
  // instant by the caller (the store does not hold them). Before WriteTo.
  void SetFunctions(std::vector<std::string> codes) { functions_ = std::move(codes); }
  // Stops WriteTo at its next shard (it returns CancelledError).
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }

  // The keys of all databases at Begin() (INFO current_save_keys_total).
  uint64_t keys_at_begin() const { return keys_at_begin_; }
  // Progress, readable from any thread while WriteTo runs.
  uint64_t keys_written() const { return keys_.load(std::memory_order_relaxed); }
  uint64_t bytes_written() const { return bytes_.load(std::memory_order_relaxed); }
  uint32_t shards_done() const { return shards_done_.load(std::memory_order_relaxed); }
  // The most bytes of encoded chunks held at once waiting for the sink.
  size_t peak_pending_bytes() const { return peak_pending_.load(std::memory_order_relaxed); }
  // Shards encoded by other threads than WriteTo's (clients that got there first).
  uint32_t shards_captured_by_clients() const {
    return by_clients_.load(std::memory_order_relaxed);
  }

  void CaptureShard(uint32_t index, Shard& shard) noexcept override;

 private:
  struct Chunk {
    std::string bytes;
    uint64_t keys = 0;
    int first_db = -1;  // The database of the chunk's first run (-1: empty chunk).
    int last_db = -1;
    size_t first_select_bytes = 0;  // Its SELECTDB's bytes, skipped when already selected.
  };
  // Encodes every database of `shard` as SELECTDB runs into `chunk` (replacing it).
  void EncodeShard(Shard& shard, Chunk* chunk);
  void NotePending(size_t bytes);

  Store& store_;
  const SnapshotOptions options_;
  bool begun_ = false;
  bool ended_ = false;
  struct DbCounts {
    uint64_t keys = 0;
    uint64_t expires = 0;
  };
  std::vector<DbCounts> db_counts_;  // Per database, at Begin().
  std::vector<std::string> functions_;
  uint64_t keys_at_begin_ = 0;
  std::atomic<bool> cancelled_{false};
  std::atomic<uint64_t> keys_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint32_t> shards_done_{0};
  std::atomic<size_t> peak_pending_{0};
  std::atomic<uint32_t> by_clients_{0};

  // The walk's own chunk, encoded on WriteTo's thread (no lock needed).
  Chunk walker_chunk_;

  std::mutex mutex_;  // Guards the fields below. A leaf lock (taken under shard locks).
  std::deque<Chunk> client_chunks_;
  size_t pending_bytes_ = 0;
  bool failed_ = false;  // A capture ran out of memory: the file cannot be complete.
};

// --- Loading into a store --------------------------------------------------------------------

struct StoreLoadOptions {
  RdbLoadOptions load;  // Limits, databases, expiry policy (drop_expired, now_ms).
  // The access stamps new keys get; a key's IDLE (under kLru) or FREQ (under kLfu) from the
  // file sets its stamp, as Redis's loader does.
  AccessMode access_mode = AccessMode::kLru;
  int64_t coarse_now_ms = 0;  // The clock the access stamps use.
  // FUNCTION2 items: each library's code (unset: a file with functions is refused).
  std::function<absl::Status(std::string_view code)> on_function;
  // Called about every `progress_every_bytes` of input with the bytes read and keys loaded.
  std::function<void(uint64_t bytes, uint64_t keys)> on_progress;
  uint64_t progress_every_bytes = 256 << 10;
  // key-load-delay (a test knob): microseconds to sleep after each key.
  int64_t key_delay_us = 0;
  // RESIZEDB hints presize each shard's table, but never beyond this many keys in all (a file
  // may claim any count: the caller passes what the input's size allows, e.g. its bytes / 4).
  uint64_t max_reserved_keys = 0;
  // A key already present is replaced (DEBUG RELOAD MERGE) instead of being an error.
  bool replace_existing = false;
  // AUX fields, passed through (optional).
  std::function<absl::Status(std::string_view key, std::string_view value)> on_aux;
};

// Loads an RDB file into `store`, adding to what it holds: strings in Redis's encodings,
// collections in the encodings the limits choose (compact ones stored inline). A key already
// present in its database is an error ("Duplicate key '<key>' found in DB <n> at offset <o>";
// Redis stops with "Duplicated key found in RDB file"); the keys loaded before an error stay.
// Takes each key's shard lock only to insert it: clients may run meanwhile (the server refuses
// them with -LOADING). Errors as LoadRdb's.
absl::StatusOr<RdbLoadResult> LoadRdbIntoStore(RdbReader& reader, const StoreLoadOptions& options,
                                               Store& store);

}  // namespace gigakv::persistence::rdb
