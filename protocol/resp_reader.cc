#include "protocol/resp_reader.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "protocol/wire_numbers.h"

namespace gigakv::protocol {
namespace {

constexpr int kMaxDepth = 128;

// Returns bytes used, 0 if incomplete, -1 if malformed.
int64_t ParseAt(std::string_view in, RespValue* out, int depth) {
  if (depth > kMaxDepth) return -1;
  if (in.size() < 3) return 0;
  const void* cr = std::memchr(in.data(), '\r', in.size());
  if (cr == nullptr) return 0;
  size_t line_end = static_cast<const char*>(cr) - in.data();
  if (line_end + 1 >= in.size()) return 0;
  std::string_view line = in.substr(1, line_end - 1);
  size_t header = line_end + 2;
  char type = in[0];
  auto parse_count = [&](int64_t* n) { return ParseRespInteger(line, n); };
  switch (type) {
    case '+':
      out->type = RespValue::Type::kSimpleString;
      out->str.assign(line);
      return static_cast<int64_t>(header);
    case '-':
      out->type = RespValue::Type::kError;
      out->str.assign(line);
      return static_cast<int64_t>(header);
    case ':':
      out->type = RespValue::Type::kInteger;
      if (!parse_count(&out->integer)) return -1;
      return static_cast<int64_t>(header);
    case '_':
      out->type = RespValue::Type::kNull;
      return static_cast<int64_t>(header);
    case ',':
      out->type = RespValue::Type::kDouble;
      out->str.assign(line);
      return static_cast<int64_t>(header);
    case '(':
      out->type = RespValue::Type::kBigNumber;
      out->str.assign(line);
      return static_cast<int64_t>(header);
    case '#':
      out->type = RespValue::Type::kBool;
      if (line != "t" && line != "f") return -1;
      out->integer = line == "t" ? 1 : 0;
      return static_cast<int64_t>(header);
    case '$':
    case '=':
    case '!': {
      int64_t len;
      if (!parse_count(&len)) return -1;
      if (len < 0) {
        out->type = RespValue::Type::kNull;
        return static_cast<int64_t>(header);
      }
      if (in.size() < header + static_cast<size_t>(len) + 2) return 0;
      out->type = type == '$'   ? RespValue::Type::kBulk
                  : type == '=' ? RespValue::Type::kVerbatim
                                : RespValue::Type::kError;
      out->str.assign(in.substr(header, static_cast<size_t>(len)));
      return static_cast<int64_t>(header + static_cast<size_t>(len) + 2);
    }
    case '*':
    case '%':
    case '~':
    case '>':
    case '|': {
      int64_t count;
      if (!parse_count(&count)) return -1;
      if (count < 0) {
        out->type = RespValue::Type::kNull;
        return static_cast<int64_t>(header);
      }
      out->type = type == '*'   ? RespValue::Type::kArray
                  : type == '%' ? RespValue::Type::kMap
                  : type == '~' ? RespValue::Type::kSet
                  : type == '>' ? RespValue::Type::kPush
                                : RespValue::Type::kAttribute;
      // Maps and attributes hold 2*count values; a count that large can never be satisfied.
      if ((type == '%' || type == '|') && count > INT64_MAX / 2) return -1;
      int64_t items = (type == '%' || type == '|') ? count * 2 : count;
      out->elements.clear();
      size_t pos = header;
      for (int64_t i = 0; i < items; ++i) {
        RespValue child;
        int64_t used = ParseAt(in.substr(pos), &child, depth + 1);
        if (used <= 0) return used;
        pos += static_cast<size_t>(used);
        out->elements.push_back(std::move(child));
      }
      if (type == '|') {
        // An attribute precedes the real reply; return the reply and drop the attribute.
        RespValue real;
        int64_t used = ParseAt(in.substr(pos), &real, depth + 1);
        if (used <= 0) return used;
        *out = std::move(real);
        pos += static_cast<size_t>(used);
      }
      return static_cast<int64_t>(pos);
    }
    default:
      return -1;
  }
}

}  // namespace

int64_t ParseReply(std::string_view input, RespValue* out) { return ParseAt(input, out, 0); }

std::string RespValue::DebugString() const {
  switch (type) {
    case Type::kSimpleString:
      return absl::StrCat("+", str);
    case Type::kError:
      return absl::StrCat("-", str);
    case Type::kInteger:
      return absl::StrCat(":", integer);
    case Type::kBulk:
      return absl::StrCat("\"", str, "\"");
    case Type::kNull:
      return "(nil)";
    case Type::kDouble:
      return absl::StrCat(",", str);
    case Type::kBool:
      return integer ? "#t" : "#f";
    case Type::kVerbatim:
      return absl::StrCat("=", str);
    case Type::kBigNumber:
      return absl::StrCat("(", str);
    default:
      break;
  }
  const char* open = type == Type::kMap    ? "%{"
                     : type == Type::kSet  ? "~{"
                     : type == Type::kPush ? ">["
                                           : "[";
  std::string text = open;
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) absl::StrAppend(&text, ", ");
    absl::StrAppend(&text, elements[i].DebugString());
  }
  absl::StrAppend(&text, type == Type::kMap || type == Type::kSet ? "}" : "]");
  return text;
}

}  // namespace gigakv::protocol
