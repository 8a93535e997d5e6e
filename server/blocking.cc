// Blocking operations: clients parked on list, sorted-set and stream keys (BLPOP, BZPOPMIN,
// XREAD...).
#include "server/blocking.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "absl/container/flat_hash_set.h"
#include "gigakv/numbers.h"
#include "gigakv/strings.h"
#include "server/client_registry.h"
#include "server/client_state.h"
#include "server/commands/collection_access.h"
#include "server/dispatcher.h"
#include "server/keyspace.h"

namespace gigakv::server {
namespace {

// Keys signalled on this thread during the current command, served at its end: in the order
// they were signalled, each once.
class ReadyKeys {
 public:
  using KeyId = std::pair<int, std::string>;
  void Add(int db, std::string_view key) {
    KeyId id(db, std::string(key));
    if (members_.insert(id).second) order_.push_back(std::move(id));
  }
  bool empty() const { return order_.empty(); }
  KeyId PopFront() {
    KeyId id = std::move(order_.front());
    order_.pop_front();
    members_.erase(id);
    return id;
  }

 private:
  std::deque<KeyId> order_;
  absl::flat_hash_set<KeyId> members_;
};
thread_local ReadyKeys tls_ready_keys;
thread_local bool tls_serving = false;

// Whether `event` changes a key in place without adding anything a blocked command could take:
// Redis signals no blocked client for these (a stream reader must not wake on XDEL or EXPIRE,
// since a woken reader compares the stream's last ID).
bool AddsNothing(std::string_view event) {
  return event == "xdel" || event == "xtrim" || event == "expire" || event == "persist";
}

// Whether the record's change of `key` may serve a blocked client: unless every event the
// record names for the key adds nothing.
bool MayServe(const ChangeRecord& record, const ChangedKey& key) {
  bool named = false;
  for (const KeyEvent& event : record.events) {
    if (event.db != key.db || event.key != key.key) continue;
    if (!AddsNothing(event.name)) return true;
    named = true;
  }
  return !named;
}

// The key type that can serve a blocking command: sorted sets for BZ*, lists otherwise.
KeyType WantedType(const CommandSpec& spec) {
  if (spec.name.substr(0, 2) == "bz") return KeyType::kZSet;
  if (spec.name.substr(0, 1) == "x") return KeyType::kStream;  // XREAD, XREADGROUP
  return KeyType::kList;
}

// Redis 7.0's getTimeoutFromObjectOrReply after parsing: a relative timeout in ms (0 = forever)
// made absolute; negative values are refused. A deadline past INT64_MAX wraps around in Redis
// 7.0 and then never fires (its timeout table orders deadlines as unsigned), so the wait is
// unbounded here too.
bool DeadlineFromRelativeOrReply(CommandContext& ctx, int64_t relative, int64_t* deadline_ms) {
  if (relative < 0) {
    ctx.reply.Error(errors::kTimeoutNegative);
    return false;
  }
  int64_t now = ctx.keyspace().NowMs();
  *deadline_ms = relative == 0 || relative > INT64_MAX - now ? 0 : now + relative;
  return true;
}

}  // namespace

bool ParseBlockTimeoutOrReply(CommandContext& ctx, std::string_view text, int64_t* deadline_ms) {
  long double seconds;
  if (!ParseLongDouble(text, &seconds)) {
    ctx.reply.Error(errors::kTimeoutNotFloat);
    return false;
  }
  // As Redis 7.0's getTimeoutFromObjectOrReply: milliseconds rounded up, converted to a long
  // long (a value that does not fit, such as inf or 1e20, comes out as LLONG_MIN on x86-64 and is
  // reported as negative), then checked against the absolute deadline's range.
  long double ms = std::ceil(seconds * 1000);
  int64_t relative = ms >= -0x1p63L && ms < 0x1p63L ? static_cast<int64_t>(ms) : INT64_MIN;
  return DeadlineFromRelativeOrReply(ctx, relative, deadline_ms);
}

bool ParseMillisecondTimeoutOrReply(CommandContext& ctx, std::string_view text,
                                    int64_t* deadline_ms) {
  int64_t relative;
  if (!ParseInt64(text, &relative)) {
    ctx.reply.Error(errors::kTimeoutNotInteger);
    return false;
  }
  return DeadlineFromRelativeOrReply(ctx, relative, deadline_ms);
}

void BlockOnKeys(CommandContext& ctx, const std::vector<std::string_view>& keys,
                 int64_t deadline_ms, const std::vector<std::string>* rerun_args) {
  if (!ctx.blocking().Block(ctx, keys, deadline_ms, false, rerun_args)) ctx.reply.NullArray();
}

bool BlockWithoutKeys(CommandContext& ctx, int64_t deadline_ms) {
  return ctx.blocking().Block(ctx, {}, deadline_ms, /*times_out_with_zero=*/true);
}

BlockingRegistry::BlockingRegistry(ChangeStream& changes) : changes_(changes) {
  changes_.AddConsumer(this);
}

BlockingRegistry::~BlockingRegistry() { changes_.RemoveConsumer(this); }

void BlockingRegistry::UpdateInterestLocked() {
  bool wanted = count_.load(std::memory_order_relaxed) > 0;
  if (wanted == interested_) return;
  interested_ = wanted;
  // Set while the blocking client still holds its keys' shard locks: a write to those keys
  // after it sees the interest.
  changes_.SetInterest(this, wanted ? Interest::kKeys : Interest::kNone);
}

void BlockingRegistry::OnChange(const ChangeRecord& record) {
  // A write Redis signals to no one (XACK, XGROUP SETID, a PFCOUNT caching its count) wakes no
  // one either; XGROUP DESTROY, which Redis signals only to blocked readers, calls SignalKey.
  if (!record.signals_watchers) return;
  // Everything else but in-place changes that add nothing (XDEL, EXPIRE) may serve someone: a
  // push or a *STORE a popper, a new stream entry a reader; a removal (DEL, expiry, eviction, a
  // flush, SWAPDB taking a stream away) ends the wait of the readers of a consumer group with an
  // error, as Redis's signalDeletedKeyAsReady does (a flush can serve no one else).
  // A removal that is no command's (expiry, eviction, a flush) is final for the group readers of
  // the stream: they are marked now, under the removal's locks, so that a stream created again
  // before they are served (by another thread) does not keep them waiting; Redis serves them in
  // the same step.
  const bool removal = record.cause == ChangeCause::kExpiry ||
                       record.cause == ChangeCause::kEviction ||
                       record.cause == ChangeCause::kFlush;
  switch (record.scope) {
    case ChangeScope::kKeys:
      for (const ChangedKey& key : record.keys) {
        if (removal) MarkStreamRemoved(key.db, key.key);
        if (MayServe(record, key)) SignalReady(key.db, key.key);
      }
      break;
    case ChangeScope::kSwapDatabases:
      SignalDb(record.swapped_dbs[0], /*group_readers_only=*/false);
      SignalDb(record.swapped_dbs[1], /*group_readers_only=*/false);
      break;
    case ChangeScope::kDatabase:
      SignalDb(record.db, /*group_readers_only=*/true);
      break;
    case ChangeScope::kAllDatabases:
      SignalDb(-1, /*group_readers_only=*/true);
      break;
  }
}

void BlockingRegistry::MarkStreamRemoved(int db, std::string_view key) {
  if (group_readers_.load(std::memory_order_relaxed) == 0 || !waiting_keys_.MayContain(db, key)) {
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_key_.find(KeyId(db, std::string(key)));
  if (it == by_key_.end()) return;
  for (const std::shared_ptr<Waiter>& waiter : it->second) {
    if (waiter->group_reader) waiter->stream_removed = true;
  }
}

void BlockingRegistry::SignalKey(int db, std::string_view key) { SignalReady(db, key); }

bool BlockingRegistry::Block(CommandContext& ctx, const std::vector<std::string_view>& keys,
                             int64_t deadline_ms, bool times_out_with_zero,
                             const std::vector<std::string>* rerun_args) {
  std::shared_ptr<ClientState> client = ctx.clients().FindClient(ctx.client.id);
  // Inside EXEC a blocking command answers at once, as if its timeout had passed.
  if (client == nullptr || !client->has_outbox() || ctx.client.in_exec) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = by_client_.find(client->id);
  if (found != by_client_.end()) {
    // The client's own blocked command is being re-run and could not be served: it keeps its
    // place in the queues.
    found->second->reblocked = true;
    return true;
  }
  auto waiter = std::make_shared<Waiter>();
  waiter->client = client;
  waiter->db = ctx.db();
  waiter->wanted = WantedType(ctx.spec);
  waiter->group_reader = ctx.spec.name == "xreadgroup";
  if (waiter->group_reader) group_readers_.fetch_add(1, std::memory_order_relaxed);
  if (rerun_args != nullptr) {
    waiter->args = *rerun_args;
  } else {
    waiter->args.assign(ctx.args.begin(), ctx.args.end());
  }
  waiter->reply_suppressed = ctx.client.reply_suppressed;
  for (std::string_view key : keys) {
    if (std::find(waiter->keys.begin(), waiter->keys.end(), key) != waiter->keys.end()) continue;
    waiter->keys.emplace_back(key);
    by_key_[KeyId(waiter->db, std::string(key))].push_back(waiter);
    // Counted while the caller holds the key's shard lock: a write after it sees the count.
    waiting_keys_.Add(waiter->db, key);
  }
  by_client_[client->id] = waiter;
  count_.fetch_add(1, std::memory_order_relaxed);
  UpdateInterestLocked();
  client->block_deadline_ms = deadline_ms;
  client->block_times_out_with_zero = times_out_with_zero;
  client->blocked.store(true, std::memory_order_release);
  return true;
}

void BlockingRegistry::SignalReady(int db, std::string_view key) {
  if (!waiting_keys_.MayContain(db, key)) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!by_key_.contains(KeyId(db, std::string(key)))) return;
  }
  tls_ready_keys.Add(db, key);
}

