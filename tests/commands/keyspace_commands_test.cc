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
