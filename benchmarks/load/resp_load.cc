// gigakv-load: a lean RESP load generator that accepts the subset of redis-benchmark's options
// that benchmarks/compare.sh uses, and sends the very commands redis-benchmark 7.0 sends for its
// tests (captured with MONITOR).
//
// Why it exists: on a 2-core machine, with one core per server and one for the client,
// redis-benchmark saturates its own core before a fast server does (it builds a reply object per
// reply and records a latency sample per request). Then the rps ratio measures the client. This
// tool does the minimum per request: each connection writes its pipeline of P prebuilt requests
// in one send(), reads with one recv() per readiness event, and counts replies with a skip-parser
// that allocates nothing. Both servers are driven by the same client in the same way, so ratios
// stay comparable; only the client's ceiling is higher.
//
// Usage (redis-benchmark's meaning for each option):
//   gigakv-load [-h host] [-p port] [-c clients] [-n requests] [-P pipeline] [-r keyspace]
//               [-d datasize] [--csv] [-q] (-t test[,test...] | COMMAND ARG...)
// Tests: ping_inline ping_mbulk set get incr lpush rpush lpop rpop sadd hset spop zadd zpopmin
// lrange_100 lrange_300 lrange_500 lrange_600 mset. With -r N, every "__rand_int__" in a request
// becomes a random 12-digit number below N, drawn anew for each request.
//
// Output: like redis-benchmark: a summary line per test, or with --csv a header and one CSV row
// per test whose second field is requests per second. An error reply prints
// "Error from server: <text>" on stderr and stops with exit code 1, as redis-benchmark does.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "client/client.h"

