#include "server/snapshots.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "gigakv/strings.h"
#include "persistence/atomic_file.h"
#include "persistence/rdb/rdb_io.h"
#include "server/cycle_clock.h"
#include "server/functions.h"
#include "server/keyspace.h"
#include "server/lifecycle.h"
#include "server/settings.h"
#include "server/stats.h"
#include "server/transaction.h"
#include "spdlog/spdlog.h"

namespace gigakv::server {

namespace rdb = persistence::rdb;

namespace {

// A failed background save is retried by the save points only after this long (Redis's
// CONFIG_BGSAVE_RETRY_DELAY).
constexpr int64_t kBgsaveRetryDelayS = 5;
// rdb-save-incremental-fsync: fsync after every this many bytes (Redis's REDIS_AUTOSYNC_BYTES).
constexpr uint64_t kAutoSyncBytes = 4 << 20;

}  // namespace

struct Snapshots::Job {
  std::unique_ptr<rdb::RdbSnapshot> snapshot;
  std::string directory;  // Absolute: CONFIG SET dir while a save runs changes nothing for it.
  std::string filename;
  uint64_t dirty_at_begin = 0;
  int64_t start_ms = 0;  // Steady clock.
  int64_t start_s = 0;   // Unix seconds.
};

Snapshots::Snapshots(Settings& settings, Keyspace& keyspace, Stats& stats, Lifecycle& lifecycle,
                     TransactionGate& gate, FunctionLibraries& functions)
    : settings_(settings),
      keyspace_(keyspace),
      stats_(stats),
      lifecycle_(lifecycle),
      gate_(gate),
      functions_(functions) {}

Snapshots::~Snapshots() { AbortBackgroundSave(); }

uint64_t Snapshots::TotalDirty() const { return stats_.totals().dirty; }

absl::StatusOr<std::unique_ptr<rdb::RdbSnapshot>> Snapshots::BeginSnapshot(
    bool aof_base, const std::function<void()>& at_instant) {
  rdb::SnapshotOptions options;
  options.writer.compress = settings_.rdbcompression.get();
  options.writer.checksum = settings_.rdbchecksum.get();
  options.info.ctime = keyspace_.NowMs() / 1000;
  options.info.used_mem = keyspace_.UsedMemory();
  options.info.aof_base = aof_base;
  switch (settings_.maxmemory_policy.get()) {
    case Store::EvictionPolicy::kAllKeysLru:
    case Store::EvictionPolicy::kVolatileLru:
      options.access_field = rdb::SnapshotOptions::AccessField::kIdle;
      break;
    case Store::EvictionPolicy::kAllKeysLfu:
    case Store::EvictionPolicy::kVolatileLfu:
      options.access_field = rdb::SnapshotOptions::AccessField::kFreq;
      break;
    default:
      break;
  }
  options.lfu_decay_minutes = settings_.lfu_decay_minutes.get();
  options.key_delay_us = [this] { return settings_.rdb_key_save_delay_us.get(); };
  auto snapshot = std::make_unique<rdb::RdbSnapshot>(keyspace_.store(), std::move(options));
  // The instant: no EXEC is half done and nothing publishes (every I/O thread is between
  // batches, the cron waits) and every shard is marked at once. Inside an EXEC the caller
  // already holds every slot.
  std::optional<TransactionGate::ExclusiveScope> exclusive;
  if (!TransactionGate::ThisThreadIsExclusive()) exclusive.emplace(gate_);
  if (!snapshot->Begin()) {
    return absl::FailedPreconditionError("Background save already in progress");
  }
  snapshot->SetFunctions(functions_.Codes());  // As of the instant: no FUNCTION LOAD meanwhile.
  if (at_instant) at_instant();
  return snapshot;
}

absl::StatusOr<std::unique_ptr<Snapshots::Job>> Snapshots::BeginJob() {
  auto job = std::make_unique<Job>();
  job->directory = persistence::WorkingDirectory();
  job->filename = settings_.dbfilename.get();
  absl::StatusOr<std::unique_ptr<rdb::RdbSnapshot>> snapshot =
      BeginSnapshot(/*aof_base=*/false, [&] { job->dirty_at_begin = TotalDirty(); });
  if (!snapshot.ok()) return snapshot.status();
  job->snapshot = *std::move(snapshot);
  job->start_ms = SteadyMs();
  job->start_s = keyspace_.NowMs() / 1000;
  current_keys_total_.store(job->snapshot->keys_at_begin());
  current_keys_processed_.store(0);
  return job;
}

absl::Status Snapshots::RunJob(Job& job, bool background) {
  persistence::AtomicFile file;
  const std::string temp_name = StrCat("temp-", ::getpid(), ".rdb");
  absl::Status status = file.Open(job.directory, job.filename, temp_name);
  if (!status.ok()) {
    spdlog::warn("Failed opening the temp RDB file {} (in server root dir {}) for saving: {}",
                 temp_name, job.directory, std::string(status.message()));
  } else {
    const bool incremental_fsync = settings_.rdb_save_incremental_fsync.get();
    uint64_t unsynced = 0;
    status = job.snapshot->WriteTo([&](std::string_view bytes) -> absl::Status {
      current_keys_processed_.store(job.snapshot->keys_written(), std::memory_order_relaxed);
      if (absl::Status appended = file.Append(bytes); !appended.ok()) return appended;
      unsynced += bytes.size();
      if (incremental_fsync && unsynced >= kAutoSyncBytes) {
        unsynced = 0;
        return file.SyncData();
      }
      return absl::OkStatus();
    });
    if (status.ok()) status = file.Commit();
    if (!status.ok()) {
      file.Abort();
      if (!absl::IsCancelled(status)) {
        spdlog::warn("Write error saving DB on disk: {}", std::string(status.message()));
      }
    }
  }
  current_keys_processed_.store(0);
  current_keys_total_.store(0);
  last_peak_pending_.store(job.snapshot->peak_pending_bytes());
  last_by_clients_.store(job.snapshot->shards_captured_by_clients());
  // Ends the capture if the file could not even be opened.
  job.snapshot.reset();
  const int64_t elapsed_s = (SteadyMs() - job.start_ms + 500) / 1000;
  if (status.ok()) {
    spdlog::info("DB saved on disk");
    // Changes made while the walk ran are not in the file: they still count.
    uint64_t previous = dirty_at_last_save_.load();
    while (previous < job.dirty_at_begin &&
           !dirty_at_last_save_.compare_exchange_weak(previous, job.dirty_at_begin)) {
    }
    lifecycle_.set_lastsave_s(keyspace_.NowMs() / 1000);
    last_bgsave_ok_.store(true);
    if (background) spdlog::info("Background saving terminated with success");
  } else if (background) {
    if (absl::IsCancelled(status)) {
      spdlog::warn("Background saving terminated by request");
    } else {
      spdlog::warn("Background saving error");
      last_bgsave_ok_.store(false);
    }
  }
  if (background) last_bgsave_time_s_.store(elapsed_s);
  return status;
}

absl::Status Snapshots::Save() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    JoinFinishedLocked(lock);
    if (bgsave_running_.load() || save_running_) {
      return absl::FailedPreconditionError("Background save already in progress");
    }
    save_running_ = true;
  }
  saves_.fetch_add(1);
  absl::StatusOr<std::unique_ptr<Job>> job = BeginJob();
  absl::Status status = job.status();
  if (job.ok()) {
    // Other I/O threads' EXECs need not wait for this thread's save (it only takes shard locks).
    std::optional<TransactionGate::ReleasedScope> released;
    if (!TransactionGate::ThisThreadIsExclusive()) released.emplace();
    status = RunJob(**job, /*background=*/false);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  save_running_ = false;
  return status;
}

