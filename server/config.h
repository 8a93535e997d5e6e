// Server configuration: the directives gigakv understands, in redis.conf syntax, from a config
// file, the command line (`--name value ...`) and CONFIG SET.
//
// File grammar (as redis.conf): one directive per line, `name arg [arg...]`; blank lines and
// lines starting with '#' are ignored; arguments may be quoted like redis-cli input ("..." with
// escapes, '...'). Names are case-insensitive. A later directive overrides an earlier one.
//
// Threading: all methods are thread-safe (one mutex); numeric values are also mirrored in
// atomics so hot paths can read them without locking (GetInt).
// Errors: absl::Status with Redis's reason text ("argument couldn't be parsed into an integer").
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gigakv::server {

enum class DirectiveType { kInt, kMemory, kBool, kEnum, kString, kSpecial };

struct DirectiveSpec {
  std::string_view name;
  DirectiveType type;
  std::string_view default_value;
  int64_t min = 0;
  int64_t max = INT64_MAX;
  std::vector<std::string_view> enum_values = {};
  bool mutable_at_runtime = true;
  std::string_view help = "";   // One line, for docs and conf generation.
  std::string_view alias = "";  // Another accepted name (Redis 7.0's *-ziplist-* names).
  // Redis's HIDDEN_CONFIG (test knobs): CONFIG GET shows it only when asked by its exact name.
  bool hidden = false;
};

// The full table of supported directives, in documentation order.
const std::vector<DirectiveSpec>& AllDirectives();
// The directive named `name` (case-insensitive), or nullptr.
const DirectiveSpec* FindDirective(std::string_view name);
// Whether the directive takes several words (save 900 1, client-output-buffer-limit...):
// CONFIG SET then splits its one value on spaces, as Redis does for these only.
bool IsMultiWordDirective(std::string_view name);

class Config {
 public:
  Config();

  // Applies `name args...`. `from_config_set` enforces mutability; without it (config file,
  // command line) a `save` line adds to the save points set before it, as in Redis. Unknown names
  // fail with NotFound; bad values with InvalidArgument carrying Redis's reason.
  absl::Status Set(std::string_view name, const std::vector<std::string>& args,
                   bool from_config_set);
  absl::Status SetOne(std::string_view name, std::string_view value, bool from_config_set) {
    return Set(name, {std::string(value)}, from_config_set);
  }
  // Reads a config file; errors name "file:line" and the offending line. `include path` lines
  // (a file or a glob pattern, as in Redis) read other files in their place.
  absl::Status LoadFile(const std::string& path);
  // Applies "--name value..." pairs from the command line (argv after the optional file).
  absl::Status ApplyArgs(const std::vector<std::string>& args);
  // Rewrites the config file in place: existing directive lines get their current values,
  // comments are kept, changed directives absent from the file are appended.
  absl::Status Rewrite();

  // The current value as CONFIG GET prints it (memory values in bytes, bools yes/no).
  std::string Get(std::string_view name) const;
  int64_t GetInt(std::string_view name) const;
  bool GetBool(std::string_view name) const { return GetInt(name) != 0; }
  // (name, value) pairs whose names match a glob, in table order.
  std::vector<std::pair<std::string, std::string>> Match(std::string_view pattern) const;

  const std::string& config_file() const { return config_file_; }
  void set_config_file(std::string path) { config_file_ = std::move(path); }
  bool IsDefaultBind() const;

  // Appliers make a CONFIG SET take effect live (log level, listening sockets...). Each is called
  // with the changed directive's name after the new value is stored; an error makes CONFIG SET
  // restore the old values and fail with that message. Register before serving clients.
  using Applier = std::function<absl::Status(std::string_view name)>;
  void AddApplier(Applier applier) { appliers_.push_back(std::move(applier)); }
  absl::Status ApplyChange(std::string_view name) const {
    for (const Applier& applier : appliers_) {
      absl::Status status = applier(name);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

 private:
  struct Value {
    const DirectiveSpec* spec;
    std::string text;                // Canonical text form (what CONFIG GET prints).
    std::atomic<int64_t> number{0};  // Int/memory/bool/enum index.
    bool set_explicitly = false;
  };
  absl::Status SetLocked(Value& value, const std::vector<std::string>& args);
  absl::Status LoadFileContents(const std::string& path, int depth);
  Value* Find(std::string_view name);
  const Value* Find(std::string_view name) const;

  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Value>, std::less<>> values_;
  std::string config_file_;
  std::vector<Applier> appliers_;
};

// Parses Redis memory units: "100", "1k" (1000), "1kb" (1024), "1m", "1mb", "1g", "1gb".
bool ParseMemory(std::string_view text, int64_t* bytes);

// The CPUs the process may use (affinity mask, cgroup v2 CPU quota): io-threads' default.
int UsableCpus();

}  // namespace gigakv::server
