// A small blocking Redis client over TCP: connect, send commands (one at a time or pipelined)
// and parse RESP2/RESP3 replies. Used by benchmarks, tests and tools.
//
// Threading: one Client per thread. Errors: absl::Status (connection, protocol); a Redis error
// reply is a RespValue of type kError, not a failed status.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "protocol/resp_reader.h"

namespace gigakv::client {

// Encodes one command as a RESP multibulk request.
std::string EncodeCommand(const std::vector<std::string>& args);

class Client {
 public:
  Client() = default;
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  absl::Status Connect(const std::string& host, int port);
  void Close();
  bool connected() const { return fd_ >= 0; }

  // Sends one command and reads its reply.
  absl::StatusOr<protocol::RespValue> Command(const std::vector<std::string>& args);
  // Sends all commands in one write, then reads one reply per command.
  absl::StatusOr<std::vector<protocol::RespValue>> Pipeline(
      const std::vector<std::vector<std::string>>& commands);
  // Low level: raw bytes out, one reply in.
  absl::Status SendRaw(std::string_view bytes);
  absl::StatusOr<protocol::RespValue> ReadReply();

 private:
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace gigakv::client
