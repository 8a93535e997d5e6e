#include "server/transaction.h"

#include <algorithm>

#include "gigakv/numbers.h"
#include "gigakv/strings.h"
#include "server/command.h"

namespace gigakv::server {
namespace {

// The gate slot of the calling I/O thread (one server per I/O thread).
thread_local const TransactionGate* tls_gate = nullptr;
thread_local TransactionGate::SlotMutex* tls_slot = nullptr;
thread_local bool tls_slot_held = false;  // Inside a BatchScope (and not given up).
thread_local bool tls_exclusive = false;  // Inside an ExclusiveScope.

}  // namespace

void TransactionGate::RegisterThisThread() {
  std::lock_guard<std::mutex> lock(exec_mutex_);
  slots_.push_back(std::make_unique<Slot>());
  tls_gate = this;
  tls_slot = &slots_.back()->mutex;
}

TransactionGate::SlotMutex* TransactionGate::SlotOfThisThread() {
  return tls_gate == this ? tls_slot : nullptr;
}

TransactionGate::BatchScope::BatchScope(TransactionGate& gate)
    : gate_(gate), slot_(gate.SlotOfThisThread()) {
  if (slot_ == nullptr) return;
  if (gate_.exec_waiting_.load(std::memory_order_relaxed) > 0) {
    // Wait behind the EXEC(s) waiting for the slots (holding none ourselves).
    std::lock_guard<std::mutex> behind_exec(gate_.exec_mutex_);
  }
  slot_->lock();
  tls_slot_held = true;
}

TransactionGate::BatchScope::~BatchScope() {
  if (slot_ == nullptr) return;
  tls_slot_held = false;
  slot_->unlock();
}

TransactionGate::ExclusiveScope::ExclusiveScope(TransactionGate& gate)
    : gate_(gate), own_slot_(tls_slot_held ? gate.SlotOfThisThread() : nullptr) {
  // Give up our own slot first: another EXEC may hold the exec mutex and wait for it.
  if (own_slot_ != nullptr) own_slot_->unlock();
  gate_.exec_waiting_.fetch_add(1, std::memory_order_relaxed);
  gate_.exec_mutex_.lock();
  for (auto& slot : gate_.slots_) slot->mutex.lock();
  gate_.exec_waiting_.fetch_sub(1, std::memory_order_relaxed);
  tls_exclusive = true;
}

TransactionGate::ExclusiveScope::~ExclusiveScope() {
  tls_exclusive = false;
  for (auto it = gate_.slots_.rbegin(); it != gate_.slots_.rend(); ++it) (*it)->mutex.unlock();
  gate_.exec_mutex_.unlock();
  if (own_slot_ != nullptr) own_slot_->lock();
}

TransactionGate::ReleasedScope::ReleasedScope()
    : slot_(tls_slot_held && !tls_exclusive ? tls_slot : nullptr) {
  if (slot_ == nullptr) return;
  tls_slot_held = false;
  slot_->unlock();
}

TransactionGate::ReleasedScope::~ReleasedScope() {
  if (slot_ == nullptr) return;
  slot_->lock();
  tls_slot_held = true;
}

bool TransactionGate::ThisThreadIsExclusive() { return tls_exclusive; }

void WatchRegistry::Watch(uint64_t client_id, int db, std::string_view key, int64_t expire_ms) {
  KeyRef ref{db, std::string(key)};
  std::lock_guard<std::mutex> lock(mutex_);
  ClientWatches& mine = clients_[client_id];
  for (const auto& [watched, expire] : mine.keys) {
    if (watched == ref) return;
  }
  watchers_[ref].push_back(client_id);
  mine.keys.emplace_back(std::move(ref), expire_ms);
  watched_entries_.fetch_add(1, std::memory_order_relaxed);
}

void WatchRegistry::UnwatchAll(uint64_t client_id) {
  if (!active()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = clients_.find(client_id);
  if (found == clients_.end()) return;
  for (const auto& [ref, expire] : found->second.keys) {
    auto entry = watchers_.find(ref);
    if (entry == watchers_.end()) continue;
    std::vector<uint64_t>& ids = entry->second;
    ids.erase(std::remove(ids.begin(), ids.end(), client_id), ids.end());
    if (ids.empty()) watchers_.erase(entry);
    watched_entries_.fetch_sub(1, std::memory_order_relaxed);
  }
  clients_.erase(found);
}

bool WatchRegistry::IsDirty(uint64_t client_id, int64_t now_ms) {
  if (!active()) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = clients_.find(client_id);
  if (found == clients_.end()) return false;
  if (found->second.dirty) return true;
  for (const auto& [ref, expire_ms] : found->second.keys) {
    if (expire_ms > 0 && expire_ms <= now_ms) return true;
  }
  return false;
}

void WatchRegistry::TouchLocked(const KeyRef& ref) {
  auto entry = watchers_.find(ref);
  if (entry == watchers_.end()) return;
  for (uint64_t id : entry->second) clients_[id].dirty = true;
}

void WatchRegistry::Touch(int db, std::string_view key) {
  if (!active()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  TouchLocked(KeyRef{db, std::string(key)});
}

void WatchRegistry::TouchDbWhere(int db,
                                 const std::function<bool(int db, std::string_view key)>& changed) {
  if (!active()) return;
  std::vector<KeyRef> candidates;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [ref, ids] : watchers_) {
      if (db < 0 || ref.db == db) candidates.push_back(ref);
    }
  }
  for (const KeyRef& ref : candidates) {
    if (changed(ref.db, ref.key)) Touch(ref.db, ref.key);
  }
}

void WatchRegistry::TouchEffect(int db, const std::vector<std::string>& effect,
                                const CommandTable& commands) {
  if (!active() || effect.empty()) return;
  const std::string name = AsciiUpper(effect[0]);
  int64_t other_db = 0;
  if (name == "FLUSHALL" || name == "FLUSHDB" || name == "SWAPDB") {
    return;  // Their commands called TouchDbWhere before the change.
  } else if (name == "MOVE" && effect.size() == 3) {
    Touch(db, effect[1]);
    if (ParseInt64(effect[2], &other_db)) Touch(static_cast<int>(other_db), effect[1]);
  } else if (name == "COPY" && effect.size() >= 3) {
    // COPY src dst [DB n] [REPLACE]: only dst changes, possibly in another database.
    int target = db;
    for (size_t i = 3; i + 1 < effect.size(); ++i) {
      if (AsciiUpper(effect[i]) == "DB" && ParseInt64(effect[i + 1], &other_db)) {
        target = static_cast<int>(other_db);
      }
    }
    Touch(target, effect[2]);
  } else if (const CommandSpec* spec = commands.Find(name);
             spec != nullptr && spec->first_key > 0) {
    const int argc = static_cast<int>(effect.size());
    const int last = spec->last_key < 0 ? argc + spec->last_key : spec->last_key;
    const int step = std::max(spec->key_step, 1);
    for (int i = spec->first_key; i <= last && i < argc; i += step) Touch(db, effect[i]);
  }
}

}  // namespace gigakv::server
