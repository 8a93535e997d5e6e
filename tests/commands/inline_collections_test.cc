// Small hashes, sets and sorted sets are stored inline in their key's arena record (the compact
// encoding's bytes, no heap object) between commands, transparently to every command family.
// These tests look at the record kinds directly and check that commands, TTLs, keyspace
// commands and conversions behave as with heap objects.
#include <string>
#include <vector>

#include "core/types/inline_value.h"
#include "gigakv/key_table.h"
#include "gigakv/store.h"
#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

class InlineCollectionsTest : public CommandTest {
 protected:
  // The kind of the record at `key` in `db`, or nullopt when missing.
  std::optional<ValueKind> KindOf(const std::string& key, int db = 0) {
    Store& store = server_.keyspace().store();
    uint64_t hash = store.Hash(key);
    return store.WithShardOf(key, [&](Shard& shard) -> std::optional<ValueKind> {
      KeyTable* table = shard.FindTable(db);
      if (table == nullptr) return std::nullopt;
      KeyTable::Slot slot = table->Find(key, hash);
      if (slot == KeyTable::kNoSlot) return std::nullopt;
      return table->View(slot).kind;
    });
  }
};

TEST_F(InlineCollectionsTest, SmallHashLivesInlineThroughWrites) {
  EXPECT_EQ(Reply({"HSET", "h", "f", "v"}), ":1");
  EXPECT_EQ(KindOf("h"), ValueKind::kInlineHash);
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "h"}), "\"listpack\"");
  EXPECT_EQ(Reply({"TYPE", "h"}), "+hash");
  // Record 10 bytes (header 1, access 2, key_len 1, value_len 1, key 1, listpack entries 2 * 2)
  // plus its index slot: no Hash object and no separate listpack allocation.
  EXPECT_EQ(Reply({"MEMORY", "USAGE", "h"}), ":18");
  EXPECT_EQ(Reply({"HSET", "h", "g", "1", "x", "y"}), ":2");
  EXPECT_EQ(Reply({"HDEL", "h", "x"}), ":1");
  EXPECT_EQ(Reply({"HINCRBY", "h", "g", "41"}), ":42");
  EXPECT_EQ(KindOf("h"), ValueKind::kInlineHash);
  EXPECT_EQ(Reply({"HGETALL", "h"}), "[\"f\", \"v\", \"g\", \"42\"]");
  EXPECT_EQ(Reply({"HGET", "h", "g"}), "\"42\"");
  EXPECT_EQ(Reply({"HLEN", "h"}), ":2");
  // Strings commands see a hash.
  EXPECT_EQ(Reply({"GET", "h"}),
            "-WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(Reply({"HDEL", "h", "f", "g"}), ":2");
  EXPECT_EQ(KindOf("h"), std::nullopt);
  EXPECT_EQ(Reply({"EXISTS", "h"}), ":0");
}

TEST_F(InlineCollectionsTest, GrowingPastTheLimitsConvertsToHeapObjects) {
  EXPECT_EQ(Reply({"CONFIG", "SET", "hash-max-listpack-entries", "4"}), "+OK");
  EXPECT_EQ(Reply({"HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"}), ":4");
  EXPECT_EQ(KindOf("h"), ValueKind::kInlineHash);
  EXPECT_EQ(Reply({"HSET", "h", "e", "5"}), ":1");
  EXPECT_EQ(KindOf("h"), ValueKind::kObject);
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "h"}), "\"hashtable\"");
  // One way, as in Redis: shrinking keeps the hashtable (and the heap object).
  EXPECT_EQ(Reply({"HDEL", "h", "a", "b", "c", "d"}), ":4");
  EXPECT_EQ(KindOf("h"), ValueKind::kObject);
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "h"}), "\"hashtable\"");
  // A long value converts at once.
  EXPECT_EQ(Reply({"HSET", "long", "f", std::string(65, 'x')}), ":1");
  EXPECT_EQ(KindOf("long"), ValueKind::kObject);

  EXPECT_EQ(Reply({"ZADD", "z", "1", "a"}), ":1");
  EXPECT_EQ(KindOf("z"), ValueKind::kInlineZSet);
  EXPECT_EQ(Reply({"ZADD", "z", "2", std::string(65, 'm')}), ":1");
  EXPECT_EQ(KindOf("z"), ValueKind::kObject);
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "z"}), "\"skiplist\"");
  // Lists are always heap objects.
  EXPECT_EQ(Reply({"RPUSH", "l", "a"}), ":1");
  EXPECT_EQ(KindOf("l"), ValueKind::kObject);
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "l"}), "\"quicklist\"");
}

