// RDB values (rdb_values.h): gigakv's bytes against redis-server 7.0's DUMP bytes for every type
// and encoding, round trips of large collections, conversions on load, and refusals of corrupt
// or unsupported values.
#include "persistence/rdb/rdb_values.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <new>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/types/hash.h"
#include "core/types/quicklist.h"
#include "core/types/set.h"
#include "core/types/stream.h"
#include "core/types/zset.h"
#include "gigakv/strings.h"
#include "persistence/rdb/rdb_format.h"
#include "persistence/rdb/redis_listpack.h"
#include "tests/unit/rdb_test_util.h"

namespace gigakv::persistence::rdb {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using namespace ::gigakv::persistence::rdb::testing;
using namespace std::string_literals;
using namespace std::string_view_literals;

// Golden values: on redis-server 7.0.15 (default configuration, rdbcompression yes), after
// FLUSHALL, each key was created with the commands named and read back with DUMP <key>; the hex
// below is the payload without its 10-byte footer (RDB version and CRC-64): the type byte and
// the value.

// SET s1 hello (embstr)
constexpr char kStrHello[] = "000568656c6c6f";
// SET s2 12345 (int)
constexpr char kStrInt[] = "00c13930";
// SET s3 -1 (int)
constexpr char kStrNeg[] = "00c0ff";
// SET s4 1234567890123 (int, beyond int32: saved as text)
constexpr char kStrInt64[] = "000d31323334353637383930313233";
// SET s5 <100 x "a"> (raw; LZF-compressed)
constexpr char kStrLzf[] = "00c3094064016161e05700016161";
// SET s6 "\x00\x01\xffbin"
constexpr char kStrBin[] = "00060001ff62696e";
// HSET h1 f1 v1 f2 123 f3 -5000 num 1234567890123 (listpack)
constexpr char kHashListpack[] =
    "102c2c00000008008266310382763103826632037b0182663303f178ec03836e756d04f4cb04fb711f010000"
    "09ff";
// SADD si16 3 1 2 -7 (intset, 16-bit)
constexpr char kSetIntset16[] = "0b100200000004000000f9ff010002000300";
// SADD si32 1 100000 -70000 (intset, 32-bit)
constexpr char kSetIntset32[] = "0b14040000000300000090eefeff01000000a0860100";
// SADD si64 1 5000000000 -9223372036854775808 (intset, 64-bit; LZF-compressed)
constexpr char kSetIntset64[] = "0bc318200408000000032003a000018001a0080300f2052a200b0000";
// ZADD z1 1 a 2.5 b -3 c 1e20 d 0.1 e inf f -inf g 1152921504606846976 h -0 i
//      9007199254740993 j (listpack; LZF-compressed)
constexpr char kZSetListpack[] =
    "11c3405e406c1f6c0000001400816702842d696e6605816302dffd02816902000181650293302e0131"
    "30e00500123114816102010181620283322e3504816a02f420412000042000098168c00c1000100981"
    "64028531652b32300681660283205b0104ff";
// RPUSH l1 a b 1 2 -100 "hello world" "" 9223372036854775807 4096 -4097 (quicklist, one node)
constexpr char kListOneNode[] =
    "12010235350000000a0081610281620201010201df9c028b68656c6c6f20776f726c640c8001f4ffffffffff"
    "ffff7f09f1001003f1ffef03ff";
// RPUSH l2 <40 x "abcdefgh" repeated 4 times> (one node; its listpack LZF-compressed)
constexpr char kListLzf[] =
    "120102c32d45570e570500002800a06162636465666768e00f070021e0ff21a127e1ff0fe1ff0fc107c007e2"
    "ff1fe1ed0f0121ff";
// CONFIG SET list-max-listpack-size 2; RPUSH l3 a b c d e (three nodes)
constexpr char kListThreeNodes[] =
    "1203020d0d0000000200816102816202ff020d0d0000000200816302816402ff020a0a0000000100816502ff";
// CONFIG SET zset-max-listpack-entries 2; ZADD z2 1 a 2.5 b -3 c 3 bb (skiplist: ZSET_2)
constexpr char kZSetSkiplist[] =
    "05040262620000000000000840016200000000000004400161000000000000f03f016300000000000008c0";
// CONFIG SET hash-max-listpack-value 3; HSET h2 field1 value1 (hashtable, one field)
constexpr char kHashTable[] = "0401066669656c64310676616c756531";
// SADD ss hello (Redis 7.0: hashtable, one member)
constexpr char kSetOneString[] = "02010568656c6c6f";
// XADD s 1-1 a 1 b hello; XADD s 1-2 a 2 b x; XADD s 2-0 c -5000; XADD s 2-1 a 123456789012 b "";
// XDEL s 1-2 (STREAM_LISTPACKS_2: one node, its listpack not compressible)
constexpr char kStreamNode[] =
    "130110000000000000000100000000000000014059590000001f00030101010201816102816202000102010001"
    "000101018568656c6c6f0605010301000101010201817802050100010101dfff020101816302f178ec03060102"
    "0101010001f4141a99be1c0000000980010501ff030201010101020400";

std::unique_ptr<LoadedValue> MustDecode(std::string_view bytes,
                                        const CollectionLimits& limits = {}) {
  absl::StatusOr<LoadedValue> value = DecodeValue(bytes, limits);
  EXPECT_TRUE(value.ok()) << value.status();
  if (!value.ok()) return nullptr;
  return std::make_unique<LoadedValue>(std::move(*value));
}

// The decoded contents of `hex` (a golden), or the string for a string value.
std::vector<std::string> DecodedContents(std::string_view bytes,
                                         const CollectionLimits& limits = {}) {
  std::unique_ptr<LoadedValue> value = MustDecode(bytes, limits);
  if (value == nullptr) return {"<error>"};
  if (value->kind == LoadedValue::Kind::kString) return {value->string};
  if (value->kind == LoadedValue::Kind::kEmpty) return {"<empty>"};
  return Contents(*value->object);
}

TEST(RdbValuesGoldenTest, Strings) {
  EXPECT_EQ(Hex(EncodeValue(BytesRecord(ValueKind::kStringEmbstr, "hello"))), kStrHello);
  EXPECT_EQ(Hex(EncodeValue(BytesRecord(ValueKind::kStringInt, "12345"))), kStrInt);
  EXPECT_EQ(Hex(EncodeValue(BytesRecord(ValueKind::kStringInt, "-1"))), kStrNeg);
  EXPECT_EQ(Hex(EncodeValue(BytesRecord(ValueKind::kStringInt, "1234567890123"))), kStrInt64);
  const std::string hundred(100, 'a');
  EXPECT_EQ(Hex(EncodeValue(BytesRecord(ValueKind::kStringRaw, hundred))), kStrLzf);
  EXPECT_EQ(Hex(EncodeValue(BytesRecord(ValueKind::kStringExternal, hundred))), kStrLzf);
  EXPECT_EQ(Hex(EncodeValue(BytesRecord(ValueKind::kStringEmbstr,
                                        "\x00\x01\xff"
                                        "bin"sv))),
            kStrBin);

  EXPECT_THAT(DecodedContents(Unhex(kStrHello)), ElementsAre("hello"));
  EXPECT_THAT(DecodedContents(Unhex(kStrInt)), ElementsAre("12345"));
  EXPECT_THAT(DecodedContents(Unhex(kStrNeg)), ElementsAre("-1"));
  EXPECT_THAT(DecodedContents(Unhex(kStrInt64)), ElementsAre("1234567890123"));
  EXPECT_THAT(DecodedContents(Unhex(kStrLzf)), ElementsAre(hundred));
  EXPECT_THAT(DecodedContents(Unhex(kStrBin)), ElementsAre("\x00\x01\xff"
                                                           "bin"sv));
}

TEST(RdbValuesGoldenTest, HashListpackObjectAndInline) {
  CollectionLimits limits;
  Hash hash;
  for (auto [f, v] :
       {std::pair{"f1", "v1"}, {"f2", "123"}, {"f3", "-5000"}, {"num", "1234567890123"}}) {
    hash.Set(f, v, limits);
  }
  ASSERT_TRUE(hash.is_listpack());
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(&hash))), kHashListpack);
  EXPECT_EQ(Hex(EncodeValue(BytesRecord(ValueKind::kInlineHash, hash.CompactBytes()))),
            kHashListpack);

  std::unique_ptr<LoadedValue> loaded = MustDecode(Unhex(kHashListpack));
  ASSERT_NE(loaded, nullptr);
  ASSERT_EQ(loaded->kind, LoadedValue::Kind::kObject);
  EXPECT_EQ(loaded->object->encoding_name(), "listpack");
  EXPECT_THAT(Contents(*loaded->object),
              ElementsAre("f1=v1", "f2=123", "f3=-5000", "num=1234567890123"));
  // Loaded back, the same bytes (insertion order is kept).
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(loaded->object.get()))), kHashListpack);
}

