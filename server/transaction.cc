#include "server/transaction.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "server/client_state.h"

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

TransactionGate::BatchScope::BatchScope(TransactionGate& gate, bool wait_for_script)
    : gate_(gate), slot_(gate.SlotOfThisThread()) {
  if (slot_ == nullptr) return;
  // Uncontended: the slot at once (one atomic load and one CAS).
  if (gate_.exec_waiting_.load(std::memory_order_acquire) == 0 && slot_->try_lock()) {
    tls_slot_held = true;
    return;
  }
  // An EXEC or a script waits for the slots or holds them. The wait polls, never asleep on a
  // lock a script may hold for long, so that it notices the script running past
  // busy-reply-threshold; and it keeps behind whoever waits for the slots, so that a stream of
  // batches cannot starve an EXEC.
  for (int attempt = 0;; ++attempt) {
    if (gate_.scripts_.load(std::memory_order_acquire) > 0 && (gate_.busy() || !wait_for_script)) {
      slot_ = nullptr;
      busy_ = true;
      return;
    }
    if (gate_.exec_waiting_.load(std::memory_order_acquire) == 0 && slot_->try_lock()) {
      tls_slot_held = true;
      return;
    }
    if (attempt < 64) continue;
    if (attempt < 128) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(attempt < 512 ? 20 : 200));
    }
  }
}

TransactionGate::BatchScope::~BatchScope() {
  if (slot_ == nullptr) return;
  tls_slot_held = false;
  slot_->unlock();
}

TransactionGate::ScriptScope::ScriptScope(TransactionGate& gate) : gate_(gate) {
  gate_.scripts_.fetch_add(1, std::memory_order_acq_rel);
}

TransactionGate::ScriptScope::~ScriptScope() {
  gate_.SetBusy(false);
  gate_.scripts_.fetch_sub(1, std::memory_order_acq_rel);
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

WatchRegistry::WatchRegistry(ChangeStream& changes) : changes_(changes) {
  changes_.AddConsumer(this);
}

WatchRegistry::~WatchRegistry() { changes_.RemoveConsumer(this); }

void WatchRegistry::Watch(uint64_t client_id, int db, std::string_view key, int64_t expire_ms) {
  KeyRef ref{db, std::string(key)};
  std::lock_guard<std::mutex> lock(mutex_);
  ClientWatches& mine = clients_[client_id];
  for (const auto& [watched, expire] : mine.keys) {
    if (watched == ref) return;
  }
  // Counted in the filter before the caller releases the key's shard lock: a write after it
  // sees the count.
  filter_.Add(db, key);
  watchers_[ref].push_back(client_id);
  mine.keys.emplace_back(std::move(ref), expire_ms);
  if (watched_entries_.fetch_add(1, std::memory_order_relaxed) == 0) {
    changes_.SetInterest(this, Interest::kKeys);
  }
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
    filter_.Remove(ref.db, ref.key);
    if (watched_entries_.fetch_sub(1, std::memory_order_relaxed) == 1) {
      changes_.SetInterest(this, Interest::kNone);
    }
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
  if (!active() || !filter_.MayContain(db, key)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  TouchLocked(KeyRef{db, std::string(key)});
}

void WatchRegistry::TouchExisting(
    int db, const std::function<bool(int db, std::string_view key)>& existed) {
  std::vector<KeyRef> candidates;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [ref, ids] : watchers_) {
      if (db < 0 || ref.db == db) candidates.push_back(ref);
    }
  }
  for (const KeyRef& ref : candidates) {
    if (existed(ref.db, ref.key)) Touch(ref.db, ref.key);
  }
}

void WatchRegistry::OnChange(const ChangeRecord& record) {
  if (!record.signals_watchers) return;
  switch (record.scope) {
    case ChangeScope::kKeys:
      for (const ChangedKey& changed : record.keys) Touch(changed.db, changed.key);
      return;
    case ChangeScope::kDatabase:
      if (record.key_existed != nullptr) TouchExisting(record.db, *record.key_existed);
      return;
    case ChangeScope::kAllDatabases:
      if (record.key_existed != nullptr) TouchExisting(-1, *record.key_existed);
      return;
    case ChangeScope::kSwapDatabases:
      if (record.swapped_dbs[0] == record.swapped_dbs[1] || record.key_existed == nullptr) return;
      TouchExisting(record.swapped_dbs[0], *record.key_existed);
      TouchExisting(record.swapped_dbs[1], *record.key_existed);
      return;
  }
}

void DiscardTransaction(ClientState& client, WatchRegistry& watches) {
  client.multi = ClientState::Transaction{};
  client.multi_count.store(-1, std::memory_order_relaxed);
  watches.UnwatchAll(client.id);
}

}  // namespace gigakv::server