namespace {

struct Options {
  std::string host = "127.0.0.1";
  int port = 6379;
  int clients = 50;
  int64_t requests = 100000;
  int pipeline = 1;
  int64_t keyspace = 0;  // 0: "__rand_int__" stays literal, as in redis-benchmark without -r.
  int data_size = 3;
  bool csv = false;
  std::vector<std::string> tests;
  std::vector<std::string> command;  // A custom command instead of tests.
};

// One request template: its RESP bytes and where each "__rand_int__" placeholder starts.
struct Request {
  std::string name;  // As redis-benchmark reports it.
  std::string bytes;
  std::vector<size_t> placeholders;
};

constexpr std::string_view kPlaceholder = "__rand_int__";  // 12 bytes, as the 12 digits.

Request MakeRequest(std::string name, const std::vector<std::string>& args) {
  Request request{std::move(name), gigakv::client::EncodeCommand(args), {}};
  for (size_t at = request.bytes.find(kPlaceholder); at != std::string::npos;
       at = request.bytes.find(kPlaceholder, at + kPlaceholder.size())) {
    request.placeholders.push_back(at);
  }
  return request;
}

// The commands redis-benchmark 7.0 sends for its named tests.
bool TestRequest(const std::string& test, const std::string& data, Request* out) {
  auto make = [&](std::string name, std::vector<std::string> args) {
    *out = MakeRequest(std::move(name), args);
    return true;
  };
  if (test == "ping_inline") {
    *out = Request{"PING_INLINE", "PING\r\n", {}};
    return true;
  }
  if (test == "ping_mbulk") return make("PING_MBULK", {"PING"});
  if (test == "set") return make("SET", {"SET", "key:__rand_int__", data});
  if (test == "get") return make("GET", {"GET", "key:__rand_int__"});
  if (test == "incr") return make("INCR", {"INCR", "counter:__rand_int__"});
  if (test == "lpush") return make("LPUSH", {"LPUSH", "mylist", data});
  if (test == "rpush") return make("RPUSH", {"RPUSH", "mylist", data});
  if (test == "lpop") return make("LPOP", {"LPOP", "mylist"});
  if (test == "rpop") return make("RPOP", {"RPOP", "mylist"});
  if (test == "sadd") return make("SADD", {"SADD", "myset", "element:__rand_int__"});
  if (test == "hset") return make("HSET", {"HSET", "myhash", "element:__rand_int__", data});
  if (test == "spop") return make("SPOP", {"SPOP", "myset"});
  if (test == "zadd") return make("ZADD", {"ZADD", "myzset", "0", "element:__rand_int__"});
  if (test == "zpopmin") return make("ZPOPMIN", {"ZPOPMIN", "myzset"});
  for (int n : {100, 300, 500, 600}) {
    if (test == "lrange_" + std::to_string(n)) {
      return make("LRANGE_" + std::to_string(n) + " (first " + std::to_string(n) + " elements)",
                  {"LRANGE", "mylist", "0", std::to_string(n - 1)});
    }
  }
  if (test == "mset") {
    std::vector<std::string> args = {"MSET"};
    for (int i = 0; i < 10; ++i) {
      args.push_back("key:__rand_int__");
      args.push_back(data);
    }
    return make("MSET (10 keys)", args);
  }
  return false;
}

// Returns the length of the complete RESP2 reply at the start of `buf`, 0 if it is incomplete,
// or -1 if it is malformed. Sets *error to the text of a top-level error reply.
int64_t SkipReply(std::string_view buf, std::string_view* error) {
  size_t pos = 0;
  int64_t pending = 1;  // Replies still to skip (arrays add their elements).
  while (pending > 0) {
    if (pos >= buf.size()) return 0;
    const char* line_start = buf.data() + pos;
    const void* cr = std::memchr(line_start, '\r', buf.size() - pos);
    if (cr == nullptr) return 0;
    size_t line_end = static_cast<size_t>(static_cast<const char*>(cr) - buf.data());
    if (line_end + 1 >= buf.size()) return 0;  // The '\n' has not arrived.
    char type = buf[pos];
    std::string_view line(line_start + 1, line_end - pos - 1);
    pos = line_end + 2;
    --pending;
    switch (type) {
      case '+':
      case ':':
        break;
      case '-':
        if (error != nullptr && error->empty()) *error = line;
        break;
      case '$':
      case '*': {
        int64_t n = 0;
        if (std::from_chars(line.data(), line.data() + line.size(), n).ec != std::errc()) {
          return -1;
        }
        if (type == '*') {
          if (n > 0) pending += n;
        } else if (n >= 0) {
          pos += static_cast<size_t>(n) + 2;
          if (pos > buf.size()) return 0;
        }
        break;
      }
      default:
        return -1;
    }
  }
  return static_cast<int64_t>(pos);
}

struct Connection {
  int fd = -1;
  std::string out;  // The batch being sent.
  size_t out_sent = 0;
  std::string in;    // Received bytes not yet parsed.
  int awaiting = 0;  // Replies still due for the batch in flight.
  bool watching_out = false;
};

class Runner {
 public:
  Runner(const Options& options, const Request& request)
      : options_(options), request_(request), rng_(12345) {}

  // Runs the test; returns requests per second, or a negative value on failure.
  double Run() {
    epoll_ = epoll_create1(0);
    if (epoll_ < 0) return Fail("epoll_create1");
    connections_.resize(static_cast<size_t>(options_.clients));
    for (Connection& c : connections_) {
      if (!Connect(&c)) return -1;
    }
    auto start = std::chrono::steady_clock::now();
    for (Connection& c : connections_) {
      if (!SendBatch(&c)) return -1;
    }
    std::vector<epoll_event> events(256);
    std::vector<char> buf(1 << 16);
    while (done_ < options_.requests) {
      int ready = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), 5000);
      if (ready < 0) {
        if (errno == EINTR) continue;
        return Fail("epoll_wait");
      }
      if (ready == 0) {
        std::fprintf(stderr, "gigakv-load: no reply for 5 s (%lld of %lld done)\n",
                     static_cast<long long>(done_), static_cast<long long>(options_.requests));
        return -1;
      }
      for (int i = 0; i < ready; ++i) {
        Connection* c = static_cast<Connection*>(events[static_cast<size_t>(i)].data.ptr);
        if (events[static_cast<size_t>(i)].events & EPOLLOUT) {
          if (!Flush(c)) return -1;
        }
        if (events[static_cast<size_t>(i)].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
          if (!Receive(c, &buf)) return -1;
        }
      }
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (Connection& c : connections_) close(c.fd);
    close(epoll_);
    return static_cast<double>(done_) / seconds;
  }

