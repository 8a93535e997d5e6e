// gigakv-server [config-file] [--directive value ...]  — like redis-server.
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "cxxopts.hpp"
#include "gigakv/large_buffer.h"
#include "server/config.h"
#include "server/cron.h"
#include "server/net/network.h"
#include "server/server.h"
#include "spdlog/sinks/basic_file_sink.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace {

using gigakv::server::Config;

spdlog::level::level_enum LogLevel(const std::string& name) {
  if (name == "debug" || name == "verbose") return spdlog::level::debug;
  if (name == "warning") return spdlog::level::warn;
  if (name == "nothing") return spdlog::level::off;
  return spdlog::level::info;
}

// daemonize yes, as redis-server does it: the parent exits, the child leads a new session with
// its standard streams on /dev/null (so an empty logfile logs nowhere). Runs before any thread
// exists: fork keeps only the calling thread.
void Daemonize() {
  pid_t child = ::fork();
  if (child < 0) {
    std::perror("gigakv-server: fork");
    std::exit(1);
  }
  if (child > 0) std::exit(0);
  ::setsid();
  int fd = ::open("/dev/null", O_RDWR, 0);
  if (fd >= 0) {
    ::dup2(fd, STDIN_FILENO);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    if (fd > STDERR_FILENO) ::close(fd);
  }
}

// supervised: which supervisor to tell that serving has begun, as redis-server decides it
// ("auto" goes by the environment each one sets).
std::string SupervisorOf(const gigakv::server::Settings& settings) {
  const std::string& mode = settings.supervised;
  if (mode == "auto") {
    if (std::getenv("UPSTART_JOB") != nullptr) return "upstart";
    if (std::getenv("NOTIFY_SOCKET") != nullptr) return "systemd";
    return "no";
  }
  return mode;
}

// Sends `message` to systemd's notification socket (sd_notify's protocol: one datagram on the
// unix socket named by $NOTIFY_SOCKET, '@' standing for the abstract namespace). Best effort.
void NotifySystemd(std::string_view message) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') {
    spdlog::warn("systemd supervision requested, but NOTIFY_SOCKET is not set");
    return;
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  size_t length = std::strlen(path);
  if (length >= sizeof(address.sun_path)) return;
  std::memcpy(address.sun_path, path, length);
  if (address.sun_path[0] == '@') address.sun_path[0] = '\0';
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
  if (::sendto(fd, message.data(), message.size(), MSG_NOSIGNAL,
               reinterpret_cast<const sockaddr*>(&address), size) < 0) {
    spdlog::warn("Can't notify systemd: {}", std::strerror(errno));
  }
  ::close(fd);
}

// Tells the supervisor that gigakv is ready (or, at exit, stopping).
void NotifySupervisor(const std::string& supervisor, bool ready) {
  if (supervisor == "systemd") {
    NotifySystemd(ready ? "STATUS=Ready to accept connections\nREADY=1\n" : "STOPPING=1\n");
  } else if (supervisor == "upstart" && ready) {
    // Upstart's "expect stop": the job is ready once the process stops itself.
    if (std::getenv("UPSTART_JOB") == nullptr) {
      spdlog::warn("upstart supervision requested, but UPSTART_JOB is not set");
      return;
    }
    ::raise(SIGSTOP);
    ::unsetenv("UPSTART_JOB");
  }
}

