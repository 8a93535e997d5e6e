#include <set>
#include <string>
#include <vector>

#include "gigakv/object.h"
#include "gigakv/store.h"
#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

// A plain set stand-in (the set family lives elsewhere): the sorted-set commands read sets only
// through Object::ForEachElement, with score 1 for every member.
class FakeSet final : public Object {
 public:
  explicit FakeSet(std::vector<std::string> members) : members_(std::move(members)) {}
  KeyType type() const override { return KeyType::kSet; }
  std::string_view encoding_name() const override { return "hashtable"; }
  size_t MemoryUsage() const override { return 0; }
  size_t Length() const override { return members_.size(); }
  Object* Clone() const override { return new FakeSet(members_); }
  void ForEachElement(absl::FunctionRef<void(std::string_view)> fn) const override {
    for (const std::string& member : members_) fn(member);
  }

 private:
  std::vector<std::string> members_;
};

// Every test body runs with both encodings: "listpack" (the defaults) and "skiplist" (no listpack
// allowed at all).
class ZSetCommandsTest : public CommandTest, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    if (Large()) {
      EXPECT_EQ(Reply({"CONFIG", "SET", "zset-max-listpack-entries", "0"}), "+OK");
    }
  }
  bool Large() const { return std::string(GetParam()) == "skiplist"; }
  std::string Encoding() const { return "\"" + std::string(GetParam()) + "\""; }

  void PutSet(const std::string& key, std::vector<std::string> members) {
    Store& store = server_.keyspace().store();
    ValueSpec spec;
    spec.kind = ValueKind::kObject;
    spec.object = new FakeSet(std::move(members));
    uint64_t hash = store.Hash(key);
    store.WithShardOf(key, [&](Shard& shard) { shard.Table(0).Put(key, hash, spec, 0, 0); });
  }
};

constexpr const char* kWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value";

TEST_P(ZSetCommandsTest, AddAndReadBack) {
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "2", "b", "1.5", "c"}), ":3");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "z"}), Encoding());
  EXPECT_EQ(Reply({"TYPE", "z"}), "+zset");
  EXPECT_EQ(Reply({"ZCARD", "z"}), ":3");
  EXPECT_EQ(Reply({"ZSCORE", "z", "c"}), "\"1.5\"");
  EXPECT_EQ(Reply({"ZSCORE", "z", "nope"}), "(nil)");
  EXPECT_EQ(Reply({"ZMSCORE", "z", "a", "nope", "b"}), "[\"1\", (nil), \"2\"]");
  EXPECT_EQ(Reply({"ZRANK", "z", "c"}), ":1");
  EXPECT_EQ(Reply({"ZREVRANK", "z", "c"}), ":1");
  EXPECT_EQ(Reply({"ZREVRANK", "z", "b"}), ":0");
  EXPECT_EQ(Reply({"ZRANK", "z", "nope"}), "(nil)");
  EXPECT_EQ(Reply({"ZRANGE", "z", "0", "-1"}), "[\"a\", \"c\", \"b\"]");
  // Re-adding updates the score; the reply counts only new members (CH: changed ones too).
  EXPECT_EQ(Reply({"ZADD", "z", "3", "a", "4", "d"}), ":1");
  EXPECT_EQ(Reply({"ZADD", "z", "CH", "5", "a", "4", "d", "6", "e"}), ":2");
  EXPECT_EQ(Reply({"ZRANGE", "z", "0", "-1", "WITHSCORES"}),
            "[\"c\", \"1.5\", \"b\", \"2\", \"d\", \"4\", \"a\", \"5\", \"e\", \"6\"]");
}

TEST_P(ZSetCommandsTest, ScoresPrintLikeRedis) {
  EXPECT_EQ(Reply({"ZADD", "z", "1.1", "a", "0.1", "b", "1e300", "c", "inf", "d", "-inf", "e",
                   "0x10", "f"}),
            ":6");
  EXPECT_EQ(Reply({"ZSCORE", "z", "a"}), "\"1.1000000000000001\"");
  EXPECT_EQ(Reply({"ZSCORE", "z", "b"}), "\"0.10000000000000001\"");
  EXPECT_EQ(Reply({"ZSCORE", "z", "c"}), "\"1.0000000000000001e+300\"");
  EXPECT_EQ(Reply({"ZSCORE", "z", "d"}), "\"inf\"");
  EXPECT_EQ(Reply({"ZSCORE", "z", "e"}), "\"-inf\"");
  EXPECT_EQ(Reply({"ZSCORE", "z", "f"}), "\"16\"");
  UseResp(3);
  EXPECT_EQ(Reply({"ZSCORE", "z", "a"}), ",1.1000000000000001");
  EXPECT_EQ(Reply({"ZSCORE", "z", "d"}), ",inf");
  EXPECT_EQ(RunRaw({"ZSCORE", "z", "nope"}), "_\r\n");
  // Negative zero: replied as computed; kept by skiplists, stored as 0 by listpacks.
  EXPECT_EQ(Reply({"ZADD", "z", "INCR", "-0.0", "g"}), ",-0");
  EXPECT_EQ(Reply({"ZSCORE", "z", "g"}), Large() ? ",-0" : ",0");
}

