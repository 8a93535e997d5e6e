// The RDB byte layer (grammar in rdb_format.h): a writer that encodes lengths, strings (integer,
// LZF or raw), doubles and times into a buffer handed to a sink in large pieces, keeping the
// CRC-64 of everything written; and a reader that decodes them from a source, never allocating
// for a length more than the input turned out to hold (LZF output: at most 88 times the
// compressed bytes actually read).
//
// Neither is thread-safe; each is used by one thread at a time. Errors are absl::Status values
// (never exceptions): the reader's name the byte offset where decoding failed and the reason.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gigakv::persistence::rdb {

// CRC-64/Jones as Redis computes it (reflected polynomial 0x95AC9329AC4BC9B5, no conditioning):
// Crc64(0, "123456789") == 0xe9c6d914c4b8d9ca.
uint64_t Crc64(uint64_t crc, std::string_view data);

// Receives the writer's bytes in order. Returns an error to stop the writer (a failed write).
using RdbSink = std::function<absl::Status(std::string_view bytes)>;

// Whether WriteString tries LZF on a string of `size` bytes when compression is on: over 20
// bytes, as Redis, and at most UINT32_MAX bytes, the most liblzf's interface can take (larger
// strings are written raw; Redis's own LZF has no such limit).
bool LzfEligible(uint64_t size);

class RdbWriter {
 public:
  struct Options {
    bool compress = true;  // rdbcompression: LZF for strings over 20 bytes when it saves room.
    bool checksum = true;  // rdbchecksum: the trailer holds the CRC-64, else zeros (and no CRC
                           // is computed).
    // quicklist-packed-threshold: list elements of at least this many bytes are written as
    // plain quicklist nodes (rdb_values.h). Redis's default, 1 GiB.
    uint64_t plain_node_threshold = uint64_t{1} << 30;
  };
  // Bytes are buffered and passed to `sink` in pieces of about `flush_bytes`, except that a run
  // of at least `flush_bytes` (a large string's bytes) goes to the sink as it is, in one piece,
  // after the buffered bytes. Nothing else makes the writer hold much more than `flush_bytes`
  // as long as callers call MaybeFlush() often enough (WriteValue does, between elements).
  RdbWriter(RdbSink sink, Options options, size_t flush_bytes = 64 * 1024);
  RdbWriter(const RdbWriter&) = delete;
  RdbWriter& operator=(const RdbWriter&) = delete;

  void WriteByte(uint8_t byte) { buffer_.push_back(static_cast<char>(byte)); }
  void WriteRaw(std::string_view bytes);
  void WriteLength(uint64_t length);
  // A string as Redis saves it: integer-encoded, LZF-compressed or raw (see rdb_format.h).
  void WriteString(std::string_view value);
  // An integer value saved as a string (Redis's rdbSaveLongLongAsStringObject).
  void WriteIntegerString(int64_t value);
  void WriteBinaryDouble(double value);
  void WriteMillis(int64_t unix_ms);  // 8 bytes LE.

  // The file's "REDIS0010" (or an older version, for tests), and an AUX field.
  void WriteHeader(int version = 10);
  void WriteAux(std::string_view key, std::string_view value);
  // EOF and the checksum trailer (none when WriteHeader was given a version before 5, which has
  // no trailer), then hands everything to the sink.
  absl::Status Finish();
  // For DUMP payloads: the version (2 bytes LE) and the CRC-64 of everything before it.
  absl::Status FinishPayload(int version = 10);

  // Passes the buffered bytes to the sink when there are at least flush_bytes of them (callers
  // call it between values and between a large value's elements), and releases scratch buffers
  // a large value left oversized. The first sink error sticks: it is returned by every later
  // call, and later bytes are dropped without reaching the sink.
  absl::Status MaybeFlush();
  absl::Status Flush();
  // Bytes handed to the sink or buffered for it (until a sink error).
  const Options& options() const { return options_; }
  uint64_t bytes_written() const { return flushed_bytes_ + buffer_.size(); }
  // The memory the writer's buffers hold on to (their capacities).
  size_t retained_bytes() const {
    return buffer_.capacity() + scratch_.capacity() + blob_.capacity();
  }

  // A reusable buffer for a structure built before it is written as one string (listpacks):
  // callers clear it, fill it and pass it to WriteString. Keeps a modest capacity between
  // values; its contents do not survive MaybeFlush().
  std::string* blob_scratch() { return &blob_; }

