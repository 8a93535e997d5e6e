// libFuzzer target for the RDB reader (persistence/rdb/): whole files through LoadRdb, single
// values through ReadValue, and DUMP payloads through VerifyDumpPayload. See docs/fuzzing.md.
//
// Input layout:
//   "REDIS..."  a whole RDB file, loaded with the default options (so any .rdb file is a seed)
//   otherwise   byte 0 flags, the rest the data:
//                 bit0      0: the data is a file; 1: the data is a type byte and a value
//                 bits1-2   the chunked source's read size: 1, 3, 64 or 4096 bytes
//                 bit3      small collection limits (conversions on load: intset -> hashtable,
//                           listpack -> hashtable/skiplist, lists of 2-entry nodes)
//                 bit4      drop_expired, with now_ms = 10^12
//                 bit5      max_string_length = 100
//
// What is checked (any violation calls abort(), which libFuzzer reports as a crash):
// - The same bytes from memory and from a source of small reads give the same outcome: the same
//   keys (name, db, expiry, kind, type, contents), the same counts, the same error text.
// - A load stops at the trailer: RdbLoadResult::bytes <= size, and TakeBuffered() plus what the
//   source did not hand out is exactly the input after the RDB.
// - Every error is DataLoss or Unimplemented (ResourceExhausted would mean an allocation the
//   input's size did not justify) and names an offset.
// - Every value that loads re-encodes (WriteValue) and decodes to the same contents.
// - VerifyDumpPayload accepts the data with a correct footer appended, and returns the data.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "gigakv/strings.h"
#include "persistence/rdb/rdb_file.h"
#include "persistence/rdb/rdb_format.h"
#include "persistence/rdb/rdb_io.h"
#include "persistence/rdb/rdb_values.h"
#include "tests/unit/rdb_test_util.h"

namespace gigakv::persistence::rdb {
namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "rdb_reader_fuzzer: invariant violated: %s %s\n", what, detail.c_str());
  std::abort();
}