TEST(RdbValuesGoldenTest, HashTable) {
  CollectionLimits limits;
  limits.hash_max_listpack_value = 3;
  Hash hash;
  hash.Set("field1", "value1", limits);
  ASSERT_FALSE(hash.is_listpack());
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(&hash))), kHashTable);
  std::unique_ptr<LoadedValue> loaded = MustDecode(Unhex(kHashTable), limits);
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->object->encoding_name(), "hashtable");
  EXPECT_THAT(Contents(*loaded->object), ElementsAre("field1=value1"));
  // Under the default limits the one field fits a listpack again, as Redis converts on load.
  loaded = MustDecode(Unhex(kHashTable));
  EXPECT_EQ(loaded->object->encoding_name(), "listpack");
}

TEST(RdbValuesGoldenTest, Intsets) {
  CollectionLimits limits;
  struct Case {
    const char* hex;
    std::vector<std::string> members;
  };
  for (const Case& c :
       {Case{kSetIntset16, {"3", "1", "2", "-7"}}, Case{kSetIntset32, {"1", "100000", "-70000"}},
        Case{kSetIntset64, {"1", "5000000000", "-9223372036854775808"}}}) {
    Set set;
    for (const std::string& m : c.members) set.Add(m, limits);
    ASSERT_EQ(set.encoding(), Set::Encoding::kIntset);
    EXPECT_EQ(Hex(EncodeValue(ObjectRecord(&set))), c.hex);
    EXPECT_EQ(Hex(EncodeValue(BytesRecord(ValueKind::kInlineIntset, set.CompactBytes()))), c.hex);
    std::unique_ptr<LoadedValue> loaded = MustDecode(Unhex(c.hex));
    ASSERT_NE(loaded, nullptr);
    EXPECT_EQ(loaded->object->encoding_name(), "intset");
    std::vector<std::string> sorted = c.members;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(Contents(*loaded->object), sorted);
    // gigakv's Intset buffer is Redis's intset: the loaded set holds the very bytes.
    EXPECT_EQ(static_cast<const Set&>(*loaded->object).CompactBytes(), set.CompactBytes());
  }
}

TEST(RdbValuesGoldenTest, SetsOfStrings) {
  // Redis 7.0 keeps a one-member string set in a hashtable; gigakv in a listpack (or a
  // hashtable): both are written as a plain SET.
  CollectionLimits limits;
  Set listpack_set;
  listpack_set.Add("hello", limits);
  ASSERT_EQ(listpack_set.encoding(), Set::Encoding::kListpack);
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(&listpack_set))), kSetOneString);
  EXPECT_EQ(Hex(EncodeValue(BytesRecord(ValueKind::kInlineSet, listpack_set.CompactBytes()))),
            kSetOneString);
  CollectionLimits tiny = limits;
  tiny.set_max_listpack_value = 2;
  Set table_set;
  table_set.Add("hello", tiny);
  ASSERT_EQ(table_set.encoding(), Set::Encoding::kHashtable);
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(&table_set))), kSetOneString);
  EXPECT_THAT(DecodedContents(Unhex(kSetOneString)), ElementsAre("hello"));
}

TEST(RdbValuesGoldenTest, ZSetListpack) {
  CollectionLimits limits;
  ZSet zset;
  const std::vector<std::pair<std::string, double>> elements = {
      {"a", 1},
      {"b", 2.5},
      {"c", -3},
      {"d", 1e20},
      {"e", 0.1},
      {"f", std::numeric_limits<double>::infinity()},
      {"g", -std::numeric_limits<double>::infinity()},
      {"h", 1152921504606846976.0},
      {"i", -0.0},
      {"j", 9007199254740993.0}};  // Parsed as 2^53, as Redis parses it.
  double ignored;
  for (const auto& [member, score] : elements) zset.Add(member, score, {}, limits, &ignored);
  ASSERT_TRUE(zset.is_listpack());
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(&zset))), kZSetListpack);
  EXPECT_EQ(Hex(EncodeValue(BytesRecord(ValueKind::kInlineZSet, zset.CompactBytes()))),
            kZSetListpack);
  std::unique_ptr<LoadedValue> loaded = MustDecode(Unhex(kZSetListpack));
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->object->encoding_name(), "listpack");
  EXPECT_EQ(Contents(*loaded->object), Contents(zset));
  EXPECT_THAT(Contents(*loaded->object),
              ElementsAre("g@-inf", "c@-3", "i@0", "e@0.10000000000000001", "a@1", "b@2.5",
                          "j@9007199254740992", "h@1.152921504606847e+18", "d@1e+20", "f@inf"));
}

