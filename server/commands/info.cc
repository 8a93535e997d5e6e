// INFO [section ...]: Redis's sections and field names, filled from gigakv's real state.
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/commands/args.h"
#include "server/server.h"

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

void ServerSection(Server& server, std::string* out) {
  struct utsname name;
  uname(&name);
  int64_t uptime_s = (server.NowMs() - server.start_time_ms()) / 1000;
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
  Field(out, "process_supervised", "no");
  Field(out, "run_id", "0000000000000000000000000000000000000000");
  Field(out, "tcp_port", server.tcp_port.load());
  Field(out, "server_time_usec", server.NowMs() * 1000);
  Field(out, "uptime_in_seconds", uptime_s);
  Field(out, "uptime_in_days", uptime_s / 86400);
  Field(out, "hz", server.config().GetInt("hz"));
  Field(out, "configured_hz", server.config().GetInt("hz"));
  Field(out, "lru_clock", (server.NowMs() / 1000) & ((1 << 24) - 1));
  Field(out, "executable", server.executable);
  Field(out, "config_file", server.config().config_file());
  Field(out, "io_threads_active", server.config().GetInt("io-threads") > 1 ? 1 : 0);
  Field(out, "io_threads", server.config().GetInt("io-threads"));
  Field(out, "shards", server.store().shard_count());
}

void ClientsSection(Server& server, std::string* out) {
  Field(out, "connected_clients", server.stats().connected_clients.load());
  Field(out, "cluster_connections", 0);
  Field(out, "maxclients", server.config().GetInt("maxclients"));
  Field(out, "client_recent_max_input_buffer", 0);
  Field(out, "client_recent_max_output_buffer", 0);
  Field(out, "blocked_clients", static_cast<int64_t>(server.blocking().blocked_clients()));
  Field(out, "tracking_clients", 0);
  Field(out, "clients_in_timeout_table", 0);
}

void MemorySection(Server& server, std::string* out) {
  int64_t used = server.UsedMemory(/*refresh=*/true);
  int64_t rss = ReadRssBytes();
  int64_t maxmemory = server.config().GetInt("maxmemory");
  Store::ArenaStats arena = server.store().GetArenaStats();
  Field(out, "used_memory", used);
  Field(out, "used_memory_human", HumanBytes(used));
  Field(out, "used_memory_rss", rss);
  Field(out, "used_memory_rss_human", HumanBytes(rss));
  Field(out, "used_memory_peak", server.peak_used_memory());
  Field(out, "used_memory_peak_human", HumanBytes(server.peak_used_memory()));
  Field(out, "used_memory_startup", server.startup_used_memory());
  Field(out, "used_memory_dataset", server.store().UsedMemory());
  Field(out, "maxmemory", maxmemory);
  Field(out, "maxmemory_human", HumanBytes(maxmemory));
  Field(out, "maxmemory_policy", server.config().Get("maxmemory-policy"));
  Field(out, "mem_fragmentation_ratio",
        absl::StrFormat("%.2f", used > 0 ? static_cast<double>(rss) / used : 0.0));
  Field(out, "mem_allocator", "libc");
  Field(out, "lazyfree_pending_objects", server.lazyfree_pending());
  Field(out, "arena_used_bytes", arena.arena_used);
  Field(out, "arena_capacity_bytes", arena.arena_capacity);
  Field(out, "arena_dead_bytes", arena.dead_bytes);
  Field(out, "index_slots", arena.index_slots);
}

void PersistenceSection(Server& server, std::string* out) {
  Field(out, "loading", 0);
  Field(out, "async_loading", 0);
  Field(out, "rdb_changes_since_last_save", server.stat_totals().dirty);
  Field(out, "rdb_bgsave_in_progress", 0);
  Field(out, "rdb_last_save_time", server.lastsave_s());
  Field(out, "rdb_last_bgsave_status", "ok");
  Field(out, "aof_enabled", 0);
  Field(out, "aof_rewrite_in_progress", 0);
  Field(out, "aof_last_write_status", "ok");
  Field(out, "total_forks", 0);
}

