#include "persistence/log/log_writer.h"

#include <algorithm>
#include <cassert>

#include "persistence/crc32c.h"
#include "persistence/log/log_format.h"

namespace gigakv::persistence::log {

namespace {

void PutFixed32(std::string* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

size_t BlockOffsetOf(uint64_t file_size) {
  return file_size <= kFileHeaderSize ? 0 : (file_size - kFileHeaderSize) % kBlockSize;
}

}  // namespace

LogWriter::LogWriter(uint64_t file_size)
    : file_size_(file_size), block_offset_(BlockOffsetOf(file_size)) {}

void LogWriter::AddFileHeader(std::string* out) {
  assert(file_size_ == 0);
  const size_t start = out->size();
  out->append(kFileMagic);
  PutFixed32(out, kFileVersion);
  PutFixed32(out, MaskCrc(Crc32c(std::string_view(*out).substr(start, 12))));
  file_size_ = kFileHeaderSize;
  block_offset_ = 0;
}

void LogWriter::AddRecord(std::string_view payload, std::string* out) {
  bool begin = true;
  do {
    const size_t left = kBlockSize - block_offset_;
    if (left < kFragmentHeaderSize) {
      // Too little room for a header: zero-fill the trailer, start a new block.
      out->append(left, '\0');
      file_size_ += left;
      block_offset_ = 0;
    }
    const size_t room = kBlockSize - block_offset_ - kFragmentHeaderSize;
    const size_t length = std::min(payload.size(), room);
    const bool end = length == payload.size();
    const uint8_t type = begin && end ? kFullType
                         : begin      ? kFirstType
                         : end        ? kLastType
                                      : kMiddleType;
    AddFragment(type, payload.substr(0, length), out);
    payload.remove_prefix(length);
    begin = false;
  } while (!payload.empty());
}

void LogWriter::AddFragment(uint8_t type, std::string_view payload, std::string* out) {
  assert(payload.size() <= 0xffff);
  assert(block_offset_ + kFragmentHeaderSize + payload.size() <= kBlockSize);
  const char type_byte = static_cast<char>(type);
  const uint32_t crc = Crc32cExtend(Crc32c(std::string_view(&type_byte, 1)), payload);
  PutFixed32(out, MaskCrc(crc));
  out->push_back(static_cast<char>(payload.size() & 0xff));
  out->push_back(static_cast<char>(payload.size() >> 8));
  out->push_back(type_byte);
  out->append(payload);
  const size_t written = kFragmentHeaderSize + payload.size();
  file_size_ += written;
  block_offset_ += written;
}

}  // namespace gigakv::persistence::log
