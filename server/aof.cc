#include "server/aof.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <limits>

#include "gigakv/strings.h"
#include "persistence/atomic_file.h"
#include "persistence/log/log_format.h"
#include "persistence/log/log_reader.h"
#include "persistence/log/log_record.h"
#include "persistence/log/redis_aof_reader.h"
#include "persistence/rdb/rdb_file.h"
#include "protocol/reply_builder.h"
#include "server/client_state.h"
#include "server/cycle_clock.h"
#include "server/dispatcher.h"
#include "server/keyspace.h"
#include "server/settings.h"
#include "server/snapshots.h"
#include "spdlog/spdlog.h"

namespace gigakv::server {

namespace {

using persistence::log::LogReader;
namespace log = persistence::log;

constexpr size_t kLengthPrefix = 4;
// A failed write or fsync is retried this often, and logged at most this often (Redis's
// AOF_WRITE_LOG_ERROR_RATE).
constexpr int64_t kRetryMs = 1000;
constexpr int64_t kFailureLogIntervalMs = 30 * 1000;
// everysec and no: after a write, the log thread lets records gather this long.
constexpr auto kBatchingPause = std::chrono::milliseconds(1);
// everysec fsyncs sooner than once a second when this much was written since the last fsync:
// the bytes are kept until then (to write again after a failed fsync).
constexpr size_t kMaxUnsyncedBytes = 2u << 20;
// The log thread reserves the file's space this far ahead of its writes (fallocate): appends
// into reserved space change no file size, so an fsync writes the data alone and not the inode
// too (measured here: a write+fdatasync of 1.2 KB takes 25-30% less time and CPU). What a
// crash leaves reserved reads as zeros, which the reader takes for the end of the log.
constexpr uint64_t kReserveBytes = 4u << 20;

void PutFixed32(char* p, uint32_t value) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

uint32_t GetFixed32(const char* p) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(p[i]);
  return value;
}

// The transaction a thread is encoding (one EXEC's records; groups never interleave on a
// thread and no other thread publishes meanwhile, server/transaction.h).
struct GroupBuffer {
  uint64_t group = 0;
  size_t effects = 0;
  std::string payload;
};
thread_local GroupBuffer tls_group;

// Whether `path` holds gigakv's log format (an empty file: whether its name says so; Redis's
// .incr.aof files hold RESP).
bool IsGigakvLog(persistence::FileSystem* fs, const std::string& path, bool* empty) {
  *empty = false;
  absl::StatusOr<std::unique_ptr<persistence::SequentialFile>> file = fs->NewSequentialFile(path);
  if (!file.ok()) return true;  // Reported by the reader.
  char first = 0;
  absl::StatusOr<size_t> got = (*file)->Read(1, &first);
  if (!got.ok()) return true;
  *empty = *got == 0;
  if (*empty) return path.size() >= 4 && path.compare(path.size() - 4, 4, ".gkv") == 0;
  return first == log::kFileMagic[0];
}

}  // namespace

AppendOnlyLog::AppendOnlyLog(Settings& settings, Keyspace& keyspace, Snapshots& snapshots,
                             Dispatcher& dispatcher, persistence::FileSystem* fs)
    : settings_(settings),
      keyspace_(keyspace),
      snapshots_(snapshots),
      dispatcher_(dispatcher),
      fs_(fs) {
  keyspace_.changes().AddConsumer(this);
}

AppendOnlyLog::~AppendOnlyLog() {
  Close();
  keyspace_.changes().RemoveConsumer(this);
}

bool AppendOnlyLog::replies_wait() const {
  return enabled() && settings_.appendfsync.get() == AppendFsync::kAlways;
}

std::string AppendOnlyLog::DirectoryPath() const {
  return persistence::JoinPath(persistence::WorkingDirectory(), settings_.appenddirname);
}

std::string AppendOnlyLog::PathOf(const std::string& name) const {
  return persistence::JoinPath(DirectoryPath(), name);
}

// --- Start-up ------------------------------------------------------------------------------------

absl::Status AppendOnlyLog::Open() {
  if (!settings_.appendonly.get() || enabled()) return absl::OkStatus();
  // Clients that connect meanwhile get -LOADING: a write accepted before the log listens
  // would not be logged (on a new directory too, while its files are created).
  loading_.store(true);
  const std::string dir = DirectoryPath();
  if (absl::Status status = fs_->CreateDir(dir); !status.ok()) {
    return absl::Status(status.code(), StrCat("Can't open or create append-only dir ",
                                              settings_.appenddirname, ": ", status.message()));
  }
  const std::string manifest_path = PathOf(log::ManifestName(settings_.appendfilename));
  uint64_t valid_end = 0;
  if (absl::Status status = UpgradeSingleFile(); !status.ok()) return status;
  if (fs_->FileExists(manifest_path)) {
    absl::StatusOr<std::string> text = persistence::ReadFile(fs_, manifest_path);
    if (!text.ok()) return text.status();
    absl::StatusOr<log::Manifest> manifest = log::ParseManifest(*text);
    if (!manifest.ok()) {
      return absl::InvalidArgumentError(StrCat("Fatal AOF manifest file error in ", manifest_path,
                                               ": ", manifest.status().message()));
    }
    manifest_ = *std::move(manifest);
    if (absl::Status status = LoadFiles(&valid_end); !status.ok()) return status;
  } else {
    if (absl::Status status = CreateFiles(); !status.ok()) return status;
  }
  if (absl::Status status = OpenForAppend(valid_end); !status.ok()) return status;
  RemoveLeftovers();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = false;
  }
  keyspace_.changes().SetInterest(this, ChangeConsumer::Interest::kEffects);
  enabled_.store(true, std::memory_order_release);
  thread_ = std::thread([this] { Run(); });
  keyspace_.store().SetExpirySuspended(false);
  loading_.store(false);
  return absl::OkStatus();
}

absl::Status AppendOnlyLog::UpgradeSingleFile() {
  const std::string& name = settings_.appendfilename;
  const std::string legacy = persistence::JoinPath(persistence::WorkingDirectory(), name);
  if (!fs_->FileExists(legacy)) return absl::OkStatus();
  // Redis 7's three cases: no manifest; an empty one; one whose only file is this base, not yet
  // moved (an upgrade interrupted between the manifest and the rename).
  const std::string manifest_path = PathOf(log::ManifestName(name));
  if (fs_->FileExists(manifest_path)) {
    absl::StatusOr<std::string> text = persistence::ReadFile(fs_, manifest_path);
    if (!text.ok()) return text.status();
    absl::StatusOr<log::Manifest> manifest = log::ParseManifest(*text);
    if (!manifest.ok()) return absl::OkStatus();  // Open reports it.
    const bool empty = !manifest->base && manifest->incrs.empty();
    const bool interrupted = manifest->base && manifest->incrs.empty() &&
                             manifest->base->name == name && !fs_->FileExists(PathOf(name));
    if (!empty && !interrupted) return absl::OkStatus();
  }
  if (fs_->FileExists(PathOf(name))) {
    return absl::FailedPreconditionError(
        StrCat("Found ", name, " both in the working directory and in ", settings_.appenddirname,
               " without a manifest listing it: move one of them away"));
  }
  manifest_ = log::Manifest();
  manifest_.base = log::ManifestFile{name, 1, 'b'};
  manifest_.base_seq = 1;
  if (absl::Status status = PersistManifest(); !status.ok()) return status;
  if (absl::Status status = fs_->RenameFile(legacy, PathOf(name)); !status.ok()) {
    return absl::Status(status.code(),
                        StrCat("Error trying to move the old AOF file ", name, " into dir ",
                               settings_.appenddirname, ": ", status.message()));
  }
  absl::Status status = fs_->SyncDir(DirectoryPath());
  if (status.ok()) status = fs_->SyncDir(persistence::WorkingDirectory());
  if (!status.ok()) return status;
  spdlog::info("Successfully migrated an old-style AOF file ({}) into the AOF directory ({}).",
               name, settings_.appenddirname);
  return absl::OkStatus();
}

