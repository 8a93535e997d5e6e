#include "protocol/reply_builder.h"

#include "protocol/wire_numbers.h"

namespace gigakv::protocol {

void ReplyBuilder::AppendHeader(char type, int64_t value) {
  // Built on the stack and appended at once: one capacity check instead of three.
  char buf[1 + kMaxDecimalChars + 2];
  char* end = buf + sizeof(buf);
  end[-2] = '\r';
  end[-1] = '\n';
  char* start = WriteDecimalBackward(end - 2, value);
  *--start = type;
  buffer_.append(start, static_cast<size_t>(end - start));
}

void ReplyBuilder::SimpleString(std::string_view text) {
  buffer_.push_back('+');
  buffer_.append(text);
  buffer_.append("\r\n");
}

void ReplyBuilder::Error(std::string_view text) {
  ++errors_sent_;
  size_t space = text.find(' ');
  last_error_code_.assign(text.substr(0, space == std::string_view::npos ? text.size() : space));
  buffer_.push_back('-');
  size_t start = buffer_.size();
  buffer_.append(text);
  for (size_t i = start; i < buffer_.size(); ++i) {
    if (buffer_[i] == '\r' || buffer_[i] == '\n') buffer_[i] = ' ';
  }
  buffer_.append("\r\n");
}

void ReplyBuilder::Integer(int64_t value) { AppendHeader(':', value); }

void ReplyBuilder::IntegerText(std::string_view digits) {
  buffer_.push_back(':');
  buffer_.append(digits);
  buffer_.append("\r\n");
}

void ReplyBuilder::Bulk(std::string_view data) {
  AppendHeader('$', static_cast<int64_t>(data.size()));
  buffer_.append(data);
  buffer_.append("\r\n");
}

void ReplyBuilder::Null() { buffer_.append(resp_version_ >= 3 ? "_\r\n" : "$-1\r\n"); }

void ReplyBuilder::NullArray() { buffer_.append(resp_version_ >= 3 ? "_\r\n" : "*-1\r\n"); }

void ReplyBuilder::ArrayHeader(int64_t count) { AppendHeader('*', count); }

void ReplyBuilder::MapHeader(int64_t pairs) {
  if (resp_version_ >= 3) {
    AppendHeader('%', pairs);
  } else {
    AppendHeader('*', pairs * 2);
  }
}

void ReplyBuilder::PairArrayHeader(int64_t pairs) {
  AppendHeader('*', resp_version_ >= 3 ? pairs : pairs * 2);
}

void ReplyBuilder::PairHeader() {
  if (resp_version_ >= 3) buffer_.append("*2\r\n");
}

void ReplyBuilder::KeyedPairsHeader(int64_t pairs) {
  AppendHeader(resp_version_ >= 3 ? '%' : '*', pairs);
}

void ReplyBuilder::KeyedPairHeader() {
  if (resp_version_ < 3) buffer_.append("*2\r\n");
}

void ReplyBuilder::SetHeader(int64_t count) { AppendHeader(resp_version_ >= 3 ? '~' : '*', count); }

void ReplyBuilder::PushHeader(int64_t count) {
  AppendHeader(resp_version_ >= 3 ? '>' : '*', count);
}

void ReplyBuilder::Double(double value) { DoubleText(DoubleReplyText(value)); }

// RESP3 types that RESP2 sends as a bulk string: `marker`, the text, CRLF.
void ReplyBuilder::TextOrBulk(char marker, std::string_view text) {
  if (resp_version_ >= 3) {
    buffer_.push_back(marker);
    buffer_.append(text);
    buffer_.append("\r\n");
  } else {
    Bulk(text);
  }
}

void ReplyBuilder::DoubleText(std::string_view text) { TextOrBulk(',', text); }

void ReplyBuilder::Bool(bool value) {
  if (resp_version_ >= 3) {
    buffer_.append(value ? "#t\r\n" : "#f\r\n");
  } else {
    buffer_.append(value ? ":1\r\n" : ":0\r\n");
  }
}

void ReplyBuilder::Verbatim(std::string_view format, std::string_view text) {
  if (resp_version_ >= 3) {
    AppendHeader('=', static_cast<int64_t>(text.size() + 4));
    buffer_.append(format.substr(0, 3));
    buffer_.push_back(':');
    buffer_.append(text);
    buffer_.append("\r\n");
  } else {
    Bulk(text);
  }
}

void ReplyBuilder::BigNumber(std::string_view digits) { TextOrBulk('(', digits); }

}  // namespace gigakv::protocol
