#include "server/tracking.h"

#include <algorithm>
#include <optional>
#include <random>

#include "absl/hash/hash.h"
#include "server/client_registry.h"
#include "server/client_state.h"
#include "server/command.h"
#include "server/command_keys.h"
#include "server/pubsub.h"

namespace gigakv::server {
namespace {

absl::string_view ToAbsl(std::string_view view) { return {view.data(), view.size()}; }

void AppendBulk(std::string* out, std::string_view value) {
  out->append("$").append(std::to_string(value.size())).append("\r\n");
  out->append(value).append("\r\n");
}

// The keys' part of an invalidation for one key: *1, then the key.
std::shared_ptr<const std::string> OneKey(std::string_view key) {
  auto payload = std::make_shared<std::string>("*1\r\n");
  AppendBulk(payload.get(), key);
  return payload;
}

}  // namespace

ClientTracking::ClientTracking(ChangeStream& changes, PubSub& pubsub, ClientRegistry& clients)
    : changes_(changes), pubsub_(pubsub), clients_(clients) {
  changes_.AddConsumer(this);
}

ClientTracking::~ClientTracking() { changes_.RemoveConsumer(this); }

ClientTracking::Shard& ClientTracking::ShardOf(std::string_view key) {
  return shards_[absl::HashOf(ToAbsl(key)) % kShards];
}

void ClientTracking::ChangeClientCount(int delta) {
  // Count and interest change together: a client leaving on one thread while another starts
  // tracking on another must not leave the consumer detached.
  std::lock_guard lock(count_mutex_);
  clients_count_.fetch_add(delta, std::memory_order_relaxed);
  UpdateInterestLocked();
}

void ClientTracking::UpdateInterestLocked() {
  // Entries left by clients that stopped tracking are kept up to date too (as in Redis, they
  // go with their key's next change), so the consumer stays attached until the table is empty.
  const bool interested = clients_count_.load(std::memory_order_relaxed) > 0 ||
                          total_keys_.load(std::memory_order_relaxed) > 0;
  if (interested != interested_) {
    interested_ = interested;
    changes_.SetInterest(this, interested ? Interest::kKeys : Interest::kNone);
  }
}

void ClientTracking::ForgetKeys(int64_t keys, int64_t items) {
  total_items_.fetch_sub(items, std::memory_order_relaxed);
  if (total_keys_.fetch_sub(keys, std::memory_order_relaxed) == keys &&
      clients_count_.load(std::memory_order_relaxed) == 0) {
    std::lock_guard lock(count_mutex_);
    UpdateInterestLocked();
  }
}

const std::string* ClientTracking::OverlappingPrefix(const ClientState& client,
                                                     std::string_view prefix) {
  for (const std::string& existing : client.tracking_prefixes) {
    const size_t common = std::min(existing.size(), prefix.size());
    if (existing.compare(0, common, prefix.substr(0, common)) == 0) return &existing;
  }
  return nullptr;
}

void ClientTracking::Enable(ClientState& client, uint64_t redirect, uint32_t flags,
                            const std::vector<std::string>& prefixes) {
  const uint32_t before = client.tracking.load(std::memory_order_relaxed);
  client.tracking_redirect.store(redirect, std::memory_order_relaxed);
  client.tracking_resp.store(client.resp, std::memory_order_relaxed);
  client.tracking.store(kTrackingOn | flags, std::memory_order_release);
  if (!(before & kTrackingOn)) ChangeClientCount(1);
  if (!(flags & kTrackingBcast)) return;
  std::lock_guard lock(prefixes_mutex_);
  auto add = [&](const std::string& name) {
    auto at =
        std::lower_bound(client.tracking_prefixes.begin(), client.tracking_prefixes.end(), name);
    if (at != client.tracking_prefixes.end() && *at == name) return;
    client.tracking_prefixes.insert(at, name);
    prefixes_[name].clients.push_back(client.id);
  };
  if (prefixes.empty()) add("");
  for (const std::string& name : prefixes) add(name);
  has_prefixes_.store(!prefixes_.empty(), std::memory_order_relaxed);
}

void ClientTracking::Disable(ClientState& client) {
  const uint32_t before = client.tracking.exchange(0, std::memory_order_acq_rel);
  client.tracking_caching = false;
  if (!client.tracking_prefixes.empty()) {
    std::lock_guard lock(prefixes_mutex_);
    for (const std::string& name : client.tracking_prefixes) {
      auto it = prefixes_.find(name);
      if (it == prefixes_.end()) continue;
      std::vector<uint64_t>& ids = it->second.clients;
      ids.erase(std::remove(ids.begin(), ids.end(), client.id), ids.end());
      if (ids.empty()) prefixes_.erase(it);
    }
    has_prefixes_.store(!prefixes_.empty(), std::memory_order_relaxed);
    client.tracking_prefixes.clear();
  }
  if (before & kTrackingOn) ChangeClientCount(-1);
}

int64_t ClientTracking::total_prefixes() const {
  std::lock_guard lock(prefixes_mutex_);
  return static_cast<int64_t>(prefixes_.size());
}

void ClientTracking::RememberKeys(ClientState& client, const CommandSpec& spec,
                                  const std::vector<std::string_view>& args) {
  const uint32_t flags = client.tracking.load(std::memory_order_relaxed);
  if (!(spec.flags & kReadonly) || (spec.flags & kPubSub)) return;
  // A read-only script is not remembered itself, only the commands it runs (as Redis's call()).
  if (spec.name == "eval_ro" || spec.name == "evalsha_ro" || spec.name == "fcall_ro") return;
  if ((flags & kTrackingOptIn) && !client.tracking_caching) return;
  if ((flags & kTrackingOptOut) && client.tracking_caching) return;
  std::vector<KeyUse> uses;
  std::string_view error;
  if (!FindKeyUses(spec, args, &uses, &error)) return;
  for (const KeyUse& use : uses) {
    const std::string_view key = args[use.position];
    Shard& shard = ShardOf(key);
    std::lock_guard lock(shard.mutex);
    auto [it, added] = shard.keys.try_emplace(ToAbsl(key));
    if (added) total_keys_.fetch_add(1, std::memory_order_relaxed);
    std::vector<uint64_t>& ids = it->second;
    if (std::find(ids.begin(), ids.end(), client.id) == ids.end()) {
      ids.push_back(client.id);
      total_items_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void ClientTracking::OnChange(const ChangeRecord& record) {
  if (record.scope != ChangeScope::kKeys) {
    // FLUSHDB, FLUSHALL; SWAPDB invalidates nothing (Redis 7.0 forgets it).
    if (record.cause == ChangeCause::kFlush) InvalidateAll();
    return;
  }
  if (!record.signals_watchers) return;  // Redis does not signal it: no invalidation either.
  const uint64_t executing = ExecutingClientId();
  const uint64_t modifier = record.cause == ChangeCause::kCommand ? executing : 0;
  const bool bcast = has_prefixes_.load(std::memory_order_relaxed);
  for (const ChangedKey& changed : record.keys) {
    if (bcast) CollectForBroadcast(changed.key, modifier);
    InvalidateKey(changed.key, executing);
  }
}

void ClientTracking::InvalidateKey(std::string_view key, uint64_t executing) {
  std::vector<uint64_t> ids;
  {
    Shard& shard = ShardOf(key);
    std::lock_guard lock(shard.mutex);
    auto it = shard.keys.find(ToAbsl(key));
    if (it == shard.keys.end()) return;
    ids = std::move(it->second);
    shard.keys.erase(it);
  }
  ForgetKeys(1, static_cast<int64_t>(ids.size()));
  std::shared_ptr<const std::string> payload;
  for (uint64_t id : ids) {
    std::shared_ptr<ClientState> target = clients_.FindClient(id);
    if (target == nullptr) continue;
    const uint32_t flags = target->tracking.load(std::memory_order_acquire);
    // A client that switched to BCAST since it read the key is not told (as Redis).
    if (!(flags & kTrackingOn) || (flags & kTrackingBcast)) continue;
    if ((flags & kTrackingNoLoop) && id == executing) continue;
    if (payload == nullptr) payload = OneKey(key);
    Send(target, payload);
  }
}

void ClientTracking::Send(const std::shared_ptr<ClientState>& target,
                          std::shared_ptr<const std::string> payload) {
  const uint64_t redirect = target->tracking_redirect.load(std::memory_order_relaxed);
  if (redirect == 0) {
    // RESP2 without REDIRECT: nowhere to send it (as Redis).
    if (target->tracking_resp.load(std::memory_order_relaxed) < 3) return;
    pubsub_.Deliver(target, {std::move(payload), PubSubDelivery::Kind::kInvalidation});
    return;
  }
  std::shared_ptr<ClientState> receiver = clients_.FindClient(redirect);
  if (receiver == nullptr) {
    target->tracking.fetch_or(kTrackingBrokenRedirect, std::memory_order_relaxed);
    auto id_frame = std::make_shared<std::string>(":" + std::to_string(redirect) + "\r\n");
    pubsub_.Deliver(target, {std::move(id_frame), PubSubDelivery::Kind::kRedirectBroken});
    return;
  }
  pubsub_.Deliver(receiver, {std::move(payload), PubSubDelivery::Kind::kRedirectedInvalidation});
}

void ClientTracking::InvalidateAll() {
  if (clients_count_.load(std::memory_order_relaxed) > 0) {
    // The null as the tracking client's protocol writes it (also when redirected, as Redis).
    static const auto kNull2 = std::make_shared<const std::string>("$-1\r\n");
    static const auto kNull3 = std::make_shared<const std::string>("_\r\n");
    for (const std::shared_ptr<ClientState>& client : clients_.Clients()) {
      if (!(client->tracking.load(std::memory_order_acquire) & kTrackingOn)) continue;
      Send(client, client->tracking_resp.load(std::memory_order_relaxed) >= 3 ? kNull3 : kNull2);
    }
  }
  int64_t keys = 0, items = 0;
  for (Shard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    keys += static_cast<int64_t>(shard.keys.size());
    for (const auto& [key, ids] : shard.keys) items += static_cast<int64_t>(ids.size());
    shard.keys.clear();
  }
  if (keys > 0) ForgetKeys(keys, items);
}

void ClientTracking::CollectForBroadcast(std::string_view key, uint64_t modifier) {
  std::lock_guard lock(prefixes_mutex_);
  for (auto& [name, prefix] : prefixes_) {
    if (name.size() > key.size() || key.compare(0, name.size(), name) != 0) continue;
    prefix.changed.insert_or_assign(std::string(key), modifier);
    broadcasts_pending_.store(true, std::memory_order_relaxed);
  }
}

void ClientTracking::FlushBroadcasts() {
  if (!broadcasts_pending_.exchange(false, std::memory_order_acq_rel)) return;
  // Taken out under the lock, sent outside it.
  std::vector<std::pair<std::vector<uint64_t>, std::map<std::string, uint64_t, std::less<>>>>
      batches;
  {
    std::lock_guard lock(prefixes_mutex_);
    for (auto& [name, prefix] : prefixes_) {
      if (prefix.changed.empty()) continue;
      batches.emplace_back(prefix.clients, std::move(prefix.changed));
      prefix.changed.clear();
    }
  }
  for (const auto& [ids, changed] : batches) {
    // The array of keys, in key order; a NOLOOP client's without the keys it changed itself.
    auto build = [&](uint64_t excluded) {
      size_t count = 0;
      std::string body;
      for (const auto& [key, modifier] : changed) {
        if (excluded != 0 && modifier == excluded) continue;
        AppendBulk(&body, key);
        ++count;
      }
      if (count == 0) return std::shared_ptr<const std::string>();
      return std::make_shared<const std::string>("*" + std::to_string(count) + "\r\n" + body);
    };
    std::shared_ptr<const std::string> common = build(0);
    for (uint64_t id : ids) {
      std::shared_ptr<ClientState> client = clients_.FindClient(id);
      if (client == nullptr) continue;
      const uint32_t flags = client->tracking.load(std::memory_order_acquire);
      if (!(flags & kTrackingOn) || !(flags & kTrackingBcast)) continue;
      std::shared_ptr<const std::string> payload = (flags & kTrackingNoLoop) ? build(id) : common;
      if (payload != nullptr) Send(client, std::move(payload));
    }
  }
}

void ClientTracking::EnforceLimit(int64_t max_keys) {
  if (max_keys <= 0 || total_keys() <= max_keys) {
    if (limit_rounds_.load(std::memory_order_relaxed) != 0) {
      limit_rounds_.store(0, std::memory_order_relaxed);
    }
    return;
  }
  // Redis's effort: 100 keys, 100 more for each round that ended still over the limit.
  int effort = 100 * (limit_rounds_.load(std::memory_order_relaxed) + 1);
  thread_local std::mt19937_64 random(std::random_device{}());
  while (effort-- > 0 && total_keys() > max_keys) {
    // From a random shard on, the first non-empty one: every shard is tried (random probes
    // alone missed a table with few keys left now and then, leaving it over the limit).
    std::optional<std::string> victim;
    const size_t start = random() % kShards;
    for (size_t tries = 0; tries < kShards && !victim; ++tries) {
      Shard& shard = shards_[(start + tries) % kShards];
      std::lock_guard lock(shard.mutex);
      if (shard.keys.empty()) continue;
      auto it = shard.keys.begin();
      std::advance(it, static_cast<long>(random() % std::min<size_t>(shard.keys.size(), 16)));
      victim = it->first;
    }
    if (!victim) break;
    InvalidateKey(*victim, /*executing=*/0);
  }
  if (total_keys() > max_keys) {
    limit_rounds_.fetch_add(1, std::memory_order_relaxed);
  } else {
    limit_rounds_.store(0, std::memory_order_relaxed);
  }
}

}  // namespace gigakv::server