absl::Status AppendOnlyLog::PrepareShutdown(bool force) const {
  if (!enabling_.load()) return absl::OkStatus();
  if (force) {
    spdlog::warn("Writing initial AOF. Exit anyway.");
    return absl::OkStatus();
  }
  spdlog::warn("Writing initial AOF, can't exit.");
  return absl::FailedPreconditionError("Writing initial AOF, can't exit.");
}

absl::Status AppendOnlyLog::Reload(bool* started, const std::function<void()>& empty) {
  *started = false;
  if (!enabled()) return absl::FailedPreconditionError("The append only file is off");
  if (rewrite_in_progress() || enabling_.load()) {
    return absl::FailedPreconditionError("Background append only file rewriting in progress");
  }
  if (writes_refused()) {
    // What the last write could not write would be written again after the files are read.
    return absl::FailedPreconditionError(
        StrCat("The append only file can't be written: ", last_error()));
  }
  *started = true;
  Close();
  keyspace_.FreeLater(keyspace_.store().FlushAll());
  if (empty) empty();
  return Open();
}

void AppendOnlyLog::RemoveLeftovers() {
  // A rewrite a crash interrupted leaves its temp base; one that finished but crashed before
  // deleting its history leaves history files in the manifest.
  absl::StatusOr<std::vector<std::string>> names = fs_->ListDir(DirectoryPath());
  if (names.ok()) {
    for (const std::string& name : *names) {
      if (name.rfind("temp-rewriteaof-", 0) == 0 ||
          name == log::TempManifestName(settings_.appendfilename)) {
        spdlog::info("Removing the leftover file {}", name);
        (void)fs_->RemoveFile(PathOf(name));
      }
    }
  }
  DeleteHistory();
}

absl::Status AppendOnlyLog::PersistManifest() {
  return persistence::WriteFileAtomically(
      fs_, DirectoryPath(), log::ManifestName(settings_.appendfilename),
      log::TempManifestName(settings_.appendfilename), log::FormatManifest(manifest_));
}

absl::Status AppendOnlyLog::CreateFiles() {
  manifest_ = log::Manifest();
  const std::string base = log::AddBase(&manifest_, settings_.appendfilename);
  std::string bytes;
  persistence::rdb::RdbWriter::Options options;
  options.compress = settings_.rdbcompression.get();
  options.checksum = settings_.rdbchecksum.get();
  persistence::rdb::RdbWriter writer(
      [&bytes](std::string_view piece) {
        bytes.append(piece);
        return absl::OkStatus();
      },
      options);
  persistence::rdb::RdbFileInfo info;
  info.ctime = keyspace_.NowMs() / 1000;
  info.aof_base = true;
  if (absl::Status status = persistence::rdb::WriteRdbFile(writer, info, {}); !status.ok()) {
    return status;
  }
  if (absl::Status status = persistence::WriteFileAtomically(
          fs_, DirectoryPath(), base, StrCat("temp-rewriteaof-", ::getpid(), ".aof"), bytes);
      !status.ok()) {
    return status;
  }
  spdlog::info("Creating AOF base file {} on server start", base);
  return absl::OkStatus();
}

absl::Status AppendOnlyLog::LoadFiles(uint64_t* valid_end) {
  loading_.store(true);
  keyspace_.store().SetExpirySuspended(true);
  uint64_t total = 0;
  if (manifest_.base) {
    absl::StatusOr<uint64_t> size = fs_->FileSize(PathOf(manifest_.base->name));
    if (size.ok()) total += *size;
  }
  for (const log::ManifestFile& file : manifest_.incrs) {
    absl::StatusOr<uint64_t> size = fs_->FileSize(PathOf(file.name));
    if (size.ok()) total += *size;
  }
  loading_total_bytes_.store(total);
  loading_loaded_bytes_.store(0);
  replay_errors_ = 0;
  replay_start_ms_ = replay_last_report_ms_ = SteadyMs();
  const int64_t start_ms = replay_start_ms_;
  // Redis's files load as Redis loads them (told apart by content: an RDB, RESP commands);
  // gigakv's base is an RDB, its logs its own format.
  const size_t files = manifest_.incrs.size() + (manifest_.base ? 1 : 0);
  if (manifest_.base) {
    const std::string& name = manifest_.base->name;
    if (!fs_->FileExists(PathOf(name))) {
      return absl::NotFoundError(StrCat("The AOF base file ", name, " doesn't exist"));
    }
    spdlog::info("Loading the AOF base file {}", name);
    if (absl::Status status = LoadRedisFile(name, /*last=*/files == 1); !status.ok()) {
      return status;
    }
    absl::StatusOr<uint64_t> size = fs_->FileSize(PathOf(name));
    base_size_ = size.ok() ? *size : 0;
    loading_loaded_bytes_.store(base_size_);
  }
  closed_logs_size_ = 0;
  for (size_t i = 0; i < manifest_.incrs.size(); ++i) {
    const std::string& name = manifest_.incrs[i].name;
    const bool last = i + 1 == manifest_.incrs.size();
    if (!fs_->FileExists(PathOf(name))) {
      return absl::NotFoundError(StrCat("The AOF file ", name, " doesn't exist"));
    }
    bool empty = false;
    uint64_t end = 0;
    absl::Status status;
    if (IsGigakvLog(fs_, PathOf(name), &empty)) {
      if (!empty) status = ReplayLog(name, last, &end);
    } else {
      status = LoadRedisFile(name, last);
      absl::StatusOr<uint64_t> size = fs_->FileSize(PathOf(name));
      end = size.ok() ? *size : 0;
    }
    if (!status.ok()) return status;
    if (last) {
      *valid_end = end;
    } else {
      closed_logs_size_ += end;
    }
  }
  if (replay_errors_ > 0) spdlog::warn("{} replayed commands answered an error", replay_errors_);
  spdlog::info("DB loaded from append only file: {:.3f} seconds",
               static_cast<double>(SteadyMs() - start_ms) / 1000.0);
  return absl::OkStatus();
}

absl::Status AppendOnlyLog::ReplayCommand(ClientState& client,
                                          const std::vector<std::string_view>& args,
                                          protocol::ReplyBuilder& reply, const std::string& name,
                                          uint64_t offset) {
  reply.buffer().clear();
  reply.ResetErrorCount();
  if (absl::Status applied = dispatcher_.Replay(client, args, reply); !applied.ok()) {
    return absl::DataLossError(StrCat(applied.message(), " ", name, " (at offset ", offset, ")"));
  }
  if (reply.errors_sent() > 0 && ++replay_errors_ <= 10) {
    spdlog::warn("Replaying {} (at offset {}): {} answered {}", name, offset, std::string(args[0]),
                 reply.buffer());
  }
  return absl::OkStatus();
}

void AppendOnlyLog::ReportProgress(const std::string& name, uint64_t loaded_bytes,
                                   uint64_t records) {
  loading_loaded_bytes_.store(loaded_bytes);
  const int64_t now_ms = SteadyMs();
  if (now_ms - replay_last_report_ms_ < 1000) return;
  replay_last_report_ms_ = now_ms;
  const double seconds = static_cast<double>(now_ms - replay_start_ms_) / 1000.0;
  const uint64_t total = loading_total_bytes_.load();
  spdlog::info(
      "Loading AOF {}: {} records, {:.0f}% ({:.0f} records/s)", name, records,
      total > 0 ? 100.0 * static_cast<double>(loaded_bytes) / static_cast<double>(total) : 100.0,
      seconds > 0 ? static_cast<double>(records) / seconds : 0.0);
}

