// The file layer persistence writes and reads through, injectable in the LevelDB `Env` style so
// that tests can stand in for the disk: an in-memory layer that forgets every byte not yet
// synced (a power loss), and one that fails writes and syncs on demand (a full or broken disk;
// tests/support/mem_file_system.h). Production uses PosixFileSystem().
//
// Contracts shared by every implementation:
// - Errors are absl::Status values naming the path and the reason (errno's text for POSIX); no
//   exceptions. A failed Append may have written part of its bytes.
// - Durability: bytes appended to a WritableFile survive a crash only after its Sync() returns
//   OK. A file's creation, a rename or a removal survives only after SyncDir() of its directory.
// - A WritableFile or SequentialFile is used by one thread at a time; the FileSystem's methods
//   may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gigakv::persistence {

class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Writes all of `bytes` at the end of the file (no user-space buffering: the bytes are in the
  // operating system's hands when it returns OK).
  virtual absl::Status Append(std::string_view bytes) = 0;
  // Makes everything appended so far durable (fdatasync).
  virtual absl::Status Sync() = 0;
  // Reserves disk space for the next `bytes` bytes past size() (fallocate): on disk the file
  // grows to size() + bytes, the reserved part reading as zeros, while size() and where Append
  // writes stay put. Appending into reserved space allocates nothing and changes no size, so
  // the Sync after it has only the data to write (after a plain append an fdatasync must also
  // write the inode, or commit a journal transaction). Once synced, the reserved zeros survive
  // a crash like data: readers must take zeros after the last record for unwritten space.
  // Close() gives back what is still reserved. Unsupported (the default) or failed: an error,
  // and the file is as before.
  virtual absl::Status Preallocate(uint64_t bytes);
  // Closes the file, first cutting off space reserved by Preallocate and not written (not
  // synced: a crash may leave the zeros). Later calls fail. The destructor closes it too,
  // ignoring errors.
  virtual absl::Status Close() = 0;
  // Bytes in the file as written: its size when opened plus what Append wrote since (reserved
  // space not counted).
  virtual uint64_t size() const = 0;
};

class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  // Reads up to `n` bytes into `scratch` and returns how many it read; fewer than `n` only at
  // the end of the file (0 there).
  virtual absl::StatusOr<size_t> Read(size_t n, char* scratch) = 0;
  // Skips `n` bytes (or to the end of the file).
  virtual absl::Status Skip(uint64_t n) = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Creates `path` empty (truncating an existing file), for appending.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) = 0;
  // Opens an existing file to append at its end (created empty when missing). Space reserved
  // by an earlier Preallocate counts as written here: cut it off (Truncate) before.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& path) = 0;
  virtual absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) = 0;

  virtual bool FileExists(const std::string& path) = 0;
  virtual absl::StatusOr<uint64_t> FileSize(const std::string& path) = 0;
  // The names (not paths) of the entries of `dir`, in no particular order.
  virtual absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) = 0;
  // Creates `dir` if it does not exist (its parent must).
  virtual absl::Status CreateDir(const std::string& dir) = 0;
  // Replaces `to` by `from` atomically.
  virtual absl::Status RenameFile(const std::string& from, const std::string& to) = 0;
  virtual absl::Status RemoveFile(const std::string& path) = 0;
  // Cuts `path` to `size` bytes, durably (the truncation is synced).
  virtual absl::Status Truncate(const std::string& path, uint64_t size) = 0;
  // Makes the creations, renames and removals in `dir` durable.
  virtual absl::Status SyncDir(const std::string& dir) = 0;
};

// The process's real file system. Never null; lives as long as the process.
FileSystem* PosixFileSystem();

// The whole of a (small) file, read through `fs`: a manifest, a test's file.
absl::StatusOr<std::string> ReadFile(FileSystem* fs, const std::string& path);

// "dir/name", or `name` itself when it is absolute or dir is empty.
std::string JoinPath(std::string_view dir, std::string_view name);
// The directory part of `path` ("" for a bare name).
std::string DirName(std::string_view path);
// The process's working directory (`dir`, once start-up changed to it), or "." when it cannot
// be read: what the server's relative file names resolve against.
std::string WorkingDirectory();

}  // namespace gigakv::persistence