 private:
  double Fail(const char* what) {
    std::fprintf(stderr, "gigakv-load: %s: %s\n", what, std::strerror(errno));
    return -1;
  }

  bool Connect(Connection* c) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* result = nullptr;
    std::string port = std::to_string(options_.port);
    if (getaddrinfo(options_.host.c_str(), port.c_str(), &hints, &result) != 0 || !result) {
      std::fprintf(stderr, "gigakv-load: cannot resolve %s\n", options_.host.c_str());
      return false;
    }
    c->fd = socket(result->ai_family, SOCK_STREAM, 0);
    bool ok = c->fd >= 0 && connect(c->fd, result->ai_addr, result->ai_addrlen) == 0;
    freeaddrinfo(result);
    if (!ok) return Fail("connect") >= 0;
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    // Blocking socket; every send and recv passes MSG_DONTWAIT.
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.ptr = c;
    if (epoll_ctl(epoll_, EPOLL_CTL_ADD, c->fd, &event) != 0) return Fail("epoll_ctl") >= 0;
    return true;
  }

  // Starts the connection's next batch: up to `pipeline` requests, fewer at the very end.
  bool SendBatch(Connection* c) {
    int64_t left = options_.requests - issued_;
    if (left <= 0) return true;
    int batch = static_cast<int>(std::min<int64_t>(left, options_.pipeline));
    issued_ += batch;
    c->out.clear();
    for (int i = 0; i < batch; ++i) {
      size_t base = c->out.size();
      c->out += request_.bytes;
      // Without -r the placeholder stays literal, as redis-benchmark sends it.
      for (size_t at : options_.keyspace > 0 ? request_.placeholders : std::vector<size_t>{}) {
        uint64_t value = rng_() % static_cast<uint64_t>(options_.keyspace);
        for (int digit = 11; digit >= 0; --digit) {
          c->out[base + at + static_cast<size_t>(digit)] = static_cast<char>('0' + value % 10);
          value /= 10;
        }
      }
    }
    c->out_sent = 0;
    c->awaiting = batch;
    return Flush(c);
  }

  bool Flush(Connection* c) {
    while (c->out_sent < c->out.size()) {
      ssize_t n = send(c->fd, c->out.data() + c->out_sent, c->out.size() - c->out_sent,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c->out_sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return WatchWritable(c, true);
      }
      return Fail("send") >= 0;
    }
    return WatchWritable(c, false);
  }

  // Adds or removes EPOLLOUT interest: only while a batch did not fit the socket buffer.
  bool WatchWritable(Connection* c, bool on) {
    if (on == c->watching_out) return true;
    epoll_event event{};
    event.events = EPOLLIN | (on ? EPOLLOUT : 0u);
    event.data.ptr = c;
    if (epoll_ctl(epoll_, EPOLL_CTL_MOD, c->fd, &event) != 0) return Fail("epoll_ctl") >= 0;
    c->watching_out = on;
    return true;
  }

  bool Receive(Connection* c, std::vector<char>* buf) {
    ssize_t n = recv(c->fd, buf->data(), buf->size(), MSG_DONTWAIT);
    if (n == 0) {
      std::fprintf(stderr, "gigakv-load: server closed the connection\n");
      return false;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
      return Fail("recv") >= 0;
    }
    c->in.append(buf->data(), static_cast<size_t>(n));
    size_t consumed = 0;
    while (c->awaiting > 0) {
      std::string_view error;
      int64_t length = SkipReply(std::string_view(c->in).substr(consumed), &error);
      if (length < 0) {
        std::fprintf(stderr, "gigakv-load: malformed reply\n");
        return false;
      }
      if (length == 0) break;
      if (!error.empty()) {
        std::fprintf(stderr, "Error from server: %.*s\n", static_cast<int>(error.size()),
                     error.data());
        std::exit(1);
      }
      consumed += static_cast<size_t>(length);
      --c->awaiting;
      ++done_;
    }
    c->in.erase(0, consumed);
    if (c->awaiting == 0) return SendBatch(c);
    return true;
  }

  const Options& options_;
  const Request& request_;
  std::mt19937_64 rng_;
  int epoll_ = -1;
  std::vector<Connection> connections_;
  int64_t issued_ = 0;
  int64_t done_ = 0;
};

}  // namespace

