#include <set>

#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

class KeyspaceCommandsTest : public CommandTest {};

TEST_F(KeyspaceCommandsTest, DelExistsCountEachArgument) {
  Run({"SET", "a", "1"});
  Run({"SET", "b", "2"});
  EXPECT_EQ(Reply({"EXISTS", "a", "a", "b", "c"}), ":3");
  EXPECT_EQ(Reply({"DEL", "a", "c"}), ":1");
  EXPECT_EQ(Reply({"UNLINK", "b", "b"}), ":1");
  EXPECT_EQ(Reply({"EXISTS", "a", "b"}), ":0");
  EXPECT_EQ(Reply({"DEL"}), "-ERR wrong number of arguments for 'del' command");
}

TEST_F(KeyspaceCommandsTest, ExpiredKeysDoNotExist) {
  Run({"SET", "a", "1", "PX", "10"});
  clock_.AdvanceMs(10);
  EXPECT_EQ(Reply({"EXISTS", "a"}), ":0");
  EXPECT_EQ(Reply({"DEL", "a"}), ":0");
}

TEST_F(KeyspaceCommandsTest, DatabasesAreIsolated) {
  Run({"SET", "k", "db0"});
  EXPECT_EQ(Reply({"SELECT", "3"}), "+OK");
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");
  Run({"SET", "k", "db3"});
  EXPECT_EQ(Reply({"DBSIZE"}), ":1");
  EXPECT_EQ(Reply({"FLUSHDB"}), "+OK");
  EXPECT_EQ(Reply({"SELECT", "0"}), "+OK");
  EXPECT_EQ(Reply({"GET", "k"}), "\"db0\"");
  EXPECT_EQ(Reply({"FLUSHALL", "ASYNC"}), "+OK");
  EXPECT_EQ(Reply({"DBSIZE"}), ":0");
  EXPECT_EQ(Reply({"FLUSHALL", "LATER"}), "-ERR syntax error");
}

}  // namespace
}  // namespace gigakv::testing

namespace gigakv::testing {
namespace {

class KeyspaceFamilyTest : public CommandTest {};

// Redis's COPY duplicates the object, so a copied small integer is not shared (refcount 1) until
// its value is written again; RENAME, MOVE, SWAPDB and TTL changes keep the object. Every
// expectation was checked on redis-server 7.0.
TEST_F(KeyspaceFamilyTest, CopiedSmallIntegerIsNotShared) {
  Run({"SET", "a", "5"});
  EXPECT_EQ(Reply({"COPY", "a", "b"}), ":1");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "a"}), ":2147483647");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "b"}), ":1");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "b"}), "\"int\"");
  EXPECT_EQ(Reply({"RENAME", "b", "c"}), "+OK");
  EXPECT_EQ(Reply({"EXPIRE", "c", "100"}), ":1");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "c"}), ":1");
  EXPECT_EQ(Reply({"PERSIST", "c"}), ":1");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "c"}), ":1");
  EXPECT_EQ(Reply({"MOVE", "c", "1"}), ":1");
  EXPECT_EQ(Reply({"SWAPDB", "0", "1"}), "+OK");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "c"}), ":1");
  EXPECT_EQ(Reply({"COPY", "c", "d"}), ":1");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "d"}), ":1");
  // Any write of the value makes a new (shared) integer: in place, or a longer one and back.
  EXPECT_EQ(Reply({"INCR", "c"}), ":6");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "c"}), ":2147483647");
  EXPECT_EQ(Reply({"INCRBY", "d", "20000"}), ":20005");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "d"}), ":1");
  EXPECT_EQ(Reply({"DECRBY", "d", "20000"}), ":5");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "d"}), ":2147483647");
  EXPECT_EQ(Reply({"COPY", "d", "e"}), ":1");
  EXPECT_EQ(Reply({"SET", "e", "5", "KEEPTTL"}), "+OK");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "e"}), ":2147483647");
}

TEST_F(KeyspaceFamilyTest, TypeAndObject) {
  EXPECT_EQ(Reply({"TYPE", "k"}), "+none");
  Run({"SET", "k", "123"});
  EXPECT_EQ(Reply({"TYPE", "k"}), "+string");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "k"}), "\"int\"");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "k"}), ":2147483647");
  // Under a maxmemory limit with an LRU/LFU policy Redis shares no integers (redis-server 7.0).
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory", "1gb", "maxmemory-policy", "allkeys-lru"}), "+OK");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "k"}), ":1");
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory-policy", "allkeys-random"}), "+OK");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "k"}), ":2147483647");
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory", "0", "maxmemory-policy", "noeviction"}), "+OK");
  Run({"SET", "k", "hello"});
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "k"}), "\"embstr\"");
  EXPECT_EQ(Reply({"OBJECT", "REFCOUNT", "k"}), ":1");
  Run({"SET", "k", std::string(45, 'x')});
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "k"}), "\"raw\"");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "nope"}), "(nil)");
  clock_.AdvanceMs(5000);
  EXPECT_EQ(Reply({"OBJECT", "IDLETIME", "k"}), ":5");
  Run({"GET", "k"});
  EXPECT_EQ(Reply({"OBJECT", "IDLETIME", "k"}), ":0");
  EXPECT_EQ(Reply({"OBJECT", "foo", "k"}), "-ERR unknown subcommand 'foo'. Try OBJECT HELP.");
}