// Past kMaxInlineCollectionBytes a compact collection stays a heap object (each write of an
// inline record copies and moves it); like an encoding conversion, it stays one when it shrinks.
TEST_F(InlineCollectionsTest, CompactCollectionsAboveTheInlineSizeAreHeapObjects) {
  const std::string value(40, 'v');
  size_t fields = 0;
  while (KindOf("h") != ValueKind::kObject) {
    ASSERT_EQ(Reply({"HSET", "h", "f" + std::to_string(fields), value}), ":1");
    ++fields;
    ASSERT_LT(fields * (value.size() + 4), 2 * kMaxInlineCollectionBytes);
  }
  EXPECT_GT(fields * (value.size() + 4), kMaxInlineCollectionBytes);
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "h"}), "\"listpack\"");
  EXPECT_EQ(Reply({"HLEN", "h"}), ":" + std::to_string(fields));
  EXPECT_EQ(Reply({"HSET", "h", "f0", "short"}), ":0");
  EXPECT_EQ(KindOf("h"), ValueKind::kObject);
  EXPECT_EQ(Reply({"HDEL", "h", "f1", "f2", "f3"}), ":3");
  EXPECT_EQ(KindOf("h"), ValueKind::kObject);
  EXPECT_EQ(Reply({"HGET", "h", "f0"}), "\"short\"");
  EXPECT_EQ(Reply({"HGET", "h", "f4"}), "\"" + value + "\"");
}

TEST_F(InlineCollectionsTest, SetsMoveBetweenIntsetListpackAndHashtable) {
  EXPECT_EQ(Reply({"CONFIG", "SET", "set-max-listpack-entries", "4"}), "+OK");
  EXPECT_EQ(Reply({"SADD", "s", "3", "1", "2"}), ":3");
  EXPECT_EQ(KindOf("s"), ValueKind::kInlineIntset);
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "s"}), "\"intset\"");
  EXPECT_EQ(Reply({"SMEMBERS", "s"}), "[\"1\", \"2\", \"3\"]");
  EXPECT_EQ(Reply({"SADD", "s", "x"}), ":1");
  EXPECT_EQ(KindOf("s"), ValueKind::kInlineSet);
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "s"}), "\"listpack\"");
  EXPECT_EQ(Reply({"SISMEMBER", "s", "x"}), ":1");
  EXPECT_EQ(Reply({"SCARD", "s"}), ":4");
  // SMOVE writes two inline sets; both stay inline.
  EXPECT_EQ(Reply({"SADD", "t", "7"}), ":1");
  EXPECT_EQ(Reply({"SMOVE", "s", "t", "1"}), ":1");
  EXPECT_EQ(KindOf("s"), ValueKind::kInlineSet);
  EXPECT_EQ(KindOf("t"), ValueKind::kInlineIntset);
  EXPECT_EQ(Reply({"SMEMBERS", "t"}), "[\"1\", \"7\"]");
  // Multi-key reads and a store whose destination is one of the sources.
  EXPECT_EQ(Reply({"SINTER", "s", "t"}), "[]");
  EXPECT_EQ(Reply({"SUNIONSTORE", "t", "t", "s"}), ":5");
  EXPECT_EQ(KindOf("t"), ValueKind::kObject);  // 5 members > set-max-listpack-entries.
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "t"}), "\"hashtable\"");
  EXPECT_EQ(Reply({"SINTERSTORE", "d", "s", "t"}), ":3");
  EXPECT_EQ(KindOf("d"), ValueKind::kInlineSet);
  EXPECT_EQ(Reply({"SORT", "d", "ALPHA"}), "[\"2\", \"3\", \"x\"]");
  EXPECT_EQ(Run({"SPOP", "d", "3"}).elements.size(), 3u);
  EXPECT_EQ(KindOf("d"), std::nullopt);
}

TEST_F(InlineCollectionsTest, SortedSetsAndBlockingPops) {
  EXPECT_EQ(Reply({"ZADD", "z", "2", "b", "1", "a"}), ":2");
  EXPECT_EQ(KindOf("z"), ValueKind::kInlineZSet);
  EXPECT_EQ(Reply({"ZINCRBY", "z", "5", "a"}), "\"6\"");
  EXPECT_EQ(Reply({"ZRANGE", "z", "0", "-1", "WITHSCORES"}), "[\"b\", \"2\", \"a\", \"6\"]");
  EXPECT_EQ(Reply({"ZUNIONSTORE", "u", "2", "z", "z"}), ":2");
  EXPECT_EQ(KindOf("u"), ValueKind::kInlineZSet);
  EXPECT_EQ(Reply({"ZSCORE", "u", "a"}), "\"12\"");
  EXPECT_EQ(Reply({"SORT", "z", "ALPHA"}), "[\"a\", \"b\"]");
  EXPECT_EQ(Reply({"BZPOPMIN", "z", "0"}), "[\"z\", \"b\", \"2\"]");
  EXPECT_EQ(KindOf("z"), ValueKind::kInlineZSet);
  EXPECT_EQ(Reply({"ZPOPMAX", "z"}), "[\"a\", \"6\"]");
  EXPECT_EQ(KindOf("z"), std::nullopt);
}

