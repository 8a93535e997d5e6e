#include "client/client.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace gigakv::client {

std::string EncodeCommand(const std::vector<std::string>& args) {
  std::string out = absl::StrCat("*", args.size(), "\r\n");
  for (const std::string& arg : args) absl::StrAppend(&out, "$", arg.size(), "\r\n", arg, "\r\n");
  return out;
}

Client::~Client() { Close(); }

void Client::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
}

absl::Status Client::WaitReady(short events, std::string_view what) const {
  pollfd pfd{fd_, events, 0};
  while (true) {
    const int wait_ms = timeout_ms_ <= 0        ? -1
                        : timeout_ms_ > INT_MAX ? INT_MAX
                                                : static_cast<int>(timeout_ms_);
    int rc = ::poll(&pfd, 1, wait_ms);
    if (rc > 0) return absl::OkStatus();  // Ready, or an error the next call reports.
    if (rc == 0) return absl::DeadlineExceededError(absl::StrCat(std::string(what), ": timed out"));
    if (errno != EINTR)
      return absl::UnavailableError(absl::StrCat(std::string(what), ": ", std::strerror(errno)));
  }
}

absl::Status Client::Connect(const std::string& host, int port) {
  Close();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  std::string port_text = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &result); rc != 0) {
    return absl::NotFoundError(absl::StrCat("resolve ", host, ": ", gai_strerror(rc)));
  }
  absl::Status status = absl::UnavailableError(absl::StrCat("connect ", host, ":", port));
  for (addrinfo* ai = result; ai != nullptr; ai = ai->ai_next) {
    // Non-blocking from the start: the connect and every later wait go through poll, bounded
    // by the timeout.
    int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    fd_ = fd;
    int error = 0;
    bool started = true;
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      error = errno;
      started = error == EINPROGRESS;
      if (error == EINPROGRESS) {
        status = WaitReady(POLLOUT, absl::StrCat("connect ", host, ":", port));
        socklen_t length = sizeof(error);
        if (!status.ok()) {
          error = -1;
        } else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
          error = errno;
        }
      }
    }
    if (error == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      status = absl::OkStatus();
      break;
    }
    if (error > 0) {
      std::string message = absl::StrCat("connect ", host, ":", port, ": ", std::strerror(error));
      status = started ? absl::UnavailableError(message) : absl::AbortedError(message);
    }
    fd_ = -1;
    ::close(fd);
    if (absl::IsDeadlineExceeded(status)) break;  // The time is spent: no next address.
  }
  freeaddrinfo(result);
  return status;
}

absl::Status Client::SendRaw(std::string_view bytes) {
  if (fd_ < 0) return absl::FailedPreconditionError("not connected");
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (absl::Status status = WaitReady(POLLOUT, "send"); !status.ok()) return status;
        continue;
      }
      return absl::UnavailableError(absl::StrCat("send: ", std::strerror(errno)));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::StatusOr<protocol::RespValue> Client::ReadReply() {
  while (true) {
    protocol::RespValue value;
    int64_t used = protocol::ParseReply(buffer_, &value);
    if (used < 0) return absl::DataLossError("malformed reply");
    if (used > 0) {
      buffer_.erase(0, static_cast<size_t>(used));
      return value;
    }
    if (fd_ < 0) return absl::FailedPreconditionError("not connected");
    char chunk[64 * 1024];
    ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (absl::Status status = WaitReady(POLLIN, "read"); !status.ok()) return status;
      continue;
    }
    if (n <= 0) return absl::UnavailableError("connection closed");
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

absl::StatusOr<protocol::RespValue> Client::Command(const std::vector<std::string>& args) {
  absl::Status status = SendRaw(EncodeCommand(args));
  if (!status.ok()) return status;
  return ReadReply();
}

absl::StatusOr<std::vector<protocol::RespValue>> Client::Pipeline(
    const std::vector<std::vector<std::string>>& commands) {
  std::string out;
  for (const auto& args : commands) out += EncodeCommand(args);
  absl::Status status = SendRaw(out);
  if (!status.ok()) return status;
  std::vector<protocol::RespValue> replies;
  replies.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    auto reply = ReadReply();
    if (!reply.ok()) return reply.status();
    replies.push_back(std::move(*reply));
  }
  return replies;
}

}  // namespace gigakv::client