TEST_P(ZSetCommandsTest, AddOptions) {
  EXPECT_EQ(Reply({"ZADD", "z", "XX", "1", "a"}), ":0");
  EXPECT_EQ(Reply({"EXISTS", "z"}), ":0");  // XX on a missing key creates nothing.
  EXPECT_EQ(Reply({"ZADD", "z", "NX", "1", "a"}), ":1");
  EXPECT_EQ(Reply({"ZADD", "z", "NX", "5", "a", "2", "b"}), ":1");
  EXPECT_EQ(Reply({"ZSCORE", "z", "a"}), "\"1\"");
  EXPECT_EQ(Reply({"ZADD", "z", "GT", "CH", "0", "a", "3", "b"}), ":1");
  EXPECT_EQ(Reply({"ZADD", "z", "LT", "CH", "0", "a", "9", "b"}), ":1");
  EXPECT_EQ(Reply({"ZRANGE", "z", "0", "-1", "WITHSCORES"}), "[\"a\", \"0\", \"b\", \"3\"]");
  EXPECT_EQ(Reply({"ZADD", "z", "XX", "GT", "CH", "7", "b", "7", "new"}), ":1");
  EXPECT_EQ(Reply({"ZCARD", "z"}), ":2");
  // INCR answers the new score, or nil when a condition stopped it.
  EXPECT_EQ(Reply({"ZADD", "z", "INCR", "2.5", "a"}), "\"2.5\"");
  EXPECT_EQ(Reply({"ZADD", "z", "INCR", "NX", "1", "a"}), "(nil)");
  EXPECT_EQ(Reply({"ZADD", "z", "INCR", "XX", "1", "missing"}), "(nil)");
  EXPECT_EQ(Reply({"ZADD", "z", "INCR", "GT", "-1", "a"}), "(nil)");
  EXPECT_EQ(Reply({"ZINCRBY", "z", "10", "c"}), "\"10\"");
  EXPECT_EQ(Reply({"ZINCRBY", "z", "-0.5", "c"}), "\"9.5\"");
  EXPECT_EQ(Reply({"ZINCRBY", "z", "inf", "c"}), "\"inf\"");
  EXPECT_EQ(Reply({"ZINCRBY", "z", "-inf", "c"}), "-ERR resulting score is not a number (NaN)");
  EXPECT_EQ(Reply({"ZSCORE", "z", "c"}), "\"inf\"");
}

// ZADD that keeps every score (the same score, or NX/XX/GT/LT skipping the member) answers 0 and
// changes nothing: not the scores, the encoding, the TTL, nor the log (Redis signals no change).
TEST_P(ZSetCommandsTest, AddThatChangesNothing) {
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "2.5", "b", "-3", "7"}), ":3");
  EXPECT_EQ(Reply({"PEXPIRE", "z", "100000"}), ":1");
  effects_.Take();
  std::string contents = Reply({"ZRANGE", "z", "0", "-1", "WITHSCORES"});
  const std::vector<std::vector<std::string>> no_ops = {
      {"ZADD", "z", "1", "a"},
      {"ZADD", "z", "CH", "2.5", "b", "-3", "7", "1.0", "a"},
      {"ZADD", "z", "NX", "9", "a"},
      {"ZADD", "z", "XX", "9", "missing"},
      {"ZADD", "z", "GT", "CH", "0", "a", "2", "b"},
      {"ZADD", "z", "LT", "CH", "5", "a"},
      {"ZADD", "z", "XX", "GT", "1", "a"},
  };
  for (const auto& command : no_ops) {
    SCOPED_TRACE(command[2]);
    EXPECT_EQ(Reply(command), ":0");
  }
  EXPECT_EQ(Reply({"ZRANGE", "z", "0", "-1", "WITHSCORES"}), contents);
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "z"}), Encoding());
  EXPECT_GT(Run({"PTTL", "z"}).integer, 0);
  EXPECT_TRUE(effects_.Take().empty());
  // A changed score, a new member among present ones, or INCR by 0 still go the full way.
  EXPECT_EQ(Reply({"ZADD", "z", "CH", "1", "a", "3", "b"}), ":1");
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "4", "c"}), ":1");
  EXPECT_EQ(Reply({"ZADD", "z", "INCR", "0", "a"}), "\"1\"");
  EXPECT_EQ(effects_.Take(), (std::vector<std::string>{"0: ZADD z 3 b", "0: ZADD z 4 c"}));
  EXPECT_EQ(Reply({"SET", "str", "x"}), "+OK");
  EXPECT_EQ(Reply({"ZADD", "str", "1", "x"}), kWrongType);
}