TEST(RdbValuesGoldenTest, ZSetSkiplistWrittenFromTheTop) {
  CollectionLimits limits;
  limits.zset_max_listpack_entries = 2;
  ZSet zset;
  double ignored;
  for (const auto& [member, score] :
       std::vector<std::pair<std::string, double>>{{"a", 1}, {"b", 2.5}, {"c", -3}, {"bb", 3}}) {
    zset.Add(member, score, {}, limits, &ignored);
  }
  ASSERT_FALSE(zset.is_listpack());
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(&zset))), kZSetSkiplist);
  std::unique_ptr<LoadedValue> loaded = MustDecode(Unhex(kZSetSkiplist), limits);
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->object->encoding_name(), "skiplist");
  EXPECT_THAT(Contents(*loaded->object), ElementsAre("c@-3", "a@1", "b@2.5", "bb@3"));
  // Four members fit the default listpack limits: converted on load, as Redis does.
  loaded = MustDecode(Unhex(kZSetSkiplist));
  EXPECT_EQ(loaded->object->encoding_name(), "listpack");
}

TEST(RdbValuesGoldenTest, Stream) {
  Stream stream;
  const StreamNodeLimits limits;
  StreamID added;
  auto add = [&](StreamID id, std::vector<std::string_view> field_values) {
    ASSERT_EQ(stream.Append(field_values, &id, true, 0, limits, &added), Stream::AppendStatus::kOk);
  };
  add({1, 1}, {"a", "1", "b", "hello"});
  add({1, 2}, {"a", "2", "b", "x"});
  add({2, 0}, {"c", "-5000"});
  add({2, 1}, {"a", "123456789012", "b", ""});
  ASSERT_TRUE(stream.Delete({1, 2}));
  stream.set_max_deleted_id({1, 2});
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(&stream))), kStreamNode);
  std::unique_ptr<LoadedValue> loaded = MustDecode(Unhex(kStreamNode));
  ASSERT_NE(loaded, nullptr);
  EXPECT_THAT(Contents(*loaded->object), ElementsAre("1-1", "2-0", "2-1"));
  const auto& copy = static_cast<const Stream&>(*loaded->object);
  EXPECT_EQ(copy.last_id(), (StreamID{2, 1}));
  EXPECT_EQ(copy.first_id(), (StreamID{1, 1}));
  EXPECT_EQ(copy.max_deleted_id(), (StreamID{1, 2}));
  EXPECT_EQ(copy.entries_added(), 4u);
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(loaded->object.get()))), kStreamNode);
  // Version 1 (STREAM_LISTPACKS): no first ID, max deleted ID or entries added; they are derived.
  std::string v1 = Unhex(kStreamNode);
  v1[0] = 0x0f;
  v1.erase(v1.size() - 6, 5);  // first ms/seq, max deleted ms/seq, entries added
  loaded = MustDecode(v1);
  ASSERT_NE(loaded, nullptr);
  const auto& old = static_cast<const Stream&>(*loaded->object);
  EXPECT_EQ(old.first_id(), (StreamID{1, 1}));
  EXPECT_EQ(old.entries_added(), 3u);
  // An empty stream (every entry deleted) is a key, unlike empty collections.
  Stream empty;
  add({5, 5}, {"f", "v"});
  EXPECT_EQ(MustDecode(EncodeValue(ObjectRecord(&empty)))->kind, LoadedValue::Kind::kObject);
}

TEST(RdbValuesGoldenTest, Lists) {
  List one(-2);
  for (const char* e :
       {"a", "b", "1", "2", "-100", "hello world", "", "9223372036854775807", "4096", "-4097"}) {
    one.Push(ListEnd::kTail, e);
  }
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(&one))), kListOneNode);
  EXPECT_EQ(DecodedContents(Unhex(kListOneNode)), Contents(one));

  List compressible(-2);
  const std::string element = StrCat("abcdefgh", "abcdefgh", "abcdefgh", "abcdefgh");
  for (int i = 0; i < 40; ++i) compressible.Push(ListEnd::kTail, element);
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(&compressible))), kListLzf);
  EXPECT_EQ(DecodedContents(Unhex(kListLzf)), Contents(compressible));

  List three(2);
  for (const char* e : {"a", "b", "c", "d", "e"}) three.Push(ListEnd::kTail, e);
  ASSERT_EQ(three.node_count(), 3u);
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(&three))), kListThreeNodes);
  CollectionLimits limits;
  limits.list_max_listpack_size = 2;
  std::unique_ptr<LoadedValue> loaded = MustDecode(Unhex(kListThreeNodes), limits);
  ASSERT_NE(loaded, nullptr);
  EXPECT_THAT(Contents(*loaded->object), ElementsAre("a", "b", "c", "d", "e"));
  EXPECT_EQ(static_cast<const List&>(*loaded->object).node_count(), 3u);
}

// --- Round trips --------------------------------------------------------------------------------

