#include "server/config.h"

#include <glob.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gigakv/glob.h"
#include "gigakv/numbers.h"
#include "gigakv/strings.h"
#include "protocol/request_parser.h"

namespace gigakv::server {
namespace {

constexpr int64_t kMb = 1024 * 1024;
// hz is a hint: Redis accepts any non-negative value and caps it to this range.
constexpr int64_t kMinHz = 1;
constexpr int64_t kMaxHz = 500;

// Help texts of the Redis directives gigakv accepts without acting on them.
constexpr std::string_view kNoEffect =
    "Accepted for compatibility (a redis.conf loads unchanged); no effect in gigakv.";
constexpr std::string_view kNoReplication =
    "Accepted for compatibility; no effect: gigakv has no replication.";
constexpr std::string_view kNoCluster =
    "Accepted for compatibility; no effect: gigakv has no cluster mode.";
constexpr std::string_view kNoTls = "Accepted for compatibility; no effect: gigakv serves no TLS.";
constexpr std::string_view kNoSnapshots =
    "Accepted for compatibility; no effect yet: gigakv never forks, and its append-only log has "
    "no use for it (docs/persistence.md).";
constexpr std::string_view kAppendOnlyLog = "The append-only log (docs/log-format.md).";
constexpr std::string_view kNoDefrag =
    "Accepted for compatibility; no effect: gigakv's shards compact their arenas themselves.";

// Why a value that needs a feature gigakv lacks is refused, or empty when it is fine. `text` is
// the value's canonical form.
std::string_view UnsupportedValueReason(std::string_view name, std::string_view text) {
  if (name == "cluster-enabled" && text == "yes") return "cluster mode is not supported by gigakv";
  if (name == "tls-port" && text != "0") return "TLS is not supported by gigakv";
  if (name == "unixsocket" && !text.empty()) {
    return "unix sockets are not supported by gigakv: it listens on TCP only";
  }
  return {};
}

// notify-keyspace-events classes (Redis's keyspaceEventsStringToFlags / FlagsToString): the
// letters in the order CONFIG GET prints them; 'A' stands for "g$lshzxetd".
constexpr std::string_view kEventClasses = "g$lshzxetdnKEm";
constexpr std::string_view kAllEventClasses = "g$lshzxetd";

bool NormalizeKeyspaceEvents(std::string_view classes, std::string* out) {
  std::string present;
  for (char c : classes) {
    if (c == 'A') {
      present += kAllEventClasses;
    } else if (kEventClasses.find(c) != std::string_view::npos) {
      present += c;
    } else {
      return false;
    }
  }
  auto has = [&](char c) { return present.find(c) != std::string::npos; };
  bool all = std::all_of(kAllEventClasses.begin(), kAllEventClasses.end(), has);
  out->clear();
  if (all) *out = "A";
  for (char c : kEventClasses) {
    bool in_all = kAllEventClasses.find(c) != std::string_view::npos;
    // With 'A', Redis 7.0 prints neither the classes it covers nor 'n'.
    if (has(c) && !(all && (in_all || c == 'n'))) *out += c;
  }
  return true;
}

// One latency-tracking-info-percentiles value as Redis prints it: "%f" without trailing zeros.
std::string FormatPercentile(double value) {
  std::string text = absl::StrFormat("%f", value);
  StripTrailingDecimalZeros(&text);
  return text;
}

// The CPUs this process may use: its affinity mask (taskset, a container's cpuset), capped by
// its cgroup v2 CPU quota (cpu.max, rounded up). More I/O threads than that only take turns on
// the same cores, paying hand-offs between them.
int CountUsableCpus() {
  int cpus = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (cpus <= 0) cpus = 1;
  std::string cgroup_path;  // "0::/path" in /proc/self/cgroup under cgroup v2.
  std::ifstream cgroups("/proc/self/cgroup");
  for (std::string line; std::getline(cgroups, line);) {
    if (line.rfind("0::", 0) == 0) cgroup_path = line.substr(3);
  }
  for (const std::string& path :
       {"/sys/fs/cgroup" + cgroup_path + "/cpu.max", std::string("/sys/fs/cgroup/cpu.max")}) {
    std::ifstream file(path);
    std::string quota;
    int64_t period = 0;
    if (!(file >> quota >> period)) continue;
    int64_t quota_us = 0;
    if (quota != "max" && period > 0 && ParseInt64(quota, &quota_us) && quota_us > 0) {
      cpus = std::min<int64_t>(cpus, std::max<int64_t>(1, (quota_us + period - 1) / period));
    }
    break;
  }
  return cpus;
}

std::string DefaultIoThreads() { return std::to_string(CountUsableCpus()); }

// Client-output-buffer-limit: "<class> <hard> <soft> <seconds>" repeated; classes normal,
// replica (alias slave), pubsub.
bool ParseOutputBufferLimits(const std::vector<std::string>& args,
                             std::map<std::string, std::string>* out, std::string* error) {
  if (args.size() % 4 != 0 || args.empty()) {
    *error = "Wrong number of arguments in buffer limit configuration.";
    return false;
  }
  for (size_t i = 0; i < args.size(); i += 4) {
    std::string klass = AsciiLower(args[i]);
    if (klass == "slave") klass = "replica";
    if (klass != "normal" && klass != "replica" && klass != "pubsub") {
      *error = "Invalid client class specified in buffer limit configuration.";
      return false;
    }
    int64_t hard, soft, seconds;
    if (!ParseMemory(args[i + 1], &hard) || !ParseMemory(args[i + 2], &soft) ||
        !ParseInt64(args[i + 3], &seconds) || hard < 0 || soft < 0 || seconds < 0) {
      *error = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
      return false;
    }
    (*out)[klass] = StrCat(hard, " ", soft, " ", seconds);
  }
  return true;
}

std::string FormatOutputBufferLimits(const std::map<std::string, std::string>& limits) {
  // Redis prints "slave" for the replica class in CONFIG GET.
  return StrCat("normal ", limits.at("normal"), " slave ", limits.at("replica"), " pubsub ",
                limits.at("pubsub"));
}

// Redis's strtoll(text, &end, 10) with *end == '\0' required: an optional sign, then digits
// only; a value out of range saturates at INT64_MIN/INT64_MAX as strtoll does.
bool ParseSaveNumber(std::string_view text, int64_t* value) {
  bool negative = !text.empty() && text[0] == '-';
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.remove_prefix(1);
  if (text.empty()) return false;
  uint64_t magnitude = 0;
  const uint64_t limit = negative ? uint64_t{1} << 63 : uint64_t{INT64_MAX};
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    magnitude = magnitude > (limit - (c - '0')) / 10 ? limit : magnitude * 10 + (c - '0');
  }
  *value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

// save: "<seconds> <changes>" pairs, seconds >= 1 and changes >= 0, as Redis 7.0 checks them;
// printed back as Redis prints its save points (changes as a C int). "" = no save points.
std::optional<std::string> NormalizeSavePoints(const std::vector<std::string>& words) {
  if (words.size() % 2 != 0) return std::nullopt;
  std::string printed;
  for (size_t i = 0; i < words.size(); i += 2) {
    int64_t seconds, changes;
    if (!ParseSaveNumber(words[i], &seconds) || !ParseSaveNumber(words[i + 1], &changes) ||
        seconds < 1 || changes < 0) {
      return std::nullopt;
    }
    if (!printed.empty()) printed += ' ';
    printed += StrCat(seconds, " ", static_cast<int32_t>(changes));
  }
  return printed;
}

}  // namespace

int UsableCpus() { return CountUsableCpus(); }

bool ParseMemory(std::string_view text, int64_t* bytes) {
  std::string lower = AsciiLower(text);
  int64_t multiplier = 1;
  std::string_view digits = lower;
  struct Unit {
    std::string_view suffix;
    int64_t multiplier;
  };
  static constexpr Unit kUnits[] = {{"kb", 1024}, {"mb", 1024 * 1024}, {"gb", 1024LL * 1024 * 1024},
                                    {"k", 1000},  {"m", 1000 * 1000},  {"g", 1000LL * 1000 * 1000},
                                    {"b", 1}};
  for (const Unit& unit : kUnits) {
    if (digits.ends_with(unit.suffix)) {
      multiplier = unit.multiplier;
      digits.remove_suffix(unit.suffix.size());
      break;
    }
  }
  int64_t value;
  if (!ParseInt64(digits, &value) || value < 0) return false;
  if (value > INT64_MAX / multiplier) return false;
  *bytes = value * multiplier;
  return true;
}

bool IsMultiWordDirective(std::string_view name) {
  for (std::string_view multi : {"bind", "save", "client-output-buffer-limit",
                                 "oom-score-adj-values", "latency-tracking-info-percentiles"}) {
    if (EqualsIgnoreCase(name, multi)) return true;
  }
  return false;
}

const DirectiveSpec* FindDirective(std::string_view name) {
  std::string lower = AsciiLower(name);
  for (const DirectiveSpec& spec : AllDirectives()) {
    if (spec.name == lower || (!spec.alias.empty() && spec.alias == lower)) return &spec;
  }
  return nullptr;
}

const std::vector<DirectiveSpec>& AllDirectives() {
  static const std::vector<DirectiveSpec> kDirectives = {
      {"bind",
       DirectiveType::kSpecial,
       "* -::*",
       0,
       0,
       {},
       true,
       "Addresses to listen on; '-' marks an optional one. '*' = all IPv4 interfaces."},
      {"port", DirectiveType::kInt, "6379", 0, 65535, {}, true, "TCP port (0 = do not listen)."},
      {"protected-mode",
       DirectiveType::kBool,
       "yes",
       0,
       1,
       {},
       true,
       "With the default bind and no password, accept only loopback clients."},
      {"requirepass",
       DirectiveType::kString,
       "",
       0,
       0,
       {},
       true,
       "Password of the default user (AUTH / HELLO AUTH); empty = none."},
      {"databases", DirectiveType::kInt, "16", 1, 1 << 20, {}, false, "Number of databases."},
      {"maxclients",
       DirectiveType::kInt,
       "10000",
       1,
       1 << 30,
       {},
       true,
       "Maximum simultaneous clients."},
      {"timeout",
       DirectiveType::kInt,
       "0",
       0,
       INT32_MAX,
       {},
       true,
       "Close a client idle for this many seconds (0 = never)."},
      {"tcp-keepalive",
       DirectiveType::kInt,
       "300",
       0,
       INT32_MAX,
       {},
       true,
       "SO_KEEPALIVE interval in seconds (0 = off)."},
      {"tcp-backlog", DirectiveType::kInt, "511", 0, INT32_MAX, {}, false, "listen() backlog."},
      {"io-threads",
       DirectiveType::kInt,
       "0",
       1,
       128,
       {},
       false,
       "I/O threads, each running its own event loop and executing commands (default: the CPUs "
       "the process may use: its affinity mask, capped by its cgroup CPU quota)."},
      {"dir",
       DirectiveType::kString,
       "./",
       0,
       0,
       {},
       true,
       "Working directory: data files are created here."},
      {"loglevel",
       DirectiveType::kEnum,
       "notice",
       0,
       0,
       {"debug", "verbose", "notice", "warning"},
       true,
       "Log verbosity."},
      {"logfile",
       DirectiveType::kString,
       "",
       0,
       0,
       {},
       false,
       "Log file; empty = standard output."},
      {"daemonize",
       DirectiveType::kBool,
       "no",
       0,
       1,
       {},
       false,
       "Run in the background, as redis-server does (the standard streams go to /dev/null). "
       "Unlike Redis, no pid file is written unless pidfile is set."},
      {"pidfile", DirectiveType::kString, "", 0, 0, {}, false, "Write the pid here if set."},
      {"hz",
       DirectiveType::kInt,
       "10",
       0,
       INT32_MAX,
       {},
       true,
       "Background task frequency (active expiry, timeouts) per second; values outside 1-500 "
       "are capped to that range, as Redis does."},
      {"proto-max-bulk-len",
       DirectiveType::kMemory,
       "512mb",
       kMb,
       INT64_MAX,
       {},
       true,
       "Largest bulk string a client may send."},
      {"client-query-buffer-limit",
       DirectiveType::kMemory,
       "1gb",
       kMb,
       INT64_MAX,
       {},
       true,
       "A client whose unparsed input exceeds this is disconnected."},
      {"client-output-buffer-limit",
       DirectiveType::kSpecial,
       "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60",
       0,
       0,
       {},
       true,
       "Per class: hard limit, soft limit, soft seconds; a client past them is disconnected."},
      {"slowlog-log-slower-than",
       DirectiveType::kInt,
       "10000",
       -1,
       INT64_MAX,
       {},
       true,
       "Log commands slower than this many microseconds (-1 = off)."},
      {"slowlog-max-len", DirectiveType::kInt, "128", 0, INT64_MAX, {}, true, "Slow log length."},
      {"maxmemory",
       DirectiveType::kMemory,
       "0",
       0,
       INT64_MAX,
       {},
       true,
       "Memory limit for data (0 = none)."},
      {"maxmemory-policy",
       DirectiveType::kEnum,
       "noeviction",
       0,
       0,
       {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru",
        "allkeys-lfu", "allkeys-random", "noeviction"},
       true,
       "What to do at maxmemory."},
      {"maxmemory-samples",
       DirectiveType::kInt,
       "5",
       1,
       INT32_MAX,
       {},
       true,
       "Keys sampled per eviction."},
      {"hash-max-listpack-entries",
       DirectiveType::kInt,
       "512",
       0,
       INT64_MAX,
       {},
       true,
       "Hashes with at most this many fields use the compact listpack encoding.",
       "hash-max-ziplist-entries"},
      {"hash-max-listpack-value",
       DirectiveType::kMemory,
       "64",
       0,
       INT64_MAX,
       {},
       true,
       "Hashes whose fields and values are all at most this long use the listpack encoding.",
       "hash-max-ziplist-value"},
      {"set-max-intset-entries",
       DirectiveType::kInt,
       "512",
       0,
       INT64_MAX,
       {},
       true,
       "Sets of integers with at most this many members use the intset encoding."},
      {"set-max-listpack-entries",
       DirectiveType::kInt,
       "128",
       0,
       INT64_MAX,
       {},
       true,
       "Other sets with at most this many members use the listpack encoding."},
      {"set-max-listpack-value",
       DirectiveType::kMemory,
       "64",
       0,
       INT64_MAX,
       {},
       true,
       "Sets whose members are all at most this long use the listpack encoding."},
      {"zset-max-listpack-entries",
       DirectiveType::kInt,
       "128",
       0,
       INT64_MAX,
       {},
       true,
       "Sorted sets with at most this many members use the listpack encoding.",
       "zset-max-ziplist-entries"},
      {"zset-max-listpack-value",
       DirectiveType::kMemory,
       "64",
       0,
       INT64_MAX,
       {},
       true,
       "Sorted sets whose members are all at most this long use the listpack encoding.",
       "zset-max-ziplist-value"},
      {"list-max-listpack-size",
       DirectiveType::kInt,
       "-2",
       INT32_MIN,
       INT32_MAX,
       {},
       true,
       "List node size: positive = entries per node, -1..-5 = 4, 8, 16, 32, 64 KiB per node.",
       "list-max-ziplist-size"},
      {"list-compress-depth",
       DirectiveType::kInt,
       "0",
       0,
       INT64_MAX,
       {},
       true,
       "Accepted for compatibility and ignored: gigakv always compresses full list nodes."},
      {"save",
       DirectiveType::kSpecial,
       "3600 1 300 100 60 10000",
       0,
       0,
       {},
       true,
       "Save points: a background save after <changes> writes within <seconds>; \"\" = none."},
      {"appendonly",
       DirectiveType::kBool,
       "no",
       0,
       1,
       {},
       true,
       "The append-only log (docs/log-format.md): every write is logged to `appenddirname` and "
       "replayed at start; at start it replaces loading `dbfilename`."},
      {"shards",
       DirectiveType::kInt,
       "1024",
       1,
       16384,
       {},
       false,
       "gigakv: keyspace shards (power of two); each has its own lock and arena."},
      // The rest of Redis 7.0's directives, so that a redis.conf loads unchanged and CONFIG
      // GET/SET know every name Redis knows, with Redis's defaults, ranges and value checks.
      // Most have no effect here (the help says why); values that would need a feature gigakv
      // lacks (cluster-enabled yes, a TLS port, a unix socket, replicaof) are refused.
      {"acl-pubsub-default",
       DirectiveType::kEnum,
       "resetchannels",
       0,
       0,
       {"allchannels", "resetchannels"},
       true,
       kNoEffect},
      {"aclfile", DirectiveType::kString, "", 0, 0, {}, false, kNoEffect},
      {"acllog-max-len", DirectiveType::kInt, "128", 0, INT64_MAX, {}, true, kNoEffect},
      {"active-defrag-cycle-max", DirectiveType::kInt, "25", 1, 99, {}, true, kNoDefrag},
      {"active-defrag-cycle-min", DirectiveType::kInt, "1", 1, 99, {}, true, kNoDefrag},
      {"active-defrag-ignore-bytes",
       DirectiveType::kMemory,
       "104857600",
       0,
       INT64_MAX,
       {},
       true,
       kNoDefrag},
      {"active-defrag-max-scan-fields",
       DirectiveType::kInt,
       "1000",
       1,
       INT64_MAX,
       {},
       true,
       kNoDefrag},
      {"active-defrag-threshold-lower", DirectiveType::kInt, "10", 0, 1000, {}, true, kNoDefrag},
      {"active-defrag-threshold-upper", DirectiveType::kInt, "100", 0, 1000, {}, true, kNoDefrag},
      {"active-expire-effort", DirectiveType::kInt, "1", 1, 10, {}, true, kNoEffect},
      {"activedefrag", DirectiveType::kBool, "no", 0, 1, {}, true, kNoDefrag},
      {"activerehashing", DirectiveType::kBool, "yes", 0, 1, {}, true, kNoEffect},
      {"always-show-logo", DirectiveType::kBool, "no", 0, 1, {}, false, kNoEffect},
      {"aof-disable-auto-gc", DirectiveType::kBool, "no", 0, 1, {}, true, kNoSnapshots},
      {"aof-load-truncated", DirectiveType::kBool, "yes", 0, 1, {}, true, kAppendOnlyLog},
      {"aof-rewrite-incremental-fsync", DirectiveType::kBool, "yes", 0, 1, {}, true, kNoSnapshots},
      {"aof-timestamp-enabled", DirectiveType::kBool, "no", 0, 1, {}, true, kAppendOnlyLog},
      {"aof-use-rdb-preamble", DirectiveType::kBool, "yes", 0, 1, {}, true, kNoSnapshots},
      {"aof_rewrite_cpulist", DirectiveType::kString, "", 0, 0, {}, false, kNoSnapshots},
      {"appenddirname", DirectiveType::kString, "appendonlydir", 0, 0, {}, false, kAppendOnlyLog},
      {"appendfilename", DirectiveType::kString, "appendonly.aof", 0, 0, {}, false, kAppendOnlyLog},
      {"appendfsync",
       DirectiveType::kEnum,
       "everysec",
       0,
       0,
       {"everysec", "always", "no"},
       true,
       kAppendOnlyLog},
      {"auto-aof-rewrite-min-size",
       DirectiveType::kMemory,
       "67108864",
       0,
       INT64_MAX,
       {},
       true,
       kNoSnapshots},
      {"auto-aof-rewrite-percentage",
       DirectiveType::kInt,
       "100",
       0,
       2147483647,
       {},
       true,
       kNoSnapshots},
      {"bgsave_cpulist", DirectiveType::kString, "", 0, 0, {}, false, kNoSnapshots},
      {"bind-source-addr", DirectiveType::kString, "", 0, 0, {}, true, kNoEffect},
      {"bio_cpulist", DirectiveType::kString, "", 0, 0, {}, false, kNoEffect},
      {"busy-reply-threshold",
       DirectiveType::kInt,
       "5000",
       0,
       INT64_MAX,
       {},
       true,
       "Milliseconds a script runs before other clients get BUSY and SCRIPT KILL may stop it.",
       "lua-time-limit"},
      {"cluster-allow-pubsubshard-when-down",
       DirectiveType::kBool,
       "yes",
       0,
       1,
       {},
       true,
       kNoCluster},
      {"cluster-allow-reads-when-down", DirectiveType::kBool, "no", 0, 1, {}, true, kNoCluster},
      {"cluster-allow-replica-migration", DirectiveType::kBool, "yes", 0, 1, {}, true, kNoCluster},
      {"cluster-announce-bus-port", DirectiveType::kInt, "0", 0, 65535, {}, true, kNoCluster},
      {"cluster-announce-hostname", DirectiveType::kSpecial, "", 0, 0, {}, true, kNoCluster},
      {"cluster-announce-ip", DirectiveType::kString, "", 0, 0, {}, true, kNoCluster},
      {"cluster-announce-port", DirectiveType::kInt, "0", 0, 65535, {}, true, kNoCluster},
      {"cluster-announce-tls-port", DirectiveType::kInt, "0", 0, 65535, {}, true, kNoCluster},
      {"cluster-config-file", DirectiveType::kString, "nodes.conf", 0, 0, {}, false, kNoCluster},
      {"cluster-enabled",
       DirectiveType::kBool,
       "no",
       0,
       1,
       {},
       false,
       "Only 'no': gigakv has no cluster mode (refused rather than ignored)."},
      {"cluster-link-sendbuf-limit",
       DirectiveType::kMemory,
       "0",
       0,
       INT64_MAX,
       {},
       true,
       kNoCluster},
      {"cluster-migration-barrier", DirectiveType::kInt, "1", 0, 2147483647, {}, true, kNoCluster},
      {"cluster-node-timeout", DirectiveType::kInt, "15000", 0, INT64_MAX, {}, true, kNoCluster},
      {"cluster-port", DirectiveType::kInt, "0", 0, 65535, {}, false, kNoCluster},
      {"cluster-preferred-endpoint-type",
       DirectiveType::kEnum,
       "ip",
       0,
       0,
       {"ip", "hostname", "unknown-endpoint"},
       true,
       kNoCluster},
      {"cluster-replica-no-failover",
       DirectiveType::kBool,
       "no",
       0,
       1,
       {},
       true,
       kNoCluster,
       "cluster-slave-no-failover"},
      {"cluster-replica-validity-factor",
       DirectiveType::kInt,
       "10",
       0,
       2147483647,
       {},
       true,
       kNoCluster,
       "cluster-slave-validity-factor"},
      {"cluster-require-full-coverage", DirectiveType::kBool, "yes", 0, 1, {}, true, kNoCluster},
      {"crash-log-enabled", DirectiveType::kBool, "yes", 0, 1, {}, true, kNoEffect},
      {"crash-memcheck-enabled", DirectiveType::kBool, "yes", 0, 1, {}, true, kNoEffect},
      {"dbfilename",
       DirectiveType::kString,
       "dump.rdb",
       0,
       0,
       {},
       true,
       "The RDB snapshot's file name, in `dir` (SAVE, BGSAVE, the save points, loaded at start)."},
      {"disable-thp", DirectiveType::kBool, "yes", 0, 1, {}, false, kNoEffect},
      {"dynamic-hz", DirectiveType::kBool, "yes", 0, 1, {}, true, kNoEffect},
      {"enable-debug-command",
       DirectiveType::kEnum,
       "no",
       0,
       0,
       {"no", "yes", "local"},
       false,
       "Whether DEBUG may run: no (refused, as in Redis), yes, or local (clients connected from "
       "127.0.0.1 or ::1)."},
      {"enable-module-command",
       DirectiveType::kEnum,
       "no",
       0,
       0,
       {"no", "yes", "local"},
       false,
       kNoEffect},
      {"enable-protected-configs",
       DirectiveType::kEnum,
       "no",
       0,
       0,
       {"no", "yes", "local"},
       false,
       "Who may CONFIG SET dir and dbfilename: no one, everyone (yes) or clients on the loopback "
       "address (local)."},
      {"hll-sparse-max-bytes",
       DirectiveType::kMemory,
       "3000",
       0,
       INT64_MAX,
       {},
       true,
       "Largest sparse HyperLogLog (bytes, header included); past it PFADD converts it to the "
       "dense representation."},
      {"ignore-warnings", DirectiveType::kString, "", 0, 0, {}, true, kNoEffect},
      {"io-threads-do-reads", DirectiveType::kBool, "no", 0, 1, {}, false, kNoEffect},
      {"jemalloc-bg-thread", DirectiveType::kBool, "yes", 0, 1, {}, true, kNoEffect},
      {"latency-monitor-threshold", DirectiveType::kInt, "0", 0, INT64_MAX, {}, true, kNoEffect},
      {"latency-tracking",
       DirectiveType::kBool,
       "yes",
       0,
       1,
       {},
       true,
       "Record each command's latency distribution for INFO latencystats."},
      {"latency-tracking-info-percentiles",
       DirectiveType::kSpecial,
       "50 99 99.9",
       0,
       0,
       {},
       true,
       "The percentiles INFO latencystats prints, in this order."},
      {"lazyfree-lazy-eviction", DirectiveType::kBool, "no", 0, 1, {}, true, kNoEffect},
      {"lazyfree-lazy-expire", DirectiveType::kBool, "no", 0, 1, {}, true, kNoEffect},
      {"lazyfree-lazy-server-del", DirectiveType::kBool, "no", 0, 1, {}, true, kNoEffect},
      {"lazyfree-lazy-user-del",
       DirectiveType::kBool,
       "no",
       0,
       1,
       {},
       true,
       "DEL frees large values in the background either way, as UNLINK does; with yes its frees "
       "count in INFO lazyfreed_objects, as UNLINK's do."},
      {"lazyfree-lazy-user-flush",
       DirectiveType::kBool,
       "no",
       0,
       1,
       {},
       true,
       "FLUSHALL and FLUSHDB without ASYNC or SYNC free the data in the background."},
      {"lfu-decay-time",
       DirectiveType::kInt,
       "1",
       0,
       2147483647,
       {},
       true,
       "LFU: minutes of idleness per counter decrement (0 = never decays). Records keep their "
       "access minute modulo 256, so periods above 255 minutes never decay either."},
      {"lfu-log-factor",
       DirectiveType::kInt,
       "10",
       0,
       2147483647,
       {},
       true,
       "LFU: how slowly the access counter saturates (OBJECT FREQ, allkeys-lfu and volatile-lfu)."},
      {"masterauth", DirectiveType::kString, "", 0, 0, {}, true, kNoReplication},
      {"masteruser", DirectiveType::kString, "", 0, 0, {}, true, kNoReplication},
      {"maxmemory-clients", DirectiveType::kSpecial, "0", 0, 0, {}, true, kNoEffect},
      {"maxmemory-eviction-tenacity", DirectiveType::kInt, "10", 0, 100, {}, true, kNoEffect},
      {"min-replicas-max-lag",
       DirectiveType::kInt,
       "10",
       0,
       2147483647,
       {},
       true,
       kNoReplication,
       "min-slaves-max-lag"},
      {"min-replicas-to-write",
       DirectiveType::kInt,
       "0",
       0,
       2147483647,
       {},
       true,
       kNoReplication,
       "min-slaves-to-write"},
      {"no-appendfsync-on-rewrite", DirectiveType::kBool, "no", 0, 1, {}, true, kNoSnapshots},
      {"notify-keyspace-events",
       DirectiveType::kSpecial,
       "",
       0,
       0,
       {},
       true,
       "Keyspace notifications: the event classes to publish (letters of 'Ag$lshzxeKEtmdn'; K and "
       "E choose the __keyspace@ and __keyevent@ channels). See docs/notifications.md."},
      {"oom-score-adj",
       DirectiveType::kEnum,
       "no",
       0,
       0,
       {"no", "yes", "relative", "absolute"},
       true,
       kNoEffect},
      {"oom-score-adj-values", DirectiveType::kSpecial, "0 200 800", 0, 0, {}, true, kNoEffect},
      {"proc-title-template",
       DirectiveType::kString,
       "{title} {listen-addr} {server-mode}",
       0,
       0,
       {},
       true,
       kNoEffect},
      {"propagation-error-behavior",
       DirectiveType::kEnum,
       "ignore",
       0,
       0,
       {"ignore", "panic", "panic-on-replicas"},
       true,
       kNoReplication},
      {"rdb-del-sync-files",
       DirectiveType::kBool,
       "no",
       0,
       1,
       {},
       true,
       "Delete RDB files written only for replication: accepted; gigakv has no replication yet, "
       "so it writes no such files."},
      {"rdb-save-incremental-fsync",
       DirectiveType::kBool,
       "yes",
       0,
       1,
       {},
       true,
       "fsync the snapshot file every 4 MB while it is written, so the final fsync is short."},
      {"rdb-key-save-delay",
       DirectiveType::kInt,
       "0",
       INT32_MIN,
       INT32_MAX,
       {},
       true,
       "Test knob (hidden, as in Redis): microseconds a save waits per key written.",
       "",
       true},
      {"key-load-delay",
       DirectiveType::kInt,
       "0",
       INT32_MIN,
       INT32_MAX,
       {},
       true,
       "Test knob (hidden, as in Redis): microseconds a load waits per key loaded.",
       "",
       true},
      {"rdbchecksum",
       DirectiveType::kBool,
       "yes",
       0,
       1,
       {},
       false,
       "End RDB files with a CRC-64 of their contents (no: zeros, which loaders accept)."},
      {"rdbcompression",
       DirectiveType::kBool,
       "yes",
       0,
       1,
       {},
       true,
       "LZF-compress strings over 20 bytes in RDB files and DUMP payloads."},
      {"repl-backlog-size",
       DirectiveType::kMemory,
       "1048576",
       0,
       INT64_MAX,
       {},
       true,
       kNoReplication},
      {"repl-backlog-ttl", DirectiveType::kInt, "3600", 0, INT64_MAX, {}, true, kNoReplication},
      {"repl-disable-tcp-nodelay", DirectiveType::kBool, "no", 0, 1, {}, true, kNoReplication},
      {"repl-diskless-load",
       DirectiveType::kEnum,
       "disabled",
       0,
       0,
       {"disabled", "on-empty-db", "swapdb"},
       true,
       kNoReplication},
      {"repl-diskless-sync", DirectiveType::kBool, "yes", 0, 1, {}, true, kNoReplication},
      {"repl-diskless-sync-delay",
       DirectiveType::kInt,
       "5",
       0,
       2147483647,
       {},
       true,
       kNoReplication},
      {"repl-diskless-sync-max-replicas",
       DirectiveType::kInt,
       "0",
       0,
       2147483647,
       {},
       true,
       kNoReplication},
      {"repl-ping-replica-period",
       DirectiveType::kInt,
       "10",
       1,
       2147483647,
       {},
       true,
       kNoReplication,
       "repl-ping-slave-period"},
      {"repl-timeout", DirectiveType::kInt, "60", 1, 2147483647, {}, true, kNoReplication},
      {"replica-announce-ip",
       DirectiveType::kString,
       "",
       0,
       0,
       {},
       true,
       kNoReplication,
       "slave-announce-ip"},
      {"replica-announce-port",
       DirectiveType::kInt,
       "0",
       0,
       65535,
       {},
       true,
       kNoReplication,
       "slave-announce-port"},
      {"replica-announced", DirectiveType::kBool, "yes", 0, 1, {}, true, kNoReplication},
      {"replica-ignore-disk-write-errors",
       DirectiveType::kBool,
       "no",
       0,
       1,
       {},
       true,
       kNoReplication},
      {"replica-ignore-maxmemory",
       DirectiveType::kBool,
       "yes",
       0,
       1,
       {},
       true,
       kNoReplication,
       "slave-ignore-maxmemory"},
      {"replica-lazy-flush",
       DirectiveType::kBool,
       "no",
       0,
       1,
       {},
       true,
       kNoReplication,
       "slave-lazy-flush"},
      {"replica-priority",
       DirectiveType::kInt,
       "100",
       0,
       2147483647,
       {},
       true,
       kNoReplication,
       "slave-priority"},
      {"replica-read-only",
       DirectiveType::kBool,
       "yes",
       0,
       1,
       {},
       true,
       kNoReplication,
       "slave-read-only"},
      {"replica-serve-stale-data",
       DirectiveType::kBool,
       "yes",
       0,
       1,
       {},
       true,
       kNoReplication,
       "slave-serve-stale-data"},
      {"replicaof",
       DirectiveType::kSpecial,
       "",
       0,
       0,
       {},
       false,
       "Only 'no one': gigakv has no replication (refused rather than ignored).",
       "slaveof"},
      {"sanitize-dump-payload",
       DirectiveType::kEnum,
       "no",
       0,
       0,
       {"no", "yes", "clients"},
       true,
       kNoSnapshots},
      {"server_cpulist", DirectiveType::kString, "", 0, 0, {}, false, kNoEffect},
      {"set-proc-title", DirectiveType::kBool, "yes", 0, 1, {}, false, kNoEffect},
      {"shutdown-on-sigint",
       DirectiveType::kEnum,
       "default",
       0,
       0,
       {"default", "save", "nosave", "now", "force"},
       true,
       kNoEffect},
      {"shutdown-on-sigterm",
       DirectiveType::kEnum,
       "default",
       0,
       0,
       {"default", "save", "nosave", "now", "force"},
       true,
       kNoEffect},
      {"shutdown-timeout", DirectiveType::kInt, "10", 0, 2147483647, {}, true, kNoEffect},
      {"socket-mark-id", DirectiveType::kInt, "0", 0, 4294967295, {}, false, kNoEffect},
      {"stop-writes-on-bgsave-error",
       DirectiveType::kBool,
       "yes",
       0,
       1,
       {},
       true,
       "After a failed background save (with save points set), refuse writes with -MISCONF "
       "until a save succeeds."},
      {"stream-node-max-bytes",
       DirectiveType::kMemory,
       "4096",
       0,
       INT64_MAX,
       {},
       true,
       "The most bytes a stream node (one listpack of entries) holds before XADD opens a new "
       "one; 0 = no limit."},
      {"stream-node-max-entries",
       DirectiveType::kInt,
       "100",
       0,
       INT64_MAX,
       {},
       true,
       "The most entries (live and deleted) a stream node holds before XADD opens a new one; 0 "
       "= no limit."},
      {"supervised",
       DirectiveType::kEnum,
       "no",
       0,
       0,
       {"upstart", "systemd", "auto", "no"},
       false,
       "Tell a supervisor when gigakv is ready to serve: systemd (READY=1 to $NOTIFY_SOCKET, "
       "for Type=notify units), upstart (stops itself with SIGSTOP), auto (whichever the "
       "environment names)."},
      {"syslog-enabled", DirectiveType::kBool, "no", 0, 1, {}, false, kNoEffect},
      {"syslog-facility",
       DirectiveType::kEnum,
       "local0",
       0,
       0,
       {"user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"},
       false,
       kNoEffect},
      {"syslog-ident", DirectiveType::kString, "redis", 0, 0, {}, false, kNoEffect},
      {"tls-auth-clients",
       DirectiveType::kEnum,
       "yes",
       0,
       0,
       {"no", "yes", "optional"},
       true,
       kNoTls},
      {"tls-ca-cert-dir", DirectiveType::kString, "", 0, 0, {}, true, kNoTls},
      {"tls-ca-cert-file", DirectiveType::kString, "", 0, 0, {}, true, kNoTls},
      {"tls-cert-file", DirectiveType::kString, "", 0, 0, {}, true, kNoTls},
      {"tls-ciphers", DirectiveType::kString, "", 0, 0, {}, true, kNoTls},
      {"tls-ciphersuites", DirectiveType::kString, "", 0, 0, {}, true, kNoTls},
      {"tls-client-cert-file", DirectiveType::kString, "", 0, 0, {}, true, kNoTls},
      {"tls-client-key-file", DirectiveType::kString, "", 0, 0, {}, true, kNoTls},
      {"tls-client-key-file-pass", DirectiveType::kString, "", 0, 0, {}, true, kNoTls},
      {"tls-cluster", DirectiveType::kBool, "no", 0, 1, {}, true, kNoTls},
      {"tls-dh-params-file", DirectiveType::kString, "", 0, 0, {}, true, kNoTls},
      {"tls-key-file", DirectiveType::kString, "", 0, 0, {}, true, kNoTls},
      {"tls-key-file-pass", DirectiveType::kString, "", 0, 0, {}, true, kNoTls},
      {"tls-port",
       DirectiveType::kInt,
       "0",
       0,
       65535,
       {},
       true,
       "Only 0: gigakv serves no TLS (refused rather than ignored)."},
      {"tls-prefer-server-ciphers", DirectiveType::kBool, "no", 0, 1, {}, true, kNoTls},
      {"tls-protocols", DirectiveType::kString, "", 0, 0, {}, true, kNoTls},
      {"tls-replication", DirectiveType::kBool, "no", 0, 1, {}, true, kNoTls},
      {"tls-session-cache-size", DirectiveType::kInt, "20480", 0, 2147483647, {}, true, kNoTls},
      {"tls-session-cache-timeout", DirectiveType::kInt, "300", 0, 2147483647, {}, true, kNoTls},
      {"tls-session-caching", DirectiveType::kBool, "yes", 0, 1, {}, true, kNoTls},
      {"tracking-table-max-keys",
       DirectiveType::kInt,
       "1000000",
       0,
       INT64_MAX,
       {},
       true,
       "Client-side caching: the most keys the tracking table remembers for CLIENT TRACKING "
       "clients (0: no limit); beyond it the cron invalidates keys."},
      {"unixsocket",
       DirectiveType::kString,
       "",
       0,
       0,
       {},
       false,
       "Only empty: gigakv listens on TCP only (refused rather than ignored)."},
      {"unixsocketperm", DirectiveType::kSpecial, "0", 0, 0, {}, false, kNoEffect},

  };
  return kDirectives;
}

Config::Config() {
  for (const DirectiveSpec& spec : AllDirectives()) {
    auto value = std::make_unique<Value>();
    value->spec = &spec;
    values_.emplace(std::string(spec.name), std::move(value));
  }
  for (auto& [name, value] : values_) {
    std::string text(value->spec->default_value);
    if (name == "io-threads") text = DefaultIoThreads();
    std::vector<std::string> args;
    if (value->spec->type == DirectiveType::kSpecial) {
      args = SplitNonEmpty(text, ' ');
    } else {
      args = {text};
    }
    absl::Status status = SetLocked(*value, args);
    (void)status;  // Defaults are valid by construction (covered by tests).
    value->set_explicitly = false;
  }
}

Config::Value* Config::Find(std::string_view name) {
  return const_cast<Value*>(static_cast<const Config*>(this)->Find(name));
}

const Config::Value* Config::Find(std::string_view name) const {
  auto it = values_.find(AsciiLower(name));
  if (it != values_.end()) return it->second.get();
  const DirectiveSpec* spec = FindDirective(name);  // An alias.
  if (spec == nullptr) return nullptr;
  it = values_.find(std::string(spec->name));
  return it == values_.end() ? nullptr : it->second.get();
}

absl::Status Config::SetLocked(Value& value, const std::vector<std::string>& args) {
  const DirectiveSpec& spec = *value.spec;
  auto invalid = [](std::string_view reason) { return absl::InvalidArgumentError(ToAbsl(reason)); };
  if (spec.type != DirectiveType::kSpecial && args.size() != 1) {
    return invalid("wrong number of arguments");
  }
  switch (spec.type) {
    case DirectiveType::kInt: {
      int64_t number;
      if (!ParseInt64(args[0], &number)) {
        return invalid("argument couldn't be parsed into an integer");
      }
      if (number < spec.min || number > spec.max) {
        return invalid(
            StrCat("argument must be between ", spec.min, " and ", spec.max, " inclusive"));
      }
      if (spec.name == "shards" && (number & (number - 1)) != 0) {
        return invalid("argument must be a power of two");
      }
      if (std::string_view reason = UnsupportedValueReason(spec.name, std::to_string(number));
          !reason.empty()) {
        return invalid(reason);
      }
      if (spec.name == "hz") number = std::clamp<int64_t>(number, kMinHz, kMaxHz);
      value.number.store(number);
      value.text = std::to_string(number);
      break;
    }
    case DirectiveType::kMemory: {
      int64_t bytes;
      if (!ParseMemory(args[0], &bytes)) {
        return invalid("argument must be a memory value");
      }
      if (bytes < spec.min || bytes > spec.max) {
        return invalid(
            StrCat("argument must be between ", spec.min, " and ", spec.max, " inclusive"));
      }
      value.number.store(bytes);
      value.text = std::to_string(bytes);
      break;
    }
    case DirectiveType::kBool: {
      std::string lower = AsciiLower(args[0]);
      if (lower != "yes" && lower != "no") return invalid("argument must be 'yes' or 'no'");
      if (std::string_view reason = UnsupportedValueReason(spec.name, lower); !reason.empty()) {
        return invalid(reason);
      }
      value.number.store(lower == "yes" ? 1 : 0);
      value.text = lower;
      break;
    }
    case DirectiveType::kEnum: {
      std::string lower = AsciiLower(args[0]);
      for (size_t i = 0; i < spec.enum_values.size(); ++i) {
        if (spec.enum_values[i] == lower) {
          value.number.store(static_cast<int64_t>(i));
          value.text = lower;
          return absl::OkStatus();
        }
      }
      return invalid(
          "argument(s) must be one of the following: " +
          Join(std::vector<std::string>(spec.enum_values.begin(), spec.enum_values.end()), ", "));
    }
    case DirectiveType::kString:
      if (std::string_view reason = UnsupportedValueReason(spec.name, args[0]); !reason.empty()) {
        return invalid(reason);
      }
      if (spec.name == "dbfilename" && args[0].find_first_of("/\\") != std::string::npos) {
        return invalid("dbfilename can't be a path, just a filename");
      }
      if (spec.name == "dir") {
        if (::chdir(args[0].c_str()) != 0) return invalid(std::strerror(errno));
        // CONFIG GET dir prints the absolute working directory, as Redis does.
        char cwd[4096];
        value.text = ::getcwd(cwd, sizeof(cwd)) != nullptr ? std::string(cwd) : args[0];
        break;
      }
      value.text = args[0];
      break;
    case DirectiveType::kSpecial:
      // Multi-word values arrive as several arguments from a config file or the command line,
      // and as one from CONFIG SET (see IsMultiWordDirective): split them the same way.
      std::vector<std::string> words;
      for (const std::string& arg : args) {
        for (std::string& word : SplitNonEmpty(arg, ' ')) words.push_back(std::move(word));
      }
      if (spec.name == "save") {
        // Here an empty argument among others is a word of its own (an invalid one).
        std::vector<std::string> save_words;
        for (const std::string& arg : args) {
          if (arg.empty() && args.size() > 1) save_words.emplace_back();
          for (std::string& word : SplitNonEmpty(arg, ' ')) save_words.push_back(std::move(word));
        }
        std::optional<std::string> save_points = NormalizeSavePoints(save_words);
        if (!save_points) return invalid("Invalid save parameters");
        value.text = *save_points;
      } else if (spec.name == "notify-keyspace-events") {
        if (args.size() > 1) return invalid("wrong number of arguments");
        std::string normalized;
        if (!NormalizeKeyspaceEvents(args.empty() ? "" : args[0], &normalized)) {
          return invalid("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
        }
        value.text = normalized;
        // Redis 7.0 prints 'A' without 'n' but keeps the class: the number says it is on.
        const std::string_view raw = args.empty() ? std::string_view() : std::string_view(args[0]);
        value.number.store(raw.find('n') != std::string_view::npos ? 1 : 0,
                           std::memory_order_relaxed);
      } else if (spec.name == "latency-tracking-info-percentiles") {
        std::vector<std::string> printed;
        for (const std::string& word : words) {
          double percentile;
          if (!ParseDouble(word, &percentile)) {
            return invalid("Invalid latency-tracking-info-percentiles parameters");
          }
          if (percentile < 0 || percentile > 100) {
            return invalid(
                "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
          }
          printed.push_back(FormatPercentile(percentile));
        }
        value.text = Join(printed, " ");
      } else if (spec.name == "oom-score-adj-values") {
        if (words.size() != 3) return invalid("wrong number of arguments");
        std::vector<std::string> printed;
        for (const std::string& word : words) {
          // strtol's reading, as Redis's ("+5", "007" and "-0" are numbers).
          char* end = nullptr;
          errno = 0;
          long long number = std::strtoll(word.c_str(), &end, 10);
          if (*end != '\0' || errno != 0 || number < -2000 || number > 2000) {
            return invalid(
                "Invalid oom-score-adj-values, elements must be between -2000 and 2000.");
          }
          printed.push_back(std::to_string(number));
        }
        value.text = Join(printed, " ");
      } else if (spec.name == "maxmemory-clients") {
        if (args.size() != 1) return invalid("wrong number of arguments");
        std::string_view text = args[0];
        int64_t number = 0;
        if (text.empty()) {
          value.text = "0";  // Redis reads an empty value as 0.
        } else if (text.ends_with('%')) {
          if (!ParseInt64(text.substr(0, text.size() - 1), &number) || number < 0) {
            return invalid("argument must be a memory or percent value");
          }
          if (number > 100) return invalid("percentage argument must be less or equal to 100");
          value.text = number == 0 ? "0" : StrCat(number, "%");
        } else {
          if (!ParseMemory(text, &number)) {
            return invalid("argument must be a memory or percent value");
          }
          value.text = std::to_string(number);
        }
      } else if (spec.name == "unixsocketperm") {
        if (args.size() != 1) return invalid("wrong number of arguments");
        const std::string& text = args[0];
        char* end = nullptr;
        errno = 0;
        long long mode = std::strtoll(text.c_str(), &end, 8);
        if (text.empty() || *end != '\0' || errno != 0) {
          return invalid("argument couldn't be parsed as an octal number");
        }
        if (mode < 0 || mode > 0777) return invalid("argument must be between 0 and 777 inclusive");
        value.text = absl::StrFormat("%o", mode);
      } else if (spec.name == "cluster-announce-hostname") {
        if (args.size() > 1) return invalid("wrong number of arguments");
        std::string text = args.empty() ? "" : args[0];
        for (char c : text) {
          if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') {
            return invalid("Hostnames may only contain alphanumeric characters, hyphens or dots");
          }
        }
        value.text = text;
      } else if (spec.name == "replicaof") {
        // "no one" (or nothing, the default) is the only value without replication.
        if (!words.empty() && !(words.size() == 2 && EqualsIgnoreCase(words[0], "no") &&
                                EqualsIgnoreCase(words[1], "one"))) {
          if (words.size() != 2) return invalid("wrong number of arguments");
          return invalid("replication is not supported by gigakv");
        }
        value.text = "";
      } else if (spec.name == "bind") {
        if (args.empty()) return invalid("Too many bind addresses specified.");
        value.text = Join(args, " ");
      } else if (spec.name == "client-output-buffer-limit") {
        std::map<std::string, std::string> limits;
        if (!value.text.empty()) {
          // Start from the current values: a CONFIG SET may name only one class.
          std::vector<std::string> current = SplitNonEmpty(value.text, ' ');
          std::string ignored;
          ParseOutputBufferLimits(current, &limits, &ignored);
        }
        std::string error;
        if (!ParseOutputBufferLimits(words, &limits, &error)) return invalid(error);
        for (std::string_view klass : {"normal", "replica", "pubsub"}) {
          if (!limits.count(std::string(klass))) limits[std::string(klass)] = "0 0 0";
        }
        value.text = FormatOutputBufferLimits(limits);
      }
      break;
  }
  value.set_explicitly = true;
  return absl::OkStatus();
}

absl::Status Config::Set(std::string_view name, const std::vector<std::string>& args,
                         bool from_config_set) {
  std::lock_guard<std::mutex> lock(mutex_);
  Value* value = Find(name);
  if (value == nullptr) return absl::NotFoundError("Bad directive or wrong number of arguments");
  if (from_config_set && !value->spec->mutable_at_runtime) {
    return absl::FailedPreconditionError("can't set immutable config");
  }
  // In a config file and on the command line, each save line adds its points to those of the
  // lines before it, as in Redis; `save ""` clears them. CONFIG SET replaces them.
  if (!from_config_set && value->spec->name == "save" && value->set_explicitly &&
      !value->text.empty() && !(args.size() == 1 && args[0].empty())) {
    std::vector<std::string> accumulated = {value->text};
    accumulated.insert(accumulated.end(), args.begin(), args.end());
    return SetLocked(*value, accumulated);
  }
  return SetLocked(*value, args);
}

absl::Status Config::LoadFile(const std::string& path) {
  absl::Status status = LoadFileContents(path, /*depth=*/0);
  if (status.ok() || !absl::IsNotFound(status)) config_file_ = path;
  return status;
}

// Reads `path`, or every file matching it in name order when it is a glob pattern (as Redis 7.0
// reads include patterns). `include other.conf` lines are read where they stand.
absl::Status Config::LoadFileContents(const std::string& path, int depth) {
  constexpr int kMaxIncludeDepth = 16;
  if (depth > kMaxIncludeDepth) {
    return absl::InvalidArgumentError(StrCat("include nesting deeper than ", kMaxIncludeDepth,
                                             " (an include loop?) at '", path, "'"));
  }
  if (path.find_first_of("*?[") != std::string::npos) {
    glob_t matches{};
    int found = ::glob(path.c_str(), 0, nullptr, &matches);
    std::vector<std::string> files(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
    ::globfree(&matches);
    if (found != 0 && found != GLOB_NOMATCH) {
      return absl::NotFoundError(StrCat("Fatal error, can't read config files '", path, "'"));
    }
    for (const std::string& file : files) {  // glob sorts them.
      absl::Status status = LoadFileContents(file, depth + 1);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        StrCat("Fatal error, can't open config file '", path, "': ", std::strerror(errno)));
  }
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    std::string_view trimmed = StripWhitespace(line);
    if (trimmed.empty() || trimmed[0] == '#') continue;
    std::vector<std::string> words;
    auto fail = [&](std::string_view reason) {
      return absl::InvalidArgumentError(
          StrCat(path, ":", line_number, ": '", trimmed, "': ", reason));
    };
    if (!protocol::SplitInlineArgs(trimmed, &words))
      return fail("Unbalanced quotes in configuration line");
    if (words.empty()) continue;
    std::string name = AsciiLower(words[0]);
    if (name == "include") {
      if (words.size() != 2) return fail("Bad directive or wrong number of arguments");
      absl::Status status = LoadFileContents(words[1], depth + 1);
      if (!status.ok()) return status;
      continue;
    }
    std::vector<std::string> args(words.begin() + 1, words.end());
    absl::Status status = Set(name, args, /*from_config_set=*/false);
    if (!status.ok()) return fail(FromAbsl(status.message()));
  }
  return absl::OkStatus();
}

absl::Status Config::ApplyArgs(const std::vector<std::string>& args) {
  // Like redis-server: "--name v1 v2 --other v" -> each "--name" starts a directive line.
  size_t i = 0;
  while (i < args.size()) {
    if (!args[i].starts_with("--") || args[i].size() <= 2) {
      return absl::InvalidArgumentError(
          StrCat("invalid argument '", args[i], "': expected --directive value"));
    }
    std::string name = AsciiLower(args[i].substr(2));
    std::vector<std::string> values;
    ++i;
    while (i < args.size() && !(args[i].starts_with("--") && args[i].size() > 2)) {
      values.push_back(args[i++]);
    }
    absl::Status status = Set(name, values, /*from_config_set=*/false);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          StrCat("command line '--", name, " ", Join(values, " "), "': ", status.message()));
    }
  }
  return absl::OkStatus();
}

