// Reads the records of a log file (log_format.h) from its start and says precisely how it ends:
// cleanly, in a torn tail, or in damage with intact data after it.
//
// Zero bytes from a fragment boundary to the end of the file are space the writer reserved
// (WritableFile::Preallocate) and never wrote: the file ends cleanly there (kEnd; valid_end()
// says where), unless a record was still missing its last fragment (a torn tail).
//
// A torn tail is what a crash leaves at the end of the last file: a partial header or fragment,
// a record whose last fragment never arrived, a fragment that fails its checksum or zero-filled
// space followed by other bytes, with no intact record start after it. Damage followed by a record
// that verifies from its start (a FULL or FIRST fragment later in the same block or in a later
// block; a later piece of the damaged record itself does not count, as pages of one write may reach
// the disk out of order) is corruption in the middle of the file. Records before the first problem
// are returned as they are; the reader stops at the first problem (it never skips damage: a
// record lost in the middle of a log changes what the rest means).
//
// Not thread-safe; one reader per file. Memory: one block buffer plus the largest record.
// Cost: one CRC32C pass over the file (and, after damage, over the first fragment of each block
// after it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "persistence/file_system.h"

namespace gigakv::persistence::log {

class LogReader {
 public:
  enum class Outcome {
    kRecord,      // *record holds the next record's payload.
    kEnd,         // Clean end of the file after the last record.
    kTornTail,    // A torn tail begins at problem_offset(); valid_end() is where to cut it.
    kCorruption,  // Damage at problem_offset() with verifiable data after it (or not a log).
    kIoError,     // Reading failed: io_status().
  };

  // `file` (not owned) must outlive the reader; it is read from its current position, which
  // must be the start of the file.
  explicit LogReader(SequentialFile* file);

  // The next record. *record stays valid until the next call (it points into *scratch or the
  // reader's block buffer). After anything but kRecord, every later call returns the same.
  Outcome ReadRecord(std::string_view* record, std::string* scratch);

  // File offset of the first fragment of the record last returned.
  uint64_t record_offset() const { return record_offset_; }
  // File offset just past the last complete record (or past the header; 0 when even the header
  // is torn): the file's valid prefix.
  uint64_t valid_end() const { return valid_end_; }
  // After kTornTail or kCorruption: where the problem begins, and what it is.
  uint64_t problem_offset() const { return problem_offset_; }
  const std::string& problem() const { return problem_; }
  const absl::Status& io_status() const { return io_status_; }

 private:
  struct Fragment {
    uint8_t type = 0;
    std::string_view payload;
    uint64_t offset = 0;
  };
  enum class Parse { kOk, kEndOfFile, kDamaged, kIoError };

  Parse ReadHeader();
  // Reads the next fragment; on kDamaged or kIoError the outcome is already set.
  Parse ReadFragment(Fragment* fragment);
  bool ReadBlock();  // False at the end of the file or on an I/O error (io_status_ set).
  // Whether anything after the damage at the current position verifies. Consumes the file.
  bool AnythingVerifiesAfter(size_t next_in_block);
  // Whether a fragment of the current block that verifies starts a record (FULL or FIRST).
  bool BlockStartsRecord() const;
  // Whether, after the zeros from `from` in the current block, a record starts that verifies
  // (a FULL or FIRST whose header holds the first byte that is not zero).
  bool RecordStartsAfterZeros(size_t from) const;
  // At a zero fragment header at pos_ (file offset `offset`): kEndOfFile if zeros run to the
  // end of the file, else the damage's outcome is set (kDamaged or kIoError).
  Parse ZeroFilled(uint64_t offset, size_t next_in_block);
  // Whether the fragment at `pos` of the current block is intact (*end: the byte after it,
  // *type: its type).
  bool FragmentVerifies(size_t pos, size_t* end, uint8_t* type) const;
  Outcome Fail(Outcome outcome, uint64_t offset, std::string problem);
  Outcome Damaged(uint64_t offset, std::string problem, size_t next_in_block);

  SequentialFile* file_;
  std::string block_buffer_;
  std::string_view block_;     // The current block's bytes.
  uint64_t block_offset_ = 0;  // File offset of block_[0].
  size_t pos_ = 0;             // Next unread byte of block_.
  bool header_read_ = false;
  bool blocks_started_ = false;  // A block has been read.
  bool last_block_ = false;      // The current block is short: the file ends in it.

  Outcome final_ = Outcome::kRecord;  // Sticky once not kRecord.
  uint64_t record_offset_ = 0;
  uint64_t valid_end_ = 0;
  uint64_t problem_offset_ = 0;
  std::string problem_;
  absl::Status io_status_;
};

}  // namespace gigakv::persistence::log
