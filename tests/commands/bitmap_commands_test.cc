// Bitmap family: expected replies are those of redis-server 7.0.15 (checked by hand, and by
// tests/e2e/test_differential_bitmap.py on random mixes).
#include "gigakv/store.h"
#include "gmock/gmock.h"
#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

// A stand-in collection: there are no collection types yet, but the WRONGTYPE paths must work.
class FakeList : public Object {
 public:
  KeyType type() const override { return KeyType::kList; }
  std::string_view encoding_name() const override { return "listpack"; }
  size_t MemoryUsage() const override { return 16; }
  size_t Length() const override { return 1; }
  Object* Clone() const override { return new FakeList; }
  void ForEachElement(absl::FunctionRef<void(std::string_view)> fn) const override { fn("x"); }
};

constexpr std::string_view kWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value";
constexpr std::string_view kBadOffset = "-ERR bit offset is not an integer or out of range";
constexpr std::string_view kBadType =
    "-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but "
    "i64 is.";

class BitmapCommandsTest : public CommandTest {
 protected:
  void PutList(std::string_view key) {
    Store& store = server_.keyspace().store();
    store.WithShardOf(key, [&](Shard& shard) {
      ValueSpec spec;
      spec.kind = ValueKind::kObject;
      spec.object = new FakeList;
      shard.Table(0).Put(key, store.Hash(key), spec, 0, 0);
    });
  }
  std::string Value(const std::string& key) { return Run({"GET", key}).str; }
};

TEST_F(BitmapCommandsTest, SetBitGetBit) {
  EXPECT_EQ(Reply({"SETBIT", "k", "7", "1"}), ":0");
  EXPECT_EQ(Value("k"), "\x01");
  EXPECT_EQ(Reply({"SETBIT", "k", "7", "0"}), ":1");
  EXPECT_EQ(Value("k"), std::string("\0", 1));
  EXPECT_EQ(Reply({"SETBIT", "k", "7", "0"}), ":0");
  EXPECT_EQ(Reply({"SETBIT", "k", "100", "1"}), ":0");
  EXPECT_EQ(Reply({"STRLEN", "k"}), ":13");
  EXPECT_EQ(Reply({"GETBIT", "k", "100"}), ":1");
  EXPECT_EQ(Reply({"GETBIT", "k", "101"}), ":0");
  EXPECT_EQ(Reply({"GETBIT", "k", "4294967295"}), ":0");
  EXPECT_EQ(Reply({"GETBIT", "missing", "5"}), ":0");
  EXPECT_EQ(Reply({"SETBIT", "new", "7", "0"}), ":0");  // Creates the key even for a 0.
  EXPECT_EQ(Value("new"), std::string("\0", 1));
  // Bits of integer-encoded values are those of their decimal text.
  Run({"SET", "i", "123"});
  EXPECT_EQ(Reply({"GETBIT", "i", "2"}), ":1");
}

TEST_F(BitmapCommandsTest, SetBitErrors) {
  for (const char* offset : {"abc", "-1", "4294967296", "+1", "01", "", "1.0"}) {
    EXPECT_EQ(Reply({"SETBIT", "k", offset, "1"}), kBadOffset) << offset;
    EXPECT_EQ(Reply({"GETBIT", "k", offset}), kBadOffset) << offset;
  }
  for (const char* bit : {"2", "-1", "a", "", "1.0"}) {
    EXPECT_EQ(Reply({"SETBIT", "k", "1", bit}), "-ERR bit is not an integer or out of range");
  }
  EXPECT_EQ(Reply({"SETBIT", "k", "x", "a"}), kBadOffset);  // The offset is checked first.
  EXPECT_EQ(Reply({"EXISTS", "k"}), ":0");
  EXPECT_EQ(Reply({"SETBIT", "k", "1"}), "-ERR wrong number of arguments for 'setbit' command");
  EXPECT_EQ(Reply({"GETBIT", "k"}), "-ERR wrong number of arguments for 'getbit' command");
}

TEST_F(BitmapCommandsTest, OffsetLimitFollowsProtoMaxBulkLen) {
  EXPECT_EQ(Reply({"CONFIG", "SET", "proto-max-bulk-len", "1048576"}), "+OK");
  EXPECT_EQ(Reply({"SETBIT", "k", "8388608", "1"}), kBadOffset);
  EXPECT_EQ(Reply({"SETBIT", "k", "8388607", "1"}), ":0");
  EXPECT_EQ(Reply({"STRLEN", "k"}), ":1048576");
}

