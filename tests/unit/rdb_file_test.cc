// Whole RDB files (rdb_file.h): the file redis-server 7.0 writes, byte for byte; the snapshot
// files of Redis's own test suite, loaded with the contents Redis asserts; and corrupt files
// (truncated at every byte, flipped bytes, bad checksum, unknown opcodes, refused items).
#include "persistence/rdb/rdb_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/types/hash.h"
#include "core/types/quicklist.h"
#include "core/types/set.h"
#include "core/types/zset.h"
#include "gigakv/strings.h"
#include "persistence/rdb/rdb_format.h"
#include "tests/unit/rdb_test_util.h"

#ifndef GIGAKV_FIXTURES_DIR
#error "GIGAKV_FIXTURES_DIR must be defined"
#endif

namespace gigakv::persistence::rdb {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace ::gigakv::persistence::rdb::testing;
using namespace std::string_literals;
using namespace std::string_view_literals;

// A sink appending the writer's bytes to `*out`.
RdbSink AppendTo(std::string* out) {
  return [out](std::string_view bytes) {
    out->append(bytes);
    return absl::OkStatus();
  };
}

// The team's shared fixtures live beside the project (../shared/fixtures); a clone elsewhere has
// none, and then the fixture tests are skipped, saying so. Where the folder exists, a missing or
// unreadable file fails.
bool FixturesPresent() {
  return std::ifstream(std::string(GIGAKV_FIXTURES_DIR) + "/redis-rdb/README.md").good();
}

class RdbFixturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!FixturesPresent()) {
      GTEST_SKIP() << "no shared fixtures at " << GIGAKV_FIXTURES_DIR
                   << " (configure with -DGIGAKV_FIXTURES_DIR=<shared fixtures>)";
    }
  }
};

std::string ReadFixture(const std::string& name) {
  const std::string path = std::string(GIGAKV_FIXTURES_DIR) + "/redis-rdb/" + name;
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file.good()) << "cannot open " << path
                           << " (configure with -DGIGAKV_FIXTURES_DIR=<shared fixtures>)";
  std::stringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

struct LoadedKey {
  int db = 0;
  LoadedValue::Kind kind = LoadedValue::Kind::kEmpty;
  KeyType type = KeyType::kString;
  std::vector<std::string> contents;  // The string, or Contents() of the collection.
  std::string encoding;
  std::optional<int64_t> expire_ms;
};

struct Loaded {
  absl::Status status;
  RdbLoadResult result;
  std::map<std::string, LoadedKey> keys;
  std::vector<std::string> aux;  // "key=value".
};

// Loads `bytes`, through a source that hands out `chunk` bytes at a time (0: from memory).
Loaded Load(std::string_view bytes, const RdbLoadOptions& options = {}, size_t chunk = 0) {
  Loaded loaded;
  size_t position = 0;
  RdbSource source = [&](char* buffer, size_t capacity) -> absl::StatusOr<size_t> {
    const size_t n = std::min({capacity, chunk, bytes.size() - position});
    std::memcpy(buffer, bytes.data() + position, n);
    position += n;
    return n;
  };
  std::unique_ptr<RdbReader> reader =
      chunk == 0 ? std::make_unique<RdbReader>(bytes) : std::make_unique<RdbReader>(source);
  RdbLoadHandler handler;
  handler.on_key = [&](RdbKey& key) {
    LoadedKey& out = loaded.keys[key.key];
    out.db = key.db;
    out.kind = key.value.kind;
    out.type = key.value.type;
    out.expire_ms = key.expire_ms;
    if (key.value.kind == LoadedValue::Kind::kString) {
      out.contents = {key.value.string};
    } else if (key.value.kind == LoadedValue::Kind::kObject) {
      out.contents = Contents(*key.value.object);
      out.encoding = std::string(key.value.object->encoding_name());
    }
    return absl::OkStatus();
  };
  handler.on_aux = [&](std::string_view key, std::string_view value) {
    loaded.aux.push_back(StrCat(key, "=", value));
    return absl::OkStatus();
  };
  absl::StatusOr<RdbLoadResult> result = LoadRdb(*reader, options, handler);
  loaded.status = result.status();
  if (result.ok()) loaded.result = *result;
  return loaded;
}

// --- redis-server's own file
// ----------------------------------------------------------------------

