// gigakv-check-aof [--fix [--yes]] [--dump] [--stats] <manifest | log file> — checks an
// append-only directory as redis-check-aof checks Redis's: the manifest, its RDB base
// (rdb_check.h) and every incremental log in order (log_check.h). Prints each file's verdict and
// exits 0 when all are sound, or names the first bad record (file, offset, reason) and exits 1.
// --fix cuts the last log at its first problem (after asking; --yes answers for scripts); a
// problem in an earlier file cannot be fixed by cutting. --dump prints the records as commands,
// --stats counts effects per command. Redis's files in a manifest (an RDB base, RESP logs, a
// Redis 6 appendonly.aof moved in) are checked as Redis's redis-check-aof checks them.
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gigakv/strings.h"
#include "persistence/file_system.h"
#include "persistence/log/log_check.h"
#include "persistence/log/log_format.h"
#include "persistence/log/manifest.h"
#include "persistence/rdb/rdb_check.h"
#include "persistence/rdb/rdb_io.h"

namespace {

using namespace std::string_view_literals;
namespace persistence = gigakv::persistence;
namespace log = gigakv::persistence::log;
using gigakv::StrCat;

constexpr std::string_view kUsage =
    "Usage: gigakv-check-aof [--fix [--yes]] [--dump] [--stats] <file.manifest | log-file>\n"
    "Checks gigakv's append-only files: the manifest, its RDB base and every incremental log,\n"
    "or a single log file. Exit status 0 when all are sound, 1 otherwise.\n"
    "  --fix      cut the last log at its first bad record (asks first)\n"
    "  --yes      answer yes to --fix's question\n"
    "  --dump     print every record as commands\n"
    "  --stats    count the effects per command\n"
    "  -h, --help print this help\n"sv;

struct Options {
  bool fix = false;
  bool yes = false;
  bool dump = false;
  bool stats = false;
  std::string path;
};

persistence::FileSystem* Fs() { return persistence::PosixFileSystem(); }

bool Confirm(const Options& options, const std::string& question) {
  std::printf("%s Continue? [y/N]: ", question.c_str());
  if (options.yes) {
    std::printf("y (--yes)\n");
    return true;
  }
  std::fflush(stdout);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return !answer.empty() && (answer[0] == 'y' || answer[0] == 'Y');
}

// Cuts `path` at `valid_end` after asking; whether it was cut.
bool Cut(const Options& options, const std::string& path, const std::string& name,
         uint64_t valid_end) {
  absl::StatusOr<uint64_t> size = Fs()->FileSize(path);
  const uint64_t removed = size.ok() && *size > valid_end ? *size - valid_end : 0;
  if (!Confirm(options, StrCat("This will cut ", name, " at offset ", valid_end, ", removing ",
                               removed, " bytes."))) {
    std::printf("Not fixed.\n");
    return false;
  }
  if (absl::Status status = Fs()->Truncate(path, valid_end); !status.ok()) {
    std::printf("Failed to cut %s: %s\n", name.c_str(), std::string(status.message()).c_str());
    return false;
  }
  std::printf("Successfully cut %s at offset %llu\n", name.c_str(),
              static_cast<unsigned long long>(valid_end));
  return true;
}

enum class FileKind { kEmpty, kRdb, kRedisCommands, kGigakvLog };

// Told apart by content, as the server tells them (Redis's files: an RDB, or RESP commands
// that may start with a "#TS:" annotation).
FileKind KindOf(const std::string& path) {
  auto file = Fs()->NewSequentialFile(path);
  char head[5] = {};
  absl::StatusOr<size_t> got =
      file.ok() ? (*file)->Read(sizeof(head), head) : absl::StatusOr<size_t>(file.status());
  if (!got.ok()) return FileKind::kGigakvLog;  // The log checker reports the error.
  if (*got == 0) return FileKind::kEmpty;
  if (*got == sizeof(head) && std::string_view(head, sizeof(head)) == "REDIS") {
    return FileKind::kRdb;
  }
  if (head[0] == '*' || head[0] == '#') return FileKind::kRedisCommands;
  return FileKind::kGigakvLog;
}

// Checks a file Redis wrote (or a gigakv base): an RDB, with or without RESP commands after it
// (a Redis 6 appendonly.aof), or RESP commands. `last`: --fix may cut a truncated tail.
bool CheckRedisFile(const std::string& path, const std::string& name, const char* label, bool last,
                    const Options& options, std::map<std::string, uint64_t>* stats) {
  uint64_t offset = 0;
  if (KindOf(path) == FileKind::kRdb) {
    auto file = Fs()->NewSequentialFile(path);
    if (!file.ok()) {
      std::printf("%s AOF %s can't be opened: %s\n", label, name.c_str(),
                  std::string(file.status().message()).c_str());
      return false;
    }
    persistence::SequentialFile* source = file->get();
    persistence::rdb::RdbReader reader(
        [source](char* buffer, size_t capacity) { return source->Read(capacity, buffer); });
    const persistence::rdb::RdbCheckReport report =
        persistence::rdb::CheckRdb(reader, persistence::rdb::RdbCheckOptions());
    if (!report.status.ok()) {
      std::fputs(persistence::rdb::FormatRdbCheckReport(report, name).c_str(), stdout);
      std::printf("%s AOF %s is not valid\n", label, name.c_str());
      return false;
    }
    absl::StatusOr<uint64_t> size = Fs()->FileSize(path);
    if (size.ok() && *size == report.bytes) {
      std::printf("%s AOF %s is valid (%llu keys)\n", label, name.c_str(),
                  static_cast<unsigned long long>(report.keys()));
      return true;
    }
    std::printf("RDB preamble of %s is valid (%llu keys), checking the AOF tail\n", name.c_str(),
                static_cast<unsigned long long>(report.keys()));
    offset = report.bytes;
  }
  auto file = Fs()->NewSequentialFile(path);
  absl::Status skipped = file.ok() ? (*file)->Skip(offset) : file.status();
  if (!skipped.ok()) {
    std::printf("%s AOF %s can't be read: %s\n", label, name.c_str(),
                std::string(skipped.message()).c_str());
    return false;
  }
  std::string dump;
  absl::StatusOr<uint64_t> file_size = Fs()->FileSize(path);
  const log::RedisAofCheckResult result = log::CheckRedisAof(
      **file, offset, file_size.ok() ? *file_size : std::numeric_limits<uint64_t>::max(),
      options.dump ? &dump : nullptr);
  std::fputs(dump.c_str(), stdout);
  for (const auto& [command, count] : result.per_command) (*stats)[command] += count;
  using Outcome = log::RedisAofReader::Outcome;
  if (result.outcome == Outcome::kEnd) {
    std::printf("%s AOF %s is valid (%llu commands)\n", label, name.c_str(),
                static_cast<unsigned long long>(result.commands));
    return true;
  }
  const char* kind = result.outcome == Outcome::kTruncated ? "truncated"
                     : result.outcome == Outcome::kIoError ? "read error"
                                                           : "bad format";
  std::printf("AOF %s: %s at offset %llu: %s (%llu good commands before it)\n", name.c_str(), kind,
              static_cast<unsigned long long>(result.problem_offset), result.problem.c_str(),
              static_cast<unsigned long long>(result.commands));
  if (!options.fix) return false;
  if (result.outcome != Outcome::kTruncated) {
    std::printf("Only a truncated tail can be fixed by cutting it\n");
    return false;
  }
  if (!last) {
    std::printf("Only the last AOF file can be fixed by cutting it: %s is not the last\n",
                name.c_str());
    return false;
  }
  return Cut(options, path, name, result.valid_end);
}

// Checks one log; `last`: --fix may cut it. Returns whether it is (now) sound.
bool CheckIncr(const std::string& path, const std::string& name, bool last, const Options& options,
               std::map<std::string, uint64_t>* stats) {
  const FileKind file_kind = KindOf(path);
  if (file_kind == FileKind::kRdb || file_kind == FileKind::kRedisCommands) {
    return CheckRedisFile(path, name, "INCR", last, options, stats);
  }
  auto file = Fs()->NewSequentialFile(path);
  if (!file.ok()) {
    std::printf("AOF %s can't be opened: %s\n", name.c_str(),
                std::string(file.status().message()).c_str());
    return false;
  }
  std::string dump;
  const log::LogCheckResult result = log::CheckLog(**file, options.dump ? &dump : nullptr);
  std::fputs(dump.c_str(), stdout);
  for (const auto& [command, count] : result.per_command) (*stats)[command] += count;
  if (result.outcome == log::LogReader::Outcome::kEnd) {
    std::printf("INCR AOF %s is valid (%llu records)\n", name.c_str(),
                static_cast<unsigned long long>(result.records));
    return true;
  }
  const char* kind = result.outcome == log::LogReader::Outcome::kTornTail  ? "torn tail"
                     : result.outcome == log::LogReader::Outcome::kIoError ? "read error"
                                                                           : "bad record";
  std::printf("AOF %s: %s at offset %llu: %s (%llu good records before it)\n", name.c_str(), kind,
              static_cast<unsigned long long>(result.problem_offset), result.problem.c_str(),
              static_cast<unsigned long long>(result.records));
  if (!options.fix) return false;
  if (!last) {
    std::printf("Only the last AOF file can be fixed by cutting it: %s is not the last\n",
                name.c_str());
    return false;
  }
  if (result.valid_end == 0) {
    // Not even the header verifies: not one of gigakv's logs, so nothing to cut.
    std::printf("%s does not start as a gigakv log: not cut\n", name.c_str());
    return false;
  }
  return Cut(options, path, name, result.valid_end);
}

int Run(const Options& options) {
  std::map<std::string, uint64_t> stats;
  bool ok = true;
  const std::string& path = options.path;
  if (path.size() > 9 && path.compare(path.size() - 9, 9, ".manifest") == 0) {
    absl::StatusOr<std::string> text = persistence::ReadFile(Fs(), path);
    if (!text.ok()) {
      std::printf("Can't read the AOF manifest %s: %s\n", path.c_str(),
                  std::string(text.status().message()).c_str());
      return 1;
    }
    absl::StatusOr<log::Manifest> manifest = log::ParseManifest(*text);
    if (!manifest.ok()) {
      std::printf("Invalid AOF manifest %s: %s\n", path.c_str(),
                  std::string(manifest.status().message()).c_str());
      return 1;
    }
    const std::string dir = persistence::DirName(path);
    std::printf("Start checking Multi Part AOF\n");
    if (manifest->base) {
      std::printf("Start to check BASE AOF.\n");
      ok = CheckRedisFile(persistence::JoinPath(dir, manifest->base->name), manifest->base->name,
                          "BASE", manifest->incrs.empty(), options, &stats);
    }
    std::printf("Start to check INCR files.\n");
    for (size_t i = 0; ok && i < manifest->incrs.size(); ++i) {
      const std::string& name = manifest->incrs[i].name;
      ok = CheckIncr(persistence::JoinPath(dir, name), name, i + 1 == manifest->incrs.size(),
                     options, &stats);
    }
    if (ok) std::printf("All AOF files and manifest are valid\n");
  } else {
    ok = CheckIncr(path, path, /*last=*/true, options, &stats);
  }
  if (options.stats) {
    for (const auto& [command, count] : stats) {
      std::printf("%-20s %llu\n", command.c_str(), static_cast<unsigned long long>(count));
    }
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h"sv || arg == "--help"sv) {
      std::fputs(std::string(kUsage).c_str(), stdout);
      return 0;
    }
    if (arg == "--fix"sv) {
      options.fix = true;
    } else if (arg == "--yes"sv) {
      options.yes = true;
    } else if (arg == "--dump"sv) {
      options.dump = true;
    } else if (arg == "--stats"sv) {
      options.stats = true;
    } else if (options.path.empty() && !arg.empty() && arg[0] != '-') {
      options.path = std::string(arg);
    } else {
      std::fputs(std::string(kUsage).c_str(), stderr);
      return 1;
    }
  }
  if (options.path.empty()) {
    std::fputs(std::string(kUsage).c_str(), stderr);
    return 1;
  }
  return Run(options);
}