TEST_F(BitmapCommandsTest, WritesKeepTtlAndBecomeRaw) {
  Run({"SET", "k", "123"});
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "k"}), "\"int\"");
  Run({"EXPIRE", "k", "100"});
  EXPECT_EQ(Reply({"SETBIT", "k", "0", "0"}), ":0");  // No change, still unshared to raw.
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "k"}), "\"raw\"");
  EXPECT_EQ(Reply({"GET", "k"}), "\"123\"");
  EXPECT_EQ(Reply({"SETBIT", "k", "100", "1"}), ":0");
  EXPECT_EQ(Reply({"TTL", "k"}), ":100");
  EXPECT_EQ(Reply({"BITFIELD", "k", "SET", "u8", "200", "1"}), "[:0]");
  EXPECT_EQ(Reply({"TTL", "k"}), ":100");
  Run({"SET", "e", "ab"});
  EXPECT_EQ(Reply({"BITFIELD", "e", "SET", "u8", "0", "97"}), "[:97]");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "e"}), "\"raw\"");
  clock_.AdvanceMs(100'000);
  EXPECT_EQ(Reply({"EXISTS", "k"}), ":0");
}

TEST_F(BitmapCommandsTest, LargeBitmapsStayIntactAcrossWrites) {
  // Past the inline limit the value lives outside the arena; writes move it without copying.
  EXPECT_EQ(Reply({"SETBIT", "big", "1000000", "1"}), ":0");
  Run({"PEXPIRE", "big", "5000"});
  EXPECT_EQ(Reply({"SETBIT", "big", "7", "1"}), ":0");
  EXPECT_EQ(Reply({"SETBIT", "big", "7", "1"}), ":1");
  EXPECT_EQ(Reply({"BITCOUNT", "big"}), ":2");
  EXPECT_EQ(Reply({"BITFIELD", "big", "INCRBY", "u8", "#2", "5", "GET", "u8", "#2"}), "[:5, :5]");
  EXPECT_EQ(Reply({"BITCOUNT", "big"}), ":4");
  EXPECT_EQ(Reply({"BITPOS", "big", "1", "1"}), ":21");
  EXPECT_EQ(Reply({"STRLEN", "big"}), ":125001");
  EXPECT_EQ(Reply({"PTTL", "big"}), ":5000");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "big"}), "\"raw\"");
}

TEST_F(BitmapCommandsTest, BitCount) {
  Run({"SET", "s", "foobar"});
  EXPECT_EQ(Reply({"BITCOUNT", "s"}), ":26");
  EXPECT_EQ(Reply({"BITCOUNT", "s", "0", "0"}), ":4");
  EXPECT_EQ(Reply({"BITCOUNT", "s", "1", "1"}), ":6");
  EXPECT_EQ(Reply({"BITCOUNT", "s", "1", "1", "BYTE"}), ":6");
  EXPECT_EQ(Reply({"BITCOUNT", "s", "5", "30", "BIT"}), ":17");
  EXPECT_EQ(Reply({"BITCOUNT", "s", "0", "-1", "bit"}), ":26");
  EXPECT_EQ(Reply({"BITCOUNT", "s", "-100", "-100"}), ":4");
  EXPECT_EQ(Reply({"BITCOUNT", "s", "-1", "-2"}), ":0");
  EXPECT_EQ(Reply({"BITCOUNT", "s", "4", "2"}), ":0");
  EXPECT_EQ(Reply({"BITCOUNT", "s", "-9223372036854775808", "9223372036854775807", "BIT"}), ":26");
  Run({"SET", "e", ""});
  EXPECT_EQ(Reply({"BITCOUNT", "e", "0", "-1"}), ":0");
}

TEST_F(BitmapCommandsTest, BitCountArgumentOrder) {
  // Redis 7.0 answers 0 for a missing key before looking at the range arguments.
  EXPECT_EQ(Reply({"BITCOUNT", "missing", "a", "b"}), ":0");
  EXPECT_EQ(Reply({"BITCOUNT", "missing", "1"}), ":0");
  Run({"SET", "s", "foobar"});
  EXPECT_EQ(Reply({"BITCOUNT", "s", "1"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"BITCOUNT", "s", "1", "2", "3", "4"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"BITCOUNT", "s", "1", "2", "foo"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"BITCOUNT", "s", "-1", "-2", "foo"}), ":0");  // Empty before the unit.
  EXPECT_EQ(Reply({"BITCOUNT", "s", "a", "b"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"BITCOUNT", "s", "1", "a"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"BITCOUNT"}), "-ERR wrong number of arguments for 'bitcount' command");
}