TEST_F(KeyspaceFamilyTest, RenameKeepsTtlAcrossShards) {
  Run({"SET", "src", "v", "PX", "5000"});
  EXPECT_EQ(Reply({"RENAME", "src", "dst-on-another-shard"}), "+OK");
  EXPECT_EQ(Reply({"GET", "dst-on-another-shard"}), "\"v\"");
  EXPECT_EQ(Reply({"PTTL", "dst-on-another-shard"}), ":5000");
  EXPECT_EQ(Reply({"EXISTS", "src"}), ":0");
  EXPECT_EQ(Reply({"RENAME", "src", "x"}), "-ERR no such key");
  EXPECT_EQ(Reply({"RENAME", "dst-on-another-shard", "dst-on-another-shard"}), "+OK");
  Run({"SET", "other", "o"});
  EXPECT_EQ(Reply({"RENAMENX", "dst-on-another-shard", "other"}), ":0");
  EXPECT_EQ(Reply({"RENAMENX", "dst-on-another-shard", "fresh"}), ":1");
  EXPECT_EQ(Reply({"RENAME", "fresh", "other"}), "+OK");  // Overwrites.
  EXPECT_EQ(Reply({"GET", "other"}), "\"v\"");
}

TEST_F(KeyspaceFamilyTest, RenameLargeValueKeepsIt) {
  std::string big(10000, 'b');
  Run({"SET", "big", big});
  EXPECT_EQ(Reply({"RENAME", "big", "big2"}), "+OK");
  EXPECT_EQ(Run({"GET", "big2"}).str, big);
}

TEST_F(KeyspaceFamilyTest, CopyAndMove) {
  Run({"SET", "a", "1", "EX", "100"});
  EXPECT_EQ(Reply({"COPY", "a", "b"}), ":1");
  EXPECT_EQ(Reply({"TTL", "b"}), ":100");
  EXPECT_EQ(Reply({"COPY", "a", "b"}), ":0");
  EXPECT_EQ(Reply({"COPY", "a", "b", "REPLACE"}), ":1");
  EXPECT_EQ(Reply({"COPY", "a", "a"}), "-ERR source and destination objects are the same");
  EXPECT_EQ(Reply({"COPY", "a", "a", "DB", "1"}), ":1");
  EXPECT_EQ(Reply({"COPY", "a", "c", "DB", "99"}), "-ERR DB index is out of range");
  EXPECT_EQ(Reply({"COPY", "nope", "c"}), ":0");
  EXPECT_EQ(Reply({"MOVE", "a", "1"}), ":0");  // Exists in db 1 already.
  EXPECT_EQ(Reply({"MOVE", "b", "2"}), ":1");
  EXPECT_EQ(Reply({"EXISTS", "b"}), ":0");
  EXPECT_EQ(Reply({"MOVE", "b", "0"}), "-ERR source and destination objects are the same");
  EXPECT_EQ(Reply({"MOVE", "b", "abc"}), "-ERR value is not an integer or out of range");
  Run({"SELECT", "2"});
  EXPECT_EQ(Reply({"GET", "b"}), "\"1\"");
  EXPECT_EQ(Reply({"TTL", "b"}), ":100");
}

TEST_F(KeyspaceFamilyTest, SwapDb) {
  Run({"SET", "k", "zero"});
  EXPECT_EQ(Reply({"SWAPDB", "0", "1"}), "+OK");
  EXPECT_EQ(Reply({"EXISTS", "k"}), ":0");
  Run({"SELECT", "1"});
  EXPECT_EQ(Reply({"GET", "k"}), "\"zero\"");
  EXPECT_EQ(Reply({"SWAPDB", "a", "1"}), "-ERR invalid first DB index");
  EXPECT_EQ(Reply({"SWAPDB", "0", "b"}), "-ERR invalid second DB index");
  EXPECT_EQ(Reply({"SWAPDB", "0", "16"}), "-ERR DB index is out of range");
}

