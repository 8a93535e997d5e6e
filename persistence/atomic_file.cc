#include "persistence/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "gigakv/strings.h"

namespace gigakv::persistence {

namespace {
absl::Status ErrnoError(std::string_view what, const std::string& path) {
  const int error = errno;
  return absl::InternalError(StrCat(what, " ", path, ": ", std::strerror(error)));
}
}  // namespace

std::string JoinPath(std::string_view dir, std::string_view name) {
  if (dir.empty() || (!name.empty() && name.front() == '/')) return std::string(name);
  std::string path(dir);
  if (path.back() != '/') path.push_back('/');
  path.append(name);
  return path;
}

absl::Status SyncDirectory(const std::string& dir) {
  const std::string target = dir.empty() ? "." : dir;
  const int fd = ::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open directory", target);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return ErrnoError("cannot fsync directory", target);
  return absl::OkStatus();
}

AtomicFile::~AtomicFile() { Abort(); }

absl::Status AtomicFile::Open(std::string_view dir, std::string_view name,
                              std::string_view temp_name) {
  Abort();
  dir_ = std::string(dir);
  path_ = JoinPath(dir, name);
  temp_path_ = JoinPath(dir, temp_name);
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    absl::Status status = ErrnoError("cannot create", temp_path_);
    temp_path_.clear();
    return status;
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::Append(std::string_view bytes) {
  if (fd_ < 0) return absl::FailedPreconditionError("file not open");
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("cannot write", temp_path_);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::SyncData() {
  if (fd_ < 0) return absl::FailedPreconditionError("file not open");
  if (::fdatasync(fd_) != 0) return ErrnoError("cannot fsync", temp_path_);
  return absl::OkStatus();
}

absl::Status AtomicFile::Commit() {
  if (fd_ < 0) return absl::FailedPreconditionError("file not open");
  if (::fsync(fd_) != 0) return ErrnoError("cannot fsync", temp_path_);
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) return ErrnoError("cannot close", temp_path_);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    absl::Status status = ErrnoError(StrCat("cannot rename ", temp_path_, " to"), path_);
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
    return status;
  }
  temp_path_.clear();
  const size_t slash = path_.rfind('/');
  return SyncDirectory(slash == std::string::npos ? std::string(".") : path_.substr(0, slash + 1));
}

void AtomicFile::Abort() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
}

}  // namespace gigakv::persistence