void BlockingRegistry::SignalDb(int db, bool group_readers_only) {
  if (count_.load(std::memory_order_relaxed) == 0) return;
  if (group_readers_only && group_readers_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [id, queue] : by_key_) {
    if (db >= 0 && id.first != db) continue;
    bool group_readers = false;
    for (const std::shared_ptr<Waiter>& waiter : queue) {
      if (!waiter->group_reader) continue;
      group_readers = true;
      if (group_readers_only) waiter->stream_removed = true;  // A flush emptied the database.
    }
    if (group_readers_only && !group_readers) continue;
    tls_ready_keys.Add(id.first, id.second);
  }
}

bool BlockingRegistry::HasReadyKeys() { return !tls_ready_keys.empty() && !tls_serving; }

void BlockingRegistry::ServeKeysSignalledHere(Dispatcher& dispatcher, Store& store) {
  if (HasReadyKeys()) ServeReadyKeys(dispatcher, store);
}

std::shared_ptr<BlockingRegistry::Waiter> BlockingRegistry::ClaimFirst(int db,
                                                                       const std::string& key,
                                                                       KeyType type) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_key_.find(KeyId(db, key));
  if (it == by_key_.end()) return nullptr;
  for (const std::shared_ptr<Waiter>& waiter : it->second) {
    // Redis 7.0 leaves a client blocked while its key holds another type than it pops from.
    if (waiter->wanted != type) continue;
    if (ClaimLocked(waiter, db, key)) return waiter;
  }
  return nullptr;
}