TEST_F(BitmapCommandsTest, BitPos) {
  Run({"SET", "f", std::string("\xff\xf0\x00", 3)});
  EXPECT_EQ(Reply({"BITPOS", "f", "0"}), ":12");
  EXPECT_EQ(Reply({"BITPOS", "f", "1"}), ":0");
  EXPECT_EQ(Reply({"BITPOS", "f", "1", "2"}), ":-1");
  EXPECT_EQ(Reply({"BITPOS", "f", "0", "2"}), ":16");
  EXPECT_EQ(Reply({"BITPOS", "f", "1", "7", "15", "BIT"}), ":7");
  EXPECT_EQ(Reply({"BITPOS", "f", "0", "7", "15", "BIT"}), ":12");
  EXPECT_EQ(Reply({"BITPOS", "f", "0", "0", "11", "bit"}), ":-1");
  Run({"SET", "ones", "\xff\xff"});
  EXPECT_EQ(Reply({"BITPOS", "ones", "0"}), ":16");  // Zero padding on the right...
  EXPECT_EQ(Reply({"BITPOS", "ones", "0", "0"}), ":16");
  EXPECT_EQ(Reply({"BITPOS", "ones", "0", "0", "-1"}), ":-1");  // ...but not with an end.
  Run({"SET", "zeros", std::string(2, '\0')});
  EXPECT_EQ(Reply({"BITPOS", "zeros", "1"}), ":-1");
  EXPECT_EQ(Reply({"BITPOS", "zeros", "0", "-1", "-1", "BIT"}), ":15");
  EXPECT_EQ(Reply({"BITPOS", "zeros", "0", "0", "-20", "BIT"}), ":0");
  EXPECT_EQ(Reply({"BITPOS", "zeros", "0", "100"}), ":-1");
  Run({"SET", "e", ""});
  EXPECT_EQ(Reply({"BITPOS", "e", "0"}), ":-1");
  EXPECT_EQ(Reply({"BITPOS", "missing", "0"}), ":0");
  EXPECT_EQ(Reply({"BITPOS", "missing", "1"}), ":-1");
}

TEST_F(BitmapCommandsTest, BitPosErrors) {
  EXPECT_EQ(Reply({"BITPOS", "missing", "2"}), "-ERR The bit argument must be 1 or 0.");
  EXPECT_EQ(Reply({"BITPOS", "missing", "x"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"BITPOS", "missing", "1", "a"}), ":-1");  // Missing key: range unread.
  Run({"SET", "s", "foobar"});
  EXPECT_EQ(Reply({"BITPOS", "s", "1", "a"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"BITPOS", "s", "1", "1", "2", "3", "4"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"BITPOS", "s", "1", "1", "a", "foo"}), "-ERR syntax error");  // Unit first.
  EXPECT_EQ(Reply({"BITPOS", "s", "1", "1", "bit"}),
            "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"BITPOS", "s"}), "-ERR wrong number of arguments for 'bitpos' command");
}

TEST_F(BitmapCommandsTest, BitOp) {
  Run({"MSET", "a", "foo", "b", "ab"});
  EXPECT_EQ(Reply({"BITOP", "AND", "d", "a", "b"}), ":3");
  EXPECT_EQ(Value("d"), std::string("`b\0", 3));
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "d"}), "\"raw\"");
  EXPECT_EQ(Reply({"BITOP", "or", "d", "a", "b", "missing"}), ":3");
  EXPECT_EQ(Value("d"), "goo");
  EXPECT_EQ(Reply({"BITOP", "Xor", "d", "a", "b"}), ":3");
  EXPECT_EQ(Value("d"), "\x07\ro");
  EXPECT_EQ(Reply({"BITOP", "NOT", "d", "a"}), ":3");
  EXPECT_EQ(Value("d"), "\x99\x90\x90");
  Run({"SET", "n", "12"});
  EXPECT_EQ(Reply({"BITOP", "NOT", "n", "n"}), ":2");  // Destination may be a source.
  EXPECT_EQ(Value("n"), "\xce\xcd");
  // Sources in other shards (hash tags differ) are locked together.
  Run({"MSET", "{x}1", "\x0f", "{y}2", "\xf0"});
  EXPECT_EQ(Reply({"BITOP", "OR", "{z}d", "{x}1", "{y}2"}), ":1");
  EXPECT_EQ(Value("{z}d"), "\xff");
}