absl::Status Snapshots::StartBackgroundSave() {
  std::unique_lock<std::mutex> lock(mutex_);
  JoinFinishedLocked(lock);
  if (bgsave_running_.load() || save_running_) {
    return absl::FailedPreconditionError("Background save already in progress");
  }
  saves_.fetch_add(1);
  last_bgsave_try_s_ = keyspace_.NowMs() / 1000;
  absl::StatusOr<std::unique_ptr<Job>> job = BeginJob();
  if (!job.ok()) {
    last_bgsave_ok_.store(false);
    return job.status();
  }
  bgsave_job_ = std::move(*job);
  bgsave_start_s_.store(bgsave_job_->start_s);
  bgsave_running_.store(true);
  bgsave_finished_.store(false);
  spdlog::info("Background saving started");
  bgsave_thread_ = std::thread([this, job = bgsave_job_.get()] {
    RunJob(*job, /*background=*/true).IgnoreError();
    bgsave_start_s_.store(-1);
    bgsave_running_.store(false);
    bgsave_finished_.store(true);
  });
  return absl::OkStatus();
}

void Snapshots::JoinFinishedLocked(std::unique_lock<std::mutex>& lock) {
  (void)lock;
  if (bgsave_thread_.joinable() && bgsave_finished_.load()) {
    bgsave_thread_.join();
    bgsave_job_.reset();
  }
}