absl::Status AppendOnlyLog::CutTail(const std::string& name, uint64_t valid_end,
                                    const std::string& problem) {
  spdlog::warn("!!! Warning: short read while loading the AOF file {}!!!", name);
  spdlog::warn("!!! Truncating the AOF {} at offset {} ({}) !!!", name, valid_end, problem);
  if (absl::Status status = fs_->Truncate(PathOf(name), valid_end); !status.ok()) {
    return absl::Status(status.code(),
                        StrCat("Error truncating the AOF file ", name, ": ", status.message()));
  }
  spdlog::warn("AOF {} loaded anyway because aof-load-truncated is enabled", name);
  return absl::OkStatus();
}

namespace {

// SCRIPT ..., which Redis 6 writes to its AOF (the scripts' writes follow as their own commands;
// a script cache needs no restoring). FUNCTION LOAD/DELETE/RESTORE/FLUSH are replayed.
bool IsScriptCacheCommand(const std::vector<std::string_view>& args) {
  return EqualsIgnoreCase(args[0], "script");
}

std::string TruncatedFileError(const std::string& name, const std::string& problem, bool last) {
  return StrCat("Unexpected end of file reading the append only file ", name, " (", problem, ")",
                last ? ". You can: 1) Make a backup of your AOF file, then use gigakv-check-aof "
                       "--fix <filename.manifest>. 2) Alternatively you can set the "
                       "'aof-load-truncated' configuration option to yes and restart the server."
                     : ": only the last file may end in a truncated record");
}

}  // namespace

absl::Status AppendOnlyLog::ReplayLog(const std::string& name, bool last, uint64_t* valid_end) {
  const std::string path = PathOf(name);
  *valid_end = 0;
  absl::StatusOr<std::unique_ptr<persistence::SequentialFile>> file = fs_->NewSequentialFile(path);
  if (!file.ok()) return file.status();
  LogReader reader(file->get());
  log::DecodedRecord decoded;
  std::string scratch;
  std::string_view payload;
  ClientState client(0);
  client.replaying = true;
  protocol::ReplyBuilder reply;
  std::vector<std::string_view> args;
  const int databases = keyspace_.store().databases();
  const uint64_t loaded_before = loading_loaded_bytes_.load();
  uint64_t records = 0;
  LogReader::Outcome outcome;
  while ((outcome = reader.ReadRecord(&payload, &scratch)) == LogReader::Outcome::kRecord) {
    absl::Status status = log::DecodeRecord(payload, &decoded);
    if (!status.ok()) {
      return absl::DataLossError(StrCat("Bad file format reading the append only file ", name, ": ",
                                        status.message(), " (record at offset ",
                                        reader.record_offset(), ")"));
    }
    for (const log::DecodedEffect& effect : decoded.effects_view()) {
      if (effect.db >= static_cast<uint64_t>(databases)) {
        return absl::DataLossError(StrCat("The append only file ", name, " selects database ",
                                          effect.db, " (record at offset ", reader.record_offset(),
                                          ") but only ", databases, " are configured"));
      }
      client.db.store(static_cast<int>(effect.db));
      args.assign(effect.args.begin(), effect.args.end());
      if (absl::Status applied = ReplayCommand(client, args, reply, name, reader.record_offset());
          !applied.ok()) {
        return applied;
      }
    }
    if ((++records & 1023) == 0) ReportProgress(name, loaded_before + reader.valid_end(), records);
  }
  *valid_end = reader.valid_end();
  loading_loaded_bytes_.store(loaded_before + reader.valid_end());
  switch (outcome) {
    case LogReader::Outcome::kEnd: {
      // Space reserved ahead of the writes (zeros after the last record) is not loaded: the
      // total leaves it out, so the progress ends at 100%.
      absl::StatusOr<uint64_t> size = fs_->FileSize(PathOf(name));
      if (size.ok() && *size > reader.valid_end()) {
        loading_total_bytes_.fetch_sub(*size - reader.valid_end());
      }
      return absl::OkStatus();
    }
    case LogReader::Outcome::kTornTail: {
      const std::string problem = StrCat(reader.problem(), " at offset ", reader.problem_offset());
      if (last && settings_.aof_load_truncated.get()) {
        return CutTail(name, reader.valid_end(), problem);
      }
      return absl::DataLossError(TruncatedFileError(name, problem, last));
    }
    case LogReader::Outcome::kCorruption:
      return absl::DataLossError(StrCat("Bad file format reading the append only file ", name, ": ",
                                        reader.problem(), " at offset ", reader.problem_offset()));
    case LogReader::Outcome::kIoError:
    case LogReader::Outcome::kRecord:
      break;
  }
  return absl::Status(reader.io_status().code(), StrCat("Error reading the append only file ", name,
                                                        ": ", reader.io_status().message()));
}

absl::Status AppendOnlyLog::LoadRedisFile(const std::string& name, bool last) {
  const std::string path = PathOf(name);
  absl::StatusOr<std::unique_ptr<persistence::SequentialFile>> file = fs_->NewSequentialFile(path);
  if (!file.ok()) return file.status();
  char signature[5] = {};
  absl::StatusOr<size_t> got = (*file)->Read(sizeof(signature), signature);
  if (!got.ok()) return got.status();
  file->reset();
  if (*got == 0) return absl::OkStatus();  // Empty: nothing to load (Redis's AOF_EMPTY).
  uint64_t rdb_end = 0;
  if (*got == sizeof(signature) && std::string_view(signature, 5) == "REDIS") {
    spdlog::info("Reading the RDB {} of the AOF file {}",
                 name == settings_.appendfilename ? "preamble" : "base", name);
    const uint64_t loaded_before = loading_loaded_bytes_.load();
    const uint64_t total_before = loading_total_bytes_.load();
    // The snapshot loader reports its own progress; the log's resumes after it.
    absl::Status status = snapshots_.LoadFile(path, /*replace_existing=*/false,
                                              /*drop_expired=*/false, fs_, &rdb_end);
    loading_total_bytes_.store(total_before);
    loading_loaded_bytes_.store(loaded_before + rdb_end);
    if (!status.ok()) return status;
    absl::StatusOr<uint64_t> size = fs_->FileSize(path);
    if (size.ok() && *size == rdb_end) return absl::OkStatus();
    spdlog::info("Reading the remaining AOF tail of {}", name);
  }
  return ReplayRedisCommands(name, rdb_end, last);
}