std::string RandomBytes(std::mt19937_64& rng, size_t size) {
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

TEST(RdbValuesRoundTripTest, LargeCollections) {
  std::mt19937_64 rng(7);
  CollectionLimits limits;
  for (bool compress : {true, false}) {
    SCOPED_TRACE(compress);
    // A hashtable hash with binary fields and values, some long.
    Hash hash;
    for (int i = 0; i < 2000; ++i) {
      hash.Set(StrCat("field", i, RandomBytes(rng, i % 7)), RandomBytes(rng, i % 300), limits);
    }
    ASSERT_FALSE(hash.is_listpack());
    std::unique_ptr<LoadedValue> loaded = MustDecode(EncodeValue(ObjectRecord(&hash), compress));
    ASSERT_NE(loaded, nullptr);
    EXPECT_EQ(loaded->object->encoding_name(), "hashtable");
    EXPECT_EQ(Contents(*loaded->object), Contents(hash));

    // Sets: integers past the intset limit, and binary strings.
    Set ints, strings;
    for (int i = 0; i < 3000; ++i) ints.Add(StrCat(i * 7919 - 100000), limits);
    for (int i = 0; i < 3000; ++i) strings.Add(StrCat(i, RandomBytes(rng, 1 + i % 90)), limits);
    for (const Set* set : {&ints, &strings}) {
      ASSERT_EQ(set->encoding(), Set::Encoding::kHashtable);
      loaded = MustDecode(EncodeValue(ObjectRecord(set), compress));
      ASSERT_NE(loaded, nullptr);
      EXPECT_EQ(loaded->object->encoding_name(), "hashtable");
      EXPECT_EQ(Contents(*loaded->object), Contents(*set));
    }

    // A skiplist sorted set with binary members and scores of every kind.
    ZSet zset;
    double ignored;
    for (int i = 0; i < 5000; ++i) {
      const double score = i % 5 == 0   ? static_cast<double>(i)
                           : i % 5 == 1 ? std::ldexp(static_cast<double>(rng() % 1000), -7)
                           : i % 5 == 2 ? -1e300 * (i % 3)
                                        : static_cast<double>(rng() % 100) / 3;
      zset.Add(StrCat(RandomBytes(rng, i % 20), i), score, {}, limits, &ignored);
    }
    ASSERT_FALSE(zset.is_listpack());
    loaded = MustDecode(EncodeValue(ObjectRecord(&zset), compress));
    ASSERT_NE(loaded, nullptr);
    EXPECT_EQ(loaded->object->encoding_name(), "skiplist");
    EXPECT_EQ(Contents(*loaded->object), Contents(zset));

    // A long list: many nodes, the middle ones compressed in memory.
    List list(-2);
    for (int i = 0; i < 100000; ++i) {
      list.Push(ListEnd::kTail, i % 3 == 0 ? StrCat(i) : StrCat("element-", i % 1000));
    }
    list.Push(ListEnd::kTail, RandomBytes(rng, 100000));  // A node of its own.
    ASSERT_GT(list.node_count(), 10u);
    bool any_compressed = false;
    for (size_t i = 0; i < list.node_count(); ++i) any_compressed |= list.IsNodeCompressed(i);
    ASSERT_TRUE(any_compressed);
    const std::string bytes = EncodeValue(ObjectRecord(&list), compress);
    loaded = MustDecode(bytes);
    ASSERT_NE(loaded, nullptr);
    EXPECT_EQ(Contents(*loaded->object), Contents(list));
    EXPECT_TRUE(static_cast<const List&>(*loaded->object).CheckInvariants());

    // Big strings, compressible and not.
    for (const std::string& big : {std::string(3 << 20, 'z'), RandomBytes(rng, 1 << 20)}) {
      loaded = MustDecode(EncodeValue(BytesRecord(ValueKind::kStringExternal, big), compress));
      ASSERT_NE(loaded, nullptr);
      EXPECT_EQ(loaded->string, big);
    }
  }
}

// Elements over the plain-node threshold (quicklist-packed-threshold, 1 GiB by default) are
// written as plain nodes; the reader must take them back whatever their size unless the caller
// caps strings. Here with the threshold lowered to 64 bytes.
TEST(RdbValuesRoundTripTest, PlainNodesRoundTrip) {
  std::mt19937_64 rng(5);
  List list(1);  // One element per node.
  const std::string big = RandomBytes(rng, 100);
  for (const std::string& e : {std::string("a"), big, std::string(70, 'c'), std::string("b")}) {
    list.Push(ListEnd::kTail, e);
  }
  std::string bytes;
  RdbWriter writer(
      [&](std::string_view b) {
        bytes.append(b);
        return absl::OkStatus();
      },
      RdbWriter::Options{.compress = true, .plain_node_threshold = 64});
  WriteValue(writer, ObjectRecord(&list));
  ASSERT_TRUE(writer.Flush().ok());
  // Container 1, then the element as an RDB string (raw: random bytes do not compress).
  EXPECT_NE(bytes.find(StrCat("\x01\x40\x64"sv, big)), std::string::npos) << Hex(bytes);
  std::unique_ptr<LoadedValue> loaded = MustDecode(bytes);
  ASSERT_NE(loaded, nullptr);
  EXPECT_THAT(Contents(*loaded->object), ElementsAre("a", big, std::string(70, 'c'), "b"));

  RdbReader capped(std::string_view(bytes).substr(1));
  EXPECT_THAT(ReadValue(capped, kTypeListQuicklist2, {}, 99).status().message(),
              HasSubstr("string length over the limit"));
  RdbReader at_cap(std::string_view(bytes).substr(1));
  EXPECT_TRUE(ReadValue(at_cap, kTypeListQuicklist2, {}, 100).ok());
}

// WriteValue flushes between elements: a large collection reaches the sink in pieces of about
// flush_bytes, not built whole in the writer's buffer. Only single strings of at least
// flush_bytes (passed to the sink as they are) make larger pieces.
TEST(RdbValuesRoundTripTest, LargeValuesReachTheSinkInPieces) {
  std::mt19937_64 rng(13);
  CollectionLimits limits;
  Hash hash;
  for (int i = 0; i < 2000; ++i) hash.Set(StrCat("field", i), RandomBytes(rng, i % 300), limits);
  Set ints, strings;
  for (int i = 0; i < 3000; ++i) ints.Add(StrCat(i * 7919 - 100000), limits);
  for (int i = 0; i < 3000; ++i) strings.Add(StrCat(i, RandomBytes(rng, 1 + i % 90)), limits);
  ZSet zset;
  double ignored;
  for (int i = 0; i < 5000; ++i) zset.Add(StrCat("member", i), i / 3.0, {}, limits, &ignored);
  List list(-2);
  for (int i = 0; i < 50000; ++i) list.Push(ListEnd::kTail, StrCat("element-", i));
  list.Push(ListEnd::kTail, RandomBytes(rng, 100000));  // A node of its own, one large blob.
  const std::string big = RandomBytes(rng, 300000);
  const std::vector<RecordView> records = {
      ObjectRecord(&hash), ObjectRecord(&ints), ObjectRecord(&strings),
      ObjectRecord(&zset), ObjectRecord(&list), BytesRecord(ValueKind::kStringRaw, big)};

  constexpr size_t kFlush = 16 * 1024;  // Above a list node's 8 KiB.
  RecordingSink sink;
  RdbWriter writer(sink.AsSink(), RdbWriter::Options{.compress = false}, kFlush);
  std::vector<size_t>& pieces = sink.pieces;
  std::string& out = sink.bytes;
  for (const RecordView& record : records) {
    WriteValue(writer, record);
    ASSERT_TRUE(writer.MaybeFlush().ok());
  }
  ASSERT_TRUE(writer.Flush().ok());
  ASSERT_GT(out.size(), 20 * kFlush);
  std::vector<size_t> large;
  for (size_t piece : pieces) {
    if (piece > 2 * kFlush) large.push_back(piece);
  }
  // The list's 100000-byte node and the 300000-byte string, nothing else.
  ASSERT_EQ(large.size(), 2u);
  EXPECT_GT(large[0], 100000u);
  EXPECT_EQ(large[1], big.size());

  RdbReader reader(out);
  for (const RecordView& record : records) {
    absl::StatusOr<uint8_t> type = reader.ReadByte();
    ASSERT_TRUE(type.ok());
    absl::StatusOr<LoadedValue> value = ReadValue(reader, *type, limits);
    ASSERT_TRUE(value.ok()) << value.status();
    if (record.kind == ValueKind::kObject) {
      EXPECT_EQ(Contents(*value->object), Contents(*record.object));
    } else {
      EXPECT_EQ(value->string, big);
    }
  }
  EXPECT_EQ(reader.offset(), out.size());
}

// Allocation failures come back as ResourceExhausted with the offset, never as an exception.
TEST(RdbValuesCorruptTest, OutOfMemoryIsAStatus) {
  const std::string bytes = EncodeValue(BytesRecord(ValueKind::kStringRaw, std::string(50, 'x')),
                                        /*compress=*/false);
  size_t at = 0;
  RdbReader reader([&](char* buffer, size_t capacity) -> absl::StatusOr<size_t> {
    if (at >= 10) throw std::bad_alloc();  // Stands in for any allocation in the loader.
    const size_t n = std::min<size_t>(capacity, 10);
    std::memcpy(buffer, bytes.data() + at, n);
    at += n;
    return n;
  });
  ASSERT_EQ(*reader.ReadByte(), kTypeString);
  absl::StatusOr<LoadedValue> value = ReadValue(reader, kTypeString, {});
  EXPECT_TRUE(absl::IsResourceExhausted(value.status())) << value.status();
  EXPECT_THAT(value.status().message(), HasSubstr("begins at offset 1"));
}

TEST(RdbValuesRoundTripTest, CompactEncodingsKeepTheirBytes) {
  std::mt19937_64 rng(11);
  CollectionLimits limits;
  for (int round = 0; round < 200; ++round) {
    Hash hash;
    ZSet zset;
    Set set;
    double ignored;
    const int n = 1 + static_cast<int>(rng() % 100);
    for (int i = 0; i < n; ++i) {
      const std::string value = rng() % 2 ? StrCat(static_cast<int64_t>(rng()) >> (rng() % 64))
                                          : RandomBytes(rng, rng() % 40);
      hash.Set(StrCat("f", i), value, limits);
      zset.Add(value,
               static_cast<double>(static_cast<int64_t>(rng() % 2000) - 1000) / (rng() % 2 ? 1 : 8),
               {}, limits, &ignored);
      set.Add(value, limits);
    }
    for (const Object* object : std::initializer_list<const Object*>{&hash, &zset, &set}) {
      std::unique_ptr<LoadedValue> loaded = MustDecode(EncodeValue(ObjectRecord(object)));
      ASSERT_NE(loaded, nullptr);
      EXPECT_EQ(Contents(*loaded->object), Contents(*object));
      EXPECT_EQ(loaded->object->encoding_name(), object->encoding_name());
    }
    // Hashes and sorted sets come back as the very same compact bytes.
    std::unique_ptr<LoadedValue> loaded = MustDecode(EncodeValue(ObjectRecord(&hash)));
    EXPECT_EQ(static_cast<const Hash&>(*loaded->object).CompactBytes(), hash.CompactBytes());
    loaded = MustDecode(EncodeValue(ObjectRecord(&zset)));
    EXPECT_EQ(static_cast<const ZSet&>(*loaded->object).CompactBytes(), zset.CompactBytes());
  }
}

TEST(RdbValuesRoundTripTest, ConvertsUnderTheLimitsOnLoad) {
  CollectionLimits limits;
  Hash hash;
  Set ints;
  ZSet zset;
  List list(-2);
  double ignored;
  for (int i = 0; i < 10; ++i) {
    hash.Set(StrCat("f", i), "v", limits);
    ints.Add(StrCat(i), limits);
    zset.Add(StrCat("m", i), i, {}, limits, &ignored);
    list.Push(ListEnd::kTail, StrCat(i));
  }
  CollectionLimits small;
  small.hash_max_listpack_entries = 5;
  small.set_max_intset_entries = 5;
  small.set_max_listpack_entries = 5;
  small.zset_max_listpack_entries = 5;
  small.list_max_listpack_size = 3;
  EXPECT_EQ(MustDecode(EncodeValue(ObjectRecord(&hash)), small)->object->encoding_name(),
            "hashtable");
  EXPECT_EQ(MustDecode(EncodeValue(ObjectRecord(&ints)), small)->object->encoding_name(),
            "hashtable");
  EXPECT_EQ(MustDecode(EncodeValue(ObjectRecord(&zset)), small)->object->encoding_name(),
            "skiplist");
  std::unique_ptr<LoadedValue> loaded = MustDecode(EncodeValue(ObjectRecord(&list)), small);
  EXPECT_EQ(static_cast<const List&>(*loaded->object).node_count(), 4u);
  // Values too long for a listpack.
  CollectionLimits short_values;
  short_values.hash_max_listpack_value = 1;
  EXPECT_EQ(MustDecode(EncodeValue(ObjectRecord(&hash)), short_values)->object->encoding_name(),
            "hashtable");
}

TEST(RdbValuesRoundTripTest, PlainNodesLoad) {
  // A plain node (container 1) holds one element as it is.
  const std::string_view bytes =
      "\x12\x02\x01\x05hello\x02\x0d\x0d\x00\x00\x00\x02\x00\x81\x61\x02"
      "\x81\x62\x02\xff"sv;
  std::unique_ptr<LoadedValue> loaded = MustDecode(bytes);
  ASSERT_NE(loaded, nullptr);
  EXPECT_THAT(Contents(*loaded->object), ElementsAre("hello", "a", "b"));
}

// XADD g 1-0 f v1 ... 4-0 f v4; XGROUP CREATE g grp 0; XGROUP CREATE g other $;
// XREADGROUP GROUP grp alice COUNT 2 STREAMS g >; XREADGROUP GROUP grp bob COUNT 1 STREAMS g >;
// XGROUP CREATECONSUMER g grp carol (the node LZF-compressed; times are the server's clock)
constexpr char kStreamGroups[] =
    "13011000000000000000010000000000000000c339404211420000001900040100010101816602000102200a06"
    "00018276310304200b0001600b0032600b401902827633600b000360170034200b00ff04040001000000040203"
    "6772700300030300000000000000010000000000000000bb098b4ba20100000100000000000000020000000000"
    "000000bb098b4ba20100000100000000000000030000000000000000c2098b4ba2010000010305616c696365bb"
    "098b4ba201000002000000000000000100000000000000000000000000000002000000000000000003626f62c2"
    "098b4ba20100000100000000000000030000000000000000056361726f6cc9098b4ba201000000056f74686572"
    "040081ffffffffffffffff0000";

TEST(RdbValuesGoldenTest, StreamGroups) {
  std::unique_ptr<LoadedValue> loaded = MustDecode(Unhex(kStreamGroups));
  ASSERT_NE(loaded, nullptr);
  auto& stream = static_cast<Stream&>(*loaded->object);
  ASSERT_EQ(stream.groups().size(), 2u);
  StreamGroup* grp = stream.FindGroup("grp");
  ASSERT_NE(grp, nullptr);
  EXPECT_EQ(grp->last_id, (StreamID{3, 0}));
  EXPECT_EQ(grp->entries_read, 3);
  ASSERT_EQ(grp->pel.size(), 3u);
  EXPECT_EQ(grp->pel.at({1, 0})->consumer->name, "alice");
  EXPECT_EQ(grp->pel.at({3, 0})->consumer->name, "bob");
  ASSERT_EQ(grp->consumers.size(), 3u);
  EXPECT_EQ(grp->FindConsumer("alice")->pel.size(), 2u);
  EXPECT_TRUE(grp->FindConsumer("carol")->pel.empty());
  StreamGroup* other = stream.FindGroup("other");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->last_id, (StreamID{4, 0}));
  EXPECT_EQ(other->entries_read, StreamGroup::kInvalidEntriesRead);
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(loaded->object.get()))), kStreamGroups);
  // A copy (COPY) keeps the groups, consumers and pending entries, sharing nothing.
  std::unique_ptr<Object> copy(stream.Clone());
  stream.DestroyGroup("grp");
  EXPECT_EQ(Hex(EncodeValue(ObjectRecord(copy.get()))), kStreamGroups);
}