void Snapshots::AbortBackgroundSave() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!bgsave_thread_.joinable()) return;
  if (bgsave_running_.load() && bgsave_job_ != nullptr && bgsave_job_->snapshot != nullptr) {
    spdlog::warn("There is a background save in progress: stopping it");
    bgsave_job_->snapshot->Cancel();
  }
  // The thread takes no lock of ours: joining under it is safe.
  bgsave_thread_.join();
  bgsave_job_.reset();
}

void Snapshots::Cron() {
  const bool scheduled = scheduled_.load();
  const bool has_points = settings_.has_save_points();
  if (!scheduled && !has_points && !bgsave_finished_.load()) return;
  std::unique_lock<std::mutex> lock(mutex_);
  JoinFinishedLocked(lock);
  if (bgsave_running_.load() || save_running_) return;
  const int64_t now_s = keyspace_.NowMs() / 1000;
  const bool may_retry = now_s - last_bgsave_try_s_ > kBgsaveRetryDelayS || last_bgsave_ok_.load();
  if (!may_retry) return;
  bool start = false;
  if (scheduled) {
    start = true;
  } else {
    const uint64_t changes = TotalDirty() - dirty_at_last_save_.load();
    for (const Settings::SavePoint& point : settings_.save_points()) {
      if (changes >= static_cast<uint64_t>(point.changes) &&
          now_s - lifecycle_.lastsave_s() > point.seconds) {
        spdlog::info("{} changes in {} seconds. Saving...", point.changes, point.seconds);
        start = true;
        break;
      }
    }
  }
  if (!start) return;
  lock.unlock();
  if (StartBackgroundSave().ok()) scheduled_.store(false);
}

bool Snapshots::writes_refused() const {
  return !last_bgsave_ok_.load(std::memory_order_relaxed) &&
         settings_.stop_writes_on_bgsave_error.get() && settings_.has_save_points();
}

absl::Status Snapshots::PrepareShutdown(bool save, bool nosave) {
  AbortBackgroundSave();
  if (nosave || (!save && !settings_.has_save_points())) return absl::OkStatus();
  spdlog::info("Saving the final RDB snapshot before exiting.");
  absl::Status status = Save();
  if (!status.ok()) spdlog::warn("Error trying to save the DB, can't exit.");
  return status;
}

std::string Snapshots::FilePath() const {
  return persistence::JoinPath(persistence::WorkingDirectory(), settings_.dbfilename.get());
}

absl::Status Snapshots::LoadAtStart() {
  absl::Status status = Load(/*replace_existing=*/false);
  loading_.store(false);  // Also when there was no file (BeginLoading set it).
  return status;
}

absl::Status Snapshots::Load(bool replace_existing) {
  return LoadFile(FilePath(), replace_existing, /*drop_expired=*/true);
}