absl::Status AppendOnlyLog::ReplayRedisCommands(const std::string& name, uint64_t offset,
                                                bool last) {
  absl::StatusOr<std::unique_ptr<persistence::SequentialFile>> file =
      fs_->NewSequentialFile(PathOf(name));
  if (!file.ok()) return file.status();
  if (offset > 0) {
    if (absl::Status status = (*file)->Skip(offset); !status.ok()) return status;
  }
  absl::StatusOr<uint64_t> file_size = fs_->FileSize(PathOf(name));
  log::RedisAofReader reader(file->get(), offset,
                             file_size.ok() ? *file_size : std::numeric_limits<uint64_t>::max());
  ClientState client(0);
  client.replaying = true;
  protocol::ReplyBuilder reply;
  const int databases = keyspace_.store().databases();
  const uint64_t loaded_before = loading_loaded_bytes_.load() - offset;
  std::vector<std::string_view> args;
  // MULTI ... EXEC is applied at EXEC, all or nothing, as Redis's fake client queues it.
  bool in_multi = false;
  uint64_t before_multi = offset;
  std::vector<std::vector<std::string>> queued;
  std::vector<std::string_view> queued_args;
  const auto apply = [&](const std::vector<std::string_view>& command,
                         uint64_t at) -> absl::Status {
    if (EqualsIgnoreCase(command[0], "select")) {
      int db = -1;
      if (command.size() != 2 || !absl::SimpleAtoi(ToAbsl(command[1]), &db)) {
        return absl::DataLossError(StrCat("Bad file format reading the append only file ", name,
                                          ": a SELECT without a database number at offset ", at));
      }
      if (db < 0 || db >= databases) {
        return absl::DataLossError(StrCat("The append only file ", name, " selects database ", db,
                                          " (at offset ", at, ") but only ", databases,
                                          " are configured"));
      }
      client.db.store(db);
      return absl::OkStatus();
    }
    return ReplayCommand(client, command, reply, name, at);
  };
  uint64_t commands = 0;
  uint64_t previous_end = offset;  // Redis's valid_up_to: past the last complete command.
  bool warned_nested_multi = false, warned_scripts = false;
  log::RedisAofReader::Outcome outcome;
  while ((outcome = reader.ReadCommand(&args)) == log::RedisAofReader::Outcome::kCommand) {
    const uint64_t at = reader.command_offset();
    const uint64_t end_before = previous_end;
    previous_end = reader.valid_end();
    if (EqualsIgnoreCase(args[0], "multi")) {
      if (in_multi) {
        // Redis 7.0 leaves one when it cuts a truncated tail inside a transaction and then
        // appends: its loader queues on and answers the nested MULTI with an ignored error.
        if (!warned_nested_multi) {
          warned_nested_multi = true;
          spdlog::warn("Ignoring a MULTI inside MULTI in {} at offset {}, as Redis does", name, at);
        }
        continue;
      }
      in_multi = true;
      before_multi = end_before;
    } else if (IsScriptCacheCommand(args)) {
      // Redis 6 logs SCRIPT LOAD/FLUSH: no keys, and a script's writes are in the file as their
      // own commands.
      if (!warned_scripts) {
        warned_scripts = true;
        spdlog::warn("Skipping {} in {} at offset {} (the script cache is not restored)",
                     std::string(args[0]), name, at);
      }
    } else if (EqualsIgnoreCase(args[0], "exec")) {
      if (!in_multi) {
        return absl::DataLossError(StrCat("Bad file format reading the append only file ", name,
                                          ": EXEC without MULTI at offset ", at));
      }
      in_multi = false;
      for (const std::vector<std::string>& command : queued) {
        queued_args.assign(command.begin(), command.end());
        if (absl::Status status = apply(queued_args, at); !status.ok()) return status;
      }
      queued.clear();
    } else if (in_multi) {
      queued.emplace_back(args.begin(), args.end());
    } else if (absl::Status status = apply(args, at); !status.ok()) {
      return status;
    }
    if ((++commands & 1023) == 0)
      ReportProgress(name, loaded_before + reader.valid_end(), commands);
  }
  loading_loaded_bytes_.store(loaded_before + reader.valid_end());
  std::string problem;
  uint64_t cut_at = reader.valid_end();
  switch (outcome) {
    case log::RedisAofReader::Outcome::kEnd:
      if (!in_multi) return absl::OkStatus();
      spdlog::warn("Revert incomplete MULTI/EXEC transaction in AOF file {}", name);
      problem = StrCat("a MULTI at offset ", before_multi, " without its EXEC");
      cut_at = before_multi;
      break;
    case log::RedisAofReader::Outcome::kTruncated:
      problem = StrCat(reader.problem(), " at offset ", reader.problem_offset());
      if (in_multi) cut_at = before_multi;
      break;
    case log::RedisAofReader::Outcome::kBadFormat:
      return absl::DataLossError(StrCat("Bad file format reading the append only file ", name, ": ",
                                        reader.problem(), " at offset ", reader.problem_offset()));
    case log::RedisAofReader::Outcome::kIoError:
    case log::RedisAofReader::Outcome::kCommand:
      return absl::Status(
          reader.io_status().code(),
          StrCat("Error reading the append only file ", name, ": ", reader.io_status().message()));
  }
  if (last && settings_.aof_load_truncated.get()) return CutTail(name, cut_at, problem);
  return absl::DataLossError(TruncatedFileError(name, problem, last));
}

absl::Status AppendOnlyLog::OpenForAppend(uint64_t valid_end) {
  bool new_log = manifest_.incrs.empty();
  if (!new_log) {
    bool empty = false;
    new_log = !IsGigakvLog(fs_, PathOf(manifest_.incrs.back().name), &empty);
    if (new_log) {
      // A Redis log (RESP) ends here: gigakv's records go to a log of their own.
      absl::StatusOr<uint64_t> size = fs_->FileSize(PathOf(manifest_.incrs.back().name));
      closed_logs_size_.fetch_add(size.ok() ? *size : 0);
    }
  }
  if (new_log) {
    incr_name_ = log::AddIncr(&manifest_, settings_.appendfilename);
    valid_end = 0;
    spdlog::info("Creating AOF incr file {} on server start", incr_name_);
  } else {
    incr_name_ = manifest_.incrs.back().name;
    // Space reserved past the last record (zeros, a clean end) is given back: appending
    // starts at the valid end.
    absl::StatusOr<uint64_t> size = fs_->FileSize(PathOf(incr_name_));
    if (size.ok() && *size > valid_end) {
      if (absl::Status status = fs_->Truncate(PathOf(incr_name_), valid_end); !status.ok()) {
        return status;
      }
    }
  }
  absl::StatusOr<std::unique_ptr<persistence::WritableFile>> file =
      fs_->NewAppendableFile(PathOf(incr_name_));
  if (!file.ok()) {
    return absl::Status(file.status().code(), StrCat("Can't open the append-only file ", incr_name_,
                                                     ": ", file.status().message()));
  }
  file_ = *std::move(file);
  writer_ = log::LogWriter(valid_end);
  if (valid_end == 0) {
    std::string header;
    writer_.AddFileHeader(&header);
    absl::Status status = file_->Append(header);
    if (status.ok()) status = file_->Sync();
    if (!status.ok()) return status;
  }
  if (new_log || !fs_->FileExists(PathOf(log::ManifestName(settings_.appendfilename)))) {
    if (absl::Status status = PersistManifest(); !status.ok()) return status;
  } else if (absl::Status status = fs_->SyncDir(DirectoryPath()); !status.ok()) {
    return status;
  }
  if (manifest_.base && base_size_ == 0) {
    absl::StatusOr<uint64_t> size = fs_->FileSize(PathOf(manifest_.base->name));
    base_size_ = size.ok() ? *size : 0;
  }
  synced_size_ = fsynced_size_ = file_->size();
  reserved_end_ = 0;
  reserve_supported_ = true;
  incr_size_.store(file_->size());
  current_size_.store(base_size_ + closed_logs_size_ + file_->size());
  rewrite_base_size_.store(current_size_.load());
  last_fsync_ms_ = SteadyMs();
  return absl::OkStatus();
}

// --- Producers -----------------------------------------------------------------------------------