// --- Refusals -----------------------------------------------------------------------------------

std::string Blob(std::string_view bytes) {
  std::string out;
  RdbWriter writer(
      [&](std::string_view b) {
        out.append(b);
        return absl::OkStatus();
      },
      RdbWriter::Options{.compress = false});
  writer.WriteString(bytes);
  (void)writer.Flush();
  return out;
}

std::string ErrorOf(std::string_view bytes, const CollectionLimits& limits = {}) {
  absl::StatusOr<LoadedValue> value = DecodeValue(bytes, limits);
  return value.ok() ? "ok" : std::string(value.status().message());
}

std::string RedisListpack(const std::vector<std::string>& entries) {
  std::string out;
  RedisListpackBuilder builder(&out);
  for (const std::string& e : entries) builder.Add(e);
  builder.Finish();
  return out;
}

TEST(RdbValuesCorruptTest, Duplicates) {
  EXPECT_THAT(ErrorOf("\x02\x02\x01x\x01x"sv), HasSubstr("Duplicate set members detected"));
  EXPECT_THAT(ErrorOf("\x02\x02\xc0\x01\x01\x31"sv), HasSubstr("Duplicate set members"));
  EXPECT_THAT(ErrorOf("\x04\x02\x01"
                      "f\x01v\x01"
                      "f\x01w"sv),
              HasSubstr("Duplicate hash fields detected"));
  const std::string one = "\x00\x00\x00\x00\x00\x00\xf0\x3f"s;
  EXPECT_THAT(ErrorOf("\x05\x02\x01m" + one + "\x01m" + one),
              HasSubstr("Duplicate zset fields detected"));
  EXPECT_THAT(ErrorOf("\x03\x02\x01m\x01"
                      "1\x01m\x01"
                      "2"sv),
              HasSubstr("Duplicate zset fields"));
  EXPECT_THAT(ErrorOf("\x10" + Blob(RedisListpack({"f", "1", "f", "2"}))),
              HasSubstr("Hash listpack integrity check failed"));
  EXPECT_THAT(ErrorOf("\x11" + Blob(RedisListpack({"m", "1", "m", "2"}))),
              HasSubstr("Zset listpack integrity check failed"));
  // A big hash (hashtable from the start) too.
  std::string big = "\x04\x80\x00\x00\x02\x02"s;  // 514 pairs.
  for (int i = 0; i < 513; ++i) big += Blob(StrCat("f", i)) + Blob("v");
  big += Blob("f7") + Blob("v");
  EXPECT_THAT(ErrorOf(big), HasSubstr("Duplicate hash fields detected"));
}

