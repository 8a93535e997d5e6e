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
  Store& store() { return *store_; }
  const CommandTable& commands() const { return commands_; }
  BlockingRegistry& blocking() { return blocking_; }
  // MULTI/EXEC: the gate that makes EXEC atomic and the WATCH registry (transaction.h).
  TransactionGate& transaction_gate() { return transaction_gate_; }
  WatchRegistry& watches() { return watches_; }
  // Counters: INFO stats, commandstats, errorstats, latencystats, rates (stats.h).
  Stats& stats() { return stats_; }
  int64_t start_time_ms() const { return start_time_ms_; }
  int64_t NowMs() const { return store_->NowMs(); }
  // A clock for access stamps (LRU/LFU) and idle times, which need no better than a tick:
  // refreshed at every batch of requests and by Cron, so the hot path makes no clock call.
  int64_t CoarseNowMs() const { return coarse_now_ms_.load(std::memory_order_relaxed); }
  void RefreshCoarseClock() { coarse_now_ms_.store(NowMs(), std::memory_order_relaxed); }
  int64_t lastsave_s() const { return lastsave_s_.load(); }

  // Marks a batch of pipelined commands on the calling thread: within it each command is timed
  // from the end of the previous one (one clock read per command instead of two; the parsing in
  // between is counted with the command). Batches must not nest.
  class TimedBatch {
   public:
    TimedBatch();
    ~TimedBatch();
    TimedBatch(const TimedBatch&) = delete;
    TimedBatch& operator=(const TimedBatch&) = delete;
    // The next command is timed from now (after a wait that is nobody's execution time, and
    // after commands rejected or queued without running).
    static void Restart();
  };

  // Runs one command for `client`, writing its reply (if any) to `reply`. Checks arity, auth,
  // OOM and subcommands; counts stats. Never throws.
  void Execute(ClientState& client, const std::vector<std::string_view>& args,
               protocol::ReplyBuilder& reply);

  // CONFIG RESETSTAT: the counters of every part.
  void ResetStats();

  // The connected clients: registry, CLIENT PAUSE, MONITOR (client_registry.h).
  ClientRegistry& clients() { return *clients_; }
  const ClientRegistry& clients() const { return *clients_; }
  // Leaves MULTI (dropping the queued commands) and forgets the client's WATCHes.
  void DiscardTransaction(ClientState& client);

  // Shutdown: set by SHUTDOWN or signals; the network layer watches it.
  void RequestShutdown() {
    shutdown_requested_.store(true);
    if (on_shutdown_) on_shutdown_();
  }
  bool shutdown_requested() const { return shutdown_requested_.load(); }
  void set_on_shutdown(std::function<void()> fn) { on_shutdown_ = std::move(fn); }

  // The keyspace's change stream (gigakv/change_stream.h): every write publishes its record
  // there while holding its shard lock. WATCH consumes it; the log and replicas will.
  ChangeStream& changes() { return changes_; }
  // Hands the stream's effects to `sink` (the log; tests record them); nullptr detaches it.
  // Set before serving.
  void set_effect_sink(EffectSink* sink);

  // Frees detached tables on the background thread (FLUSHALL/FLUSHDB ASYNC), so the client's
  // I/O thread is not held up by freeing millions of keys.
  void FreeLater(Store::DetachedTables tables);
  // Frees a large value on the lazy-free thread: the store's reclaimer, for every large value
  // removed or replaced (DEL, UNLINK, SET over it, expiry, eviction). It counts as Redis's lazy
  // free (INFO lazyfreed_objects) only inside a UserLazyFreeScope; otherwise gigakv freed it in
  // the background on its own accord, where Redis would free it in place, and it counts in
  // background_freed_objects instead.
  void FreeLater(std::unique_ptr<Object> object);
  // While one lives on this thread, the values it frees later count as lazy frees the user
  // asked for: UNLINK, and DEL with lazyfree-lazy-user-del yes.
  class UserLazyFreeScope {
   public:
    UserLazyFreeScope();
    ~UserLazyFreeScope();
    UserLazyFreeScope(const UserLazyFreeScope&) = delete;
    UserLazyFreeScope& operator=(const UserLazyFreeScope&) = delete;

   private:
    bool previous_;
  };
  // Values freed on the lazy-free thread that are not Redis lazy frees (see FreeLater).
  uint64_t background_freed_objects() const { return background_freed_objects_.load(); }
  // Objects waiting to be freed as lazy frees (INFO lazyfree_pending_objects).
  size_t lazyfree_pending() const { return lazyfree_pending_.load(std::memory_order_relaxed); }

  // Active expiry: milliseconds spent in its cycles, and how many cycles stopped at their work
  // limit with due keys left (INFO expire_cycle_cpu_milliseconds, expired_time_cap_reached_count).
  uint64_t expire_cycle_ms() const { return expire_cycle_us_.load() / 1000; }
  uint64_t expire_cycle_cap_reached() const { return expire_cycle_cap_reached_.load(); }
  // Objects (keys, collections) freed by the background thread so far (INFO lazyfreed_objects).
  uint64_t lazyfreed_objects() const { return lazyfreed_objects_.load(); }

  // Periodic work (hz times per second): active expiry, memory and eviction, stats. Returns
  // true when active expiry left due keys behind (its per-tick budget ran out): the caller
  // then runs ActiveExpire() again soon instead of waiting for the next tick.
  bool Cron();
  // Active expiry alone, bounded work; returns true while due keys remain.
  bool ActiveExpire();
  // INFO expired_stale_perc / 100 (see Cron).
  double expired_stale_ratio() const { return expired_stale_ratio_.load(); }
  // DEBUG SET-ACTIVE-EXPIRE.
  void set_active_expire_enabled(bool enabled) { active_expire_enabled_.store(enabled); }

  // The configuration as typed fields, kept current through CONFIG SET (settings.h).
  Settings& settings() { return settings_; }
  const Settings& settings() const { return settings_; }
  // Whether enable-debug-command lets `client` run a protected command (DEBUG): "yes", or
  // "local" for a client on the loopback address.
  bool ProtectedCommandAllowed(const ClientState& client) const;
  SlowLog& slowlog() { return slowlog_; }
  // Evicts keys by maxmemory-policy while used_memory is over maxmemory (an estimate between
  // cron refreshes), at most a bounded batch per call. Returns false when over the limit and
  // nothing could be evicted (noeviction, or no candidates): write commands then get OOM.
  bool EvictToLimit();
  // Whether small integers are shared objects (OBJECT REFCOUNT 2147483647), as in Redis: not
  // under a maxmemory limit with an LRU or LFU policy, where each key needs its own stamp.
  bool SharesSmallIntegers() const {
    using Policy = Store::EvictionPolicy;
    Policy policy = settings_.maxmemory_policy.get();
    bool lru_or_lfu = policy == Policy::kAllKeysLru || policy == Policy::kAllKeysLfu ||
                      policy == Policy::kVolatileLru || policy == Policy::kVolatileLfu;
    return !(settings_.maxmemory.get() > 0 && lru_or_lfu);
  }
  bool OverMaxmemory() const {
    int64_t limit = settings_.maxmemory.get();
    return limit > 0 && used_memory_.load(std::memory_order_relaxed) > limit;
  }
  // used_memory (bytes allocated by the process) as last measured by Cron, or now if `refresh`.
  int64_t UsedMemory(bool refresh = false);
  int64_t peak_used_memory() const { return peak_used_memory_.load(); }
  int64_t startup_used_memory() const { return startup_used_memory_; }

  // Network facts for INFO (set by the network layer).
  std::atomic<int> tcp_port{0};
  std::string executable;
  // How the process reports readiness to its supervisor (INFO process_supervised): "no",
  // "systemd" or "upstart". Set once at start-up.
  std::string supervised = "no";

 private:
  Config& config_;
  Settings settings_;  // Attached to config_ in the constructor.
  std::unique_ptr<Store> store_;
  CommandTable commands_;
  Stats stats_{commands_.all().size()};
  TransactionGate transaction_gate_;
  ChangeStream changes_;  // Before its consumers, which unregister on destruction.
  BlockingRegistry blocking_{changes_};
  WatchRegistry watches_{changes_};
  std::unique_ptr<ClientRegistry> clients_;  // Made with the store it reads the clock of.
  std::atomic<bool> shutdown_requested_{false};
  std::function<void()> on_shutdown_;
  std::atomic<bool> active_expire_enabled_{true};
  std::atomic<double> expired_stale_ratio_{0};
  std::unique_ptr<EffectSinkConsumer> effect_sink_consumer_;
  std::atomic<uint64_t> expire_cycle_us_{0};
  std::atomic<uint64_t> expire_cycle_cap_reached_{0};
  std::atomic<uint64_t> lazyfreed_objects_{0};
  std::atomic<uint64_t> background_freed_objects_{0};
  // Background freeing: a queue drained by one thread, joined on destruction.
  std::mutex lazyfree_mutex_;
  std::condition_variable lazyfree_cv_;
  struct LazyFreeJob {
    Store::DetachedTables tables;
    std::unique_ptr<Object> object;
    size_t count = 0;       // Units counted in lazyfree_pending_, or in background_freed_objects_.
    bool lazy_free = true;  // A Redis lazy free: counted in lazyfree_pending/lazyfreed_objects.
  };
  void QueueLazyFree(LazyFreeJob job);
  std::vector<LazyFreeJob> lazyfree_queue_;
  std::atomic<size_t> lazyfree_pending_{0};
  bool lazyfree_stop_ = false;
  std::thread lazyfree_thread_;
  std::atomic<int64_t> coarse_now_ms_{0};
  SlowLog slowlog_;
  std::atomic<int64_t> used_memory_{0};
  std::atomic<int64_t> peak_used_memory_{0};
  int64_t startup_used_memory_ = 0;
  int64_t start_time_ms_;
  std::atomic<int64_t> lastsave_s_;
};

}  // namespace gigakv::server
