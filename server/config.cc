#include "server/config.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gigakv/glob.h"
#include "gigakv/numbers.h"
#include "gigakv/strings.h"
#include "protocol/request_parser.h"

namespace gigakv::server {
namespace {

constexpr int64_t kMb = 1024 * 1024;

std::string DefaultIoThreads() {
  unsigned cores = std::thread::hardware_concurrency();
  return std::to_string(cores == 0 ? 1 : cores);
}

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

}  // namespace

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
       "I/O threads, each running its own event loop and executing commands (default: cores)."},
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
       "Only 'no' is supported: run in the foreground under a supervisor."},
      {"pidfile", DirectiveType::kString, "", 0, 0, {}, false, "Write the pid here if set."},
      {"hz",
       DirectiveType::kInt,
       "10",
       1,
       500,
       {},
       true,
       "Background task frequency (active expiry, timeouts) per second."},
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
       64,
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
       "",
       0,
       0,
       {},
       true,
       "Accepted for compatibility and reported by CONFIG GET; gigakv takes no RDB snapshots "
       "(durability comes from its log, without fork)."},
      {"appendonly",
       DirectiveType::kBool,
       "no",
       0,
       1,
       {},
       true,
       "The append-only log. Only 'no' until the log lands; 'yes' is refused rather than "
       "silently ignored."},
      {"shards",
       DirectiveType::kInt,
       "1024",
       1,
       16384,
       {},
       false,
       "gigakv: keyspace shards (power of two); each has its own lock and arena."},
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
      if (spec.name == "daemonize" && lower == "yes") {
        return invalid("daemonize yes is not supported: run gigakv in the foreground");
      }
      if (spec.name == "appendonly" && lower == "yes") {
        return invalid("appendonly yes is not available in this build yet");
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
      if (spec.name == "dir") {
        if (::chdir(args[0].c_str()) != 0) return invalid(std::strerror(errno));
      }
      value.text = args[0];
      break;
    case DirectiveType::kSpecial:
      if (spec.name == "save") {
        value.text = Join(args, " ");
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
        std::vector<std::string> split;
        for (const std::string& arg : args) {
          for (const std::string& part : SplitNonEmpty(arg, ' ')) {
            split.emplace_back(part);
          }
        }
        std::string error;
        if (!ParseOutputBufferLimits(split, &limits, &error)) return invalid(error);
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
  return SetLocked(*value, args);
}

absl::Status Config::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        StrCat("Fatal error, can't open config file '", path, "': ", std::strerror(errno)));
  }
  config_file_ = path;
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
    if (name == "include") return fail("include is not supported");
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
    std::string name = AsciiLower(words[0]);
    const Value* value = Find(name);
    if (value == nullptr || written[name]) {
      // Unknown lines are kept; repeated directives collapse into the first one.
      if (value == nullptr) out << original << "\n";
      continue;
    }
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
