#include "server/slowlog.h"

#include <algorithm>
#include <utility>

#include "gigakv/strings.h"
#include "server/command.h"
#include "server/migration_links.h"

namespace gigakv::server {
namespace {

constexpr std::string_view kRedacted = "(redacted)";

// Whether argument `index` holds a secret that must not reach the slow log (Redis redacts the
// same ones: AUTH's arguments, HELLO's AUTH credentials, CONFIG SET values of password
// directives).
bool IsSecret(const std::vector<std::string_view>& args, size_t index) {
  if (IsMigrateCredential(args, index)) return true;
  if (EqualsIgnoreCase(args[0], "auth")) return index >= 1;
  if (EqualsIgnoreCase(args[0], "hello")) {
    // HELLO protover AUTH username password [SETNAME name]
    for (size_t i = 2; i < index; ++i) {
      if (EqualsIgnoreCase(args[i], "auth") && index - i <= 2) return true;
    }
    return false;
  }
  if (EqualsIgnoreCase(args[0], "config") && args.size() > 1 && EqualsIgnoreCase(args[1], "set") &&
      index >= 3 && (index - 3) % 2 == 0) {
    std::string_view name = args[index - 1];
    for (std::string_view secret :
         {"requirepass", "masterauth", "tls-key-file-pass", "tls-client-key-file-pass"}) {
      if (EqualsIgnoreCase(name, secret)) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> SlowLog::EntryArgs(const std::vector<std::string_view>& args) {
  size_t kept = std::min(args.size(), kMaxArgs);
  std::vector<std::string> out;
  out.reserve(kept);
  for (size_t i = 0; i < kept; ++i) {
    if (kept != args.size() && i == kept - 1) {
      out.push_back(StrCat("... (", args.size() - kept + 1, " more arguments)"));
    } else if (IsSecret(args, i)) {
      out.emplace_back(kRedacted);
    } else if (args[i].size() > kMaxArgBytes) {
      out.push_back(StrCat(args[i].substr(0, kMaxArgBytes), "... (", args[i].size() - kMaxArgBytes,
                           " more bytes)"));
    } else {
      out.emplace_back(args[i]);
    }
  }
  return out;
}

void SlowLog::Push(const std::vector<std::string_view>& args, int64_t duration_us,
                   int64_t unix_seconds, std::string client_addr, std::string client_name,
                   size_t max_len) {
  SlowLogEntry entry;
  entry.unix_seconds = unix_seconds;
  entry.duration_us = duration_us;
  entry.args = EntryArgs(args);
  entry.client_addr = std::move(client_addr);
  entry.client_name = std::move(client_name);
  std::lock_guard<std::mutex> lock(mutex_);
  entry.id = next_id_++;
  entries_.push_front(std::move(entry));
  while (entries_.size() > max_len) entries_.pop_back();
}

std::vector<SlowLogEntry> SlowLog::Get(int64_t count) const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = count < 0 ? entries_.size() : std::min(entries_.size(), static_cast<size_t>(count));
  return std::vector<SlowLogEntry>(entries_.begin(), entries_.begin() + static_cast<long>(n));
}

size_t SlowLog::Len() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

void SlowLog::Reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
}

bool SlowLog::NeedsTiming(uint32_t command_flags, const std::vector<std::string_view>& args,
                          int64_t threshold_us) {
  if (command_flags & kSkipSlowlog) return false;
  // While the log is off only admin commands are timed: CONFIG SET may turn it on, and Redis
  // compares the time with the threshold it finds after running the command.
  if (threshold_us < 0) return (command_flags & kAdmin) != 0;
  if (threshold_us == 0 || !(command_flags & (kFast | kBoundedWork))) return true;
  constexpr uint64_t kNsPerArg = 1000;
  constexpr uint64_t kSafetyFactor = 10;
  uint64_t bytes = 0;
  for (std::string_view arg : args) bytes += arg.size();
  const uint64_t estimate_ns = kSafetyFactor * (kNsPerArg * args.size() + bytes);
  return estimate_ns >= static_cast<uint64_t>(threshold_us) * 1000;
}

}  // namespace gigakv::server