TEST_P(ZSetCommandsTest, AddErrors) {
  EXPECT_EQ(Reply({"ZADD", "z", "1"}), "-ERR wrong number of arguments for 'zadd' command");
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "2"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZADD", "z", "NX", "XX"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZADD", "z", "NX", "XX", "1", "a"}),
            "-ERR XX and NX options at the same time are not compatible");
  EXPECT_EQ(Reply({"ZADD", "z", "GT", "LT", "1", "a"}),
            "-ERR GT, LT, and/or NX options at the same time are not compatible");
  EXPECT_EQ(Reply({"ZADD", "z", "NX", "GT", "1", "a"}),
            "-ERR GT, LT, and/or NX options at the same time are not compatible");
  EXPECT_EQ(Reply({"ZADD", "z", "INCR", "1", "a", "2", "b"}),
            "-ERR INCR option supports a single increment-element pair");
  for (const char* bad : {"x", "nan", "", " 1", "1e999", "(1"}) {
    EXPECT_EQ(Reply({"ZADD", "z", bad, "a"}), "-ERR value is not a valid float") << bad;
  }
  EXPECT_EQ(Reply({"ZINCRBY", "z", "x", "a"}), "-ERR value is not a valid float");
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "x", "b"}), "-ERR value is not a valid float");
  EXPECT_EQ(Reply({"EXISTS", "z"}), ":0");  // All or nothing.
}

TEST_P(ZSetCommandsTest, MissingKeys) {
  EXPECT_EQ(Reply({"ZCARD", "none"}), ":0");
  EXPECT_EQ(Reply({"ZSCORE", "none", "a"}), "(nil)");
  EXPECT_EQ(Reply({"ZMSCORE", "none", "a", "b"}), "[(nil), (nil)]");
  EXPECT_EQ(Reply({"ZRANK", "none", "a"}), "(nil)");
  EXPECT_EQ(Reply({"ZCOUNT", "none", "-inf", "inf"}), ":0");
  EXPECT_EQ(Reply({"ZLEXCOUNT", "none", "-", "+"}), ":0");
  EXPECT_EQ(Reply({"ZRANGE", "none", "0", "-1"}), "[]");
  EXPECT_EQ(Reply({"ZRANGEBYSCORE", "none", "0", "1"}), "[]");
  EXPECT_EQ(Reply({"ZREM", "none", "a"}), ":0");
  EXPECT_EQ(Reply({"ZREMRANGEBYRANK", "none", "0", "-1"}), ":0");
  EXPECT_EQ(Reply({"ZPOPMIN", "none"}), "[]");
  EXPECT_EQ(Reply({"ZPOPMAX", "none", "3"}), "[]");
  EXPECT_EQ(RunRaw({"ZMPOP", "1", "none", "MIN"}), "*-1\r\n");
  EXPECT_EQ(Reply({"ZRANDMEMBER", "none"}), "(nil)");
  EXPECT_EQ(Reply({"ZRANDMEMBER", "none", "3"}), "[]");
  EXPECT_EQ(Reply({"ZSCAN", "none", "0"}), "[\"0\", []]");
  EXPECT_EQ(Reply({"ZUNION", "2", "none", "none2"}), "[]");
  EXPECT_EQ(Reply({"ZINTERCARD", "1", "none"}), ":0");
  EXPECT_EQ(Reply({"ZRANGESTORE", "dst", "none", "0", "-1"}), ":0");
  EXPECT_EQ(Reply({"EXISTS", "dst"}), ":0");
  UseResp(3);
  EXPECT_EQ(RunRaw({"ZMPOP", "1", "none", "MIN"}), "_\r\n");
  EXPECT_EQ(RunRaw({"ZRANDMEMBER", "none"}), "_\r\n");
  EXPECT_EQ(Reply({"ZMSCORE", "none", "a"}), "[(nil)]");
}

TEST_P(ZSetCommandsTest, WrongType) {
  EXPECT_EQ(Reply({"SET", "s", "v"}), "+OK");
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a"}), ":1");
  const std::vector<std::vector<std::string>> commands = {
      {"ZADD", "s", "1", "a"},
      {"ZINCRBY", "s", "1", "a"},
      {"ZSCORE", "s", "a"},
      {"ZMSCORE", "s", "a"},
      {"ZCARD", "s"},
      {"ZCOUNT", "s", "0", "1"},
      {"ZLEXCOUNT", "s", "-", "+"},
      {"ZRANGE", "s", "0", "1"},
      {"ZRANGESTORE", "d", "s", "0", "1"},
      {"ZRANGEBYSCORE", "s", "0", "1"},
      {"ZREVRANGEBYSCORE", "s", "1", "0"},
      {"ZRANGEBYLEX", "s", "-", "+"},
      {"ZREVRANGEBYLEX", "s", "+", "-"},
      {"ZREVRANGE", "s", "0", "1"},
      {"ZRANK", "s", "a"},
      {"ZREVRANK", "s", "a"},
      {"ZREM", "s", "a"},
      {"ZREMRANGEBYRANK", "s", "0", "1"},
      {"ZREMRANGEBYSCORE", "s", "0", "1"},
      {"ZREMRANGEBYLEX", "s", "-", "+"},
      {"ZPOPMIN", "s"},
      {"ZPOPMAX", "s", "0"},
      {"ZMPOP", "2", "none", "s", "MIN"},
      {"ZRANDMEMBER", "s"},
      {"ZRANDMEMBER", "s", "2"},
      {"ZUNION", "2", "z", "s"},
      {"ZINTER", "2", "z", "s"},
      {"ZDIFF", "2", "z", "s"},
      {"ZUNIONSTORE", "d", "2", "z", "s"},
      {"ZINTERSTORE", "d", "1", "s"},
      {"ZDIFFSTORE", "d", "1", "s"},
      {"ZINTERCARD", "2", "z", "s"},
      {"ZSCAN", "s", "0"},
      {"BZPOPMIN", "s", "0"},
      {"BZPOPMAX", "none", "s", "0"},
      {"BZMPOP", "0", "1", "s", "MAX"},
  };
  for (const auto& command : commands) EXPECT_EQ(Reply(command), kWrongType) << command[0];
  // And the other way round.
  EXPECT_EQ(Reply({"GET", "z"}), kWrongType);
  EXPECT_EQ(Reply({"APPEND", "z", "x"}), kWrongType);
  EXPECT_EQ(Reply({"EXISTS", "d"}), ":0");
  // A *STORE destination of another type is simply replaced.
  EXPECT_EQ(Reply({"ZUNIONSTORE", "s", "1", "z"}), ":1");
  EXPECT_EQ(Reply({"TYPE", "s"}), "+zset");
}

