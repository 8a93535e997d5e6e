// An in-memory FileSystem (persistence/file_system.h) for tests, modelling what a crash keeps:
//
// - PowerLoss(): every byte appended but not yet synced is forgotten, and the directory
//   entries go back to what the last SyncDir() of their directory made durable (a file created,
//   renamed or removed since is back as it was). That is the adversarial reading of POSIX.
//   Space reserved by Preallocate and synced survives as zeros, also where it was written
//   since (the write is forgotten, the reservation not).
// - Faults: set_space_left(n) lets the next n bytes be written and fails the write that passes
//   it ("No space left on device"), after writing what fits; fail_syncs(true) fails every Sync
//   and SyncDir ("Input/output error") without making anything durable.
// - A crash at any step: set_operations_left(n) lets n more changing operations (creating,
//   appending, syncing, renaming, removing, truncating) happen and fails every later one, as
//   if the process had died there; PowerLoss() then shows what survived. Handles opened before
//   a PowerLoss() fail from then on (the process that held them is gone).
//
// Thread-safe (one mutex); open files keep their inode alive, as on POSIX.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "persistence/file_system.h"

namespace gigakv::testing {

class MemFileSystem final : public persistence::FileSystem {
 public:
  // A file's contents, shared by the names that point to it and its open handles.
  struct Inode {
    std::string data;
    size_t synced = 0;        // data[0, synced) survives a power loss...
    size_t durable_size = 0;  // ...and the file's size: zeros from `synced` to here.
    void MarkDurable() { synced = durable_size = data.size(); }
  };

  absl::StatusOr<std::unique_ptr<persistence::WritableFile>> NewWritableFile(
      const std::string& path) override {
    std::lock_guard lock(mutex_);
    if (!TakeOperation()) return Dead(path);
    auto inode = std::make_shared<Inode>();
    live_[path] = inode;
    return std::unique_ptr<persistence::WritableFile>(new Writable(this, path, inode));
  }

  absl::StatusOr<std::unique_ptr<persistence::WritableFile>> NewAppendableFile(
      const std::string& path) override {
    std::lock_guard lock(mutex_);
    if (!TakeOperation()) return Dead(path);
    auto& inode = live_[path];
    if (inode == nullptr) inode = std::make_shared<Inode>();
    return std::unique_ptr<persistence::WritableFile>(new Writable(this, path, inode));
  }

  absl::StatusOr<std::unique_ptr<persistence::SequentialFile>> NewSequentialFile(
      const std::string& path) override {
    std::lock_guard lock(mutex_);
    auto it = live_.find(path);
    if (it == live_.end()) return absl::NotFoundError("cannot open " + path + ": No such file");
    return std::unique_ptr<persistence::SequentialFile>(new Sequential(this, it->second));
  }

  bool FileExists(const std::string& path) override {
    std::lock_guard lock(mutex_);
    return live_.count(path) > 0;
  }

  absl::StatusOr<uint64_t> FileSize(const std::string& path) override {
    std::lock_guard lock(mutex_);
    auto it = live_.find(path);
    if (it == live_.end()) return absl::NotFoundError("cannot stat " + path + ": No such file");
    return it->second->data.size();
  }

  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& dir) override {
    std::lock_guard lock(mutex_);
    std::vector<std::string> names;
    for (const auto& [path, inode] : live_) {
      if (persistence::DirName(path) == dir) names.push_back(path.substr(path.rfind('/') + 1));
    }
    return names;
  }

  absl::Status CreateDir(const std::string& dir) override {
    (void)dir;  // Directories exist implicitly.
    return absl::OkStatus();
  }

  absl::Status RenameFile(const std::string& from, const std::string& to) override {
    std::lock_guard lock(mutex_);
    if (!TakeOperation()) return Dead(from);
    auto it = live_.find(from);
    if (it == live_.end()) return absl::NotFoundError("cannot rename " + from + ": No such file");
    live_[to] = it->second;
    live_.erase(from);
    return absl::OkStatus();
  }

  absl::Status RemoveFile(const std::string& path) override {
    std::lock_guard lock(mutex_);
    if (!TakeOperation()) return Dead(path);
    if (live_.erase(path) == 0) return absl::NotFoundError("cannot remove " + path);
    return absl::OkStatus();
  }

