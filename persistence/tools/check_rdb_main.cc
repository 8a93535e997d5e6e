// gigakv-check-rdb FILE — checks an RDB file as redis-check-rdb does (rdb_check.h): prints what
// the file holds and exits 0, or prints the first problem (offset and reason) and exits 1.
// A file that cannot be opened or read is an error (exit 1); so is a missing argument (usage on
// stderr). --help prints the usage on stdout and --version the version, both exiting 0.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gigakv/strings.h"
#include "persistence/rdb/rdb_check.h"
#include "persistence/rdb/rdb_io.h"

namespace {

using namespace std::string_view_literals;
namespace rdb = gigakv::persistence::rdb;

constexpr std::string_view kUsage =
    "Usage: gigakv-check-rdb <rdb-file-name>\n"
    "Checks an RDB snapshot (Redis 7.0 format, as gigakv-server and redis-server write it):\n"
    "prints its version, AUX fields and the keys of each database per type, or the first\n"
    "problem with its byte offset. Exit status 0 when the file is sound, 1 otherwise.\n"
    "  -h, --help     print this help\n"
    "  -v, --version  print the version\n"sv;

void Print(std::FILE* stream, std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stream);
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int Check(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    Print(stderr,
          gigakv::StrCat("gigakv-check-rdb: cannot open ", path, ": ", std::strerror(errno), "\n"));
    return 1;
  }
  struct stat file_stat {};
  if (::fstat(fd, &file_stat) == 0 && S_ISDIR(file_stat.st_mode)) {
    Print(stderr, gigakv::StrCat("gigakv-check-rdb: cannot read ", path, ": ",
                                 std::strerror(EISDIR), "\n"));
    ::close(fd);
    return 1;
  }
  rdb::RdbReader reader([fd](char* buffer, size_t capacity) -> absl::StatusOr<size_t> {
    for (;;) {
      const ssize_t n = ::read(fd, buffer, capacity);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) {
        return absl::InternalError(gigakv::StrCat("read error: ", std::strerror(errno)));
      }
    }
  });
  rdb::RdbCheckOptions options;
  options.now_ms = NowMs();
  const rdb::RdbCheckReport report = rdb::CheckRdb(reader, options);
  ::close(fd);
  Print(stdout, rdb::FormatRdbCheckReport(report, path));
  return report.status.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    Print(stderr, kUsage);
    return 1;
  }
  const std::string_view arg = argv[1];
  if (arg == "-h"sv || arg == "--help"sv) {
    Print(stdout, kUsage);
    return 0;
  }
  if (arg == "-v"sv || arg == "--version"sv) {
    Print(stdout, gigakv::StrCat("gigakv-check-rdb ", GIGAKV_VERSION, "\n"));
    return 0;
  }
  return Check(std::string(arg));
}
