// Snapshots: the RDB file of the dataset, as Redis 7.0 keeps it, without fork.
//
//   SAVE                 writes the snapshot on the calling thread (the client waits; others
//                        keep running, the file is still of one instant)
//   BGSAVE [SCHEDULE]    writes it on a background thread; SCHEDULE (and BGSAVE inside EXEC)
//                        only schedules one when a save is running
//   save points          Cron starts a background save after N changes in M seconds, and retries
//                        a failed one after 5 s, as Redis
//   stop-writes-on-bgsave-error   after a failed background save, with save points set, writes
//                        (and PING) are refused with -MISCONF until a save succeeds
//   SHUTDOWN / SIGTERM   PrepareShutdown: stops a background save, saves when asked or when save
//                        points are set, unless NOSAVE
//   start-up             LoadAtStart: loads `dbfilename` before serving; commands without the
//                        `loading` flag get -LOADING meanwhile; a corrupt file stops start-up
//   DEBUG RELOAD         Reload: save, flush, load
// Files: written as temp-<pid>.rdb in the working directory (the `dir` directive's), fsynced
// (every 4 MB with rdb-save-incremental-fsync), renamed over `dbfilename`, directory fsynced.
//
// The snapshot's instant is taken under TransactionGate's exclusive scope (no EXEC half done)
// and Store::BeginCapture (persistence/rdb/rdb_snapshot.h explains the capture): clients keep
// reading and writing while the walk runs; a write to a shard the walk has not reached makes that
// shard's keys be encoded first. rdb_changes_since_last_save counts the changes since the last
// successful save's instant.
//
// Threading: every method is thread-safe. Save, BGSAVE's start and PrepareShutdown run on the
// caller's thread (an I/O thread, the cron, a signal handler's thread); one background thread at
// a time writes a BGSAVE and is joined by Cron, the next start, Abort or the destructor.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "persistence/file_system.h"
#include "persistence/rdb/rdb_snapshot.h"

namespace gigakv::server {

class FunctionLibraries;

class Keyspace;
class Lifecycle;
class Settings;
class Stats;
class TransactionGate;

class Snapshots {
 public:
  // `functions`: FUNCTION's libraries, saved in every snapshot and loaded from one.
  Snapshots(Settings& settings, Keyspace& keyspace, Stats& stats, Lifecycle& lifecycle,
            TransactionGate& gate, FunctionLibraries& functions);
  ~Snapshots();  // Aborts a background save and joins its thread.
  Snapshots(const Snapshots&) = delete;
  Snapshots& operator=(const Snapshots&) = delete;

  // SAVE. FailedPrecondition "Background save already in progress" while a BGSAVE runs;
  // otherwise the save's error (logged as Redis logs it).
  absl::Status Save();
  // BGSAVE: starts a background save. FailedPrecondition "Background save already in
  // progress" when one runs; the error of a failed start (the temp file cannot be created).
  absl::Status StartBackgroundSave();
  // Runs a background save as soon as none is running (BGSAVE SCHEDULE, BGSAVE inside EXEC).
  void ScheduleBackgroundSave() { scheduled_.store(true); }
  // Stops a running background save: its temp file is removed, it counts as neither success nor
  // failure (Redis kills its child the same way for FLUSHALL and SHUTDOWN). Waits for it.
  void AbortBackgroundSave();
  bool background_save_in_progress() const { return bgsave_running_.load(); }

  // Once per cron tick: reaps a finished background save, then starts a scheduled one or one a
  // save point asks for.
  void Cron();

  // -MISCONF: a background save failed, stop-writes-on-bgsave-error is on and save points are
  // set.
  bool writes_refused() const;

  // SHUTDOWN's and the signals' save: stops a background save, then saves unless `nosave`, if
  // `save` or save points are set. An error means the shutdown must not go on (unless forced).
  absl::Status PrepareShutdown(bool save, bool nosave);

