// A file replaced atomically: written under a temporary name in the target's directory, then
// fsynced, renamed over the target and the directory fsynced, so a crash leaves either the old
// file or the new one, never a torn mix (RDB snapshots, and the log's manifest later).
//
// Errors are absl::Status values naming the path and errno's text. Not thread-safe: one writer
// per file, used by one thread at a time. A writer destroyed before Commit removes its temp file.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace gigakv::persistence {

class AtomicFile {
 public:
  AtomicFile() = default;
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Creates (truncating) `dir`/`temp_name` for writing; Commit renames it to `dir`/`name`.
  absl::Status Open(std::string_view dir, std::string_view name, std::string_view temp_name);
  absl::Status Append(std::string_view bytes);
  // fdatasync of what was appended so far (incremental fsync while a large file is written).
  absl::Status SyncData();
  // fsync, close, rename over the target, fsync the directory.
  absl::Status Commit();
  // Closes and removes the temp file (also what the destructor does before Commit).
  void Abort();

  const std::string& temp_path() const { return temp_path_; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string dir_;
  std::string path_;
  std::string temp_path_;
};

// "dir/name", or `name` itself when it is absolute or dir is empty.
std::string JoinPath(std::string_view dir, std::string_view name);
// fsyncs a directory (after a rename or a file's creation in it).
absl::Status SyncDirectory(const std::string& dir);

}  // namespace gigakv::persistence