TEST_F(BitmapCommandsTest, BitOpDestination) {
  Run({"SET", "a", "foo"});
  Run({"SET", "d", "x", "EX", "100"});
  EXPECT_EQ(Reply({"BITOP", "OR", "d", "a"}), ":3");
  EXPECT_EQ(Reply({"TTL", "d"}), ":-1");  // Replaced: the TTL goes.
  // An empty result deletes the destination.
  EXPECT_EQ(Reply({"BITOP", "AND", "d", "m1", "m2"}), ":0");
  EXPECT_EQ(Reply({"EXISTS", "d"}), ":0");
  Run({"SET", "e", ""});
  EXPECT_EQ(Reply({"BITOP", "OR", "d2", "e"}), ":0");
  EXPECT_EQ(Reply({"EXISTS", "d2"}), ":0");
  // Expired sources count as missing.
  Run({"SET", "t", "abc", "PX", "10"});
  clock_.AdvanceMs(10);
  EXPECT_EQ(Reply({"BITOP", "OR", "d", "t", "t"}), ":0");
}

TEST_F(BitmapCommandsTest, BitOpErrors) {
  EXPECT_EQ(Reply({"BITOP", "NOT", "d", "a", "b"}),
            "-ERR BITOP NOT must be called with a single source key.");
  EXPECT_EQ(Reply({"BITOP", "FOO", "d", "a"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"BITOP", "DIFF", "d", "a", "b"}), "-ERR syntax error");  // Redis 8 only.
  EXPECT_EQ(Reply({"BITOP", "AND", "d"}), "-ERR wrong number of arguments for 'bitop' command");
  EXPECT_EQ(Reply({"BITOP", "NOT", "d"}), "-ERR wrong number of arguments for 'bitop' command");
}

TEST_F(BitmapCommandsTest, BitfieldBasics) {
  EXPECT_EQ(Reply({"BITFIELD", "k"}), "[]");
  EXPECT_EQ(Reply({"BITFIELD", "missing", "GET", "u8", "0"}), "[:0]");
  EXPECT_EQ(Reply({"EXISTS", "missing"}), ":0");
  EXPECT_EQ(Reply({"BITFIELD", "k", "INCRBY", "u2", "100", "1", "GET", "u4", "0", "SET", "i5", "#3",
                   "-3"}),
            "[:1, :0, :0]");
  EXPECT_EQ(Value("k"), std::string("\0\x01\xd0\0\0\0\0\0\0\0\0\0\x04", 13));
  EXPECT_EQ(Reply({"BITFIELD", "k", "GET", "i5", "#3", "get", "u8", "#2"}), "[:-3, :208]");
  EXPECT_EQ(Reply({"BITFIELD_RO", "k", "GET", "i5", "#3"}), "[:-3]");
  EXPECT_EQ(Reply({"BITFIELD_RO", "k"}), "[]");
  EXPECT_EQ(Reply({"BITFIELD_RO", "k", "OVERFLOW", "SAT"}), "[]");
  EXPECT_EQ(Reply({"BITFIELD", "k", "GET", "u8", "4294967295"}), "[:0]");
  EXPECT_EQ(Reply({"BITFIELD", "k", "GET", "u8", "#536870911"}), "[:0]");
  EXPECT_EQ(Reply({"BITFIELD", "k", "GET", "i64", "#67108863"}), "[:0]");
  // Redis parses the type as a C string: a NUL ends it.
  EXPECT_EQ(Reply({"BITFIELD", "k", "GET", std::string("u8\0zz", 5), "#2"}), "[:208]");
}