TEST_P(ZSetCommandsTest, RangesByRankScoreAndLex) {
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"}), ":5");
  EXPECT_EQ(Reply({"ZRANGE", "z", "1", "-2"}), "[\"b\", \"c\", \"d\"]");
  EXPECT_EQ(Reply({"ZRANGE", "z", "-100", "1"}), "[\"a\", \"b\"]");
  EXPECT_EQ(Reply({"ZRANGE", "z", "3", "1"}), "[]");
  EXPECT_EQ(Reply({"ZRANGE", "z", "0", "1", "REV"}), "[\"e\", \"d\"]");
  EXPECT_EQ(Reply({"ZREVRANGE", "z", "0", "1", "WITHSCORES"}), "[\"e\", \"5\", \"d\", \"4\"]");
  EXPECT_EQ(Reply({"ZRANGE", "z", "(1", "3", "BYSCORE"}), "[\"b\", \"c\"]");
  EXPECT_EQ(Reply({"ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "2"}), "[\"b\", \"c\"]");
  EXPECT_EQ(Reply({"ZRANGE", "z", "(5", "2", "BYSCORE", "REV", "LIMIT", "1", "-1"}),
            "[\"c\", \"b\"]");
  EXPECT_EQ(Reply({"ZRANGEBYSCORE", "z", "2", "(4", "WITHSCORES"}), "[\"b\", \"2\", \"c\", \"3\"]");
  EXPECT_EQ(Reply({"ZREVRANGEBYSCORE", "z", "+inf", "4"}), "[\"e\", \"d\"]");
  EXPECT_EQ(Reply({"ZRANGEBYSCORE", "z", "0", "10", "LIMIT", "-1", "2"}), "[]");
  EXPECT_EQ(Reply({"ZCOUNT", "z", "(1", "(5"}), ":3");
  EXPECT_EQ(Reply({"ZCOUNT", "z", "5", "1"}), ":0");

  EXPECT_EQ(Reply({"ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d"}), ":4");
  EXPECT_EQ(Reply({"ZRANGEBYLEX", "lex", "[b", "(d"}), "[\"b\", \"c\"]");
  EXPECT_EQ(Reply({"ZRANGE", "lex", "+", "(b", "BYLEX", "REV"}), "[\"d\", \"c\"]");
  EXPECT_EQ(Reply({"ZREVRANGEBYLEX", "lex", "+", "-", "LIMIT", "1", "2"}), "[\"c\", \"b\"]");
  EXPECT_EQ(Reply({"ZLEXCOUNT", "lex", "-", "[c"}), ":3");
  EXPECT_EQ(Reply({"ZLEXCOUNT", "lex", "+", "-"}), ":0");

  EXPECT_EQ(Reply({"ZRANGE", "z", "0", "1", "LIMIT", "0", "1"}),
            "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
            "BYLEX");
  EXPECT_EQ(Reply({"ZRANGE", "lex", "-", "+", "BYLEX", "WITHSCORES"}),
            "-ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  EXPECT_EQ(Reply({"ZRANGE", "z", "x", "1", "BYSCORE"}), "-ERR min or max is not a float");
  EXPECT_EQ(Reply({"ZCOUNT", "z", "nan", "1"}), "-ERR min or max is not a float");
  EXPECT_EQ(Reply({"ZRANGEBYLEX", "lex", "a", "+"}), "-ERR min or max not valid string range item");
  EXPECT_EQ(Reply({"ZRANGE", "z", "a", "1"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"ZRANGEBYSCORE", "z", "0", "1", "LIMIT", "1"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZRANGEBYSCORE", "z", "0", "1", "REV"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZRANGESTORE", "d", "z", "0", "1", "WITHSCORES"}), "-ERR syntax error");
}

TEST_P(ZSetCommandsTest, Resp3Shapes) {
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "2", "b", "3", "c"}), ":3");
  UseResp(3);
  EXPECT_EQ(Reply({"ZRANGE", "z", "0", "1", "WITHSCORES"}), "[[\"a\", ,1], [\"b\", ,2]]");
  EXPECT_EQ(Reply({"ZRANGEBYSCORE", "z", "3", "3", "WITHSCORES"}), "[[\"c\", ,3]]");
  EXPECT_EQ(Reply({"ZUNION", "1", "z", "WITHSCORES"}), "[[\"a\", ,1], [\"b\", ,2], [\"c\", ,3]]");
  EXPECT_EQ(Run({"ZRANDMEMBER", "z", "-2", "WITHSCORES"}).elements[0].elements.size(), 2u);
  EXPECT_EQ(Reply({"ZMSCORE", "z", "a", "x"}), "[,1, (nil)]");
  EXPECT_EQ(Reply({"ZSCAN", "z", "0"}), "[\"0\", [\"a\", \"1\", \"b\", \"2\", \"c\", \"3\"]]");
  EXPECT_EQ(Reply({"ZPOPMIN", "z"}), "[\"a\", ,1]");
  EXPECT_EQ(Reply({"ZPOPMIN", "z", "1"}), "[[\"b\", ,2]]");
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "2", "b"}), ":2");
  EXPECT_EQ(Reply({"ZMPOP", "1", "z", "MAX", "COUNT", "2"}), "[\"z\", [[\"c\", ,3], [\"b\", ,2]]]");
  EXPECT_EQ(Reply({"BZPOPMIN", "z", "0"}), "[\"z\", \"a\", ,1]");
  EXPECT_EQ(Reply({"EXISTS", "z"}), ":0");
  UseResp(2);
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "2", "b", "3", "c"}), ":3");
  EXPECT_EQ(Reply({"ZMPOP", "1", "z", "MIN"}), "[\"z\", [[\"a\", \"1\"]]]");
  EXPECT_EQ(Reply({"ZPOPMAX", "z", "5"}), "[\"c\", \"3\", \"b\", \"2\"]");
}