// On redis-server 7.0.15 (default configuration): FLUSHALL; SET k v; SET e x PXAT 4102444800000;
// SELECT 2; SET z 1; SAVE. The whole dump.rdb.
constexpr char kRedisDump[] =
    "524544495330303130fa0972656469732d76657206372e302e3135fa0a72656469732d62697473c040fa056374"
    "696d65c23115116bfa08757365642d6d656dc2d0191200fa08616f662d62617365c000fe00fb0201fc00d8c32c"
    "bb030000000165017800016b0176fe02fb010000017ac001ff909937a148249498";

std::string RedisDump() {
  std::string hex = kRedisDump;
  hex.erase(std::remove(hex.begin(), hex.end(), ' '), hex.end());
  return Unhex(hex);
}

TEST(RdbFileTest, WritesTheFileRedisWrites) {
  RdbFileInfo info;
  info.ctime = 0x6b111531;
  info.used_mem = 0x1219d0;
  const std::string file = WriteFile(
      {Entry(0, "e", ValueKind::kStringEmbstr, "x", 4102444800000),
       Entry(0, "k", ValueKind::kStringEmbstr, "v"), Entry(2, "z", ValueKind::kStringInt, "1")},
      info);
  EXPECT_EQ(Hex(file), Hex(RedisDump()));
}

TEST(RdbFileTest, LoadsTheFileRedisWrites) {
  Loaded loaded = Load(RedisDump());
  ASSERT_TRUE(loaded.status.ok()) << loaded.status;
  EXPECT_EQ(loaded.result.version, 10);
  EXPECT_EQ(loaded.result.keys, 3u);
  EXPECT_EQ(loaded.result.bytes, RedisDump().size());
  EXPECT_THAT(loaded.aux, ElementsAre("redis-ver=7.0.15", "redis-bits=64", "ctime=1796281649",
                                      "used-mem=1186256", "aof-base=0"));
  EXPECT_THAT(loaded.keys["k"].contents, ElementsAre("v"));
  EXPECT_EQ(loaded.keys["e"].expire_ms, 4102444800000);
  EXPECT_EQ(loaded.keys["z"].db, 2);
  EXPECT_THAT(loaded.keys["z"].contents, ElementsAre("1"));
}

// A file of every type and encoding gigakv writes.
std::string MultiTypeFile(RdbWriter::Options options = {}) {
  static CollectionLimits limits;
  static const std::unique_ptr<Hash> hash = [] {
    auto h = std::make_unique<Hash>();
    h->Set("f", "v", limits);
    h->Set("n", "12", limits);
    return h;
  }();
  static const std::unique_ptr<ZSet> zset = [] {
    auto z = std::make_unique<ZSet>();
    double ignored;
    z->Add("m", 1.5, {}, limits, &ignored);
    z->Add("n", -2, {}, limits, &ignored);
    return z;
  }();
  static const std::unique_ptr<List> list = [] {
    auto l = std::make_unique<List>(-2);
    for (const char* e : {"a", "123", "ccc"}) l->Push(ListEnd::kTail, e);
    return l;
  }();
  static const std::unique_ptr<Set> ints = [] {
    auto s = std::make_unique<Set>();
    for (const char* e : {"5", "-3"}) s->Add(e, limits);
    return s;
  }();
  static const std::unique_ptr<Set> strings = [] {
    auto s = std::make_unique<Set>();
    for (const char* e : {"x", "yy"}) s->Add(e, limits);
    return s;
  }();
  std::vector<RdbFileEntry> entries = {Entry(0, "s", ValueKind::kStringRaw, "string value"),
                                       Entry(0, "i", ValueKind::kStringInt, "-42", 1700000000123)};
  const std::vector<std::pair<std::string, const Object*>> objects = {{"h", hash.get()},
                                                                      {"z", zset.get()},
                                                                      {"l", list.get()},
                                                                      {"si", ints.get()},
                                                                      {"ss", strings.get()}};
  for (const auto& [key, object] : objects) {
    RdbFileEntry entry;
    entry.db = 3;
    entry.record = ObjectRecord(object);
    entry.record.key = key;
    entries.push_back(entry);
  }
  return WriteFile(entries, RdbFileInfo{}, options);
}

