// The property the append-only log and replicas stand on: replaying the change stream a server
// published, into a fresh server, reproduces its keyspace exactly. A seeded random workload
// drives every family (strings, bitmaps, hashes, lists, sets, zsets, keyspace commands, TTLs),
// transactions (committed, discarded and aborted by WATCH), blocked pops served by later pushes,
// the passing of time with lazy and active expiry, and maxmemory eviction; at checkpoints the
// published effects are replayed into a second server and the two keyspaces are compared in full.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "support/keyspace_digest.h"

namespace gigakv::testing {
namespace {

using Command = std::vector<std::string>;

class Workload {
 public:
  explicit Workload(uint32_t seed) : rng_(seed) {}

  int Int(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
  bool Chance(int percent) { return Int(1, 100) <= percent; }
  std::string Num(int low, int high) { return std::to_string(Int(low, high)); }
  template <typename T>
  const T& Pick(const std::vector<T>& items) {
    return items[Int(0, static_cast<int>(items.size()) - 1)];
  }

  // Few keys per type, so commands meet each other's keys (and, now and then, the wrong type).
  std::string StringKey() { return "s" + Num(0, 5); }
  std::string HashKey() { return "h" + Num(0, 3); }
  std::string ListKey() { return "l" + Num(0, 3); }
  std::string SetKey() { return "t" + Num(0, 3); }
  std::string ZSetKey() { return "z" + Num(0, 3); }
  std::string AnyKey() {
    switch (Int(0, 5)) {
      case 0:
        return StringKey();
      case 1:
        return HashKey();
      case 2:
        return ListKey();
      case 3:
        return SetKey();
      case 4:
        return ZSetKey();
      default:
        return "x" + Num(0, 3);
    }
  }
  std::string Member() { return "m" + Num(0, 40); }
  std::string Value() {
    if (Chance(5)) return std::string(Int(50, 300), static_cast<char>('a' + Int(0, 25)));
    return Chance(30) ? Num(-100, 100) : "v" + Num(0, 999);
  }
  std::string Score() {
    if (Chance(10)) return Pick<std::string>({"-inf", "+inf", "0.5", "-2.25"});
    return Num(-20, 20);
  }

  // One random command that may write (or fail: errors are part of the workload).
  Command Write() {
    switch (Int(0, 5)) {
      case 0:
        return StringCommand();
      case 1:
        return HashCommand();
      case 2:
        return ListCommand();
      case 3:
        return SetCommand();
      case 4:
        return ZSetCommand();
      default:
        return KeyspaceCommand();
    }
  }

  // A blocking pop on keys that may be empty (timeout 0: it waits until served).
  Command BlockingPop() {
    switch (Int(0, 6)) {
      case 0:
        return {"BLPOP", ListKey(), ListKey(), "0"};
      case 1:
        return {"BRPOP", ListKey(), "0"};
      case 2:
        return {"BLMOVE",
                ListKey(),
                ListKey(),
                Pick<std::string>({"LEFT", "RIGHT"}),
                Pick<std::string>({"LEFT", "RIGHT"}),
                "0"};
      case 3:
        return {"BLMPOP", "0", "2", ListKey(), ListKey(), "LEFT", "COUNT", Num(1, 3)};
      case 4:
        return {"BZPOPMIN", ZSetKey(), ZSetKey(), "0"};
      case 5:
        return {"BZPOPMAX", ZSetKey(), "0"};
      default:
        return {"BZMPOP", "0", "1", ZSetKey(), "MAX", "COUNT", Num(1, 3)};
    }
  }

 private:
  Command StringCommand() {
    std::string key = StringKey();
    switch (Int(0, 13)) {
      case 0: {
        Command set = {"SET", key, Value()};
        switch (Int(0, 5)) {
          case 0:
            set.insert(set.end(), {"EX", Num(1, 5)});
            break;
          case 1:
            set.insert(set.end(), {"PX", Num(50, 3000)});
            break;
          case 2:
            set.push_back("KEEPTTL");
            break;
          case 3:
            set.push_back(Pick<std::string>({"NX", "XX"}));
            break;
          case 4:
            set.push_back("GET");
            break;
          default:
            break;
        }
        return set;
      }
      case 1:
        return {"INCRBY", key, Num(-50, 50)};
      case 2:
        return {"INCRBYFLOAT", key, Num(-5, 5) + ".5"};
      case 3:
        return {"APPEND", key, Value()};
      case 4:
        return {"SETRANGE", key, Num(0, 20), Value()};
      case 5:
        return {"GETDEL", key};
      case 6:
        return {"GETEX", key, Pick<std::string>({"EX", "PX"}), Num(1, 4000)};
      case 7:
        return {"MSET", key, Value(), StringKey(), Value()};
      case 8:
        return {"MSETNX", key, Value(), StringKey(), Value()};
      case 9:
        return {"SETBIT", key, Num(0, 200), Num(0, 1)};
      case 10:
        return {"BITFIELD",  key,      "SET", "u8",       Num(0, 64),
                Num(0, 255), "INCRBY", "i5",  Num(0, 40), Num(-20, 20)};
      case 11:
        return {"BITOP", Pick<std::string>({"AND", "OR", "XOR", "NOT"}), key, StringKey()};
      case 12:
        return {"SETEX", key, Num(1, 3), Value()};
      default:
        return {"DECR", key};
    }
  }

  Command HashCommand() {
    std::string key = HashKey();
    switch (Int(0, 5)) {
      case 0: {
        Command hset = {"HSET", key};
        for (int i = Int(1, Chance(5) ? 150 : 3); i > 0; --i) {
          hset.push_back(Member());
          hset.push_back(Value());
        }
        return hset;
      }
      case 1:
        return {"HDEL", key, Member(), Member()};
      case 2:
        return {"HINCRBY", key, Member(), Num(-9, 9)};
      case 3:
        return {"HINCRBYFLOAT", key, Member(), "1.25"};
      case 4:
        return {"HSETNX", key, Member(), Value()};
      default:
        return {"HMSET", key, Member(), Value()};
    }
  }

  Command ListCommand() {
    std::string key = ListKey();
    switch (Int(0, 11)) {
      case 0:
      case 1: {
        Command push = {Pick<std::string>({"LPUSH", "RPUSH", "LPUSHX", "RPUSHX"}), key};
        for (int i = Int(1, Chance(5) ? 200 : 3); i > 0; --i) push.push_back(Value());
        return push;
      }
      case 2:
        return {Pick<std::string>({"LPOP", "RPOP"}), key, Num(1, 3)};
      case 3:
        return {"LSET", key, Num(-3, 3), Value()};
      case 4:
        return {"LTRIM", key, Num(0, 3), Num(-3, 10)};
      case 5:
        return {"LREM", key, Num(-2, 2), Value()};
      case 6:
        return {"LINSERT", key, Pick<std::string>({"BEFORE", "AFTER"}), Value(), Value()};
      case 7:
        return {"LMOVE", key, ListKey(), Pick<std::string>({"LEFT", "RIGHT"}),
                Pick<std::string>({"LEFT", "RIGHT"})};
      case 8:
        return {"RPOPLPUSH", key, ListKey()};
      case 9:
        return {"LMPOP", "2",      key, ListKey(), Pick<std::string>({"LEFT", "RIGHT"}),
                "COUNT", Num(1, 4)};
      default:
        return {"LPOP", key};
    }
  }

  Command SetCommand() {
    std::string key = SetKey();
    switch (Int(0, 7)) {
      case 0:
      case 1: {
        Command sadd = {"SADD", key};
        for (int i = Int(1, Chance(5) ? 200 : 4); i > 0; --i) {
          sadd.push_back(Chance(50) ? Num(0, 600) : Member());
        }
        return sadd;
      }
      case 2:
        return {"SREM", key, Member(), Num(0, 600)};
      case 3:
        return Chance(50) ? Command{"SPOP", key} : Command{"SPOP", key, Num(1, 5)};
      case 4:
        return {"SMOVE", key, SetKey(), Member()};
      case 5:
        return {"SINTERSTORE", key, SetKey(), SetKey()};
      case 6:
        return {"SUNIONSTORE", key, SetKey(), SetKey()};
      default:
        return {"SDIFFSTORE", key, SetKey(), SetKey()};
    }
  }

  Command ZSetCommand() {
    std::string key = ZSetKey();
    switch (Int(0, 11)) {
      case 0:
      case 1: {
        Command zadd = {"ZADD", key};
        if (Chance(20)) zadd.push_back(Pick<std::string>({"NX", "XX", "GT", "LT", "CH"}));
        for (int i = Int(1, Chance(5) ? 150 : 3); i > 0; --i) {
          zadd.push_back(Score());
          zadd.push_back(Member());
        }
        return zadd;
      }
      case 2:
        return {"ZINCRBY", key, Num(-3, 3), Member()};
      case 3:
        return {"ZREM", key, Member(), Member()};
      case 4:
        return {Pick<std::string>({"ZPOPMIN", "ZPOPMAX"}), key, Num(1, 3)};
      case 5:
        return {"ZREMRANGEBYSCORE", key, Num(-20, 0), "(" + Num(0, 20)};
      case 6:
        return {"ZREMRANGEBYRANK", key, Num(0, 2), Num(2, 4)};
      case 7:
        return {"ZREMRANGEBYLEX", key, "[m1", "(m3"};
      case 8:
        return {Pick<std::string>({"ZUNIONSTORE", "ZINTERSTORE"}),
                key,
                "2",
                ZSetKey(),
                SetKey(),
                "WEIGHTS",
                Num(1, 3),
                "2",
                "AGGREGATE",
                Pick<std::string>({"SUM", "MIN", "MAX"})};
      case 9:
        return {"ZDIFFSTORE", key, "2", ZSetKey(), ZSetKey()};
      case 10:
        return {"ZRANGESTORE", key, ZSetKey(), Num(0, 2), Num(-1, 5)};
      default:
        return {"ZMPOP", "2",      key, ZSetKey(), Pick<std::string>({"MIN", "MAX"}),
                "COUNT", Num(1, 3)};
    }
  }

  Command KeyspaceCommand() {
    std::string key = AnyKey();
    switch (Int(0, 14)) {
      case 0:
        return {"DEL", key, AnyKey()};
      case 1:
        return {"UNLINK", key};
      case 2:
        return {"RENAME", key, AnyKey()};
      case 3:
        return {"RENAMENX", key, AnyKey()};
      case 4:
        return Chance(50) ? Command{"COPY", key, AnyKey(), "REPLACE"}
                          : Command{"COPY", key, key, "DB", Num(0, 2)};
      case 5:
        return {"MOVE", key, Num(0, 2)};
      case 6:
        return {"EXPIRE", key, Num(-1, 5)};
      case 7:
        return {"PEXPIRE", key, Num(1, 3000), Pick<std::string>({"NX", "XX", "GT", "LT"})};
      case 8:
        return {"PERSIST", key};
      case 9:
        return {"PEXPIREAT", key, Num(1, 1000)};  // In the past: deletes.
      case 10:
        return {"SORT", Pick<std::vector<std::string>>({{ListKey()}, {SetKey()}, {ZSetKey()}})[0],
                "ALPHA", "STORE", AnyKey()};
      case 11:
        return Chance(10) ? Command{"SWAPDB", Num(0, 2), Num(0, 2)} : Command{"DEL", key};
      case 12:
        return Chance(3) ? Command{"FLUSHDB"} : Command{"UNLINK", key};
      case 13:
        return Chance(2) ? Command{"FLUSHALL"} : Command{"EXPIRE", key, "100"};
      default:
        return {"GET", key};  // A read: lazy expiry only.
    }
  }

  std::mt19937 rng_;
};

class ReplayEquivalenceTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  ReplayEquivalenceTest()
      : source_(Configure(source_config_), Options()),
        replica_(Configure(replica_config_), ReplicaOptions()),
        recorder_(source_) {}