TEST_P(ZSetCommandsTest, RemovalsDeleteEmptiedKeysAndLogWhatLeft) {
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"}), ":6");
  effects_.Take();
  EXPECT_EQ(Reply({"ZREM", "z", "a", "nope", "b"}), ":2");
  EXPECT_EQ(effects_.Take(), std::vector<std::string>{"0: ZREM z a b"});
  EXPECT_EQ(Reply({"ZREM", "z", "nope"}), ":0");
  EXPECT_TRUE(effects_.Take().empty());
  EXPECT_EQ(Reply({"ZREMRANGEBYRANK", "z", "-1", "-1"}), ":1");
  EXPECT_EQ(effects_.Take(), std::vector<std::string>{"0: ZREM z f"});
  EXPECT_EQ(Reply({"ZREMRANGEBYSCORE", "z", "(3", "4"}), ":1");
  EXPECT_EQ(effects_.Take(), std::vector<std::string>{"0: ZREM z d"});
  EXPECT_EQ(Reply({"ZREMRANGEBYRANK", "z", "x", "1"}),
            "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"ZREMRANGEBYSCORE", "z", "x", "1"}), "-ERR min or max is not a float");
  EXPECT_EQ(Reply({"ZREMRANGEBYLEX", "z", "x", "+"}),
            "-ERR min or max not valid string range item");
  EXPECT_EQ(Reply({"ZREMRANGEBYLEX", "z", "-", "+"}), ":2");
  EXPECT_EQ(Reply({"EXISTS", "z"}), ":0");
}

TEST_P(ZSetCommandsTest, PopsAndTheirEffects) {
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "2", "b", "3", "c"}), ":3");
  effects_.Take();
  EXPECT_EQ(Reply({"ZPOPMIN", "z"}), "[\"a\", \"1\"]");
  EXPECT_EQ(effects_.Take(), std::vector<std::string>{"0: ZREM z a"});
  EXPECT_EQ(Reply({"ZPOPMAX", "z", "0"}), "[]");
  EXPECT_EQ(Reply({"ZPOPMAX", "z", "-1"}), "-ERR value is out of range, must be positive");
  EXPECT_EQ(Reply({"ZPOPMAX", "z", "1", "2"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZPOPMAX", "z", "10"}), "[\"c\", \"3\", \"b\", \"2\"]");
  EXPECT_EQ(effects_.Take(), std::vector<std::string>{"0: ZREM z c b"});
  EXPECT_EQ(Reply({"EXISTS", "z"}), ":0");

  EXPECT_EQ(Reply({"ZADD", "y", "1", "a", "2", "b"}), ":2");
  EXPECT_EQ(Reply({"ZMPOP", "2", "none", "y", "MAX", "COUNT", "5"}),
            "[\"y\", [[\"b\", \"2\"], [\"a\", \"1\"]]]");
  EXPECT_EQ(Reply({"ZMPOP", "0", "y", "MIN"}), "-ERR numkeys should be greater than 0");
  EXPECT_EQ(Reply({"ZMPOP", "2", "y", "MIN"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZMPOP", "1", "y", "MID"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZMPOP", "1", "y", "MIN", "COUNT", "0"}), "-ERR count should be greater than 0");
  EXPECT_EQ(Reply({"ZMPOP", "1", "y", "MIN", "COUNT", "1", "COUNT", "1"}), "-ERR syntax error");
}

TEST_P(ZSetCommandsTest, IncrementsLogAbsoluteScores) {
  effects_.Take();
  EXPECT_EQ(Reply({"ZINCRBY", "z", "1.5", "a"}), "\"1.5\"");
  EXPECT_EQ(Reply({"ZINCRBY", "z", "1", "a"}), "\"2.5\"");
  EXPECT_EQ(Reply({"ZADD", "z", "INCR", "0.5", "a"}), "\"3\"");
  EXPECT_EQ(Reply({"ZADD", "z", "3", "a", "1", "b"}), ":1");  // a unchanged: not logged.
  EXPECT_EQ(effects_.Take(), (std::vector<std::string>{"0: ZADD z 1.5 a", "0: ZADD z 2.5 a",
                                                       "0: ZADD z 3 a", "0: ZADD z 1 b"}));
  EXPECT_EQ(Reply({"ZUNIONSTORE", "u", "1", "z"}), ":2");
  EXPECT_EQ(effects_.Take(), std::vector<std::string>{"0: ZUNIONSTORE u 1 z"});
  EXPECT_EQ(Reply({"ZINTERSTORE", "u", "2", "z", "none"}), ":0");
  EXPECT_EQ(effects_.Take(), std::vector<std::string>{"0: DEL u"});
}

TEST_P(ZSetCommandsTest, SetOperations) {
  EXPECT_EQ(Reply({"ZADD", "{t}a", "1", "x", "2", "y", "3", "z"}), ":3");
  EXPECT_EQ(Reply({"ZADD", "{t}b", "10", "y", "20", "z", "30", "w"}), ":3");
  EXPECT_EQ(Reply({"ZUNION", "2", "{t}a", "{t}b", "WITHSCORES"}),
            "[\"x\", \"1\", \"y\", \"12\", \"z\", \"23\", \"w\", \"30\"]");
  EXPECT_EQ(
      Reply({"ZINTER", "2", "{t}a", "{t}b", "WEIGHTS", "2", "1", "AGGREGATE", "MAX", "WITHSCORES"}),
      "[\"y\", \"10\", \"z\", \"20\"]");
  EXPECT_EQ(Reply({"ZINTER", "2", "{t}a", "{t}b", "AGGREGATE", "MIN"}), "[\"y\", \"z\"]");
  EXPECT_EQ(Reply({"ZDIFF", "2", "{t}a", "{t}b", "WITHSCORES"}), "[\"x\", \"1\"]");
  EXPECT_EQ(Reply({"ZINTERCARD", "2", "{t}a", "{t}b"}), ":2");
  EXPECT_EQ(Reply({"ZINTERCARD", "2", "{t}a", "{t}b", "LIMIT", "1"}), ":1");
  // inf * 0 is NaN, which Redis turns into 0; inf + -inf too.
  EXPECT_EQ(Reply({"ZUNION", "2", "{t}a", "{t}b", "WEIGHTS", "inf", "0", "WITHSCORES"}),
            "[\"w\", \"0\", \"x\", \"inf\", \"y\", \"inf\", \"z\", \"inf\"]");
  EXPECT_EQ(Reply({"ZUNION", "2", "{t}a", "{t}b", "WEIGHTS", "inf", "-inf", "WITHSCORES"}),
            "[\"w\", \"-inf\", \"y\", \"0\", \"z\", \"0\", \"x\", \"inf\"]");
  EXPECT_EQ(Reply({"ZUNIONSTORE", "{t}c", "2", "{t}a", "{t}b"}), ":4");
  EXPECT_EQ(Reply({"ZRANGE", "{t}c", "0", "-1", "WITHSCORES"}),
            "[\"x\", \"1\", \"y\", \"12\", \"z\", \"23\", \"w\", \"30\"]");
  EXPECT_EQ(Reply({"ZDIFFSTORE", "{t}c", "2", "{t}a", "{t}a"}), ":0");
  EXPECT_EQ(Reply({"EXISTS", "{t}c"}), ":0");
  EXPECT_EQ(Reply({"ZINTERSTORE", "{t}a", "2", "{t}a", "{t}b"}), ":2");  // Source = destination.
  EXPECT_EQ(Reply({"ZRANGE", "{t}a", "0", "-1", "WITHSCORES"}), "[\"y\", \"12\", \"z\", \"23\"]");

  // Plain sets take part with score 1.
  PutSet("set", {"y", "q"});
  EXPECT_EQ(Reply({"ZUNION", "2", "{t}b", "set", "WITHSCORES"}),
            "[\"q\", \"1\", \"y\", \"11\", \"z\", \"20\", \"w\", \"30\"]");
  EXPECT_EQ(Reply({"ZINTER", "2", "set", "{t}b", "WITHSCORES"}), "[\"y\", \"11\"]");
  EXPECT_EQ(Reply({"ZDIFF", "2", "set", "{t}b"}), "[\"q\"]");
  EXPECT_EQ(Reply({"ZINTERCARD", "2", "set", "set"}), ":2");

  EXPECT_EQ(Reply({"ZUNION", "0", "{t}a"}),
            "-ERR at least 1 input key is needed for 'zunion' command");
  EXPECT_EQ(Reply({"ZINTERSTORE", "d", "0", "{t}a"}),
            "-ERR at least 1 input key is needed for 'zinterstore' command");
  EXPECT_EQ(Reply({"ZUNION", "3", "{t}a"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZUNION", "x", "{t}a"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"ZUNION", "1", "{t}a", "WEIGHTS", "x"}), "-ERR weight value is not a float");
  EXPECT_EQ(Reply({"ZUNION", "1", "{t}a", "WEIGHTS", "1", "2"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZUNION", "1", "{t}a", "AGGREGATE", "AVG"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZDIFF", "1", "{t}a", "WEIGHTS", "1"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZUNIONSTORE", "d", "1", "{t}a", "WITHSCORES"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZINTERCARD", "1", "{t}a", "LIMIT", "-1"}), "-ERR LIMIT can't be negative");
}

TEST_P(ZSetCommandsTest, RandMember) {
  std::set<std::string> members;
  for (int i = 0; i < 20; ++i) {
    members.insert("m" + std::to_string(i));
    EXPECT_EQ(Reply({"ZADD", "z", std::to_string(i), "m" + std::to_string(i)}), ":1");
  }
  EXPECT_TRUE(members.count(Run({"ZRANDMEMBER", "z"}).str));
  // Positive counts: distinct members, at most the set's size.
  for (int count : {1, 5, 19, 20, 50}) {
    protocol::RespValue reply = Run({"ZRANDMEMBER", "z", std::to_string(count)});
    std::set<std::string> seen;
    for (const auto& element : reply.elements) {
      EXPECT_TRUE(members.count(element.str)) << element.str;
      seen.insert(element.str);
    }
    EXPECT_EQ(seen.size(), std::min<size_t>(count, 20)) << count;
    EXPECT_EQ(reply.elements.size(), std::min<size_t>(count, 20)) << count;
  }
  // Negative counts: exactly that many, repeats allowed; with scores, each member's own.
  protocol::RespValue reply = Run({"ZRANDMEMBER", "z", "-30", "WITHSCORES"});
  ASSERT_EQ(reply.elements.size(), 60u);
  for (size_t i = 0; i < reply.elements.size(); i += 2) {
    EXPECT_EQ("m" + reply.elements[i + 1].str, reply.elements[i].str);
  }
  EXPECT_EQ(Reply({"ZRANDMEMBER", "z", "0"}), "[]");
  EXPECT_EQ(Reply({"ZRANDMEMBER", "z", "x"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"ZRANDMEMBER", "z", "1", "BAD"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZRANDMEMBER", "z", "-9223372036854775808"}),
            "-ERR value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807");
  EXPECT_EQ(Reply({"ZRANDMEMBER", "z", "-4611686018427387904", "WITHSCORES"}),
            "-ERR value is out of range");
}

TEST_P(ZSetCommandsTest, ScanVisitsEveryMember) {
  std::set<std::string> members;
  for (int i = 0; i < 300; ++i) {
    std::string member = "m" + std::to_string(i);
    members.insert(member);
    EXPECT_EQ(Reply({"ZADD", "z", std::to_string(i % 7), member}), ":1");
  }
  std::set<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    protocol::RespValue reply = Run({"ZSCAN", "z", cursor, "COUNT", "10"});
    ASSERT_EQ(reply.elements.size(), 2u);
    cursor = reply.elements[0].str;
    for (size_t i = 0; i < reply.elements[1].elements.size(); i += 2) {
      seen.insert(reply.elements[1].elements[i].str);
    }
    ASSERT_LT(++calls, 1000);
  } while (cursor != "0");
  EXPECT_EQ(seen, members);
  EXPECT_EQ(
      Reply({"ZSCAN", "z", "0", "MATCH", "m29?", "COUNT", "1000"}),
      "[\"0\", [\"m294\", \"0\", \"m295\", \"1\", \"m296\", \"2\", \"m290\", \"3\", \"m297\", "
      "\"3\", \"m291\", \"4\", \"m298\", \"4\", \"m292\", \"5\", \"m299\", \"5\", \"m293\", "
      "\"6\"]]");
  EXPECT_EQ(Reply({"ZSCAN", "z", "x"}), "-ERR invalid cursor");
  EXPECT_EQ(Reply({"ZSCAN", "z", "0", "COUNT", "0"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"ZSCAN", "z", "0", "TYPE", "zset"}), "-ERR syntax error");
}

TEST_P(ZSetCommandsTest, BlockingPopsServeAtOnceOrTimeOut) {
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "2", "b"}), ":2");
  EXPECT_EQ(Reply({"BZPOPMIN", "none", "z", "0"}), "[\"z\", \"a\", \"1\"]");
  EXPECT_EQ(Reply({"BZPOPMAX", "z", "1.5"}), "[\"z\", \"b\", \"2\"]");
  EXPECT_EQ(Reply({"EXISTS", "z"}), ":0");
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "2", "b", "3", "c"}), ":3");
  EXPECT_EQ(Reply({"BZMPOP", "0", "2", "none", "z", "MAX", "COUNT", "2"}),
            "[\"z\", [[\"c\", \"3\"], [\"b\", \"2\"]]]");
  // Nothing to serve: the timeout reply (null array).
  EXPECT_EQ(RunRaw({"BZPOPMIN", "none", "0.01"}), "*-1\r\n");
  EXPECT_EQ(RunRaw({"BZMPOP", "0.01", "1", "none", "MIN"}), "*-1\r\n");
  UseResp(3);
  EXPECT_EQ(RunRaw({"BZPOPMAX", "none", "0.01"}), "_\r\n");
  UseResp(2);
  EXPECT_EQ(Reply({"BZPOPMIN", "z", "x"}), "-ERR timeout is not a float or out of range");
  EXPECT_EQ(Reply({"BZPOPMIN", "z", "-1"}), "-ERR timeout is negative");
  EXPECT_EQ(Reply({"BZMPOP", "x", "1", "z", "MIN"}), "-ERR timeout is not a float or out of range");
  EXPECT_EQ(Reply({"BZMPOP", "0", "0", "z", "MIN"}), "-ERR numkeys should be greater than 0");
  EXPECT_EQ(Reply({"BZMPOP", "0", "1", "z", "MIDDLE"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"BZPOPMIN", "z"}), "-ERR wrong number of arguments for 'bzpopmin' command");
  EXPECT_EQ(Reply({"ZCARD", "z"}), ":1");  // Failed commands popped nothing.
}

