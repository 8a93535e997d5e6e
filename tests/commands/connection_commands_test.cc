#include "gmock/gmock.h"
#include "support/command_fixture.h"

namespace gigakv::testing {
namespace {

using ::testing::HasSubstr;

class ConnectionCommandsTest : public CommandTest {};

// Execute remembers the last command name a client sent, byte for byte: repeats, case
// variants, unknown names, subcommands, arity errors and names longer than it keeps all resolve
// as the command table says, whatever came before.
TEST_F(ConnectionCommandsTest, RepeatedCommandNamesResolveLikeAnyOther) {
  EXPECT_EQ(Reply({"SET", "k", "1"}), "+OK");
  EXPECT_EQ(Reply({"SET", "k", "2"}), "+OK");
  EXPECT_EQ(Reply({"set", "k", "3"}), "+OK");
  EXPECT_EQ(Reply({"SET"}), "-ERR wrong number of arguments for 'set' command");
  EXPECT_EQ(Reply({"SETX", "k", "4"}),
            "-ERR unknown command 'SETX', with args beginning with: 'k' '4' ");
  EXPECT_EQ(Reply({"SETX", "k", "4"}),
            "-ERR unknown command 'SETX', with args beginning with: 'k' '4' ");
  EXPECT_EQ(Reply({"GET", "k"}), "\"3\"");
  EXPECT_EQ(Reply({"GeT", "k"}), "\"3\"");
  EXPECT_EQ(Reply({"GET", "k"}), "\"3\"");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "k"}), "\"int\"");
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "k"}).substr(0, 4), "-ERR");  // Not an LFU policy.
  EXPECT_EQ(Reply({"OBJECT", "NOPE", "k"}).substr(0, 24), "-ERR unknown subcommand ");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "k"}), "\"int\"");
  EXPECT_EQ(Reply({"GETRANGE", "k", "0", "-1"}), "\"3\"");
  const std::string long_name(40, 'x');  // Longer than a remembered name.
  EXPECT_EQ(Reply({long_name}).substr(0, 21), "-ERR unknown command ");
  EXPECT_EQ(Reply({long_name}).substr(0, 21), "-ERR unknown command ");
  EXPECT_EQ(Reply({"INCR", "k"}), ":4");
  EXPECT_EQ(Reply({"INCR", "k"}), ":5");
}

TEST_F(ConnectionCommandsTest, HelloSwitchesProtocol) {
  std::string raw = RunRaw({"HELLO", "3"});
  EXPECT_THAT(raw, ::testing::StartsWith("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n"
                                         "$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n"));
  EXPECT_EQ(RunRaw({"GET", "missing"}), "_\r\n");
  EXPECT_THAT(RunRaw({"HELLO", "2"}), ::testing::StartsWith("*14\r\n"));
  EXPECT_EQ(RunRaw({"GET", "missing"}), "$-1\r\n");
  EXPECT_EQ(Reply({"HELLO", "4"}), "-NOPROTO unsupported protocol version");
  EXPECT_EQ(Reply({"HELLO", "abc"}), "-ERR Protocol version is not an integer or out of range");
  EXPECT_EQ(Reply({"HELLO", "3", "foo"}), "-ERR Syntax error in HELLO option 'foo'");
  Run({"HELLO", "3", "SETNAME", "myname"});
  EXPECT_EQ(Reply({"CLIENT", "GETNAME"}), "\"myname\"");
}

TEST_F(ConnectionCommandsTest, AuthWithRequirePass) {
  EXPECT_EQ(Reply({"AUTH", "x"}),
            "-ERR AUTH <password> called without any password configured for the default user. "
            "Are you sure your configuration is correct?");
  EXPECT_EQ(Reply({"AUTH", "default", "anything"}), "+OK");
  EXPECT_EQ(Reply({"CONFIG", "SET", "requirepass", "secret"}), "+OK");
  client_.authenticated = false;
  EXPECT_EQ(Reply({"GET", "k"}), "-NOAUTH Authentication required.");
  EXPECT_EQ(Reply({"PING"}), "-NOAUTH Authentication required.");
  EXPECT_EQ(Reply({"AUTH", "wrong"}),
            "-WRONGPASS invalid username-password pair or user is disabled.");
  EXPECT_EQ(Reply({"AUTH", "bob", "secret"}),
            "-WRONGPASS invalid username-password pair or user is disabled.");
  EXPECT_THAT(Reply({"HELLO", "3"}), HasSubstr("-NOAUTH HELLO must be called"));
  EXPECT_THAT(Reply({"HELLO", "3", "AUTH", "default", "secret"}), HasSubstr("\"proto\", :3"));
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");
  EXPECT_EQ(Reply({"AUTH", "a", "b", "c"}), "-ERR syntax error");
}

