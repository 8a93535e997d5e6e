// Every command the table flags `write` publishes what it changes: run on a fixture keyspace, each
// sample's change records must list every key whose content, type or TTL changed, and replaying
// the effects published since the start into a fresh server must reproduce the keyspace exactly.
// rdb_changes_since_last_save must grow exactly when the sample publishes, by Redis 7.0's amount
// (the counting lives in the publish helpers, so a write that forgets to publish counts nothing).
// A write command without samples fails the test: adding one means adding its samples here.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "persistence/rdb/rdb_io.h"
#include "protocol/resp_reader.h"
#include "support/keyspace_digest.h"

namespace gigakv::testing {
namespace {

using Command = std::vector<std::string>;

struct Sample {
  Command command;
  // The sample must change the keyspace (most must: a sample that changes nothing proves
  // nothing about publishing).
  bool changes = true;
  // A sample that changes nothing but is still published, as Redis signals and propagates it
  // (LMOVE of a one-element list onto itself fails a WATCH in Redis too).
  bool published_unchanged = false;
  // How much rdb_changes_since_last_save grows, as in Redis 7.0 (fixture, then the sample);
  // kOnePerCommand: by 1 when the sample publishes a change, by 0 when it does not. 0 for a
  // published sample Redis does not count (a BITFIELD that only pads the key).
  int dirty = kOnePerCommand;
  static constexpr int kOnePerCommand = -1;
};

// Keys of every type in db 0, a TTL, and a key in db 1.
const std::vector<Command>& Fixture() {
  static const auto* fixture = new std::vector<Command>{
      {"SET", "s", "hello"},
      {"SET", "n", "10"},
      {"SET", "f", "1.5"},
      {"SET", "t", "temp", "EX", "100"},
      {"SETBIT", "bits", "7", "1"},
      {"HSET", "h", "f1", "v1", "f2", "2"},
      {"RPUSH", "l", "a", "b", "c", "b"},
      {"RPUSH", "l2", "x"},
      {"SADD", "st", "a", "b", "c"},
      {"SADD", "st2", "b", "c", "d"},
      {"ZADD", "z", "1", "a", "2", "b", "3", "c"},
      {"ZADD", "z2", "5", "b", "6", "d"},
      {"ZADD", "zl", "0", "a", "0", "b", "0", "c"},
      {"SELECT", "1"},
      {"SET", "other", "1"},
      {"SELECT", "0"},
      {"PFADD", "hll0", "x", "y"},
      {"XADD", "stream", "1-1", "a", "1"},
      {"XADD", "stream", "2-1", "b", "2"},
      {"XADD", "stream", "3-1", "a", "3"},
      {"XGROUP", "CREATE", "stream", "g", "0"},
      {"XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "stream", ">"},
      {"FUNCTION", "LOAD", "#!lua name=fixture\nredis.register_function('f1', function() end)"},
  };
  return *fixture;
}

// FUNCTION DUMP's payload of one library: FUNCTION2, the code as an RDB string (under 64
// bytes), RDB version 10 and the CRC-64 (little-endian), as Redis writes it.
std::string FunctionPayload(std::string_view code) {
  std::string payload = "\xf5";
  payload.push_back(static_cast<char>(code.size()));
  payload.append(code).append("\x0a\x00", 2);
  const uint64_t crc = persistence::rdb::Crc64(0, payload);
  for (int i = 0; i < 8; ++i) payload.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  return payload;
}

// DUMP of the string "hello" on redis-server 7.0.15 (17 bytes: value, RDB version, CRC-64).
std::string HelloPayload() {
  using namespace std::string_view_literals;
  return std::string(
      "\x00\x05hello\n\x00"
      "cr\xdfve4 \n"sv);
}

// A stand-in MIGRATE target on loopback, started once for the whole test: it answers +OK to
// every command of every connection (its thread lives as long as the process).
std::string OkTargetPort() {
  static const int port = [] {
    int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) ||
        ::listen(listener, 16)) {
      return 0;
    }
    socklen_t length = sizeof(address);
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
    std::thread([listener] {
      while (true) {
        int connection = ::accept(listener, nullptr, nullptr);
        if (connection < 0) return;
        std::thread([connection] {
          std::string input;
          char chunk[4096];
          ssize_t n;
          while ((n = ::recv(connection, chunk, sizeof(chunk), 0)) > 0) {
            input.append(chunk, static_cast<size_t>(n));
            protocol::RespValue command;  // A request parses as an array of bulk strings.
            int64_t used;
            while ((used = protocol::ParseReply(input, &command)) > 0) {
              input.erase(0, static_cast<size_t>(used));
              if (::send(connection, "+OK\r\n", 5, MSG_NOSIGNAL) != 5) break;
            }
            if (used < 0) break;
          }
          ::close(connection);
        }).detach();
      }
    }).detach();
    return static_cast<int>(ntohs(address.sin_port));
  }();
  return std::to_string(port);
}

const std::map<std::string, std::vector<Sample>>& Samples() {
  static const auto* samples = new std::map<std::string, std::vector<Sample>>{
      // Strings.
      {"set",
       {{{"SET", "s", "v"}},
        {{"SET", "new", "v", "EX", "10"}},
        {{"SET", "t", "v", "KEEPTTL"}},
        {{"SET", "s", "v", "NX"}, false},
        {{"SET", "s", "v", "XX", "GET", "PXAT", "1800000000000"}},
        {{"SET", "l", "replaces-a-list"}}}},
      {"setnx", {{{"SETNX", "fresh", "v"}}, {{"SETNX", "s", "v"}, false}}},
      {"setex", {{{"SETEX", "s", "50", "v"}}}},
      {"psetex", {{{"PSETEX", "s", "5000", "v"}}}},
      {"getset", {{{"GETSET", "t", "v"}}}},
      {"getdel", {{{"GETDEL", "s"}}, {{"GETDEL", "missing"}, false}}},
      {"getex",
       {{{"GETEX", "s", "EX", "30"}},
        {{"GETEX", "t", "PERSIST"}},
        {{"GETEX", "s", "PXAT", "1"}},
        {{"GETEX", "s"}, false}}},
      {"mset", {{{"MSET", "s", "1", "m2", "2", "l", "3"}, true, false, 3}}},
      {"msetnx",
       {{{"MSETNX", "a1", "1", "a2", "2"}, true, false, 2},
        {{"MSETNX", "a1", "1", "s", "2"}, false}}},
      {"append", {{{"APPEND", "s", " world"}}, {{"APPEND", "t", "x"}}, {{"APPEND", "new", "x"}}}},
      {"setrange", {{{"SETRANGE", "s", "10", "xy"}}, {{"SETRANGE", "t", "0", "T"}}}},
      {"incr", {{{"INCR", "n"}}, {{"INCR", "fresh"}}}},
      {"decr", {{{"DECR", "n"}}}},
      {"incrby", {{{"INCRBY", "n", "-15"}}}},
      {"decrby", {{{"DECRBY", "n", "5"}}}},
      {"incrbyfloat", {{{"INCRBYFLOAT", "f", "0.25"}}, {{"INCRBYFLOAT", "n", "1e3"}}}},
      // Bitmaps.
      {"setbit", {{{"SETBIT", "bits", "100", "1"}}, {{"SETBIT", "s", "0", "1"}}}},
      {"bitop",
       {{{"BITOP", "AND", "dest", "s", "bits"}},
        {{"BITOP", "NOT", "s", "s"}},
        {{"BITOP", "OR", "s", "missing", "missing2"}}}},
      {"bitfield",
       {{{"BITFIELD", "bits", "SET", "u8", "0", "255", "INCRBY", "i5", "100", "1"}, true, false, 2},
        {{"BITFIELD", "fresh", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "5"}, true, false, 0}}},
      // Hashes.
      {"hset",
       {{{"HSET", "h", "f1", "x", "f3", "y"}, true, false, 2}, {{"HSET", "newh", "a", "b"}}}},
      {"hsetnx", {{{"HSETNX", "h", "f9", "v"}}, {{"HSETNX", "h", "f1", "v"}, false}}},
      {"hmset", {{{"HMSET", "h", "f1", "1", "f2", "2"}, true, false, 2}}},
      {"hdel", {{{"HDEL", "h", "f1", "nope"}}, {{"HDEL", "h", "f1", "f2"}, true, false, 2}}},
      {"hincrby", {{{"HINCRBY", "h", "f2", "40"}}}},
      {"hincrbyfloat", {{{"HINCRBYFLOAT", "h", "f2", "0.5"}}}},
      // Keyspace.
      {"del", {{{"DEL", "s", "h", "missing"}, true, false, 2}}},
      {"unlink", {{{"UNLINK", "l", "z"}, true, false, 2}}},
      {"rename", {{{"RENAME", "t", "renamed"}}, {{"RENAME", "s", "n"}}}},
      {"renamenx", {{{"RENAMENX", "s", "unused"}}, {{"RENAMENX", "s", "n"}, false}}},
      // A payload from redis-server restores into gigakv.
      {"restore",
       {{{"RESTORE", "fresh", "0", HelloPayload()}},
        {{"RESTORE", "n", "0", HelloPayload(), "REPLACE"}},
        {{"RESTORE", "ttl", "5000", HelloPayload()}},
        {{"RESTORE", "gone", "1", HelloPayload(), "ABSTTL"}, false}}},
      // To a target that acknowledges everything (OkTargetPort): the keys go, as DELs; COPY
      // and missing keys change nothing.
      {"migrate",
       {{{"MIGRATE", "127.0.0.1", OkTargetPort(), "s", "0", "1000"}},
        {{"MIGRATE", "127.0.0.1", OkTargetPort(), "", "0", "1000", "KEYS", "h", "t", "missing"},
         true,
         false,
         2},
        {{"MIGRATE", "127.0.0.1", OkTargetPort(), "z", "3", "1000", "COPY"}, false},
        {{"MIGRATE", "127.0.0.1", OkTargetPort(), "missing", "0", "1000"}, false}}},
      {"copy",
       {{{"COPY", "h", "hcopy"}},
        {{"COPY", "t", "s", "REPLACE"}},
        {{"COPY", "z", "z", "DB", "1"}},
        {{"COPY", "s", "n"}, false}}},
      {"move", {{{"MOVE", "t", "1"}}, {{"MOVE", "s", "3"}}}},
      {"swapdb", {{{"SWAPDB", "0", "1"}}, {{"SWAPDB", "1", "2"}}}},
      {"expire",
       {{{"EXPIRE", "s", "100"}},
        {{"EXPIRE", "t", "10", "LT"}},
        {{"EXPIRE", "h", "-1"}},
        {{"EXPIRE", "t", "1000", "LT"}, false}}},
      {"pexpire", {{{"PEXPIRE", "s", "100000"}}}},
      {"expireat", {{{"EXPIREAT", "l", "2000000000"}}, {{"EXPIREAT", "l", "1"}}}},
      {"pexpireat", {{{"PEXPIREAT", "z", "2000000000000"}}}},
      {"persist", {{{"PERSIST", "t"}}, {{"PERSIST", "s"}, false}}},
      {"flushdb", {{{"FLUSHDB"}, true, false, 15}, {{"FLUSHDB", "ASYNC"}, true, false, 15}}},
      {"flushall", {{{"FLUSHALL"}, true, false, 16}, {{"FLUSHALL", "SYNC"}, true, false, 16}}},
      // Geo: ZADD of geohash scores.
      {"geoadd",
       {{{"GEOADD", "geo", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669",
          "Catania"},
         true,
         false,
         2},
        {{"GEOADD", "z", "CH", "XX", "1", "1", "a"}}}},
      // HyperLogLogs (strings in Redis's representation).
      {"pfadd",
       {{{"PFADD", "hll", "a", "b"}, true, false, 3},
        {{"PFADD", "newhll"}, true, false, 1},
        {{"PFADD", "hll0", "x"}, false}}},
      {"georadius",
       {{{"GEORADIUS", "z", "-180", "-85", "100", "km", "STOREDIST", "dst"}, true, false, 3},
        {{"GEORADIUS", "z", "0", "0", "1", "km", "STORE", "z2"}},
        {{"GEORADIUS", "z", "-180", "-85", "100", "km"}, false}}},
      {"georadiusbymember",
       {{{"GEORADIUSBYMEMBER", "z", "a", "1", "m", "STORE", "zl"}, true, false, 3}}},
      {"geosearchstore",
       {{{"GEOSEARCHSTORE", "z2", "z", "FROMLONLAT", "-180", "-85", "BYBOX", "300", "300", "km"},
         true,
         false,
         3},
        {{"GEOSEARCHSTORE", "s", "missing", "FROMMEMBER", "a", "BYRADIUS", "1", "m"}}}},
      {"xadd",
       {{{"XADD", "newstream", "1-1", "f", "v"}},
        {{"XADD", "stream", "MAXLEN", "~", "0", "*", "f", "v"}},
        {{"XADD", "stream", "MAXLEN", "1", "4-*", "f", "v"}}}},
      {"xtrim", {{{"XTRIM", "stream", "MAXLEN", "1"}, true, false, 2}}},
      {"xdel", {{{"XDEL", "stream", "1-1", "3-1", "9-9"}, true, false, 2}}},
      {"xsetid", {{{"XSETID", "stream", "10-0", "ENTRIESADDED", "7", "MAXDELETEDID", "9-0"}}}},
      // Consumer groups: the fixture's group g has delivered 1-1 and 2-1 to alice. Dirty counts
      // as measured on redis-server 7.0.15 (one per claimed entry, one per consumer created).
      {"xgroup|create",
       {{{"XGROUP", "CREATE", "stream", "g2", "$"}},
        {{"XGROUP", "CREATE", "newstream", "g", "0", "MKSTREAM", "ENTRIESREAD", "0"}}}},
      {"xgroup|setid", {{{"XGROUP", "SETID", "stream", "g", "3-1", "ENTRIESREAD", "3"}}}},
      {"xgroup|destroy",
       {{{"XGROUP", "DESTROY", "stream", "g"}}, {{"XGROUP", "DESTROY", "stream", "none"}, false}}},
      {"xgroup|createconsumer",
       {{{"XGROUP", "CREATECONSUMER", "stream", "g", "bob"}},
        {{"XGROUP", "CREATECONSUMER", "stream", "g", "alice"}, false}}},
      {"xgroup|delconsumer",
       {{{"XGROUP", "DELCONSUMER", "stream", "g", "alice"}},
        {{"XGROUP", "DELCONSUMER", "stream", "g", "nobody"}, false}}},
      {"xack", {{{"XACK", "stream", "g", "1-1", "9-9"}}, {{"XACK", "stream", "g", "3-1"}, false}}},
      {"xclaim",
       {{{"XCLAIM", "stream", "g", "bob", "0", "1-1", "3-1"}, true, false, 2},
        {{"XCLAIM", "stream", "g", "alice", "0", "2-1", "JUSTID", "IDLE", "5000"}},
        {{"XCLAIM", "stream", "g", "bob", "0", "3-1", "FORCE", "RETRYCOUNT", "5"},
         true,
         false,
         2}}},
      {"xautoclaim",
       {{{"XAUTOCLAIM", "stream", "g", "bob", "0", "0-0", "COUNT", "1"}, true, false, 2},
        {{"XAUTOCLAIM", "stream", "g", "bob", "0", "0-0", "JUSTID"}, true, false, 3}}},
      {"xreadgroup",
       {{{"XREADGROUP", "GROUP", "g", "bob", "STREAMS", "stream", ">"}, true, false, 2},
        {{"XREADGROUP", "GROUP", "g", "bob", "NOACK", "STREAMS", "stream", ">"}, true, false, 2},
        {{"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "stream", "0"}},
        {{"XREADGROUP", "GROUP", "g", "carol", "STREAMS", "stream", "0"}, true, false, 2}}},
      {"pfmerge",
       {{{"PFMERGE", "merged", "hll0", "missing"}}, {{"PFMERGE", "hll0", "hll0"}, false, true}}},
      {"pfdebug", {{{"PFDEBUG", "TODENSE", "hll0"}}, {{"PFDEBUG", "GETREG", "hll0"}}}},
      // PFCOUNT stores the cardinality it computed (the fixture's PFADD left it stale).
      {"pfcount", {{{"PFCOUNT", "hll0"}}, {{"PFCOUNT", "hll0", "hll"}, false}}},
      // Function libraries: no key changes, but Redis propagates each (the log replays them).
      {"function|flush",
       {{{"FUNCTION", "FLUSH"}, false, true}, {{"FUNCTION", "FLUSH", "SYNC"}, false, true}}},
      {"function|load",
       {{{"FUNCTION", "LOAD", "#!lua name=cov\nredis.register_function('g', function() end)"},
         false,
         true},
        {{"FUNCTION", "LOAD", "REPLACE",
          "#!lua name=fixture\nredis.register_function('f2', function() end)"},
         false,
         true}}},
      {"function|delete", {{{"FUNCTION", "DELETE", "fixture"}, false, true}}},
      {"function|restore",
       {{{"FUNCTION", "RESTORE",
          FunctionPayload("#!lua name=other\nredis.register_function('r', function() end)")},
         false,
         true},
        {{"FUNCTION", "RESTORE",
          FunctionPayload("#!lua name=fixture\nredis.register_function('r', function() end)"),
          "REPLACE"},
         false,
         true}}},
      // Lists.
      {"lpush", {{{"LPUSH", "l", "p", "q"}, true, false, 2}, {{"LPUSH", "newl", "x"}}}},
      {"rpush", {{{"RPUSH", "l", "p"}}}},
      {"lpushx", {{{"LPUSHX", "l", "p"}}, {{"LPUSHX", "missing", "p"}, false}}},
      {"rpushx", {{{"RPUSHX", "l", "p"}}}},
      {"lpop", {{{"LPOP", "l"}}, {{"LPOP", "l", "10"}, true, false, 4}}},
      {"rpop", {{{"RPOP", "l", "2"}, true, false, 2}, {{"RPOP", "l2"}}}},
      {"lset", {{{"LSET", "l", "-1", "z"}}}},
      {"ltrim",
       {{{"LTRIM", "l", "1", "2"}, true, false, 2}, {{"LTRIM", "l", "5", "9"}, true, false, 4}}},
      {"lrem", {{{"LREM", "l", "0", "b"}, true, false, 2}, {{"LREM", "l", "-1", "b"}}}},
      {"linsert", {{{"LINSERT", "l", "BEFORE", "c", "new"}}}},
      {"lmove",
       {{{"LMOVE", "l", "l2", "LEFT", "RIGHT"}},
        {{"LMOVE", "l", "l", "LEFT", "RIGHT"}},
        {{"LMOVE", "l2", "l2", "LEFT", "LEFT"}, false, true}}},
      {"rpoplpush", {{{"RPOPLPUSH", "l", "fresh"}}, {{"RPOPLPUSH", "l2", "l"}}}},
      {"lmpop", {{{"LMPOP", "2", "missing", "l", "RIGHT", "COUNT", "2"}, true, false, 2}}},
      {"blpop", {{{"BLPOP", "missing", "l", "0"}}}},
      {"brpop", {{{"BRPOP", "l2", "0"}}}},
      {"blmove", {{{"BLMOVE", "l", "x", "RIGHT", "LEFT", "0"}}}},
      {"brpoplpush", {{{"BRPOPLPUSH", "l", "l2", "0"}}}},
      {"blmpop", {{{"BLMPOP", "0", "1", "l", "LEFT", "COUNT", "9"}, true, false, 4}}},
      // Sets.
      {"sadd", {{{"SADD", "st", "x", "a"}}, {{"SADD", "news", "1", "2"}, true, false, 2}}},
      {"srem", {{{"SREM", "st", "a", "zz"}}, {{"SREM", "st", "a", "b", "c"}, true, false, 3}}},
      {"spop",
       {{{"SPOP", "st"}},
        {{"SPOP", "st", "2"}, true, false, 2},
        {{"SPOP", "st2", "10"}, true, false, 3}}},
      {"smove",
       {{{"SMOVE", "st", "st2", "a"}, true, false, 2},
        {{"SMOVE", "st", "brand", "c"}, true, false, 2}}},
      {"sinterstore", {{{"SINTERSTORE", "dest", "st", "st2"}}, {{"SINTERSTORE", "s", "st", "no"}}}},
      {"sunionstore", {{{"SUNIONSTORE", "st", "st", "st2"}}}},
      {"sdiffstore", {{{"SDIFFSTORE", "d", "st", "st2"}}}},
      // Sorted sets.
      {"zadd",
       {{{"ZADD", "z", "10", "a", "4", "x"}, true, false, 2},
        {{"ZADD", "z", "GT", "CH", "0", "a", "9", "b"}},
        {{"ZADD", "z", "INCR", "2.5", "c"}}}},
      {"zincrby", {{{"ZINCRBY", "z", "-1", "a"}}}},
      {"zrangestore",
       {{{"ZRANGESTORE", "dst", "z", "0", "1"}}, {{"ZRANGESTORE", "z", "zl", "[b", "+", "BYLEX"}}}},
      {"zrem", {{{"ZREM", "z", "a", "q"}}}},
      {"zremrangebyrank", {{{"ZREMRANGEBYRANK", "z", "0", "0"}}}},
      {"zremrangebyscore", {{{"ZREMRANGEBYSCORE", "z", "(1", "+inf"}, true, false, 2}}},
      {"zremrangebylex", {{{"ZREMRANGEBYLEX", "zl", "-", "[b"}, true, false, 2}}},
      {"zpopmin", {{{"ZPOPMIN", "z"}}, {{"ZPOPMIN", "z2", "5"}, true, false, 2}}},
      {"zpopmax", {{{"ZPOPMAX", "z", "2"}, true, false, 2}}},
      {"zmpop", {{{"ZMPOP", "2", "zz", "z", "MAX", "COUNT", "2"}, true, false, 2}}},
      {"zunionstore",
       {{{"ZUNIONSTORE", "u", "2", "z", "z2", "WEIGHTS", "2", "3", "AGGREGATE", "MAX"}},
        {{"ZUNIONSTORE", "u", "2", "z", "st"}}}},
      {"zinterstore", {{{"ZINTERSTORE", "z", "2", "z", "z2"}}}},
      {"zdiffstore", {{{"ZDIFFSTORE", "zd", "2", "z", "z2"}}}},
      {"bzpopmin", {{{"BZPOPMIN", "missing", "z", "0"}}}},
      {"bzpopmax", {{{"BZPOPMAX", "z2", "0"}}}},
      {"bzmpop", {{{"BZMPOP", "0", "1", "z", "MIN", "COUNT", "3"}, true, false, 3}}},
      // SORT ... STORE.
      {"sort",
       {{{"SORT", "l", "ALPHA", "STORE", "sorted"}, true, false, 4},
        {{"SORT", "st", "ALPHA", "LIMIT", "0", "2", "STORE", "s"}, true, false, 2},
        {{"SORT", "missing", "STORE", "l"}}}},
  };
  return *samples;
}

class WriteCoverageTest : public ::testing::Test {
 protected:
  // A server with the test's clock and small shard count.
  std::unique_ptr<server::Server> NewServer(server::Config& config, ManualClock* clock) {
    (void)config.SetOne("shards", "8", false);
    (void)config.SetOne("save", "", false);  // As the reference figures were measured.
    server::ServerOptions options;
    options.clock = clock;
    return std::make_unique<server::Server>(config, options);
  }

  // The keys of `records`, each record's as "db:key" in a sorted list, in record order.
  static std::vector<std::vector<std::string>> KeysOf(
      const std::vector<ChangeRecorder::Record>& records) {
    std::vector<std::vector<std::string>> keys;
    for (const auto& record : records) {
      std::vector<std::string>& mine = keys.emplace_back();
      for (const auto& [db, key] : record.keys) mine.push_back(std::to_string(db) + ":" + key);
      std::sort(mine.begin(), mine.end());
    }
    return keys;
  }

  // Runs the fixture and `command` on a server whose only consumer asks for keys, and returns
  // the keys `command` published. Its records carry no effect (the stream hands none out).
  std::vector<std::vector<std::string>> PublishedKeysWithoutEffects(const Command& command) {
    server::Config config;
    ManualClock clock;
    clock.SetMs(clock_.NowMs());
    auto server = NewServer(config, &clock);
    ChangeRecorder recorder(*server, ChangeConsumer::Interest::kKeys);
    InProcessClient client(*server);
    for (const Command& step : Fixture()) client.Run(step);
    recorder.TakeRecords();
    client.Run(command);
    std::vector<ChangeRecorder::Record> records = recorder.TakeRecords();
    for (const auto& record : records) {
      EXPECT_TRUE(record.effect.empty()) << "an effect handed to a keys-only consumer";
    }
    return KeysOf(records);
  }

  ManualClock clock_;
  ManualClock replica_clock_;
};

TEST_F(WriteCoverageTest, EveryWriteCommandHasSamples) {
  server::Config config;
  auto server = NewServer(config, &clock_);
  std::vector<std::string> missing;
  for (const server::CommandSpec* spec : server->commands().all()) {
    if ((spec->flags & (server::kWrite | server::kLoggedRead)) != 0 &&
        !Samples().contains(std::string(spec->name))) {
      missing.emplace_back(spec->name);
    }
  }
  EXPECT_THAT(missing, ::testing::IsEmpty()) << "write commands without samples";
  for (const auto& [name, samples] : Samples()) {
    bool found = false;
    for (const server::CommandSpec* spec : server->commands().all()) {
      if (spec->name == name) found = (spec->flags & (server::kWrite | server::kLoggedRead)) != 0;
    }
    EXPECT_TRUE(found) << name << " has samples but is not a write command of the table";
  }
}

TEST_F(WriteCoverageTest, EverySamplePublishesWhatItChangesAndReplaysExactly) {
  int changing_samples = 0;
  for (const auto& [name, samples] : Samples()) {
    bool some_sample_changes = false;
    for (const Sample& sample : samples) {
      std::string text;
      for (const std::string& arg : sample.command) text += " " + arg;
      SCOPED_TRACE("sample:" + text);
      server::Config source_config, replica_config;
      auto source = NewServer(source_config, &clock_);
      auto replica = NewServer(replica_config, &replica_clock_);
      ChangeRecorder recorder(*source);
      InProcessClient client(*source);
      InProcessClient replayer(*replica);
      for (const Command& command : Fixture()) {
        ASSERT_FALSE(client.Run(command).is_error()) << command[0];
      }
      Digest before = KeyspaceDigest(*source);
      recorder.TakeRecords();

      const uint64_t dirty_before = source->stats().totals().dirty;
      protocol::RespValue reply = client.Run(sample.command);
      ASSERT_FALSE(reply.is_error()) << reply.DebugString();
      const uint64_t dirty = source->stats().totals().dirty - dirty_before;
      Digest after = KeyspaceDigest(*source);
      std::vector<ChangeRecorder::Record> records = recorder.TakeRecords();

      // The dirty counter moves with the publishing: a write that forgets to publish counts no
      // change either, and one that publishes counts Redis's increment.
      if (sample.dirty == Sample::kOnePerCommand) {
        EXPECT_EQ(dirty, records.empty() ? 0u : 1u) << "rdb_changes_since_last_save growth";
      } else {
        EXPECT_FALSE(records.empty()) << "a sample with a dirty increment published nothing";
        EXPECT_EQ(dirty, static_cast<uint64_t>(sample.dirty))
            << "rdb_changes_since_last_save growth";
      }

      // Every changed entry is covered by a record: listed as a key, or in a database the
      // record changed whole.
      std::set<std::string> covered;
      std::set<int> whole_dbs;
      for (const auto& record : records) {
        EXPECT_FALSE(record.effect.empty()) << "a record without its effect";
        if (record.scope == ChangeScope::kKeys) {
          // The fixture has no key past its TTL and no memory limit: a command changed it.
          EXPECT_EQ(record.cause, ChangeCause::kCommand) << "a key record with another cause";
        }
        for (const auto& [db, key] : record.keys) covered.insert(std::to_string(db) + ":" + key);
        switch (record.scope) {
          case ChangeScope::kKeys:
            break;
          case ChangeScope::kDatabase:
            whole_dbs.insert(record.db);
            break;
          case ChangeScope::kSwapDatabases:
            whole_dbs.insert(record.swapped_dbs[0]);
            whole_dbs.insert(record.swapped_dbs[1]);
            break;
          case ChangeScope::kAllDatabases:
            for (int db = 0; db < 16; ++db) whole_dbs.insert(db);
            break;
        }
      }
      std::set<std::string> changed = ChangedEntries(before, after);
      for (const std::string& entry : changed) {
        int db = std::stoi(entry.substr(0, entry.find(':')));
        EXPECT_TRUE(covered.contains(entry) || whole_dbs.contains(db))
            << entry << " changed but no change record lists it";
      }
      if (sample.changes) {
        EXPECT_FALSE(changed.empty()) << "the sample changed nothing";
      } else {
        EXPECT_TRUE(changed.empty()) << "a sample marked as changing nothing changed the keyspace";
        if (sample.published_unchanged) {
          EXPECT_FALSE(records.empty()) << "Redis signals this write although nothing changed";
        } else {
          EXPECT_THAT(records, ::testing::IsEmpty()) << "a write that changed nothing published";
        }
      }
      // With only a keys consumer attached (WATCH, blocked clients) producers skip building
      // effects (wants_effects() is false): the same sample must still publish the same keys.
      EXPECT_EQ(PublishedKeysWithoutEffects(sample.command), KeysOf(records));
      some_sample_changes |= !changed.empty();

      // Replaying everything published since the start reproduces the keyspace.
      recorder.Replay(replayer, replica_clock_);
      Digest replayed = KeyspaceDigest(*replica);
      EXPECT_EQ(after, replayed) << DescribeDifference(after, replayed);
    }
    if (!name.starts_with("function|")) {
      EXPECT_TRUE(some_sample_changes) << name << ": no sample changes the keyspace";
    }
    changing_samples += some_sample_changes;
  }
  EXPECT_GT(changing_samples, 80);
}

}  // namespace
}  // namespace gigakv::testing