#define FUZZ_CHECK(cond, ...)                                    \
  do {                                                           \
    if (!(cond)) Fail("(" #cond ")" __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

struct Options {
  RdbLoadOptions load;
  size_t chunk = 7;
};

// A reader over `data` that hands out at most `chunk` bytes per read; `*position` is how far the
// source got.
RdbReader ChunkedReader(std::string_view data, size_t chunk, size_t* position) {
  return RdbReader([data, chunk, position](char* buffer, size_t capacity) -> size_t {
    const size_t n = std::min({capacity, chunk, data.size() - *position});
    std::memcpy(buffer, data.data() + *position, n);
    *position += n;
    return n;
  });
}

void CheckError(const absl::Status& status) {
  FUZZ_CHECK(absl::IsDataLoss(status) || absl::IsUnimplemented(status), status.ToString());
  FUZZ_CHECK(FromAbsl(status.message()).find("offset") != std::string_view::npos,
             status.ToString());
}

// The value's contents, after checking that it survives a write and a read.
std::string DigestValue(const LoadedValue& value, const CollectionLimits& limits) {
  if (value.kind == LoadedValue::Kind::kEmpty)
    return StrCat("empty ", static_cast<int>(value.type));
  const RecordView record = value.kind == LoadedValue::Kind::kString
                                ? testing::BytesRecord(ValueKind::kStringRaw, value.string)
                                : testing::ObjectRecord(value.object.get());
  std::string digest;
  if (value.kind == LoadedValue::Kind::kString) {
    digest = StrCat("string ", value.string.size(), ":", value.string);
  } else {
    FUZZ_CHECK(value.object != nullptr);
    FUZZ_CHECK(value.object->type() == value.type);
    FUZZ_CHECK(value.object->Length() > 0);
    digest = StrCat("object ", static_cast<int>(value.type));
    for (const std::string& e : testing::Contents(*value.object)) {
      digest += StrCat(" ", e.size(), ":", e);
    }
  }
  for (bool compress : {false, true}) {
    const std::string encoded = testing::EncodeValue(record, compress);
    absl::StatusOr<LoadedValue> again = testing::DecodeValue(encoded, limits);
    FUZZ_CHECK(again.ok(), again.status().ToString());
    FUZZ_CHECK(again->kind == value.kind);
    if (value.kind == LoadedValue::Kind::kString) {
      FUZZ_CHECK(again->string == value.string);
    } else {
      FUZZ_CHECK(testing::Contents(*again->object) == testing::Contents(*value.object),
                 "contents changed in a round trip");
    }
  }
  return digest;
}

struct FileOutcome {
  absl::Status status;
  RdbLoadResult result;
  std::vector<std::string> keys;
};

FileOutcome LoadFile(RdbReader& reader, const RdbLoadOptions& options) {
  FileOutcome outcome;
  RdbLoadHandler handler;
  handler.on_key = [&](RdbKey& key) {
    outcome.keys.push_back(StrCat(key.db, " ", key.key.size(), ":", key.key, " ",
                                  key.expire_ms.has_value() ? StrCat(*key.expire_ms) : "-", " ",
                                  DigestValue(key.value, options.limits)));
    if (options.drop_expired && key.value.kind != LoadedValue::Kind::kEmpty) {
      FUZZ_CHECK(!key.expire_ms.has_value() || *key.expire_ms >= options.now_ms);
    }
    return absl::OkStatus();
  };
  handler.on_aux = [&](std::string_view key, std::string_view value) {
    outcome.keys.push_back(StrCat("aux ", key.size(), ":", key, " ", value));
    return absl::OkStatus();
  };
  handler.on_function = [&](std::string_view code) {
    outcome.keys.push_back(StrCat("function ", code));
    return absl::OkStatus();
  };
  absl::StatusOr<RdbLoadResult> result = LoadRdb(reader, options, handler);
  outcome.status = result.status();
  if (result.ok()) outcome.result = *result;
  return outcome;
}

void FuzzFile(std::string_view data, const Options& options) {
  RdbReader memory(data);
  const FileOutcome whole = LoadFile(memory, options.load);
  size_t position = 0;
  RdbReader chunked = ChunkedReader(data, options.chunk, &position);
  const FileOutcome pieces = LoadFile(chunked, options.load);

  FUZZ_CHECK(whole.status == pieces.status,
             whole.status.ToString() + " vs " + pieces.status.ToString());
  FUZZ_CHECK(whole.keys == pieces.keys);
  if (!whole.status.ok()) {
    CheckError(whole.status);
    return;
  }
  const RdbLoadResult& a = whole.result;
  const RdbLoadResult& b = pieces.result;
  FUZZ_CHECK(a.version == b.version && a.keys == b.keys && a.empty_keys == b.empty_keys &&
             a.expired_keys == b.expired_keys && a.bytes == b.bytes);
  FUZZ_CHECK(a.bytes <= data.size());
  FUZZ_CHECK(a.keys >= a.empty_keys);
  FUZZ_CHECK(memory.TakeBuffered() == data.substr(a.bytes));
  FUZZ_CHECK(chunked.TakeBuffered() + std::string(data.substr(position)) == data.substr(b.bytes));
}

void FuzzValue(std::string_view data, const Options& options) {
  // DUMP's footer check, on the data as it is and with a correct footer.
  std::string_view value_bytes;
  (void)VerifyDumpPayload(data, &value_bytes);
  std::string payload(data);
  payload.push_back(static_cast<char>(kRdbVersion));
  payload.push_back('\0');
  const uint64_t crc = Crc64(0, payload);
  for (int i = 0; i < 8; ++i) payload.push_back(static_cast<char>(crc >> (8 * i)));
  FUZZ_CHECK(VerifyDumpPayload(payload, &value_bytes).ok());
  FUZZ_CHECK(value_bytes == data);
  if (data.empty()) return;

  const uint8_t type = static_cast<uint8_t>(data[0]);
  const std::string_view body = data.substr(1);
  const CollectionLimits& limits = options.load.limits;
  const uint64_t cap = options.load.max_string_length;
  RdbReader memory(body);
  absl::StatusOr<LoadedValue> whole = ReadValue(memory, type, limits, cap);
  size_t position = 0;
  RdbReader chunked = ChunkedReader(body, options.chunk, &position);
  absl::StatusOr<LoadedValue> pieces = ReadValue(chunked, type, limits, cap);
  FUZZ_CHECK(whole.status() == pieces.status(),
             whole.status().ToString() + " vs " + pieces.status().ToString());
  if (!whole.ok()) {
    CheckError(whole.status());
    return;
  }
  FUZZ_CHECK(memory.offset() == chunked.offset());
  FUZZ_CHECK(memory.offset() <= body.size());
  FUZZ_CHECK(DigestValue(*whole, limits) == DigestValue(*pieces, limits));
}

}  // namespace
}  // namespace gigakv::persistence::rdb

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gigakv::persistence::rdb;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  Options options;
  if (input.substr(0, kMagicSize) == std::string_view(kMagic, kMagicSize)) {
    FuzzFile(input, options);
    return 0;
  }
  if (input.empty()) return 0;
  const uint8_t flags = data[0];
  constexpr size_t kChunks[] = {1, 3, 64, 4096};
  options.chunk = kChunks[(flags >> 1) & 3];
  if (flags & 8) {
    options.load.limits.set_max_intset_entries = 2;
    options.load.limits.set_max_listpack_entries = 2;
    options.load.limits.hash_max_listpack_entries = 2;
    options.load.limits.hash_max_listpack_value = 4;
    options.load.limits.zset_max_listpack_entries = 2;
    options.load.limits.zset_max_listpack_value = 4;
    options.load.limits.list_max_listpack_size = 2;
  }
  if (flags & 16) {
    options.load.drop_expired = true;
    options.load.now_ms = 1000000000000;
  }
  if (flags & 32) options.load.max_string_length = 100;
  if (flags & 1) {
    FuzzValue(input.substr(1), options);
  } else {
    FuzzFile(input.substr(1), options);
  }
  return 0;
}