TEST_F(BitmapCommandsTest, BitfieldOverflow) {
  EXPECT_EQ(Reply({"BITFIELD", "k", "SET", "u8", "0", "256", "GET", "u8", "0"}), "[:0, :0]");
  EXPECT_EQ(Reply({"BITFIELD", "k", "OVERFLOW", "SAT", "SET", "u8", "0", "256", "GET", "u8", "0"}),
            "[:0, :255]");
  EXPECT_EQ(Reply({"BITFIELD", "k", "OVERFLOW", "WRAP", "SET", "u8", "0", "257", "GET", "u8", "0"}),
            "[:255, :1]");
  EXPECT_EQ(Reply({"BITFIELD", "k", "SET", "i8", "0", "-129", "GET", "i8", "0"}), "[:1, :127]");
  EXPECT_EQ(Reply({"BITFIELD", "k", "OVERFLOW", "sat", "SET", "i8", "0", "-9223372036854775808",
                   "GET", "i8", "0"}),
            "[:127, :127]");
  Run({"DEL", "k"});
  EXPECT_EQ(Reply({"BITFIELD", "k", "INCRBY", "i8", "0", "-100", "INCRBY", "i8", "0", "-100"}),
            "[:-100, :56]");
  EXPECT_EQ(Reply({"BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "i8", "0", "-100", "INCRBY", "i8",
                   "0", "-100"}),
            "[:-44, :-128]");
  Run({"DEL", "k"});
  EXPECT_EQ(Reply({"BITFIELD", "k", "INCRBY", "u63", "0", "9223372036854775807", "INCRBY", "u63",
                   "0", "1"}),
            "[:9223372036854775807, :0]");
  EXPECT_EQ(
      Reply({"BITFIELD", "k", "SET", "i64", "0", "9223372036854775807", "INCRBY", "i64", "0", "1"}),
      "[:0, :-9223372036854775808]");
}

TEST_F(BitmapCommandsTest, BitfieldFailRepliesNilInBothProtocols) {
  // OVERFLOW FAIL still creates (or pads) the key, as Redis does before running the operations.
  EXPECT_EQ(
      RunRaw({"BITFIELD", "new", "OVERFLOW", "FAIL", "SET", "u8", "0", "256", "GET", "u8", "0"}),
      "*2\r\n$-1\r\n:0\r\n");
  EXPECT_EQ(Value("new"), std::string("\0", 1));
  UseResp(3);
  EXPECT_EQ(RunRaw({"BITFIELD", "new", "OVERFLOW", "FAIL", "INCRBY", "i8", "0", "-129"}),
            "*1\r\n_\r\n");
  EXPECT_EQ(RunRaw({"BITFIELD", "new", "INCRBY", "i8", "0", "-128", "OVERFLOW", "FAIL", "INCRBY",
                    "i8", "0", "-1"}),
            "*2\r\n:-128\r\n_\r\n");
  EXPECT_EQ(RunRaw({"BITFIELD_RO", "new", "GET", "i8", "0"}), "*1\r\n:-128\r\n");
}