namespace {

void Usage() {
  std::fprintf(stderr,
               "Usage: gigakv-load [-h host] [-p port] [-c clients] [-n requests] [-P pipeline]\n"
               "                   [-r keyspace] [-d datasize] [--csv] [-q]\n"
               "                   (-t test[,test...] | COMMAND ARG...)\n");
}

bool ParseInt(const char* text, int64_t min, int64_t* out) {
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < min) return false;
  *out = value;
  return true;
}

bool ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool has_value = i + 1 < argc;
    int64_t value = 0;
    auto number = [&](int64_t min) { return has_value && ParseInt(argv[++i], min, &value); };
    if (!options->command.empty()) {
      options->command.push_back(arg);
    } else if (arg == "-h" && has_value) {
      options->host = argv[++i];
    } else if (arg == "-p" && number(1)) {
      options->port = static_cast<int>(value);
    } else if (arg == "-c" && number(1)) {
      options->clients = static_cast<int>(value);
    } else if (arg == "-n" && number(1)) {
      options->requests = value;
    } else if (arg == "-P" && number(1)) {
      options->pipeline = static_cast<int>(value);
    } else if (arg == "-r" && number(1)) {
      options->keyspace = value;
    } else if (arg == "-d" && number(1)) {
      options->data_size = static_cast<int>(value);
    } else if (arg == "--csv") {
      options->csv = true;
    } else if (arg == "-q") {
      // Quiet is the only mode.
    } else if (arg == "-t" && has_value) {
      std::string list = argv[++i];
      for (size_t start = 0; start <= list.size();) {
        size_t comma = std::min(list.find(',', start), list.size());
        if (comma > start) options->tests.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (!arg.empty() && arg[0] != '-') {
      options->command.push_back(arg);
    } else {
      return false;
    }
  }
  return !options->tests.empty() || !options->command.empty();
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) {
    Usage();
    return 2;
  }
  // Random upper-case data of -d bytes, as redis-benchmark 7.0 fills its values.
  std::mt19937 data_rng(42);
  std::string data;
  for (int i = 0; i < options.data_size; ++i) data += static_cast<char>('A' + data_rng() % 26);

  std::vector<Request> requests;
  if (!options.command.empty()) {
    std::string name;
    for (const std::string& arg : options.command) name += (name.empty() ? "" : " ") + arg;
    requests.push_back(MakeRequest(name, options.command));
  }
  for (const std::string& test : options.tests) {
    Request request;
    if (!TestRequest(test, data, &request)) {
      std::fprintf(stderr, "gigakv-load: unknown test '%s'\n", test.c_str());
      return 2;
    }
    requests.push_back(std::move(request));
  }
  if (options.csv) std::printf("\"test\",\"rps\"\n");
  for (const Request& request : requests) {
    double rps = Runner(options, request).Run();
    if (rps < 0) return 1;
    if (options.csv) {
      std::printf("\"%s\",\"%.2f\"\n", request.name.c_str(), rps);
    } else {
      std::printf("%s: %.2f requests per second\n", request.name.c_str(), rps);
    }
    std::fflush(stdout);
  }
  return 0;
}
