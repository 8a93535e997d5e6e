// The log's framing (persistence/log/log_format.h): LevelDB's catalogue of log tests (empty,
// read-write, many blocks, fragmentation, trailers, aligned EOF, bad types, lengths and
// checksums, unexpected fragments, truncated records), plus gigakv's split of damage into torn
// tails and corruption in the middle, the file header, appending after a restart, and what a
// power loss leaves of an unsynced log.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "persistence/crc32c.h"
#include "persistence/log/log_format.h"
#include "persistence/log/log_reader.h"
#include "persistence/log/log_writer.h"
#include "support/mem_file_system.h"

namespace gigakv::persistence::log {
namespace {

using Outcome = LogReader::Outcome;

std::string BigString(const std::string& partial, size_t n) {
  std::string result;
  while (result.size() < n) result.append(partial);
  result.resize(n);
  return result;
}

std::string NumberString(int n) { return std::to_string(n) + "."; }

// Deterministic pseudo-random string of `n` bytes.
std::string RandomSkewedString(int i, std::mt19937& rnd) {
  const int bits = static_cast<int>(rnd() % 18);
  return BigString(NumberString(i), rnd() % (1u << bits));
}

// Reads `path` of `fs`: records NumberString(0), NumberString(1)... up to a clean end; returns
// how many (-1 if a record is out of sequence or the file does not end cleanly).
int CountNumberedRecordsToCleanEnd(testing::MemFileSystem& fs, const std::string& path) {
  auto source = *fs.NewSequentialFile(path);
  LogReader reader(source.get());
  std::string scratch;
  std::string_view record;
  int count = 0;
  Outcome outcome;
  while ((outcome = reader.ReadRecord(&record, &scratch)) == Outcome::kRecord) {
    if (record != NumberString(count)) return -1;
    ++count;
  }
  return outcome == Outcome::kEnd ? count : -1;
}

class LogTest : public ::testing::Test {
 protected:
  void Write(const std::string& payload) { writer_.AddRecord(payload, &file_); }
  size_t WrittenBytes() const { return file_.size(); }

  // Fragment header bytes at `offset` of the file.
  void IncrementByte(size_t offset, int delta) {
    file_[offset] = static_cast<char>(file_[offset] + delta);
  }
  void SetByte(size_t offset, char value) { file_[offset] = value; }
  void ShrinkSize(size_t bytes) { file_.resize(file_.size() - bytes); }
  // Recomputes the checksum of the fragment whose header is at `header_offset`.
  void FixChecksum(size_t header_offset, size_t length) {
    const uint32_t crc = Crc32c(std::string_view(file_).substr(header_offset + 6, 1 + length));
    const uint32_t masked = MaskCrc(crc);
    for (int i = 0; i < 4; ++i) file_[header_offset + i] = static_cast<char>(masked >> (8 * i));
  }

  // Reads records until something else comes; returns them.
  std::vector<std::string> ReadAll(Outcome* outcome) {
    fs_.SetContents("log", file_);
    auto file = fs_.NewSequentialFile("log");
    EXPECT_TRUE(file.ok());
    source_ = *std::move(file);
    reader_ = std::make_unique<LogReader>(source_.get());
    std::vector<std::string> records;
    std::string scratch;
    std::string_view record;
    while ((*outcome = reader_->ReadRecord(&record, &scratch)) == Outcome::kRecord) {
      records.emplace_back(record);
    }
    return records;
  }

  // Reads one record, or describes how reading ended.
  std::string Read() {
    if (reader_ == nullptr) {
      fs_.SetContents("log", file_);
      source_ = *fs_.NewSequentialFile("log");
      reader_ = std::make_unique<LogReader>(source_.get());
    }
    std::string scratch;
    std::string_view record;
    switch (reader_->ReadRecord(&record, &scratch)) {
      case Outcome::kRecord:
        return std::string(record);
      case Outcome::kEnd:
        return "EOF";
      case Outcome::kTornTail:
        return "TORN: " + reader_->problem();
      case Outcome::kCorruption:
        return "CORRUPT: " + reader_->problem();
      case Outcome::kIoError:
        return "IOERROR";
    }
    return "?";
  }

  void SetUp() override { writer_.AddFileHeader(&file_); }

