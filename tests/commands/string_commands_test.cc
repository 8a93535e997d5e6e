#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

class StringCommandsTest : public CommandTest {};

TEST_F(StringCommandsTest, GetSet) {
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");
  EXPECT_EQ(Reply({"SET", "k", "v"}), "+OK");
  EXPECT_EQ(Reply({"GET", "k"}), "\"v\"");
  EXPECT_EQ(Reply({"SET", "k", ""}), "+OK");
  EXPECT_EQ(Reply({"GET", "k"}), "\"\"");
  EXPECT_EQ(RunRaw({"GET", "missing"}), "$-1\r\n");
  UseResp(3);
  EXPECT_EQ(RunRaw({"GET", "missing"}), "_\r\n");
}

TEST_F(StringCommandsTest, LargeValueRoundTrip) {
  std::string value(1 << 20, 'q');
  EXPECT_EQ(Reply({"SET", "big", value}), "+OK");
  EXPECT_EQ(Run({"GET", "big"}).str, value);
  EXPECT_EQ(Reply({"SET", "big", "small"}), "+OK");
  EXPECT_EQ(Reply({"GET", "big"}), "\"small\"");
}

TEST_F(StringCommandsTest, SetNxXx) {
  EXPECT_EQ(Reply({"SET", "k", "1", "XX"}), "(nil)");
  EXPECT_EQ(Reply({"SET", "k", "1", "NX"}), "+OK");
  EXPECT_EQ(Reply({"SET", "k", "2", "NX"}), "(nil)");
  EXPECT_EQ(Reply({"SET", "k", "3", "xx"}), "+OK");
  EXPECT_EQ(Reply({"GET", "k"}), "\"3\"");
  EXPECT_EQ(Reply({"SET", "k", "4", "NX", "XX"}), "-ERR syntax error");
}

TEST_F(StringCommandsTest, SetGetOption) {
  EXPECT_EQ(Reply({"SET", "k", "a", "GET"}), "(nil)");
  EXPECT_EQ(Reply({"SET", "k", "b", "GET"}), "\"a\"");
  EXPECT_EQ(Reply({"SET", "k", "c", "NX", "GET"}), "\"b\"");  // Not set, old value returned.
  EXPECT_EQ(Reply({"GET", "k"}), "\"b\"");
}

TEST_F(StringCommandsTest, SetExpiryOptions) {
  EXPECT_EQ(Reply({"SET", "k", "v", "EX", "10"}), "+OK");
  clock_.AdvanceMs(9999);
  EXPECT_EQ(Reply({"GET", "k"}), "\"v\"");
  clock_.AdvanceMs(1);
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");

  EXPECT_EQ(Reply({"SET", "k", "v", "PX", "100"}), "+OK");
  EXPECT_EQ(Reply({"SET", "k", "w", "KEEPTTL"}), "+OK");
  clock_.AdvanceMs(100);
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");

  int64_t now = clock_.NowMs();
  EXPECT_EQ(Reply({"SET", "k", "v", "PXAT", std::to_string(now + 50)}), "+OK");
  EXPECT_EQ(Reply({"SET", "j", "v", "EXAT", std::to_string(now / 1000 + 100)}), "+OK");
  clock_.AdvanceMs(50);
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");
  EXPECT_EQ(Reply({"GET", "j"}), "\"v\"");
  // A plain SET clears the TTL.
  EXPECT_EQ(Reply({"SET", "j", "v2"}), "+OK");
  clock_.AdvanceMs(200'000);
  EXPECT_EQ(Reply({"GET", "j"}), "\"v2\"");
}

TEST_F(StringCommandsTest, SetOptionErrors) {
  EXPECT_EQ(Reply({"SET", "k", "v", "EX", "0"}), "-ERR invalid expire time in 'set' command");
  EXPECT_EQ(Reply({"SET", "k", "v", "PX", "-5"}), "-ERR invalid expire time in 'set' command");
  EXPECT_EQ(Reply({"SET", "k", "v", "EX", "9223372036854775807"}),
            "-ERR invalid expire time in 'set' command");
  EXPECT_EQ(Reply({"SET", "k", "v", "EX", "abc"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"SET", "k", "v", "EX"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SET", "k", "v", "EX", "1", "PX", "1"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SET", "k", "v", "KEEPTTL", "EX", "1"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SET", "k", "v", "BOGUS"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"SET", "k"}), "-ERR wrong number of arguments for 'set' command");
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");  // Nothing was set by the failed commands.
}

TEST_F(StringCommandsTest, IncrDecr) {
  EXPECT_EQ(Reply({"INCR", "n"}), ":1");
  EXPECT_EQ(Reply({"INCRBY", "n", "41"}), ":42");
  EXPECT_EQ(Reply({"DECR", "n"}), ":41");
  EXPECT_EQ(Reply({"DECRBY", "n", "-9"}), ":50");
  EXPECT_EQ(Reply({"GET", "n"}), "\"50\"");
  EXPECT_EQ(Reply({"SET", "n", "9223372036854775807"}), "+OK");
  EXPECT_EQ(Reply({"INCR", "n"}), "-ERR increment or decrement would overflow");
  EXPECT_EQ(Reply({"SET", "n", "-9223372036854775808"}), "+OK");
  EXPECT_EQ(Reply({"DECR", "n"}), "-ERR increment or decrement would overflow");
  EXPECT_EQ(Reply({"DECRBY", "n", "-9223372036854775808"}), "-ERR decrement would overflow");
  EXPECT_EQ(Reply({"SET", "s", "12a"}), "+OK");
  EXPECT_EQ(Reply({"INCR", "s"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"SET", "s", " 1"}), "+OK");
  EXPECT_EQ(Reply({"INCR", "s"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"INCRBY", "s", "x"}), "-ERR value is not an integer or out of range");
}

TEST_F(StringCommandsTest, IncrKeepsTtl) {
  EXPECT_EQ(Reply({"SET", "n", "1", "PX", "1000"}), "+OK");
  EXPECT_EQ(Reply({"INCR", "n"}), ":2");
  clock_.AdvanceMs(1000);
  EXPECT_EQ(Reply({"GET", "n"}), "(nil)");
}

}  // namespace
}  // namespace gigakv::testing