  static server::Config& Configure(server::Config& config) {
    (void)config.SetOne("shards", "8", false);
    (void)config.SetOne("save", "", false);
    return config;
  }
  server::ServerOptions Options() {
    server::ServerOptions options;
    options.clock = &clock_;
    return options;
  }
  server::ServerOptions ReplicaOptions() {
    server::ServerOptions options;
    options.clock = &replica_clock_;
    return options;
  }

  // Replays what the source published since the last check and compares the keyspaces.
  void CheckReplica(InProcessClient& replayer, int step) {
    Digest expected = KeyspaceDigest(source_);
    recorder_.Replay(replayer, replica_clock_);
    Digest replayed = KeyspaceDigest(replica_);
    ASSERT_EQ(expected, replayed) << "after step " << step << ":\n"
                                  << DescribeDifference(expected, replayed);
    keys_seen_ += expected.size();
    // Sequence numbers increase in publishing order (one thread publishes here).
    for (const ChangeRecorder::Record& record : recorder_.TakeRecords()) {
      ASSERT_GT(record.sequence, last_sequence_);
      last_sequence_ = record.sequence;
    }
    ASSERT_EQ(source_.keyspace().changes().last_sequence(), last_sequence_);
  }

  // Lowers maxmemory under what is used, lets the cron evict, and lifts the limit again.
  void Evict(InProcessClient& admin, Workload& workload) {
    protocol::RespValue info = admin.Run({"INFO", "memory"});
    size_t at = info.str.find("used_memory:");
    ASSERT_NE(at, std::string::npos);
    int64_t used = std::stoll(info.str.substr(at + 12));
    std::string policy = workload.Pick<std::string>(
        {"allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-ttl", "volatile-random"});
    ASSERT_EQ(admin.Reply({"CONFIG", "SET", "maxmemory-policy", policy, "maxmemory",
                           std::to_string(used - used / 20)}),
              "+OK");
    source_.Cron();
    ASSERT_EQ(admin.Reply({"CONFIG", "SET", "maxmemory", "0"}), "+OK");
  }