void StatsSection(Server& server, std::string* out) {
  ServerStats& stats = server.stats();
  Server::StatTotals totals = server.stat_totals();
  Field(out, "total_connections_received", stats.total_connections_received.load());
  Field(out, "total_commands_processed", server.total_commands_processed());
  Field(out, "instantaneous_ops_per_sec", server.instantaneous_ops_per_sec());
  Field(out, "total_net_input_bytes", totals.net_input_bytes);
  Field(out, "total_net_output_bytes", totals.net_output_bytes);
  Field(out, "rejected_connections", stats.rejected_connections.load());
  Field(out, "expired_keys", server.store().expired_keys());
  Field(out, "expired_stale_perc", absl::StrFormat("%.2f", server.expired_stale_ratio() * 100));
  Field(out, "evicted_keys", server.store().evicted_keys());
  Field(out, "keyspace_hits", totals.keyspace_hits);
  Field(out, "keyspace_misses", totals.keyspace_misses);
  Field(out, "pubsub_channels", 0);
  Field(out, "pubsub_patterns", 0);
  Field(out, "total_error_replies", stats.total_error_replies.load());
  Field(out, "client_query_buffer_limit_disconnections",
        stats.client_query_buffer_limit_disconnections.load());
  Field(out, "client_output_buffer_limit_disconnections",
        stats.client_output_buffer_limit_disconnections.load());
}

void ReplicationSection(std::string* out) {
  Field(out, "role", "master");
  Field(out, "connected_slaves", 0);
  Field(out, "master_failover_state", "no-failover");
  Field(out, "master_replid", "0000000000000000000000000000000000000000");
  Field(out, "master_repl_offset", 0);
  Field(out, "repl_backlog_active", 0);
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
}

void CommandStatsSection(Server& server, std::string* out) {
  for (const CommandSpec* spec : server.commands().all()) {
    CommandTotals totals = server.command_totals(spec);
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

void ErrorStatsSection(Server& server, std::string* out) {
  for (const auto& [code, count] : server.ErrorStats()) {
    Field(out, StrCat("errorstat_", code), StrCat("count=", count));
  }
}

void KeyspaceSection(Server& server, std::string* out) {
  for (int db = 0; db < server.store().databases(); ++db) {
    size_t keys = server.store().DbSize(db);
    if (keys == 0) continue;
    Field(out, StrCat("db", db),
          StrCat("keys=", keys, ",expires=", server.store().ExpiresCount(db),
                 ",avg_ttl=", server.store().AverageTtlMs(db)));
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
  }
  std::string text;
  auto section = [&](std::string_view name, std::string_view title, auto&& fill) {
    if (!wanted.count(std::string(name))) return;
    if (!text.empty()) text.append("\r\n");
    StrAppend(&text, "# ", title, "\r\n");
    fill();
  };
  Server& server = ctx.server;
  section("server", "Server", [&] { ServerSection(server, &text); });
  section("clients", "Clients", [&] { ClientsSection(server, &text); });
  section("memory", "Memory", [&] { MemorySection(server, &text); });
  section("persistence", "Persistence", [&] { PersistenceSection(server, &text); });
  section("stats", "Stats", [&] { StatsSection(server, &text); });
  section("replication", "Replication", [&] { ReplicationSection(&text); });
  section("cpu", "CPU", [&] { CpuSection(&text); });
  section("modules", "Modules", [] {});
  section("commandstats", "Commandstats", [&] { CommandStatsSection(server, &text); });
  section("errorstats", "Errorstats", [&] { ErrorStatsSection(server, &text); });
  section("cluster", "Cluster", [&] { Field(&text, "cluster_enabled", 0); });
  section("keyspace", "Keyspace", [&] { KeyspaceSection(server, &text); });
  ctx.reply.Verbatim("txt", text);
}

}  // namespace

// INFO is registered with the server family's table; see server_commands.cc.
void RegisterInfo(std::vector<CommandSpec>* table) {
  table->push_back({"info", -1, kLoading | kStale, 0, 0, 0, CmdInfo, "server",
                    "Get information and statistics about the server"});
}

}  // namespace gigakv::server