  std::string file_;
  LogWriter writer_;
  testing::MemFileSystem fs_;
  std::unique_ptr<SequentialFile> source_;
  std::unique_ptr<LogReader> reader_;
};

constexpr size_t kHeader = kFragmentHeaderSize;
constexpr size_t kFirstBlock = kFileHeaderSize;  // File offset of block 0.

TEST_F(LogTest, FileHeaderGoldenBytes) {
  const std::string expected("GKVLOG\r\n\x01\x00\x00\x00", 12);
  ASSERT_EQ(file_.size(), kFileHeaderSize);
  EXPECT_EQ(file_.substr(0, 12), expected);
  EXPECT_EQ(UnmaskCrc(static_cast<uint8_t>(file_[12]) | static_cast<uint8_t>(file_[13]) << 8 |
                      static_cast<uint8_t>(file_[14]) << 16 |
                      static_cast<uint32_t>(static_cast<uint8_t>(file_[15])) << 24),
            Crc32c(expected));
}

TEST_F(LogTest, FragmentGoldenBytes) {
  Write("foo");
  // masked crc32c(type 1, "foo"), length 3 (LE), type FULL, payload.
  const uint32_t masked =
      MaskCrc(Crc32c(std::string_view("\x01"
                                      "foo",
                                      4)));
  std::string expected;
  for (int i = 0; i < 4; ++i) expected.push_back(static_cast<char>(masked >> (8 * i)));
  expected.append(std::string("\x03\x00\x01", 3));
  expected.append("foo");
  EXPECT_EQ(file_.substr(kFileHeaderSize), expected);
}

TEST_F(LogTest, Empty) {
  EXPECT_EQ(Read(), "EOF");
  EXPECT_EQ(reader_->valid_end(), kFileHeaderSize);
}

TEST_F(LogTest, EmptyFileIsAnEmptyLog) {
  file_.clear();
  EXPECT_EQ(Read(), "EOF");
  EXPECT_EQ(reader_->valid_end(), 0u);
}

TEST_F(LogTest, ReadWrite) {
  Write("foo");
  Write("bar");
  Write("");
  Write("xxxx");
  EXPECT_EQ(Read(), "foo");
  EXPECT_EQ(Read(), "bar");
  EXPECT_EQ(Read(), "");
  EXPECT_EQ(Read(), "xxxx");
  EXPECT_EQ(Read(), "EOF");
  EXPECT_EQ(Read(), "EOF");  // Stays at EOF.
  EXPECT_EQ(reader_->valid_end(), file_.size());
}

TEST_F(LogTest, ManyBlocks) {
  for (int i = 0; i < 100000; ++i) Write(NumberString(i));
  EXPECT_GT(file_.size(), 10 * kBlockSize);
  Outcome outcome;
  std::vector<std::string> records = ReadAll(&outcome);
  EXPECT_EQ(outcome, Outcome::kEnd);
  ASSERT_EQ(records.size(), 100000u);
  for (int i = 0; i < 100000; ++i) ASSERT_EQ(records[i], NumberString(i));
}

TEST_F(LogTest, Fragmentation) {
  Write("small");
  Write(BigString("medium", 50000));
  Write(BigString("large", 100000));
  EXPECT_EQ(Read(), "small");
  EXPECT_EQ(Read(), BigString("medium", 50000));
  EXPECT_EQ(reader_->record_offset(), kFirstBlock + kHeader + 5);
  EXPECT_EQ(Read(), BigString("large", 100000));
  EXPECT_EQ(Read(), "EOF");
}

TEST_F(LogTest, MarginalTrailer) {
  // Make a trailer that is exactly the same length as an empty record.
  const size_t n = kBlockSize - 2 * kHeader;
  Write(BigString("foo", n));
  EXPECT_EQ(WrittenBytes(), kFirstBlock + kBlockSize - kHeader);
  Write("");
  Write("bar");
  EXPECT_EQ(Read(), BigString("foo", n));
  EXPECT_EQ(Read(), "");
  EXPECT_EQ(Read(), "bar");
  EXPECT_EQ(Read(), "EOF");
}

TEST_F(LogTest, MarginalTrailer2) {
  const size_t n = kBlockSize - 2 * kHeader;
  Write(BigString("foo", n));
  EXPECT_EQ(WrittenBytes(), kFirstBlock + kBlockSize - kHeader);
  Write("bar");
  EXPECT_EQ(Read(), BigString("foo", n));
  EXPECT_EQ(Read(), "bar");
  EXPECT_EQ(Read(), "EOF");
}

TEST_F(LogTest, ShortTrailer) {
  const size_t n = kBlockSize - 2 * kHeader + 4;
  Write(BigString("foo", n));
  EXPECT_EQ(WrittenBytes(), kFirstBlock + kBlockSize - kHeader + 4);
  Write("");
  Write("bar");
  EXPECT_EQ(Read(), BigString("foo", n));
  EXPECT_EQ(Read(), "");
  EXPECT_EQ(Read(), "bar");
  EXPECT_EQ(Read(), "EOF");
}

TEST_F(LogTest, TrailerIsZeroFilled) {
  const size_t n = kBlockSize - 2 * kHeader + 4;
  Write(BigString("foo", n));
  Write("bar");
  EXPECT_EQ(file_.substr(kFirstBlock + kBlockSize - 3, 3), std::string(3, '\0'));
}

TEST_F(LogTest, AlignedEof) {
  const size_t n = kBlockSize - 2 * kHeader + 4;
  Write(BigString("foo", n));
  EXPECT_EQ(WrittenBytes(), kFirstBlock + kBlockSize - kHeader + 4);
  EXPECT_EQ(Read(), BigString("foo", n));
  EXPECT_EQ(Read(), "EOF");
}

TEST_F(LogTest, EofAtBlockBoundary) {
  Write(BigString("x", kBlockSize - kHeader));
  EXPECT_EQ(WrittenBytes(), kFirstBlock + kBlockSize);
  EXPECT_EQ(Read(), BigString("x", kBlockSize - kHeader));
  EXPECT_EQ(Read(), "EOF");
}

TEST_F(LogTest, OpenForAppend) {
  Write("hello");
  LogWriter appender(file_.size());
  appender.AddRecord("world", &file_);
  const size_t n = kBlockSize;  // Crosses into the next block from a mid-block start.
  appender.AddRecord(BigString("z", n), &file_);
  EXPECT_EQ(appender.file_size(), file_.size());
  EXPECT_EQ(Read(), "hello");
  EXPECT_EQ(Read(), "world");
  EXPECT_EQ(Read(), BigString("z", n));
  EXPECT_EQ(Read(), "EOF");
}

TEST_F(LogTest, AppendAfterATrailerSizedGap) {
  Write(BigString("foo", kBlockSize - 2 * kHeader + 4));  // 3 bytes left in block 0.
  LogWriter appender(file_.size());
  appender.AddRecord("bar", &file_);
  EXPECT_EQ(Read(), BigString("foo", kBlockSize - 2 * kHeader + 4));
  EXPECT_EQ(Read(), "bar");
  EXPECT_EQ(Read(), "EOF");
}

TEST_F(LogTest, RandomRead) {
  constexpr int kCount = 500;
  std::mt19937 write_rnd(301);
  for (int i = 0; i < kCount; ++i) Write(RandomSkewedString(i, write_rnd));
  std::mt19937 read_rnd(301);
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(Read(), RandomSkewedString(i, read_rnd));
  EXPECT_EQ(Read(), "EOF");
}

class FailingFile : public SequentialFile {
 public:
  absl::StatusOr<size_t> Read(size_t, char*) override {
    return absl::InternalError("cannot read: Input/output error");
  }
  absl::Status Skip(uint64_t) override { return absl::OkStatus(); }
};

TEST_F(LogTest, ReadError) {
  FailingFile file;
  LogReader reader(&file);
  std::string scratch;
  std::string_view record;
  EXPECT_EQ(reader.ReadRecord(&record, &scratch), Outcome::kIoError);
  EXPECT_EQ(reader.io_status().message(), "cannot read: Input/output error");
}

TEST_F(LogTest, BadRecordTypeIsCorruption) {
  Write("foo");
  IncrementByte(kFirstBlock + 6, 100);
  FixChecksum(kFirstBlock, 3);
  EXPECT_EQ(Read(), "CORRUPT: unknown fragment type 101");
  EXPECT_EQ(reader_->problem_offset(), kFirstBlock);
}

TEST_F(LogTest, TruncatedTrailingRecordIsTorn) {
  Write("foo");
  ShrinkSize(4);  // Drops all payload and one header byte.
  EXPECT_EQ(Read(), "TORN: truncated fragment header");
  EXPECT_EQ(reader_->problem_offset(), kFirstBlock);
  EXPECT_EQ(reader_->valid_end(), kFileHeaderSize);
}

TEST_F(LogTest, BadLength) {
  const size_t payload_size = kBlockSize - kHeader;
  Write(BigString("bar", payload_size));
  Write("foo");
  // Least significant size byte of the first record.
  IncrementByte(kFirstBlock + 4, 1);
  EXPECT_EQ(Read(), "CORRUPT: bad fragment length");
  EXPECT_EQ(reader_->problem_offset(), kFirstBlock);
}

TEST_F(LogTest, BadLengthAtEndIsTorn) {
  Write("foo");
  ShrinkSize(1);
  EXPECT_EQ(Read(), "TORN: truncated fragment");
  EXPECT_EQ(reader_->valid_end(), kFileHeaderSize);
}

TEST_F(LogTest, ChecksumMismatchOfTheLastRecordIsTorn) {
  Write("foooooo");
  IncrementByte(kFirstBlock, 14);
  EXPECT_EQ(Read(), "TORN: checksum mismatch");
}

TEST_F(LogTest, ChecksumMismatchBeforeAnIntactRecordIsCorruption) {
  Write("foooooo");
  Write("bar");
  IncrementByte(kFirstBlock + kHeader + 2, 1);  // A payload byte.
  EXPECT_EQ(Read(), "CORRUPT: checksum mismatch");
  EXPECT_EQ(reader_->problem_offset(), kFirstBlock);
}

TEST_F(LogTest, DamageInAnEarlierBlockIsCorruption) {
  for (int i = 0; i < 20000; ++i) Write(NumberString(i));
  ASSERT_GT(file_.size(), 3 * kBlockSize);
  const size_t damaged = kFirstBlock + kBlockSize + 100;  // In block 1.
  IncrementByte(damaged, 1);
  Outcome outcome;
  std::vector<std::string> records = ReadAll(&outcome);
  EXPECT_EQ(outcome, Outcome::kCorruption);
  EXPECT_GE(reader_->problem_offset(), kFirstBlock + kBlockSize);
  EXPECT_LE(reader_->problem_offset(), damaged);
  ASSERT_FALSE(records.empty());
  for (size_t i = 0; i < records.size(); ++i) ASSERT_EQ(records[i], NumberString(i));
  EXPECT_EQ(reader_->valid_end(), reader_->problem_offset());
}

TEST_F(LogTest, DamageInTheLastBlockIsTorn) {
  for (int i = 0; i < 20000; ++i) Write(NumberString(i));
  const size_t last_block_start =
      kFirstBlock + (file_.size() - kFirstBlock) / kBlockSize * kBlockSize;
  ASSERT_LT(last_block_start + 200, file_.size());
  // Everything after a damaged fragment of the last block is lost too, as a torn write would
  // lose it: zero the rest of the file from there.
  const size_t damaged = last_block_start + 100;
  for (size_t i = damaged; i < file_.size(); ++i) file_[i] = '\0';
  Outcome outcome;
  std::vector<std::string> records = ReadAll(&outcome);
  EXPECT_EQ(outcome, Outcome::kTornTail);
  EXPECT_LE(reader_->valid_end(), damaged);
  for (size_t i = 0; i < records.size(); ++i) ASSERT_EQ(records[i], NumberString(i));
}

TEST_F(LogTest, ALostPageInsideTheLastRecordIsTorn) {
  Write("foo");
  Write(BigString("big", 3 * kBlockSize));
  // A page in the middle of the last record never reached the disk; later pieces of that
  // same record did (pages of one write land in any order).
  for (size_t i = kFirstBlock + kBlockSize + 100; i < kFirstBlock + kBlockSize + 8292; ++i) {
    file_[i] = '\0';
  }
  EXPECT_EQ(Read(), "foo");
  EXPECT_EQ(Read(), "TORN: checksum mismatch");
  EXPECT_EQ(reader_->valid_end(), kFirstBlock + kHeader + 3);
}

TEST_F(LogTest, DamageBeforeARecordThatStartsMidBlockIsCorruption) {
  Write(BigString("big", kBlockSize + 100));  // Its LAST fragment opens block 1...
  Write("after");                             // ...and this record follows it there.
  IncrementByte(kFirstBlock + 50, 1);
  EXPECT_EQ(Read(), "CORRUPT: checksum mismatch");
}

TEST_F(LogTest, ZeroFilledTailIsReservedSpaceAndEndsTheFile) {
  Write("foo");
  file_.append(100, '\0');
  EXPECT_EQ(Read(), "foo");
  EXPECT_EQ(Read(), "EOF");
  EXPECT_EQ(reader_->valid_end(), kFirstBlock + kHeader + 3);
}

TEST_F(LogTest, ZerosOverManyBlocksEndTheFile) {
  Write("foo");
  Write(BigString("bar", kBlockSize));  // Ends inside block 1.
  const size_t end = file_.size();
  file_.append(3 * kBlockSize + 5, '\0');
  EXPECT_EQ(Read(), "foo");
  EXPECT_EQ(Read(), BigString("bar", kBlockSize));
  EXPECT_EQ(Read(), "EOF");
  EXPECT_EQ(reader_->valid_end(), end);
}

TEST_F(LogTest, ZerosInTheLastSixBytesEndTheFile) {
  Write(BigString("x", kBlockSize - kHeader - kHeader - 3));
  file_.append(5, '\0');  // Fewer than a header's 7 bytes, in a short last block.
  EXPECT_EQ(Read(), BigString("x", kBlockSize - kHeader - kHeader - 3));
  EXPECT_EQ(Read(), "EOF");
}

TEST_F(LogTest, ZerosAfterAFirstFragmentAreATornRecord) {
  Write("foo");
  Write(BigString("big", kBlockSize));     // FIRST in block 0, LAST in block 1.
  file_.resize(kFirstBlock + kBlockSize);  // The LAST never arrived...
  file_.append(2 * kBlockSize, '\0');      // ...its space was reserved.
  EXPECT_EQ(Read(), "foo");
  EXPECT_EQ(Read(), "TORN: record missing its last fragment");
  EXPECT_EQ(reader_->valid_end(), kFirstBlock + kHeader + 3);
}

TEST_F(LogTest, ZerosThenGarbageAreATornTail) {
  Write("foo");
  file_.append(kBlockSize, '\0');
  file_.append("garbage");
  EXPECT_EQ(Read(), "foo");
  EXPECT_EQ(Read(), "TORN: zero-filled space");
  EXPECT_EQ(reader_->valid_end(), kFirstBlock + kHeader + 3);
}

TEST_F(LogTest, ZerosThenARecordInALaterBlockAreCorruption) {
  Write("foo");
  Write(BigString("lost", 2 * kBlockSize));  // Spans blocks 0-2; zeroed below.
  Write("after");                            // In block 2, intact.
  const size_t lost_start = kFirstBlock + kHeader + 3;
  const size_t after_start = file_.size() - kHeader - 5;
  std::fill(file_.begin() + lost_start, file_.begin() + after_start, '\0');
  EXPECT_EQ(Read(), "foo");
  EXPECT_EQ(Read(), "CORRUPT: zero-filled space");
  EXPECT_EQ(reader_->problem_offset(), lost_start);
}

TEST_F(LogTest, ZerosThenARecordInTheSameBlockAreCorruption) {
  Write("foo");
  Write("lost");
  Write("after");
  std::fill(file_.begin() + kFirstBlock + kHeader + 3,
            file_.begin() + kFirstBlock + 2 * (kHeader) + 3 + 4, '\0');
  EXPECT_EQ(Read(), "foo");
  // The zeroed "lost" reads as an empty zero fragment followed by zeros, then "after".
  EXPECT_EQ(Read(), "CORRUPT: zero-filled space");
}

TEST_F(LogTest, UnexpectedMiddleType) {
  Write("foo");
  SetByte(kFirstBlock + 6, kMiddleType);
  FixChecksum(kFirstBlock, 3);
  EXPECT_EQ(Read(), "CORRUPT: unexpected middle fragment");
}

TEST_F(LogTest, UnexpectedLastType) {
  Write("foo");
  SetByte(kFirstBlock + 6, kLastType);
  FixChecksum(kFirstBlock, 3);
  EXPECT_EQ(Read(), "CORRUPT: unexpected last fragment");
}

TEST_F(LogTest, UnexpectedFullType) {
  Write("foo");
  Write("bar");
  SetByte(kFirstBlock + 6, kFirstType);
  FixChecksum(kFirstBlock, 3);
  EXPECT_EQ(Read(), "CORRUPT: record missing its last fragment");
  EXPECT_EQ(reader_->problem_offset(), kFirstBlock);
}

TEST_F(LogTest, UnexpectedFirstType) {
  Write("foo");
  Write(BigString("bar", 100000));
  SetByte(kFirstBlock + 6, kFirstType);
  FixChecksum(kFirstBlock, 3);
  EXPECT_EQ(Read(), "CORRUPT: record missing its last fragment");
}

TEST_F(LogTest, MissingLastIsTorn) {
  Write(BigString("bar", kBlockSize));
  // Remove the LAST fragment, including its header.
  ShrinkSize(kHeader + kHeader);
  EXPECT_EQ(Read(), "TORN: record missing its last fragment");
  EXPECT_EQ(reader_->valid_end(), kFileHeaderSize);
}

TEST_F(LogTest, PartialLastIsTorn) {
  Write(BigString("bar", kBlockSize));
  ShrinkSize(1);
  EXPECT_EQ(Read(), "TORN: truncated fragment");
}

TEST_F(LogTest, RecordsBeforeATornTailAreKept) {
  Write("foo");
  Write("bar");
  Write(BigString("baz", 3 * kBlockSize));
  ShrinkSize(kBlockSize / 2);
  EXPECT_EQ(Read(), "foo");
  EXPECT_EQ(Read(), "bar");
  EXPECT_EQ(Read(), "TORN: truncated fragment");
  EXPECT_EQ(reader_->valid_end(), kFirstBlock + 2 * kHeader + 6);
}

TEST_F(LogTest, BadMagicIsCorruption) {
  SetByte(0, 'X');
  EXPECT_EQ(Read(), "CORRUPT: not a gigakv log file (bad magic)");
}

TEST_F(LogTest, TruncatedHeaderIsTorn) {
  file_.resize(10);
  EXPECT_EQ(Read(), "TORN: truncated file header");
  EXPECT_EQ(reader_->valid_end(), 0u);
}

TEST_F(LogTest, HeaderChecksumMismatch) {
  SetByte(12, static_cast<char>(file_[12] ^ 1));
  EXPECT_EQ(Read(), "TORN: file header checksum mismatch");
  reader_.reset();
  Write("foo");
  EXPECT_EQ(Read(), "CORRUPT: file header checksum mismatch");
}

TEST_F(LogTest, UnsupportedVersion) {
  SetByte(8, 2);
  const uint32_t masked = MaskCrc(Crc32c(std::string_view(file_).substr(0, 12)));
  for (int i = 0; i < 4; ++i) file_[12 + i] = static_cast<char>(masked >> (8 * i));
  EXPECT_EQ(Read(), "CORRUPT: unsupported log version 2");
}

TEST_F(LogTest, PowerLossKeepsWhatWasSynced) {
  testing::MemFileSystem fs;
  auto file = *fs.NewWritableFile("dir/log");
  ASSERT_TRUE(fs.SyncDir("dir").ok());
  LogWriter writer;
  std::string bytes;
  writer.AddFileHeader(&bytes);
  for (int i = 0; i < 1000; ++i) writer.AddRecord(NumberString(i), &bytes);
  ASSERT_TRUE(file->Append(bytes).ok());
  ASSERT_TRUE(file->Sync().ok());
  bytes.clear();
  for (int i = 1000; i < 1500; ++i) writer.AddRecord(BigString(NumberString(i), 100), &bytes);
  // Half of the unsynced batch reaches the disk before the crash; it is a torn tail.
  ASSERT_TRUE(file->Append(bytes.substr(0, bytes.size() / 2)).ok());
  fs.PowerLoss();
  EXPECT_EQ(CountNumberedRecordsToCleanEnd(fs, "dir/log"), 1000);
}

TEST_F(LogTest, ReservedSpaceWrittenAndSyncedReadsBackAfterPowerLoss) {
  testing::MemFileSystem fs;
  auto file = *fs.NewWritableFile("dir/log");
  ASSERT_TRUE(fs.SyncDir("dir").ok());
  LogWriter writer;
  std::string bytes;
  writer.AddFileHeader(&bytes);
  ASSERT_TRUE(file->Append(bytes).ok());
  ASSERT_TRUE(file->Preallocate(4 * kBlockSize).ok());
  EXPECT_EQ(file->size(), kFileHeaderSize);  // Reserved space is not written space.
  ASSERT_TRUE(file->Sync().ok());
  for (int round = 0; round < 3; ++round) {
    bytes.clear();
    for (int i = 0; i < 100; ++i) writer.AddRecord(NumberString(round * 100 + i), &bytes);
    ASSERT_TRUE(file->Append(bytes).ok());
    if (round < 2) {
      ASSERT_TRUE(file->Sync().ok());  // The third batch is never synced.
    }
  }
  EXPECT_EQ(file->size(), writer.file_size());
  EXPECT_EQ(fs.Contents("dir/log").size(), kFileHeaderSize + 4 * kBlockSize);
  fs.PowerLoss();
  // The reservation survives as zeros, the unsynced batch does not: a clean end after 200.
  EXPECT_EQ(fs.Contents("dir/log").size(), kFileHeaderSize + 4 * kBlockSize);
  EXPECT_EQ(CountNumberedRecordsToCleanEnd(fs, "dir/log"), 200);
}

TEST_F(LogTest, CloseGivesBackReservedSpace) {
  testing::MemFileSystem fs;
  auto file = *fs.NewWritableFile("log");
  ASSERT_TRUE(file->Append("abc").ok());
  ASSERT_TRUE(file->Preallocate(1000).ok());
  EXPECT_EQ(fs.Contents("log").size(), 1003u);
  ASSERT_TRUE(file->Append("def").ok());
  ASSERT_TRUE(file->Close().ok());
  EXPECT_EQ(fs.Contents("log"), "abcdef");
}

TEST_F(LogTest, PosixPreallocateAppendsAtTheWrittenEndAndCloseCutsTheRest) {
  FileSystem* posix = PosixFileSystem();
  const std::string path = ::testing::TempDir() + "/log_test_preallocate";
  auto file = *posix->NewWritableFile(path);
  ASSERT_TRUE(file->Append("abc").ok());
  const absl::Status reserved = file->Preallocate(1 << 20);
  if (!reserved.ok()) GTEST_SKIP() << "no fallocate here: " << reserved;
  EXPECT_EQ(*posix->FileSize(path), 3u + (1 << 20));
  ASSERT_TRUE(file->Append("def").ok());
  EXPECT_EQ(file->size(), 6u);
  ASSERT_TRUE(file->Sync().ok());
  ASSERT_TRUE(file->Close().ok());
  EXPECT_EQ(*ReadFile(posix, path), "abcdef");
  // Reopened to append: at the end found (the caller cut reserved space before).
  auto again = *posix->NewAppendableFile(path);
  ASSERT_TRUE(again->Append("g").ok());
  ASSERT_TRUE(again->Close().ok());
  EXPECT_EQ(*ReadFile(posix, path), "abcdefg");
  ASSERT_TRUE(posix->RemoveFile(path).ok());
}

TEST_F(LogTest, EveryTruncationIsATornTailOrAnEnd) {
  Write("alpha");
  Write(BigString("beta", 40000));
  Write("gamma");
  const std::string full = file_;
  for (size_t size = 0; size < full.size(); size += 97) {
    file_ = full.substr(0, size);
    reader_.reset();
    Outcome outcome;
    std::vector<std::string> records = ReadAll(&outcome);
    ASSERT_TRUE(outcome == Outcome::kTornTail || outcome == Outcome::kEnd) << size;
    ASSERT_LE(reader_->valid_end(), size);
    // Cutting at valid_end and appending gives a log that reads cleanly.
    file_.resize(reader_->valid_end());
    LogWriter appender(file_.size());
    if (file_.empty()) appender.AddFileHeader(&file_);
    appender.AddRecord("after", &file_);
    reader_.reset();
    std::vector<std::string> again = ReadAll(&outcome);
    ASSERT_EQ(outcome, Outcome::kEnd) << size;
    ASSERT_EQ(again.size(), records.size() + 1) << size;
    ASSERT_EQ(again.back(), "after");
  }
}

}  // namespace
}  // namespace gigakv::persistence::log
