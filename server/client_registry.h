// The connected clients, as one subsystem: the registry (CLIENT LIST / KILL / INFO clients),
// CLIENT PAUSE and MONITOR. Owned by the Server (Server::clients()); the network layer registers
// each connection's ClientState, command handlers and the cron read and change the rest.
//
// Threading: every method may be called from any thread (I/O threads running commands, the
// cron, the accepting thread). The registry and the monitor list each have a mutex, held only
// for the map or list operation itself (FeedMonitors posts under the monitor mutex; posting
// never blocks). The pause's type and end are atomics that commands read without a lock; the
// mutex only orders changes to them.
//
// Complexity: Register/Unregister/FindClient are O(1) hash-map operations; Clients() copies and
// sorts the map (O(n log n), for CLIENT LIST, KILL, INFO and waking paused clients);
// PostponesCommand costs one relaxed load while no pause is set; FeedMonitors costs one relaxed
// load per command while nobody monitors, and O(monitors) plus formatting the line otherwise.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gigakv/store.h"
#include "protocol/reply_builder.h"
#include "server/client_state.h"
#include "server/command.h"
#include "server/stats.h"
#include "server/transaction.h"

namespace gigakv::server {

class ClientRegistry {
 public:
  // `store` gives the clock (pause ends), and its lazy expiry is paused with the clients
  // (Store::SetExpiryPaused; Server::ActiveExpire pauses active expiry itself);
  // `stats` gets connected_clients; a client's WATCHes in `watches` are forgotten when it
  // unregisters. All three must outlive the registry.
  ClientRegistry(Store& store, Stats& stats, WatchRegistry& watches);
  ClientRegistry(const ClientRegistry&) = delete;
  ClientRegistry& operator=(const ClientRegistry&) = delete;

  // Registry. Ids start at 1 and are never reused.
  uint64_t NextClientId() { return next_client_id_.fetch_add(1); }
  // Adds a client (its outbox, if any, set before): CLIENT LIST shows it and other threads can
  // find it. Updates connected_clients.
  void Register(const std::shared_ptr<ClientState>& client);
  // Removes the client and forgets its WATCHes. Idempotent (a connection calls it when it
  // closes and again when it is destroyed).
  void Unregister(uint64_t id);
  // Every registered client, in id order (a snapshot: clients may come and go meanwhile).
  std::vector<std::shared_ptr<ClientState>> Clients();
  // The registered client with `id`, or nullptr.
  std::shared_ptr<ClientState> FindClient(uint64_t id);

  // CLIENT PAUSE: until `end_ms`, commands of every client (kAll) or only those that write
  // (kWrite: write commands, EXEC of a transaction with one) wait unrun, as do active expiry and
  // eviction. As in Redis 7.0 a pause only escalates (WRITE to ALL) and extends while it lasts.
  enum class PauseType : int { kNone = 0, kWrite = 1, kAll = 2 };
  void PauseClients(int64_t end_ms, PauseType type);
  // CLIENT UNPAUSE, and a change of the pause: waiting clients try their request again.
  void UnpauseClients();
  // Asks every client waiting for the pause to try its request again (posts kResume).
  void UnpauseWaiters();
  // Cron: a pause whose end passed is cleared (until then commands check the clock).
  void ForgetEndedPause();
  bool Paused() const {
    return pause_type_.load(std::memory_order_relaxed) != 0 &&
           store_.NowMs() < pause_end_ms_.load(std::memory_order_relaxed);
  }
  int64_t pause_end_ms() const { return pause_end_ms_.load(); }
  // Whether `client` must wait with `spec` now (never for in-process clients, which have no
  // outbox to be resumed through). One relaxed load while no pause is set.
  bool PostponesCommand(const CommandSpec& spec, const ClientState& client) const {
    if (pause_type_.load(std::memory_order_relaxed) == 0) return false;
    return PostponesUnderPause(spec, client);
  }
  // Clients waiting for a pause to end (INFO blocked_clients counts them, as Redis does).
  // Their connections count themselves in and out.
  std::atomic<int64_t>& paused_clients() { return paused_clients_; }

  // MONITOR: clients that receive a line for every command run (but admin commands), as Redis
  // formats it. Adding sets the client's `monitor` flag; a client added twice is listed once.
  void AddMonitor(const std::shared_ptr<ClientState>& client);
  // Clears the flag and drops the client from the list; a no-op for a client not in it.
  void RemoveMonitor(uint64_t client_id);
  bool HasMonitors() const { return monitor_count_.load(std::memory_order_relaxed) > 0; }
  // `client` ran `args` (in its current database): "+<unix time.µs> [<db> <addr>] "arg" ...".
  // A monitor's line for its own command goes into `own_reply` (its batch's replies, right
  // behind the command's reply) when given; every other monitor's is posted to its outbox
  // (kPushOutput).
  void FeedMonitors(const ClientState& client, const std::vector<std::string_view>& args,
                    protocol::ReplyBuilder* own_reply);

 private:
  // PostponesCommand while a pause is set.
  bool PostponesUnderPause(const CommandSpec& spec, const ClientState& client) const;
  // No pause, and keys expire again. Under pause_mutex_.
  void ClearPauseLocked();

  Store& store_;
  Stats& stats_;
  WatchRegistry& watches_;
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
};

}  // namespace gigakv::server
