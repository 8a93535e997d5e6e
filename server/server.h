// The server's shared state and the command dispatcher: config, store, command table, stats and
// the connected clients (client_registry.h). Networking lives in net/network.h; a Server can run
// without it (in-process command tests call Execute directly).
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
#include "server/client_registry.h"
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

  // The connected clients: registry, CLIENT PAUSE, MONITOR (client_registry.h).
  ClientRegistry& clients() { return clients_; }
  const ClientRegistry& clients() const { return clients_; }
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
  ClientRegistry clients_{keyspace_.store(), stats_, watches_};
  std::atomic<bool> shutdown_requested_{false};
  std::function<void()> on_shutdown_;
  SlowLog slowlog_;
  Dispatcher dispatcher_{*this};
  int64_t start_time_ms_;
  std::atomic<int64_t> lastsave_s_;
};

}  // namespace gigakv::server