TEST(RdbFileTest, MultiTypeRoundTrip) {
  const std::string file = MultiTypeFile();
  for (size_t chunk : {size_t{0}, size_t{1}, size_t{3}, size_t{4096}}) {
    Loaded loaded = Load(file, {}, chunk);
    ASSERT_TRUE(loaded.status.ok()) << loaded.status;
    EXPECT_EQ(loaded.result.keys, 7u);
    EXPECT_EQ(loaded.result.bytes, file.size());
    EXPECT_THAT(loaded.keys["s"].contents, ElementsAre("string value"));
    EXPECT_EQ(loaded.keys["i"].expire_ms, 1700000000123);
    EXPECT_THAT(loaded.keys["i"].contents, ElementsAre("-42"));
    EXPECT_EQ(loaded.keys["h"].db, 3);
    EXPECT_THAT(loaded.keys["h"].contents, ElementsAre("f=v", "n=12"));
    EXPECT_THAT(loaded.keys["z"].contents, ElementsAre("n@-2", "m@1.5"));
    EXPECT_THAT(loaded.keys["l"].contents, ElementsAre("a", "123", "ccc"));
    EXPECT_THAT(loaded.keys["si"].contents, ElementsAre("-3", "5"));
    EXPECT_EQ(loaded.keys["si"].encoding, "intset");
    EXPECT_THAT(loaded.keys["ss"].contents, ElementsAre("x", "yy"));
  }
}

TEST(RdbFileTest, PrefixesIdleAndFreq) {
  std::string out;
  RdbWriter writer(AppendTo(&out), {});
  RdbFileWriter file(&writer);
  file.Begin({});
  file.SelectDb(0, 2, 0);
  RecordView a = BytesRecord(ValueKind::kStringEmbstr, "1x");
  a.key = "a";
  ASSERT_TRUE(file.WriteKey(a, /*idle_seconds=*/1000).ok());
  a.key = "b";
  ASSERT_TRUE(file.WriteKey(a, std::nullopt, /*freq=*/9).ok());
  ASSERT_TRUE(file.Finish().ok());
  RdbReader reader(out);
  std::map<std::string, RdbKey> keys;
  RdbLoadHandler handler;
  handler.on_key = [&](RdbKey& key) {
    keys[key.key] = std::move(key);
    return absl::OkStatus();
  };
  ASSERT_TRUE(LoadRdb(reader, {}, handler).ok());
  EXPECT_EQ(keys["a"].idle_seconds, 1000u);
  EXPECT_FALSE(keys["a"].freq.has_value());
  EXPECT_EQ(keys["b"].freq, 9);
  EXPECT_FALSE(keys["b"].idle_seconds.has_value());
}

// Function libraries go after the AUX fields, as FUNCTION2 (0xF5) and the code as an RDB string,
// before the first database; the loader hands each to on_function in order.
TEST(RdbFileTest, WritesFunctionLibrariesAfterTheAuxFields) {
  std::string out;
  RdbWriter writer(AppendTo(&out), {});
  RdbFileWriter file(&writer);
  file.Begin({}, {"#!lua name=a\nx", "#!lua name=b\ny"});
  file.SelectDb(0, 1, 0);
  RecordView key = BytesRecord(ValueKind::kStringEmbstr, "v");
  key.key = "k";
  ASSERT_TRUE(file.WriteKey(key).ok());
  ASSERT_TRUE(file.Finish().ok());
  const std::string golden =
      "\xf5\x0e#!lua name=a\nx"
      "\xf5\x0e#!lua name=b\ny"
      "\xfe\x00"s;
  const size_t at = out.find(golden);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(out.rfind("aof-base"), out.rfind("\xfa", at) + 2);  // Right after the last AUX.
  RdbReader reader(out);
  std::vector<std::string> codes;
  RdbLoadHandler handler;
  handler.on_key = [](RdbKey&) { return absl::OkStatus(); };
  handler.on_function = [&](std::string_view code) {
    codes.emplace_back(code);
    return absl::OkStatus();
  };
  ASSERT_TRUE(LoadRdb(reader, {}, handler).ok());
  EXPECT_EQ(codes, (std::vector<std::string>{"#!lua name=a\nx", "#!lua name=b\ny"}));
  // A library cut short is an error naming where.
  std::string truncated = out.substr(0, at + 8);
  RdbReader short_reader(truncated);
  EXPECT_THAT(LoadRdb(short_reader, {}, handler).status().message(),
              HasSubstr("unexpected end of input"));
}