std::string Config::Get(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Value* value = Find(name);
  return value == nullptr ? std::string() : value->text;
}

int64_t Config::GetInt(std::string_view name) const {
  const Value* value = Find(name);  // The map itself is immutable after construction.
  return value == nullptr ? 0 : value->number.load(std::memory_order_relaxed);
}

bool Config::IsDefaultBind() const { return Get("bind") == "* -::*"; }

std::vector<std::pair<std::string, std::string>> Config::Match(std::string_view pattern) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::string, std::string>> result;
  for (const DirectiveSpec& spec : AllDirectives()) {
    if (spec.hidden) {
      if (EqualsIgnoreCase(pattern, spec.name)) {
        result.emplace_back(std::string(spec.name), Find(spec.name)->text);
      }
      continue;
    }
    if (GlobMatch(pattern, spec.name, /*nocase=*/true)) {
      result.emplace_back(std::string(spec.name), Find(spec.name)->text);
    }
    if (!spec.alias.empty() && GlobMatch(pattern, spec.alias, /*nocase=*/true)) {
      result.emplace_back(std::string(spec.alias), Find(spec.name)->text);
    }
  }
  return result;
}

absl::Status Config::Rewrite() {
  if (config_file_.empty()) return absl::FailedPreconditionError("no config file");
  std::ifstream in(config_file_);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  in.close();

  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, bool> written;
  std::ostringstream out;
  auto format_line = [&](const Value& value) {
    std::string text = value.text;
    if (value.spec->type == DirectiveType::kString &&
        (text.empty() || text.find_first_of(" \t\"'") != std::string::npos)) {
      text = "\"" + std::string(absl::CEscape(text)) + "\"";
    } else if (value.spec->type == DirectiveType::kSpecial && text.empty()) {
      text = "\"\"";  // save "" (no save points), as Redis writes it.
    }
    return StrCat(value.spec->name, " ", text);
  };
  for (const std::string& original : lines) {
    std::string_view trimmed = StripWhitespace(original);
    std::vector<std::string> words;
    if (trimmed.empty() || trimmed[0] == '#' || !protocol::SplitInlineArgs(trimmed, &words) ||
        words.empty()) {
      out << original << "\n";
      continue;
    }
    const Value* value = Find(AsciiLower(words[0]));
    if (value == nullptr) {
      out << original << "\n";  // Unknown lines are kept.
      continue;
    }
    // Keyed by the directive, not the name in the file: an alias line (slaveof) and the
    // directive's own name (replicaof) are the same directive.
    std::string name(value->spec->name);
    if (written[name]) continue;  // Repeated directives collapse into the first one.
    written[name] = true;
    out << format_line(*value) << "\n";
  }
  bool header = false;
  for (const DirectiveSpec& spec : AllDirectives()) {
    const Value* value = Find(spec.name);
    if (written[std::string(spec.name)] || !value->set_explicitly) continue;
    if (!header) {
      out << "# Generated by CONFIG REWRITE\n";
      header = true;
    }
    out << format_line(*value) << "\n";
  }
  std::string tmp = config_file_ + ".tmp";
  {
    std::ofstream file(tmp, std::ios::trunc);
    file << out.str();
    file.flush();
    if (!file) return absl::InternalError(StrCat("can't write ", tmp));
  }
  if (std::rename(tmp.c_str(), config_file_.c_str()) != 0) {
    return absl::InternalError(StrCat("rename failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace gigakv::server