template <typename Encode>
uint64_t AppendOnlyLog::Append(size_t size, Encode encode) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t at = pending_.size();
  pending_.resize(at + kLengthPrefix + size);
  char* p = pending_.data() + at;
  PutFixed32(p, static_cast<uint32_t>(size));
  encode(p + kLengthPrefix);
  const uint64_t number = appended_.load(std::memory_order_relaxed) + 1;
  appended_.store(number, std::memory_order_release);
  pending_bytes_.store(pending_.size(), std::memory_order_relaxed);
  if (thread_idle_) {
    thread_idle_ = false;
    wake_.notify_one();
  }
  return number;
}

void AppendOnlyLog::WaitForRoom() {
  if (pending_bytes_.load(std::memory_order_relaxed) < kMaxPendingBytes) return;
  std::unique_lock<std::mutex> lock(mutex_);
  if (pending_.size() < kMaxPendingBytes || stop_) return;
  waits_for_room_.fetch_add(1, std::memory_order_relaxed);
  const int64_t now_ms = SteadyMs();
  if (room_wait_logged_ms_ < 0 || now_ms - room_wait_logged_ms_ >= kFailureLogIntervalMs) {
    room_wait_logged_ms_ = now_ms;
    spdlog::warn(
        "The AOF is written slower than commands arrive (disk is busy?): write commands wait "
        "for it, this may slow down gigakv.");
  }
  ++room_waiters_;
  room_.wait(lock, [this] { return stop_ || pending_.size() < kMaxPendingBytes; });
  --room_waiters_;
}

void AppendOnlyLog::OnChange(const ChangeRecord& record) {
  if (record.effect.empty()) return;
  const int db = record.db;
  if (record.group != 0) {
    GroupBuffer& group = tls_group;
    if (group.group != record.group) {
      group.group = record.group;
      group.effects = 0;
      group.payload.assign(1, static_cast<char>(log::RecordKind::kTransaction));
    }
    const size_t at = group.payload.size();
    group.payload.resize(at + log::EncodedEffectSize(db, record.effect));
    log::EncodeEffect(group.payload.data() + at, db, record.effect);
    ++group.effects;
    return;
  }
  const size_t size = log::kRecordKindSize + log::EncodedEffectSize(db, record.effect);
  Append(size, [&](char* p) {
    *p++ = static_cast<char>(log::RecordKind::kEffect);
    log::EncodeEffect(p, db, record.effect);
  });
}

void AppendOnlyLog::OnGroupEnd(uint64_t group_id) {
  GroupBuffer& group = tls_group;
  if (group.group != group_id || group.effects == 0) return;
  // One effect is an effect: nothing to apply atomically.
  if (group.effects == 1) group.payload[0] = static_cast<char>(log::RecordKind::kEffect);
  Append(group.payload.size(),
         [&](char* p) { std::memcpy(p, group.payload.data(), group.payload.size()); });
  group.group = 0;
  group.effects = 0;
  if (group.payload.capacity() > (1u << 20)) {
    std::string().swap(group.payload);
  } else {
    group.payload.clear();
  }
}

// --- Durability ----------------------------------------------------------------------------------

void AppendOnlyLog::WhenDurable(const void* owner, uint64_t record,
                                std::function<void()> callback) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (enabled() && !stop_ && durable_.load(std::memory_order_acquire) < record) {
      waiters_.push_back({owner, record, std::move(callback)});
      return;
    }
  }
  callback();
}

void AppendOnlyLog::ForgetWaiters(const void* owner) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::erase_if(waiters_, [owner](const Waiter& waiter) { return waiter.owner == owner; });
  }
  std::lock_guard<std::mutex> running(callback_mutex_);
}

void AppendOnlyLog::NotifyDurable(uint64_t record) {
  durable_.store(record, std::memory_order_release);
  std::vector<std::function<void()>> ready;
  std::lock_guard<std::mutex> running(callback_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < waiters_.size();) {
      if (waiters_[i].record <= record) {
        ready.push_back(std::move(waiters_[i].callback));
        waiters_[i] = std::move(waiters_.back());
        waiters_.pop_back();
      } else {
        ++i;
      }
    }
  }
  for (auto& callback : ready) callback();
}

bool AppendOnlyLog::RewriteLimited() {
  // Redis's aofRewriteLimited: after 3 failures in a row, retry after 1 minute, then 2, 4...
  // up to an hour.
  constexpr uint64_t kThreshold = 3;
  constexpr int64_t kMaxDelayMinutes = 60;
  if (rewrite_failures_.load() < kThreshold) {
    next_delay_minutes_ = 0;
    next_rewrite_time_s_ = 0;
    return false;
  }
  const int64_t now_s = keyspace_.NowMs() / 1000;
  if (next_rewrite_time_s_ != 0) {
    if (now_s < next_rewrite_time_s_) return true;
    next_rewrite_time_s_ = 0;
    return false;
  }
  next_delay_minutes_ =
      std::min(next_delay_minutes_ == 0 ? 1 : next_delay_minutes_ * 2, kMaxDelayMinutes);
  next_rewrite_time_s_ = now_s + next_delay_minutes_ * 60;
  spdlog::warn(
      "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in {} "
      "minutes",
      next_delay_minutes_);
  return true;
}

void AppendOnlyLog::Cron() {
  if (disable_requested_.exchange(false)) Close();
  if (rewrite_finished_.exchange(false)) JoinRewriteThread();
  if (enable_pending_.load() && !enabled() && settings_.appendonly.get() &&
      !rewrite_running_.load() && !snapshots_.background_save_in_progress() && !RewriteLimited()) {
    if (absl::Status status = Enable(); !status.ok()) {
      spdlog::warn("Turning the AOF on failed: {}", std::string(status.message()));
    }
    return;
  }
  if (!settings_.appendonly.get()) enable_pending_.store(false);
  if (!rewrite_running_.load()) {
    if (rewrite_scheduled_.load() && !snapshots_.background_save_in_progress() &&
        !RewriteLimited()) {
      (void)StartRewrite();
    } else if (enabled() && settings_.auto_aof_rewrite_percentage.get() > 0) {
      // As Redis: once the log outgrew min-size and grew by the percentage over its size after
      // the last rewrite (or at start).
      const uint64_t size = current_size_.load();
      const uint64_t base = std::max<uint64_t>(rewrite_base_size_.load(), 1);
      const int64_t growth = static_cast<int64_t>(size * 100 / base) - 100;
      if (size > static_cast<uint64_t>(settings_.auto_aof_rewrite_min_size.get()) &&
          growth >= settings_.auto_aof_rewrite_percentage.get() && !RewriteLimited()) {
        spdlog::info("Starting automatic rewriting of AOF on {}% growth", growth);
        (void)StartRewrite();
      }
    }
  }
  if (!writes_refused()) return;
  // Once a second, as Redis's serverCron retries a failed AOF write.
  const int64_t now_ms = SteadyMs();
  if (now_ms - last_retry_request_ms_.load() < kRetryMs) return;
  last_retry_request_ms_.store(now_ms);
  std::lock_guard<std::mutex> lock(mutex_);
  retry_requested_ = true;
  wake_.notify_one();
}

// --- The log thread ------------------------------------------------------------------------------

