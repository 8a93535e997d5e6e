#include "persistence/log/redis_aof_reader.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "gigakv/strings.h"

namespace gigakv::persistence::log {

namespace {

constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kMaxReadStep = 16 * 1024 * 1024;
// Redis reads the '*' and '$' lines into a buffer of this size (AOF_ANNOTATION_LINE_MAX_LEN).
constexpr size_t kMaxNumberLine = 1024;
constexpr int kMaxDigits = 19;  // Fits in 64 bits.

std::string Printable(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("byte 0x") + kHex[(static_cast<unsigned char>(c) >> 4) & 0xf] +
         kHex[static_cast<unsigned char>(c) & 0xf];
}

}  // namespace

RedisAofReader::RedisAofReader(SequentialFile* file, uint64_t start_offset, uint64_t file_size)
    : file_(file), file_size_(file_size), buffer_offset_(start_offset), valid_end_(start_offset) {}

bool RedisAofReader::Ensure(size_t n) {
  while (buffer_.size() - pos_ < n) {
    if (end_of_file_) return false;
    const size_t have = buffer_.size();
    // Grown as bytes arrive, not by the length a (maybe damaged) header claims.
    const size_t want = std::min(kMaxReadStep, std::max(kReadChunk, n - (have - pos_)));
    buffer_.resize(have + want);
    absl::StatusOr<size_t> got = file_->Read(want, buffer_.data() + have);
    if (!got.ok()) {
      buffer_.resize(have);
      io_status_ = got.status();
      return false;
    }
    buffer_.resize(have + *got);
    if (*got < want) end_of_file_ = true;
  }
  return true;
}

RedisAofReader::Parse RedisAofReader::ReadNumberLine(char prefix, const char* what,
                                                     uint64_t* value) {
  if (!Ensure(1)) return Parse::kNeedMore;
  const uint64_t line_offset = buffer_offset_ + pos_;
  if (buffer_[pos_] != prefix) {
    Fail(Outcome::kBadFormat, line_offset,
         StrCat("expected '", std::string_view(&prefix, 1), "' (", what, "), found ",
                Printable(buffer_[pos_])));
    return Parse::kBad;
  }
  size_t lf;
  while ((lf = buffer_.find('\n', pos_)) == std::string::npos) {
    const size_t have = buffer_.size() - pos_;
    if (have > kMaxNumberLine) break;
    if (!Ensure(have + 1)) return Parse::kNeedMore;
  }
  if (lf == std::string::npos || lf - pos_ > kMaxNumberLine) {
    Fail(Outcome::kBadFormat, line_offset, StrCat("the line of ", what, " is too long"));
    return Parse::kBad;
  }
  size_t end = lf;
  if (end > pos_ && buffer_[end - 1] == '\r') --end;
  const std::string_view digits(buffer_.data() + pos_ + 1, end - pos_ - 1);
  bool ok = !digits.empty() && digits.size() <= kMaxDigits;
  uint64_t parsed = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    parsed = parsed * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok) {
    Fail(Outcome::kBadFormat, line_offset,
         StrCat("bad ", what, " '", std::string_view(buffer_.data() + pos_, end - pos_), "'"));
    return Parse::kBad;
  }
  *value = parsed;
  pos_ = lf + 1;
  return Parse::kOk;
}

RedisAofReader::Outcome RedisAofReader::Fail(Outcome outcome, uint64_t offset,
                                             std::string problem) {
  outcome_ = outcome;
  problem_offset_ = offset;
  problem_ = std::move(problem);
  return outcome_;
}

RedisAofReader::Outcome RedisAofReader::ReadCommand(std::vector<std::string_view>* args) {
  if (outcome_ != Outcome::kCommand) return outcome_;
  args->clear();
  // Skip annotations up to the next command.
  for (;;) {
    if (pos_ >= kReadChunk || (pos_ > 0 && pos_ * 2 >= buffer_.size())) {
      buffer_.erase(0, pos_);
      buffer_offset_ += pos_;
      pos_ = 0;
    }
    if (!Ensure(1)) {
      if (!io_status_.ok()) return outcome_ = Outcome::kIoError;
      return outcome_ = Outcome::kEnd;
    }
    if (buffer_[pos_] != '#') break;
    size_t lf;
    size_t searched = pos_;
    while ((lf = buffer_.find('\n', searched)) == std::string::npos) {
      searched = buffer_.size();
      if (buffer_.size() - pos_ >= kMaxNumberLine) {
        return Fail(Outcome::kBadFormat, buffer_offset_ + pos_,
                    StrCat("an annotation longer than ", kMaxNumberLine, " bytes"));
      }
      if (!Ensure(buffer_.size() - pos_ + 1)) {
        if (!io_status_.ok()) return outcome_ = Outcome::kIoError;
        // An annotation without its LF at the very end: Redis skips it too.
        pos_ = buffer_.size();
        return outcome_ = Outcome::kEnd;
      }
    }
    if (lf - pos_ >= kMaxNumberLine) {
      return Fail(Outcome::kBadFormat, buffer_offset_ + pos_,
                  StrCat("an annotation longer than ", kMaxNumberLine, " bytes"));
    }
    pos_ = lf + 1;
  }
  command_offset_ = buffer_offset_ + pos_;
  const auto unfinished = [this]() {
    if (!io_status_.ok()) return outcome_ = Outcome::kIoError;
    return Fail(Outcome::kTruncated, command_offset_, "unexpected end of file inside a command");
  };
  // A number line, or how reading ended.
  const auto read_number = [&](char prefix, const char* what, uint64_t* value) {
    switch (ReadNumberLine(prefix, what, value)) {
      case Parse::kOk:
        return true;
      case Parse::kNeedMore:
        unfinished();
        return false;
      case Parse::kBad:
        return false;
    }
    return false;
  };
  uint64_t argc = 0;
  if (!read_number('*', "a command's argument count", &argc)) return outcome_;
  if (argc == 0) return Fail(Outcome::kBadFormat, command_offset_, "a command without arguments");
  spans_.clear();
  for (uint64_t j = 0; j < argc; ++j) {
    uint64_t len = 0;
    if (!read_number('$', "an argument's length", &len)) return outcome_;
    if (len > std::numeric_limits<size_t>::max() / 2) {
      return Fail(Outcome::kBadFormat, buffer_offset_ + pos_,
                  StrCat("an argument of ", len, " bytes is too long"));
    }
    if (buffer_offset_ + pos_ + len + 2 > file_size_) return unfinished();  // Past the end.
    if (!Ensure(static_cast<size_t>(len) + 2)) return unfinished();
    const size_t end = pos_ + static_cast<size_t>(len);
    if (buffer_[end] != '\r' || buffer_[end + 1] != '\n') {
      return Fail(
          Outcome::kBadFormat, buffer_offset_ + end,
          StrCat("argument ", j + 1, " of ", argc, " (", len, " bytes) is not followed by CRLF"));
    }
    spans_.push_back({pos_, static_cast<size_t>(len)});
    pos_ = end + 2;
  }
  args->reserve(spans_.size());
  for (const Span& span : spans_) args->emplace_back(buffer_.data() + span.begin, span.size);
  valid_end_ = buffer_offset_ + pos_;
  return Outcome::kCommand;
}

}  // namespace gigakv::persistence::log