  ManualClock clock_;
  ManualClock replica_clock_;
  server::Config source_config_, replica_config_;
  server::Server source_;
  server::Server replica_;
  ChangeRecorder recorder_;
  size_t keys_seen_ = 0;
  uint64_t last_sequence_ = 0;
};

TEST_P(ReplayEquivalenceTest, ReplayingTheChangeStreamReproducesTheKeyspace) {
  Workload workload(GetParam());
  InProcessClient client(source_);
  InProcessClient other(source_);  // Breaks WATCHes.
  InProcessClient blocker(source_, /*can_block=*/true);
  InProcessClient admin(source_);
  InProcessClient replayer(replica_);
  bool blocked = false;
  Command blocked_on;
  int served = 0, transactions = 0, aborted = 0, evictions = 0;

  constexpr int kSteps = 20000;
  for (int step = 1; step <= kSteps; ++step) {
    int roll = workload.Int(1, 100);
    if (roll <= 70) {
      client.Run(workload.Write());
    } else if (roll <= 76) {
      // A transaction, sometimes WATCHed and broken by another client, sometimes discarded.
      bool watch = workload.Chance(40);
      std::string watched = workload.AnyKey();
      if (watch) client.Run({"WATCH", watched});
      if (watch && workload.Chance(50)) other.Run({"SET", watched, "broken"});
      client.Run({"MULTI"});
      for (int i = workload.Int(1, 5); i > 0; --i) client.Run(workload.Write());
      protocol::RespValue result = client.Run({workload.Chance(10) ? "DISCARD" : "EXEC"});
      ++transactions;
      aborted += result.type == protocol::RespValue::Type::kNull;
    } else if (roll <= 82) {
      if (!blocked) {
        blocked_on = workload.BlockingPop();
        blocked = blocker.RunRaw(blocked_on).empty();
      } else {
        // Another client pushes to the first key the blocked pop waits on.
        bool lmpop = blocked_on[0] == "BLMPOP" || blocked_on[0] == "BZMPOP";
        const std::string& key = blocked_on[lmpop ? 3 : 1];
        if (key[0] == 'l') {
          other.Run({workload.Pick<std::string>({"LPUSH", "RPUSH"}), key, workload.Value()});
        } else {
          other.Run({"ZADD", key, workload.Score(), workload.Member()});
        }
      }
      if (blocked && !blocker.TakeUnblockedReplies().empty()) {
        blocked = false;
        ++served;
      }
    } else if (roll <= 84) {
      client.Run({"SELECT", workload.Num(0, 2)});
    } else if (roll <= 97) {
      clock_.AdvanceMs(workload.Int(1, 400));
      if (workload.Chance(30)) source_.Cron();  // Active expiry.
    } else if (roll <= 98) {
      Evict(admin, workload);
      ++evictions;
    } else {
      CheckReplica(replayer, step);
      if (HasFatalFailure()) return;
    }
    if (blocked && !blocker.TakeUnblockedReplies().empty()) {
      blocked = false;
      ++served;
    }
  }
  if (blocked) source_.blocking().Unblock(blocker.state().id, "");
  CheckReplica(replayer, kSteps);

  // The workload did what it claims to exercise.
  EXPECT_GT(served, 100);
  EXPECT_GT(transactions, 500);
  EXPECT_GT(aborted, 30);
  EXPECT_GT(evictions, 50);
  EXPECT_GT(keys_seen_, 2000u);
  EXPECT_GT(recorder_.effect_count(), 10000u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ReplayEquivalenceTest, ::testing::Values(1u, 2u, 3u, 4u, 5u));

}  // namespace
}  // namespace gigakv::testing
