#include "persistence/log/manifest.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gigakv/strings.h"
#include "protocol/request_parser.h"

namespace gigakv::persistence::log {

namespace {

constexpr size_t kMaxLine = 1024;  // Redis's MANIFEST_MAX_LINE.

// sdsneedsrepr: a name with blanks, quotes, backslashes or unprintable bytes is quoted.
bool NeedsRepr(std::string_view name) {
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"' || c == '\n' || c == '\r' || c == '\t' || c == '\a' || c == '\b' ||
        !std::isprint(u) || std::isspace(u)) {
      return true;
    }
  }
  return false;
}

// sdscatrepr.
std::string Repr(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      default:
        if (std::isprint(static_cast<unsigned char>(c))) {
          out.push_back(c);
        } else {
          char hex[8];
          std::snprintf(hex, sizeof(hex), "\\x%02x", static_cast<unsigned char>(c));
          out += hex;
        }
    }
  }
  out.push_back('"');
  return out;
}

absl::Status LineError(int line_number, std::string_view line, std::string_view error) {
  return absl::InvalidArgumentError(
      StrCat("Reading the manifest file, at line ", line_number, ": '", line, "': ", error));
}

void AppendLine(const ManifestFile& file, std::string* out) {
  StrAppend(out, "file ", NeedsRepr(file.name) ? Repr(file.name) : file.name, " seq ", file.seq,
            " type ", std::string_view(&file.type, 1), "\n");
}

}  // namespace

absl::StatusOr<Manifest> ParseManifest(std::string_view text) {
  Manifest manifest;
  if (text.empty()) return absl::InvalidArgumentError("Found an empty AOF manifest");
  int line_number = 0;
  int64_t max_incr_seq = 0;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view raw = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++line_number;
    if (!raw.empty() && raw[0] == '#') continue;
    if (raw.size() > kMaxLine - 1 || newline == std::string_view::npos) {
      // Redis reads lines of at most 1024 bytes and wants each to end in a newline.
      return LineError(line_number, raw, "The AOF manifest file contains too long line");
    }
    std::string_view line = raw;  // sdstrim(" \t\r\n").
    while (!line.empty() && std::strchr(" \t\r\n", line.front()) != nullptr) line.remove_prefix(1);
    while (!line.empty() && std::strchr(" \t\r\n", line.back()) != nullptr) line.remove_suffix(1);
    if (line.empty()) return LineError(line_number, line, "Invalid AOF manifest file format");
    std::vector<std::string> args;
    if (!protocol::SplitInlineArgs(line, &args) || args.size() < 6 || args.size() % 2 != 0) {
      return LineError(line_number, line, "Invalid AOF manifest file format");
    }
    ManifestFile file;
    file.type = '\0';
    for (size_t i = 0; i < args.size(); i += 2) {
      if (EqualsIgnoreCase(args[i], "file")) {
        file.name = args[i + 1];
        if (file.name.find('/') != std::string::npos) {
          return LineError(line_number, line, "File can't be a path, just a filename");
        }
      } else if (EqualsIgnoreCase(args[i], "seq")) {
        file.seq = std::atoll(args[i + 1].c_str());
      } else if (EqualsIgnoreCase(args[i], "type")) {
        file.type = args[i + 1].empty() ? '\0' : args[i + 1][0];
      }
    }
    if (file.name.empty() || file.seq == 0 || file.type == '\0') {
      return LineError(line_number, line, "Invalid AOF manifest file format");
    }
    switch (file.type) {
      case 'b':
        if (manifest.base) {
          return LineError(line_number, line, "Found duplicate base file information");
        }
        manifest.base_seq = file.seq;
        manifest.base = std::move(file);
        break;
      case 'h':
        manifest.history.push_back(std::move(file));
        break;
      case 'i':
        if (file.seq <= max_incr_seq) {
          return LineError(line_number, line, "Found a non-monotonic sequence number");
        }
        max_incr_seq = manifest.incr_seq = file.seq;
        manifest.incrs.push_back(std::move(file));
        break;
      default:
        return LineError(line_number, line, "Unknown AOF file type");
    }
  }
  if (line_number == 0) return absl::InvalidArgumentError("Found an empty AOF manifest");
  return manifest;
}

std::string FormatManifest(const Manifest& manifest) {
  std::string out;
  if (manifest.base) AppendLine(*manifest.base, &out);
  for (const ManifestFile& file : manifest.history) AppendLine(file, &out);
  for (const ManifestFile& file : manifest.incrs) AppendLine(file, &out);
  return out;
}

std::string ManifestName(std::string_view appendfilename) {
  return StrCat(appendfilename, ".manifest");
}

std::string TempManifestName(std::string_view appendfilename) {
  return StrCat("temp-", appendfilename, ".manifest");
}

std::string AddBase(Manifest* manifest, std::string_view appendfilename) {
  if (manifest->base) {
    manifest->base->type = 'h';
    manifest->history.insert(manifest->history.begin(), *std::move(manifest->base));
  }
  ManifestFile file;
  file.seq = ++manifest->base_seq;
  file.type = 'b';
  file.name = StrCat(appendfilename, ".", file.seq, ".base.rdb");
  manifest->base = file;
  return file.name;
}

std::string AddIncr(Manifest* manifest, std::string_view appendfilename) {
  ManifestFile file;
  file.seq = ++manifest->incr_seq;
  file.type = 'i';
  file.name = StrCat(appendfilename, ".", file.seq, ".incr.gkv");
  manifest->incrs.push_back(file);
  return file.name;
}

void RetireIncrs(Manifest* manifest) {
  for (ManifestFile& file : manifest->incrs) {
    file.type = 'h';
    manifest->history.push_back(std::move(file));
  }
  manifest->incrs.clear();
}

}  // namespace gigakv::persistence::log