TEST(RdbFileTest, ReportsHeaderSelectedDatabasesAndChecksum) {
  const std::string file = RedisDump();
  RdbReader reader(file);
  int version = 0;
  std::vector<std::string> selects;  // "db@offset after the item".
  RdbLoadHandler handler;
  handler.on_key = [](RdbKey&) { return absl::OkStatus(); };
  handler.on_header = [&](int v) {
    version = v;
    return absl::OkStatus();
  };
  handler.on_select_db = [&](int db) {
    selects.push_back(StrCat(db, "@", reader.offset()));
    return absl::OkStatus();
  };
  absl::StatusOr<RdbLoadResult> result = LoadRdb(reader, {}, handler);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(version, 10);
  EXPECT_THAT(selects, ElementsAre("0@82", "2@106"));
  EXPECT_TRUE(result->checksum_verified);

  // rdbchecksum no: an all-zero trailer is accepted, and not a verified one.
  const std::string unchecked = MultiTypeFile({.compress = true, .checksum = false});
  RdbReader unchecked_reader(unchecked);
  result = LoadRdb(unchecked_reader, {}, handler);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->checksum_verified);

  // A callback's error stops the load.
  handler.on_header = [](int) { return absl::CancelledError("no"); };
  RdbReader again(file);
  EXPECT_TRUE(absl::IsCancelled(LoadRdb(again, {}, handler).status()));
}

// --- Redis's test-suite files ------------------------------------------------------------------

TEST_F(RdbFixturesTest, Encodings) {
  Loaded loaded = Load(ReadFixture("encodings.rdb"));
  ASSERT_TRUE(loaded.status.ok()) << loaded.status;
  auto& keys = loaded.keys;
  EXPECT_EQ(keys.size(), 13u);
  // 137 bytes, as Redis's tests/integration/rdb.tcl asserts.
  EXPECT_THAT(keys["compressible"].contents, ElementsAre(std::string(137, 'a')));
  EXPECT_THAT(keys["hash"].contents,
              ElementsAre("a=1", "aa=10", "aaa=100", "b=2", "bb=20", "bbb=200", "c=3", "cc=30",
                          "ccc=300", "ddd=400", "eee=5000000000"));
  EXPECT_THAT(keys["hash_zipped"].contents, ElementsAre("a=1", "b=2", "c=3"));
  const std::vector<std::string> once = {"1", "2", "3", "a", "b", "c", "100000", "6000000000"};
  std::vector<std::string> thrice;
  for (int i = 0; i < 3; ++i) thrice.insert(thrice.end(), once.begin(), once.end());
  EXPECT_EQ(keys["list"].contents, thrice);
  EXPECT_EQ(keys["list_zipped"].contents, once);
  EXPECT_THAT(keys["number"].contents, ElementsAre("10"));
  EXPECT_THAT(keys["set"].contents,
              ElementsAre("1", "100000", "2", "3", "6000000000", "a", "b", "c"));
  EXPECT_THAT(keys["set_zipped_1"].contents, ElementsAre("1", "2", "3", "4"));
  EXPECT_THAT(keys["set_zipped_2"].contents, ElementsAre("100000", "200000", "300000", "400000"));
  EXPECT_THAT(keys["set_zipped_3"].contents, ElementsAre("1000000000", "2000000000", "3000000000",
                                                         "4000000000", "5000000000", "6000000000"));
  EXPECT_THAT(keys["string"].contents, ElementsAre("Hello World"));
  EXPECT_THAT(keys["zset"].contents,
              ElementsAre("a@1", "b@2", "c@3", "aa@10", "bb@20", "cc@30", "aaa@100", "bbb@200",
                          "ccc@300", "aaaa@1000", "cccc@123456789", "bbbb@5000000000"));
  EXPECT_THAT(keys["zset_zipped"].contents, ElementsAre("a@1", "b@2", "c@3"));
  for (const auto& [key, value] : keys) {
    EXPECT_EQ(value.db, 0) << key;
    EXPECT_EQ(value.kind == LoadedValue::Kind::kString,
              key == "compressible" || key == "number" || key == "string")
        << key;
  }
}

TEST_F(RdbFixturesTest, ListQuicklist) {
  Loaded loaded = Load(ReadFixture("list-quicklist.rdb"));
  ASSERT_TRUE(loaded.status.ok()) << loaded.status;
  EXPECT_THAT(loaded.keys["x"].contents, ElementsAre("7"));
  ASSERT_EQ(loaded.keys["list"].type, KeyType::kList);
  ASSERT_FALSE(loaded.keys["list"].contents.empty());
  EXPECT_EQ(loaded.keys["list"].contents.front(), "7");  // LPOP list = 7.
}

