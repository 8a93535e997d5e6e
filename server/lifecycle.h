// The process's life as the server sees it: when it started, when it last saved, what it runs
// as (INFO server's executable, tcp_port, process_supervised) and whether it was asked to stop.
//
// Threading: the process facts are set once at start-up (tcp_port also when CONFIG SET port
// rebinds) before clients read them; the shutdown request may come from any thread (SHUTDOWN,
// a signal) and runs the hook the network layer installed.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace gigakv::server {

// The Redis version gigakv answers as (INFO redis_version, HELLO, --version).
inline constexpr std::string_view kRedisCompatVersion = "7.0.15";

class Lifecycle {
 public:
  explicit Lifecycle(int64_t start_time_ms)
      : start_time_ms_(start_time_ms), lastsave_s_(start_time_ms / 1000) {}
  Lifecycle(const Lifecycle&) = delete;
  Lifecycle& operator=(const Lifecycle&) = delete;

  int64_t start_time_ms() const { return start_time_ms_; }
  // LASTSAVE, INFO rdb_last_save_time: the start until a snapshot is taken.
  int64_t lastsave_s() const { return lastsave_s_.load(); }
  void set_lastsave_s(int64_t seconds) { lastsave_s_.store(seconds); }

  // Set by SHUTDOWN or signals; the network layer stops when the hook runs.
  void RequestShutdown() {
    shutdown_requested_.store(true);
    if (on_shutdown_) on_shutdown_();
  }
  bool shutdown_requested() const { return shutdown_requested_.load(); }
  // Installed before serving.
  void set_on_shutdown(std::function<void()> fn) { on_shutdown_ = std::move(fn); }

  // Network facts for INFO (set by the network layer).
  std::atomic<int> tcp_port{0};
  std::string executable;
  // How the process reports readiness to its supervisor (INFO process_supervised): "no",
  // "systemd" or "upstart".
  std::string supervised = "no";

 private:
  const int64_t start_time_ms_;
  std::atomic<int64_t> lastsave_s_;
  std::atomic<bool> shutdown_requested_{false};
  std::function<void()> on_shutdown_;
};

}  // namespace gigakv::server
