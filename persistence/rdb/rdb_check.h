// gigakv-check-rdb's engine: walks one RDB file with LoadRdb (rdb_file.h), without a store, and
// reports what is in it (version, AUX fields, keys per database and type, expiries, checksum) or
// the first problem (its byte offset and reason), in the style of Redis's redis-check-rdb.
//
// Contract:
//   - Every value is decoded and validated exactly as the server's loader does (deep checks of
//     compact structures, duplicate members, NaN scores, ...), then thrown away: memory stays at
//     about one value, whatever the file's size.
//   - Nothing is dropped: keys whose expiry is before options.now_ms are counted (per database,
//     as "already expired") rather than skipped; empty collections, which loaders skip as Redis
//     does, are counted as empty keys and not in the per-type counts.
//   - Any database number is accepted (redis-check-rdb has no limit either); a server refuses a
//     file that selects a database at or past its `databases`, so the report names the highest.
//   - Function libraries (FUNCTION2) are counted, not checked (gigakv has no functions, and
//     gigakv-server refuses such files). Streams, modules and the pre-7.0 FUNCTION format are
//     errors, as LoadRdb reports them: gigakv can load none of them.
//   - Not checked: duplicate keys across the file (the server refuses them; remembering every key
//     would take memory in proportion to the file, and redis-check-rdb does not check them
//     either).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gigakv/key_table.h"
#include "persistence/rdb/rdb_io.h"

namespace gigakv::persistence::rdb {

struct RdbCheckOptions {
  int64_t now_ms = 0;       // Unix ms: keys that expire before it are "already expired".
  CollectionLimits limits;  // Only decide the encodings values are decoded into.
};

// The keys of one database. Each non-empty key counts in exactly one of the type counts.
struct RdbCheckDb {
  uint64_t strings = 0;
  uint64_t lists = 0;
  uint64_t sets = 0;
  uint64_t zsets = 0;
  uint64_t hashes = 0;
  uint64_t streams = 0;
  uint64_t expires = 0;              // Non-empty keys with an expiry.
  uint64_t already_expired = 0;      // Of which those whose expiry is before now_ms.
  uint64_t empty_keys = 0;           // Empty collections (not in the type counts).
  uint64_t selects = 0;              // SELECTDB items naming this database.
  uint64_t first_select_offset = 0;  // Offset right after its first SELECTDB (0: none).

  uint64_t keys() const { return strings + lists + sets + zsets + hashes + streams; }
};

struct RdbCheckAux {
  uint64_t offset = 0;  // Right after the field, as redis-check-rdb reports it.
  std::string key;
  std::string value;
};

struct RdbCheckReport {
  // Ok, or the first problem (LoadRdb's status: its message names the offset and the reason).
  absl::Status status;
  int version = 0;  // 0 when the header could not be read.
  std::vector<RdbCheckAux> aux;
  std::map<int, RdbCheckDb> dbs;  // Databases holding keys or selected, in order.
  uint64_t function_libraries = 0;
  bool checksum_verified = false;  // As RdbLoadResult::checksum_verified.
  uint64_t bytes = 0;              // The RDB's size (success), or the offset reached (failure).

  // Totals over dbs.
  uint64_t keys() const;  // Non-empty keys.
  uint64_t expires() const;
  uint64_t already_expired() const;
  uint64_t empty_keys() const;
};

// Reads the whole RDB from `reader` (header through checksum trailer; bytes after the trailer,
// such as an AOF's commands after its RDB preamble, are not read). Never fails in another way
// than through report.status; the report holds what was read up to the problem.
RdbCheckReport CheckRdb(RdbReader& reader, const RdbCheckOptions& options);

// redis-check-rdb's text for `report` of the file named `path`, lines ending in '\n':
//   [offset 0] Checking RDB file <path>
//   [offset 9] RDB version <v>
//   [offset N] AUX FIELD <key> = '<value>'          (each, in file order)
//   [offset N] Selecting DB ID <db>                 (first selection of each database)
// then on success:
//   [offset N] Checksum OK                          (or that it was disabled / absent)
//   [offset N] \o/ RDB looks OK! \o/
//   [info] DB <db>: <k> keys (string a, list b, set c, zset d, hash e), <x> expires,
//          <y> already expired[, <z> empty keys skipped]   (one line per database)
//   [info] <n> keys read / <x> expires / <y> already expired / <z> empty keys skipped
// or on failure:
//   --- RDB ERROR DETECTED ---
//   [offset N] <reason>                             (which names the key, for a key's value)
//   [info] <n> keys read / <x> expires / <y> already expired
// Keys read count every key the walk completed, empty ones included. Non-printable bytes in
// AUX fields and keys are escaped (C style).
std::string FormatRdbCheckReport(const RdbCheckReport& report, std::string_view path);

// Splits a LoadRdb error message "<reason> at offset <n>[ (key ...)]" (also ", at offset <n>")
// into its last offset and the message without it. False when the message names no offset.
bool SplitErrorOffset(std::string_view message, uint64_t* offset, std::string* reason);

}  // namespace gigakv::persistence::rdb