bool BlockingRegistry::ClaimLocked(const std::shared_ptr<Waiter>& waiter, int db,
                                   const std::string& key) {
  if (waiter->serving) {
    // Its re-run on another thread (narrowed to another key, or run before this change) may
    // have missed this signal: that thread looks at the key again if the client stays blocked.
    const KeyId id(db, key);
    if (std::find(waiter->signalled_while_serving.begin(), waiter->signalled_while_serving.end(),
                  id) == waiter->signalled_while_serving.end()) {
      waiter->signalled_while_serving.push_back(id);
    }
    return false;
  }
  waiter->serving = true;
  waiter->reblocked = false;
  waiter->signalled_while_serving.clear();
  return true;
}

std::vector<std::shared_ptr<BlockingRegistry::Waiter>> BlockingRegistry::StreamWaiters(
    int db, const std::string& key, bool group_readers_only) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<Waiter>> waiters;
  auto it = by_key_.find(KeyId(db, key));
  if (it == by_key_.end()) return waiters;
  for (const std::shared_ptr<Waiter>& waiter : it->second) {
    if (waiter->wanted == KeyType::kStream && (waiter->group_reader || !group_readers_only)) {
      waiters.push_back(waiter);
    }
  }
  return waiters;
}

bool BlockingRegistry::Serve(const std::shared_ptr<Waiter>& waiter, const std::string& key,
                             Dispatcher& dispatcher) {
  ClientState& client = *waiter->client;
  protocol::ReplyBuilder reply;
  reply.set_resp_version(client.resp);
  std::vector<std::string> narrowed = ArgsForReadyKey(waiter->args, key);
  std::vector<std::string_view> args(narrowed.begin(), narrowed.end());
  client.rerunning_blocked = true;
  dispatcher.Execute(client, args, reply);
  client.rerunning_blocked = false;

  std::string delivery;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiter->serving = false;
    if (waiter->disconnected) {
      RemoveLocked(waiter);
      return false;
    }
    if (waiter->reblocked && !waiter->timed_out && !waiter->unblock_requested) {
      waiter->reblocked = false;  // Still waiting, in its place.
      for (const KeyId& id : waiter->signalled_while_serving) {
        tls_ready_keys.Add(id.first, id.second);  // Look at those keys once more.
      }
      waiter->signalled_while_serving.clear();
      return true;
    }
    if (!waiter->reblocked) {
      delivery = std::move(reply.buffer());
    } else if (waiter->unblock_requested && !waiter->unblock_error.empty()) {
      delivery = "-" + waiter->unblock_error + "\r\n";
    } else {
      delivery = TimeoutReply(client);
    }
    if (waiter->reply_suppressed) delivery.clear();
    RemoveLocked(waiter);
  }
  Deliver(*waiter, std::move(delivery));
  return false;
}