TEST_F(RdbFixturesTest, HashesFromZipmapAndZiplist) {
  for (const char* name : {"hash-zipmap.rdb", "hash-ziplist.rdb"}) {
    SCOPED_TRACE(name);
    const std::string bytes = ReadFixture(name);
    Loaded loaded = Load(bytes);
    ASSERT_TRUE(loaded.status.ok()) << loaded.status;
    EXPECT_THAT(loaded.keys["hash"].contents, ElementsAre("f1=v1", "f2=v2"));
    EXPECT_EQ(loaded.keys["hash"].encoding, "listpack");
    RdbLoadOptions few;
    few.limits.hash_max_listpack_entries = 1;
    EXPECT_EQ(Load(bytes, few).keys["hash"].encoding, "hashtable");
    RdbLoadOptions short_values;
    short_values.limits.hash_max_listpack_value = 1;
    EXPECT_EQ(Load(bytes, short_values).keys["hash"].encoding, "hashtable");
  }
}

TEST_F(RdbFixturesTest, ZSetZiplist) {
  const std::string bytes = ReadFixture("zset-ziplist.rdb");
  Loaded loaded = Load(bytes);
  ASSERT_TRUE(loaded.status.ok()) << loaded.status;
  EXPECT_THAT(loaded.keys["zset"].contents, ElementsAre("one@1", "two@2"));
  EXPECT_EQ(loaded.keys["zset"].encoding, "listpack");
  RdbLoadOptions few;
  few.limits.zset_max_listpack_entries = 1;
  EXPECT_EQ(Load(bytes, few).keys["zset"].encoding, "skiplist");
}

TEST_F(RdbFixturesTest, EmptyKeysAreReportedEmpty) {
  Loaded loaded = Load(ReadFixture("corrupt_empty_keys.rdb"));
  ASSERT_TRUE(loaded.status.ok()) << loaded.status;
  EXPECT_EQ(loaded.result.keys, 9u);
  EXPECT_EQ(loaded.result.empty_keys, 9u);
  std::vector<std::string> names;
  for (const auto& [key, value] : loaded.keys) {
    names.push_back(key);
    EXPECT_EQ(value.kind, LoadedValue::Kind::kEmpty) << key;
  }
  EXPECT_THAT(names,
              ElementsAre("hash", "hash_ziplist", "list_quicklist", "list_quicklist_empty_ziplist",
                          "list_ziplist", "set", "zset", "zset_listpack", "zset_ziplist"));
}

TEST_F(RdbFixturesTest, AofPreambleStopsAfterTheTrailer) {
  const std::string bytes = ReadFixture("rdb-preamble.aof");
  Loaded loaded = Load(bytes);
  ASSERT_TRUE(loaded.status.ok()) << loaded.status;
  ASSERT_LT(loaded.result.bytes, bytes.size());
  EXPECT_EQ(bytes[loaded.result.bytes], '*');  // The AOF's commands follow.
}

// From a pipe-like source the reader reads ahead of the trailer; the AOF's commands are what it
// buffered beyond the RDB, then the rest of the source.
TEST_F(RdbFixturesTest, AofPreambleTailIsRecoveredFromAStream) {
  const std::string bytes = ReadFixture("rdb-preamble.aof");
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{1000}, size_t{1} << 20}) {
    SCOPED_TRACE(chunk);
    size_t position = 0;
    RdbReader reader([&](char* buffer, size_t capacity) -> absl::StatusOr<size_t> {
      const size_t n = std::min({capacity, chunk, bytes.size() - position});
      std::memcpy(buffer, bytes.data() + position, n);
      position += n;
      return n;
    });
    RdbLoadHandler handler;
    handler.on_key = [](RdbKey&) { return absl::OkStatus(); };
    absl::StatusOr<RdbLoadResult> result = LoadRdb(reader, {}, handler);
    ASSERT_TRUE(result.ok()) << result.status();
    const std::string tail = reader.TakeBuffered() + bytes.substr(position);
    EXPECT_EQ(tail, bytes.substr(result->bytes));
    EXPECT_EQ(tail.substr(0, 1), "*");
  }
}

// --- Corrupt files -----------------------------------------------------------------------------

TEST(RdbFileCorruptTest, TruncatedAtEveryByte) {
  const std::string file = MultiTypeFile();
  for (size_t size = 0; size < file.size(); ++size) {
    for (size_t chunk : {size_t{0}, size_t{7}}) {
      Loaded loaded = Load(file.substr(0, size), {}, chunk);
      EXPECT_FALSE(loaded.status.ok()) << size;
      EXPECT_THAT(loaded.status.message(), HasSubstr("offset")) << size;
    }
  }
}

