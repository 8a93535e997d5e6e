// The connected clients: registry, CLIENT PAUSE and MONITOR (see client_registry.h).
#include "server/client_registry.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_format.h"
#include "gigakv/numbers.h"
#include "gigakv/strings.h"
#include "server/migration_links.h"

namespace gigakv::server {

ClientRegistry::ClientRegistry(Store& store, Stats& stats, WatchRegistry& watches)
    : store_(store), stats_(stats), watches_(watches) {}

void ClientRegistry::Register(const std::shared_ptr<ClientState>& client) {
  std::lock_guard<std::mutex> lock(clients_mutex_);
  clients_[client->id] = client;
  stats_.connected_clients.store(static_cast<int64_t>(clients_.size()));
}

void ClientRegistry::Unregister(uint64_t id) {
  watches_.UnwatchAll(id);
  std::lock_guard<std::mutex> lock(clients_mutex_);
  clients_.erase(id);
  stats_.connected_clients.store(static_cast<int64_t>(clients_.size()));
}

std::vector<std::shared_ptr<ClientState>> ClientRegistry::Clients() {
  std::vector<std::shared_ptr<ClientState>> result;
  {
    std::lock_guard<std::mutex> lock(clients_mutex_);
    result.reserve(clients_.size());
    for (auto& [id, client] : clients_) result.push_back(client);
  }
  std::sort(result.begin(), result.end(),
            [](const auto& a, const auto& b) { return a->id < b->id; });
  return result;
}

std::shared_ptr<ClientState> ClientRegistry::FindClient(uint64_t id) {
  std::lock_guard<std::mutex> lock(clients_mutex_);
  auto it = clients_.find(id);
  return it == clients_.end() ? nullptr : it->second;
}

void ClientRegistry::PauseClients(int64_t end_ms, PauseType type) {
  {
    std::lock_guard<std::mutex> lock(pause_mutex_);
    if (!Paused()) ClearPauseLocked();  // A pause that ended is forgotten, type and all.
    if (static_cast<int>(type) > pause_type_.load()) pause_type_.store(static_cast<int>(type));
    if (end_ms > pause_end_ms_.load()) pause_end_ms_.store(end_ms);
    store_.SetExpiryPaused(true);
  }
  UnpauseWaiters();  // Those that may now run (ALL became WRITE...) or wait on a new end.
}

void ClientRegistry::UnpauseClients() {
  {
    std::lock_guard<std::mutex> lock(pause_mutex_);
    ClearPauseLocked();
  }
  UnpauseWaiters();
}

void ClientRegistry::ForgetEndedPause() {
  if (pause_type_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(pause_mutex_);
  if (pause_type_.load() != 0 && !Paused()) ClearPauseLocked();
}

void ClientRegistry::ClearPauseLocked() {
  pause_type_.store(static_cast<int>(PauseType::kNone));
  pause_end_ms_.store(0);
  store_.SetExpiryPaused(false);
}

void ClientRegistry::UnpauseWaiters() {
  for (const std::shared_ptr<ClientState>& client : Clients()) {
    if (client->paused.load()) client->Post(ClientMessage::Kind::kResume);
  }
}

bool ClientRegistry::PostponesUnderPause(const CommandSpec& spec, const ClientState& client) const {
  if (!client.has_outbox() || !Paused()) return false;
  if (pause_type_.load(std::memory_order_relaxed) == static_cast<int>(PauseType::kAll)) {
    return true;
  }
  // WRITE: commands that write or may replicate, and EXEC of a transaction that queued one.
  constexpr uint32_t kHeld = kWrite | kMayReplicate;
  return (spec.flags & kHeld) || (spec.name == "exec" && (client.multi.flags & kHeld));
}

void ClientRegistry::AddMonitor(const std::shared_ptr<ClientState>& client) {
  std::lock_guard<std::mutex> lock(monitors_mutex_);
  if (client->monitor.exchange(true)) return;
  monitors_.push_back(client);
  monitor_count_.store(static_cast<int>(monitors_.size()), std::memory_order_relaxed);
}

void ClientRegistry::RemoveMonitor(uint64_t client_id) {
  std::lock_guard<std::mutex> lock(monitors_mutex_);
  for (auto it = monitors_.begin(); it != monitors_.end(); ++it) {
    if ((*it)->id != client_id) continue;
    (*it)->monitor.store(false);
    monitors_.erase(it);
    break;
  }
  monitor_count_.store(static_cast<int>(monitors_.size()), std::memory_order_relaxed);
}

namespace {

// Redis's sdscatrepr: a quoted string with \\ \" \n \r \t \a \b escaped and other bytes
// outside printable ASCII as \xhh.
void AppendQuotedRepr(std::string* out, std::string_view text) {
  out->push_back('"');
  for (unsigned char c : text) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '"':
        out->append("\\\"");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\a':
        out->append("\\a");
        break;
      case '\b':
        out->append("\\b");
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out->push_back(static_cast<char>(c));
        } else {
          absl::StrAppendFormat(out, "\\x%02x", c);
        }
    }
  }
  out->push_back('"');
}

// Arguments MONITOR shows as "(redacted)", as Redis 7.0 does: AUTH's, and HELLO's AUTH pair.
// Only where Redis gets to redacting them: AUTH with at most 2 arguments, HELLO with protocol
// version 2 or 3.
bool IsRedacted(const std::vector<std::string_view>& args, size_t index) {
  if (IsMigrateCredential(args, index)) return true;
  if (EqualsIgnoreCase(args[0], "auth")) return index >= 1 && args.size() <= 3;
  int64_t version = 0;
  if (!EqualsIgnoreCase(args[0], "hello") || args.size() < 2 || !ParseInt64(args[1], &version) ||
      version < 2 || version > 3) {
    return false;
  }
  // HELLO's options as its parser walks them: AUTH user pass, SETNAME name.
  for (size_t i = 2; i < args.size() && i < index; ++i) {
    const size_t more = args.size() - 1 - i;
    if (EqualsIgnoreCase(args[i], "auth") && more >= 2) {
      if (index == i + 1 || index == i + 2) return true;
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "setname") && more >= 1) {
      ++i;
    } else {
      return false;  // A syntax error ends HELLO's parsing there.
    }
  }
  return false;
}

}  // namespace

void ClientRegistry::FeedMonitors(const ClientState& client,
                                  const std::vector<std::string_view>& args,
                                  protocol::ReplyBuilder* own_reply) {
  int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  std::string line = absl::StrFormat("+%d.%06d [%d %s]", now_us / 1000000, now_us % 1000000,
                                     client.db.load(std::memory_order_relaxed), client.addr);
  for (size_t i = 0; i < args.size(); ++i) {
    line.push_back(' ');
    AppendQuotedRepr(&line, IsRedacted(args, i) ? std::string_view("(redacted)") : args[i]);
  }
  line.append("\r\n");
  std::lock_guard<std::mutex> lock(monitors_mutex_);
  for (const std::shared_ptr<ClientState>& monitor : monitors_) {
    if (monitor.get() == &client && own_reply != nullptr) {
      own_reply->buffer().append(line);  // Right behind the command's reply, as in Redis.
    } else {
      monitor->Post(ClientMessage::Kind::kPushOutput, line);
    }
  }
}

}  // namespace gigakv::server
