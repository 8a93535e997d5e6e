// A file replaced atomically: written under a temporary name in the target's directory, then
// synced, renamed over the target and the directory synced, so a crash leaves either the old
// file or the new one, never a torn mix (RDB snapshots, the log's manifest and base files).
//
// Errors are absl::Status values naming the path and the reason. Not thread-safe: one writer
// per file, used by one thread at a time. A writer destroyed before Commit removes its temp file.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "persistence/file_system.h"

namespace gigakv::persistence {

class AtomicFile {
 public:
  // `fs` (not owned) must outlive the writer.
  explicit AtomicFile(FileSystem* fs = PosixFileSystem()) : fs_(fs) {}
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Creates (truncating) `dir`/`temp_name` for writing; Commit renames it to `dir`/`name`.
  absl::Status Open(std::string_view dir, std::string_view name, std::string_view temp_name);
  absl::Status Append(std::string_view bytes);
  // Syncs what was appended so far (incremental fsync while a large file is written).
  absl::Status SyncData();
  // Syncs, closes, renames over the target, syncs the directory.
  absl::Status Commit();
  // Closes and removes the temp file (also what the destructor does before Commit).
  void Abort();

  const std::string& temp_path() const { return temp_path_; }
  const std::string& path() const { return path_; }

 private:
  FileSystem* fs_;
  std::unique_ptr<WritableFile> file_;
  std::string dir_;
  std::string path_;
  std::string temp_path_;
};

// Writes `contents` to `dir`/`name` atomically (AtomicFile) under `temp_name`.
absl::Status WriteFileAtomically(FileSystem* fs, std::string_view dir, std::string_view name,
                                 std::string_view temp_name, std::string_view contents);

}  // namespace gigakv::persistence
