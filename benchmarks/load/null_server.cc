// gigakv-null-server: the cheapest server that benchmarks/compare.sh can measure. It answers
// every command with a fixed reply and stores nothing, so the CPU it spends per request is the
// kernel's cost of one request and one reply on a TCP connection, plus the least user work a
// server can do. That is the floor under any server's "server CPU per request" at a given
// pipeline depth, and `compare.sh --server build/benchmarks/load/gigakv-null-server` reports it
// as a ratio to redis-server's, measured the same way as gigakv's (benchmarks/README.md, "The
// floor").
//
// Its event loop is Redis's: one thread, one level-triggered epoll set, one read() per ready
// connection, then one send() per connection with replies before the next epoll_wait().
//
// Replies: PING -> +PONG; GET -> the 3-byte bulk "xxx" (redis-benchmark's value); CONFIG ->
// an empty array (so compare.sh sees no persistence to turn off); anything else -> +OK.
// Requests are RESP arrays of bulk strings or inline commands, as redis-benchmark and
// gigakv-load send them; a malformed request closes the connection.
//
// Usage: gigakv-null-server [--port N] [--OPTION VALUE]...  (other options, which compare.sh
// passes to every server, are accepted and ignored). Listens on 127.0.0.1; runs until killed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

constexpr std::string_view kPong = "+PONG\r\n";
constexpr std::string_view kOk = "+OK\r\n";
constexpr std::string_view kGetValue = "$3\r\nxxx\r\n";
constexpr std::string_view kEmptyArray = "*0\r\n";

struct Connection {
  std::string input;
  std::string output;
  bool queued_for_write = false;
  bool watching_writability = false;  // EPOLLOUT instead of EPOLLIN while replies are unsent.
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  }
  return true;
}

std::string_view ReplyFor(std::string_view command_name) {
  if (EqualsIgnoreCase(command_name, "PING")) return kPong;
  if (EqualsIgnoreCase(command_name, "GET")) return kGetValue;
  if (EqualsIgnoreCase(command_name, "CONFIG")) return kEmptyArray;
  return kOk;
}

// Reads the decimal number that starts at `pos` and ends at "\r\n"; advances `pos` past the
// line. Returns nullopt if the line is incomplete, `malformed` is set if it is not a number.
std::optional<long> ReadNumberLine(std::string_view in, size_t& pos, bool& malformed) {
  size_t end = in.find("\r\n", pos);
  if (end == std::string_view::npos) return std::nullopt;
  long value = 0;
  auto [ptr, ec] = std::from_chars(in.data() + pos, in.data() + end, value);
  if (ec != std::errc() || ptr != in.data() + end) malformed = true;
  pos = end + 2;
  return value;
}

// Parses the complete requests at the front of `connection.input`, appends a reply for each to
// `connection.output` and drops them from the input. Returns false on a malformed request.
bool ServeRequests(Connection& connection) {
  std::string_view in = connection.input;
  size_t consumed = 0;
  bool malformed = false;
  while (consumed < in.size()) {
    size_t pos = consumed;
    std::string_view name;
    if (in[pos] == '*') {
      ++pos;
      std::optional<long> args = ReadNumberLine(in, pos, malformed);
      if (!args || malformed) break;
      bool complete = true;
      for (long i = 0; i < *args; ++i) {
        if (pos >= in.size()) {
          complete = false;
          break;
        }
        if (in[pos] != '$') return false;
        ++pos;
        std::optional<long> length = ReadNumberLine(in, pos, malformed);
        if (malformed || (length && *length < 0)) return false;
        if (!length || pos + *length + 2 > in.size()) {
          complete = false;
          break;
        }
        if (i == 0) name = in.substr(pos, *length);
        pos += *length + 2;
      }
      if (!complete) break;
    } else {
      size_t end = in.find('\n', pos);
      if (end == std::string_view::npos) break;
      std::string_view line = in.substr(pos, end - pos);
      name = line.substr(0, line.find_first_of(" \r"));
      pos = end + 1;
    }
    if (malformed) return false;
    if (!name.empty()) connection.output.append(ReplyFor(name));
    consumed = pos;
  }
  if (malformed) return false;
  connection.input.erase(0, consumed);
  return true;
}

int Listen(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(fd, 511) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 6379;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--port") == 0) port = std::atoi(argv[i + 1]);
  }
  int listener = Listen(port);
  if (listener < 0) {
    std::perror("gigakv-null-server: listen");
    return 1;
  }
  int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  epoll_event listen_event{};
  listen_event.events = EPOLLIN;
  listen_event.data.fd = listener;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listener, &listen_event);
  std::printf("gigakv-null-server listening on 127.0.0.1:%d\n", port);
  std::fflush(stdout);

  std::unordered_map<int, Connection> connections;
  std::vector<int> pending_writes;
  std::vector<epoll_event> events(1024);
  char buffer[16 * 1024];
  auto close_connection = [&](int fd) {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    close(fd);
    connections.erase(fd);
  };
  while (true) {
    int ready = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), -1);
    if (ready < 0 && errno != EINTR) {
      std::perror("gigakv-null-server: epoll_wait");
      return 1;
    }
    for (int i = 0; i < ready; ++i) {
      int fd = events[i].data.fd;
      if (fd == listener) {
        int client = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (client < 0) continue;
        int one = 1;
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        epoll_event event{};
        event.events = EPOLLIN;
        event.data.fd = client;
        epoll_ctl(epoll_fd, EPOLL_CTL_ADD, client, &event);
        connections[client];
        continue;
      }
      auto it = connections.find(fd);
      if (it == connections.end()) continue;
      Connection& connection = it->second;
      if (events[i].events & EPOLLOUT) {
        // Only a connection with unsent replies watches for writability.
        if (!connection.queued_for_write) {
          connection.queued_for_write = true;
          pending_writes.push_back(fd);
        }
        continue;
      }
      ssize_t received = read(fd, buffer, sizeof buffer);
      if (received < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (received <= 0) {
        close_connection(fd);
        continue;
      }
      connection.input.append(buffer, static_cast<size_t>(received));
      if (!ServeRequests(connection)) {
        close_connection(fd);
        continue;
      }
      if (!connection.output.empty() && !connection.queued_for_write) {
        connection.queued_for_write = true;
        pending_writes.push_back(fd);
      }
    }
    for (int fd : pending_writes) {
      auto it = connections.find(fd);
      if (it == connections.end()) continue;
      Connection& connection = it->second;
      connection.queued_for_write = false;
      // A client that closed before reading its replies must not kill the server (SIGPIPE).
      ssize_t sent = send(fd, connection.output.data(), connection.output.size(), MSG_NOSIGNAL);
      if (sent < 0 && errno != EAGAIN && errno != EINTR) {
        close_connection(fd);
        continue;
      }
      if (sent > 0) connection.output.erase(0, static_cast<size_t>(sent));
      bool unsent = !connection.output.empty();
      if (unsent != connection.watching_writability) {
        connection.watching_writability = unsent;
        epoll_event event{};
        event.events = unsent ? EPOLLOUT : EPOLLIN;
        event.data.fd = fd;
        epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &event);
      }
    }
    pending_writes.clear();
  }
}