 private:
  RdbSink sink_;
  Options options_;
  size_t flush_bytes_;
  std::string buffer_;
  std::string scratch_;  // LZF output.
  std::string blob_;     // See blob_scratch().
  uint64_t crc_ = 0;     // Of the bytes flushed so far.
  uint64_t flushed_bytes_ = 0;
  int version_ = 10;  // Of the header written; decides the trailer.
  absl::Status status_;

  // Appends `bytes`, or hands a long run to the sink directly (after the buffered bytes).
  void WriteBytes(std::string_view bytes);
  // Frees `buffer` when a large value left it much larger than the writer needs to keep.
  void ReleaseIfLarge(std::string* buffer) const;
};

// DUMP's payload check, as RESTORE makes it before reading anything: at least 10 bytes, ending in
// an RDB version of at most 10 (2 bytes LE) and the CRC-64 of every byte before the CRC. Sets
// *value to the bytes before the footer (type byte and value).
absl::Status VerifyDumpPayload(std::string_view payload, std::string_view* value);

// Supplies input: reads up to `capacity` bytes into `buffer`, returning how many (0 = end of
// input), or an error.
using RdbSource = std::function<absl::StatusOr<size_t>(char* buffer, size_t capacity)>;

class RdbReader {
 public:
  explicit RdbReader(RdbSource source);
  // Reads from memory (DUMP payloads, tests); `data` must outlive the reader.
  explicit RdbReader(std::string_view data);
  RdbReader(const RdbReader&) = delete;
  RdbReader& operator=(const RdbReader&) = delete;

  absl::StatusOr<uint8_t> ReadByte();
  absl::Status ReadExact(size_t count, std::string* out);  // Replaces *out.
  // A length; `*encoded` (if given) is set when the byte was 11xxxxxx, whose low 6 bits are
  // then returned (the special string encoding). Without `encoded` such a byte is an error.
  absl::StatusOr<uint64_t> ReadLength(bool* encoded = nullptr);
  // A string in any of its encodings (integers come back as their decimal text). Refuses
  // lengths over `max_length` (none by default: raw strings grow only as their bytes arrive, LZF
  // output is bounded by what its compressed bytes can expand to) and LZF strings whose lengths
  // exceed UINT32_MAX (liblzf's limit; gigakv never writes them).
  absl::Status ReadString(std::string* out, uint64_t max_length = kNoLimit);
  absl::StatusOr<double> ReadBinaryDouble();
  absl::StatusOr<double> ReadTextDouble();
  absl::StatusOr<int64_t> ReadMillis();     // 8 bytes LE.
  absl::StatusOr<int64_t> ReadSeconds32();  // 4 bytes LE.

  // The file header: "REDIS" and the version, which must be readable (1..10, as Redis 7.0).
  absl::StatusOr<int> ReadHeader();
  // After EOF: the 8-byte trailer, checked against the CRC of everything before it unless it
  // is all zeros (written with rdbchecksum no). Versions before 5 have no trailer: callers skip
  // this for them. `*verified` (if given) is set to whether a CRC was compared (false for the
  // all-zero trailer).
  absl::Status ReadChecksum(bool* verified = nullptr);

  // Bytes consumed so far: the offset errors name.
  uint64_t offset() const { return consumed_before_ + position_; }
  // An error at the current offset: "<reason> at offset <n>".
  absl::Status Corrupt(std::string_view reason) const;
  // The same error naming an earlier offset (where the value that failed began).
  static absl::Status CorruptAt(uint64_t offset, std::string_view reason);

  // The input read from the source but not consumed: after an RDB that a stream continues
  // (the commands of an AOF after its RDB preamble, a replication stream), the first bytes of
  // what follows, which the reader buffered in reading ahead. The view lasts until the next
  // read. TakeBuffered() moves them out: the reader then holds nothing, offset() is unchanged,
  // and a later read continues with the source's next bytes.
  std::string_view buffered() const { return buffer_.substr(position_); }
  std::string TakeBuffered();

  static constexpr uint64_t kNoLimit = ~uint64_t{0};

 private:
  // Makes at least `count` bytes available at buffer_[position_], reading more input; false at
  // the end of input (then `status_` may hold the source's error).
  bool Fill(size_t count);
  absl::Status Truncated() const;

  RdbSource source_;
  std::string owned_;        // Buffer for a source.
  std::string_view buffer_;  // Unconsumed input is buffer_[position_...].
  size_t position_ = 0;
  uint64_t consumed_before_ = 0;  // Bytes dropped from the buffer's front so far.
  uint64_t crc_ = 0;              // Of the dropped bytes; the rest are folded in on demand.
  bool end_of_input_ = false;
  absl::Status status_;
};

}  // namespace gigakv::persistence::rdb
