// The bookkeeping every key lookup does, whichever family runs it (key_access.h): a read of an
// existing key counts one keyspace hit and touches the key, a read of a missing key counts one
// miss, LOOKUP_NOTOUCH reads (EXISTS, TYPE, TTL, OBJECT) count without touching, and writes count
// neither hits nor misses. Touches are seen through OBJECT FREQ under an LFU policy with
// lfu-log-factor 0, where every touch adds exactly one. Every expectation but CLIENT NO-TOUCH's
// (a Redis 7.2 command) was checked on redis-server 7.0 with the same commands.
#include <algorithm>
#include <string>
#include <vector>

#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

using Command = std::vector<std::string>;

enum class Type { kString, kHash, kList, kSet, kZSet };

struct Case {
  Type type;  // Of the key "k" the command runs on.
  Command command;
};

class BookkeepingTest : public CommandTest {
 protected:
  BookkeepingTest() {
    Run({"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"});
    Run({"CONFIG", "SET", "lfu-log-factor", "0"});
    Run({"CONFIG", "SET", "lfu-decay-time", "0"});
  }

  struct Counts {
    uint64_t hits = 0;
    uint64_t misses = 0;
    int64_t freq_change = 0;  // Of "k" (0 when it is gone afterwards).
  };

  // Runs `command` on a fresh key "k" of `type` and returns what it counted and touched. The
  // command must succeed unless `may_fail` (WRONGTYPE, RENAME of a missing key...).
  Counts Measure(Type type, const Command& command, bool may_fail = false) {
    Run({"FLUSHALL"});
    switch (type) {
      case Type::kString:
        Run({"SET", "k", "hello"});
        break;
      case Type::kHash:
        Run({"HSET", "k", "f", "1", "g", "2"});
        break;
      case Type::kList:
        Run({"RPUSH", "k", "a", "b"});
        break;
      case Type::kSet:
        Run({"SADD", "k", "a", "b"});
        break;
      case Type::kZSet:
        Run({"ZADD", "k", "1", "a", "2", "b"});
        break;
    }
    int64_t freq_before = Run({"OBJECT", "FREQ", "k"}).integer;
    server::Stats::Totals before = server_.stats().totals();
    protocol::RespValue reply = Run(command);
    if (!may_fail) {
      EXPECT_FALSE(reply.is_error()) << reply.DebugString();
    }
    server::Stats::Totals after = server_.stats().totals();
    Counts counts;
    counts.hits = after.keyspace_hits - before.keyspace_hits;
    counts.misses = after.keyspace_misses - before.keyspace_misses;
    protocol::RespValue freq = Run({"OBJECT", "FREQ", "k"});
    if (freq.type != protocol::RespValue::Type::kNull)
      counts.freq_change = freq.integer - freq_before;
    return counts;
  }

  // `command` with every "k" replaced by "missing".
  static Command OnMissingKey(Command command) {
    for (std::string& arg : command) {
      if (arg == "k") arg = "missing";
    }
    return command;
  }

  static std::string Text(const Command& command) {
    std::string text;
    for (const std::string& arg : command) text += " " + arg;
    return text;
  }
};