TEST(RdbValuesCorruptTest, BadScores) {
  const std::string nan = "\x00\x00\x00\x00\x00\x00\xf8\x7f"s;
  EXPECT_THAT(ErrorOf("\x05\x01\x01m" + nan), HasSubstr("Zset with NAN score detected"));
  EXPECT_THAT(ErrorOf("\x03\x01\x01m\xfd"sv), HasSubstr("NAN"));
  EXPECT_THAT(ErrorOf("\x11" + Blob(RedisListpack({"m", "x1"}))),
              HasSubstr("Zset listpack integrity check failed"));
  EXPECT_THAT(ErrorOf("\x11" + Blob(RedisListpack({"m", "nan"}))),
              HasSubstr("Zset listpack integrity check failed"));
}

TEST(RdbValuesCorruptTest, OddPairs) {
  EXPECT_THAT(ErrorOf("\x10" + Blob(RedisListpack({"f", "1", "g"}))),
              HasSubstr("Hash listpack integrity check failed"));
  EXPECT_THAT(ErrorOf("\x11" + Blob(RedisListpack({"m"}))),
              HasSubstr("Zset listpack integrity check failed"));
}

TEST(RdbValuesCorruptTest, Intsets) {
  auto intset = [](uint32_t width, uint32_t count, const std::vector<int64_t>& values) {
    std::string out;
    auto put = [&](uint64_t v, int bytes) {
      for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
    };
    put(width, 4);
    put(count, 4);
    for (int64_t v : values) put(static_cast<uint64_t>(v), static_cast<int>(width));
    return "\x0b" + Blob(out);
  };
  EXPECT_EQ(ErrorOf(intset(2, 2, {1, 2})), "ok");
  for (const std::string& bad :
       {intset(2, 2, {2, 1}), intset(2, 2, {1, 1}), intset(3, 1, {1}), intset(2, 3, {1, 2}),
        intset(2, 0, {}), intset(8, 1, {}), "\x0b" + Blob("\x02\x00\x00")}) {
    EXPECT_THAT(ErrorOf(bad), HasSubstr("Intset integrity check failed")) << Hex(bad);
  }
}

TEST(RdbValuesCorruptTest, Listpacks) {
  const std::string good = RedisListpack({"f", "v"});
  EXPECT_EQ(ErrorOf("\x10" + Blob(good)), "ok");
  // Every truncation and every single-byte change of the blob: an error or a valid hash, never
  // a crash.
  for (size_t size = 0; size < good.size(); ++size) {
    EXPECT_THAT(ErrorOf("\x10" + Blob(good.substr(0, size))), HasSubstr("integrity check"));
  }
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      (void)ErrorOf("\x10" + Blob(bad));
      (void)ErrorOf("\x11" + Blob(bad));
      (void)ErrorOf("\x12\x01\x02" + Blob(bad));
    }
  }
  EXPECT_THAT(ErrorOf("\x12\x01\x02" + Blob(good.substr(0, good.size() - 1))),
              HasSubstr("Listpack integrity check failed"));
  EXPECT_THAT(ErrorOf("\x12\x01\x03" + Blob(good)), HasSubstr("Quicklist integrity check failed"));
  EXPECT_THAT(ErrorOf("\x12\x01\x02\x00"sv), HasSubstr("Quicklist node is empty"));
}

// A ziplist of `entries` (strings of < 64 bytes, 1-byte prevlens), as Redis's ziplist.c lays
// it out.
std::string Ziplist(const std::vector<std::string>& entries) {
  std::string body;
  size_t prev = 0, tail = 10;
  for (const std::string& e : entries) {
    tail = 10 + body.size();
    const std::string entry =
        std::string(1, static_cast<char>(prev)) + std::string(1, static_cast<char>(e.size())) + e;
    body += entry;
    prev = entry.size();
  }
  std::string out;
  auto put = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  };
  put(10 + body.size() + 1, 4);
  put(tail, 4);
  put(entries.size(), 2);
  return out + body + "\xff";
}