// Every key of a file loaded as it is, re-encoded and decoded again, gives the same contents;
// the number of keys compared, or an error.
absl::StatusOr<size_t> LoadAndRoundTrip(std::string_view file) {
  RdbReader reader(file);
  size_t keys = 0;
  RdbLoadHandler handler;
  handler.on_key = [&](RdbKey& key) -> absl::Status {
    ++keys;
    if (key.value.kind == LoadedValue::Kind::kEmpty) return absl::OkStatus();
    const RecordView record = key.value.kind == LoadedValue::Kind::kString
                                  ? BytesRecord(ValueKind::kStringRaw, key.value.string)
                                  : ObjectRecord(key.value.object.get());
    absl::StatusOr<LoadedValue> again = DecodeValue(EncodeValue(record));
    if (!again.ok())
      return absl::InternalError(StrCat("re-encoded value fails: ", again.status().ToString()));
    const bool same =
        key.value.kind == LoadedValue::Kind::kString
            ? again->string == key.value.string
            : again->object != nullptr && Contents(*again->object) == Contents(*key.value.object);
    if (!same) return absl::InternalError(StrCat("key ", key.key, " changed in a round trip"));
    return absl::OkStatus();
  };
  absl::StatusOr<RdbLoadResult> result = LoadRdb(reader, {}, handler);
  if (!result.ok()) return result.status();
  return keys;
}

TEST(RdbFileCorruptTest, EveryFlippedByteIsAnError) {
  // With the CRC on, every single-byte change fails: in a value, or at the checksum.
  const std::string file = MultiTypeFile();
  for (size_t i = 0; i < file.size(); ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::string bad = file;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      EXPECT_FALSE(Load(bad).status.ok()) << i;
    }
  }
  // Without it, a change either fails with an offset (DataLoss, or Unimplemented for a type
  // that became a stream or module), or yields values that are valid: each re-encodes and
  // decodes to the same contents. No change may go unnoticed in a way that breaks a value.
  const std::string unchecked = MultiTypeFile({.compress = true, .checksum = false});
  ASSERT_EQ(*LoadAndRoundTrip(unchecked), 7u);
  size_t loaded = 0;
  for (size_t i = 0; i < unchecked.size(); ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::string bad = unchecked;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      absl::StatusOr<size_t> keys = LoadAndRoundTrip(bad);
      if (keys.ok()) {
        ++loaded;
        continue;
      }
      EXPECT_FALSE(absl::IsInternal(keys.status())) << i << ": " << keys.status();
      EXPECT_TRUE(absl::IsDataLoss(keys.status()) || absl::IsUnimplemented(keys.status()))
          << i << ": " << keys.status();
      EXPECT_THAT(keys.status().message(), HasSubstr("offset")) << i;
    }
  }
  EXPECT_GT(loaded, 0u);  // Some flips (in AUX values, member bytes) are valid files.
}

TEST(RdbFileCorruptTest, BadChecksum) {
  std::string file = RedisDump();
  file.back() = static_cast<char>(file.back() ^ 1);
  Loaded loaded = Load(file);
  EXPECT_THAT(loaded.status.message(),
              HasSubstr(StrCat("wrong RDB checksum at offset ", file.size() - 8)));
}

// A version-10 file of `items` (raw bytes after the header) and a zero checksum.
std::string FileOf(std::string_view items) {
  return StrCat("REDIS0010", items, "\xff"sv, std::string(8, '\0'));
}

TEST(RdbFileCorruptTest, UnknownAndRefusedItems) {
  EXPECT_THAT(Load(FileOf("\x64\x01k\x01v"sv)).status.message(),
              HasSubstr("unknown RDB value type or opcode 100 at offset 9"));
  EXPECT_THAT(Load(FileOf("\x08\x01k\x01v"sv)).status.message(),
              HasSubstr("unknown RDB value type or opcode 8"));
  Loaded module = Load(FileOf("\xf7\x01\x02"sv));
  EXPECT_TRUE(absl::IsUnimplemented(module.status));
  EXPECT_THAT(module.status.message(), HasSubstr("MODULE_AUX"));
  EXPECT_THAT(Load(FileOf("\xf6\x00"sv)).status.message(), HasSubstr("FUNCTION"));
  EXPECT_THAT(Load(FileOf("\xf5\x04"
                          "code"sv))
                  .status.message(),
              HasSubstr("FUNCTION2"));
  EXPECT_FALSE(Load(FileOf("\x0f\x01k\x00"sv)).status.ok());  // A stream cut short.
  EXPECT_THAT(Load(FileOf("\xfe\x10"sv)).status.message(),
              HasSubstr("selects database 16 but only 16 are configured"));
  EXPECT_THAT(Load(FileOf("\x00\x01k\x80\x00\x00\x01\x00"sv)).status.message(),
              HasSubstr("unexpected end of input"));
  EXPECT_THAT(Load("REDIS0011"sv).status.message(), HasSubstr("can't handle RDB format version"));

  // FUNCTION2 goes to its callback when there is one.
  const std::string with_function = FileOf(
      "\xf5\x04"
      "code"sv);
  RdbReader reader(with_function);
  std::string code;
  RdbLoadHandler handler;
  handler.on_key = [](RdbKey&) { return absl::OkStatus(); };
  handler.on_function = [&](std::string_view c) {
    code = std::string(c);
    return absl::OkStatus();
  };
  ASSERT_TRUE(LoadRdb(reader, {}, handler).ok());
  EXPECT_EQ(code, "code");
}

