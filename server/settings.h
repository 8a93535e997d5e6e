// Typed settings: the configuration as the server acts on it.
//
// Config (config.h) holds the directives as text: what the config file, the command line and
// CONFIG SET give, and what CONFIG GET and CONFIG REWRITE print. Settings holds what they mean,
// as typed fields. Settings::Load is the one place that reads directives by name; attached to a
// Config (Attach), it runs at once and after every change CONFIG SET applies (roll-backs
// included), so no subsystem keeps a mirror of its own and no handler looks a value up by name.
//
// Threading: fields that CONFIG SET can change are atomics (read with .get(), relaxed: a reader
// sees the old or the new value) or, for text, guarded by a mutex and returned by copy. Fields
// fixed at start-up (the directives Config marks immutable) are plain and set by the first Load
// only, before any reader runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "gigakv/access_stamp.h"
#include "gigakv/object.h"
#include "gigakv/store.h"

namespace gigakv::server {

class Config;

// enable-debug-command: who may run DEBUG.
enum class DebugCommandAccess : uint8_t { kNo, kLocal, kYes };

// appendfsync: when the log's bytes are fsynced.
enum class AppendFsync : uint8_t { kAlways, kEverysec, kNo };

class Settings {
 public:
  // A value CONFIG SET may change while other threads read it.
  template <typename T>
  class Live {
   public:
    T get() const { return value_.load(std::memory_order_relaxed); }
    void set(T value) { value_.store(value, std::memory_order_relaxed); }

   private:
    std::atomic<T> value_{};
  };

  // Text CONFIG SET may change: read by copy.
  class LiveText {
   public:
    std::string get() const {
      std::lock_guard<std::mutex> lock(mutex_);
      return value_;
    }
    void set(std::string value) {
      std::lock_guard<std::mutex> lock(mutex_);
      value_ = std::move(value);
    }

   private:
    mutable std::mutex mutex_;
    std::string value_;
  };

  Settings() = default;
  Settings(const Settings&) = delete;
  Settings& operator=(const Settings&) = delete;

  // Loads every field from `config` now, and again after each change CONFIG SET applies to it
  // (registers a Config applier; `config` must not outlive this object while CONFIG SET runs).
  void Attach(Config& config);
  // Reads every field from `config` (fixed ones only the first time). Loads are serialised: a
  // reload never interleaves with another and leaves a field older than the config it read.
  void Load(const Config& config);

  // --- Fixed at start-up ---------------------------------------------------------------------
  int shards = 0;
  int databases = 16;
  int io_threads = 1;
  int tcp_backlog = 511;
  bool daemonize = false;
  std::string supervised;  // "no", "upstart", "systemd", "auto".
  std::string pidfile;
  std::string logfile;

  // --- Network and clients -------------------------------------------------------------------
  Live<int64_t> port;  // CONFIG SET re-listens (net/listener.cc).
  LiveText bind;       // Space-separated addresses; CONFIG SET re-binds.
  Live<bool> protected_mode;
  Live<int64_t> maxclients;
  Live<int64_t> timeout_s;  // Idle client timeout, 0 = none.
  Live<int64_t> tcp_keepalive_s;
  Live<int64_t> proto_max_bulk_len;
  Live<int64_t> hll_sparse_max_bytes;
  Live<int64_t> stream_node_max_bytes;
  Live<int64_t> stream_node_max_entries;
  Live<int64_t> client_query_buffer_limit;
  // client-output-buffer-limit, per class of client (Redis's getClientType): bytes of output not
  // yet sent that close the client at once (hard) or when exceeded for longer than
  // soft_seconds (soft); 0 = none.
  struct OutputLimit {
    int64_t hard = 0;
    int64_t soft = 0;
    int64_t soft_seconds = 0;
  };
  class LiveOutputLimit {
   public:
    OutputLimit get() const { return {hard_.get(), soft_.get(), soft_seconds_.get()}; }
    void set(const OutputLimit& limit) {
      hard_.set(limit.hard);
      soft_.set(limit.soft);
      soft_seconds_.set(limit.soft_seconds);
      any_.set(limit.hard > 0 || limit.soft > 0);
    }
    // Some limit is set (one load: the normal class has none by default).
    bool any() const { return any_.get(); }

   private:
    Live<int64_t> hard_, soft_, soft_seconds_;
    Live<bool> any_;
  };
  LiveOutputLimit normal_output_limit;
  LiveOutputLimit pubsub_output_limit;

