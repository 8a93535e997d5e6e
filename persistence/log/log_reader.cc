#include "persistence/log/log_reader.h"

#include <cstring>

#include "gigakv/strings.h"
#include "persistence/crc32c.h"
#include "persistence/log/log_format.h"

namespace gigakv::persistence::log {

namespace {

constexpr size_t kNoPosition = static_cast<size_t>(-1);

uint32_t DecodeFixed32(const char* p) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(p[i]);
  return value;
}

bool AllZero(std::string_view bytes) {
  for (char c : bytes) {
    if (c != 0) return false;
  }
  return true;
}

bool Verifies(uint32_t stored_masked_crc, char type, std::string_view payload) {
  const uint32_t crc = Crc32cExtend(Crc32c(std::string_view(&type, 1)), payload);
  return UnmaskCrc(stored_masked_crc) == crc;
}

}  // namespace

LogReader::LogReader(SequentialFile* file) : file_(file) {}

LogReader::Outcome LogReader::Fail(Outcome outcome, uint64_t offset, std::string problem) {
  final_ = outcome;
  problem_offset_ = offset;
  problem_ = std::move(problem);
  return outcome;
}

LogReader::Outcome LogReader::Damaged(uint64_t offset, std::string problem, size_t next_in_block) {
  const bool more = AnythingVerifiesAfter(next_in_block);
  if (!io_status_.ok()) return Fail(Outcome::kIoError, offset, std::move(problem));
  return Fail(more ? Outcome::kCorruption : Outcome::kTornTail, offset, std::move(problem));
}

bool LogReader::ReadBlock() {
  block_buffer_.resize(kBlockSize);
  absl::StatusOr<size_t> got = file_->Read(kBlockSize, block_buffer_.data());
  if (!got.ok()) {
    io_status_ = got.status();
    return false;
  }
  block_offset_ += block_.size();
  block_ = std::string_view(block_buffer_.data(), *got);
  pos_ = 0;
  last_block_ = *got < kBlockSize;
  blocks_started_ = true;
  return *got > 0;
}

bool LogReader::FragmentVerifies(size_t pos, size_t* end, uint8_t* type) const {
  if (pos > block_.size() || block_.size() - pos < kFragmentHeaderSize) return false;
  const char* header = block_.data() + pos;
  const size_t length = static_cast<uint8_t>(header[4]) | (static_cast<uint8_t>(header[5]) << 8);
  *type = static_cast<uint8_t>(header[6]);
  if (*type == kZeroType || *type > kMaxFragmentType) return false;
  if (block_.size() - pos - kFragmentHeaderSize < length) return false;
  *end = pos + kFragmentHeaderSize + length;
  return Verifies(DecodeFixed32(header), header[6],
                  block_.substr(pos + kFragmentHeaderSize, length));
}

bool LogReader::AnythingVerifiesAfter(size_t next_in_block) {
  // Evidence of damage in the middle is a later record that is intact from its start (FULL or
  // FIRST): the rest of the damaged record itself (a MIDDLE or LAST in a later block) may have
  // reached the disk while an earlier page of it did not, which is a torn write all the same.
  size_t end;
  uint8_t type;
  auto starts_record = [&](size_t pos) {
    return FragmentVerifies(pos, &end, &type) && (type == kFullType || type == kFirstType);
  };
  if (next_in_block != kNoPosition && starts_record(next_in_block)) return true;
  while (!(blocks_started_ && last_block_)) {
    if (!ReadBlock()) return false;
    if (BlockStartsRecord()) return true;
  }
  return false;
}

bool LogReader::BlockStartsRecord() const {
  // Within a block every fragment after the first starts a record; the first may continue one
  // from the block before.
  size_t pos = 0;
  size_t end;
  uint8_t type;
  while (FragmentVerifies(pos, &end, &type)) {
    if (type == kFullType || type == kFirstType) return true;
    pos = end;
  }
  return false;
}