void BlockingRegistry::ServeEach(const std::vector<std::shared_ptr<Waiter>>& waiters, int db,
                                 const std::string& key, Dispatcher& dispatcher) {
  for (const std::shared_ptr<Waiter>& waiter : waiters) {
    bool claimed;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = by_client_.find(waiter->client->id);
      claimed = it != by_client_.end() && it->second == waiter && ClaimLocked(waiter, db, key);
    }
    if (claimed) Serve(waiter, key, dispatcher);
  }
}

void BlockingRegistry::ServeReadyKeys(Dispatcher& dispatcher, Store& store) {
  if (tls_serving) return;
  tls_serving = true;
  while (!tls_ready_keys.empty()) {
    auto [db, key] = tls_ready_keys.PopFront();
    FailGroupReaders(db, key, /*removed_only=*/true);
    std::optional<KeyType> type = store.TypeOf(db, key);
    if (type == KeyType::kStream) {
      // Every reader of the stream is given its chance, in the order they blocked, as Redis's
      // serveClientsBlockedOnStreamKey: each reads from its own position, so one that cannot
      // be served holds up no one.
      ServeEach(StreamWaiters(db, key, /*group_readers_only=*/false), db, key, dispatcher);
      continue;
    }
    // The stream is gone (or replaced by another type): its group readers all get their error
    // now, as Redis's unblockDeletedStreamReadgroupClients, whatever happens to the key next;
    // readers without a group keep waiting for a stream to come back.
    FailGroupReaders(db, key, /*removed_only=*/false);
    if (!type.has_value()) continue;
    // A list or sorted set: its waiters in the order they blocked, until one of them cannot be
    // served (what one pops, the next cannot).
    while (true) {
      std::shared_ptr<Waiter> waiter = ClaimFirst(db, key, *type);
      if (waiter == nullptr || Serve(waiter, key, dispatcher)) break;
    }
  }
  tls_serving = false;
}

void BlockingRegistry::FailGroupReaders(int db, const std::string& key, bool removed_only) {
  if (group_readers_.load(std::memory_order_relaxed) == 0) return;
  std::vector<std::shared_ptr<Waiter>> failed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = by_key_.find(KeyId(db, key));
    if (it == by_key_.end()) return;
    for (const std::shared_ptr<Waiter>& waiter : it->second) {
      // One being re-run elsewhere is noted: its thread looks at the key again.
      if (waiter->group_reader && (waiter->stream_removed || !removed_only) &&
          ClaimLocked(waiter, db, key)) {
        failed.push_back(waiter);
      }
    }
    for (const std::shared_ptr<Waiter>& waiter : failed) RemoveLocked(waiter);
  }
  for (const std::shared_ptr<Waiter>& waiter : failed) {
    std::string reply;
    if (!waiter->reply_suppressed) {
      reply = "-" + std::string(errors::kStreamBlockedKeyDeleted) + "\r\n";
    }
    Deliver(*waiter, std::move(reply));
  }
}

