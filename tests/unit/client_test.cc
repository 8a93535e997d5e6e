#include "client/client.h"

#include "gtest/gtest.h"

namespace gigakv::client {
namespace {

TEST(ClientTest, EncodeCommand) {
  EXPECT_EQ(EncodeCommand({"SET", "k", ""}), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
}

TEST(ClientTest, ConnectFailureIsAStatus) {
  Client client;
  // Port 1 on loopback: nothing listens there in the test environment.
  EXPECT_FALSE(client.Connect("127.0.0.1", 1).ok());
  EXPECT_FALSE(client.Command({"PING"}).ok());
}

}  // namespace
}  // namespace gigakv::client