TEST(RdbValuesCorruptTest, Ziplists) {
  const std::string zl = Ziplist({"a", "bb", "ccc"});
  EXPECT_THAT(DecodedContents("\x0a" + Blob(zl)), ElementsAre("a", "bb", "ccc"));
  EXPECT_THAT(DecodedContents("\x0d" + Blob(Ziplist({"f", "v"}))), ElementsAre("f=v"));
  EXPECT_THAT(DecodedContents("\x0c" + Blob(Ziplist({"m", "1.5"}))), ElementsAre("m@1.5"));
  EXPECT_THAT(DecodedContents("\x0e\x01" + Blob(zl)), ElementsAre("a", "bb", "ccc"));
  for (size_t size = 0; size < zl.size(); ++size) {
    EXPECT_THAT(ErrorOf("\x0a" + Blob(zl.substr(0, size))), HasSubstr("integrity check failed"));
  }
  for (size_t i = 0; i < zl.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = zl;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      (void)ErrorOf("\x0a" + Blob(bad));
      (void)ErrorOf("\x0c" + Blob(bad));
      (void)ErrorOf("\x0d" + Blob(bad));
      (void)ErrorOf("\x0e\x01" + Blob(bad));
    }
  }
  std::string wrong_prevlen = zl;
  wrong_prevlen[10 + 3] = 5;  // The second entry's prevlen.
  EXPECT_THAT(ErrorOf("\x0a" + Blob(wrong_prevlen)),
              HasSubstr("List ziplist integrity check failed"));
  std::string wrong_tail = zl;
  wrong_tail[4] = 10;
  EXPECT_THAT(ErrorOf("\x0a" + Blob(wrong_tail)), HasSubstr("integrity check failed"));
  EXPECT_THAT(ErrorOf("\x0d" + Blob(Ziplist({"f", "v", "f", "w"}))),
              HasSubstr("Hash ziplist integrity check failed"));
  EXPECT_THAT(ErrorOf("\x0c" + Blob(Ziplist({"m", "1", "m", "2"}))),
              HasSubstr("Zset ziplist integrity check failed"));
  EXPECT_THAT(ErrorOf("\x0d" + Blob(Ziplist({"f", "v", "g"}))),
              HasSubstr("Hash ziplist integrity check failed"));
  EXPECT_THAT(ErrorOf("\x0e\x01" + Blob(wrong_prevlen)),
              HasSubstr("Ziplist integrity check failed"));
}

TEST(RdbValuesCorruptTest, Zipmaps) {
  const std::string good =
      "\x02\x02"
      "f1\x02\x00"
      "v1\x02"
      "f2\x02\x01"
      "v2x\xff"s;
  EXPECT_THAT(DecodedContents("\x09" + Blob(good)), ElementsAre("f1=v1", "f2=v2"));
  EXPECT_THAT(ErrorOf("\x09" + Blob("\x02\x02"
                                    "f1\x02\x00"
                                    "v1\x02"
                                    "f1\x02\x00"
                                    "v2\xff"s)),
              HasSubstr("Hash zipmap with dup elements"));
  EXPECT_THAT(ErrorOf("\x09" + Blob("\x00\xff"s)), HasSubstr("Zipmap integrity check failed"));
  EXPECT_THAT(ErrorOf("\x09" + Blob("\x03" + good.substr(1))),
              HasSubstr("Zipmap integrity check failed"));
  for (size_t size = 0; size < good.size(); ++size) {
    EXPECT_THAT(ErrorOf("\x09" + Blob(good.substr(0, size))), HasSubstr("Zipmap"));
  }
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      (void)ErrorOf("\x09" + Blob(bad));
    }
  }
}

TEST(RdbValuesCorruptTest, EmptyCollections) {
  for (std::string_view bytes : {"\x01\x00"sv, "\x02\x00"sv, "\x03\x00"sv, "\x04\x00"sv,
                                 "\x05\x00"sv, "\x0e\x00"sv, "\x12\x00"sv}) {
    absl::StatusOr<LoadedValue> value = DecodeValue(bytes);
    ASSERT_TRUE(value.ok()) << value.status();
    EXPECT_EQ(value->kind, LoadedValue::Kind::kEmpty) << Hex(bytes);
  }
  for (const std::string& bytes :
       {"\x10" + Blob(RedisListpack({})), "\x11" + Blob(RedisListpack({})),
        "\x0a" + Blob(Ziplist({})), "\x0d" + Blob(Ziplist({})), "\x0c" + Blob(Ziplist({})),
        "\x12\x01\x02" + Blob(RedisListpack({}))}) {
    absl::StatusOr<LoadedValue> value = DecodeValue(bytes);
    ASSERT_TRUE(value.ok()) << value.status();
    EXPECT_EQ(value->kind, LoadedValue::Kind::kEmpty) << Hex(bytes);
  }
}

