#include "server/slowlog.h"

#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "server/command.h"

namespace gigakv::server {
namespace {

std::vector<std::string_view> Views(const std::vector<std::string>& args) {
  return std::vector<std::string_view>(args.begin(), args.end());
}

TEST(SlowLogTest, KeepsTheNewestFirstUpToTheLimitWithGrowingIds) {
  SlowLog log;
  for (int i = 0; i < 5; ++i) {
    log.Push(Views({"SET", "k" + std::to_string(i), "v"}), 100 + i, 1700000000 + i,
             "127.0.0.1:5000", i == 4 ? "named" : "", /*max_len=*/3);
  }
  ASSERT_EQ(log.Len(), 3u);
  std::vector<SlowLogEntry> all = log.Get(-1);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, 4u);
  EXPECT_EQ(all[0].args, (std::vector<std::string>{"SET", "k4", "v"}));
  EXPECT_EQ(all[0].duration_us, 104);
  EXPECT_EQ(all[0].unix_seconds, 1700000004);
  EXPECT_EQ(all[0].client_name, "named");
  EXPECT_EQ(all[2].id, 2u);
  EXPECT_EQ(log.Get(1).size(), 1u);
  EXPECT_EQ(log.Get(0).size(), 0u);
  log.Reset();
  EXPECT_EQ(log.Len(), 0u);
  log.Push(Views({"PING"}), 1, 1, "a", "", 3);
  EXPECT_EQ(log.Get(-1).at(0).id, 5u);  // Ids go on across a reset.
  log.Push(Views({"PING"}), 1, 1, "a", "", 0);
  EXPECT_EQ(log.Len(), 0u);  // slowlog-max-len 0 keeps nothing.
}

// Trimming and redaction as Redis 7.0 writes its entries.
TEST(SlowLogTest, TrimsLongArgumentsAndManyArgumentsAndRedactsSecrets) {
  std::vector<std::string> many = {"RPUSH", "list"};
  for (int i = 0; i < 38; ++i) many.push_back(std::to_string(i));  // 40 arguments.
  std::vector<std::string> kept = SlowLog::EntryArgs(Views(many));
  ASSERT_EQ(kept.size(), 32u);
  EXPECT_EQ(kept[30], "28");
  EXPECT_EQ(kept[31], "... (9 more arguments)");
  std::vector<std::string> exactly32(many.begin(), many.begin() + 32);
  EXPECT_EQ(SlowLog::EntryArgs(Views(exactly32)), exactly32);

  std::string long_value(200, 'x');
  kept = SlowLog::EntryArgs(Views({"SET", "k", long_value}));
  EXPECT_EQ(kept[2], std::string(128, 'x') + "... (72 more bytes)");
  EXPECT_EQ(SlowLog::EntryArgs(Views({"SET", "k", std::string(128, 'y')}))[2],
            std::string(128, 'y'));

  EXPECT_EQ(SlowLog::EntryArgs(Views({"AUTH", "user", "pass"})),
            (std::vector<std::string>{"AUTH", "(redacted)", "(redacted)"}));
  EXPECT_EQ(
      SlowLog::EntryArgs(Views({"hello", "3", "AUTH", "u", "p", "SETNAME", "n"})),
      (std::vector<std::string>{"hello", "3", "AUTH", "(redacted)", "(redacted)", "SETNAME", "n"}));
  EXPECT_EQ(
      SlowLog::EntryArgs(Views({"CONFIG", "SET", "maxmemory", "1", "requirepass", "s"})),
      (std::vector<std::string>{"CONFIG", "SET", "maxmemory", "1", "requirepass", "(redacted)"}));
}

TEST(SlowLogTest, NeedsTimingOnlyWhatMayReachTheThreshold) {
  const std::vector<std::string_view> small = {"SET", "k", "v"};
  std::vector<std::string_view> many(3000, "x");  // MSET of 1,500 pairs.
  const std::string big(2 * 1024 * 1024, 'v');
  const std::vector<std::string_view> large = {"SET", "k", big};
  for (uint32_t bounded : {uint32_t{kFast}, uint32_t{kBoundedWork}}) {
    EXPECT_FALSE(SlowLog::NeedsTiming(kWrite | bounded, small, 10000));
    EXPECT_TRUE(SlowLog::NeedsTiming(kWrite | bounded, small, 0));
    EXPECT_FALSE(SlowLog::NeedsTiming(kWrite | bounded, small, -1));
    // 10 x (3,000 x 1 us) = 30 ms; 10 x 2 MiB x 1 ns = 21 ms: both reach 10 ms.
    EXPECT_TRUE(SlowLog::NeedsTiming(kWrite | bounded, many, 10000));
    EXPECT_TRUE(SlowLog::NeedsTiming(kWrite | bounded, large, 10000));
    EXPECT_FALSE(SlowLog::NeedsTiming(kWrite | bounded, large, 100000));
    // A low threshold times even small ones: 10 x 3 us = 30 us.
    EXPECT_TRUE(SlowLog::NeedsTiming(kWrite | bounded, small, 30));
    EXPECT_FALSE(SlowLog::NeedsTiming(kWrite | bounded, small, 31));
  }
  // Unbounded commands are always timed while the log is on.
  EXPECT_TRUE(SlowLog::NeedsTiming(kWrite, small, 10000));
  EXPECT_TRUE(SlowLog::NeedsTiming(kReadonly, small, 1000000));
  // While it is off, only admin commands (a CONFIG SET may turn it on).
  EXPECT_TRUE(SlowLog::NeedsTiming(kAdmin, small, -1));
  EXPECT_FALSE(SlowLog::NeedsTiming(kWrite, small, -1));
  EXPECT_FALSE(SlowLog::NeedsTiming(kReadonly, many, -1));
  // skip_slowlog (EXEC) never.
  EXPECT_FALSE(SlowLog::NeedsTiming(kSkipSlowlog, small, 0));
  EXPECT_FALSE(SlowLog::NeedsTiming(kSkipSlowlog, many, 10000));
}

}  // namespace
}  // namespace gigakv::server
