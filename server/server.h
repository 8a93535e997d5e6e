// The server's shared state and the command dispatcher: config, store, command table, stats and
// the registry of connected clients. Networking lives in network.h; a Server can run without it
// (in-process command tests call Execute directly).
//
// Threading: Execute() runs on whichever I/O thread owns the client, concurrently with other
// clients' commands; everything here is thread-safe (atomics, store shard locks, a registry lock).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gigakv/access_stamp.h"
#include "gigakv/clock.h"
#include "gigakv/store.h"
#include "gigakv/strings.h"
#include "protocol/reply_builder.h"
#include "server/client_state.h"
#include "server/command.h"
#include "server/config.h"

namespace gigakv::server {

inline constexpr std::string_view kRedisCompatVersion = "7.0.15";

struct CommandStats {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> usec{0};
  std::atomic<uint64_t> rejected_calls{0};
  std::atomic<uint64_t> failed_calls{0};
};

struct ServerStats {
  std::atomic<uint64_t> total_connections_received{0};
  std::atomic<uint64_t> total_commands_processed{0};
  std::atomic<uint64_t> rejected_connections{0};
  std::atomic<uint64_t> total_net_input_bytes{0};
  std::atomic<uint64_t> total_net_output_bytes{0};
  std::atomic<uint64_t> keyspace_hits{0};
  std::atomic<uint64_t> keyspace_misses{0};
  std::atomic<uint64_t> evicted_keys{0};
  std::atomic<uint64_t> total_error_replies{0};
  std::atomic<uint64_t> client_query_buffer_limit_disconnections{0};
  std::atomic<uint64_t> client_output_buffer_limit_disconnections{0};
  std::atomic<int64_t> connected_clients{0};
  std::atomic<int64_t> blocked_clients{0};
  std::atomic<uint64_t> dirty{0};  // Changes since the last save (rdb_changes_since_last_save).
};

struct ServerOptions {
  const Clock* clock = nullptr;  // nullptr = system clock.
};

class Server {
 public:
  explicit Server(Config& config, ServerOptions options = {});
  ~Server();

  Config& config() { return config_; }
  Store& store() { return *store_; }
  const CommandTable& commands() const { return commands_; }
  ServerStats& stats() { return stats_; }
  CommandStats& command_stats(const CommandSpec* spec);
  int64_t start_time_ms() const { return start_time_ms_; }
  int64_t NowMs() const { return store_->NowMs(); }
  int64_t lastsave_s() const { return lastsave_s_.load(); }

  // Runs one command for `client`, writing its reply (if any) to `reply`. Checks arity, auth,
  // OOM and subcommands; counts stats. Never throws.
  void Execute(ClientState& client, const std::vector<std::string_view>& args,
               protocol::ReplyBuilder& reply);

  // Errorstats: counts per error code ("ERR", "WRONGTYPE"...).
  void CountError(std::string_view code);
  std::map<std::string, uint64_t> ErrorStats();
  void ResetStats();

  // Client registry (CLIENT LIST / KILL / INFO clients).
  uint64_t NextClientId() { return next_client_id_.fetch_add(1); }
  void RegisterClient(const std::shared_ptr<ClientState>& client);
  void UnregisterClient(uint64_t id);
  std::vector<std::shared_ptr<ClientState>> Clients();
  std::shared_ptr<ClientState> FindClient(uint64_t id);

  // Shutdown: set by SHUTDOWN or signals; the network layer watches it.
  void RequestShutdown() { shutdown_requested_.store(true); if (on_shutdown_) on_shutdown_(); }
  bool shutdown_requested() const { return shutdown_requested_.load(); }
  void set_on_shutdown(std::function<void()> fn) { on_shutdown_ = std::move(fn); }

  // Periodic work (hz times per second): active expiry.
  void Cron();
  // DEBUG SET-ACTIVE-EXPIRE.
  void set_active_expire_enabled(bool enabled) { active_expire_enabled_.store(enabled); }

  // Re-reads config values cached for the hot path (after CONFIG SET and at start).
  void RefreshCachedConfig();
  bool password_set() const { return password_set_.load(std::memory_order_relaxed); }
  AccessMode access_mode() const { return lfu_.load(std::memory_order_relaxed) ? AccessMode::kLfu : AccessMode::kLru; }
  bool OverMaxmemory() const {
    int64_t limit = maxmemory_.load(std::memory_order_relaxed);
    return limit > 0 && used_memory_.load(std::memory_order_relaxed) > limit;
  }
  // used_memory (bytes allocated by the process) as last measured by Cron, or now if `refresh`.
  int64_t UsedMemory(bool refresh = false);
  int64_t peak_used_memory() const { return peak_used_memory_.load(); }
  int64_t startup_used_memory() const { return startup_used_memory_; }

  // Network facts for INFO (set by the network layer).
  std::atomic<int> tcp_port{0};
  std::string executable;

 private:
  Config& config_;
  std::unique_ptr<Store> store_;
  CommandTable commands_;
  ServerStats stats_;
  std::unordered_map<const CommandSpec*, std::unique_ptr<CommandStats>> command_stats_;
  std::mutex error_mutex_;
  std::map<std::string, uint64_t> error_stats_;
  std::mutex clients_mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<ClientState>> clients_;
  std::atomic<uint64_t> next_client_id_{1};
  std::atomic<bool> shutdown_requested_{false};
  std::function<void()> on_shutdown_;
  std::atomic<bool> active_expire_enabled_{true};
  std::atomic<bool> password_set_{false};
  std::atomic<bool> lfu_{false};
  std::atomic<int64_t> maxmemory_{0};
  std::atomic<int64_t> used_memory_{0};
  std::atomic<int64_t> peak_used_memory_{0};
  int64_t startup_used_memory_ = 0;
  int64_t start_time_ms_;
  std::atomic<int64_t> lastsave_s_;
};

}  // namespace gigakv::server
