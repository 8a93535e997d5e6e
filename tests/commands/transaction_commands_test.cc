// MULTI, EXEC, DISCARD, WATCH, UNWATCH in process: queueing, EXECABORT, reply shapes in RESP2 and
// RESP3, and which writes of another client fail a WATCH (and which do not).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

class TransactionCommandsTest : public CommandTest {
 protected:
  TransactionCommandsTest() : other_(server_.clients().NextClientId()) {
    other_.authenticated = true;
  }

  // Runs a command as a second client (the one that changes watched keys).
  std::string RunOther(const std::vector<std::string>& args) {
    std::vector<std::string_view> views(args.begin(), args.end());
    protocol::ReplyBuilder reply;
    server_.dispatcher().Execute(other_, views, reply);
    return reply.buffer();
  }

  server::ClientState other_;
};

TEST_F(TransactionCommandsTest, QueuesAndRunsInOrder) {
  for (int resp : {2, 3}) {
    UseResp(resp);
    RunRaw({"DEL", "a"});
    EXPECT_EQ(RunRaw({"MULTI"}), "+OK\r\n");
    EXPECT_EQ(RunRaw({"SET", "a", "5"}), "+QUEUED\r\n");
    EXPECT_EQ(RunRaw({"INCRBYFLOAT", "a", "0.5"}), "+QUEUED\r\n");
    EXPECT_EQ(RunRaw({"HSET", "a", "f", "v"}), "+QUEUED\r\n");
    EXPECT_EQ(RunRaw({"HGETALL", "nothing"}), "+QUEUED\r\n");
    EXPECT_EQ(Reply({"GET", "a"}), "+QUEUED");
    // Nothing ran yet.
    EXPECT_EQ(RunRaw({"EXISTS", "a"}), "+QUEUED\r\n");
    std::string empty_map = resp == 2 ? "*0\r\n" : "%0\r\n";
    EXPECT_EQ(RunRaw({"EXEC"}),
              "*6\r\n+OK\r\n$3\r\n5.5\r\n-WRONGTYPE Operation against a key holding the wrong "
              "kind of value\r\n" +
                  empty_map + "$3\r\n5.5\r\n:1\r\n");
    EXPECT_EQ(Reply({"MULTI"}), "+OK");
    EXPECT_EQ(RunRaw({"EXEC"}), "*0\r\n");
  }
}

TEST_F(TransactionCommandsTest, ErrorsOutsideAndInsideMulti) {
  EXPECT_EQ(Reply({"EXEC"}), "-ERR EXEC without MULTI");
  EXPECT_EQ(Reply({"DISCARD"}), "-ERR DISCARD without MULTI");
  EXPECT_EQ(Reply({"WATCH"}), "-ERR wrong number of arguments for 'watch' command");
  EXPECT_EQ(Reply({"MULTI", "x"}), "-ERR wrong number of arguments for 'multi' command");
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"MULTI"}), "-ERR MULTI calls can not be nested");
  EXPECT_EQ(Reply({"WATCH", "k"}), "-ERR WATCH inside MULTI is not allowed");
  EXPECT_EQ(Reply({"SET", "k", "1"}), "+QUEUED");
  EXPECT_EQ(Reply({"EXEC"}), "[+OK]");  // Those two errors do not abort the transaction.
}

TEST_F(TransactionCommandsTest, RejectedCommandsAbortTheTransaction) {
  const std::vector<std::vector<std::string>> rejected = {
      {"NOSUCH", "a"}, {"GET"}, {"CONFIG", "NOSUCH"}, {"SHUTDOWN"}};
  for (const auto& bad : rejected) {
    SCOPED_TRACE(bad[0]);
    RunRaw({"SET", "k", "before"});
    EXPECT_EQ(Reply({"MULTI"}), "+OK");
    EXPECT_EQ(Reply({"SET", "k", "after"}), "+QUEUED");
    EXPECT_TRUE(Run(bad).is_error());
    EXPECT_EQ(Reply({"EXEC"}), "-EXECABORT Transaction discarded because of previous errors.");
    EXPECT_EQ(Reply({"GET", "k"}), "\"before\"");
    EXPECT_EQ(Reply({"EXEC"}), "-ERR EXEC without MULTI");
  }
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"SHUTDOWN"}), "-ERR Command not allowed inside a transaction");
  EXPECT_EQ(Reply({"DISCARD"}), "+OK");
}

