// The manifest of an append-only directory, in Redis 7's multi-part format, so that gigakv and
// Redis read each other's manifests: one line per file, the base first, then history files
// (old bases and logs a rewrite replaced, kept until deleted), then the incremental logs in the
// order they are replayed.
//
//   manifest := line+
//   line     := "file" SP name SP "seq" SP seq SP "type" SP type ("SP" key SP value)* LF
//             | "#" anything LF                       -- a comment, skipped
//   name     := a bare file name (no '/'), quoted as sdscatrepr quotes when it needs it
//   seq      := decimal, > 0; incremental logs' seqs strictly increase
//   type     := "b" (base) | "h" (history) | "i" (incremental)
//
// Files are named <appendfilename>.<seq>.base.rdb for bases (an RDB file) and
// <appendfilename>.<seq>.incr.gkv for gigakv's logs (log_format.h); a Redis directory's
// <appendfilename>.<seq>.incr.aof files hold RESP and are read as such (told apart by content).
// The manifest itself is <appendfilename>.manifest, replaced atomically through
// temp-<appendfilename>.manifest.
//
// Pure functions of text: no I/O, thread-safe. Errors carry Redis's texts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gigakv::persistence::log {

struct ManifestFile {
  std::string name;
  int64_t seq = 0;
  char type = 'i';  // 'b', 'h' or 'i'.

  bool operator==(const ManifestFile&) const = default;
};

struct Manifest {
  std::optional<ManifestFile> base;
  std::vector<ManifestFile> history;
  std::vector<ManifestFile> incrs;
  // The highest sequence numbers used, for the next names.
  int64_t base_seq = 0;
  int64_t incr_seq = 0;

  bool operator==(const Manifest&) const = default;
};

// Parses a manifest. Errors (InvalidArgument) as Redis words them: "Found an empty AOF
// manifest", "The AOF manifest file contains too long line", "Invalid AOF manifest file format",
// "File can't be a path, just a filename", "Found duplicate base file information", "Found a
// non-monotonic sequence number", "Unknown AOF file type"; prefixed with the line number.
absl::StatusOr<Manifest> ParseManifest(std::string_view text);
std::string FormatManifest(const Manifest& manifest);

std::string ManifestName(std::string_view appendfilename);
std::string TempManifestName(std::string_view appendfilename);
// Adds a new base (the previous one becomes history) / a new incremental log; returns its name.
std::string AddBase(Manifest* manifest, std::string_view appendfilename);
std::string AddIncr(Manifest* manifest, std::string_view appendfilename);
// Moves every incremental log to history (a rewrite's new base covers them).
void RetireIncrs(Manifest* manifest);

}  // namespace gigakv::persistence::log
