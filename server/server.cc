#include "server/server.h"

#include <malloc.h>

#include <algorithm>

namespace gigakv::server {
namespace {

int64_t AllocatedBytes() {
  // Everything the process has allocated through malloc, like Redis's used_memory (which asks
  // its allocator): heap chunks in use plus mmapped chunks.
  struct mallinfo2 info = mallinfo2();
  return static_cast<int64_t>(info.uordblks + info.hblkhd);
}

}  // namespace


Server::Server(Config& config, ServerOptions options) : config_(config) {
  StoreOptions store_options;
  store_options.shard_count = static_cast<uint32_t>(config_.GetInt("shards"));
  store_options.databases = static_cast<int>(config_.GetInt("databases"));
  store_options.clock = options.clock;
  store_ = std::make_unique<Store>(store_options);
  for (const CommandSpec* spec : commands_.all()) {
    command_stats_.emplace(spec, std::make_unique<CommandStats>());
  }
  start_time_ms_ = store_->NowMs();
  startup_used_memory_ = AllocatedBytes();
  used_memory_ = startup_used_memory_;
  peak_used_memory_ = startup_used_memory_;
  lastsave_s_ = start_time_ms_ / 1000;
  RefreshCachedConfig();
}

Server::~Server() = default;

void Server::RefreshCachedConfig() {
  password_set_.store(!config_.Get("requirepass").empty());
  maxmemory_.store(config_.GetInt("maxmemory"));
  lfu_.store(config_.Get("maxmemory-policy").find("lfu") != std::string::npos);
}

int64_t Server::UsedMemory(bool refresh) {
  if (refresh) {
    int64_t used = AllocatedBytes();
    used_memory_.store(used);
    int64_t peak = peak_used_memory_.load();
    while (used > peak && !peak_used_memory_.compare_exchange_weak(peak, used)) {
    }
  }
  return used_memory_.load(std::memory_order_relaxed);
}

CommandStats& Server::command_stats(const CommandSpec* spec) {
  return *command_stats_.at(spec);  // Built for every spec at construction; read-only after.
}

void Server::CountError(std::string_view code) {
  std::lock_guard<std::mutex> lock(error_mutex_);
  // Redis caps distinct error codes at 128 to bound memory.
  auto it = error_stats_.find(std::string(code));
  if (it != error_stats_.end()) {
    ++it->second;
  } else if (error_stats_.size() < 128) {
    error_stats_.emplace(std::string(code), 1);
  }
}

std::map<std::string, uint64_t> Server::ErrorStats() {
  std::lock_guard<std::mutex> lock(error_mutex_);
  return error_stats_;
}

void Server::ResetStats() {
  for (auto& [spec, stats] : command_stats_) {
    stats->calls = 0;
    stats->usec = 0;
    stats->rejected_calls = 0;
    stats->failed_calls = 0;
  }
  {
    std::lock_guard<std::mutex> lock(error_mutex_);
    error_stats_.clear();
  }
  stats_.total_connections_received = 0;
  stats_.total_commands_processed = 0;
  stats_.rejected_connections = 0;
  stats_.total_net_input_bytes = 0;
  stats_.total_net_output_bytes = 0;
  stats_.keyspace_hits = 0;
  stats_.keyspace_misses = 0;
  stats_.evicted_keys = 0;
  stats_.total_error_replies = 0;
  stats_.client_query_buffer_limit_disconnections = 0;
  stats_.client_output_buffer_limit_disconnections = 0;
  store_->ResetStats();
}

void Server::RegisterClient(const std::shared_ptr<ClientState>& client) {
  std::lock_guard<std::mutex> lock(clients_mutex_);
  clients_[client->id] = client;
  stats_.connected_clients.store(static_cast<int64_t>(clients_.size()));
}

void Server::UnregisterClient(uint64_t id) {
  std::lock_guard<std::mutex> lock(clients_mutex_);
  clients_.erase(id);
  stats_.connected_clients.store(static_cast<int64_t>(clients_.size()));
}

std::vector<std::shared_ptr<ClientState>> Server::Clients() {
  std::vector<std::shared_ptr<ClientState>> result;
  {
    std::lock_guard<std::mutex> lock(clients_mutex_);
    result.reserve(clients_.size());
    for (auto& [id, client] : clients_) result.push_back(client);
  }
  std::sort(result.begin(), result.end(), [](const auto& a, const auto& b) { return a->id < b->id; });
  return result;
}

std::shared_ptr<ClientState> Server::FindClient(uint64_t id) {
  std::lock_guard<std::mutex> lock(clients_mutex_);
  auto it = clients_.find(id);
  return it == clients_.end() ? nullptr : it->second;
}

void Server::Cron() {
  if (active_expire_enabled_.load()) {
    // Bounded work per tick: at most this many index slots examined; repeated while a good share
    // of what was examined had expired (like Redis's adaptive cycle).
    constexpr size_t kBudget = 20000;
    for (int round = 0; round < 16; ++round) {
      size_t removed = store_->ActiveExpireCycle(kBudget);
      if (removed < kBudget / 10) break;
    }
  }
  UsedMemory(/*refresh=*/true);
}

}  // namespace gigakv::server