  absl::Status Truncate(const std::string& path, uint64_t size) override {
    std::lock_guard lock(mutex_);
    auto it = live_.find(path);
    if (it == live_.end()) return absl::NotFoundError("cannot open " + path);
    if (!TakeOperation()) return Dead(path);
    if (fail_syncs_) return absl::InternalError("cannot truncate " + path + ": Input/output error");
    Inode& inode = *it->second;
    if (size < inode.data.size()) inode.data.resize(size);
    inode.MarkDurable();  // Truncate is durable (it syncs).
    return absl::OkStatus();
  }

  absl::Status SyncDir(const std::string& dir) override {
    std::lock_guard lock(mutex_);
    if (!TakeOperation()) return Dead(dir);
    if (fail_syncs_)
      return absl::InternalError("cannot fsync directory " + dir + ": Input/output error");
    for (auto it = durable_.begin(); it != durable_.end();) {
      it = persistence::DirName(it->first) == dir ? durable_.erase(it) : std::next(it);
    }
    for (const auto& [path, inode] : live_) {
      if (persistence::DirName(path) == dir) durable_[path] = inode;
    }
    return absl::OkStatus();
  }

  // What a crash keeps (see the file comment). Open handles must not be used afterwards.
  void PowerLoss() {
    std::lock_guard lock(mutex_);
    live_ = durable_;
    for (auto& [path, inode] : live_) {
      inode->data.resize(inode->synced);
      inode->data.resize(inode->durable_size, '\0');
    }
    ++generation_;
    operations_left_ = std::numeric_limits<uint64_t>::max();
  }

  void set_operations_left(uint64_t operations) {
    std::lock_guard lock(mutex_);
    operations_left_ = operations;
  }
  // Changing operations done so far (to count a run's steps before crashing at each).
  uint64_t operations() {
    std::lock_guard lock(mutex_);
    return operations_;
  }

  void set_space_left(uint64_t bytes) {
    std::lock_guard lock(mutex_);
    space_left_ = bytes;
  }
  void fail_syncs(bool fail) {
    std::lock_guard lock(mutex_);
    fail_syncs_ = fail;
  }
  // While held, Append blocks (a disk that has stopped answering); releasing wakes it.
  void hold_writes(bool hold) {
    {
      std::lock_guard lock(mutex_);
      hold_writes_ = hold;
    }
    writes_released_.notify_all();
  }
  // Whether Preallocate works (else Unimplemented, as on a file system without fallocate).
  void support_preallocate(bool support) {
    std::lock_guard lock(mutex_);
    preallocate_ = support;
  }

  // Test access to a file's bytes (empty when missing). SetContents makes the bytes durable,
  // the name only after SyncDir.
  std::string Contents(const std::string& path) {
    std::lock_guard lock(mutex_);
    auto it = live_.find(path);
    return it == live_.end() ? std::string() : it->second->data;
  }
  // How many of a file's first bytes survive a power loss (0 when missing).
  size_t SyncedBytes(const std::string& path) {
    std::lock_guard lock(mutex_);
    auto it = live_.find(path);
    return it == live_.end() ? 0 : it->second->synced;
  }
  void SetContents(const std::string& path, std::string data) {
    std::lock_guard lock(mutex_);
    auto& inode = live_[path];
    if (inode == nullptr) inode = std::make_shared<Inode>();
    inode->data = std::move(data);
    inode->MarkDurable();
  }

 private:
  class Writable final : public persistence::WritableFile {
   public:
    Writable(MemFileSystem* fs, std::string path, std::shared_ptr<Inode> inode)
        : fs_(fs),
          path_(std::move(path)),
          inode_(std::move(inode)),
          generation_(fs->generation_),
          pos_(inode_->data.size()) {}
    ~Writable() override { (void)Close(); }

    absl::Status Append(std::string_view bytes) override {
      std::unique_lock lock(fs_->mutex_);
      fs_->writes_released_.wait(lock, [this] { return !fs_->hold_writes_; });
      if (closed_) return absl::FailedPreconditionError("file closed: " + path_);
      if (generation_ != fs_->generation_ || !fs_->TakeOperation()) return fs_->Dead(path_);
      std::string& data = inode_->data;
      if (pos_ > data.size()) data.resize(pos_, '\0');  // Cut meanwhile: a hole, as pwrite.
      // Into reserved space first (already paid for), then new space.
      const size_t reserved = std::min<size_t>(bytes.size(), data.size() - pos_);
      const uint64_t fits =
          reserved + std::min<uint64_t>(bytes.size() - reserved, fs_->space_left_);
      data.replace(pos_, reserved, bytes.substr(0, reserved));
      data.append(bytes.substr(reserved, fits - reserved));
      fs_->space_left_ -= fits - reserved;
      inode_->synced = std::min<size_t>(inode_->synced, pos_);  // Not durable until Sync.
      pos_ += fits;
      if (fits < bytes.size()) {
        return absl::ResourceExhaustedError("cannot write " + path_ + ": No space left on device");
      }
      return absl::OkStatus();
    }

