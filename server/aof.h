// The append-only log: every write's deterministic effect, in checksummed records
// (persistence/log/), in Redis 7's multi-part directory (`dir`/`appenddirname`: an RDB base, the
// incremental logs, a manifest; persistence/log/manifest.h), replayed at start.
//
//   producers   every I/O thread and the cron publish changes on the keyspace's change stream
//               under their shard locks; this consumer encodes each effect (an EXEC's as one
//               transaction record) into one shared buffer, in the order the locks applied
//               them, and numbers it: appended() is the last number handed out
//   log thread  takes the buffer, frames it (log_writer.h), writes it with one write() and,
//               by appendfsync, fsyncs: always -- before any reply that depends on it is sent,
//               one fsync for every record that arrived meanwhile (group commit: while one fsync
//               runs the next batch gathers); everysec -- once a second; no -- never
//   replies     with `always`, an I/O thread sends a batch of replies only once durable() has
//               reached appended() as it was when the batch ended (WhenDurable): no client sees
//               a write, its own or another's, before it is in the file
//   failures    a failed write or fsync is logged and retried every second; meanwhile write
//               commands get -MISCONF (writes_refused), replies that wait for durability keep
//               waiting (nothing unwritten is acknowledged), read-only replies go out. After a
//               failed fsync the bytes since the last good one are written again (the kernel
//               may have dropped them).
//   start-up    Open: loads the manifest's base and logs into the store (expiry suspended:
//               effects were applied before their keys expired), cuts a torn tail of the last
//               log when aof-load-truncated is yes, refuses damage anywhere else; creates a
//               base, a log and the manifest for a new directory; then appends to the last log
//
// Threading: OnChange/OnGroupEnd run on producers' threads (under shard locks: they only copy
// into the buffer); Open, Close and Cron on the server's threads; one log thread. Every method
// is thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gigakv/change_stream.h"
#include "persistence/file_system.h"
#include "persistence/log/log_writer.h"
#include "persistence/log/manifest.h"
#include "persistence/rdb/rdb_snapshot.h"

namespace gigakv::protocol {
class ReplyBuilder;
}

namespace gigakv::server {

class ClientState;
class Dispatcher;
class Keyspace;
class Settings;
class Snapshots;

class AppendOnlyLog : public ChangeConsumer {
 public:
  // `fs` (not owned): the file layer (tests inject theirs). Everything must outlive the log.
  AppendOnlyLog(Settings& settings, Keyspace& keyspace, Snapshots& snapshots,
                Dispatcher& dispatcher, persistence::FileSystem* fs);
  ~AppendOnlyLog() override;  // Close().
  AppendOnlyLog(const AppendOnlyLog&) = delete;
  AppendOnlyLog& operator=(const AppendOnlyLog&) = delete;

  // With appendonly yes: loads the directory into the (empty) store and starts logging (see
  // the file comment). An error stops start-up; it names the file, the offset and the problem.
  absl::Status Open();
  // Writes and fsyncs what is buffered, stops the log thread and detaches from the change
  // stream. Idempotent. CONFIG SET appendonly no.
  void Close();
  // CONFIG SET appendonly yes: starts logging at a snapshot's instant and writes that snapshot
  // as the base; the manifest lists the new log only once its base is in place (a crash
  // before leaves the directory as it was). While a background save or rewrite runs the base
  // is scheduled (Cron starts it when the job ends), as in Redis. If the base cannot be
  // written the log goes off again and Cron retries (backing off as RewriteLimited).
  absl::Status Enable();
  bool enabled() const { return enabled_.load(std::memory_order_acquire); }
  // SHUTDOWN and SIGTERM, before anything else: while the base of CONFIG SET appendonly yes is
  // being written there is no file holding the dataset yet, so shutting down is refused
  // (FailedPrecondition, logged as Redis's "Writing initial AOF, can't exit.") unless `force`.
  absl::Status PrepareShutdown(bool force) const;
  // DEBUG LOADAOF: writes out what is buffered, empties the store (not published: the files
  // hold the dataset) and loads the directory again as Open does, from the manifest on disk.
  // The caller holds the transaction gate exclusively (nothing writes meanwhile).
  // An error with *started false: nothing was done (the log is off, a rewrite runs, or writing
  // fails). With *started true the error is Open's, and leaves the log closed and the store
  // partly loaded (Redis exits then). `empty`, called once the log is closed and before the
  // files load, empties what lives beside the store (the function libraries, as Redis's
  // emptyData does).
  absl::Status Reload(bool* started, const std::function<void()>& empty = {});
  // Before serving, when Open will run: clients get -LOADING from the first connection on, so
  // no write lands before the log listens. Open ends it.
  void BeginLoading() { loading_.store(true); }
  bool loading() const { return loading_.load(std::memory_order_relaxed); }

