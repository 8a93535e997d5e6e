// The server's root: it builds the subsystems, owns them, and hands handlers the parts they use
// (CommandServices, command.h). Each part has its own header and contract:
//   Settings        typed configuration, kept current by CONFIG SET (settings.h)
//   Keyspace        store, change stream, lazy free, active expiry, memory and eviction
//   CommandTable    commands and their metadata (command.h, command_metadata.h)
//   Dispatcher      checks, runs, times and counts one request (dispatcher.h)
//   ClientRegistry  connected clients, CLIENT PAUSE, MONITOR (client_registry.h)
//   Stats, SlowLog  counters and the slow log (stats.h, slowlog.h)
//   TransactionGate, WatchRegistry   MULTI/EXEC atomicity and WATCH (transaction.h)
//   BlockingRegistry                 clients blocked on keys (blocking.h)
//   Lifecycle       start time, last save, process facts, shutdown (lifecycle.h)
//   Snapshots       SAVE, BGSAVE, save points, loading at start (snapshots.h)
//   AppendOnlyLog   the append-only log: effects to disk, group commit, replay (aof.h)
//   MigrationLinks  MIGRATE's cached connections to other servers (migration_links.h)
//   PubSub          channels, patterns and shard channels, and message delivery (pubsub.h)
//   ScriptCache     EVAL's scripts by SHA-1 (scripting.h; each thread's Lua is lua_engine.h)
// Networking (net/network.h) and the cron thread (cron.h) run on top of a Server; tests run
// commands without either (Dispatcher::Execute with an in-process client).
//
// Threading: every part is thread-safe (see each header); Server itself only builds them and
// runs no thread of its own (the network and the cron thread own and join theirs).
#pragma once

#include "gigakv/clock.h"
#include "persistence/file_system.h"
#include "server/aof.h"
#include "server/blocking.h"
#include "server/client_registry.h"
#include "server/command.h"
#include "server/config.h"
#include "server/dispatcher.h"
#include "server/functions.h"
#include "server/keyspace.h"
#include "server/lifecycle.h"
#include "server/migration_links.h"
#include "server/notifications.h"
#include "server/pubsub.h"
#include "server/scripting.h"
#include "server/settings.h"
#include "server/slowlog.h"
#include "server/snapshots.h"
#include "server/stats.h"
#include "server/tracking.h"
#include "server/transaction.h"

namespace gigakv::server {

struct ServerOptions {
  const Clock* clock = nullptr;                    // nullptr = system clock.
  persistence::FileSystem* file_system = nullptr;  // The log's; nullptr = the real one.
};

class Server {
 public:
  explicit Server(Config& config, ServerOptions options = {});
  ~Server();

  Config& config() { return config_; }
  Settings& settings() { return settings_; }
  const Settings& settings() const { return settings_; }
  Keyspace& keyspace() { return keyspace_; }
  const CommandTable& commands() const { return commands_; }
  Dispatcher& dispatcher() { return dispatcher_; }
  ClientRegistry& clients() { return clients_; }
  const ClientRegistry& clients() const { return clients_; }
  Stats& stats() { return stats_; }
  SlowLog& slowlog() { return slowlog_; }
  TransactionGate& transaction_gate() { return transaction_gate_; }
  WatchRegistry& watches() { return watches_; }
  BlockingRegistry& blocking() { return blocking_; }
  Lifecycle& lifecycle() { return lifecycle_; }
  Snapshots& snapshots() { return snapshots_; }
  AppendOnlyLog& aof() { return aof_; }
  MigrationLinks& migration_links() { return migration_links_; }
  PubSub& pubsub() { return pubsub_; }
  KeyspaceNotifier& notifier() { return notifier_; }
  ClientTracking& tracking() { return tracking_; }
  ScriptCache& scripts() { return scripts_; }
  FunctionLibraries& functions() { return functions_; }
  // Hands the change stream's effects to `sink` (the log; tests record them); nullptr detaches
  // it. Set before serving.
  void set_effect_sink(EffectSink* sink) { keyspace_.set_effect_sink(sink); }
  // What handlers get (CommandContext::services).
  const CommandServices& services() const { return services_; }

  // Periodic work (hz times per second): active expiry, memory and eviction, stats. Returns
  // true when active expiry left due keys behind (its per-tick budget ran out): the caller
  // then runs ActiveExpire() again soon instead of waiting for the next tick.
  bool Cron();
  // Active expiry alone (Keyspace::ActiveExpire, yielding to a waiting EXEC), bounded work;
  // returns true while due keys remain. Nothing expires actively during a client pause.
  bool ActiveExpire();

 private:
  Config& config_;
  Settings settings_;  // Attached to config_ before keyspace_ is built.
  Keyspace keyspace_;
  Lifecycle lifecycle_{keyspace_.NowMs()};
  CommandTable commands_;
  Stats stats_{commands_.all().size()};
  TransactionGate transaction_gate_;
  // Before anything that holds clients: a client leaves its channels when destroyed.
  PubSub pubsub_;
  // After keyspace_ and pubsub_: it consumes the one and publishes to the other.
  KeyspaceNotifier notifier_{keyspace_.changes(), pubsub_};
  // After keyspace_, whose change stream they consume (they unregister on destruction).
  BlockingRegistry blocking_{keyspace_.changes()};
  WatchRegistry watches_{keyspace_.changes()};
  ClientRegistry clients_{keyspace_.store(), stats_, watches_};
  ClientTracking tracking_{keyspace_.changes(), pubsub_, clients_};
  SlowLog slowlog_;
  Dispatcher dispatcher_{*this};
  // After everything its background save uses: destroyed (and its thread joined) first.
  // FUNCTION's libraries: before the snapshots, which save and load them.
  FunctionLibraries functions_;
  Snapshots snapshots_{settings_, keyspace_, stats_, lifecycle_, transaction_gate_, functions_};
  // Destroyed before the snapshots and the dispatcher it replays through.
  AppendOnlyLog aof_;
  MigrationLinks migration_links_;
  ScriptCache scripts_;
  const CommandServices services_{config_,   settings_,  keyspace_,  commands_,         dispatcher_,
                                  clients_,  stats_,     slowlog_,   transaction_gate_, watches_,
                                  blocking_, lifecycle_, snapshots_, migration_links_,  aof_,
                                  pubsub_,   notifier_,  tracking_,  scripts_,          functions_};
};

}  // namespace gigakv::server