TEST(RdbFileCorruptTest, CallbackErrorsStopTheLoad) {
  const std::string file = MultiTypeFile();
  RdbReader reader(file);
  int calls = 0;
  RdbLoadHandler handler;
  handler.on_key = [&](RdbKey&) {
    ++calls;
    return absl::CancelledError("stop");
  };
  absl::StatusOr<RdbLoadResult> result = LoadRdb(reader, {}, handler);
  EXPECT_TRUE(absl::IsCancelled(result.status()));
  EXPECT_EQ(calls, 1);
}

TEST(RdbFileCorruptTest, DuplicateMembersInAFile) {
  Loaded loaded = Load(FileOf("\x02\x01k\x02\x01x\x01x"sv));
  EXPECT_THAT(loaded.status.message(),
              HasSubstr("Duplicate set members detected at offset 17 (key \"k\")"));
}

// Refusals and corruption inside a value name the key: escaped, and cut after 64 bytes.
TEST(RdbFileCorruptTest, ValueErrorsNameTheKey) {
  // A stream whose one group is cut short.
  Loaded stream = Load(FileOf("\x13\x08mystream\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"sv));
  EXPECT_FALSE(stream.status.ok());
  EXPECT_THAT(stream.status.message(), HasSubstr("(key \"mystream\")"));
  Loaded module = Load(FileOf("\x07\x03m\x01\n\x00"sv));
  EXPECT_THAT(module.status.message(), HasSubstr("module values (RDB type 7)"));
  EXPECT_THAT(module.status.message(), HasSubstr("(key \"m\\001\\n\")"));
  const std::string long_key(100, 'k');
  Loaded corrupt = Load(FileOf(StrCat("\x02\x40\x64"sv, long_key, "\x02\x01x\x01x"sv)));
  EXPECT_THAT(corrupt.status.message(),
              HasSubstr(StrCat("(key \"", std::string(64, 'k'), "\"...)")));
  // Errors before the key is known name none.
  EXPECT_THAT(Load(FileOf("\x64\x01k"sv)).status.message(), Not(HasSubstr("key \"")));
}

// EXPIRETIME_MS 0 is an expiry (long past), not "none"; -1 is Redis's "none". With drop_expired
// (a master loading its snapshot) keys whose expiry is before now are dropped and counted.
TEST(RdbFileTest, ExpiryIsOptionalAndExpiredKeysCanBeDropped) {
  const std::string file = FileOf(
      "\xfc\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04zero\x01v"  // EXPIRETIME_MS 0
      "\xfc\xff\xff\xff\xff\xff\xff\xff\xff\x00\x04none\x01v"  // EXPIRETIME_MS -1
      "\xfc\xe8\x03\x00\x00\x00\x00\x00\x00\x00\x03now\x01v"   // 1000 ms
      "\xfd\x02\x00\x00\x00\x00\x05later\x01v"                 // EXPIRETIME 2 s
      "\xfc\x00\x00\x00\x00\x00\x00\x00\x00\x02\x05"
      "empty\x00"  // empty, expired
      "\x00\x07"
      "forever\x01v"sv);
  Loaded kept = Load(file);
  ASSERT_TRUE(kept.status.ok()) << kept.status.ToString();
  EXPECT_EQ(kept.result.keys, 6u);
  EXPECT_EQ(kept.result.expired_keys, 0u);
  EXPECT_EQ(kept.keys["zero"].expire_ms, 0);
  EXPECT_EQ(kept.keys["none"].expire_ms, std::nullopt);
  EXPECT_EQ(kept.keys["now"].expire_ms, 1000);
  EXPECT_EQ(kept.keys["later"].expire_ms, 2000);
  EXPECT_EQ(kept.keys["forever"].expire_ms, std::nullopt);

  RdbLoadOptions master;
  master.drop_expired = true;
  master.now_ms = 1000;  // Redis drops expiry < now: "now" stays.
  Loaded dropped = Load(file, master);
  ASSERT_TRUE(dropped.status.ok()) << dropped.status;
  EXPECT_EQ(dropped.result.expired_keys, 1u);
  EXPECT_EQ(dropped.result.keys, 5u);
  EXPECT_EQ(dropped.result.empty_keys, 1u);  // Empty first, as Redis: skipped, not "expired".
  EXPECT_EQ(dropped.keys.count("zero"), 0u);
  for (const char* key : {"none", "now", "later", "forever", "empty"}) {
    EXPECT_EQ(dropped.keys.count(key), 1u) << key;
  }
  master.now_ms = 5000;
  Loaded later = Load(file, master);
  EXPECT_EQ(later.result.expired_keys, 3u);
  EXPECT_EQ(later.result.keys, 3u);
}