// Reads: one hit and one touch for the key, one miss when it is missing.
TEST_F(BookkeepingTest, ReadsCountAHitAndTouchOrCountAMiss) {
  const std::vector<Case> reads = {
      {Type::kString, {"GET", "k"}},
      {Type::kString, {"MGET", "k"}},
      {Type::kString, {"STRLEN", "k"}},
      {Type::kString, {"GETRANGE", "k", "0", "1"}},
      {Type::kString, {"GETBIT", "k", "0"}},
      {Type::kString, {"BITCOUNT", "k"}},
      {Type::kString, {"BITPOS", "k", "1"}},
      {Type::kString, {"BITFIELD_RO", "k", "GET", "u8", "0"}},
      {Type::kString, {"BITFIELD", "k", "GET", "u8", "0"}},
      {Type::kString, {"GETEX", "k"}},
      {Type::kString, {"TOUCH", "k"}},
      {Type::kHash, {"HGET", "k", "f"}},
      {Type::kHash, {"HMGET", "k", "f", "g"}},
      {Type::kHash, {"HLEN", "k"}},
      {Type::kHash, {"HSTRLEN", "k", "f"}},
      {Type::kHash, {"HEXISTS", "k", "f"}},
      {Type::kHash, {"HKEYS", "k"}},
      {Type::kHash, {"HVALS", "k"}},
      {Type::kHash, {"HGETALL", "k"}},
      {Type::kHash, {"HRANDFIELD", "k"}},
      {Type::kHash, {"HSCAN", "k", "0"}},
      {Type::kList, {"LLEN", "k"}},
      {Type::kList, {"LINDEX", "k", "0"}},
      {Type::kList, {"LRANGE", "k", "0", "-1"}},
      {Type::kList, {"LPOS", "k", "a"}},
      {Type::kList, {"SORT", "k", "ALPHA"}},
      {Type::kList, {"SORT_RO", "k", "ALPHA"}},
      {Type::kSet, {"SCARD", "k"}},
      {Type::kSet, {"SISMEMBER", "k", "a"}},
      {Type::kSet, {"SMISMEMBER", "k", "a", "z"}},
      {Type::kSet, {"SMEMBERS", "k"}},
      {Type::kSet, {"SRANDMEMBER", "k"}},
      {Type::kSet, {"SSCAN", "k", "0"}},
      {Type::kSet, {"SINTER", "k"}},
      {Type::kSet, {"SINTERCARD", "1", "k"}},
      {Type::kSet, {"SUNION", "k"}},
      {Type::kSet, {"SDIFF", "k"}},
      {Type::kZSet, {"ZCARD", "k"}},
      {Type::kZSet, {"ZSCORE", "k", "a"}},
      {Type::kZSet, {"ZMSCORE", "k", "a", "z"}},
      {Type::kZSet, {"ZRANK", "k", "a"}},
      {Type::kZSet, {"ZREVRANK", "k", "a"}},
      {Type::kZSet, {"ZCOUNT", "k", "0", "10"}},
      {Type::kZSet, {"ZLEXCOUNT", "k", "-", "+"}},
      {Type::kZSet, {"ZRANGE", "k", "0", "-1"}},
      {Type::kZSet, {"ZRANGEBYSCORE", "k", "0", "10"}},
      {Type::kZSet, {"ZREVRANGE", "k", "0", "-1"}},
      {Type::kZSet, {"ZRANGEBYLEX", "k", "-", "+"}},
      {Type::kZSet, {"ZRANDMEMBER", "k"}},
      {Type::kZSet, {"ZSCAN", "k", "0"}},
      {Type::kZSet, {"ZUNION", "1", "k"}},
      {Type::kZSet, {"ZINTER", "1", "k"}},
      {Type::kZSet, {"ZDIFF", "1", "k"}},
      {Type::kZSet, {"ZINTERCARD", "1", "k"}},
      // The sources of the *STORE commands are reads too (Redis 7.0).
      {Type::kSet, {"SUNIONSTORE", "dst", "k"}},
      {Type::kZSet, {"ZUNIONSTORE", "dst", "1", "k"}},
      {Type::kZSet, {"ZRANGESTORE", "dst", "k", "0", "-1"}},
      {Type::kList, {"SORT", "k", "ALPHA", "STORE", "dst"}},
      {Type::kString, {"BITOP", "NOT", "dst", "k"}},
      {Type::kString, {"COPY", "k", "dst"}},
  };
  for (const Case& read : reads) {
    SCOPED_TRACE(Text(read.command));
    Counts found = Measure(read.type, read.command);
    EXPECT_EQ(found.hits, 1u);
    EXPECT_EQ(found.misses, 0u);
    EXPECT_EQ(found.freq_change, 1) << "a read of the key must touch it";
    Counts missing = Measure(read.type, OnMissingKey(read.command));
    EXPECT_EQ(missing.hits, 0u);
    EXPECT_EQ(missing.misses, 1u);
  }
}

// A read that finds a key of another type still counts a hit and touches it: the lookup comes
// before the type check.
TEST_F(BookkeepingTest, WrongTypeReadsCountAHit) {
  for (const Command& command : {Command{"GET", "k"}, Command{"HGET", "k", "f"},
                                 Command{"LRANGE", "k", "0", "1"}, Command{"ZSCORE", "k", "a"}}) {
    SCOPED_TRACE(Text(command));
    Counts counts = Measure(Type::kSet, command, /*may_fail=*/true);
    EXPECT_EQ(counts.hits, 1u);
    EXPECT_EQ(counts.freq_change, 1);
  }
}