TEST_F(TransactionCommandsTest, DiscardDropsQueueAndWatches) {
  EXPECT_EQ(Reply({"WATCH", "w"}), "+OK");
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"SET", "d", "1"}), "+QUEUED");
  EXPECT_EQ(Reply({"DISCARD"}), "+OK");
  EXPECT_EQ(Reply({"EXISTS", "d"}), ":0");
  RunOther({"SET", "w", "x"});
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"EXEC"}), "[]");
}

TEST_F(TransactionCommandsTest, WatchedKeyChangedByAnotherClientFailsExec) {
  for (int resp : {2, 3}) {
    UseResp(resp);
    RunRaw({"SET", "w", "1"});
    EXPECT_EQ(Reply({"WATCH", "w"}), "+OK");
    RunOther({"INCR", "w"});
    EXPECT_EQ(Reply({"MULTI"}), "+OK");
    EXPECT_EQ(Reply({"SET", "w", "0"}), "+QUEUED");
    EXPECT_EQ(RunRaw({"EXEC"}), resp == 2 ? "*-1\r\n" : "_\r\n");
    EXPECT_EQ(Reply({"GET", "w"}), "\"2\"");
    // The failed EXEC forgot the watch.
    RunOther({"INCR", "w"});
    EXPECT_EQ(Reply({"MULTI"}), "+OK");
    EXPECT_EQ(Reply({"EXEC"}), "[]");
    RunRaw({"DEL", "w"});
  }
}

struct WatchCase {
  std::vector<std::string> setup;  // Run first (by the other client), before WATCH w.
  std::vector<std::string> change;
  bool fails_exec;
};