  // Loads `dbfilename` from the working directory into the (empty) store, if the file exists:
  // NotFound when it does not (not an error for start-up), the load's error otherwise (naming
  // the file, the offset and the problem). Keys already expired are dropped. loading() is true
  // meanwhile.
  absl::Status LoadAtStart();
  // Before serving, when LoadAtStart will run: clients get -LOADING from the first connection
  // on, so none sees the store before the file is in it. LoadAtStart ends it.
  void BeginLoading() { loading_.store(true); }
  // Loads the file into the store as LoadAtStart does (DEBUG RELOAD, after its save and flush);
  // a key (or function library) already present is an error unless `replace_existing`.
  absl::Status Load(bool replace_existing);
  // Loads the RDB file at `path` (read through `fs`) as Load does; keys already expired are
  // kept unless `drop_expired` (an append-only log's base: the log's later effects may touch
  // them). *bytes_read (when given): where the RDB data ended (its checksum trailer included);
  // a Redis 6 append-only file continues there with RESP commands.
  absl::Status LoadFile(const std::string& path, bool replace_existing, bool drop_expired,
                        persistence::FileSystem* fs = persistence::PosixFileSystem(),
                        uint64_t* bytes_read = nullptr);
  bool loading() const { return loading_.load(std::memory_order_relaxed); }

  // A point-in-time snapshot of the store as this server's settings write it (compression,
  // checksum, the eviction policy's access fields), its instant taken now: `at_instant` runs
  // at that instant, while no write can happen (the append-only log's rewrite switches files
  // there). FailedPrecondition while another snapshot runs (one capture at a time).
  absl::StatusOr<std::unique_ptr<persistence::rdb::RdbSnapshot>> BeginSnapshot(
      bool aof_base, const std::function<void()>& at_instant);

  // INFO persistence.
  struct Info {
    bool loading = false;
    int64_t loading_start_time_s = 0;
    uint64_t loading_total_bytes = 0;
    uint64_t loading_loaded_bytes = 0;
    uint64_t loading_loaded_keys = 0;
    int64_t loading_elapsed_ms = 0;
    uint64_t changes_since_last_save = 0;
    bool bgsave_in_progress = false;
    int64_t last_save_time_s = 0;
    bool last_bgsave_ok = true;
    int64_t last_bgsave_time_s = -1;
    int64_t current_bgsave_time_s = -1;
    uint64_t saves = 0;
    uint64_t last_load_keys_expired = 0;
    uint64_t last_load_keys_loaded = 0;
    uint64_t current_save_keys_processed = 0;
    uint64_t current_save_keys_total = 0;
    uint64_t last_peak_pending_bytes = 0;  // The last save's most encoded bytes held at once.
    uint64_t last_shards_by_clients = 0;   // Shards clients' writes encoded in the last save.
  };
  Info info() const;

 private:
  struct Job;  // One save: its snapshot, file and timing.
  // Takes the snapshot's instant and opens the temp file. Caller holds mutex_.
  absl::StatusOr<std::unique_ptr<Job>> BeginJob();
  // Writes and commits the file; logs; records the outcome (background: the BGSAVE fields).
  absl::Status RunJob(Job& job, bool background);
  void JoinFinishedLocked(std::unique_lock<std::mutex>& lock);
  uint64_t TotalDirty() const;
  std::string FilePath() const;

  Settings& settings_;
  Keyspace& keyspace_;
  Stats& stats_;
  Lifecycle& lifecycle_;
  TransactionGate& gate_;
  FunctionLibraries& functions_;

  std::mutex mutex_;  // Serializes saves' starts and ends, and guards the fields below.
  std::thread bgsave_thread_;
  std::unique_ptr<Job> bgsave_job_;
  bool save_running_ = false;  // A SAVE (foreground) is writing.
  int64_t last_bgsave_try_s_ = 0;

  std::atomic<bool> bgsave_running_{false};
  std::atomic<bool> bgsave_finished_{false};  // The thread is done; Cron joins it.
  std::atomic<bool> scheduled_{false};
  std::atomic<bool> last_bgsave_ok_{true};
  std::atomic<int64_t> last_bgsave_time_s_{-1};
  std::atomic<int64_t> bgsave_start_s_{-1};
  std::atomic<uint64_t> saves_{0};
  std::atomic<uint64_t> dirty_at_last_save_{0};
  std::atomic<uint64_t> current_keys_processed_{0};
  std::atomic<uint64_t> current_keys_total_{0};
  std::atomic<uint64_t> last_peak_pending_{0};
  std::atomic<uint64_t> last_by_clients_{0};

  std::atomic<bool> loading_{false};
  std::atomic<int64_t> loading_start_s_{0};
  std::atomic<int64_t> loading_start_ms_{0};
  std::atomic<uint64_t> loading_total_bytes_{0};
  std::atomic<uint64_t> loading_loaded_bytes_{0};
  std::atomic<uint64_t> loading_loaded_keys_{0};
  std::atomic<uint64_t> last_load_expired_{0};
  std::atomic<uint64_t> last_load_loaded_{0};
};

}  // namespace gigakv::server
