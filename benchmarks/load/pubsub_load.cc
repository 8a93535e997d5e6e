// gigakv-pubsub-load: Pub/Sub load and checking against any Redis-protocol server.
//
// S subscriber connections SUBSCRIBE one channel; P publisher connections then PUBLISH N
// messages each to it, each publisher keeping up to W requests in flight. The run ends when
// every subscriber has every message (or at --timeout, a failure). One thread drives every
// socket with epoll, doing the least per byte: a subscriber's stream is counted by length (every
// frame has the same size), and parsed only with --verify.
//
// Usage:
//   gigakv-pubsub-load [-h host] [-p port] [-s subscribers] [-P publishers] [-n messages]
//                      [-d payload-bytes] [-w window] [--verify] [--timeout seconds] [--csv]
//
// --verify: each payload carries its publisher and sequence number; every subscriber must get
// each publisher's messages exactly once and in order (exit status 1 and a message otherwise).
//
// Output: one line "published P*N in T s: X msg/s published, Y msg/s delivered (S subscribers,
// D-byte payloads)"; with --csv a header and one row: subscribers,publishers,payload,
// seconds,published_per_s,delivered_per_s.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view kChannel = "gigakv-pubsub-load";

struct Options {
  std::string host = "127.0.0.1";
  int port = 6379;
  int subscribers = 1;
  int publishers = 1;
  int64_t messages = 100000;  // Per publisher.
  int payload = 16;
  int window = 64;
  bool verify = false;
  double timeout_s = 120;
  bool csv = false;
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "gigakv-pubsub-load: %s\n", message.c_str());
  std::exit(2);
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) Die(std::string("missing value for ") + argv[i]);
      return argv[++i];
    };
    if (arg == "-h") {
      options.host = value();
    } else if (arg == "-p") {
      options.port = std::atoi(value());
    } else if (arg == "-s") {
      options.subscribers = std::atoi(value());
    } else if (arg == "-P") {
      options.publishers = std::atoi(value());
    } else if (arg == "-n") {
      options.messages = std::atoll(value());
    } else if (arg == "-d") {
      options.payload = std::atoi(value());
    } else if (arg == "-w") {
      options.window = std::atoi(value());
    } else if (arg == "--verify") {
      options.verify = true;
    } else if (arg == "--timeout") {
      options.timeout_s = std::atof(value());
    } else if (arg == "--csv") {
      options.csv = true;
    } else {
      Die("unknown option " + std::string(arg) + " (see the file comment for usage)");
    }
  }
  if (options.subscribers < 1 || options.publishers < 1 || options.messages < 1 ||
      options.window < 1) {
    Die("-s, -P, -n and -w must be at least 1");
  }
  if (options.payload < 16) Die("-d must be at least 16 (the payload holds a sequence number)");
  return options;
}

int Connect(const Options& options) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) Die(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(options.port));
  if (::inet_pton(AF_INET, options.host.c_str(), &address.sin_addr) != 1) {
    Die("-h must be an IPv4 address: " + options.host);
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    Die(std::string("connect: ") + std::strerror(errno));
  }
  int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  return fd;
}

void SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Die(std::string("send: ") + std::strerror(errno));
    data.remove_prefix(static_cast<size_t>(n));
  }
}

std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}

// Payload: "<publisher>:<sequence>:" padded with 'x' to the payload size.
std::string Payload(int publisher, int64_t sequence, int size) {
  std::string text = std::to_string(publisher) + ":" + std::to_string(sequence) + ":";
  if (static_cast<int>(text.size()) > size) Die("-d too small for the sequence numbers");
  text.resize(static_cast<size_t>(size), 'x');
  return text;
}

struct Subscriber {
  int fd = -1;
  std::string pending;        // Bytes of an incomplete frame (with --verify).
  uint64_t bytes = 0;         // Message bytes received (after the confirmation).
  std::vector<int64_t> last;  // --verify: last sequence seen per publisher.
};

struct Publisher {
  int fd = -1;
  int id = 0;
  int64_t sent = 0;
  int64_t answered = 0;
  std::string input;
};

}  // namespace