TEST_F(TransactionCommandsTest, OnlyRealChangesFailExec) {
  const std::vector<WatchCase> cases = {
      {{"SET", "w", "1"}, {"SET", "w", "2"}, true},
      {{"SET", "w", "1"}, {"SET", "w", "1"}, true},  // Redis: any successful write counts.
      {{"SET", "w", "1"}, {"SETNX", "w", "2"}, false},
      {{"SET", "w", "1"}, {"SET", "w", "2", "NX"}, false},
      {{"DEL", "w"}, {"SET", "w", "2", "XX"}, false},
      {{"DEL", "w"}, {"DEL", "w"}, false},
      {{"SET", "w", "1"}, {"DEL", "w"}, true},
      {{"SET", "w", "1"}, {"APPEND", "w", "x"}, true},
      {{"SET", "w", "1"}, {"EXPIRE", "w", "100"}, true},
      {{"SET", "w", "1"}, {"PERSIST", "w"}, false},
      {{"SET", "w", "1", "EX", "100"}, {"PERSIST", "w"}, true},
      {{"SET", "w", "1"}, {"SETBIT", "w", "3", "1"}, false},  // "1" is 0x31: bit 3 is set.
      {{"SET", "w", "1"}, {"SETBIT", "w", "0", "1"}, true},
      {{"SET", "w", "1"}, {"RENAME", "w", "w2"}, true},
      {{"SET", "src", "1"}, {"RENAME", "src", "w"}, true},
      {{"SET", "src", "1"}, {"COPY", "src", "w"}, true},
      {{"SET", "src", "1"}, {"COPY", "src", "w", "DB", "1"}, false},  // Another db's "w".
      {{"SET", "w", "1"}, {"MOVE", "w", "1"}, true},
      {{"SET", "w", "1"}, {"SWAPDB", "0", "1"}, true},
      {{"SET", "w", "1"}, {"SWAPDB", "0", "0"}, false},
      {{"SET", "other", "1"}, {"SWAPDB", "0", "1"}, false},  // "w" exists on neither side.
      {{"SET", "w", "1"}, {"FLUSHDB"}, true},
      {{"SET", "w", "1"}, {"FLUSHALL"}, true},
      {{"SET", "other", "1"}, {"FLUSHDB"}, false},
      {{"SET", "other", "1"}, {"FLUSHALL"}, false},
      {{"HSET", "w", "f", "v"}, {"HSET", "w", "g", "v"}, true},
      {{"HSET", "w", "f", "v"}, {"HDEL", "w", "nofield"}, false},
      {{"HSET", "w", "f", "v"}, {"HSET", "w", "f", "v"}, true},  // Redis: HSET always counts.
      {{"HSET", "w", "f", "v"}, {"HMSET", "w", "f", "v"}, true},
      {{"SADD", "w", "a"}, {"SADD", "w", "b"}, true},
      {{"SADD", "w", "a"}, {"SADD", "w", "a"}, false},
      {{"SADD", "w", "a"}, {"SREM", "w", "b"}, false},
      {{"SADD", "w", "a"}, {"SPOP", "w"}, true},
      {{"SADD", "s1", "a"}, {"SINTERSTORE", "w", "s1"}, true},
      {{"SADD", "w", "a"}, {"SINTERSTORE", "out", "w"}, false},  // A source is only read.
      {{"RPUSH", "w", "a"}, {"LPUSH", "w", "b"}, true},
      {{"RPUSH", "w", "a", "b"}, {"LMOVE", "w", "other", "LEFT", "LEFT"}, true},
      {{"RPUSH", "src", "a"}, {"LMOVE", "src", "w", "LEFT", "LEFT"}, true},
      {{"ZADD", "w", "1", "a"}, {"ZINCRBY", "w", "1", "a"}, true},
      {{"ZADD", "w", "1", "a"}, {"ZADD", "w", "1", "a"}, false},  // Same score: no change.
      {{"ZADD", "w", "1", "a"}, {"ZADD", "w", "NX", "5", "a"}, false},
      {{"ZADD", "w", "1", "a"}, {"ZADD", "w", "GT", "0", "a"}, false},
      {{"ZADD", "w", "1", "a"}, {"ZADD", "w", "XX", "0", "b"}, false},
      {{"ZADD", "w", "1", "a"}, {"ZADD", "w", "2", "a"}, true},
      {{"ZADD", "w", "1", "a"}, {"ZREM", "w", "b"}, false},
      {{"ZADD", "w", "1", "a"}, {"ZPOPMIN", "w"}, true},
  };
  for (const WatchCase& c : cases) {
    SCOPED_TRACE(c.change[0] + " after " + c.setup[0]);
    RunOther({"FLUSHALL"});
    RunOther(c.setup);
    EXPECT_EQ(Reply({"WATCH", "w"}), "+OK");
    RunOther(c.change);
    EXPECT_EQ(Reply({"MULTI"}), "+OK");
    EXPECT_EQ(Reply({"PING"}), "+QUEUED");
    EXPECT_EQ(Reply({"EXEC"}), c.fails_exec ? "(nil)" : "[+PONG]");
  }
}

// SMOVE changes its destination only when the member is new there: a watched destination that
// already had the member still lets EXEC run (the source, which lost it, does not), as in Redis.
TEST_F(TransactionCommandsTest, SmoveSignalsTheDestinationOnlyWhenItAddsTheMember) {
  struct Case {
    std::string watched;
    bool destination_has_member;
    bool fails_exec;
  };
  for (const Case& c : std::vector<Case>{
           {"w", true, false}, {"w", false, true}, {"src", true, true}, {"src", false, true}}) {
    SCOPED_TRACE(c.watched + (c.destination_has_member ? " (member already in w)" : ""));
    RunOther({"FLUSHALL"});
    RunOther({"SADD", "src", "a", "b"});
    RunOther({"SADD", "w", "z"});
    if (c.destination_has_member) RunOther({"SADD", "w", "a"});
    EXPECT_EQ(Reply({"WATCH", c.watched}), "+OK");
    EXPECT_EQ(RunOther({"SMOVE", "src", "w", "a"}), ":1\r\n");
    EXPECT_EQ(Reply({"MULTI"}), "+OK");
    EXPECT_EQ(Reply({"PING"}), "+QUEUED");
    EXPECT_EQ(Reply({"EXEC"}), c.fails_exec ? "(nil)" : "[+PONG]");
  }
}