bool LogReader::RecordStartsAfterZeros(size_t from) const {
  size_t first = from;
  while (first < block_.size() && block_[first] == 0) ++first;
  if (first == block_.size()) return false;
  // The first byte that is not zero lies in the header of whatever comes next: its checksum
  // may begin with zero bytes, its type (1-4 for a record) cannot be zero.
  size_t end;
  uint8_t type;
  for (size_t start = first >= from + kFragmentHeaderSize - 1 ? first - kFragmentHeaderSize + 1
                                                              : from;
       start <= first; ++start) {
    if (FragmentVerifies(start, &end, &type) && (type == kFullType || type == kFirstType)) {
      return true;
    }
  }
  return false;
}

LogReader::Parse LogReader::ZeroFilled(uint64_t offset, size_t next_in_block) {
  if (!AllZero(block_.substr(pos_))) {
    if (RecordStartsAfterZeros(pos_)) {
      Fail(Outcome::kCorruption, offset, "zero-filled space");
      return Parse::kDamaged;
    }
    Damaged(offset, "zero-filled space", next_in_block);
    return Parse::kDamaged;
  }
  // Zeros to the end of this block: space reserved ahead of the writer and never written
  // ends the file cleanly, if nothing but zeros follows.
  while (!last_block_) {
    if (!ReadBlock()) {
      if (!io_status_.ok()) {
        Fail(Outcome::kIoError, block_offset_, "cannot read");
        return Parse::kIoError;
      }
      break;
    }
    if (!AllZero(block_)) {
      const bool more =
          RecordStartsAfterZeros(0) || BlockStartsRecord() || AnythingVerifiesAfter(kNoPosition);
      if (!io_status_.ok()) {
        Fail(Outcome::kIoError, offset, "zero-filled space");
        return Parse::kIoError;
      }
      Fail(more ? Outcome::kCorruption : Outcome::kTornTail, offset, "zero-filled space");
      return Parse::kDamaged;
    }
  }
  pos_ = block_.size();
  return Parse::kEndOfFile;
}

LogReader::Parse LogReader::ReadHeader() {
  header_read_ = true;
  char header[kFileHeaderSize];
  absl::StatusOr<size_t> got = file_->Read(kFileHeaderSize, header);
  if (!got.ok()) {
    io_status_ = got.status();
    Fail(Outcome::kIoError, 0, "cannot read the file header");
    return Parse::kIoError;
  }
  block_offset_ = kFileHeaderSize;
  const std::string_view bytes(header, *got);
  if (bytes.empty()) {
    Fail(Outcome::kEnd, 0, "");
    return Parse::kEndOfFile;
  }
  if (bytes.substr(0, kFileMagic.size()) != kFileMagic.substr(0, bytes.size())) {
    Fail(Outcome::kCorruption, 0, "not a gigakv log file (bad magic)");
    return Parse::kDamaged;
  }
  if (bytes.size() < kFileHeaderSize) {
    Fail(Outcome::kTornTail, 0, "truncated file header");
    return Parse::kDamaged;
  }
  const uint32_t version = DecodeFixed32(header + 8);
  if (UnmaskCrc(DecodeFixed32(header + 12)) != Crc32c(bytes.substr(0, 12))) {
    Damaged(0, "file header checksum mismatch", kNoPosition);
    return Parse::kDamaged;
  }
  if (version != kFileVersion) {
    Fail(Outcome::kCorruption, 8, StrCat("unsupported log version ", version));
    return Parse::kDamaged;
  }
  valid_end_ = kFileHeaderSize;
  return Parse::kOk;
}

