// Frames records for the log (log_format.h): a record's payload is split into fragments that
// never cross a 32 KiB block, each with its checksummed header, and a block's last bytes too few
// for a header are zero-filled. The writer only produces bytes; whoever owns the file appends
// them in the order they were produced (the log thread batches many records into one write).
//
// Not thread-safe: one writer per file, used by one thread at a time. No allocation beyond the
// growth of the caller's output string. Cost: one CRC32C pass over the payload plus a copy.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gigakv::persistence::log {

class LogWriter {
 public:
  // For a file whose first `file_size` bytes already exist: 0 for a new file (AddFileHeader
  // then comes first), or the size of a valid log to append to.
  explicit LogWriter(uint64_t file_size = 0);

  // Appends the 16-byte file header to `out`. Only at the start of a new file.
  void AddFileHeader(std::string* out);
  // Appends `payload`, framed, to `out`. Any size, including empty.
  void AddRecord(std::string_view payload, std::string* out);

  // The file's size once everything produced so far is appended.
  uint64_t file_size() const { return file_size_; }

 private:
  void AddFragment(uint8_t type, std::string_view payload, std::string* out);

  uint64_t file_size_;
  size_t block_offset_;  // Bytes used in the current block.
};

}  // namespace gigakv::persistence::log
