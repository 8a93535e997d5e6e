#include "persistence/file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "gigakv/strings.h"

namespace gigakv::persistence {

namespace {

absl::Status ErrnoError(std::string_view what, std::string_view path, int error) {
  std::string message = StrCat(what, " ", path, ": ", std::strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  if (error == EOPNOTSUPP || error == ENOSYS) return absl::UnimplementedError(message);
  return absl::InternalError(message);
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  ~PosixWritableFile() override { (void)Close(); }

  absl::Status Append(std::string_view bytes) override {
    if (fd_ < 0) return absl::FailedPreconditionError(StrCat("file closed: ", path_));
    while (!bytes.empty()) {
      // At size_, not O_APPEND's end of file: that may be past reserved space.
      const ssize_t n = ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(size_));
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoError("cannot write", path_, errno);
      }
      bytes.remove_prefix(static_cast<size_t>(n));
      size_ += static_cast<uint64_t>(n);
    }
    return absl::OkStatus();
  }

  absl::Status Sync() override {
    if (fd_ < 0) return absl::FailedPreconditionError(StrCat("file closed: ", path_));
    if (::fdatasync(fd_) != 0) return ErrnoError("cannot fsync", path_, errno);
    return absl::OkStatus();
  }

  absl::Status Preallocate(uint64_t bytes) override {
    if (fd_ < 0) return absl::FailedPreconditionError(StrCat("file closed: ", path_));
    // Mode 0 (not FALLOC_FL_KEEP_SIZE): the file's size moves to the end of the reserved space
    // now, so appends within it change no size that an fdatasync would have to write.
    const int rc = ::fallocate(fd_, 0, static_cast<off_t>(size_), static_cast<off_t>(bytes));
    if (rc != 0) return ErrnoError("cannot reserve space for", path_, errno);
    reserved_end_ = std::max(reserved_end_, size_ + bytes);
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (fd_ < 0) return absl::OkStatus();
    int error = 0;
    // Only ever shrinks: someone may have cut the file below size_ meanwhile (Truncate).
    struct stat st;
    if (reserved_end_ > size_ && ::fstat(fd_, &st) == 0 &&
        static_cast<uint64_t>(st.st_size) > size_ &&
        ::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
      error = errno;
    }
    if (::close(fd_) != 0 && error == 0) error = errno;
    fd_ = -1;
    if (error != 0) return ErrnoError("cannot close", path_, error);
    return absl::OkStatus();
  }

  uint64_t size() const override { return size_; }

 private:
  std::string path_;
  int fd_;
  uint64_t size_;
  uint64_t reserved_end_ = 0;  // Past size_: reserved by Preallocate, zeros on disk.
};

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  absl::StatusOr<size_t> Read(size_t n, char* scratch) override {
    size_t done = 0;
    while (done < n) {
      const ssize_t got = ::read(fd_, scratch + done, n - done);
      if (got < 0) {
        if (errno == EINTR) continue;
        return ErrnoError("cannot read", path_, errno);
      }
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    return done;
  }

  absl::Status Skip(uint64_t n) override {
    if (::lseek(fd_, static_cast<off_t>(n), SEEK_CUR) < 0) {
      return ErrnoError("cannot seek in", path_, errno);
    }
    return absl::OkStatus();
  }

 private:
  std::string path_;
  int fd_;
};

class PosixFs final : public FileSystem {
 public:
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    return Open(path, O_WRONLY | O_CREAT | O_TRUNC);
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& path) override {
    return Open(path, O_WRONLY | O_CREAT);  // Append writes at the size found here.
  }

  absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError("cannot open", path, errno);
    return std::unique_ptr<SequentialFile>(new PosixSequentialFile(path, fd));
  }

  bool FileExists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }

  absl::StatusOr<uint64_t> FileSize(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return ErrnoError("cannot stat", path, errno);
    return static_cast<uint64_t>(st.st_size);
  }

  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override {
    DIR* d = ::opendir(dir.empty() ? "." : dir.c_str());
    if (d == nullptr) return ErrnoError("cannot open directory", dir, errno);
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(d)) {
      const std::string_view name = entry->d_name;
      if (name != "." && name != "..") names.emplace_back(name);
    }
    ::closedir(d);
    return names;
  }

  absl::Status CreateDir(const std::string& dir) override {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError("cannot create directory", dir, errno);
    }
    return absl::OkStatus();
  }

  absl::Status RenameFile(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) {
      return ErrnoError(StrCat("cannot rename ", from, " to"), to, errno);
    }
    return absl::OkStatus();
  }

  absl::Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return ErrnoError("cannot remove", path, errno);
    return absl::OkStatus();
  }

  absl::Status Truncate(const std::string& path, uint64_t size) override {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError("cannot open", path, errno);
    absl::Status status;
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
      status = ErrnoError("cannot truncate", path, errno);
    } else if (::fsync(fd) != 0) {
      status = ErrnoError("cannot fsync", path, errno);
    }
    ::close(fd);
    return status;
  }

  absl::Status SyncDir(const std::string& dir) override {
    const std::string target = dir.empty() ? "." : dir;
    const int fd = ::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return ErrnoError("cannot open directory", target, errno);
    const int rc = ::fsync(fd);
    const int error = errno;
    ::close(fd);
    if (rc != 0) return ErrnoError("cannot fsync directory", target, error);
    return absl::OkStatus();
  }

 private:
  static absl::StatusOr<std::unique_ptr<WritableFile>> Open(const std::string& path, int flags) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoError("cannot open", path, errno);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      const int error = errno;
      ::close(fd);
      return ErrnoError("cannot stat", path, error);
    }
    return std::unique_ptr<WritableFile>(
        new PosixWritableFile(path, fd, static_cast<uint64_t>(st.st_size)));
  }
};

}  // namespace

absl::Status WritableFile::Preallocate(uint64_t /*bytes*/) {
  return absl::UnimplementedError("this file layer does not reserve space");
}

FileSystem* PosixFileSystem() {
  static PosixFs* const fs = new PosixFs();
  return fs;
}

absl::StatusOr<std::string> ReadFile(FileSystem* fs, const std::string& path) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> file = fs->NewSequentialFile(path);
  if (!file.ok()) return file.status();
  std::string text;
  char buffer[16 * 1024];
  while (true) {
    absl::StatusOr<size_t> got = (*file)->Read(sizeof(buffer), buffer);
    if (!got.ok()) return got.status();
    if (*got == 0) return text;
    text.append(buffer, *got);
  }
}

std::string JoinPath(std::string_view dir, std::string_view name) {
  if (dir.empty() || (!name.empty() && name.front() == '/')) return std::string(name);
  std::string path(dir);
  if (path.back() != '/') path.push_back('/');
  path.append(name);
  return path;
}

std::string DirName(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return "";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string WorkingDirectory() {
  char cwd[4096];
  return ::getcwd(cwd, sizeof(cwd)) != nullptr ? std::string(cwd) : std::string(".");
}

}  // namespace gigakv::persistence