  // --- Durability ------------------------------------------------------------------------------
  // Numbers of records: the last appended, the last known to be in the file by the current
  // appendfsync's standard (fsynced for always; written for everysec and no).
  uint64_t appended() const { return appended_.load(std::memory_order_acquire); }
  uint64_t durable() const { return durable_.load(std::memory_order_acquire); }
  // Whether replies must wait for durable() (appendfsync always while logging).
  bool replies_wait() const;
  // Calls `callback` on the log thread once durable() >= `record` (at once, on this thread, if
  // it already is or the log is closed). One callback per waiting I/O thread is the intent:
  // they are kept in a list. `owner` names the waiter for ForgetWaiters.
  void WhenDurable(const void* owner, uint64_t record, std::function<void()> callback);
  // Drops `owner`'s callbacks; when it returns, none of them runs or will run (an I/O thread
  // that shuts down).
  void ForgetWaiters(const void* owner);

  // Backpressure, before a write command (I/O threads, no lock held): while more than
  // kMaxPendingBytes of records wait for the log thread (the disk falls behind), waits until it
  // has taken them, or the log closes. As Redis's event loop blocks in write() then, this holds
  // the writers' memory and the data a crash could lose to what the disk keeps up with.
  static constexpr size_t kMaxPendingBytes = 64u << 20;
  void WaitForRoom();
  // How many times a write command waited in WaitForRoom.
  uint64_t waits_for_room() const { return waits_for_room_.load(std::memory_order_relaxed); }

  // -MISCONF: the last write or fsync of the log failed and has not been retried successfully.
  bool writes_refused() const { return write_failed_.load(std::memory_order_relaxed); }
  // The reason of the last failure (strerror's text), for the -MISCONF reply.
  std::string last_error() const;

  // --- Rewrite -------------------------------------------------------------------------------
  // BGREWRITEAOF, and the automatic rewrite by size: without fork, a new base is written from
  // a point-in-time snapshot of the store (Snapshots::BeginSnapshot) by a background thread
  // while the log thread, at the snapshot's instant, moves on to a new incremental log (listed
  // in the manifest at once, so a crash at any step leaves the old base, the old logs and the
  // new log: the dataset). When the base is in place the manifest switches to it (the old
  // base and logs become history) and the history files are deleted.
  enum class RewriteStart { kStarted, kScheduled };
  // FailedPrecondition "Background append only file rewriting already in progress"; kScheduled
  // while a background save holds the store's one snapshot (Cron starts it later).
  absl::StatusOr<RewriteStart> StartRewrite();
  void ScheduleRewrite() { rewrite_scheduled_.store(true); }
  bool rewrite_in_progress() const { return rewrite_running_.load(); }
  // Stops a running rewrite (its temp file is removed) and waits for it.
  void AbortRewrite();

  // Once per cron tick: wakes the log thread to retry after a failure; joins a finished
  // rewrite, starts a scheduled one or the automatic one (auto-aof-rewrite-percentage and
  // -min-size, as Redis).
  void Cron();
  // Whether appendonly yes waits for its base to be written (INFO aof_rewrite_scheduled).
  bool enable_pending() const { return enable_pending_.load(); }

  // INFO persistence.
  struct Info {
    bool enabled = false;
    bool last_write_ok = true;
    uint64_t current_size = 0;  // Base plus logs, bytes.
    uint64_t base_size = 0;
    uint64_t buffer_length = 0;  // Bytes waiting to be written.
    int64_t buffer_memory = 0;   // Bytes the log's buffers hold (mem_aof_buffer).
    uint64_t delayed_fsync = 0;
    bool loading = false;
    uint64_t loading_loaded_bytes = 0;
    uint64_t loading_total_bytes = 0;
    bool rewrite_in_progress = false;
    bool rewrite_scheduled = false;
    int64_t last_rewrite_time_s = -1;
    int64_t current_rewrite_time_s = -1;
    bool last_rewrite_ok = true;
    uint64_t rewrites = 0;
    uint64_t rewrites_consecutive_failures = 0;
  };
  Info info() const;

  // ChangeConsumer: encode into the buffer (producers' threads).
  void OnChange(const ChangeRecord& record) override;
  void OnGroupEnd(uint64_t group) override;

 private:
  struct Waiter {
    const void* owner;
    uint64_t record;
    std::function<void()> callback;
  };