  // --- Security --------------------------------------------------------------------------------
  LiveText requirepass;
  // Immutable in Config, as in Redis; live so that a test can load another configuration.
  Live<DebugCommandAccess> enable_debug_command;
  // enable-protected-configs: who may CONFIG SET dir and dbfilename (same three values).
  Live<DebugCommandAccess> enable_protected_configs;
  Live<bool> password_set;  // requirepass is not empty (read per request, so no copy).

  // --- Memory and eviction -------------------------------------------------------------------
  Live<int64_t> maxmemory;                // 0 = no limit.
  Live<int64_t> tracking_table_max_keys;  // Client-side caching (server/tracking.h); 0: none.
  LiveText maxmemory_policy_name;
  Live<Store::EvictionPolicy> maxmemory_policy;
  Live<int> maxmemory_samples;
  Live<bool> lfu;  // The policy is an LFU one: access stamps count frequency, not recency.
  Live<int> lfu_log_factor;
  Live<int> lfu_decay_minutes;
  Live<bool> lazyfree_lazy_user_del;
  Live<bool> lazyfree_lazy_user_flush;
  AccessMode access_mode() const { return lfu.get() ? AccessMode::kLfu : AccessMode::kLru; }

  // --- Encodings -----------------------------------------------------------------------------
  // A snapshot of the collection encoding thresholds (cheap).
  CollectionLimits collection_limits() const;

  // --- Snapshots -----------------------------------------------------------------------------
  Live<bool> rdbcompression;  // LZF for RDB strings over 20 bytes (files and DUMP payloads).
  Live<bool> rdbchecksum;     // Fixed at start-up in Config; live for tests' reloads.
  Live<bool> stop_writes_on_bgsave_error;
  Live<bool> rdb_save_incremental_fsync;
  LiveText dbfilename;
  Live<int64_t> rdb_key_save_delay_us;  // Hidden test knobs, as Redis's.
  Live<int64_t> key_load_delay_us;
  // `save`: a background save when at least `changes` writes happened and more than `seconds`
  // passed since the last successful save.
  struct SavePoint {
    int64_t seconds = 0;
    int64_t changes = 0;
  };
  std::vector<SavePoint> save_points() const;
  bool has_save_points() const { return has_save_points_.get(); }
  // shutdown-on-sigterm / shutdown-on-sigint: "default", "save", "nosave", "now", "force"
  // (space-separated flags).
  LiveText shutdown_on_sigterm;
  LiveText shutdown_on_sigint;

  // --- Append-only log -----------------------------------------------------------------------
  Live<bool> appendonly;
  Live<AppendFsync> appendfsync;
  std::string appendfilename;  // Fixed at start-up, as in Redis.
  std::string appenddirname;
  Live<bool> aof_load_truncated;
  Live<bool> aof_timestamp_enabled;
  Live<bool> no_appendfsync_on_rewrite;
  Live<bool> aof_rewrite_incremental_fsync;
  Live<int64_t> auto_aof_rewrite_percentage;
  Live<int64_t> auto_aof_rewrite_min_size;

  // --- Slow log, latency, cron ---------------------------------------------------------------
  Live<int64_t> slowlog_log_slower_than;  // Microseconds; negative = off.
  Live<int64_t> busy_reply_threshold;     // Milliseconds a script runs before BUSY.
  Live<int64_t> slowlog_max_len;
  Live<bool> latency_tracking;
  LiveText latency_tracking_info_percentiles;
  Live<int64_t> hz;
  LiveText loglevel;
  Live<int64_t> repl_backlog_size;  // Reported by INFO; no replication yet.

 private:
  struct LiveLimits {
    Live<int64_t> hash_max_listpack_entries, hash_max_listpack_value;
    Live<int64_t> set_max_intset_entries, set_max_listpack_entries, set_max_listpack_value;
    Live<int64_t> zset_max_listpack_entries, zset_max_listpack_value;
    Live<int64_t> list_max_listpack_size;
  };
  LiveLimits limits_;
  mutable std::mutex save_points_mutex_;
  std::vector<SavePoint> save_points_;  // Guarded by save_points_mutex_.
  Live<bool> has_save_points_;
  std::mutex load_mutex_;
  bool loaded_ = false;  // Guarded by load_mutex_.
};

}  // namespace gigakv::server