// Redis accepts key prefixes whose key never comes (EXPIRETIME, IDLE, FREQ just before EOF).
TEST(RdbFileTest, PrefixBeforeEofIsIgnored) {
  for (std::string_view items :
       {"\xfc\x00\x00\x00\x00\x00\x00\x00\x00"sv, "\xfd\x01\x00\x00\x00"sv, "\xf8\x05"sv,
        "\xf9\x07"sv, "\xf9\x07\xfc\x00\x00\x00\x00\x00\x00\x00\x00"sv}) {
    Loaded loaded = Load(FileOf(items));
    EXPECT_TRUE(loaded.status.ok()) << loaded.status;
    EXPECT_EQ(loaded.result.keys, 0u);
  }
}

TEST(RdbFileTest, StringCapCoversKeysAuxAndValues) {
  const std::string file = MultiTypeFile();
  RdbLoadOptions capped;
  capped.max_string_length = 6;  // "string value" is 12 bytes; "redis-ver" 9.
  EXPECT_THAT(Load(file, capped).status.message(), HasSubstr("string length over the limit"));
  capped.max_string_length = 1 << 20;
  EXPECT_TRUE(Load(file, capped).status.ok());
  RdbLoadOptions short_value;
  short_value.max_string_length = 3;
  EXPECT_THAT(Load(FileOf("\x00\x01k\x04"
                          "four"sv),
                   short_value)
                  .status.message(),
              HasSubstr("over the limit at offset 13 (key \"k\")"));
}

TEST(RdbFileTest, OldVersionsHaveNoTrailer) {
  std::string out;
  RdbWriter writer(AppendTo(&out), {});
  writer.WriteHeader(4);
  writer.WriteByte(kTypeString);
  writer.WriteString("k");
  writer.WriteString("v");
  ASSERT_TRUE(writer.Finish().ok());
  EXPECT_EQ(out, std::string("REDIS0004\x00\x01k\x01v\xff"sv));
  Loaded loaded = Load(out);
  ASSERT_TRUE(loaded.status.ok()) << loaded.status;
  EXPECT_EQ(loaded.result.version, 4);
  EXPECT_EQ(loaded.result.bytes, out.size());
  EXPECT_THAT(loaded.keys["k"].contents, ElementsAre("v"));
}

TEST(RdbFileCorruptTest, SourceErrorsAndOutOfMemoryAreStatuses) {
  const std::string file = MultiTypeFile();
  size_t position = 0;
  RdbReader failing([&](char* buffer, size_t capacity) -> absl::StatusOr<size_t> {
    if (position >= 40) return absl::UnavailableError("read failed");
    const size_t n = std::min<size_t>(capacity, 40);
    std::memcpy(buffer, file.data(), n);
    position += n;
    return n;
  });
  RdbLoadHandler handler;
  handler.on_key = [](RdbKey&) { return absl::OkStatus(); };
  absl::StatusOr<RdbLoadResult> result = LoadRdb(failing, {}, handler);
  EXPECT_TRUE(absl::IsUnavailable(result.status())) << result.status();

  RdbReader reader(file);
  handler.on_key = [](RdbKey&) -> absl::Status { throw std::bad_alloc(); };
  result = LoadRdb(reader, {}, handler);
  EXPECT_TRUE(absl::IsResourceExhausted(result.status())) << result.status();
  EXPECT_THAT(result.status().message(), HasSubstr("at offset"));
}

}  // namespace
}  // namespace gigakv::persistence::rdb