int main(int argc, char** argv) {
  const Options options = ParseOptions(argc, argv);
  rlimit files{};  // A connection per subscriber: as many descriptors as allowed.
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  const std::string confirmation = "*3\r\n$9\r\nsubscribe\r\n" + Bulk(kChannel) + ":1\r\n";
  // Every message frame has this size: the sequence is padded into a fixed payload.
  const size_t frame_size = std::string("*3\r\n$7\r\nmessage\r\n").size() + Bulk(kChannel).size() +
                            Bulk(std::string(static_cast<size_t>(options.payload), 'x')).size();
  const int64_t total = options.messages * options.publishers;
  const uint64_t expected_bytes = static_cast<uint64_t>(total) * frame_size;

  // Subscribe, and wait for every confirmation before publishing.
  std::vector<Subscriber> subscribers(static_cast<size_t>(options.subscribers));
  const std::string subscribe = "*2\r\n$9\r\nSUBSCRIBE\r\n" + Bulk(kChannel);
  for (Subscriber& subscriber : subscribers) {
    subscriber.fd = Connect(options);
    SendAll(subscriber.fd, subscribe);
    subscriber.last.assign(static_cast<size_t>(options.publishers), -1);
  }
  for (Subscriber& subscriber : subscribers) {
    std::string got;
    char buffer[256];
    while (got.size() < confirmation.size()) {
      ssize_t n = ::recv(subscriber.fd, buffer, sizeof(buffer), 0);
      if (n <= 0) Die("a subscriber's connection closed before its confirmation");
      got.append(buffer, static_cast<size_t>(n));
    }
    if (got.compare(0, confirmation.size(), confirmation) != 0) {
      Die("unexpected SUBSCRIBE reply: " + got.substr(0, 80));
    }
    subscriber.pending = got.substr(confirmation.size());
    subscriber.bytes = subscriber.pending.size();
  }
  std::vector<Publisher> publishers(static_cast<size_t>(options.publishers));
  for (int i = 0; i < options.publishers; ++i) {
    publishers[static_cast<size_t>(i)].fd = Connect(options);
    publishers[static_cast<size_t>(i)].id = i;
  }

  int ready = ::epoll_create1(0);
  for (size_t i = 0; i < subscribers.size(); ++i) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = i;
    ::epoll_ctl(ready, EPOLL_CTL_ADD, subscribers[i].fd, &event);
  }
  for (size_t i = 0; i < publishers.size(); ++i) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = (1ull << 40) | i;
    ::epoll_ctl(ready, EPOLL_CTL_ADD, publishers[i].fd, &event);
  }

  const std::string publish_head = "*3\r\n$7\r\nPUBLISH\r\n" + Bulk(kChannel);
  std::string request;
  // Flow control: publishers stay at most about kMaxBacklogBytes of messages ahead of the
  // slowest subscriber, so that a server faster than this client's reading does not pile up
  // output until client-output-buffer-limit disconnects a subscriber.
  constexpr uint64_t kMaxBacklogBytes = 4u << 20;
  const int64_t max_ahead =
      std::max<int64_t>(options.window, static_cast<int64_t>(kMaxBacklogBytes / frame_size));
  int64_t slowest = 0;  // Messages every subscriber has (as last computed).
  int64_t published_so_far = 0;
  auto ahead = [&] {
    if (published_so_far - slowest < max_ahead) return false;
    uint64_t least = UINT64_MAX;
    for (const Subscriber& subscriber : subscribers) least = std::min(least, subscriber.bytes);
    slowest = static_cast<int64_t>(least / frame_size);
    return published_so_far - slowest >= max_ahead;
  };
  std::vector<Publisher*> held;  // Publishers waiting for the subscribers to catch up.
  auto top_up = [&](Publisher& publisher) {
    request.clear();
    while (publisher.sent < options.messages &&
           publisher.sent - publisher.answered < options.window) {
      if (ahead()) {
        held.push_back(&publisher);
        break;
      }
      ++published_so_far;
      request += publish_head;
      request += Bulk(Payload(publisher.id, publisher.sent, options.payload));
      ++publisher.sent;
    }
    if (!request.empty()) SendAll(publisher.fd, request);
  };
  int failures = 0;
  auto verify = [&](Subscriber& subscriber, std::string_view data) {
    subscriber.pending.append(data);
    size_t at = 0;
    for (; at + frame_size <= subscriber.pending.size(); at += frame_size) {
      std::string_view payload(subscriber.pending.data() + at + frame_size - 2 - options.payload,
                               static_cast<size_t>(options.payload));
      const size_t colon = payload.find(':');
      const int publisher = std::atoi(std::string(payload.substr(0, colon)).c_str());
      const int64_t sequence = std::atoll(std::string(payload.substr(colon + 1)).c_str());
      if (publisher < 0 || publisher >= options.publishers ||
          sequence != subscriber.last[static_cast<size_t>(publisher)] + 1) {
        if (failures++ < 5) {
          std::fprintf(stderr, "subscriber fd %d: publisher %d message %lld after %lld\n",
                       subscriber.fd, publisher, static_cast<long long>(sequence),
                       static_cast<long long>(publisher >= 0 && publisher < options.publishers
                                                  ? subscriber.last[static_cast<size_t>(publisher)]
                                                  : -2));
        }
      } else {
        subscriber.last[static_cast<size_t>(publisher)] = sequence;
      }
    }
    subscriber.pending.erase(0, at);
  };
  if (options.verify) {
    for (Subscriber& subscriber : subscribers) {
      std::string early = std::move(subscriber.pending);
      subscriber.pending.clear();
      verify(subscriber, early);
    }
  }

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(options.timeout_s);
  for (Publisher& publisher : publishers) top_up(publisher);
  size_t complete = 0;
  for (const Subscriber& subscriber : subscribers) complete += subscriber.bytes >= expected_bytes;
  std::vector<char> buffer(1 << 20);
  std::vector<epoll_event> events(256);
  while (complete < subscribers.size()) {
    if (std::chrono::steady_clock::now() > deadline) {
      Die("timed out: " + std::to_string(complete) + " of " + std::to_string(subscribers.size()) +
          " subscribers got every message");
    }
    int count = ::epoll_wait(ready, events.data(), static_cast<int>(events.size()), 100);
    for (int e = 0; e < count; ++e) {
      const uint64_t tag = events[static_cast<size_t>(e)].data.u64;
      if (tag >> 40) {
        Publisher& publisher = publishers[tag & 0xffffffffff];
        ssize_t n = ::recv(publisher.fd, buffer.data(), buffer.size(), 0);
        if (n <= 0) Die("a publisher's connection closed");
        publisher.input.append(buffer.data(), static_cast<size_t>(n));
        // Replies are integers (":<receivers>\r\n"); an error stops the run.
        size_t at = 0, end;
        while ((end = publisher.input.find("\r\n", at)) != std::string::npos) {
          if (publisher.input[at] != ':')
            Die("PUBLISH answered " + publisher.input.substr(at, end - at));
          ++publisher.answered;
          at = end + 2;
        }
        publisher.input.erase(0, at);
        top_up(publisher);
      } else {
        Subscriber& subscriber = subscribers[tag];
        ssize_t n = ::recv(subscriber.fd, buffer.data(), buffer.size(), 0);
        if (n <= 0) Die("a subscriber's connection closed");
        const bool was_complete = subscriber.bytes >= expected_bytes;
        subscriber.bytes += static_cast<uint64_t>(n);
        if (options.verify)
          verify(subscriber, std::string_view(buffer.data(), static_cast<size_t>(n)));
        if (!was_complete && subscriber.bytes >= expected_bytes) ++complete;
        if (!held.empty() && !ahead()) {
          std::vector<Publisher*> waiting;
          waiting.swap(held);
          for (Publisher* publisher : waiting) top_up(*publisher);
        }
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const Subscriber& subscriber : subscribers) {
    if (subscriber.bytes != expected_bytes) ++failures;
    if (options.verify) {
      for (int64_t last : subscriber.last) failures += last != options.messages - 1;
    }
    ::close(subscriber.fd);
  }
  for (const Publisher& publisher : publishers) ::close(publisher.fd);
  const double published = static_cast<double>(total) / seconds;
  const double delivered = published * options.subscribers;
  if (options.csv) {
    std::printf("subscribers,publishers,payload,seconds,published_per_s,delivered_per_s\n");
    std::printf("%d,%d,%d,%.4f,%.0f,%.0f\n", options.subscribers, options.publishers,
                options.payload, seconds, published, delivered);
  } else {
    std::printf(
        "published %lld in %.3f s: %.0f msg/s published, %.0f msg/s delivered (%d subscribers, "
        "%d-byte payloads)\n",
        static_cast<long long>(total), seconds, published, delivered, options.subscribers,
        options.payload);
  }
  if (failures > 0) {
    std::fprintf(stderr, "gigakv-pubsub-load: %d problems (lost, repeated or reordered messages)\n",
                 failures);
    return 1;
  }
  return 0;
}