TEST_F(InlineCollectionsTest, KeyspaceCommandsKeepInlineRecords) {
  EXPECT_EQ(Reply({"HSET", "h", "f", "v"}), ":1");
  EXPECT_EQ(Reply({"EXPIRE", "h", "100"}), ":1");
  EXPECT_EQ(KindOf("h"), ValueKind::kInlineHash);
  // A write keeps the TTL when the record goes back inline.
  EXPECT_EQ(Reply({"HSET", "h", "g", "w"}), ":1");
  EXPECT_EQ(KindOf("h"), ValueKind::kInlineHash);
  EXPECT_EQ(Reply({"TTL", "h"}), ":100");
  EXPECT_EQ(Reply({"COPY", "h", "c"}), ":1");
  EXPECT_EQ(KindOf("c"), ValueKind::kInlineHash);
  EXPECT_EQ(Reply({"HSET", "c", "only-in-copy", "1"}), ":1");
  EXPECT_EQ(Reply({"HLEN", "h"}), ":2");
  EXPECT_EQ(Reply({"HLEN", "c"}), ":3");
  EXPECT_EQ(Reply({"RENAME", "h", "r"}), "+OK");
  EXPECT_EQ(KindOf("r"), ValueKind::kInlineHash);
  EXPECT_EQ(Reply({"TTL", "r"}), ":100");
  EXPECT_EQ(Reply({"MOVE", "r", "1"}), ":1");
  EXPECT_EQ(KindOf("r", 1), ValueKind::kInlineHash);
  EXPECT_EQ(Reply({"SWAPDB", "0", "1"}), "+OK");
  EXPECT_EQ(KindOf("r"), ValueKind::kInlineHash);
  EXPECT_EQ(Reply({"HGETALL", "r"}), "[\"f\", \"v\", \"g\", \"w\"]");
  EXPECT_EQ(Reply({"PERSIST", "r"}), ":1");
  EXPECT_EQ(Reply({"TTL", "r"}), ":-1");
  EXPECT_EQ(KindOf("r"), ValueKind::kInlineHash);
  EXPECT_EQ(Reply({"SADD", "s", "1"}), ":1");
  EXPECT_EQ(Reply({"SCAN", "0", "TYPE", "hash", "COUNT", "100"}), "[\"0\", [\"r\"]]");
  EXPECT_EQ(Reply({"SCAN", "0", "TYPE", "set", "COUNT", "100"}), "[\"0\", [\"s\"]]");
  EXPECT_EQ(Reply({"SET", "s", "now a string"}), "+OK");
  EXPECT_EQ(Reply({"GET", "s"}), "\"now a string\"");
  EXPECT_EQ(Reply({"DEL", "r", "s"}), ":2");
  // An inline key expires like any other.
  EXPECT_EQ(Reply({"ZADD", "z", "1", "a"}), ":1");
  EXPECT_EQ(Reply({"PEXPIRE", "z", "10"}), ":1");
  clock_.AdvanceMs(20);
  EXPECT_EQ(Reply({"EXISTS", "z"}), ":0");
}

// The point of the inline kinds: many small collections take less memory.
TEST_F(InlineCollectionsTest, SmallCollectionsUseLessMemoryInline) {
  std::vector<std::string> args = {"HSET", "h"};
  for (int i = 0; i < 10; ++i) {
    args.push_back("field:" + std::to_string(i));
    args.push_back("value:" + std::to_string(i));
  }
  Run(args);
  int64_t inline_usage = Run({"MEMORY", "USAGE", "h"}).integer;
  // The same hash kept as a heap object (a hashtable converts; compare with its listpack size).
  EXPECT_EQ(Reply({"CONFIG", "SET", "hash-max-listpack-entries", "0"}), "+OK");
  args[1] = "big";
  Run(args);
  int64_t object_usage = Run({"MEMORY", "USAGE", "big"}).integer;
  EXPECT_LT(inline_usage, object_usage);
  // Key (1), listpack entries (10 * 2 * 8 bytes: no backlens, no header), record header and
  // varints, index slot.
  EXPECT_EQ(inline_usage, 1 + 160 + 1 + 2 + 1 + 2 + 8);
}

}  // namespace
}  // namespace gigakv::testing
