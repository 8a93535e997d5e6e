// The values of Redis's RDB format (version 10, Redis 7.0): what follows a key's type byte, for
// every type Redis 7.0 writes or reads. gigakv writes only the types Redis 7.0 writes; it reads
// every type Redis 7.0 reads except streams and modules. Strings inside values are RDB strings
// (rdb_format.h); "blob" below is one RDB string holding the named structure's bytes.
//
//   type                     value
//   0  STRING                string
//   1  LIST                  count:length string{count}          (read only; Redis < 3.2)
//   2  SET                   count:length member:string{count}
//   3  ZSET                  count:length (member:string score:text_double){count}  (read only)
//   4  HASH                  count:length (field:string value:string){count}
//   5  ZSET_2                count:length (member:string score:binary_double){count}, written
//                            from the highest (score, member) to the lowest, as Redis does
//   9  HASH_ZIPMAP           blob: zipmap                        (read only; redis_legacy.h)
//   10 LIST_ZIPLIST          blob: ziplist of the elements       (read only)
//   11 SET_INTSET            blob: intset                        (redis_legacy.h)
//   12 ZSET_ZIPLIST          blob: ziplist of member, score, ... (read only)
//   13 HASH_ZIPLIST          blob: ziplist of field, value, ...  (read only)
//   14 LIST_QUICKLIST        nodes:length blob{nodes}, each a ziplist (read only)
//   16 HASH_LISTPACK         blob: Redis listpack (redis_listpack.h) of field, value, ...
//   17 ZSET_LISTPACK         blob: Redis listpack of member, score, ... in ascending order; a
//                            score is an integer entry when the double is integral with
//                            |score| <= 2^62 (Redis's double2ll), else the text of "%.17g"
//                            ("inf", "-inf", "1.5", "0.10000000000000001")
//   18 LIST_QUICKLIST_2      nodes:length (container:length blob){nodes}; container 2 (packed):
//                            a Redis listpack of the node's elements; container 1 (plain): one
//                            element's bytes, for elements of at least the writer's
//                            plain_node_threshold (quicklist-packed-threshold, 1 GiB)
//   6, 7 (modules), 15, 19 (streams): refused.
//
// Which type gigakv writes: strings STRING; hashes HASH_LISTPACK while compact (an inline record
// or a listpack Hash) else HASH; sets SET_INTSET while an intset, else SET (gigakv's listpack sets,
// which Redis 7.0 does not have, included); sorted sets ZSET_LISTPACK while compact, else ZSET_2;
// lists LIST_QUICKLIST_2 with one packed node per gigakv node.
//
// Loading converts to the encoding gigakv chooses under the given CollectionLimits, as Redis
// converts on load, and validates as Redis's rdbLoadObject does with deep sanitization: every
// compact structure is checked entry by entry, duplicate set members, hash fields and sorted set
// members are errors, a NaN score is an error, a pair structure must hold an even number of
// entries. An empty collection (count 0, or compact bytes without entries where Redis allows
// that) is not an error: it comes back as LoadedValue::Kind::kEmpty, so the loader can skip the
// key as Redis does ("skipping empty key"). Lengths read from the input are never used to
// allocate beyond what the input turned out to hold (collections grow as elements arrive).
//
// Writing streams: WriteValueBody calls writer.MaybeFlush() between elements, so a large
// collection passes to the sink in pieces of about the writer's flush size rather than being
// built whole in memory (a compact structure, written as one string, is built whole).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gigakv/key_table.h"
#include "gigakv/object.h"
#include "persistence/rdb/rdb_io.h"

namespace gigakv::persistence::rdb {

// The RDB type WriteValue uses for `record`.
uint8_t RdbTypeOf(const RecordView& record);

// Writes the type byte (RdbTypeOf) and the value of `record` (any ValueKind). The key, expiry and
// other prefixes are the caller's. Compact encodings are transcoded entry by entry into one
// reusable buffer of the writer (no allocation per element); compressed list nodes are
// decompressed first. Calls writer.MaybeFlush() between elements (a sink error sticks in the
// writer; the caller sees it at its next MaybeFlush or Finish).
void WriteValue(RdbWriter& writer, const RecordView& record);
// Writes only the value (no type byte).
void WriteValueBody(RdbWriter& writer, const RecordView& record);
// DUMP's payload of `record`: WriteValue, the RDB version (2 bytes LE) and the CRC-64 of what
// precedes it (rdb_format.h), what DUMP replies and MIGRATE sends.
std::string EncodeDumpPayload(const RecordView& record, bool compress);

// A value read from an RDB stream.
struct LoadedValue {
  enum class Kind : uint8_t {
    kString,  // `string` holds the bytes (the caller picks int/embstr/raw storage).
    kObject,  // `object` holds a List, Set, ZSet or Hash in the encoding gigakv chose; a compact
              // hash, set or sorted set may be stored inline with InlineFormOf
              // (core/types/inline_value.h).
    kEmpty,   // An empty collection: skip the key.
  };
  Kind kind = Kind::kEmpty;
  KeyType type = KeyType::kString;  // Also set for kEmpty (the collection's type).
  std::string string;
  std::unique_ptr<Object> object;
};

// Reads the value of RDB type `type` (the byte before the key, already consumed with the key).
// Strings (elements, blobs) longer than `max_string_length` are refused; the server passes
// proto-max-bulk-len (Redis 7.0 itself has no such limit on load). Errors are
// absl::DataLossError (absl::UnimplementedError for modules and streams) naming the byte offset
// and the reason, e.g. "Duplicate set members detected at offset 118"; running out of memory
// is absl::ResourceExhaustedError, with the offset.
absl::StatusOr<LoadedValue> ReadValue(RdbReader& reader, uint8_t type,
                                      const CollectionLimits& limits,
                                      uint64_t max_string_length = RdbReader::kNoLimit);

// Whether `type` is a value type ReadValue knows (including the refused ones).
bool IsValueType(uint8_t type);

}  // namespace gigakv::persistence::rdb