TEST_F(BitmapCommandsTest, BitfieldErrors) {
  EXPECT_EQ(Reply({"BITFIELD", "k", "GET", "u8"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"BITFIELD", "k", "foo"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"BITFIELD", "k", "SET", "u8", "0"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"BITFIELD", "k", "SET", "u8", "0", "1", "GET"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"BITFIELD", "k", "OVERFLOW"}), "-ERR syntax error");
  for (const char* type : {"u64", "i65", "u0", "x8", "U8", "u", "", "u08", "u+8"}) {
    EXPECT_EQ(Reply({"BITFIELD", "k", "GET", type, "0"}), kBadType) << type;
  }
  for (const char* offset : {"#", "##1", "#-1", "-1", "4294967296", "#536870912", "x"}) {
    EXPECT_EQ(Reply({"BITFIELD", "k", "GET", "u8", offset}), kBadOffset) << offset;
  }
  EXPECT_EQ(Reply({"BITFIELD", "k", "GET", "i64", "#67108864"}), kBadOffset);
  EXPECT_EQ(Reply({"BITFIELD", "k", "OVERFLOW", "foo"}), "-ERR Invalid OVERFLOW type specified");
  EXPECT_EQ(Reply({"BITFIELD", "k", "GET", "u8", "x", "OVERFLOW", "foo"}), kBadOffset);
  EXPECT_EQ(Reply({"BITFIELD", "k", "SET", "u8", "0", "abc"}),
            "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"BITFIELD", "k", "SET", "u8", "#4294967295", "1"}), kBadOffset);
  EXPECT_EQ(Reply({"BITFIELD_RO", "k", "SET", "u8", "0", "1"}),
            "-ERR BITFIELD_RO only supports the GET subcommand");
  EXPECT_EQ(Reply({"BITFIELD_RO", "k", "INCRBY", "u8", "0", "1"}),
            "-ERR BITFIELD_RO only supports the GET subcommand");
  EXPECT_EQ(Reply({"BITFIELD_RO", "k", "INCRBY", "u8", "0"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"EXISTS", "k"}), ":0");  // Nothing ran.
  EXPECT_EQ(Reply({"BITFIELD"}), "-ERR wrong number of arguments for 'bitfield' command");
  EXPECT_EQ(Reply({"BITFIELD_RO"}), "-ERR wrong number of arguments for 'bitfield_ro' command");
}

TEST_F(BitmapCommandsTest, WrongType) {
  PutList("l");
  EXPECT_EQ(Reply({"SETBIT", "l", "1", "1"}), kWrongType);
  EXPECT_EQ(Reply({"SETBIT", "l", "1", "2"}), "-ERR bit is not an integer or out of range");
  EXPECT_EQ(Reply({"GETBIT", "l", "1"}), kWrongType);
  EXPECT_EQ(Reply({"GETBIT", "l", "a"}), kBadOffset);
  EXPECT_EQ(Reply({"BITCOUNT", "l", "a", "b"}), kWrongType);  // Type before range.
  EXPECT_EQ(Reply({"BITPOS", "l", "2"}), "-ERR The bit argument must be 1 or 0.");
  EXPECT_EQ(Reply({"BITPOS", "l", "1", "a"}), kWrongType);
  EXPECT_EQ(Reply({"BITOP", "AND", "d", "a", "l"}), kWrongType);
  EXPECT_EQ(Reply({"EXISTS", "d"}), ":0");
  EXPECT_EQ(Reply({"BITOP", "NOT", "d", "l", "x"}),
            "-ERR BITOP NOT must be called with a single source key.");
  EXPECT_EQ(Reply({"BITFIELD", "l", "GET", "u8", "0"}), kWrongType);
  EXPECT_EQ(Reply({"BITFIELD", "l", "SET", "u8", "0", "1"}), kWrongType);
  EXPECT_EQ(Reply({"BITFIELD", "l"}), kWrongType);
  EXPECT_EQ(Reply({"BITFIELD", "l", "GET", "u8", "x"}), kBadOffset);
  EXPECT_EQ(Reply({"BITFIELD_RO", "l", "SET", "u8", "0", "1"}),
            "-ERR BITFIELD_RO only supports the GET subcommand");
  EXPECT_EQ(Reply({"TYPE", "l"}), "+list");
  // A list destination is simply replaced by BITOP.
  Run({"SET", "a", "x"});
  EXPECT_EQ(Reply({"BITOP", "OR", "l", "a"}), ":1");
  EXPECT_EQ(Reply({"TYPE", "l"}), "+string");
}

TEST_F(BitmapCommandsTest, WritesLogReplayableEffects) {
  Run({"SET", "k", "a", "PX", "5000"});
  effects_.Take();
  Run({"SETBIT", "k", "1", "0"});  // 'a' is 01100001: a change.
  Run({"SETBIT", "k", "1", "0"});  // Already clear in a raw value: nothing to log.
  Run({"SETBIT", "k", "1", "2"});  // Errors log nothing.
  Run({"GETBIT", "k", "1"});
  Run({"BITFIELD", "k", "GET", "u8", "0", "OVERFLOW", "FAIL", "INCRBY", "u8", "#1", "300", "SET",
       "i4", "3", "-1"});
  Run({"BITFIELD", "k", "GET", "u8", "0"});  // Reads only.
  Run({"BITFIELD_RO", "k", "GET", "u8", "0"});
  Run({"BITOP", "not", "d", "k"});
  Run({"BITOP", "AND", "d", "missing"});  // Empty result: the destination goes.
  Run({"BITOP", "AND", "d", "missing"});  // Nothing left to delete.
  EXPECT_THAT(effects_.Take(),
              ::testing::ElementsAre(
                  "0: SETBIT k 1 0",
                  "0: BITFIELD k OVERFLOW FAIL INCRBY u8 #1 300 OVERFLOW FAIL SET i4 3 -1",
                  "0: BITOP NOT d k", "0: DEL d"));
}

TEST_F(BitmapCommandsTest, CommandInfo) {
  EXPECT_EQ(Reply({"COMMAND", "INFO", "bitop"}),
            Reply({"COMMAND", "INFO", "BITOP"}));  // Smoke: the table row exists.
  EXPECT_EQ(Reply({"COMMAND", "GETKEYS", "BITOP", "AND", "d", "a", "b"}), "[\"d\", \"a\", \"b\"]");
}

}  // namespace
}  // namespace gigakv::testing