absl::Status Snapshots::LoadFile(const std::string& path, bool replace_existing, bool drop_expired,
                                 persistence::FileSystem* fs, uint64_t* bytes_read) {
  absl::StatusOr<std::unique_ptr<persistence::SequentialFile>> file = fs->NewSequentialFile(path);
  if (!file.ok()) {
    if (absl::IsNotFound(file.status())) return absl::NotFoundError(StrCat("no ", path));
    return file.status();
  }
  absl::StatusOr<uint64_t> size = fs->FileSize(path);
  const uint64_t total = size.ok() ? *size : 0;
  loading_total_bytes_.store(total);
  loading_loaded_bytes_.store(0);
  loading_loaded_keys_.store(0);
  loading_start_s_.store(keyspace_.NowMs() / 1000);
  const int64_t start_ms = SteadyMs();
  loading_start_ms_.store(start_ms);
  loading_.store(true);

  persistence::SequentialFile* source = file->get();
  rdb::RdbReader reader([source](char* buffer, size_t capacity) -> absl::StatusOr<size_t> {
    return source->Read(capacity, buffer);
  });
  rdb::StoreLoadOptions options;
  options.load.limits = settings_.collection_limits();
  options.load.databases = keyspace_.store().databases();
  options.load.drop_expired = drop_expired;
  options.replace_existing = replace_existing;
  options.max_reserved_keys = total / 4;  // A key takes at least 4 bytes of a file.
  options.key_delay_us = settings_.key_load_delay_us.get();
  options.load.now_ms = keyspace_.NowMs();
  options.access_mode = settings_.access_mode();
  options.coarse_now_ms = keyspace_.NowMs();
  int64_t last_log_ms = start_ms;
  options.on_progress = [&](uint64_t bytes, uint64_t keys) {
    loading_loaded_bytes_.store(bytes);
    loading_loaded_keys_.store(keys);
    const int64_t now_ms = SteadyMs();
    if (now_ms - last_log_ms >= 1000) {
      last_log_ms = now_ms;
      const double mb = static_cast<double>(bytes) / (1024.0 * 1024.0);
      const double seconds = static_cast<double>(now_ms - start_ms) / 1000.0;
      spdlog::info("Loading RDB: {} keys, {:.1f} MB of {:.1f} MB ({:.1f} MB/s)", keys, mb,
                   static_cast<double>(total) / (1024.0 * 1024.0), seconds > 0 ? mb / seconds : 0);
    }
  };
  const int64_t now_s = keyspace_.NowMs() / 1000;
  options.on_aux = [now_s](std::string_view key, std::string_view value) {
    if (key == "redis-ver") {
      spdlog::info("Loading RDB produced by version {}", std::string(value));
    } else if (key == "ctime") {
      int64_t ctime = 0;
      if (absl::SimpleAtoi(ToAbsl(value), &ctime)) {
        spdlog::info("RDB age {} seconds", std::max<int64_t>(0, now_s - ctime));
      }
    } else if (key == "used-mem") {
      int64_t used = 0;
      if (absl::SimpleAtoi(ToAbsl(value), &used)) {
        spdlog::info("RDB memory usage when created {:.2f} Mb",
                     static_cast<double>(used) / (1024.0 * 1024.0));
      }
    }
    return absl::OkStatus();
  };
  options.on_function = [this, replace_existing](std::string_view code) -> absl::Status {
    absl::StatusOr<std::string> loaded =
        functions_.Load(code, /*replace=*/replace_existing, /*timeout_ms=*/0);
    if (!loaded.ok()) {
      return absl::InvalidArgumentError(
          StrCat("Failed loading library: ", loaded.status().message()));
    }
    return absl::OkStatus();
  };
  absl::StatusOr<rdb::RdbLoadResult> result =
      rdb::LoadRdbIntoStore(reader, options, keyspace_.store());
  loading_.store(false);
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        StrCat("Error loading RDB file ", path, ": ", result.status().message()));
  }
  last_load_loaded_.store(result->keys - result->empty_keys);
  last_load_expired_.store(result->expired_keys);
  loading_loaded_bytes_.store(result->bytes);
  if (bytes_read != nullptr) *bytes_read = result->bytes;
  loading_loaded_keys_.store(result->keys - result->empty_keys);
  spdlog::info("Done loading RDB, keys loaded: {}, keys expired: {}, empty keys skipped: {}.",
               result->keys - result->empty_keys, result->expired_keys, result->empty_keys);
  spdlog::info("DB loaded from disk: {:.3f} seconds",
               static_cast<double>(SteadyMs() - start_ms) / 1000.0);
  // Loading is no change to save again.
  dirty_at_last_save_.store(TotalDirty());
  return absl::OkStatus();
}

Snapshots::Info Snapshots::info() const {
  Info info;
  info.loading = loading_.load();
  if (info.loading) {
    info.loading_start_time_s = loading_start_s_.load();
    info.loading_total_bytes = loading_total_bytes_.load();
    info.loading_loaded_bytes = loading_loaded_bytes_.load();
    info.loading_loaded_keys = loading_loaded_keys_.load();
    info.loading_elapsed_ms = SteadyMs() - loading_start_ms_.load();
  }
  info.changes_since_last_save = TotalDirty() - dirty_at_last_save_.load();
  info.bgsave_in_progress = bgsave_running_.load();
  info.last_save_time_s = lifecycle_.lastsave_s();
  info.last_bgsave_ok = last_bgsave_ok_.load();
  info.last_bgsave_time_s = last_bgsave_time_s_.load();
  const int64_t start_s = bgsave_start_s_.load();
  info.current_bgsave_time_s =
      info.bgsave_in_progress && start_s >= 0 ? keyspace_.NowMs() / 1000 - start_s : -1;
  info.saves = saves_.load();
  info.last_load_keys_expired = last_load_expired_.load();
  info.last_load_keys_loaded = last_load_loaded_.load();
  info.current_save_keys_processed = current_keys_processed_.load();
  info.current_save_keys_total = current_keys_total_.load();
  info.last_peak_pending_bytes = last_peak_pending_.load();
  info.last_shards_by_clients = last_by_clients_.load();
  return info;
}

}  // namespace gigakv::server