void AppendOnlyLog::Run() {
  std::string taken;
  size_t pending_capacity = 0;
  int64_t last_timestamp_s = -1;
  while (true) {
    uint64_t last = 0;
    bool stopping = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // With nothing to do the thread sleeps until a record arrives. Bytes that await an fsync
      // wake it once a second (everysec's fsync, or the policy may have changed from no: no
      // hook tells it), as does a failure for its retry.
      if (!stop_ && pending_.empty() && !switch_requested_) {
        thread_idle_ = true;
        const bool timed =
            write_failed_.load() || resync_needed_ || FsyncBehind() || !batch_.empty();
        if (timed) {
          wake_.wait_for(lock, std::chrono::milliseconds(kRetryMs));
        } else {
          wake_.wait(lock, [this] { return stop_ || !pending_.empty() || switch_requested_; });
        }
        thread_idle_ = false;
      }
      taken.swap(pending_);
      pending_.clear();
      pending_capacity = pending_.capacity();
      pending_bytes_.store(0, std::memory_order_relaxed);
      if (room_waiters_ > 0) room_.notify_all();
      last = appended_.load(std::memory_order_acquire);
      stopping = stop_;
    }
    const uint64_t first = batch_last_ + 1;
    if (!taken.empty() || last >= first) {
      if (settings_.aof_timestamp_enabled.get()) {
        const int64_t now_s = keyspace_.NowMs() / 1000;
        if (now_s != last_timestamp_s) {
          last_timestamp_s = now_s;
          std::string record;
          log::AppendTimestampRecord(static_cast<uint64_t>(now_s), &record);
          writer_.AddRecord(record, &batch_);
        }
      }
      FrameRecords(taken, first);
      batch_last_ = last;
      if (taken.capacity() > (8u << 20)) std::string().swap(taken);
      taken.clear();
    }
    {
      bool switch_now = false;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        switch_now = switch_requested_ && switch_after_ <= batch_last_;
      }
      if (switch_now) SwitchLog();
    }
    const bool taken_nothing = batch_.empty();
    buffer_length_.store(batch_.size(), std::memory_order_relaxed);
    const bool ok = WriteAndSync(stopping);
    // What the log holds (the producers' buffer as last taken, the framed and the unsynced
    // bytes) is its own, not the dataset's: eviction leaves it out, as Redis leaves out aof_buf.
    const int64_t buffers = static_cast<int64_t>(taken.capacity() + pending_capacity +
                                                 batch_.capacity() + unsynced_.capacity());
    buffer_memory_.store(buffers, std::memory_order_relaxed);
    keyspace_.set_not_counted_memory(buffers);
    if (stopping) {
      // Closing: everything is written and fsynced, or the disk failed once more (logged).
      if (!ok) spdlog::warn("Closing the AOF with records it could not write: {}", last_error());
      break;
    }
    if (!ok) {
      // The retry comes with the cron (Cron) or after a second.
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(kRetryMs),
                     [this] { return stop_ || retry_requested_; });
      retry_requested_ = false;
    } else if (!taken_nothing && settings_.appendfsync.get() != AppendFsync::kAlways) {
      // everysec and no: nobody waits for the write, so under load the records of a
      // millisecond go in one write, and producers do not wake this thread record by record
      // (it is not idle meanwhile). Like Redis's one write per event loop round.
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, kBatchingPause, [this] { return stop_; });
    }
  }
}

void AppendOnlyLog::FrameRecords(const std::string& taken, uint64_t first) {
  uint64_t number = first;
  for (size_t at = 0; at < taken.size(); ++number) {
    bool switch_now = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      switch_now = switch_requested_ && switch_after_ < number;
    }
    if (switch_now) {
      batch_last_ = number - 1;
      SwitchLog();
    }
    const uint32_t size = GetFixed32(taken.data() + at);
    writer_.AddRecord(std::string_view(taken).substr(at + kLengthPrefix, size), &batch_);
    at += kLengthPrefix + size;
  }
}

