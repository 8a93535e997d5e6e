// INFO [section ...]: Redis's sections and field names, filled from gigakv's real state.
#include <malloc.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gigakv/numbers.h"
#include "gigakv/strings.h"
#include "server/aof.h"
#include "server/blocking.h"
#include "server/client_registry.h"
#include "server/commands/args.h"
#include "server/config.h"
#include "server/functions.h"
#include "server/keyspace.h"
#include "server/latency_histogram.h"
#include "server/lifecycle.h"
#include "server/lua_engine.h"
#include "server/migration_links.h"
#include "server/pubsub.h"
#include "server/scripting.h"
#include "server/settings.h"
#include "server/snapshots.h"
#include "server/stats.h"
#include "server/tracking.h"

namespace gigakv::server {
namespace {

int64_t ReadRssBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages_total = 0, pages_rss = 0;
  statm >> pages_total >> pages_rss;
  return pages_rss * sysconf(_SC_PAGESIZE);
}

std::string HumanBytes(int64_t bytes) {
  double value = static_cast<double>(bytes);
  if (bytes < 1024) return StrCat(bytes, "B");
  if (bytes < 1024 * 1024) return absl::StrFormat("%.2fK", value / 1024);
  if (bytes < 1024LL * 1024 * 1024) return absl::StrFormat("%.2fM", value / (1024 * 1024));
  return absl::StrFormat("%.2fG", value / (1024.0 * 1024 * 1024));
}

void Field(std::string* out, std::string_view name, const auto& value) {
  StrAppend(out, name, ":", value, "\r\n");
}

void ServerSection(const CommandServices& server, std::string* out) {
  struct utsname name;
  uname(&name);
  int64_t uptime_s = (server.keyspace().NowMs() - server.lifecycle().start_time_ms()) / 1000;
  Field(out, "redis_version", kRedisCompatVersion);
  Field(out, "gigakv_version", GIGAKV_VERSION);
  Field(out, "redis_git_sha1", "00000000");
  Field(out, "redis_git_dirty", 0);
  Field(out, "redis_build_id", "0");
  Field(out, "redis_mode", "standalone");
  Field(out, "os", StrCat(name.sysname, " ", name.release, " ", name.machine));
  Field(out, "arch_bits", sizeof(void*) * 8);
  Field(out, "monotonic_clock", "POSIX clock_gettime");
  Field(out, "multiplexing_api", "epoll");
  Field(out, "atomicvar_api", "c11-builtin");
  Field(out, "gcc_version", StrCat(__GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__));
  Field(out, "process_id", getpid());
  Field(out, "process_supervised", server.lifecycle().supervised);
  Field(out, "run_id", "0000000000000000000000000000000000000000");
  Field(out, "tcp_port", server.lifecycle().tcp_port.load());
  Field(out, "server_time_usec", server.keyspace().NowMs() * 1000);
  Field(out, "uptime_in_seconds", uptime_s);
  Field(out, "uptime_in_days", uptime_s / 86400);
  Field(out, "hz", server.settings().hz.get());
  Field(out, "configured_hz", server.settings().hz.get());
  Field(out, "lru_clock", (server.keyspace().NowMs() / 1000) & ((1 << 24) - 1));
  Field(out, "executable", server.lifecycle().executable);
  Field(out, "config_file", server.config().config_file());
  Field(out, "io_threads_active", server.settings().io_threads > 1 ? 1 : 0);
  Field(out, "io_threads", server.settings().io_threads);
  Field(out, "shards", server.keyspace().store().shard_count());
}

void ClientsSection(const CommandServices& server, std::string* out) {
  Field(out, "connected_clients", server.stats().connected_clients.load());
  Field(out, "cluster_connections", 0);
  Field(out, "maxclients", server.settings().maxclients.get());
  Field(out, "client_recent_max_input_buffer", 0);
  Field(out, "client_recent_max_output_buffer", 0);
  // As in Redis, clients whose request waits for CLIENT PAUSE to end are blocked too.
  Field(out, "blocked_clients",
        static_cast<int64_t>(server.blocking().blocked_clients()) +
            server.clients().paused_clients().load(std::memory_order_relaxed));
  Field(out, "tracking_clients", server.tracking().clients());
  Field(out, "clients_in_timeout_table", 0);
}

std::string Ratio(int64_t numerator, int64_t denominator) {
  return absl::StrFormat("%.2f",
                         denominator > 0 ? static_cast<double>(numerator) / denominator : 0.0);
}

std::string Percent(int64_t numerator, int64_t denominator) {
  return absl::StrFormat("%.2f%%", denominator > 0 ? 100.0 * numerator / denominator : 0.0);
}

// Field names and order are Redis 7.0's. Its allocator_* fields describe jemalloc; here they
// describe glibc malloc: allocated = bytes in use, active = the heap's extent plus mmapped
// blocks, resident = RSS. Replication buffers and the AOF have no memory here (gigakv has
// neither).
void MemorySection(const CommandServices& server, std::string* out) {
  int64_t used = server.keyspace().UsedMemory(/*refresh=*/true);
  int64_t rss = ReadRssBytes();
  int64_t maxmemory = server.settings().maxmemory.get();
  int64_t peak = server.keyspace().peak_used_memory();
  int64_t startup = server.keyspace().startup_used_memory();
  int64_t dataset =
      std::min<int64_t>(static_cast<int64_t>(server.keyspace().store().UsedMemory()), used);
  struct mallinfo2 heap = ::mallinfo2();
  auto allocated = static_cast<int64_t>(heap.uordblks + heap.hblkhd);
  auto active = static_cast<int64_t>(heap.arena + heap.hblkhd);
  int64_t clients_memory = 0;
  for (const auto& client : server.clients().Clients()) {
    clients_memory += static_cast<int64_t>(client->query_buffer_bytes.load() +
                                           client->output_buffer_bytes.load());
  }
  int64_t system_memory = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  Store::ArenaStats arena = server.keyspace().store().GetArenaStats();
  Field(out, "used_memory", used);
  Field(out, "used_memory_human", HumanBytes(used));
  Field(out, "used_memory_rss", rss);
  Field(out, "used_memory_rss_human", HumanBytes(rss));
  Field(out, "used_memory_peak", peak);
  Field(out, "used_memory_peak_human", HumanBytes(peak));
  Field(out, "used_memory_peak_perc", Percent(used, peak));
  Field(out, "used_memory_overhead", used - dataset);
  Field(out, "used_memory_startup", startup);
  Field(out, "used_memory_dataset", dataset);
  Field(out, "used_memory_dataset_perc", Percent(dataset, used - startup));
  Field(out, "allocator_allocated", allocated);
  Field(out, "allocator_active", active);
  Field(out, "allocator_resident", rss);
  Field(out, "total_system_memory", system_memory);
  Field(out, "total_system_memory_human", HumanBytes(system_memory));
  // Scripting: every I/O thread's Lua state for EVAL (lua_engine.h) and the script cache's
  // bodies with their SHA-1 keys; the functions' Lua state and libraries (functions.h).
  const int64_t lua = LuaMemoryBytes();
  const FunctionLibraries& functions = server.functions();
  const int64_t functions_vm = functions.vm_memory_bytes();
  const auto scripts =
      static_cast<int64_t>(server.scripts().body_bytes() + server.scripts().size() * (40 + 48));
  Field(out, "used_memory_lua", lua);
  Field(out, "used_memory_vm_eval", lua);
  Field(out, "used_memory_lua_human", HumanBytes(lua));
  Field(out, "used_memory_scripts_eval", scripts);
  Field(out, "number_of_cached_scripts", static_cast<int64_t>(server.scripts().size()));
  Field(out, "number_of_functions", static_cast<int64_t>(functions.function_count()));
  Field(out, "number_of_libraries", static_cast<int64_t>(functions.library_count()));
  Field(out, "used_memory_vm_functions", functions_vm);
  Field(out, "used_memory_vm_total", lua + functions_vm);
  Field(out, "used_memory_vm_total_human", HumanBytes(lua + functions_vm));
  Field(out, "used_memory_functions", functions.overhead_bytes());
  Field(out, "used_memory_scripts", scripts + functions.overhead_bytes());
  Field(out, "used_memory_scripts_human", HumanBytes(scripts + functions.overhead_bytes()));
  Field(out, "maxmemory", maxmemory);
  Field(out, "maxmemory_human", HumanBytes(maxmemory));
  Field(out, "maxmemory_policy", server.settings().maxmemory_policy_name.get());
  Field(out, "allocator_frag_ratio", Ratio(active, allocated));
  Field(out, "allocator_frag_bytes", active - allocated);
  Field(out, "allocator_rss_ratio", Ratio(rss, active));
  Field(out, "allocator_rss_bytes", rss - active);
  Field(out, "rss_overhead_ratio", Ratio(rss, rss));
  Field(out, "rss_overhead_bytes", 0);
  Field(out, "mem_fragmentation_ratio", Ratio(rss, used));
  Field(out, "mem_fragmentation_bytes", rss - used);
  Field(out, "mem_not_counted_for_evict", server.keyspace().not_counted_memory());
  for (std::string_view name :
       {"mem_replication_backlog", "mem_total_replication_buffers", "mem_clients_slaves"}) {
    Field(out, name, 0);
  }
  Field(out, "mem_clients_normal", clients_memory);
  Field(out, "mem_cluster_links", 0);
  Field(out, "mem_aof_buffer", server.aof().info().buffer_memory);
  Field(out, "mem_allocator", Keyspace::AllocatorReportsUsage() ? "libc" : "other");
  Field(out, "active_defrag_running", 0);
  Field(out, "lazyfree_pending_objects", server.keyspace().lazyfree_pending());
  Field(out, "lazyfreed_objects", server.keyspace().lazyfreed_objects());
  // gigakv's own: large values freed off-thread where Redis would free them in place.
  Field(out, "background_freed_objects", server.keyspace().background_freed_objects());
  Field(out, "arena_used_bytes", arena.arena_used);
  Field(out, "arena_capacity_bytes", arena.arena_capacity);
  Field(out, "arena_dead_bytes", arena.dead_bytes);
  Field(out, "index_slots", arena.index_slots);
}

// gigakv never forks: the fork and copy-on-write fields read as Redis's do when none happened.
void PersistenceSection(const CommandServices& server, std::string* out) {
  Snapshots::Info info = server.snapshots().info();
  const AppendOnlyLog::Info aof = server.aof().info();
  if (aof.loading) {
    info.loading = true;
    info.loading_total_bytes = aof.loading_total_bytes;
    info.loading_loaded_bytes = aof.loading_loaded_bytes;
  }
  Field(out, "loading", info.loading ? 1 : 0);
  for (std::string_view name :
       {"async_loading", "current_cow_peak", "current_cow_size", "current_cow_size_age"}) {
    Field(out, name, 0);
  }
  Field(out, "current_fork_perc", "0.00");
  Field(out, "current_save_keys_processed", info.current_save_keys_processed);
  Field(out, "current_save_keys_total", info.current_save_keys_total);
  Field(out, "rdb_changes_since_last_save", info.changes_since_last_save);
  Field(out, "rdb_bgsave_in_progress", info.bgsave_in_progress ? 1 : 0);
  Field(out, "rdb_last_save_time", info.last_save_time_s);
  Field(out, "rdb_last_bgsave_status", info.last_bgsave_ok ? "ok" : "err");
  Field(out, "rdb_last_bgsave_time_sec", info.last_bgsave_time_s);
  Field(out, "rdb_current_bgsave_time_sec", info.current_bgsave_time_s);
  Field(out, "rdb_saves", info.saves);
  Field(out, "rdb_last_cow_size", 0);
  Field(out, "rdb_last_load_keys_expired", info.last_load_keys_expired);
  Field(out, "rdb_last_load_keys_loaded", info.last_load_keys_loaded);
  Field(out, "aof_enabled", aof.enabled ? 1 : 0);
  Field(out, "aof_rewrite_in_progress", aof.rewrite_in_progress ? 1 : 0);
  Field(out, "aof_rewrite_scheduled", aof.rewrite_scheduled ? 1 : 0);
  Field(out, "aof_last_rewrite_time_sec", aof.last_rewrite_time_s);
  Field(out, "aof_current_rewrite_time_sec", aof.current_rewrite_time_s);
  Field(out, "aof_last_bgrewrite_status", aof.last_rewrite_ok ? "ok" : "err");
  Field(out, "aof_rewrites", aof.rewrites);
  Field(out, "aof_rewrites_consecutive_failures", aof.rewrites_consecutive_failures);
  Field(out, "aof_last_write_status", aof.last_write_ok ? "ok" : "err");
  for (std::string_view name :
       {"aof_last_cow_size", "module_fork_in_progress", "module_fork_last_cow_size"}) {
    Field(out, name, 0);
  }
  if (aof.enabled) {
    Field(out, "aof_current_size", aof.current_size);
    Field(out, "aof_base_size", aof.base_size);
    Field(out, "aof_pending_rewrite", aof.rewrite_scheduled ? 1 : 0);
    Field(out, "aof_buffer_length", aof.buffer_length);
    Field(out, "aof_pending_bio_fsync", 0);
    Field(out, "aof_delayed_fsync", aof.delayed_fsync);
  }
  if (info.loading) {
    // As Redis: progress of the load, and its estimated end from the rate so far.
    Field(out, "loading_start_time", info.loading_start_time_s);
    Field(out, "loading_total_bytes", info.loading_total_bytes);
    Field(out, "loading_rdb_used_mem", 0);
    Field(out, "loading_loaded_bytes", info.loading_loaded_bytes);
    const double perc = info.loading_total_bytes == 0
                            ? 0.0
                            : 100.0 * static_cast<double>(info.loading_loaded_bytes) /
                                  static_cast<double>(info.loading_total_bytes);
    Field(out, "loading_loaded_perc", absl::StrFormat("%.2f", perc));
    const double elapsed_s = static_cast<double>(info.loading_elapsed_ms) / 1000.0;
    int64_t eta = 1;
    if (info.loading_loaded_bytes > 0 && elapsed_s > 0) {
      const double rate = static_cast<double>(info.loading_loaded_bytes) / elapsed_s;
      eta = static_cast<int64_t>(
          static_cast<double>(info.loading_total_bytes - info.loading_loaded_bytes) / rate);
    }
    Field(out, "loading_eta_seconds", eta);
  }
}

void StatsSection(const CommandServices& server, std::string* out) {
  Stats& stats = server.stats();
  Stats::Totals totals = stats.totals();
  Field(out, "total_connections_received", stats.total_connections_received.load());
  Field(out, "total_commands_processed", server.stats().total_commands_processed());
  Field(out, "instantaneous_ops_per_sec", server.stats().instantaneous_ops_per_sec());
  Field(out, "total_net_input_bytes", totals.net_input_bytes);
  Field(out, "total_net_output_bytes", totals.net_output_bytes);
  Field(out, "total_net_repl_input_bytes", 0);
  Field(out, "total_net_repl_output_bytes", 0);
  Field(out, "instantaneous_input_kbps",
        absl::StrFormat("%.2f", server.stats().instantaneous_input_kbps()));
  Field(out, "instantaneous_output_kbps",
        absl::StrFormat("%.2f", server.stats().instantaneous_output_kbps()));
  Field(out, "instantaneous_input_repl_kbps", "0.00");
  Field(out, "instantaneous_output_repl_kbps", "0.00");
  Field(out, "rejected_connections", stats.rejected_connections.load());
  for (std::string_view name : {"sync_full", "sync_partial_ok", "sync_partial_err"}) {
    Field(out, name, 0);
  }
  Field(out, "expired_keys", server.keyspace().store().expired_keys());
  Field(out, "expired_stale_perc",
        absl::StrFormat("%.2f", server.keyspace().expired_stale_ratio() * 100));
  Field(out, "expired_time_cap_reached_count", server.keyspace().expire_cycle_cap_reached());
  Field(out, "expire_cycle_cpu_milliseconds", server.keyspace().expire_cycle_ms());
  Field(out, "evicted_keys", server.keyspace().store().evicted_keys());
  // maxmemory-clients is accepted without effect: no client is ever evicted.
  for (std::string_view name :
       {"evicted_clients", "total_eviction_exceeded_time", "current_eviction_exceeded_time"}) {
    Field(out, name, 0);
  }
  Field(out, "keyspace_hits", totals.keyspace_hits);
  Field(out, "keyspace_misses", totals.keyspace_misses);
  Field(out, "pubsub_channels", server.pubsub().ActiveNames(PubSubKind::kChannel));
  Field(out, "pubsub_patterns", server.pubsub().ActiveNames(PubSubKind::kPattern));
  Field(out, "pubsubshard_channels", server.pubsub().ActiveNames(PubSubKind::kShard));
  for (std::string_view name : {"latest_fork_usec", "total_forks"}) {
    Field(out, name, 0);
  }
  Field(out, "migrate_cached_sockets", server.migration_links().size());
  for (std::string_view name :
       {"slave_expires_tracked_keys", "active_defrag_hits", "active_defrag_misses",
        "active_defrag_key_hits", "active_defrag_key_misses", "total_active_defrag_time",
        "current_active_defrag_time"}) {
    Field(out, name, 0);
  }
  Field(out, "tracking_total_keys", server.tracking().total_keys());
  Field(out, "tracking_total_items", server.tracking().total_items());
  Field(out, "tracking_total_prefixes", server.tracking().total_prefixes());
  Field(out, "unexpected_error_replies", 0);
  Field(out, "total_error_replies", stats.total_error_replies.load());
  Field(out, "dump_payload_sanitizations", 0);
  Field(out, "total_reads_processed", totals.reads_processed);
  Field(out, "total_writes_processed", totals.writes_processed);
  // Every gigakv I/O thread reads and writes its own clients; none hands work to helper threads
  // as Redis's io-threads do.
  for (std::string_view name : {"io_threaded_reads_processed", "io_threaded_writes_processed",
                                "reply_buffer_shrinks", "reply_buffer_expands"}) {
    Field(out, name, 0);
  }
  Field(out, "client_query_buffer_limit_disconnections",
        stats.client_query_buffer_limit_disconnections.load());
  Field(out, "client_output_buffer_limit_disconnections",
        stats.client_output_buffer_limit_disconnections.load());
}

void ReplicationSection(const CommandServices& server, std::string* out) {
  Field(out, "role", "master");
  Field(out, "connected_slaves", 0);
  Field(out, "master_failover_state", "no-failover");
  Field(out, "master_replid", "0000000000000000000000000000000000000000");
  Field(out, "master_replid2", "0000000000000000000000000000000000000000");
  Field(out, "master_repl_offset", 0);
  Field(out, "second_repl_offset", -1);
  Field(out, "repl_backlog_active", 0);
  Field(out, "repl_backlog_size", server.settings().repl_backlog_size.get());
  Field(out, "repl_backlog_first_byte_offset", 0);
  Field(out, "repl_backlog_histlen", 0);
}

void CpuSection(std::string* out) {
  struct rusage self, children;
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  auto seconds = [](const timeval& tv) {
    return absl::StrFormat("%.6f", tv.tv_sec + tv.tv_usec / 1e6);
  };
  Field(out, "used_cpu_sys", seconds(self.ru_stime));
  Field(out, "used_cpu_user", seconds(self.ru_utime));
  Field(out, "used_cpu_sys_children", seconds(children.ru_stime));
  Field(out, "used_cpu_user_children", seconds(children.ru_utime));
  // The thread serving INFO: with one I/O thread, the event loop, as Redis's main thread.
  struct rusage thread;
  getrusage(RUSAGE_THREAD, &thread);
  Field(out, "used_cpu_sys_main_thread", seconds(thread.ru_stime));
  Field(out, "used_cpu_user_main_thread", seconds(thread.ru_utime));
}

void CommandStatsSection(const CommandServices& server, std::string* out) {
  for (const CommandSpec* spec : server.commands().all()) {
    CommandTotals totals = server.stats().command_totals(server.commands().IdOf(spec));
    uint64_t calls = totals.calls;
    uint64_t rejected = totals.rejected_calls;
    uint64_t failed = totals.failed_calls;
    if (calls == 0 && rejected == 0 && failed == 0) continue;
    uint64_t usec = totals.usec;
    Field(out, StrCat("cmdstat_", spec->name),
          absl::StrFormat("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
                          calls, usec, calls ? static_cast<double>(usec) / calls : 0.0, rejected,
                          failed));
  }
}

// latency_percentiles_usec_<command>:p50=1.003,p99=2.007,p99.9=3.007 for every command with
// samples, at the percentiles latency-tracking-info-percentiles lists (in its order), as Redis
// prints them: the percentile as "%f" without trailing zeros, the value in µs with 3 decimals.
// Nothing while latency-tracking is off.
void LatencyStatsSection(const CommandServices& server, std::string* out) {
  if (!server.settings().latency_tracking.get()) return;
  std::vector<std::string> percentiles =
      SplitNonEmpty(server.settings().latency_tracking_info_percentiles.get(), ' ');
  for (const CommandSpec* spec : server.commands().all()) {
    LatencyDistribution latency = server.stats().command_latency(server.commands().IdOf(spec));
    if (latency.total() == 0) continue;
    std::string values;
    for (const std::string& percentile : percentiles) {
      double value = 0;
      ParseDouble(percentile, &value);  // Checked when the directive was set.
      if (!values.empty()) values += ',';
      values += absl::StrFormat("p%s=%.3f", percentile,
                                static_cast<double>(latency.ValueAtPercentile(value)) / 1000.0);
    }
    Field(out, StrCat("latency_percentiles_usec_", spec->name), values);
  }
}

void ErrorStatsSection(const CommandServices& server, std::string* out) {
  for (const auto& [code, count] : server.stats().ErrorStats()) {
    Field(out, StrCat("errorstat_", code), StrCat("count=", count));
  }
}

void KeyspaceSection(const CommandServices& server, std::string* out) {
  for (int db = 0; db < server.keyspace().store().databases(); ++db) {
    size_t keys = server.keyspace().store().DbSize(db);
    if (keys == 0) continue;
    Field(out, StrCat("db", db),
          StrCat("keys=", keys, ",expires=", server.keyspace().store().ExpiresCount(db),
                 ",avg_ttl=", server.keyspace().store().AverageTtlMs(db)));
  }
}

void CmdInfo(CommandContext& ctx) {
  static constexpr std::string_view kDefault[] = {
      "server", "clients", "memory",     "persistence", "stats",   "replication",
      "cpu",    "modules", "errorstats", "cluster",     "keyspace"};
  std::set<std::string> wanted;
  bool all = false;
  if (ctx.argc() == 1) {
    wanted.insert(std::begin(kDefault), std::end(kDefault));
  }
  for (size_t i = 1; i < ctx.argc(); ++i) {
    std::string section = AsciiLower(ctx.arg(i));
    if (section == "default") {
      wanted.insert(std::begin(kDefault), std::end(kDefault));
    } else if (section == "all" || section == "everything") {
      all = true;
    } else {
      wanted.insert(section);
    }
  }
  if (all) {
    wanted.insert(std::begin(kDefault), std::end(kDefault));
    wanted.insert("commandstats");
    wanted.insert("latencystats");
  }
  std::string text;
  auto section = [&](std::string_view name, std::string_view title, auto&& fill) {
    if (!wanted.count(std::string(name))) return;
    if (!text.empty()) text.append("\r\n");
    StrAppend(&text, "# ", title, "\r\n");
    fill();
  };
  const CommandServices& server = ctx.services;
  section("server", "Server", [&] { ServerSection(server, &text); });
  section("clients", "Clients", [&] { ClientsSection(server, &text); });
  section("memory", "Memory", [&] { MemorySection(server, &text); });
  section("persistence", "Persistence", [&] { PersistenceSection(server, &text); });
  section("stats", "Stats", [&] { StatsSection(server, &text); });
  section("replication", "Replication", [&] { ReplicationSection(server, &text); });
  section("cpu", "CPU", [&] { CpuSection(&text); });
  section("modules", "Modules", [] {});
  section("commandstats", "Commandstats", [&] { CommandStatsSection(server, &text); });
  section("errorstats", "Errorstats", [&] { ErrorStatsSection(server, &text); });
  section("latencystats", "Latencystats", [&] { LatencyStatsSection(server, &text); });
  section("cluster", "Cluster", [&] { Field(&text, "cluster_enabled", 0); });
  section("keyspace", "Keyspace", [&] { KeyspaceSection(server, &text); });
  ctx.reply.Verbatim("txt", text);
}

}  // namespace

// INFO is registered with the server family's table; see server_commands.cc.
void RegisterInfo(std::vector<CommandBinding>* table) { table->push_back({"info", CmdInfo}); }

}  // namespace gigakv::server