// Stream values whose nodes or metadata are corrupt: each is refused, whatever
// sanitize-dump-payload says (the structure must never walk a bad node).
TEST(RdbValuesCorruptTest, Streams) {
  const std::string good = Unhex(kStreamNode);
  const std::string key = good.substr(3, 16);
  const std::string tail = Unhex("030201010101020400");
  auto stream_of = [&](const std::string& listpack, const std::string& metadata) {
    return "\x13\x01\x10"s + key + Blob(listpack).substr(0) + metadata;
  };
  auto node = [](const std::vector<std::string>& entries) { return RedisListpack(entries); };
  EXPECT_EQ(ErrorOf(good), "ok");
  // The master entry: counts, fields, terminator.
  EXPECT_THAT(ErrorOf(stream_of(node({"1", "0", "1", "f", "0", "2", "0", "0", "v", "4"}), tail)),
              "ok");
  for (const auto& entries : std::vector<std::vector<std::string>>{
           {},                                                   // empty listpack
           {"1", "0", "1", "f"},                                 // no terminator
           {"1", "0", "1", "f", "7", "2", "0", "0", "v", "4"},   // terminator not 0
           {"-1", "0", "1", "f", "0", "2", "0", "0", "v", "4"},  // negative count
           {"1", "0", "-1", "f", "0", "2", "0", "0", "v", "4"},  // negative field count
           {"2", "0", "1", "f", "0", "2", "0", "0", "v", "4"},   // fewer entries than counted
           {"1", "0", "1", "f", "0", "2", "0", "0", "v", "5"},   // bad lp-count
           {"1", "0", "1", "f", "0", "x", "0", "0", "v", "4"},   // flags not an integer
           {"1", "0", "1", "f", "0", "0", "0", "0", "-3", "g", "v", "3"},  // negative fields
           {"1", "0", "1", "f", "0", "0", "0", "0", "900000", "g", "v", "3"},
           {"1", "0", "1", "f", "0", "2", "0", "0", "v", "4", "extra"},
       }) {
    EXPECT_NE(ErrorOf(stream_of(node(entries), tail)), "ok") << ::testing::PrintToString(entries);
  }
  // Listpack bytes that are not a listpack.
  std::string broken = node({"1", "0", "1", "f", "0", "2", "0", "0", "v", "4"});
  broken[broken.size() - 2] = '\x7f';
  EXPECT_NE(ErrorOf(stream_of(broken, tail)), "ok");
  // A node key that is not 16 bytes; the same node twice; a length with no nodes.
  EXPECT_THAT(ErrorOf("\x13\x01\x03"
                      "abc"s +
                      Blob(node({"1"})) + tail),
              HasSubstr("not the size of a stream ID"));
  const std::string one = Blob(node({"1", "0", "1", "f", "0", "2", "0", "0", "v", "4"}));
  EXPECT_THAT(ErrorOf("\x13\x02\x10"s + key + one + "\x10" + key + one + tail),
              HasSubstr("re-added"));
  EXPECT_THAT(ErrorOf("\x13\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00"s),
              HasSubstr("inconsistent"));
  // Consumer groups: duplicates, pending entries owned twice or by no one, a consumer's entry
  // missing from the group's list.
  auto with_groups = [&](auto write_groups) {
    std::string out = good.substr(0, good.size() - 1);  // All but the group count.
    RdbWriter writer(
        [&](std::string_view b) {
          out.append(b);
          return absl::OkStatus();
        },
        RdbWriter::Options{.compress = false});
    write_groups(writer);
    (void)writer.Flush();
    return out;
  };
  auto raw_id = [](RdbWriter& writer, uint64_t ms) {
    std::string raw(16, '\0');
    raw[7] = static_cast<char>(ms);
    writer.WriteRaw(raw);
  };
  auto group = [&](RdbWriter& writer, std::string_view name, std::vector<uint64_t> pel,
                   std::vector<std::pair<std::string, std::vector<uint64_t>>> consumers) {
    writer.WriteString(name);
    writer.WriteLength(2);
    writer.WriteLength(1);
    writer.WriteLength(2);
    writer.WriteLength(pel.size());
    for (uint64_t ms : pel) {
      raw_id(writer, ms);
      writer.WriteMillis(1000);
      writer.WriteLength(1);
    }
    writer.WriteLength(consumers.size());
    for (const auto& [consumer, owned] : consumers) {
      writer.WriteString(consumer);
      writer.WriteMillis(1000);
      writer.WriteLength(owned.size());
      for (uint64_t ms : owned) raw_id(writer, ms);
    }
  };
  EXPECT_EQ(ErrorOf(with_groups([&](RdbWriter& w) {
              w.WriteLength(1);
              group(w, "g", {1, 2}, {{"a", {1}}, {"b", {2}}});
            })),
            "ok");
  EXPECT_THAT(ErrorOf(with_groups([&](RdbWriter& w) {
                w.WriteLength(2);
                group(w, "g", {}, {});
                group(w, "g", {}, {});
              })),
              HasSubstr("Duplicated consumer group name"));
  EXPECT_THAT(ErrorOf(with_groups([&](RdbWriter& w) {
                w.WriteLength(1);
                group(w, "g", {1, 1}, {{"a", {1}}});
              })),
              HasSubstr("Duplicated global PEL entry"));
  EXPECT_THAT(ErrorOf(with_groups([&](RdbWriter& w) {
                w.WriteLength(1);
                group(w, "g", {1}, {{"a", {1}}, {"a", {}}});
              })),
              HasSubstr("Duplicate stream consumer"));
  EXPECT_THAT(ErrorOf(with_groups([&](RdbWriter& w) {
                w.WriteLength(1);
                group(w, "g", {1}, {{"a", {2}}});
              })),
              HasSubstr("not found in group global PEL"));
  EXPECT_THAT(ErrorOf(with_groups([&](RdbWriter& w) {
                w.WriteLength(1);
                group(w, "g", {1}, {{"a", {1}}, {"b", {1}}});
              })),
              HasSubstr("Duplicated consumer PEL entry"));
  EXPECT_THAT(ErrorOf(with_groups([&](RdbWriter& w) {
                w.WriteLength(1);
                group(w, "g", {1, 2}, {{"a", {1}}});
              })),
              HasSubstr("PEL entry without consumer"));
  // Truncated anywhere.
  for (size_t cut = 1; cut < good.size(); ++cut) {
    EXPECT_NE(ErrorOf(good.substr(0, cut)), "ok") << cut;
  }
}

TEST(RdbValuesCorruptTest, UnsupportedAndUnknownTypes) {
  EXPECT_THAT(ErrorOf("\x07\x00"sv), HasSubstr("module values (RDB type 7)"));
  EXPECT_THAT(ErrorOf("\x06\x00"sv), HasSubstr("module values (RDB type 6)"));
  EXPECT_THAT(ErrorOf("\x08\x00"sv), HasSubstr("Unknown RDB encoding type 8 at offset 1"));
  EXPECT_THAT(ErrorOf("\x40\x00"sv), HasSubstr("Unknown RDB encoding type 64"));
}

TEST(RdbValuesCorruptTest, HostileLengthsDoNotAllocate) {
  // Counts of 2^62 elements with nothing behind them: a truncation error, at once.
  for (char type : {'\x01', '\x02', '\x03', '\x04', '\x05', '\x0e', '\x12'}) {
    const std::string bytes = std::string(1, type) + "\x81\x40\x00\x00\x00\x00\x00\x00\x00"s;
    EXPECT_THAT(ErrorOf(bytes), HasSubstr("unexpected end of input")) << static_cast<int>(type);
  }
  EXPECT_THAT(ErrorOf("\x00\x80\x10\x00\x00\x00"sv), HasSubstr("unexpected end of input"));
  // A 4 GiB string is not refused for its length, only for the bytes missing; a caller's cap
  // (proto-max-bulk-len) refuses it at once.
  EXPECT_THAT(ErrorOf("\x00\x80\xff\xff\xff\xff"sv), HasSubstr("unexpected end of input"));
  RdbReader reader("\x80\xff\xff\xff\xff"sv);
  EXPECT_THAT(ReadValue(reader, kTypeString, {}, 512 << 20).status().message(),
              HasSubstr("string length over the limit at offset 5"));
}

TEST(RdbValuesCorruptTest, TruncatedValues) {
  CollectionLimits limits;
  Hash hash;
  hash.Set("f", "v", limits);
  ZSet zset;
  double ignored;
  zset.Add("m", 1.5, {}, limits, &ignored);
  zset.Add("n", 2.5, {}, limits, &ignored);
  List list(-2);
  list.Push(ListEnd::kTail, "x");
  Set set;
  set.Add("7", limits);
  Set strings;
  strings.Add("hello", limits);
  std::vector<std::string> encoded = {EncodeValue(ObjectRecord(&hash)),
                                      EncodeValue(ObjectRecord(&zset)),
                                      EncodeValue(ObjectRecord(&list)),
                                      EncodeValue(ObjectRecord(&set)),
                                      EncodeValue(ObjectRecord(&strings)),
                                      Unhex(kZSetSkiplist),
                                      Unhex(kHashTable),
                                      Unhex(kStrLzf)};
  for (const std::string& bytes : encoded) {
    ASSERT_EQ(ErrorOf(bytes), "ok");
    for (size_t size = 0; size < bytes.size(); ++size) {
      EXPECT_NE(ErrorOf(bytes.substr(0, size)), "ok") << Hex(bytes) << " at " << size;
    }
  }
}

}  // namespace
}  // namespace gigakv::persistence::rdb
