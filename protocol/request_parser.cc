#include "protocol/request_parser.h"

#include <cctype>
#include <cstring>

#include "protocol/wire_numbers.h"

namespace gigakv::protocol {
namespace {

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// The common case of a "*<count>" or "$<length>" line in one pass, without memchr and a second
// parse: from `p` (just after the '*' or '$'), plain digits (no sign, no leading zero, at most
// 18) then '\r' and at least one more byte. Anything else, a line not complete yet included,
// returns false and goes the general way (first '\r' of the buffer, ParseRespInteger), which
// then decides exactly as it would have. On success `*cr` is the '\r'.
inline bool ScanPlainLength(const char* p, const char* end, int64_t* value, const char** cr) {
  const char* q = p;
  int64_t v = 0;
  while (q < end && q - p < 18 && static_cast<unsigned>(*q - '0') <= 9) {
    v = v * 10 + (*q - '0');
    ++q;
  }
  if (q == p || q + 1 >= end || *q != '\r' || (*p == '0' && q - p > 1)) return false;
  *value = v;
  *cr = q;
  return true;
}

enum class LengthLine { kOk, kIncomplete, kNotInteger };

// Reads the "*<count>" or "$<length>" line at the start of `rest` (its first byte, the sigil, is
// not looked at: the caller checks it). kIncomplete while no '\r' with a byte after it is in
// `rest`; otherwise *cr_pos is that first '\r', and the text between the sigil and it must be
// an integer (ParseRespInteger's rules), else kNotInteger.
LengthLine ReadLengthLine(std::string_view rest, int64_t* value, size_t* cr_pos) {
  const char* cr_at;
  if (ScanPlainLength(rest.data() + 1, rest.data() + rest.size(), value, &cr_at)) {
    *cr_pos = static_cast<size_t>(cr_at - rest.data());
    return LengthLine::kOk;
  }
  const void* cr = std::memchr(rest.data(), '\r', rest.size());
  if (cr == nullptr || static_cast<const char*>(cr) + 1 >= rest.data() + rest.size()) {
    return LengthLine::kIncomplete;
  }
  *cr_pos = static_cast<size_t>(static_cast<const char*>(cr) - rest.data());
  return ParseRespInteger(rest.substr(1, *cr_pos - 1), value) ? LengthLine::kOk
                                                              : LengthLine::kNotInteger;
}

}  // namespace

bool SplitInlineArgs(std::string_view line, std::vector<std::string>* out) {
  out->clear();
  size_t i = 0;
  const size_t n = line.size();
  while (true) {
    while (i < n && IsSpace(line[i])) ++i;
    if (i >= n) return true;
    std::string word;
    bool in_double = false;
    bool in_single = false;
    bool done = false;
    while (!done) {
      if (in_double) {
        if (i >= n) return false;  // Unterminated quotes.
        if (line[i] == '\\' && i + 3 < n && line[i + 1] == 'x' && HexDigitValue(line[i + 2]) >= 0 &&
            HexDigitValue(line[i + 3]) >= 0) {
          word.push_back(
              static_cast<char>(HexDigitValue(line[i + 2]) * 16 + HexDigitValue(line[i + 3])));
          i += 3;
        } else if (line[i] == '\\' && i + 1 < n) {
          ++i;
          switch (line[i]) {
            case 'n':
              word.push_back('\n');
              break;
            case 'r':
              word.push_back('\r');
              break;
            case 't':
              word.push_back('\t');
              break;
            case 'b':
              word.push_back('\b');
              break;
            case 'a':
              word.push_back('\a');
              break;
            default:
              word.push_back(line[i]);
              break;
          }
        } else if (line[i] == '"') {
          // A closing quote must be followed by a space or the end of the line.
          if (i + 1 < n && !IsSpace(line[i + 1])) return false;
          done = true;
        } else {
          word.push_back(line[i]);
        }
      } else if (in_single) {
        if (i >= n) return false;
        if (line[i] == '\\' && i + 1 < n && line[i + 1] == '\'') {
          ++i;
          word.push_back('\'');
        } else if (line[i] == '\'') {
          if (i + 1 < n && !IsSpace(line[i + 1])) return false;
          done = true;
        } else {
          word.push_back(line[i]);
        }
      } else {
        if (i >= n) {
          done = true;
          break;
        }
        switch (line[i]) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0':
            done = true;
            break;
          case '"':
            in_double = true;
            break;
          case '\'':
            in_single = true;
            break;
          default:
            word.push_back(line[i]);
            break;
        }
      }
      if (i < n) ++i;
    }
    out->push_back(std::move(word));
  }
}

