#include "persistence/atomic_file.h"

namespace gigakv::persistence {

AtomicFile::~AtomicFile() { Abort(); }

absl::Status AtomicFile::Open(std::string_view dir, std::string_view name,
                              std::string_view temp_name) {
  Abort();
  dir_ = std::string(dir);
  path_ = JoinPath(dir, name);
  temp_path_ = JoinPath(dir, temp_name);
  absl::StatusOr<std::unique_ptr<WritableFile>> file = fs_->NewWritableFile(temp_path_);
  if (!file.ok()) {
    temp_path_.clear();
    return file.status();
  }
  file_ = *std::move(file);
  return absl::OkStatus();
}

absl::Status AtomicFile::Append(std::string_view bytes) {
  if (file_ == nullptr) return absl::FailedPreconditionError("file not open");
  return file_->Append(bytes);
}

absl::Status AtomicFile::SyncData() {
  if (file_ == nullptr) return absl::FailedPreconditionError("file not open");
  return file_->Sync();
}

absl::Status AtomicFile::Commit() {
  if (file_ == nullptr) return absl::FailedPreconditionError("file not open");
  absl::Status status = file_->Sync();
  if (status.ok()) status = file_->Close();
  file_.reset();
  if (status.ok()) status = fs_->RenameFile(temp_path_, path_);
  if (!status.ok()) {
    (void)fs_->RemoveFile(temp_path_);
    temp_path_.clear();
    return status;
  }
  temp_path_.clear();
  const std::string dir = DirName(path_);
  return fs_->SyncDir(dir.empty() ? "." : dir);
}

void AtomicFile::Abort() {
  file_.reset();
  if (!temp_path_.empty()) {
    (void)fs_->RemoveFile(temp_path_);
    temp_path_.clear();
  }
}

absl::Status WriteFileAtomically(FileSystem* fs, std::string_view dir, std::string_view name,
                                 std::string_view temp_name, std::string_view contents) {
  AtomicFile file(fs);
  absl::Status status = file.Open(dir, name, temp_name);
  if (status.ok()) status = file.Append(contents);
  if (status.ok()) status = file.Commit();
  return status;
}

}  // namespace gigakv::persistence
