#include "persistence/rdb/rdb_io.h"

#include <lzf.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "gigakv/numbers.h"
#include "gigakv/strings.h"
#include "persistence/rdb/rdb_format.h"
#include "persistence/reflected_crc.h"

namespace gigakv::persistence::rdb {
namespace {

using Crc64Jones = ReflectedCrc<uint64_t, 0x95AC9329AC4BC9B5ull>;

// LZF's densest token copies 264 bytes from 3 input bytes: no valid block expands more.
constexpr uint64_t kLzfMaxExpansion = 88;

// liblzf takes and returns lengths as unsigned int.
constexpr uint64_t kLzfMaxLength = std::numeric_limits<unsigned>::max();

// A scratch buffer larger than this (and than a few flush pieces) is freed after the value that
// grew it, rather than kept for the rest of the save.
constexpr size_t kKeepScratch = size_t{1} << 20;

// What a reader on a source asks it for at least at a time.
constexpr size_t kReadPiece = size_t{256} << 10;

void AppendLittleEndian(std::string* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void AppendBigEndian(std::string* out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t LoadLittleEndian(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) value = value << 8 | static_cast<uint8_t>(bytes[i]);
  return value;
}

uint64_t LoadBigEndian(std::string_view bytes) {
  uint64_t value = 0;
  for (char byte : bytes) value = value << 8 | static_cast<uint8_t>(byte);
  return value;
}

// Redis's rdbEncodeInteger: the 11xxxxxx form of an integer in int32 range; false otherwise.
bool AppendEncodedInteger(std::string* out, int64_t value) {
  if (value >= -(1 << 7) && value <= (1 << 7) - 1) {
    out->push_back(static_cast<char>(kLenEncoded << 6 | kEncInt8));
    AppendLittleEndian(out, static_cast<uint64_t>(value), 1);
  } else if (value >= -(1 << 15) && value <= (1 << 15) - 1) {
    out->push_back(static_cast<char>(kLenEncoded << 6 | kEncInt16));
    AppendLittleEndian(out, static_cast<uint64_t>(value), 2);
  } else if (value >= std::numeric_limits<int32_t>::min() &&
             value <= std::numeric_limits<int32_t>::max()) {
    out->push_back(static_cast<char>(kLenEncoded << 6 | kEncInt32));
    AppendLittleEndian(out, static_cast<uint64_t>(value), 4);
  } else {
    return false;
  }
  return true;
}

}  // namespace

uint64_t Crc64(uint64_t crc, std::string_view data) { return Crc64Jones::Update(crc, data); }

bool LzfEligible(uint64_t size) { return size > 20 && size <= kLzfMaxLength; }

// --- Writer ------------------------------------------------------------------------------------

RdbWriter::RdbWriter(RdbSink sink, Options options, size_t flush_bytes)
    : sink_(std::move(sink)), options_(options), flush_bytes_(flush_bytes) {
  buffer_.reserve(flush_bytes_ + flush_bytes_ / 4);
}

void RdbWriter::WriteLength(uint64_t length) {
  if (length < (1 << 6)) {
    buffer_.push_back(static_cast<char>(length));
  } else if (length < (1 << 14)) {
    buffer_.push_back(static_cast<char>(kLen14Bit << 6 | length >> 8));
    buffer_.push_back(static_cast<char>(length & 0xff));
  } else if (length <= std::numeric_limits<uint32_t>::max()) {
    buffer_.push_back(static_cast<char>(kLen32Bit));
    AppendBigEndian(&buffer_, length, 4);
  } else {
    buffer_.push_back(static_cast<char>(kLen64Bit));
    AppendBigEndian(&buffer_, length, 8);
  }
}

void RdbWriter::WriteString(std::string_view value) {
  int64_t number;
  if (value.size() <= 11 && ParseInt64(value, &number) && AppendEncodedInteger(&buffer_, number)) {
    return;
  }
  if (options_.compress && LzfEligible(value.size())) {
    // As Redis: only when the compressed form is at least 4 bytes smaller. The casts are exact:
    // LzfEligible keeps the sizes within unsigned.
    scratch_.resize(value.size() - 4);
    const unsigned compressed =
        lzf_compress(value.data(), static_cast<unsigned>(value.size()), scratch_.data(),
                     static_cast<unsigned>(scratch_.size()));
    if (compressed > 0) {
      buffer_.push_back(static_cast<char>(kLenEncoded << 6 | kEncLzf));
      WriteLength(compressed);
      WriteLength(value.size());
      WriteBytes(std::string_view(scratch_.data(), compressed));
    }
    ReleaseIfLarge(&scratch_);
    if (compressed > 0) return;
  }
  WriteLength(value.size());
  WriteBytes(value);
}

void RdbWriter::WriteRaw(std::string_view bytes) { WriteBytes(bytes); }

void RdbWriter::WriteBytes(std::string_view bytes) {
  if (bytes.size() < flush_bytes_) {
    buffer_.append(bytes);
    return;
  }
  // A large string goes to the sink from where it is: copying it into the buffer would hold a
  // second copy of it for nothing. The CRC is incremental, so the order is all that matters.
  if (!Flush().ok()) return;
  if (options_.checksum) crc_ = Crc64(crc_, bytes);
  status_ = sink_(bytes);
  flushed_bytes_ += bytes.size();
}

void RdbWriter::ReleaseIfLarge(std::string* buffer) const {
  if (buffer->capacity() > std::max(kKeepScratch, 4 * flush_bytes_)) std::string().swap(*buffer);
}

void RdbWriter::WriteIntegerString(int64_t value) {
  if (AppendEncodedInteger(&buffer_, value)) return;
  const std::string text = StrCat(value);
  WriteLength(text.size());
  buffer_.append(text);
}

void RdbWriter::WriteBinaryDouble(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  AppendLittleEndian(&buffer_, bits, 8);
}

void RdbWriter::WriteMillis(int64_t unix_ms) {
  AppendLittleEndian(&buffer_, static_cast<uint64_t>(unix_ms), 8);
}

void RdbWriter::WriteHeader(int version) {
  version_ = version;
  buffer_.append(kMagic, kMagicSize);
  buffer_.append(StrCat(version < 10 ? "000" : "00", version));
}

void RdbWriter::WriteAux(std::string_view key, std::string_view value) {
  WriteByte(kOpAux);
  WriteString(key);
  WriteString(value);
}

absl::Status RdbWriter::Flush() {
  if (!status_.ok()) {
    buffer_.clear();  // The output failed: keeping what follows would only grow the buffer.
    return status_;
  }
  if (buffer_.empty()) return status_;
  if (options_.checksum) crc_ = Crc64(crc_, buffer_);
  status_ = sink_(buffer_);
  flushed_bytes_ += buffer_.size();
  buffer_.clear();
  if (buffer_.capacity() > 2 * (flush_bytes_ + flush_bytes_ / 4)) {
    std::string fresh;
    fresh.reserve(flush_bytes_ + flush_bytes_ / 4);
    buffer_.swap(fresh);
  }
  return status_;
}

absl::Status RdbWriter::MaybeFlush() {
  ReleaseIfLarge(&blob_);
  if (buffer_.size() < flush_bytes_) return status_;
  return Flush();
}

absl::Status RdbWriter::Finish() {
  WriteByte(kOpEof);
  if (absl::Status status = Flush(); !status.ok()) return status;
  if (version_ < kFirstWithChecksum) return status_;  // No trailer before version 5.
  std::string trailer;
  AppendLittleEndian(&trailer, options_.checksum ? crc_ : 0, 8);
  status_ = sink_(trailer);
  flushed_bytes_ += trailer.size();
  return status_;
}

absl::Status RdbWriter::FinishPayload(int version) {
  AppendLittleEndian(&buffer_, static_cast<uint64_t>(version), 2);
  if (absl::Status status = Flush(); !status.ok()) return status;
  std::string trailer;
  AppendLittleEndian(&trailer, crc_, 8);  // DUMP always carries its CRC.
  status_ = sink_(trailer);
  flushed_bytes_ += trailer.size();
  return status_;
}

// --- Reader ------------------------------------------------------------------------------------

RdbReader::RdbReader(RdbSource source) : source_(std::move(source)) {}

RdbReader::RdbReader(std::string_view data) : buffer_(data), end_of_input_(true) {}

absl::Status RdbReader::Corrupt(std::string_view reason) const {
  return absl::DataLossError(StrCat(reason, " at offset ", offset()));
}

absl::Status RdbReader::CorruptAt(uint64_t offset, std::string_view reason) {
  return absl::DataLossError(StrCat(reason, " at offset ", offset));
}

absl::Status RdbReader::Truncated() const {
  if (!status_.ok()) return status_;
  return Corrupt("unexpected end of input");
}

bool RdbReader::Fill(size_t count) {
  if (buffer_.size() - position_ >= count) return true;
  if (end_of_input_ || !source_) return false;
  // Drop the consumed bytes (folding them into the CRC) and read behind what is left, in one
  // buffer kept for the whole read: the unconsumed tail moves to its front, so a refill
  // allocates (and faults in) nothing once the buffer has grown to its working size.
  crc_ = Crc64(crc_, buffer_.substr(0, position_));
  consumed_before_ += position_;
  size_t filled = buffer_.size() - position_;
  if (filled > 0 && position_ > 0) std::memmove(owned_.data(), buffer_.data() + position_, filled);
  position_ = 0;
  while (filled < count) {
    // Grow by what arrives, never by what a length claims: a hostile length costs nothing.
    const size_t piece = std::max<size_t>(kReadPiece, std::min<size_t>(count - filled, 1 << 20));
    if (owned_.size() < filled + piece) owned_.resize(filled + piece);
    absl::StatusOr<size_t> got = source_(owned_.data() + filled, piece);
    if (!got.ok()) {
      status_ = got.status();
      end_of_input_ = true;
      break;
    }
    filled += *got;
    if (*got == 0) {
      end_of_input_ = true;
      break;
    }
  }
  buffer_ = std::string_view(owned_.data(), filled);
  return filled >= count;
}

std::string RdbReader::TakeBuffered() {
  std::string rest(buffer_.substr(position_));
  crc_ = Crc64(crc_, buffer_.substr(0, position_));
  consumed_before_ += position_;
  position_ = 0;
  buffer_ = std::string_view();
  owned_.clear();
  return rest;
}

absl::StatusOr<uint8_t> RdbReader::ReadByte() {
  if (!Fill(1)) return Truncated();
  return static_cast<uint8_t>(buffer_[position_++]);
}

absl::Status RdbReader::ReadExact(size_t count, std::string* out) {
  out->clear();
  // In pieces, so the output grows only as the input turns out to hold the bytes.
  while (out->size() < count) {
    const size_t piece = std::min<size_t>(count - out->size(), 1 << 20);
    if (!Fill(piece)) return Truncated();
    out->append(buffer_.substr(position_, piece));
    position_ += piece;
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> RdbReader::ReadLength(bool* encoded) {
  if (encoded != nullptr) *encoded = false;
  absl::StatusOr<uint8_t> first = ReadByte();
  if (!first.ok()) return first.status();
  const uint8_t kind = *first >> 6;
  if (kind == kLen6Bit) return *first & 0x3f;
  if (kind == kLen14Bit) {
    absl::StatusOr<uint8_t> second = ReadByte();
    if (!second.ok()) return second.status();
    return static_cast<uint64_t>(*first & 0x3f) << 8 | *second;
  }
  if (kind == kLenEncoded) {
    if (encoded == nullptr) return Corrupt("unexpected string encoding where a length belongs");
    *encoded = true;
    return *first & 0x3f;
  }
  if (*first != kLen32Bit && *first != kLen64Bit) return Corrupt("unknown length encoding");
  const size_t bytes = *first == kLen32Bit ? 4 : 8;
  if (!Fill(bytes)) return Truncated();
  uint64_t length = LoadBigEndian(buffer_.substr(position_, bytes));
  position_ += bytes;
  return length;
}

absl::Status RdbReader::ReadString(std::string* out, uint64_t max_length) {
  bool encoded = false;
  absl::StatusOr<uint64_t> length = ReadLength(&encoded);
  if (!length.ok()) return length.status();
  if (!encoded) {
    if (*length > max_length) return Corrupt("string length over the limit");
    return ReadExact(*length, out);
  }
  switch (*length) {
    case kEncInt8:
    case kEncInt16:
    case kEncInt32: {
      const size_t bytes = size_t{1} << *length;
      if (!Fill(bytes)) return Truncated();
      uint64_t raw = LoadLittleEndian(buffer_.substr(position_, bytes));
      position_ += bytes;
      const int shift = 64 - static_cast<int>(bytes) * 8;
      const int64_t value = static_cast<int64_t>(raw << shift) >> shift;  // Sign-extend.
      *out = StrCat(value);
      return absl::OkStatus();
    }
    case kEncLzf: {
      absl::StatusOr<uint64_t> compressed = ReadLength();
      if (!compressed.ok()) return compressed.status();
      absl::StatusOr<uint64_t> original = ReadLength();
      if (!original.ok()) return original.status();
      if (*original > max_length) return Corrupt("string length over the limit");
      // Checked before the multiplication below, which then cannot overflow.
      if (*compressed > kLzfMaxLength || *original > kLzfMaxLength) {
        return absl::UnimplementedError(
            StrCat("LZF string of more than 4 GiB is not supported, at offset ", offset()));
      }
      if (*original > *compressed * kLzfMaxExpansion) return Corrupt("invalid LZF lengths");
      std::string input;
      if (absl::Status status = ReadExact(*compressed, &input); !status.ok()) return status;
      if (*original == 0) {
        // Redis accepts it whatever the compressed bytes: lzf_decompress into no room returns
        // 0, the expected length.
        out->clear();
        return absl::OkStatus();
      }
      out->resize(*original);
      unsigned produced = lzf_decompress(input.data(), static_cast<unsigned>(input.size()),
                                         out->data(), static_cast<unsigned>(out->size()));
      if (produced != *original) return Corrupt("invalid LZF data");
      return absl::OkStatus();
    }
    default:
      return Corrupt("unknown string encoding");
  }
}

absl::StatusOr<double> RdbReader::ReadBinaryDouble() {
  if (!Fill(8)) return Truncated();
  uint64_t bits = LoadLittleEndian(buffer_.substr(position_, 8));
  position_ += 8;
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

absl::StatusOr<double> RdbReader::ReadTextDouble() {
  absl::StatusOr<uint8_t> length = ReadByte();
  if (!length.ok()) return length.status();
  if (*length == 253) return std::nan("");
  if (*length == 254) return std::numeric_limits<double>::infinity();
  if (*length == 255) return -std::numeric_limits<double>::infinity();
  std::string text;
  if (absl::Status status = ReadExact(*length, &text); !status.ok()) return status;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return Corrupt("invalid double text");
  return value;
}

absl::StatusOr<int64_t> RdbReader::ReadMillis() {
  if (!Fill(8)) return Truncated();
  uint64_t raw = LoadLittleEndian(buffer_.substr(position_, 8));
  position_ += 8;
  return static_cast<int64_t>(raw);
}

absl::StatusOr<int64_t> RdbReader::ReadSeconds32() {
  if (!Fill(4)) return Truncated();
  uint64_t raw = LoadLittleEndian(buffer_.substr(position_, 4));
  position_ += 4;
  return static_cast<int64_t>(static_cast<int32_t>(raw));
}

absl::StatusOr<int> RdbReader::ReadHeader() {
  if (!Fill(kHeaderSize)) return Corrupt("not an RDB file (too short)");
  std::string_view header = buffer_.substr(position_, kHeaderSize);
  if (header.substr(0, kMagicSize) != std::string_view(kMagic, kMagicSize)) {
    return Corrupt("not an RDB file (wrong signature)");
  }
  int version = 0;
  for (char digit : header.substr(kMagicSize)) {
    if (digit < '0' || digit > '9') return Corrupt("not an RDB file (bad version)");
    version = version * 10 + (digit - '0');
  }
  if (version < kOldestReadable || version > kRdbVersion) {
    return Corrupt(StrCat("can't handle RDB format version ", version));
  }
  position_ += kHeaderSize;
  return version;
}

absl::Status RdbReader::ReadChecksum(bool* verified) {
  const uint64_t expected = Crc64(crc_, buffer_.substr(0, position_));
  absl::StatusOr<int64_t> stored = ReadMillis();  // 8 bytes LE, as a file's time is.
  if (!stored.ok()) return stored.status();
  if (*stored != 0 && static_cast<uint64_t>(*stored) != expected) {
    position_ -= 8;
    return Corrupt("wrong RDB checksum");
  }
  if (verified != nullptr) *verified = *stored != 0;
  return absl::OkStatus();
}

absl::Status VerifyDumpPayload(std::string_view payload, std::string_view* value) {
  const absl::Status wrong =
      absl::InvalidArgumentError("DUMP payload version or checksum are wrong");
  if (payload.size() < 10) return wrong;
  const std::string_view footer = payload.substr(payload.size() - 10);
  if (LoadLittleEndian(footer.substr(0, 2)) > static_cast<uint64_t>(kRdbVersion)) return wrong;
  if (LoadLittleEndian(footer.substr(2)) != Crc64(0, payload.substr(0, payload.size() - 8))) {
    return wrong;
  }
  *value = payload.substr(0, payload.size() - 10);
  return absl::OkStatus();
}

}  // namespace gigakv::persistence::rdb