TEST_F(ConnectionCommandsTest, SelectRange) {
  EXPECT_EQ(Reply({"SELECT", "15"}), "+OK");
  EXPECT_EQ(Reply({"SELECT", "16"}), "-ERR DB index is out of range");
  EXPECT_EQ(Reply({"SELECT", "-1"}), "-ERR DB index is out of range");
  EXPECT_EQ(Reply({"SELECT", "abc"}), "-ERR value is not an integer or out of range");
}

TEST_F(ConnectionCommandsTest, QuitAndReset) {
  Run({"SELECT", "2"});
  Run({"HELLO", "3"});
  EXPECT_EQ(Reply({"RESET"}), "+RESET");
  EXPECT_EQ(client_.db.load(), 0);
  EXPECT_EQ(RunRaw({"GET", "x"}), "$-1\r\n");
  EXPECT_EQ(Reply({"QUIT"}), "+OK");
  EXPECT_TRUE(client_.close_after_reply);
}

TEST_F(ConnectionCommandsTest, ClientNameAndInfo) {
  EXPECT_EQ(Reply({"CLIENT", "GETNAME"}), "(nil)");
  EXPECT_EQ(Reply({"CLIENT", "SETNAME", "a b"}),
            "-ERR Client names cannot contain spaces, newlines or special characters.");
  EXPECT_EQ(Reply({"CLIENT", "SETNAME", "worker"}), "+OK");
  EXPECT_EQ(Reply({"CLIENT", "SETINFO", "LIB-NAME", "redis-py"}), "+OK");
  EXPECT_EQ(Reply({"CLIENT", "SETINFO", "LIB-VER", "4.3.4"}), "+OK");
  EXPECT_EQ(Reply({"CLIENT", "SETINFO", "foo", "bar"}), "-ERR Unrecognized option 'foo'");
  EXPECT_EQ(Reply({"CLIENT", "SETINFO", "lib-name", "a b"}),
            "-ERR lib-name cannot contain spaces, newlines or special characters.");
  std::string info = Run({"CLIENT", "INFO"}).str;
  EXPECT_THAT(info, HasSubstr("name=worker "));
  EXPECT_THAT(info, HasSubstr("cmd=client|info "));
  EXPECT_THAT(info, HasSubstr("lib-name=redis-py lib-ver=4.3.4"));
  EXPECT_EQ(Run({"CLIENT", "ID"}).integer, static_cast<int64_t>(client_.id));
}

TEST_F(ConnectionCommandsTest, ClientReplyModes) {
  EXPECT_EQ(RunRaw({"CLIENT", "REPLY", "OFF"}), "");
  EXPECT_EQ(RunRaw({"PING"}), "");
  EXPECT_EQ(RunRaw({"CLIENT", "REPLY", "ON"}), "+OK\r\n");
  EXPECT_EQ(RunRaw({"CLIENT", "REPLY", "SKIP"}), "");
  EXPECT_EQ(RunRaw({"PING"}), "");
  EXPECT_EQ(RunRaw({"PING"}), "+PONG\r\n");
  EXPECT_EQ(Reply({"CLIENT", "REPLY", "bogus"}), "-ERR syntax error");
}

TEST_F(ConnectionCommandsTest, ClientKillErrors) {
  EXPECT_EQ(Reply({"CLIENT", "KILL", "1.2.3.4:5"}), "-ERR No such client");
  EXPECT_EQ(Reply({"CLIENT", "KILL", "ID", "abc"}), "-ERR client-id should be greater than 0");
  EXPECT_EQ(Reply({"CLIENT", "KILL", "ID", "12345"}), ":0");
  EXPECT_EQ(Reply({"CLIENT", "NO-EVICT", "maybe"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"CLIENT", "NO-TOUCH", "on"}), "+OK");
  EXPECT_EQ(Reply({"CLIENT", "LIST", "TYPE", "bogus"}), "-ERR Unknown client type 'bogus'");
}

}  // namespace
}  // namespace gigakv::testing
