// gigakv-check-rdb's engine (rdb_check.h): counts per database, type and expiry for files
// RdbFileWriter / WriteRdbFile write, the report's text, and the first problem of corrupt files
// (truncated, bad checksum, flipped bytes) with its offset.
#include "persistence/rdb/rdb_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/types/hash.h"
#include "core/types/quicklist.h"
#include "core/types/set.h"
#include "core/types/zset.h"
#include "gigakv/strings.h"
#include "tests/unit/rdb_test_util.h"

namespace gigakv::persistence::rdb {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace ::gigakv::persistence::rdb::testing;
using namespace std::string_view_literals;

constexpr int64_t kNow = 1'700'000'000'000;

// Checks `bytes` from memory, or through a source handing out `chunk` bytes at a time.
RdbCheckReport Check(std::string_view bytes, size_t chunk = 0) {
  size_t position = 0;
  RdbSource source = [&](char* buffer, size_t capacity) -> absl::StatusOr<size_t> {
    const size_t n = std::min({capacity, chunk, bytes.size() - position});
    std::memcpy(buffer, bytes.data() + position, n);
    position += n;
    return n;
  };
  std::unique_ptr<RdbReader> reader =
      chunk == 0 ? std::make_unique<RdbReader>(bytes) : std::make_unique<RdbReader>(source);
  RdbCheckOptions options;
  options.now_ms = kNow;
  return CheckRdb(*reader, options);
}

// Objects the entries of a test file point at; they must outlive the file's writing.
struct Objects {
  std::vector<std::unique_ptr<Object>> owned;
  const Object* Keep(std::unique_ptr<Object> object) {
    owned.push_back(std::move(object));
    return owned.back().get();
  }
};

RdbFileEntry ObjectEntry(int db, std::string_view key, const Object* object,
                         int64_t expire_ms = 0) {
  RdbFileEntry entry;
  entry.db = db;
  entry.record = ObjectRecord(object);
  entry.record.key = key;
  entry.record.expire_ms = expire_ms;
  return entry;
}

// db 0: 3 strings (one expired, one expiring later), a list, a set, a hash (expired);
// db 5: a string, two sorted sets (one expiring later), an intset set.
std::string SampleFile(Objects* objects, RdbWriter::Options options = {}) {
  CollectionLimits limits;
  auto list = std::make_unique<List>(-2);
  list->Push(ListEnd::kTail, "a");
  list->Push(ListEnd::kTail, "bb");
  auto set = std::make_unique<Set>();
  set->Add("x", limits);
  set->Add("y", limits);
  auto intset = std::make_unique<Set>();
  intset->Add("7", limits);
  intset->Add("-3", limits);
  auto hash = std::make_unique<Hash>();
  hash->Set("f", "v", limits);
  double ignored;
  auto zset = std::make_unique<ZSet>();
  zset->Add("m", 1.5, {}, limits, &ignored);
  auto zset2 = std::make_unique<ZSet>();
  zset2->Add("n", -2, {}, limits, &ignored);
  const Object* l = objects->Keep(std::move(list));
  const Object* s = objects->Keep(std::move(set));
  const Object* si = objects->Keep(std::move(intset));
  const Object* h = objects->Keep(std::move(hash));
  const Object* z = objects->Keep(std::move(zset));
  const Object* z2 = objects->Keep(std::move(zset2));
  const std::string raw(100, 'r');  // Entries view their strings: it outlives them.
  std::vector<RdbFileEntry> entries = {
      Entry(0, "s1", ValueKind::kStringEmbstr, "v1"),
      Entry(0, "s2", ValueKind::kStringInt, "42", kNow - 1),
      Entry(0, "s3", ValueKind::kStringRaw, raw, kNow + 60'000),
      ObjectEntry(0, "l", l),
      ObjectEntry(0, "s", s),
      ObjectEntry(0, "h", h, kNow - 60'000),
      Entry(5, "t", ValueKind::kStringEmbstr, "x"),
      ObjectEntry(5, "z", z),
      ObjectEntry(5, "z2", z2, kNow + 1),
      ObjectEntry(5, "si", si),
  };
  RdbFileInfo info;
  info.ctime = 1700000000;
  info.used_mem = 123456;
  return WriteFile(entries, info, options);
}

TEST(RdbCheckTest, CountsPerDatabaseTypeAndExpiry) {
  Objects objects;
  const std::string file = SampleFile(&objects);
  ASSERT_FALSE(file.empty());
  for (size_t chunk : {size_t{0}, size_t{1}, size_t{5}, size_t{4096}}) {
    const RdbCheckReport report = Check(file, chunk);
    ASSERT_TRUE(report.status.ok()) << report.status;
    EXPECT_EQ(report.version, 10);
    EXPECT_TRUE(report.checksum_verified);
    EXPECT_EQ(report.bytes, file.size());
    ASSERT_EQ(report.dbs.size(), 2u);
    const RdbCheckDb& db0 = report.dbs.at(0);
    EXPECT_EQ(db0.strings, 3u);
    EXPECT_EQ(db0.lists, 1u);
    EXPECT_EQ(db0.sets, 1u);
    EXPECT_EQ(db0.zsets, 0u);
    EXPECT_EQ(db0.hashes, 1u);
    EXPECT_EQ(db0.expires, 3u);
    EXPECT_EQ(db0.already_expired, 2u);
    EXPECT_EQ(db0.empty_keys, 0u);
    EXPECT_EQ(db0.selects, 1u);
    const RdbCheckDb& db5 = report.dbs.at(5);
    EXPECT_EQ(db5.strings, 1u);
    EXPECT_EQ(db5.lists, 0u);
    EXPECT_EQ(db5.sets, 1u);
    EXPECT_EQ(db5.zsets, 2u);
    EXPECT_EQ(db5.hashes, 0u);
    EXPECT_EQ(db5.expires, 1u);
    EXPECT_EQ(db5.already_expired, 0u);
    EXPECT_EQ(report.keys(), 10u);
    EXPECT_EQ(report.expires(), 4u);
    EXPECT_EQ(report.already_expired(), 2u);
    ASSERT_EQ(report.aux.size(), 5u);
    EXPECT_EQ(report.aux[0].key, "redis-ver");
    EXPECT_EQ(report.aux[0].value, "7.0.15");
    EXPECT_EQ(report.aux[2].key, "ctime");
    EXPECT_EQ(report.aux[2].value, "1700000000");
  }
}

TEST(RdbCheckTest, FormatsLikeRedisCheckRdb) {
  Objects objects;
  const std::string file = SampleFile(&objects);
  const RdbCheckReport report = Check(file);
  const std::string text = FormatRdbCheckReport(report, "dump.rdb");
  const std::string expected_tail = StrCat(
      "[offset ", file.size(), "] Checksum OK\n",              //
      "[offset ", file.size(), "] \\o/ RDB looks OK! \\o/\n",  //
      "[info] DB 0: 6 keys (string 3, list 1, set 1, zset 0, hash 1, stream 0), 3 expires, 2 "
      "already "
      "expired\n"
      "[info] DB 5: 4 keys (string 1, list 0, set 1, zset 2, hash 0, stream 0), 1 expires, 0 "
      "already "
      "expired\n"
      "[info] 10 keys read\n"
      "[info] 4 expires\n"
      "[info] 2 already expired\n"
      "[info] 0 empty keys skipped\n");
  EXPECT_THAT(text, StartsWith("[offset 0] Checking RDB file dump.rdb\n"
                               "[offset 9] RDB version 10\n"
                               "[offset 27] AUX FIELD redis-ver = '7.0.15'\n"
                               "[offset 41] AUX FIELD redis-bits = '64'\n"));
  EXPECT_THAT(text, HasSubstr("AUX FIELD ctime = '1700000000'\n"));
  EXPECT_THAT(text, HasSubstr("AUX FIELD aof-base = '0'\n[offset "));
  EXPECT_THAT(text, HasSubstr(StrCat("[offset ", report.dbs.at(0).first_select_offset,
                                     "] Selecting DB ID 0\n")));
  EXPECT_THAT(text, HasSubstr(StrCat("[offset ", report.dbs.at(5).first_select_offset,
                                     "] Selecting DB ID 5\n")));
  EXPECT_LT(report.dbs.at(0).first_select_offset, report.dbs.at(5).first_select_offset);
  EXPECT_EQ(text.substr(text.size() - std::min(text.size(), expected_tail.size())), expected_tail);
  EXPECT_THAT(text, Not(HasSubstr("ERROR")));
}

TEST(RdbCheckTest, ChecksumDisabledAndOldVersions) {
  Objects objects;
  const std::string unchecked = SampleFile(&objects, {.compress = false, .checksum = false});
  RdbCheckReport report = Check(unchecked);
  ASSERT_TRUE(report.status.ok()) << report.status;
  EXPECT_FALSE(report.checksum_verified);
  EXPECT_THAT(FormatRdbCheckReport(report, "f"),
              HasSubstr(StrCat("[offset ", unchecked.size(),
                               "] RDB file was saved with checksum disabled: no check "
                               "performed.\n")));

  // Version 4 has no trailer; no SELECTDB means database 0.
  const std::string old = StrCat("REDIS0004", "\x00\x01k\x01v\xff"sv);
  report = Check(old);
  ASSERT_TRUE(report.status.ok()) << report.status;
  EXPECT_EQ(report.version, 4);
  EXPECT_EQ(report.dbs.at(0).strings, 1u);
  EXPECT_EQ(report.dbs.at(0).selects, 0u);
  const std::string text = FormatRdbCheckReport(report, "f");
  EXPECT_THAT(text, HasSubstr("[offset 15] RDB version 4 has no checksum: no check performed.\n"));
  EXPECT_THAT(text, Not(HasSubstr("Selecting DB")));
}

TEST(RdbCheckTest, EmptyKeysHighDatabasesAndFunctionsAreCounted) {
  // SELECTDB 20, an empty set, an expired empty hash (skipped, so no expire), a string; a
  // function library; the checksum left zero.
  const std::string file = StrCat("REDIS0010", "\xfe\x14"sv,
                                  "\x02\x01"
                                  "e"
                                  "\x00"sv,
                                  "\xfc\x01\x00\x00\x00\x00\x00\x00\x00"
                                  "\x04\x02"
                                  "eh"
                                  "\x00"sv,
                                  "\x00\x01k\x01v"sv,
                                  "\xf5\x04"
                                  "code"sv,
                                  "\xff"sv, std::string(8, '\0'));
  const RdbCheckReport report = Check(file);
  ASSERT_TRUE(report.status.ok()) << report.status;
  const RdbCheckDb& db = report.dbs.at(20);
  EXPECT_EQ(db.empty_keys, 2u);
  EXPECT_EQ(db.keys(), 1u);
  EXPECT_EQ(db.expires, 0u);
  EXPECT_EQ(report.function_libraries, 1u);
  const std::string text = FormatRdbCheckReport(report, "f");
  EXPECT_THAT(text, HasSubstr("[offset 11] Selecting DB ID 20\n"));
  EXPECT_THAT(text,
              HasSubstr("[info] DB 20: 1 keys (string 1, list 0, set 0, zset 0, hash 0, stream 0), "
                        "0 expires, 0 already expired, 2 empty keys skipped\n"));
  EXPECT_THAT(text, HasSubstr("[info] 3 keys read\n"));
  EXPECT_THAT(text, HasSubstr("[info] 2 empty keys skipped\n"));
  EXPECT_THAT(text, HasSubstr("'databases 21' or more"));
  EXPECT_THAT(text, HasSubstr("1 function libraries, not checked"));
}

TEST(RdbCheckTest, AuxAndKeyBytesAreEscaped) {
  const std::string file = StrCat("REDIS0010",
                                  "\xfa\x02"
                                  "a\n"
                                  "\x02"
                                  "\x01'"sv,
                                  "\xff"sv, std::string(8, '\0'));
  const RdbCheckReport report = Check(file);
  ASSERT_TRUE(report.status.ok()) << report.status;
  EXPECT_THAT(FormatRdbCheckReport(report, "f"), HasSubstr("] AUX FIELD a\\n = '\\001\\''\n"));
}

TEST(RdbCheckCorruptTest, TruncatedFilesFailWithAnOffset) {
  Objects objects;
  const std::string file = SampleFile(&objects);
  for (size_t size = 0; size < file.size(); ++size) {
    const RdbCheckReport report = Check(file.substr(0, size), size % 2 == 0 ? 0 : 7);
    ASSERT_FALSE(report.status.ok()) << size;
    const std::string text = FormatRdbCheckReport(report, "f");
    EXPECT_THAT(text, HasSubstr("--- RDB ERROR DETECTED ---\n[offset ")) << size;
    EXPECT_THAT(text, Not(HasSubstr("RDB looks OK"))) << size;
    uint64_t offset = 0;
    std::string reason;
    ASSERT_TRUE(SplitErrorOffset(FromAbsl(report.status.message()), &offset, &reason))
        << size << ": " << report.status;
    EXPECT_LE(offset, size);
    EXPECT_THAT(text, HasSubstr(StrCat("[offset ", offset, "] ", reason, "\n")));
  }
  // Cut inside the last key's value: the keys before it are counted.
  const RdbCheckReport report = Check(file.substr(0, file.size() - 12));
  EXPECT_THAT(std::string(report.status.message()), HasSubstr("unexpected end of input"));
  const std::string text = FormatRdbCheckReport(report, "f");
  EXPECT_THAT(text, HasSubstr("] unexpected end of input (key \"si\")\n"));
  EXPECT_THAT(text, HasSubstr("[info] 9 keys read\n[info] 4 expires\n[info] 2 already expired\n"));
}

TEST(RdbCheckCorruptTest, BadChecksumNamesTheTrailer) {
  Objects objects;
  std::string file = SampleFile(&objects);
  file[file.size() - 3] = static_cast<char>(file[file.size() - 3] ^ 0x40);
  const RdbCheckReport report = Check(file);
  ASSERT_FALSE(report.status.ok());
  EXPECT_EQ(report.keys(), 10u);
  EXPECT_THAT(FormatRdbCheckReport(report, "f"),
              HasSubstr(StrCat("--- RDB ERROR DETECTED ---\n[offset ", file.size() - 8,
                               "] wrong RDB checksum\n[info] 10 keys read\n")));
}

TEST(RdbCheckCorruptTest, EveryFlippedByteIsFound) {
  Objects objects;
  const std::string file = SampleFile(&objects);
  for (size_t i = 0; i < file.size(); ++i) {
    std::string bad = file;
    bad[i] = static_cast<char>(bad[i] ^ 0x81);
    const RdbCheckReport report = Check(bad);
    ASSERT_FALSE(report.status.ok()) << i;
    uint64_t offset = 0;
    std::string reason;
    EXPECT_TRUE(SplitErrorOffset(FromAbsl(report.status.message()), &offset, &reason))
        << i << ": " << report.status;
  }
}

TEST(RdbCheckCorruptTest, UnsupportedItemsAndBadHeaders) {
  EXPECT_THAT(FormatRdbCheckReport(Check("REDIS0011"), "f"),
              HasSubstr("[offset 0] can't handle RDB format version 11\n"));
  EXPECT_THAT(FormatRdbCheckReport(Check("NOTREDIS!"), "f"),
              HasSubstr("[offset 0] not an RDB file (wrong signature)\n"));
  const RdbCheckReport stream =
      Check(StrCat("REDIS0010", "\x13\x01s\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"sv));
  EXPECT_THAT(FormatRdbCheckReport(stream, "f"), HasSubstr("(key \"s\")\n"));  // A group cut short.
}

TEST(RdbCheckTest, SplitErrorOffset) {
  uint64_t offset = 0;
  std::string reason;
  ASSERT_TRUE(SplitErrorOffset("bad thing at offset 12 (key \"k\")", &offset, &reason));
  EXPECT_EQ(offset, 12u);
  EXPECT_EQ(reason, "bad thing (key \"k\")");
  ASSERT_TRUE(SplitErrorOffset("not supported, at offset 7", &offset, &reason));
  EXPECT_EQ(offset, 7u);
  EXPECT_EQ(reason, "not supported");
  ASSERT_TRUE(SplitErrorOffset("value that begins at offset 3, at offset 9", &offset, &reason));
  EXPECT_EQ(offset, 9u);
  EXPECT_EQ(reason, "value that begins at offset 3");
  // A key name that holds the marker does not move the offset.
  ASSERT_TRUE(SplitErrorOffset("unexpected end of input at offset 103 (key \"k at offset 7\")",
                               &offset, &reason));
  EXPECT_EQ(offset, 103u);
  EXPECT_EQ(reason, "unexpected end of input (key \"k at offset 7\")");
  EXPECT_FALSE(SplitErrorOffset("read error: Input/output error", &offset, &reason));
  EXPECT_FALSE(SplitErrorOffset("at offset x", &offset, &reason));
}

}  // namespace
}  // namespace gigakv::persistence::rdb