LogReader::Parse LogReader::ReadFragment(Fragment* fragment) {
  while (true) {
    if (!blocks_started_ || pos_ == block_.size()) {
      if (blocks_started_ && last_block_) return Parse::kEndOfFile;
      if (!ReadBlock()) {
        if (!io_status_.ok()) {
          Fail(Outcome::kIoError, block_offset_, "cannot read");
          return Parse::kIoError;
        }
        return Parse::kEndOfFile;
      }
      continue;
    }
    const size_t left = block_.size() - pos_;
    const uint64_t offset = block_offset_ + pos_;
    if (left < kFragmentHeaderSize) {
      if (!last_block_) {  // The block's trailer.
        pos_ = block_.size();
        continue;
      }
      if (AllZero(block_.substr(pos_))) return Parse::kEndOfFile;  // Reserved, never written.
      Damaged(offset, "truncated fragment header", kNoPosition);
      return Parse::kDamaged;
    }
    const char* header = block_.data() + pos_;
    const uint32_t stored_crc = DecodeFixed32(header);
    const size_t length = static_cast<uint8_t>(header[4]) | (static_cast<uint8_t>(header[5]) << 8);
    const uint8_t type = static_cast<uint8_t>(header[6]);
    if (left - kFragmentHeaderSize < length) {
      Damaged(offset, last_block_ ? "truncated fragment" : "bad fragment length", kNoPosition);
      return Parse::kDamaged;
    }
    const size_t end = pos_ + kFragmentHeaderSize + length;
    const std::string_view payload = block_.substr(pos_ + kFragmentHeaderSize, length);
    if (type == kZeroType) {
      if (stored_crc == 0 && length == 0) return ZeroFilled(offset, end);
      Damaged(offset, "bad fragment type 0", end);
      return Parse::kDamaged;
    }
    if (!Verifies(stored_crc, header[6], payload)) {
      Damaged(offset, "checksum mismatch", end);
      return Parse::kDamaged;
    }
    if (type > kMaxFragmentType) {
      // Intact, so not a torn write: a newer format or a writer's bug.
      Fail(Outcome::kCorruption, offset, StrCat("unknown fragment type ", type));
      return Parse::kDamaged;
    }
    fragment->type = type;
    fragment->payload = payload;
    fragment->offset = offset;
    pos_ = end;
    return Parse::kOk;
  }
}

LogReader::Outcome LogReader::ReadRecord(std::string_view* record, std::string* scratch) {
  if (final_ != Outcome::kRecord) return final_;
  if (!header_read_ && ReadHeader() != Parse::kOk) return final_;
  scratch->clear();
  bool in_record = false;
  uint64_t start = 0;
  while (true) {
    Fragment fragment;
    switch (ReadFragment(&fragment)) {
      case Parse::kOk:
        break;
      case Parse::kEndOfFile:
        if (in_record) return Fail(Outcome::kTornTail, start, "record missing its last fragment");
        return Fail(Outcome::kEnd, valid_end_, "");
      case Parse::kDamaged:
      case Parse::kIoError:
        return final_;
    }
    const uint64_t fragment_end = fragment.offset + kFragmentHeaderSize + fragment.payload.size();
    switch (fragment.type) {
      case kFullType:
        if (in_record) {
          return Fail(Outcome::kCorruption, start, "record missing its last fragment");
        }
        *record = fragment.payload;
        record_offset_ = fragment.offset;
        valid_end_ = fragment_end;
        return Outcome::kRecord;
      case kFirstType:
        if (in_record) {
          return Fail(Outcome::kCorruption, start, "record missing its last fragment");
        }
        in_record = true;
        start = fragment.offset;
        scratch->assign(fragment.payload);
        break;
      case kMiddleType:
        if (!in_record)
          return Fail(Outcome::kCorruption, fragment.offset, "unexpected middle fragment");
        scratch->append(fragment.payload);
        break;
      case kLastType:
        if (!in_record)
          return Fail(Outcome::kCorruption, fragment.offset, "unexpected last fragment");
        scratch->append(fragment.payload);
        *record = *scratch;
        record_offset_ = start;
        valid_end_ = fragment_end;
        return Outcome::kRecord;
    }
  }
}

}  // namespace gigakv::persistence::log