TEST_F(TransactionCommandsTest, WatchedKeyPastItsExpiryFailsExecEvenBeforeItIsRemoved) {
  server_.keyspace().set_active_expire_enabled(false);
  RunRaw({"SET", "t", "v", "PX", "100"});
  EXPECT_EQ(Reply({"WATCH", "t"}), "+OK");
  clock_.AdvanceMs(200);
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"EXEC"}), "(nil)");
  // A key that was already expired when watched is not a change when it is removed.
  RunRaw({"SET", "t", "v", "PX", "100"});
  clock_.AdvanceMs(200);
  EXPECT_EQ(Reply({"WATCH", "t"}), "+OK");
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"EXEC"}), "[]");
}

TEST_F(TransactionCommandsTest, UnwatchAndResetForget) {
  RunRaw({"SET", "w", "1"});
  EXPECT_EQ(Reply({"WATCH", "w"}), "+OK");
  EXPECT_EQ(Reply({"UNWATCH"}), "+OK");
  RunOther({"SET", "w", "2"});
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"EXEC"}), "[]");

  EXPECT_EQ(Reply({"WATCH", "w"}), "+OK");
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"SET", "r", "1"}), "+QUEUED");
  EXPECT_EQ(Reply({"RESET"}), "+RESET");
  EXPECT_EQ(Reply({"EXEC"}), "-ERR EXEC without MULTI");
  EXPECT_EQ(Reply({"EXISTS", "r"}), ":0");
  RunOther({"SET", "w", "3"});
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"EXEC"}), "[]");
}

TEST_F(TransactionCommandsTest, EffectsAreThoseOfTheQueuedCommands) {
  effects_.Take();
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"SET", "a", "1"}), "+QUEUED");
  EXPECT_EQ(Reply({"RPUSH", "l", "x"}), "+QUEUED");
  EXPECT_TRUE(effects_.Take().empty());  // Queueing changes nothing.
  Run({"EXEC"});
  // Wrapped in MULTI/EXEC, so that a replay applies all of it or nothing.
  EXPECT_EQ(effects_.Take(),
            (std::vector<std::string>{"0: MULTI", "0: SET a 1", "0: RPUSH l x", "0: EXEC"}));
  // A transaction that changes nothing logs nothing.
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"GET", "a"}), "+QUEUED");
  EXPECT_EQ(Reply({"SETNX", "a", "2"}), "+QUEUED");
  Run({"EXEC"});
  EXPECT_TRUE(effects_.Take().empty());
}

TEST_F(TransactionCommandsTest, OutOfMemoryRefusesQueueingButNotDiscard) {
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"SET", "queued", "before the limit"}), "+QUEUED");
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory", "1"}), "+QUEUED");
  EXPECT_EQ(Run({"EXEC"}).elements.size(), 2u);
  server_.Cron();  // Measures used memory: now over the limit, nothing evictable (noeviction).
  const std::string oom = "-OOM command not allowed when used memory > 'maxmemory'.";
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"GET", "queued"}), oom);  // Even a read: queueing takes memory.
  EXPECT_EQ(Reply({"EXEC"}), "-EXECABORT Transaction discarded because of previous errors.");
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"PING"}), oom);
  EXPECT_EQ(Reply({"DISCARD"}), "+OK");
  EXPECT_EQ(Reply({"GET", "queued"}), "\"before the limit\"");
}

TEST_F(TransactionCommandsTest, NoEvictionBetweenTheCommandsOfAnExec) {
  for (int i = 0; i < 1000; ++i) Run({"SET", "key" + std::to_string(i), "value"});
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory-policy", "allkeys-random"}), "+OK");
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory", "1"}), "+QUEUED");
  EXPECT_EQ(Reply({"DBSIZE"}), "+QUEUED");
  EXPECT_EQ(Reply({"SET", "k", "v"}), "+QUEUED");
  EXPECT_EQ(Reply({"DBSIZE"}), "+QUEUED");
  EXPECT_EQ(Reply({"GET", "k"}), "+QUEUED");
  server_.Cron();  // Measures used memory: over the limit once the queued CONFIG SET runs.
  protocol::RespValue replies = Run({"EXEC"});
  ASSERT_EQ(replies.elements.size(), 5u);
  // Nothing is evicted between the queued commands, as in Redis (EXEC is checked once).
  EXPECT_EQ(replies.elements[1].integer + 1, replies.elements[3].integer);
  EXPECT_EQ(replies.elements[4].DebugString(), "\"v\"");
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory", "0"}), "+OK");
}

}  // namespace
}  // namespace gigakv::testing
