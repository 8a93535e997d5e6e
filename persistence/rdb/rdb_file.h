// Whole RDB files (grammar in rdb_format.h): a streaming loader that walks a file item by item,
// handing each key and AUX field to callbacks, and a writer for a sequence of keys with the AUX
// fields redis-server 7.0 writes. The walk over a store (which keys, in which order, under which
// locks) is the caller's.
//
// What the loader does with each item:
//   header                     on_header with the version (ignored when unset)
//   AUX key value              on_aux (ignored when unset)
//   SELECTDB db                the following keys belong to db; db >= options.databases is an
//                              error, as in Redis; then on_select_db (ignored when unset)
//   RESIZEDB keys expires      on_resize_db (a sizing hint; ignored when unset)
//   EXPIRETIME_MS / EXPIRETIME the next key's expiry (seconds are turned into ms); an
//                              EXPIRETIME_MS of -1 means none, as in Redis (its "no expiry")
//   IDLE seconds / FREQ count  the next key's LRU idle time / LFU counter
//   FUNCTION2 code             on_function (a library's whole code); refused when unset
//                              (dropping a library silently would lose it)
//   FUNCTION (pre-7.0 GA)      refused (Redis 7.0 loads this release-candidate format, which
//                              no released Redis writes), as is MODULE_AUX: the error names
//                              the opcode
//   a value type               the key and value (rdb_values.h), then on_key; an empty
//                              collection arrives as LoadedValue::Kind::kEmpty (Redis skips such
//                              keys, logging "skipping empty key"), and is counted; with
//                              options.drop_expired, a key whose expiry is before
//                              options.now_ms is read, counted and dropped instead
//   EOF                        then the checksum (version >= 5): a wrong CRC is an error, an
//                              all-zero one is accepted (rdbchecksum no) and leaves
//                              RdbLoadResult::checksum_verified false; prefixes read for a
//                              key that never came are ignored, as Redis does
// Any other byte is an error. Errors name the byte offset and the reason; errors in a key's
// value also name the key (escaped, at most 64 bytes of it).
//
// After the trailer: the loader reads no further item, but a reader on a source has usually
// read ahead of the trailer (it asks the source for large pieces). RdbLoadResult::bytes is the
// RDB's size, and reader.TakeBuffered() returns the bytes it read beyond it: a caller that
// continues the stream (the commands of an AOF after its RDB preamble, the replication stream
// after a full sync's RDB) starts with those, then reads the source on.
//
// What is left to the caller:
//   - RESIZEDB counts come from the file: use them as sizing hints only after capping them (a
//     hostile file may claim 2^64 keys).
//   - Duplicate keys across the file (Redis panics on them, "Duplicate key ... found in RDB
//     file") are on_key's to detect: the loader does not remember keys.
//   - Expiry policy (Redis's, which the server follows): a master loading a snapshot drops the
//     keys that expired (drop_expired = true, now_ms = the clock), a replica loading its
//     master's RDB and an AOF's RDB preamble keep them all (the master, or the AOF's later
//     commands, expire them). A kept key may carry an expiry in the past, 0 included.
//   - RESTORE, which reads one value with ReadValue, must refuse an empty value itself (Redis:
//     "Bad data format"), and check the payload first (VerifyDumpPayload).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gigakv/key_table.h"
#include "gigakv/object.h"
#include "persistence/rdb/rdb_io.h"
#include "persistence/rdb/rdb_values.h"

namespace gigakv::persistence::rdb {

// One key as the loader hands it over; the callback may move the value out.
struct RdbKey {
  int db = 0;
  std::string key;
  LoadedValue value;
  std::optional<int64_t> expire_ms;  // Absolute Unix ms, when the key has an expiry.
  std::optional<uint64_t> idle_seconds;
  std::optional<uint8_t> freq;
  uint64_t offset = 0;  // Where the key's first byte (prefix or type) is in the file.
};

struct RdbLoadHandler {
  std::function<absl::Status(RdbKey& key)> on_key;  // Required.
  std::function<absl::Status(int version)> on_header;
  std::function<absl::Status(std::string_view key, std::string_view value)> on_aux;
  std::function<absl::Status(int db)> on_select_db;
  std::function<absl::Status(int db, uint64_t keys, uint64_t expires)> on_resize_db;
  std::function<absl::Status(std::string_view code)> on_function;
};

struct RdbLoadOptions {
  CollectionLimits limits;
  int databases = 16;
  // Strings (keys, AUX fields, elements) longer than this are refused; the server passes
  // proto-max-bulk-len. Redis 7.0 has no such limit on load.
  uint64_t max_string_length = RdbReader::kNoLimit;
  // Keys whose expiry is before now_ms (Unix ms) are dropped rather than handed to on_key (see
  // the caller's duties above for when).
  bool drop_expired = false;
  int64_t now_ms = 0;
};

struct RdbLoadResult {
  int version = 0;
  uint64_t keys = 0;          // Keys handed to on_key, empty ones included.
  uint64_t empty_keys = 0;    // Of which empty collections.
  uint64_t expired_keys = 0;  // Keys dropped as expired (drop_expired), not in `keys`.
  uint64_t bytes = 0;         // Bytes read, through the checksum trailer.
  // The trailer held a CRC and it matched (false: an all-zero trailer, or a version < 5 file,
  // which has none).
  bool checksum_verified = false;
};

// Reads one RDB file from `reader`, from its header through EOF and the checksum. A callback's
// error stops the load and is returned as it is. Running out of memory (std::bad_alloc in the
// loader or a callback) is absl::ResourceExhaustedError naming the offset.
absl::StatusOr<RdbLoadResult> LoadRdb(RdbReader& reader, const RdbLoadOptions& options,
                                      const RdbLoadHandler& handler);

// The AUX fields redis-server 7.0 writes first (rdbSaveInfoAuxFields), in its order.
struct RdbFileInfo {
  std::string redis_ver = "7.0.15";
  int redis_bits = 64;
  int64_t ctime = 0;      // Unix seconds.
  int64_t used_mem = 0;   // Bytes.
  bool aof_base = false;  // A base file of a multi-part AOF.
};

// Writes a file piece by piece: Begin, then for each database SelectDb and its keys, then Finish.
// Flushes between keys (RdbWriter::MaybeFlush); a sink error sticks and is returned by WriteKey
// and Finish.
class RdbFileWriter {
 public:
  explicit RdbFileWriter(RdbWriter* writer) : writer_(writer) {}

  // "REDIS0010", the AUX fields, then `FUNCTION2 code` for each function library, as Redis
  // writes them (before the databases).
  void Begin(const RdbFileInfo& info, const std::vector<std::string>& functions = {});
  // SELECTDB db and RESIZEDB keys expires (the counts are hints for the loader's sizing).
  void SelectDb(int db, uint64_t keys, uint64_t expires);
  // EXPIRETIME_MS (when record.expire_ms != 0), IDLE / FREQ when given, then type, key, value.
  absl::Status WriteKey(const RecordView& record, std::optional<uint64_t> idle_seconds = {},
                        std::optional<uint8_t> freq = {});
  // EOF and the checksum.
  absl::Status Finish() { return writer_->Finish(); }

 private:
  RdbWriter* writer_;
};

struct RdbFileEntry {
  int db = 0;
  RecordView record;
};

// A whole file for `entries`, whose keys of one database must be consecutive: one SELECTDB and
// RESIZEDB (counted from `entries`) per run of a database.
absl::Status WriteRdbFile(RdbWriter& writer, const RdbFileInfo& info,
                          const std::vector<RdbFileEntry>& entries);

}  // namespace gigakv::persistence::rdb