void BlockingRegistry::RemoveLocked(const std::shared_ptr<Waiter>& waiter) {
  for (const std::string& key : waiter->keys) {
    waiting_keys_.Remove(waiter->db, key);
    auto it = by_key_.find(KeyId(waiter->db, key));
    if (it == by_key_.end()) continue;
    auto& queue = it->second;
    queue.erase(std::remove(queue.begin(), queue.end(), waiter), queue.end());
    if (queue.empty()) by_key_.erase(it);
  }
  if (by_client_.erase(waiter->client->id) > 0) {
    if (waiter->group_reader) group_readers_.fetch_sub(1, std::memory_order_relaxed);
    count_.fetch_sub(1, std::memory_order_relaxed);
    UpdateInterestLocked();
  }
}

bool BlockingRegistry::TimeOut(uint64_t client_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_client_.find(client_id);
  if (it == by_client_.end()) return false;
  std::shared_ptr<Waiter> waiter = it->second;
  if (waiter->serving) {
    waiter->timed_out = true;
    return false;
  }
  RemoveLocked(waiter);
  return true;
}

bool BlockingRegistry::Unblock(uint64_t client_id, std::string_view error) {
  std::shared_ptr<Waiter> waiter;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = by_client_.find(client_id);
    if (it == by_client_.end()) return false;
    waiter = it->second;
    if (waiter->serving) {
      waiter->unblock_requested = true;
      waiter->unblock_error = std::string(error);
      return true;
    }
    RemoveLocked(waiter);
  }
  std::string reply;  // CLIENT REPLY OFF/SKIP: the wait ends with no reply, as in Redis.
  if (!waiter->reply_suppressed) {
    reply = error.empty() ? TimeoutReply(*waiter->client) : "-" + std::string(error) + "\r\n";
  }
  Deliver(*waiter, std::move(reply));
  return true;
}

void BlockingRegistry::Remove(uint64_t client_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_client_.find(client_id);
  if (it == by_client_.end()) return;
  std::shared_ptr<Waiter> waiter = it->second;
  if (waiter->serving) {
    waiter->disconnected = true;  // The serving thread removes it when the re-run returns.
    return;
  }
  RemoveLocked(waiter);
}

void BlockingRegistry::Deliver(const Waiter& waiter, std::string reply) {
  waiter.client->Post(ClientMessage::Kind::kUnblockedReply, std::move(reply));
}

std::vector<std::string> BlockingRegistry::ArgsForReadyKey(const std::vector<std::string>& args,
                                                           const std::string& key) {
  std::string name = AsciiLower(args[0]);
  if (name == "blpop" || name == "brpop" || name == "bzpopmin" || name == "bzpopmax") {
    return {args[0], key, args.back()};  // name key... timeout
  }
  if (name == "blmpop" || name == "bzmpop") {
    // name timeout numkeys key... LEFT|RIGHT|MIN|MAX [COUNT n]: numkeys was checked when the
    // command first ran.
    int64_t numkeys = 0;
    ParseInt64(args[2], &numkeys);
    std::vector<std::string> narrowed = {args[0], args[1], "1", key};
    narrowed.insert(narrowed.end(), args.begin() + 3 + numkeys, args.end());
    return narrowed;
  }
  if (name == "xread" || name == "xreadgroup") {
    // name [options] STREAMS key... id...: the options as given, then the ready key and its ID
    // (Redis serves a blocked XREAD from the one stream that became ready).
    size_t streams = 1;
    while (streams < args.size() && !EqualsIgnoreCase(args[streams], "streams")) {
      const std::string option = AsciiLower(args[streams]);
      streams += option == "group" ? 3 : (option == "block" || option == "count") ? 2 : 1;
    }
    const size_t count = (args.size() - streams - 1) / 2;
    std::vector<std::string> narrowed(args.begin(), args.begin() + streams + 1);
    for (size_t i = 0; i < count; ++i) {
      if (args[streams + 1 + i] == key) {
        narrowed.push_back(key);
        narrowed.push_back(args[streams + 1 + count + i]);
        break;
      }
    }
    return narrowed;
  }
  return args;  // BLMOVE, BRPOPLPUSH: one source key.
}

std::string BlockingRegistry::TimeoutReply(const ClientState& client) {
  protocol::ReplyBuilder reply;
  reply.set_resp_version(client.resp);
  if (client.block_times_out_with_zero) {
    reply.Integer(0);
  } else {
    reply.NullArray();
  }
  return std::move(reply.buffer());
}

}  // namespace gigakv::server