// Redis's LOOKUP_NOTOUCH reads: a hit or a miss, no touch.
TEST_F(BookkeepingTest, NoTouchReadsCountWithoutTouching) {
  const std::vector<Command> reads = {
      {"EXISTS", "k"},
      {"TYPE", "k"},
      {"TTL", "k"},
      {"PTTL", "k"},
      {"EXPIRETIME", "k"},
      {"PEXPIRETIME", "k"},
      {"OBJECT", "ENCODING", "k"},
      {"OBJECT", "FREQ", "k"},
  };
  for (const Command& read : reads) {
    SCOPED_TRACE(Text(read));
    Counts found = Measure(Type::kList, read);
    EXPECT_EQ(found.hits, 1u);
    EXPECT_EQ(found.misses, 0u);
    EXPECT_EQ(found.freq_change, 0);
    Counts missing = Measure(Type::kList, OnMissingKey(read));
    EXPECT_EQ(missing.hits, 0u);
    EXPECT_EQ(missing.misses, 1u);
  }
}

// Writes count neither hits nor misses, on an existing key or a missing one; the write lookup
// touches the key it finds.
TEST_F(BookkeepingTest, WritesCountNoHitsOrMisses) {
  const std::vector<Case> writes = {
      {Type::kString, {"SET", "k", "v"}},
      {Type::kString, {"APPEND", "k", "v"}},
      {Type::kString, {"SETRANGE", "k", "0", "v"}},
      {Type::kString, {"SETBIT", "k", "0", "1"}},
      {Type::kString, {"MSET", "k", "v"}},
      {Type::kString, {"DEL", "k"}},
      {Type::kString, {"RENAME", "k", "k2"}},
      {Type::kHash, {"HSET", "k", "h", "3"}},
      {Type::kHash, {"HDEL", "k", "f"}},
      {Type::kHash, {"HINCRBY", "k", "f", "1"}},
      {Type::kList, {"LPUSH", "k", "x"}},
      {Type::kList, {"RPOP", "k"}},
      {Type::kList, {"LSET", "k", "0", "x"}},
      {Type::kList, {"LMOVE", "k", "k2", "LEFT", "RIGHT"}},
      {Type::kSet, {"SADD", "k", "x"}},
      {Type::kSet, {"SREM", "k", "a"}},
      {Type::kSet, {"SPOP", "k"}},
      {Type::kSet, {"SPOP", "k", "0"}},  // Looked up (and type-checked) before the count.
      {Type::kSet, {"SMOVE", "k", "k2", "a"}},
      {Type::kZSet, {"ZADD", "k", "5", "x"}},
      {Type::kZSet, {"ZREM", "k", "a"}},
      {Type::kZSet, {"ZPOPMIN", "k"}},
      {Type::kZSet, {"ZINCRBY", "k", "1", "a"}},
      {Type::kZSet, {"EXPIRE", "k", "100"}},
      {Type::kZSet, {"PERSIST", "k"}},
  };
  const std::vector<Command> touching = {
      {"HSET", "k", "h", "3"}, {"HDEL", "k", "f"}, {"LPUSH", "k", "x"},     {"RPOP", "k"},
      {"SADD", "k", "x"},      {"SREM", "k", "a"}, {"ZADD", "k", "5", "x"}, {"ZREM", "k", "a"},
      {"EXPIRE", "k", "100"},  {"PERSIST", "k"},
  };
  for (const Case& write : writes) {
    SCOPED_TRACE(Text(write.command));
    Counts found = Measure(write.type, write.command);
    EXPECT_EQ(found.hits, 0u);
    EXPECT_EQ(found.misses, 0u);
    if (std::find(touching.begin(), touching.end(), write.command) != touching.end()) {
      EXPECT_EQ(found.freq_change, 1) << "a write lookup touches the key";
    }
    Counts missing = Measure(write.type, OnMissingKey(write.command), /*may_fail=*/true);
    EXPECT_EQ(missing.hits, 0u);
    EXPECT_EQ(missing.misses, 0u);
  }
}

// CLIENT NO-TOUCH: reads still count, but touch nothing.
TEST_F(BookkeepingTest, NoTouchClientCountsButDoesNotTouch) {
  Run({"CLIENT", "NO-TOUCH", "on"});
  Counts counts = Measure(Type::kString, {"GET", "k"});
  EXPECT_EQ(counts.hits, 1u);
  EXPECT_EQ(counts.freq_change, 0);
}

}  // namespace
}  // namespace gigakv::testing