void SetUpLogging(const gigakv::server::Settings& settings) {
  const std::string& logfile = settings.logfile;
  std::shared_ptr<spdlog::logger> logger;
  if (logfile.empty()) {
    logger = spdlog::stdout_logger_mt("gigakv");
  } else {
    logger = spdlog::basic_logger_mt("gigakv", logfile);
  }
  logger->set_pattern("%P:M %d %b %Y %H:%M:%S.%e %^%L%$ %v");
  logger->set_level(LogLevel(settings.loglevel.get()));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options(
      "gigakv-server",
      "gigakv: a Redis 7.0-compatible in-memory data-structure server.\n\n"
      "Usage: gigakv-server [config-file] [--directive value ...]\n"
      "Any directive of the config file may be given on the command line, e.g.\n"
      "  gigakv-server conf/gigakv.conf --port 6380 --loglevel warning");
  options.add_options()("h,help", "Print this help")("v,version", "Print the version");

  // cxxopts handles the flags; directives are free-form (--name v1 v2 ...) and go to Config.
  std::vector<std::string> directive_args;
  std::vector<char*> flag_argv = {argv[0]};
  std::string config_file;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "-v" || arg == "--version") {
      flag_argv.push_back(argv[i]);
    } else if (i == 1 && arg.rfind("--", 0) != 0) {
      config_file = arg;
    } else {
      directive_args.push_back(arg);
    }
  }
  try {
    int flag_argc = static_cast<int>(flag_argv.size());
    auto result = options.parse(flag_argc, flag_argv.data());
    if (result.count("help")) {
      std::cout << options.help() << std::endl;
      return 0;
    }
    if (result.count("version")) {
      std::cout << "gigakv server v=" << GIGAKV_VERSION
                << " redis_version=" << gigakv::server::kRedisCompatVersion << std::endl;
      return 0;
    }
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "gigakv-server: " << e.what() << std::endl;
    return 1;
  }

  Config config;
  if (!config_file.empty()) {
    absl::Status status = config.LoadFile(config_file);
    if (!status.ok()) {
      std::cerr << "*** FATAL CONFIG FILE ERROR (gigakv " << GIGAKV_VERSION << ") ***\n"
                << status.message() << std::endl;
      return 1;
    }
  }
  absl::Status status = config.ApplyArgs(directive_args);
  if (!status.ok()) {
    std::cerr << "*** FATAL CONFIG ERROR (gigakv " << GIGAKV_VERSION << ") ***\n"
              << status.message() << std::endl;
    return 1;
  }

  // What the process needs before the server exists (the server keeps its own Settings).
  gigakv::server::Settings startup;
  startup.Load(config);
  if (startup.daemonize) Daemonize();
  ::signal(SIGPIPE, SIG_IGN);
  // Shard arenas and indexes grow by small steps through realloc. Serving blocks of 8 KiB and
  // more with mmap lets realloc move them with mremap and gives freed blocks straight back to the
  // kernel, instead of leaving holes in the heap: about 8 bytes of RSS per key less at 1M keys
  // (benchmarks/memory.sh). A fixed threshold also stops glibc from raising it dynamically.
  ::mallopt(M_MMAP_THRESHOLD, 8 * 1024);
  // With the threshold fixed, every large buffer is a mapping of its own, unmapped on free, so
  // huge-page advice on it cannot outlive it (gigakv/large_buffer.h).
  gigakv::SetLargeBufferHugePages(true);
  SetUpLogging(startup);

  gigakv::server::Server server(config);
  server.lifecycle().executable = argv[0];
  server.lifecycle().supervised = SupervisorOf(server.settings());
  config.AddApplier([&server](std::string_view name) {
    if (name == "loglevel") {
      spdlog::default_logger()->set_level(LogLevel(server.settings().loglevel.get()));
    }
    return absl::OkStatus();
  });
  gigakv::server::Network network(server);
  if (server.settings().appendonly.get()) {
    server.aof().BeginLoading();
  } else {
    server.snapshots().BeginLoading();
  }
  status = network.Start();
  if (!status.ok()) {
    spdlog::critical("{}", std::string(status.message()));
    return 1;
  }
  const std::string& pidfile = server.settings().pidfile;
  if (!pidfile.empty()) std::ofstream(pidfile) << ::getpid() << "\n";

  spdlog::info(
      "gigakv {} (Redis {} compatible) started, pid={}, port={}, io-threads={} ({} CPUs usable)",
      GIGAKV_VERSION, gigakv::server::kRedisCompatVersion, ::getpid(), network.port(),
      server.settings().io_threads, gigakv::server::UsableCpus());
  spdlog::info("Configuration loaded from {}",
               config_file.empty() ? std::string("(defaults and command line)") : config_file);
  spdlog::info("Server initialized");
  // The snapshot, while clients already connected get -LOADING. A file that cannot be loaded
  // stops start-up: serving without the data it holds would look like data loss.
  // With appendonly yes the log's directory is the dataset (dbfilename is not loaded), as in
  // Redis.
  const bool aof = server.settings().appendonly.get();
  status = aof ? server.aof().Open() : server.snapshots().LoadAtStart();
  if (!status.ok() && (aof || !absl::IsNotFound(status))) {
    spdlog::critical("{}", std::string(status.message()));
    spdlog::critical(aof ? "Terminating server after append only file reading failure."
                         : "Terminating server after rdb file reading failure.");
    server.lifecycle().RequestShutdown();
    network.Wait();
    if (!pidfile.empty()) ::unlink(pidfile.c_str());
    return 1;
  }
  gigakv::server::CronThread cron(server);
  cron.Start();
  spdlog::info("Ready to accept connections tcp");
  NotifySupervisor(server.lifecycle().supervised, /*ready=*/true);

  network.Wait();
  cron.Stop();
  // Every effect of the commands that ran is written and fsynced before the process ends.
  server.aof().Close();
  NotifySupervisor(server.lifecycle().supervised, /*ready=*/false);
  spdlog::info("gigakv is now ready to exit, bye bye...");
  if (!pidfile.empty()) ::unlink(pidfile.c_str());
  return 0;
}