TEST_F(KeyspaceFamilyTest, KeysAndScan) {
  for (int i = 0; i < 50; ++i) Run({"SET", "user:" + std::to_string(i), "v"});
  Run({"SET", "other", "v"});
  EXPECT_EQ(Run({"KEYS", "*"}).elements.size(), 51u);
  EXPECT_EQ(Run({"KEYS", "user:1?"}).elements.size(), 10u);
  std::set<std::string> seen;
  std::string cursor = "0";
  int steps = 0;
  do {
    protocol::RespValue reply = Run({"SCAN", cursor, "MATCH", "user:*", "COUNT", "7"});
    ASSERT_EQ(reply.elements.size(), 2u);
    cursor = reply.elements[0].str;
    for (const auto& key : reply.elements[1].elements) seen.insert(key.str);
    ASSERT_LT(++steps, 1000);
  } while (cursor != "0");
  EXPECT_EQ(seen.size(), 50u);
  EXPECT_EQ(Reply({"SCAN", "abc"}), "-ERR invalid cursor");
  EXPECT_EQ(Reply({"SCAN", "0", "COUNT", "0"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SCAN", "0", "TYPE", "hash", "COUNT", "1000"}), "[\"0\", []]");
  EXPECT_EQ(Run({"SCAN", "0", "TYPE", "string", "COUNT", "1000"}).elements[1].elements.size(), 51u);
}

TEST_F(KeyspaceFamilyTest, RandomKey) {
  EXPECT_EQ(Reply({"RANDOMKEY"}), "(nil)");
  Run({"SET", "only", "v"});
  EXPECT_EQ(Reply({"RANDOMKEY"}), "\"only\"");
  Run({"PEXPIRE", "only", "10"});
  clock_.AdvanceMs(10);
  EXPECT_EQ(Reply({"RANDOMKEY"}), "(nil)");
}

TEST_F(KeyspaceFamilyTest, ExpireOptions) {
  EXPECT_EQ(Reply({"EXPIRE", "k", "10"}), ":0");
  Run({"SET", "k", "v"});
  EXPECT_EQ(Reply({"EXPIRE", "k", "10", "XX"}), ":0");
  EXPECT_EQ(Reply({"EXPIRE", "k", "10", "GT"}), ":0");  // No TTL counts as infinite.
  EXPECT_EQ(Reply({"EXPIRE", "k", "10", "LT"}), ":1");
  EXPECT_EQ(Reply({"EXPIRE", "k", "20", "NX"}), ":0");
  EXPECT_EQ(Reply({"EXPIRE", "k", "20", "GT"}), ":1");
  EXPECT_EQ(Reply({"EXPIRE", "k", "15", "GT"}), ":0");
  EXPECT_EQ(Reply({"TTL", "k"}), ":20");
  EXPECT_EQ(Reply({"PEXPIRE", "k", "1500"}), ":1");
  EXPECT_EQ(Reply({"TTL", "k"}), ":2");  // Rounded like Redis.
  int64_t at = clock_.NowMs() / 1000 + 100;
  EXPECT_EQ(Reply({"EXPIREAT", "k", std::to_string(at)}), ":1");
  EXPECT_EQ(Reply({"EXPIRETIME", "k"}), ":" + std::to_string(at));
  EXPECT_EQ(Reply({"PEXPIRETIME", "k"}), ":" + std::to_string(at * 1000));
  EXPECT_EQ(Reply({"PERSIST", "k"}), ":1");
  EXPECT_EQ(Reply({"PERSIST", "k"}), ":0");
  EXPECT_EQ(Reply({"TTL", "k"}), ":-1");
  EXPECT_EQ(Reply({"EXPIRETIME", "k"}), ":-1");
  EXPECT_EQ(Reply({"TTL", "nope"}), ":-2");
  EXPECT_EQ(Reply({"EXPIRE", "k", "-1"}), ":1");  // A past deadline deletes.
  EXPECT_EQ(Reply({"EXISTS", "k"}), ":0");
  Run({"SET", "k", "v"});
  EXPECT_EQ(Reply({"EXPIRE", "k", "10", "NX", "XX"}),
            "-ERR NX and XX, GT or LT options at the same time are not compatible");
  EXPECT_EQ(Reply({"EXPIRE", "k", "10", "GT", "LT"}),
            "-ERR GT and LT options at the same time are not compatible");
  EXPECT_EQ(Reply({"EXPIRE", "k", "10", "FOO"}), "-ERR Unsupported option FOO");
  EXPECT_EQ(Reply({"EXPIRE", "k", "9223372036854775807"}),
            "-ERR invalid expire time in 'expire' command");
  EXPECT_EQ(Reply({"PEXPIREAT", "k", "abc"}), "-ERR value is not an integer or out of range");
}

TEST_F(KeyspaceFamilyTest, TouchCountsExisting) {
  Run({"SET", "a", "1"});
  EXPECT_EQ(Reply({"TOUCH", "a", "b", "a"}), ":2");
}

}  // namespace
}  // namespace gigakv::testing