TEST_P(ZSetCommandsTest, RangeStore) {
  EXPECT_EQ(Reply({"ZADD", "{t}z", "1", "a", "2", "b", "3", "c"}), ":3");
  EXPECT_EQ(Reply({"ZRANGESTORE", "{t}d", "{t}z", "0", "1", "REV"}), ":2");
  EXPECT_EQ(Reply({"ZRANGE", "{t}d", "0", "-1", "WITHSCORES"}), "[\"b\", \"2\", \"c\", \"3\"]");
  EXPECT_EQ(Reply({"ZRANGESTORE", "{t}d", "{t}z", "(1", "inf", "BYSCORE", "LIMIT", "1", "1"}),
            ":1");
  EXPECT_EQ(Reply({"ZRANGE", "{t}d", "0", "-1"}), "[\"c\"]");
  EXPECT_EQ(Reply({"ZRANGESTORE", "{t}d", "{t}z", "5", "6"}), ":0");
  EXPECT_EQ(Reply({"EXISTS", "{t}d"}), ":0");
}

INSTANTIATE_TEST_SUITE_P(Encodings, ZSetCommandsTest, ::testing::Values("listpack", "skiplist"));

// Conversions at the configured thresholds, one way.
class ZSetConversionTest : public CommandTest {};

TEST_F(ZSetConversionTest, ConvertsPastTheEntryAndValueLimits) {
  EXPECT_EQ(Reply({"CONFIG", "SET", "zset-max-listpack-entries", "3"}), "+OK");
  EXPECT_EQ(Reply({"CONFIG", "SET", "zset-max-listpack-value", "4"}), "+OK");
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a", "2", "b", "3", "c"}), ":3");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "z"}), "\"listpack\"");
  EXPECT_EQ(Reply({"ZADD", "z", "4", "d"}), ":1");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "z"}), "\"skiplist\"");
  EXPECT_EQ(Reply({"ZREM", "z", "a", "b", "c"}), ":3");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "z"}), "\"skiplist\"");  // Never back.
  EXPECT_EQ(Reply({"ZRANGE", "z", "0", "-1", "WITHSCORES"}), "[\"d\", \"4\"]");

  EXPECT_EQ(Reply({"ZADD", "v", "1", "abcd"}), ":1");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "v"}), "\"listpack\"");
  EXPECT_EQ(Reply({"ZADD", "v", "1", "abcde"}), ":1");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "v"}), "\"skiplist\"");
  EXPECT_EQ(Reply({"ZRANGE", "v", "0", "-1"}), "[\"abcd\", \"abcde\"]");

  // Computed results become listpacks again when small enough.
  EXPECT_EQ(Reply({"ZUNIONSTORE", "u", "1", "z"}), ":1");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "u"}), "\"listpack\"");
  EXPECT_EQ(Reply({"ZUNIONSTORE", "u", "1", "v"}), ":2");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "u"}), "\"skiplist\"");
  EXPECT_EQ(Reply({"COPY", "v", "w"}), ":1");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "w"}), "\"skiplist\"");
  EXPECT_EQ(Reply({"ZRANGE", "w", "0", "-1"}), "[\"abcd\", \"abcde\"]");
}

}  // namespace
}  // namespace gigakv::testing
