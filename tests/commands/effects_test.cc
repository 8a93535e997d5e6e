// What writes hand to the log: deterministic effects (absolute expiry times, explicit deletes).
#include "gmock/gmock.h"
#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class EffectsTest : public CommandTest {
 protected:
  std::string At(int64_t delta_ms) { return std::to_string(clock_.NowMs() + delta_ms); }
};

TEST_F(EffectsTest, SetLogsAbsoluteExpiry) {
  std::string deadline = At(10'000);
  Run({"SET", "k", "v", "EX", "10"});
  Run({"SET", "k", "w", "KEEPTTL"});
  Run({"SET", "k", "x", "NX"});  // Not stored: nothing to log.
  EXPECT_THAT(effects_.Take(),
              ElementsAre("0: SET k v PXAT " + deadline, "0: SET k w PXAT " + deadline));
}

TEST_F(EffectsTest, ReadsLogNothingButLazyExpiryLogsDel) {
  Run({"SET", "k", "v", "PX", "5"});
  effects_.Take();
  Run({"GET", "k"});
  Run({"EXISTS", "k", "other"});
  EXPECT_THAT(effects_.Take(), IsEmpty());
  clock_.AdvanceMs(5);
  Run({"GET", "k"});
  EXPECT_THAT(effects_.Take(), ElementsAre("0: DEL k"));
}

TEST_F(EffectsTest, ExpireFamilyLogsAbsoluteTimesOrDeletes) {
  Run({"SET", "k", "v"});
  effects_.Take();
  std::string deadline = At(100'000);
  Run({"EXPIRE", "k", "100"});
  Run({"PERSIST", "k"});
  Run({"EXPIRE", "k", "100", "GT"});  // Not applied: nothing logged.
  Run({"PEXPIRE", "k", "-1"});
  EXPECT_THAT(effects_.Take(),
              ElementsAre("0: PEXPIREAT k " + deadline, "0: PERSIST k", "0: DEL k"));
}

TEST_F(EffectsTest, CountersLogTheirResultWithTtl) {
  Run({"SET", "n", "1", "PX", "500"});
  effects_.Take();
  std::string deadline = At(500);
  Run({"INCRBY", "n", "41"});
  Run({"INCRBYFLOAT", "n", "0.5"});
  EXPECT_THAT(effects_.Take(),
              ElementsAre("0: SET n 42 PXAT " + deadline, "0: SET n 42.5 PXAT " + deadline));
}

TEST_F(EffectsTest, KeyspaceCommands) {
  Run({"MSET", "a", "1", "b", "2"});
  Run({"SELECT", "2"});
  Run({"SET", "c", "3"});
  Run({"RENAME", "c", "d"});
  Run({"COPY", "d", "e", "DB", "3"});
  Run({"MOVE", "d", "4"});
  Run({"DEL", "e", "missing"});
  Run({"APPEND", "e", "xy"});
  Run({"SETRANGE", "e", "1", "Z"});
  Run({"GETDEL", "e"});
  Run({"SWAPDB", "0", "1"});
  Run({"FLUSHDB"});
  EXPECT_THAT(effects_.Take(),
              ElementsAre("0: SET a 1", "0: SET b 2", "2: SET c 3", "2: RENAME c d",
                          "2: COPY d e DB 3 REPLACE", "2: MOVE d 4", "2: APPEND e xy",
                          "2: SETRANGE e 1 Z", "2: DEL e", "2: SWAPDB 0 1", "2: FLUSHDB"));
}

TEST_F(EffectsTest, ActiveExpiryAndEvictionLogDeletes) {
  Run({"SET", "gone", "v", "PX", "10"});
  effects_.Take();
  clock_.AdvanceMs(10);
  server_.Cron();
  EXPECT_THAT(effects_.Take(), ElementsAre("0: DEL gone"));
  Run({"SET", "big", "v"});
  Run({"CONFIG", "SET", "maxmemory-policy", "allkeys-random", "maxmemory", "1"});
  effects_.Take();
  server_.Cron();
  EXPECT_THAT(effects_.Take(), ElementsAre("0: DEL big"));
}

}  // namespace
}  // namespace gigakv::testing
