#include "client/client.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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

// A listener that never answers: the kernel completes the handshake, nothing ever replies.
TEST(ClientTest, ReadTimesOutWithDeadlineExceeded) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);

  Client client;
  client.set_timeout_ms(50);
  ASSERT_TRUE(client.Connect("127.0.0.1", ntohs(address.sin_port)).ok());
  absl::StatusOr<protocol::RespValue> reply = client.Command({"PING"});
  EXPECT_TRUE(absl::IsDeadlineExceeded(reply.status())) << reply.status();
  ::close(listener);
}

TEST(ClientTest, EmptyHostIsNotFound) {
  Client client;
  EXPECT_TRUE(absl::IsNotFound(client.Connect("", 6379)));
}

}  // namespace
}  // namespace gigakv::client