void RequestParser::Reset() {
  state_ = State::kStart;
  pos_ = 0;
  remaining_bulks_ = 0;
  bulk_len_ = 0;
  spans_.clear();
  bytes_hint_ = 0;
}

RequestParser::Result RequestParser::Fail(std::string text) {
  error_ = std::move(text);
  return Result::kError;
}

RequestParser::Result RequestParser::ParseInline(std::string_view input) {
  const void* nl = std::memchr(input.data(), '\n', input.size());
  if (nl == nullptr) {
    if (input.size() > limits_.max_inline_len) {
      return Fail("Protocol error: too big inline request");
    }
    return Result::kNeedMore;
  }
  size_t line_end = static_cast<const char*>(nl) - input.data();
  consumed_ = line_end + 1;
  std::string_view line = input.substr(0, line_end);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!SplitInlineArgs(line, &inline_storage_)) {
    return Fail("Protocol error: unbalanced quotes in request");
  }
  if (inline_storage_.empty()) return Result::kEmpty;
  args_.clear();
  for (const std::string& word : inline_storage_) args_.emplace_back(word);
  return Result::kCommand;
}

RequestParser::Result RequestParser::Feed(std::string_view input) {
  args_.clear();
  consumed_ = 0;
  if (state_ == State::kStart && pos_ == 0) {
    if (input.empty()) return Result::kNeedMore;
    if (input[0] != '*') return ParseInline(input);
    // Multibulk count line.
    int64_t count;
    size_t cr_pos;
    switch (ReadLengthLine(input, &count, &cr_pos)) {
      case LengthLine::kIncomplete:
        if (input.size() > limits_.max_inline_len) {
          return Fail("Protocol error: too big mbulk count string");
        }
        return Result::kNeedMore;
      case LengthLine::kNotInteger:
        return Fail("Protocol error: invalid multibulk length");
      case LengthLine::kOk:
        break;
    }
    if (count > limits_.max_multibulk_len) {
      return Fail("Protocol error: invalid multibulk length");
    }
    if (count > 10 && limits_.unauthenticated) {
      return Fail("Protocol error: unauthenticated multibulk length");
    }
    if (count <= 0) {
      consumed_ = cr_pos + 2;
      return Result::kEmpty;
    }
    remaining_bulks_ = count;
    spans_.clear();
    spans_.reserve(static_cast<size_t>(std::min<int64_t>(count, 1024)));
    pos_ = cr_pos + 2;
    state_ = State::kBulkHeader;
  }

  while (remaining_bulks_ > 0) {
    if (state_ == State::kBulkHeader) {
      if (pos_ >= input.size()) return Result::kNeedMore;
      std::string_view rest = input.substr(pos_);
      int64_t len;
      size_t cr_pos;
      LengthLine line = ReadLengthLine(rest, &len, &cr_pos);
      if (line == LengthLine::kIncomplete) {
        if (rest.size() > limits_.max_inline_len) {
          return Fail("Protocol error: too big bulk count string");
        }
        return Result::kNeedMore;
      }
      if (rest[0] != '$') {
        return Fail(std::string("Protocol error: expected '$', got '") + rest[0] + "'");
      }
      if (line == LengthLine::kNotInteger || len < 0 || len > limits_.max_bulk_len) {
        return Fail("Protocol error: invalid bulk length");
      }
      if (len > 16384 && limits_.unauthenticated) {
        return Fail("Protocol error: unauthenticated bulk length");
      }
      bulk_len_ = len;
      pos_ += cr_pos + 2;
      state_ = State::kBulkBody;
    }
    // kBulkBody: the bulk plus its trailing CRLF.
    size_t need = static_cast<size_t>(bulk_len_) + 2;
    if (input.size() < pos_ + need) {
      bytes_hint_ = pos_ + need - input.size();
      return Result::kNeedMore;
    }
    bytes_hint_ = 0;
    spans_.emplace_back(pos_, static_cast<size_t>(bulk_len_));
    pos_ += need;
    --remaining_bulks_;
    state_ = State::kBulkHeader;
  }

  for (const auto& [offset, length] : spans_) args_.push_back(input.substr(offset, length));
  consumed_ = pos_;
  Reset();
  return Result::kCommand;
}

}  // namespace gigakv::protocol