bool AppendOnlyLog::SwitchLog() {
  // The old log is written out first: its records stay in it.
  bool ok = WriteAndSync(/*force_sync=*/true);
  std::string name;
  std::unique_ptr<persistence::WritableFile> file;
  if (ok) {
    std::lock_guard<std::mutex> lock(manifest_mutex_);
    const persistence::log::Manifest before = manifest_;
    name = log::AddIncr(&manifest_, settings_.appendfilename);
    absl::StatusOr<std::unique_ptr<persistence::WritableFile>> created =
        fs_->NewWritableFile(PathOf(name));
    absl::Status status = created.status();
    std::string header;
    log::LogWriter writer;
    if (status.ok()) {
      file = *std::move(created);
      writer.AddFileHeader(&header);
      status = file->Append(header);
    }
    if (status.ok()) status = file->Sync();
    // Turning on at runtime, the manifest lists the log only with the base that goes with it
    // (Redis's temporary INCR of AOF_WAIT_REWRITE).
    if (status.ok() && !enabling_.load()) status = PersistManifest();
    if (!status.ok()) {
      spdlog::warn("Can't open the new append-only file {} for the rewrite: {}", name,
                   std::string(status.message()));
      manifest_ = before;
      if (file != nullptr) (void)fs_->RemoveFile(PathOf(name));
      ok = false;
    } else {
      if (file_ != nullptr) {
        closed_logs_size_ += file_->size();
        (void)file_->Close();
      }
      file_ = std::move(file);
      writer_ = writer;
      incr_name_ = name;
      synced_size_ = fsynced_size_ = file_->size();
      reserved_end_ = 0;
      reserve_supported_ = true;
      incr_size_.store(file_->size());
      unsynced_.clear();
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    switch_requested_ = false;
    switch_state_ = ok ? 1 : -1;
  }
  switch_done_cv_.notify_all();
  return ok;
}

void AppendOnlyLog::ReserveAhead(size_t bytes) {
  if (!reserve_supported_ || file_->size() + bytes <= reserved_end_) return;
  const uint64_t reserve = std::max<uint64_t>(kReserveBytes, bytes);
  // A failure (a full disk) is tried again only a reservation later: the append itself then
  // says whether there is room.
  reserved_end_ = file_->size() + reserve;
  if (absl::Status status = file_->Preallocate(reserve); !status.ok()) {
    if (absl::IsUnimplemented(status)) {
      reserve_supported_ = false;
      spdlog::info("The file system does not reserve space for {}: fsyncs will cost more",
                   incr_name_);
    }
  }
}

bool AppendOnlyLog::WriteAndSync(bool force_sync) {
  if (file_ == nullptr) return true;  // Turning on at runtime: no log before the first switch.
  // no-appendfsync-on-rewrite yes: while a rewrite or a background save writes its file, the
  // log is written but not fsynced, as with appendfsync no (Redis's choice of latency over
  // durability for that time; replies under always then wait for the write only).
  const bool fsync_suspended =
      settings_.no_appendfsync_on_rewrite.get() &&
      (rewrite_running_.load() || snapshots_.background_save_in_progress());
  const AppendFsync policy = fsync_suspended ? AppendFsync::kNo : settings_.appendfsync.get();
  const int64_t now_ms = SteadyMs();
  auto fail = [&](const absl::Status& status, std::string_view what) {
    // The reason first: a writer refused for writes_refused() reads it.
    const std::string message(status.message());
    const size_t colon = message.rfind(": ");
    {
      std::lock_guard<std::mutex> lock(error_mutex_);
      last_error_ = colon == std::string::npos ? message : message.substr(colon + 2);
    }
    if (!write_failed_.exchange(true) || now_ms - last_failure_log_ms_ >= kFailureLogIntervalMs) {
      last_failure_log_ms_ = now_ms;
      spdlog::warn("Error {} the AOF file {}: {}", what, incr_name_, message);
    }
    return false;
  };
  if (resync_needed_) {
    // The kernel may have dropped the pages of a failed fsync: write them again.
    absl::Status status = fs_->Truncate(PathOf(incr_name_), synced_size_);
    if (status.ok()) {
      absl::StatusOr<std::unique_ptr<persistence::WritableFile>> file =
          fs_->NewAppendableFile(PathOf(incr_name_));
      if (!file.ok()) return fail(file.status(), "reopening");
      file_ = *std::move(file);
      reserved_end_ = 0;
      ReserveAhead(unsynced_.size());
      status = file_->Append(unsynced_);
    }
    if (!status.ok()) return fail(status, "writing");
    resync_needed_ = false;
  }
  if (!batch_.empty()) {
    ReserveAhead(batch_.size());
    const uint64_t before = file_->size();
    const absl::Status status = file_->Append(batch_);
    const uint64_t written = file_->size() - before;
    if (policy != AppendFsync::kNo) {
      unsynced_.append(batch_, 0, written);
    } else {
      // Nothing kept to write again: the OS has it. The resync point moves with the file, so a
      // later failed fsync never cuts these bytes out (nor misaligns the blocks after them).
      synced_size_ = file_->size();
      unsynced_.clear();
    }
    batch_.erase(0, written);
    incr_size_.store(file_->size());
    current_size_.store(base_size_ + closed_logs_size_ + file_->size());
    if (!status.ok()) return fail(status, "writing to");
    written_last_ = batch_last_;
    buffer_length_.store(0, std::memory_order_relaxed);
  }
  const bool sync =
      force_sync ||
      (FsyncBehind() &&
       (policy == AppendFsync::kAlways ||
        (policy == AppendFsync::kEverysec &&
         // The copy kept for a failed fsync stays bounded under a heavy write rate.
         (now_ms - last_fsync_ms_ >= 1000 || unsynced_.size() >= kMaxUnsyncedBytes))));
  if (sync) {
    if (absl::Status status = file_->Sync(); !status.ok()) {
      resync_needed_ = true;
      return fail(status, "fsyncing");
    }
    synced_size_ = fsynced_size_ = file_->size();
    last_fsync_ms_ = now_ms;
    if (unsynced_.capacity() > 2 * kMaxUnsyncedBytes) std::string().swap(unsynced_);
    unsynced_.clear();
  }
  if (write_failed_.exchange(false)) {
    spdlog::warn("AOF write error looks solved, gigakv can write again.");
  }
  // With always, a record counts once fsynced; otherwise once written.
  if (policy != AppendFsync::kAlways || unsynced_.empty()) {
    if (written_last_ > durable_.load(std::memory_order_relaxed)) NotifyDurable(written_last_);
  }
  return true;
}

// --- Rewrite -------------------------------------------------------------------------------------

void AppendOnlyLog::LoadManifestFromDisk() {
  manifest_ = log::Manifest();
  const std::string path = PathOf(log::ManifestName(settings_.appendfilename));
  if (!fs_->FileExists(path)) return;
  absl::StatusOr<std::string> text = persistence::ReadFile(fs_, path);
  if (!text.ok()) return;
  absl::StatusOr<log::Manifest> parsed = log::ParseManifest(*text);
  if (parsed.ok()) manifest_ = *std::move(parsed);
}

absl::Status AppendOnlyLog::Enable() {
  // The lock covers the set-up only: the rewrite below waits for every I/O thread's batch,
  // and one of them may be closing the log meanwhile.
  std::unique_lock<std::mutex> closing(close_mutex_);
  if (enabled()) return absl::OkStatus();
  disable_requested_.store(false);
  if (rewrite_running_.load() || snapshots_.background_save_in_progress()) {
    // As Redis's startAppendOnly: the base is written once the other job ends (Cron).
    enable_pending_.store(true);
    spdlog::warn(
        "AOF was enabled but there is already another background operation. An AOF background "
        "was scheduled to start when possible.");
    return absl::OkStatus();
  }
  enable_pending_.store(false);
  if (absl::Status status = fs_->CreateDir(DirectoryPath()); !status.ok()) return status;
  {
    std::lock_guard<std::mutex> lock(manifest_mutex_);
    LoadManifestFromDisk();
  }
  file_.reset();
  writer_ = log::LogWriter();
  batch_.clear();
  unsynced_.clear();
  resync_needed_ = false;
  write_failed_.store(false);
  synced_size_ = fsynced_size_ = 0;
  base_size_.store(0);
  closed_logs_size_.store(0);
  // Records before the instant are not this log's: nothing waits for them.
  batch_last_ = written_last_ = appended_.load();
  durable_.store(appended_.load());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = false;
    pending_.clear();
    pending_bytes_.store(0, std::memory_order_relaxed);
  }
  if (thread_.joinable()) thread_.join();
  enabling_.store(true);
  enabled_.store(true, std::memory_order_release);
  thread_ = std::thread([this] { Run(); });
  closing.unlock();
  absl::StatusOr<RewriteStart> started = StartRewrite();
  if (!started.ok() || *started != RewriteStart::kStarted) {
    enabling_.store(false);
    rewrite_scheduled_.store(false);
    Close();
    if (!started.ok()) return started.status();
    // A background save took the store's snapshot first: Cron starts the base after it.
    enable_pending_.store(true);
    return absl::OkStatus();
  }
  spdlog::info("Background append only file rewriting started to turn the AOF on");
  return absl::OkStatus();
}

absl::StatusOr<AppendOnlyLog::RewriteStart> AppendOnlyLog::StartRewrite() {
  // Claimed before the snapshot's instant, with no lock held: the instant waits for every I/O
  // thread to finish its batch, and one of them may be asking for a rewrite too (it must get
  // "already in progress", not wait behind a lock).
  bool idle = false;
  if (!rewrite_running_.compare_exchange_strong(idle, true)) {
    return absl::FailedPreconditionError(
        "Background append only file rewriting already in progress");
  }
  auto release = [this](auto result) {
    rewrite_running_.store(false);
    return result;
  };
  if (snapshots_.background_save_in_progress()) {
    rewrite_scheduled_.store(true);
    return release(absl::StatusOr<RewriteStart>(RewriteStart::kScheduled));
  }
  JoinRewriteThread();
  const bool logging = enabled();
  if (absl::Status status = fs_->CreateDir(DirectoryPath()); !status.ok()) {
    return release(absl::StatusOr<RewriteStart>(status));
  }
  std::string base;
  {
    std::lock_guard<std::mutex> lock(manifest_mutex_);
    if (!logging) LoadManifestFromDisk();
    base = StrCat(settings_.appendfilename, ".", manifest_.base_seq + 1, ".base.rdb");
  }
  absl::StatusOr<std::unique_ptr<persistence::rdb::RdbSnapshot>> snapshot =
      snapshots_.BeginSnapshot(/*aof_base=*/true, [&] {
        if (!logging) return;
        // Nothing publishes now: records up to here are in the snapshot, the rest go to the
        // new log. Turning on at runtime, the log starts listening here.
        if (enabling_.load()) {
          keyspace_.changes().SetInterest(this, ChangeConsumer::Interest::kEffects);
        }
        std::lock_guard<std::mutex> lock(mutex_);
        switch_requested_ = true;
        switch_after_ = appended_.load();
        switch_state_ = 0;
        wake_.notify_one();
      });
  if (!snapshot.ok()) {
    if (!absl::IsFailedPrecondition(snapshot.status())) {
      return release(absl::StatusOr<RewriteStart>(snapshot.status()));
    }
    rewrite_scheduled_.store(true);  // Another snapshot holds the store.
    return release(absl::StatusOr<RewriteStart>(RewriteStart::kScheduled));
  }
  rewrite_scheduled_.store(false);
  rewrite_finished_.store(false);
  rewrite_start_ms_.store(SteadyMs());
  rewrites_.fetch_add(1);
  {
    std::lock_guard<std::mutex> guard(rewrite_mutex_);
    rewrite_snapshot_ = snapshot->get();
  }
  spdlog::info("Background append only file rewriting started");
  std::lock_guard<std::mutex> join_guard(rewrite_join_mutex_);
  rewrite_thread_ = std::thread(
      [this, taken = *std::move(snapshot), base]() mutable { RunRewrite(std::move(taken), base); });
  return RewriteStart::kStarted;
}