  std::string DirectoryPath() const;
  std::string PathOf(const std::string& name) const;
  absl::Status PersistManifest();
  // Creates a base (the current, empty, dataset) and a log for a directory without a manifest.
  absl::Status CreateFiles();
  // Loads the manifest's base and logs; *valid_end: the last log's valid prefix.
  absl::Status LoadFiles(uint64_t* valid_end);
  // Replays one log file; `last`: a torn tail may be cut. *valid_end: its valid prefix.
  absl::Status ReplayLog(const std::string& name, bool last, uint64_t* valid_end);
  // Loads a file Redis wrote (its name in the manifest): an RDB (with a Redis 6 file's RESP
  // tail after it) or RESP commands, as Redis's loadSingleAppendOnlyFile does. `last`: a
  // truncated tail (or an unfinished MULTI at the end) may be cut.
  absl::Status LoadRedisFile(const std::string& name, bool last);
  // Replays the RESP commands of `name` from `offset` (SELECT, MULTI/EXEC all or nothing).
  absl::Status ReplayRedisCommands(const std::string& name, uint64_t offset, bool last);
  // Cuts the torn or truncated tail of `name` at `valid_end` (aof-load-truncated), with
  // Redis's warnings; `problem` says what was found.
  absl::Status CutTail(const std::string& name, uint64_t valid_end, const std::string& problem);
  // A Redis 6 style `appendfilename` in `dir` and no directory of files for it: moves it into
  // the directory as the base of a new manifest, as Redis 7 upgrades it.
  absl::Status UpgradeSingleFile();
  // Applies one replayed command (from either format) on the loading client; the first errors
  // it answers are logged. `where` names the file and offset for errors.
  absl::Status ReplayCommand(ClientState& client, const std::vector<std::string_view>& args,
                             protocol::ReplyBuilder& reply, const std::string& name,
                             uint64_t offset);
  // Loading progress: the loaded byte count, and a log line at most once a second.
  void ReportProgress(const std::string& name, uint64_t loaded_bytes, uint64_t records);
  absl::Status OpenForAppend(uint64_t valid_end);

  // Appends one framed-to-be record (payload given by `encode`, of `size` bytes) to the
  // buffer and returns its number. Producers' threads.
  template <typename Encode>
  uint64_t Append(size_t size, Encode encode);

  void Run();  // The log thread.
  // Frames records [first number, ...] of `taken` into batch_; at the requested switch point
  // writes the old log out and moves to the new one (SwitchLog).
  void FrameRecords(const std::string& taken, uint64_t first);
  // Redis's aofRewriteLimited: after repeated failures, automatic and scheduled rewrites (and
  // retries of turning the log on) back off exponentially. Cron's thread.
  bool RewriteLimited();
  // The log thread, at the rewrite's instant: a new incremental log, in the manifest at once.
  bool SwitchLog();
  void RunRewrite(std::unique_ptr<persistence::rdb::RdbSnapshot> snapshot, std::string base);
  void DeleteHistory();
  void JoinRewriteThread();     // Under rewrite_join_mutex_ (never held across the gate).
  void CloseLocked();           // Close's work; close_mutex_ held.
  void LoadManifestFromDisk();  // manifest_ from the directory (empty if none); manifest lock.
  // At start: temp files of an interrupted rewrite, and history files still listed.
  void RemoveLeftovers();
  // Writes batch_ (after a failed fsync, first the unsynced bytes before it again) and fsyncs
  // per appendfsync, or always when `force_sync`; false on failure (state kept for a retry).
  bool WriteAndSync(bool force_sync);
  // Log thread: whether written bytes await an fsync (kept for a retry, or written while fsync
  // was off: appendfsync no, no-appendfsync-on-rewrite).
  bool FsyncBehind() const {
    return !unsynced_.empty() || (file_ != nullptr && file_->size() != fsynced_size_);
  }
  // Reserves file space (kReserveBytes at a time) before `bytes` are appended to file_.
  void ReserveAhead(size_t bytes);
  void NotifyDurable(uint64_t record);

  Settings& settings_;
  Keyspace& keyspace_;
  Snapshots& snapshots_;
  Dispatcher& dispatcher_;
  persistence::FileSystem* fs_;

  std::atomic<bool> enabled_{false};
  std::atomic<bool> loading_{false};
  std::atomic<uint64_t> loading_loaded_bytes_{0};
  std::atomic<uint64_t> loading_total_bytes_{0};
  // The loading pass's counters (Open's thread only).
  uint64_t replay_errors_ = 0;
  int64_t replay_start_ms_ = 0;
  int64_t replay_last_report_ms_ = 0;

  // The manifest and the file being appended to: the log thread's, and Open's before it runs.
  persistence::log::Manifest manifest_;
  std::string incr_name_;
  std::unique_ptr<persistence::WritableFile> file_;
  persistence::log::LogWriter writer_;
  std::atomic<uint64_t> base_size_{0};
  std::atomic<uint64_t> closed_logs_size_{0};  // Incremental logs before the current one.
  std::atomic<uint64_t> current_size_{0};
  std::atomic<uint64_t> incr_size_{0};  // Bytes written to the current log (not reserved).

