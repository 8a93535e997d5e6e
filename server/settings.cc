#include "server/settings.h"

#include <string_view>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gigakv/numbers.h"
#include "gigakv/strings.h"
#include "server/config.h"

namespace gigakv::server {
namespace {

Store::EvictionPolicy PolicyNamed(std::string_view name) {
  static const std::pair<std::string_view, Store::EvictionPolicy> kPolicies[] = {
      {"noeviction", Store::EvictionPolicy::kNoEviction},
      {"allkeys-lru", Store::EvictionPolicy::kAllKeysLru},
      {"allkeys-lfu", Store::EvictionPolicy::kAllKeysLfu},
      {"allkeys-random", Store::EvictionPolicy::kAllKeysRandom},
      {"volatile-lru", Store::EvictionPolicy::kVolatileLru},
      {"volatile-lfu", Store::EvictionPolicy::kVolatileLfu},
      {"volatile-random", Store::EvictionPolicy::kVolatileRandom},
      {"volatile-ttl", Store::EvictionPolicy::kVolatileTtl},
  };
  for (const auto& [policy_name, policy] : kPolicies) {
    if (policy_name == name) return policy;
  }
  return Store::EvictionPolicy::kNoEviction;  // Config accepts only the names above.
}

DebugCommandAccess DebugAccessNamed(std::string_view name) {
  if (name == "yes") return DebugCommandAccess::kYes;
  if (name == "local") return DebugCommandAccess::kLocal;
  return DebugCommandAccess::kNo;
}

// "normal <hard> <soft> <seconds> replica ... pubsub ..." (Config keeps every class, in this
// form): the limits of `klass`.
Settings::OutputLimit OutputLimitOf(const std::string& text, std::string_view klass) {
  std::vector<std::string> words = SplitNonEmpty(text, ' ');
  Settings::OutputLimit limit;
  for (size_t i = 0; i + 3 < words.size(); i += 4) {
    if (words[i] != klass) continue;
    if (!ParseMemory(words[i + 1], &limit.hard)) limit.hard = 0;
    if (!ParseMemory(words[i + 2], &limit.soft)) limit.soft = 0;
    if (!ParseInt64(words[i + 3], &limit.soft_seconds)) limit.soft_seconds = 0;
  }
  return limit;
}

}  // namespace

void Settings::Attach(Config& config) {
  Load(config);
  config.AddApplier([this, &config](std::string_view) {
    Load(config);
    return absl::OkStatus();
  });
}

void Settings::Load(const Config& config) {
  std::lock_guard<std::mutex> lock(load_mutex_);
  auto integer = [&](std::string_view name) { return config.GetInt(name); };
  auto small = [&](std::string_view name) { return static_cast<int>(config.GetInt(name)); };
  auto flag = [&](std::string_view name) { return config.GetBool(name); };
  auto text = [&](std::string_view name) { return config.Get(name); };

  if (!loaded_) {
    loaded_ = true;
    shards = small("shards");
    databases = small("databases");
    io_threads = small("io-threads");
    tcp_backlog = small("tcp-backlog");
    daemonize = flag("daemonize");
    supervised = text("supervised");
    pidfile = text("pidfile");
    logfile = text("logfile");
    appendfilename = text("appendfilename");
    appenddirname = text("appenddirname");
  }

  port.set(integer("port"));
  bind.set(text("bind"));
  protected_mode.set(flag("protected-mode"));
  maxclients.set(integer("maxclients"));
  timeout_s.set(integer("timeout"));
  tcp_keepalive_s.set(integer("tcp-keepalive"));
  proto_max_bulk_len.set(integer("proto-max-bulk-len"));
  hll_sparse_max_bytes.set(integer("hll-sparse-max-bytes"));
  stream_node_max_bytes.set(integer("stream-node-max-bytes"));
  stream_node_max_entries.set(integer("stream-node-max-entries"));
  client_query_buffer_limit.set(integer("client-query-buffer-limit"));
  normal_output_limit.set(OutputLimitOf(text("client-output-buffer-limit"), "normal"));
  pubsub_output_limit.set(OutputLimitOf(text("client-output-buffer-limit"), "pubsub"));

  std::string password = text("requirepass");
  password_set.set(!password.empty());
  enable_debug_command.set(DebugAccessNamed(text("enable-debug-command")));
  enable_protected_configs.set(DebugAccessNamed(text("enable-protected-configs")));
  requirepass.set(std::move(password));

  maxmemory.set(integer("maxmemory"));
  tracking_table_max_keys.set(integer("tracking-table-max-keys"));
  std::string policy = text("maxmemory-policy");
  maxmemory_policy.set(PolicyNamed(policy));
  lfu.set(policy.find("lfu") != std::string::npos);
  maxmemory_policy_name.set(std::move(policy));
  maxmemory_samples.set(small("maxmemory-samples"));
  lfu_log_factor.set(small("lfu-log-factor"));
  lfu_decay_minutes.set(small("lfu-decay-time"));
  lazyfree_lazy_user_del.set(flag("lazyfree-lazy-user-del"));
  rdbcompression.set(flag("rdbcompression"));
  rdbchecksum.set(flag("rdbchecksum"));
  stop_writes_on_bgsave_error.set(flag("stop-writes-on-bgsave-error"));
  rdb_save_incremental_fsync.set(flag("rdb-save-incremental-fsync"));
  dbfilename.set(text("dbfilename"));
  rdb_key_save_delay_us.set(integer("rdb-key-save-delay"));
  key_load_delay_us.set(integer("key-load-delay"));
  shutdown_on_sigterm.set(text("shutdown-on-sigterm"));
  shutdown_on_sigint.set(text("shutdown-on-sigint"));
  appendonly.set(flag("appendonly"));
  {
    const std::string fsync = text("appendfsync");
    appendfsync.set(fsync == "always" ? AppendFsync::kAlways
                    : fsync == "no"   ? AppendFsync::kNo
                                      : AppendFsync::kEverysec);
  }
  aof_load_truncated.set(flag("aof-load-truncated"));
  aof_timestamp_enabled.set(flag("aof-timestamp-enabled"));
  no_appendfsync_on_rewrite.set(flag("no-appendfsync-on-rewrite"));
  aof_rewrite_incremental_fsync.set(flag("aof-rewrite-incremental-fsync"));
  auto_aof_rewrite_percentage.set(integer("auto-aof-rewrite-percentage"));
  auto_aof_rewrite_min_size.set(integer("auto-aof-rewrite-min-size"));
  {
    // Config keeps the points normalized: "<seconds> <changes>" pairs.
    std::vector<SavePoint> points;
    std::vector<std::string> words = absl::StrSplit(text("save"), ' ', absl::SkipEmpty());
    for (size_t i = 0; i + 1 < words.size(); i += 2) {
      SavePoint point;
      if (absl::SimpleAtoi(words[i], &point.seconds) &&
          absl::SimpleAtoi(words[i + 1], &point.changes)) {
        points.push_back(point);
      }
    }
    has_save_points_.set(!points.empty());
    std::lock_guard<std::mutex> lock(save_points_mutex_);
    save_points_ = std::move(points);
  }
  lazyfree_lazy_user_flush.set(flag("lazyfree-lazy-user-flush"));

  limits_.hash_max_listpack_entries.set(integer("hash-max-listpack-entries"));
  limits_.hash_max_listpack_value.set(integer("hash-max-listpack-value"));
  limits_.set_max_intset_entries.set(integer("set-max-intset-entries"));
  limits_.set_max_listpack_entries.set(integer("set-max-listpack-entries"));
  limits_.set_max_listpack_value.set(integer("set-max-listpack-value"));
  limits_.zset_max_listpack_entries.set(integer("zset-max-listpack-entries"));
  limits_.zset_max_listpack_value.set(integer("zset-max-listpack-value"));
  limits_.list_max_listpack_size.set(integer("list-max-listpack-size"));

  slowlog_log_slower_than.set(integer("slowlog-log-slower-than"));
  busy_reply_threshold.set(integer("busy-reply-threshold"));
  slowlog_max_len.set(integer("slowlog-max-len"));
  latency_tracking.set(flag("latency-tracking"));
  latency_tracking_info_percentiles.set(text("latency-tracking-info-percentiles"));
  hz.set(integer("hz"));
  loglevel.set(text("loglevel"));
  repl_backlog_size.set(integer("repl-backlog-size"));
}

std::vector<Settings::SavePoint> Settings::save_points() const {
  std::lock_guard<std::mutex> lock(save_points_mutex_);
  return save_points_;
}

CollectionLimits Settings::collection_limits() const {
  CollectionLimits snapshot;
  snapshot.hash_max_listpack_entries = limits_.hash_max_listpack_entries.get();
  snapshot.hash_max_listpack_value = limits_.hash_max_listpack_value.get();
  snapshot.set_max_intset_entries = limits_.set_max_intset_entries.get();
  snapshot.set_max_listpack_entries = limits_.set_max_listpack_entries.get();
  snapshot.set_max_listpack_value = limits_.set_max_listpack_value.get();
  snapshot.zset_max_listpack_entries = limits_.zset_max_listpack_entries.get();
  snapshot.zset_max_listpack_value = limits_.zset_max_listpack_value.get();
  snapshot.list_max_listpack_size = limits_.list_max_listpack_size.get();
  return snapshot;
}

}  // namespace gigakv::server