void AppendOnlyLog::RunRewrite(std::unique_ptr<persistence::rdb::RdbSnapshot> snapshot,
                               std::string base) {
  const bool logging = enabled();
  const std::string dir = DirectoryPath();
  persistence::AtomicFile file(fs_);
  const std::string temp = StrCat("temp-rewriteaof-bg-", ::getpid(), ".aof");
  absl::Status status = file.Open(dir, base, temp);
  uint64_t base_bytes = 0;
  if (status.ok()) {
    const bool incremental = settings_.aof_rewrite_incremental_fsync.get();
    uint64_t unsynced = 0;
    status = snapshot->WriteTo([&](std::string_view bytes) -> absl::Status {
      if (absl::Status appended = file.Append(bytes); !appended.ok()) return appended;
      base_bytes += bytes.size();
      unsynced += bytes.size();
      if (incremental && unsynced >= (4u << 20)) {  // Redis's REDIS_AUTOSYNC_BYTES.
        unsynced = 0;
        return file.SyncData();
      }
      return absl::OkStatus();
    });
    if (status.ok()) status = file.Commit();
  }
  if (!status.ok()) file.Abort();
  {
    std::lock_guard<std::mutex> guard(rewrite_mutex_);
    rewrite_snapshot_ = nullptr;
  }
  snapshot.reset();
  if (logging) {
    // The log thread moves to the new log promptly (it was woken at the instant).
    std::unique_lock<std::mutex> lock(mutex_);
    switch_done_cv_.wait(lock, [this] { return switch_state_ != 0 || stop_; });
    if (status.ok() && switch_state_ != 1) {
      status = absl::InternalError("could not open a new append-only file");
    }
  }
  if (status.ok()) {
    std::lock_guard<std::mutex> lock(manifest_mutex_);
    const log::Manifest before = manifest_;
    const std::string added = log::AddBase(&manifest_, settings_.appendfilename);
    if (added != base) status = absl::InternalError("the manifest changed during the rewrite");
    if (logging) {
      // Every log but the one the switch opened is in the new base.
      std::vector<log::ManifestFile> keep;
      for (log::ManifestFile& incr : manifest_.incrs) {
        if (incr.name == incr_name_) {
          keep.push_back(std::move(incr));
        } else {
          incr.type = 'h';
          manifest_.history.push_back(std::move(incr));
        }
      }
      manifest_.incrs = std::move(keep);
    } else {
      log::RetireIncrs(&manifest_);
    }
    if (status.ok()) status = PersistManifest();
    if (!status.ok()) manifest_ = before;
  }
  const int64_t elapsed_s = (SteadyMs() - rewrite_start_ms_.load() + 500) / 1000;
  last_rewrite_time_s_.store(elapsed_s);
  if (status.ok()) {
    spdlog::info("Successfully renamed the temporary AOF base file {} into {}", temp, base);
    base_size_.store(base_bytes);
    closed_logs_size_.store(0);
    // The log's written bytes (its file may be longer: space reserved ahead).
    const uint64_t incr_bytes = logging ? incr_size_.load() : 0;
    current_size_.store(base_bytes + incr_bytes);
    rewrite_base_size_.store(base_bytes + incr_bytes);
    DeleteHistory();
    if (enabling_.exchange(false)) spdlog::info("AOF is now on (appendonly yes)");
    last_rewrite_ok_.store(true);
    rewrite_failures_.store(0);
    spdlog::info("Background AOF rewrite finished successfully");
  } else {
    if (!absl::IsCancelled(status)) {
      spdlog::warn("Background AOF rewrite failed: {}", std::string(status.message()));
      last_rewrite_ok_.store(false);
      rewrite_failures_.fetch_add(1);
    }
    if (enabling_.load() && !absl::IsCancelled(status)) {
      // Without its base the log is of no use: the cron turns it off and tries again later
      // (appendonly stays yes), as Redis retries the rewrite of AOF_WAIT_REWRITE.
      spdlog::warn("Turning the AOF on failed: it stays off until a retry succeeds");
      disable_requested_.store(true);
      enable_pending_.store(true);
    }
  }
  rewrite_running_.store(false);
  rewrite_finished_.store(true);
}

void AppendOnlyLog::DeleteHistory() {
  std::lock_guard<std::mutex> lock(manifest_mutex_);
  if (manifest_.history.empty()) return;
  for (const log::ManifestFile& file : manifest_.history) {
    spdlog::info("Removing the history file {} in the background", file.name);
    (void)fs_->RemoveFile(PathOf(file.name));
  }
  manifest_.history.clear();
  if (absl::Status status = PersistManifest(); !status.ok()) {
    spdlog::warn("Error persisting the AOF manifest without history: {}",
                 std::string(status.message()));
  }
}

void AppendOnlyLog::AbortRewrite() {
  {
    std::lock_guard<std::mutex> guard(rewrite_mutex_);
    if (rewrite_snapshot_ != nullptr) rewrite_snapshot_->Cancel();
  }
  JoinRewriteThread();
}

void AppendOnlyLog::JoinRewriteThread() {
  std::lock_guard<std::mutex> guard(rewrite_join_mutex_);
  if (rewrite_thread_.joinable()) rewrite_thread_.join();
}

void AppendOnlyLog::Close() {
  std::lock_guard<std::mutex> closing(close_mutex_);
  CloseLocked();
}

void AppendOnlyLog::CloseLocked() {
  AbortRewrite();
  enabling_.store(false);
  if (!enabled()) return;
  keyspace_.changes().SetInterest(this, ChangeConsumer::Interest::kNone);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    wake_.notify_one();
    room_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  enabled_.store(false, std::memory_order_release);
  buffer_memory_.store(0);
  keyspace_.set_not_counted_memory(0);
  if (file_ != nullptr) (void)file_->Close();
  file_.reset();
  // Nobody waits for a log that is gone.
  std::vector<Waiter> waiters;
  std::lock_guard<std::mutex> running(callback_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiters.swap(waiters_);
  }
  for (Waiter& waiter : waiters) waiter.callback();
}

std::string AppendOnlyLog::last_error() const {
  std::lock_guard<std::mutex> lock(error_mutex_);
  return last_error_;
}

AppendOnlyLog::Info AppendOnlyLog::info() const {
  Info info;
  info.enabled = enabled();
  info.last_write_ok = !writes_refused();
  info.current_size = current_size_.load();
  info.base_size = base_size_;
  info.buffer_length = buffer_length_.load(std::memory_order_relaxed);
  info.buffer_memory = enabled() ? buffer_memory_.load(std::memory_order_relaxed) : 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    info.buffer_length += pending_.size();
  }
  info.delayed_fsync = delayed_fsync_.load();
  info.loading = loading();
  info.loading_loaded_bytes = loading_loaded_bytes_.load();
  info.loading_total_bytes = loading_total_bytes_.load();
  info.rewrite_in_progress = rewrite_running_.load();
  info.rewrite_scheduled = rewrite_scheduled_.load() || enable_pending_.load();
  info.last_rewrite_time_s = last_rewrite_time_s_.load();
  info.current_rewrite_time_s =
      info.rewrite_in_progress ? (SteadyMs() - rewrite_start_ms_.load()) / 1000 : -1;
  info.last_rewrite_ok = last_rewrite_ok_.load();
  info.rewrites = rewrites_.load();
  info.rewrites_consecutive_failures = rewrite_failures_.load();
  return info;
}

}  // namespace gigakv::server
