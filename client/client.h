// A small blocking Redis client over TCP: connect, send commands (one at a time or pipelined)
// and parse RESP2/RESP3 replies. Used by benchmarks, tests and tools.
//
// Threading: one Client per thread. Errors: absl::Status (connection, protocol); a Redis error
// reply is a RespValue of type kError, not a failed status.
//
// Timeouts: with set_timeout_ms(t > 0) every wait (connecting, each send that cannot go on,
// each read of more reply bytes) lasts at most t ms and then fails with DeadlineExceeded, the
// way Redis's own synchronous connections (connBlockingConnect, connSyncWrite/ReadLine) bound
// theirs. After any failed status the connection's state is unknown: Close it.
#pragma once

#include <cstdint>
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

  // 0 (the default) waits forever. Applies to later calls, Connect included.
  void set_timeout_ms(int64_t timeout_ms) { timeout_ms_ = timeout_ms; }
  int64_t timeout_ms() const { return timeout_ms_; }

  // Resolves `host` and connects to the first address that answers. NotFound when `host` does
  // not resolve, Aborted when connecting could not even start (connect(2) failed at once, as
  // for a broadcast or multicast address), Unavailable when no address answers (refused,
  // reset), DeadlineExceeded when the timeout ran out first. Timeouts beyond INT_MAX ms wait
  // INT_MAX ms.
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
  // Waits until fd_ is ready for `events` (POLLIN/POLLOUT) within the timeout.
  absl::Status WaitReady(short events, std::string_view what) const;

  int fd_ = -1;
  int64_t timeout_ms_ = 0;
  std::string buffer_;
};

}  // namespace gigakv::client