    absl::Status Preallocate(uint64_t bytes) override {
      std::lock_guard lock(fs_->mutex_);
      if (closed_) return absl::FailedPreconditionError("file closed: " + path_);
      if (!fs_->preallocate_) return absl::UnimplementedError("cannot reserve space: unsupported");
      if (generation_ != fs_->generation_ || !fs_->TakeOperation()) return fs_->Dead(path_);
      const uint64_t end = pos_ + bytes;
      if (end <= inode_->data.size()) return absl::OkStatus();
      const uint64_t more = end - inode_->data.size();
      if (more > fs_->space_left_) {
        return absl::ResourceExhaustedError("cannot reserve space for " + path_ +
                                            ": No space left on device");
      }
      fs_->space_left_ -= more;
      inode_->data.resize(end, '\0');
      return absl::OkStatus();
    }

    absl::Status Sync() override {
      std::lock_guard lock(fs_->mutex_);
      if (closed_) return absl::FailedPreconditionError("file closed: " + path_);
      if (generation_ != fs_->generation_ || !fs_->TakeOperation()) return fs_->Dead(path_);
      if (fs_->fail_syncs_)
        return absl::InternalError("cannot fsync " + path_ + ": Input/output error");
      inode_->MarkDurable();
      return absl::OkStatus();
    }

    absl::Status Close() override {
      std::lock_guard lock(fs_->mutex_);
      if (closed_ || generation_ != fs_->generation_) return absl::OkStatus();
      closed_ = true;
      // Reserved space not written is cut off, not synced: a crash may bring the zeros back.
      if (inode_->data.size() > pos_) {
        inode_->data.resize(pos_);
        inode_->synced = std::min<size_t>(inode_->synced, pos_);
      }
      return absl::OkStatus();
    }

    uint64_t size() const override {
      std::lock_guard lock(fs_->mutex_);
      return pos_;
    }

   private:
    MemFileSystem* fs_;
    std::string path_;
    std::shared_ptr<Inode> inode_;
    uint64_t generation_;
    size_t pos_;  // Where Append writes: past it, reserved zeros.
    bool closed_ = false;
  };

  class Sequential final : public persistence::SequentialFile {
   public:
    Sequential(MemFileSystem* fs, std::shared_ptr<Inode> inode)
        : fs_(fs), inode_(std::move(inode)) {}

    absl::StatusOr<size_t> Read(size_t n, char* scratch) override {
      std::lock_guard lock(fs_->mutex_);
      const size_t available = inode_->data.size() - std::min(pos_, inode_->data.size());
      const size_t got = std::min(n, available);
      if (got > 0) std::memcpy(scratch, inode_->data.data() + pos_, got);
      pos_ += got;
      return got;
    }

    absl::Status Skip(uint64_t n) override {
      std::lock_guard lock(fs_->mutex_);
      pos_ = std::min<uint64_t>(pos_ + n, inode_->data.size());
      return absl::OkStatus();
    }

   private:
    MemFileSystem* fs_;
    std::shared_ptr<Inode> inode_;
    size_t pos_ = 0;
  };

  // Under mutex_: whether one more changing operation may happen (counting it).
  bool TakeOperation() {
    if (operations_left_ == 0) return false;
    if (operations_left_ != std::numeric_limits<uint64_t>::max()) --operations_left_;
    ++operations_;
    return true;
  }
  static absl::Status Dead(const std::string& path) {
    return absl::UnavailableError("cannot change " + path + ": the process crashed");
  }

  std::mutex mutex_;
  uint64_t generation_ = 0;
  uint64_t operations_left_ = std::numeric_limits<uint64_t>::max();
  uint64_t operations_ = 0;
  std::map<std::string, std::shared_ptr<Inode>> live_;
  std::map<std::string, std::shared_ptr<Inode>> durable_;
  uint64_t space_left_ = std::numeric_limits<uint64_t>::max();
  bool fail_syncs_ = false;
  bool preallocate_ = true;
  bool hold_writes_ = false;
  std::condition_variable writes_released_;
};

}  // namespace gigakv::testing