  // The shared buffer: records as fixed32 length + payload, numbered up to appended_.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::string pending_;                   // Guarded by mutex_.
  std::atomic<size_t> pending_bytes_{0};  // pending_.size(), for WaitForRoom's quick check.
  std::condition_variable room_;          // Signalled when the log thread takes pending_.
  int room_waiters_ = 0;                  // Guarded by mutex_.
  int64_t room_wait_logged_ms_ = -1;      // Guarded by mutex_: when the warning was last logged.
  std::atomic<uint64_t> waits_for_room_{0};
  bool thread_idle_ = false;      // The log thread waits for records: notify it.
  bool stop_ = false;             // Guarded by mutex_.
  bool retry_requested_ = false;  // Guarded by mutex_: Cron asks for a retry after a failure.
  std::atomic<int64_t> last_retry_request_ms_{0};
  std::vector<Waiter> waiters_;  // Guarded by mutex_.
  std::mutex callback_mutex_;    // Held while callbacks run (ForgetWaiters waits for them).
  std::atomic<uint64_t> appended_{0};
  std::atomic<uint64_t> durable_{0};

  // The log thread's own state.
  std::string batch_;        // Framed bytes not yet written.
  uint64_t batch_last_ = 0;  // Number of the last record in batch_ (or written).
  std::string unsynced_;     // Written since the last good fsync (rewritten after a failure).
  // File size at the last good fsync, or at the last write without fsync (appendfsync no or
  // suspended): what a failed fsync never needs to write again.
  uint64_t synced_size_ = 0;
  uint64_t fsynced_size_ = 0;  // File size at the last good fsync: beyond it bytes await one.
  uint64_t reserved_end_ = 0;  // file_'s space is reserved up to here (ReserveAhead).
  bool reserve_supported_ = true;
  uint64_t written_last_ = 0;   // Number of the last record written.
  bool resync_needed_ = false;  // An fsync failed: truncate to synced_size_ and write again.
  int64_t last_fsync_ms_ = 0;
  std::atomic<bool> write_failed_{false};
  std::atomic<uint64_t> delayed_fsync_{0};
  std::atomic<uint64_t> buffer_length_{0};
  std::atomic<int64_t> buffer_memory_{0};  // Bytes the log's buffers hold (allocated).

  // The manifest is shared by the log thread (SwitchLog) and the rewrite thread.
  std::mutex manifest_mutex_;
  // Rewrite: the switch the log thread makes at the snapshot's instant (guarded by mutex_).
  bool switch_requested_ = false;
  uint64_t switch_after_ = 0;  // Records up to this number go to the old log.
  // Set by the log thread once it switched (or could not); the rewrite thread waits on it.
  std::condition_variable switch_done_cv_;
  int switch_state_ = 0;           // Guarded by mutex_: 0 pending, 1 done, -1 failed.
  std::mutex rewrite_mutex_;       // Guards rewrite_snapshot_ (briefly; never across the gate).
  std::mutex rewrite_join_mutex_;  // Guards rewrite_thread_: its start and its joins.
  std::mutex close_mutex_;         // Close and Enable, from the cron and CONFIG SET.
  std::thread rewrite_thread_;
  persistence::rdb::RdbSnapshot* rewrite_snapshot_ = nullptr;  // Guarded by rewrite_mutex_.
  std::atomic<bool> rewrite_running_{false};    // Claimed by StartRewrite: starting or running.
  std::atomic<bool> enabling_{false};           // Enable()'s rewrite has not finished.
  std::atomic<bool> disable_requested_{false};  // It failed: Cron closes the log.
  // appendonly yes waits for its base: a background save ran, or the base failed (Cron tries
  // again, limited as a failing rewrite).
  std::atomic<bool> enable_pending_{false};
  // RewriteLimited's back-off (Cron's thread only).
  int64_t next_delay_minutes_ = 0;
  int64_t next_rewrite_time_s_ = 0;
  std::atomic<bool> rewrite_finished_{false};
  std::atomic<bool> rewrite_scheduled_{false};
  std::atomic<int64_t> rewrite_start_ms_{0};
  std::atomic<int64_t> last_rewrite_time_s_{-1};
  std::atomic<bool> last_rewrite_ok_{true};
  std::atomic<uint64_t> rewrites_{0};
  std::atomic<uint64_t> rewrite_failures_{0};
  // Redis's aof_rewrite_base_size: the log's size after the last rewrite (or at start).
  std::atomic<uint64_t> rewrite_base_size_{0};
  int64_t last_failure_log_ms_ = 0;
  mutable std::mutex error_mutex_;
  std::string last_error_;  // Guarded by error_mutex_.
  std::thread thread_;
};

}  // namespace gigakv::server
