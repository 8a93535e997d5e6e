// The server's shared state and the command dispatcher: config, store, command table, stats and
// the registry of connected clients. Networking lives in network.h; a Server can run without it
// (in-process command tests call Execute directly).
//
// Threading: Execute() runs on whichever I/O thread owns the client, concurrently with other
// clients' commands; everything here is thread-safe (atomics, store shard locks, a registry lock).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gigakv/access_stamp.h"
#include "gigakv/change_stream.h"
#include "gigakv/clock.h"
#include "gigakv/effects.h"
#include "gigakv/store.h"
#include "gigakv/strings.h"
#include "protocol/reply_builder.h"
#include "server/blocking.h"
#include "server/client_state.h"
#include "server/command.h"
#include "server/config.h"
#include "server/dispatcher.h"
#include "server/keyspace.h"
#include "server/latency_histogram.h"
#include "server/settings.h"
#include "server/slowlog.h"
#include "server/stats.h"
#include "server/transaction.h"

namespace gigakv::server {

inline constexpr std::string_view kRedisCompatVersion = "7.0.15";

struct ServerOptions {
  const Clock* clock = nullptr;  // nullptr = system clock.
};

class Server {
 public:
  explicit Server(Config& config, ServerOptions options = {});
  ~Server();

  Config& config() { return config_; }
  // The store, its change stream, expiry, eviction and lazy free (keyspace.h).
  Keyspace& keyspace() { return keyspace_; }
  const CommandTable& commands() const { return commands_; }
  BlockingRegistry& blocking() { return blocking_; }
  // MULTI/EXEC: the gate that makes EXEC atomic and the WATCH registry (transaction.h).
  TransactionGate& transaction_gate() { return transaction_gate_; }
  WatchRegistry& watches() { return watches_; }
  // Counters: INFO stats, commandstats, errorstats, latencystats, rates (stats.h).
  Stats& stats() { return stats_; }
  int64_t start_time_ms() const { return start_time_ms_; }
  int64_t lastsave_s() const { return lastsave_s_.load(); }

  // Runs requests: checks, the handler, timing and counting (dispatcher.h).
  Dispatcher& dispatcher() { return dispatcher_; }

  // CONFIG RESETSTAT: the counters of every part.
  void ResetStats();

  // Client registry (CLIENT LIST / KILL / INFO clients).
  uint64_t NextClientId() { return next_client_id_.fetch_add(1); }
  void RegisterClient(const std::shared_ptr<ClientState>& client);
  void UnregisterClient(uint64_t id);
  std::vector<std::shared_ptr<ClientState>> Clients();
  std::shared_ptr<ClientState> FindClient(uint64_t id);
  // CLIENT PAUSE: until `end_ms`, commands of every client (kAll) or only those that write
  // (kWrite: write commands, EXEC of a transaction with one) wait unrun, as do active expiry and
  // eviction. As in Redis 7.0 a pause only escalates (WRITE to ALL) and extends while it lasts.
  enum class PauseType : int { kNone = 0, kWrite = 1, kAll = 2 };
  void PauseClients(int64_t end_ms, PauseType type);
  // CLIENT UNPAUSE, and a change of the pause: waiting clients try their request again.
  void UnpauseClients();
  // Asks every client waiting for the pause to try its request again.
  void UnpauseWaiters();
  // Cron: a pause whose end passed is cleared (until then commands check the clock).
  void ForgetEndedPause();
  // No pause, and keys expire again. Under pause_mutex_.
  void ClearPauseLocked();
  bool Paused() const {
    return pause_type_.load(std::memory_order_relaxed) != 0 &&
           keyspace_.NowMs() < pause_end_ms_.load(std::memory_order_relaxed);
  }
  int64_t pause_end_ms() const { return pause_end_ms_.load(); }
  // Whether `client` must wait with `spec` now (never for in-process clients).
  bool PostponesCommand(const CommandSpec& spec, const ClientState& client) const;
  // Clients waiting for a pause to end (INFO blocked_clients counts them, as Redis does).
  std::atomic<int64_t>& paused_clients() { return paused_clients_; }

  // MONITOR: clients that receive a line for every command run (but admin commands), as Redis
  // formats it. Feeding costs one relaxed load per command while nobody monitors.
  void AddMonitor(const std::shared_ptr<ClientState>& client);
  void RemoveMonitor(uint64_t client_id);
  bool HasMonitors() const { return monitor_count_.load(std::memory_order_relaxed) > 0; }
  // `client` ran `args` (in its current database): "+<unix time.µs> [<db> <addr>] "arg" ...".
  // A monitor's line for its own command goes into `own_reply` (its batch's replies, right
  // behind the command's reply) when given; every other monitor's is posted to its thread.
  void FeedMonitors(const ClientState& client, const std::vector<std::string_view>& args,
                    protocol::ReplyBuilder* own_reply);
  // Leaves MULTI (dropping the queued commands) and forgets the client's WATCHes.
  void DiscardTransaction(ClientState& client);

  // Shutdown: set by SHUTDOWN or signals; the network layer watches it.
  void RequestShutdown() {
    shutdown_requested_.store(true);
    if (on_shutdown_) on_shutdown_();
  }
  bool shutdown_requested() const { return shutdown_requested_.load(); }
  void set_on_shutdown(std::function<void()> fn) { on_shutdown_ = std::move(fn); }

  // Periodic work (hz times per second): active expiry, memory and eviction, stats. Returns
  // true when active expiry left due keys behind (its per-tick budget ran out): the caller
  // then runs ActiveExpire() again soon instead of waiting for the next tick.
  bool Cron();
  // Active expiry alone (Keyspace::ActiveExpire, yielding to a waiting EXEC), bounded work;
  // returns true while due keys remain. Nothing expires actively during a client pause.
  bool ActiveExpire();

  // The configuration as typed fields, kept current through CONFIG SET (settings.h).
  Settings& settings() { return settings_; }
  const Settings& settings() const { return settings_; }
  SlowLog& slowlog() { return slowlog_; }

  // Network facts for INFO (set by the network layer).
  std::atomic<int> tcp_port{0};
  std::string executable;
  // How the process reports readiness to its supervisor (INFO process_supervised): "no",
  // "systemd" or "upstart". Set once at start-up.
  std::string supervised = "no";

 private:
  Config& config_;
  Settings settings_;  // Attached to config_ before keyspace_ is built.
  Keyspace keyspace_;
  CommandTable commands_;
  Stats stats_{commands_.all().size()};
  TransactionGate transaction_gate_;
  // After keyspace_, whose change stream they consume (they unregister on destruction).
  BlockingRegistry blocking_{keyspace_.changes()};
  WatchRegistry watches_{keyspace_.changes()};
  std::mutex clients_mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<ClientState>> clients_;
  std::atomic<uint64_t> next_client_id_{1};
  std::mutex pause_mutex_;
  std::atomic<int> pause_type_{0};
  std::atomic<int64_t> pause_end_ms_{0};
  std::atomic<int64_t> paused_clients_{0};
  std::mutex monitors_mutex_;
  std::vector<std::shared_ptr<ClientState>> monitors_;
  std::atomic<int> monitor_count_{0};
  std::atomic<bool> shutdown_requested_{false};
  std::function<void()> on_shutdown_;
  SlowLog slowlog_;
  Dispatcher dispatcher_{*this};
  int64_t start_time_ms_;
  std::atomic<int64_t> lastsave_s_;
};

}  // namespace gigakv::server
