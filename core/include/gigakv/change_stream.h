// The change stream: one typed record for every change of the keyspace, in the order the changes
// were applied, for whoever needs to know what changed (WATCH, the append-only log, replicas,
// keyspace notifications, client-side caching).
//
// A record says which keys changed (or which whole databases), why (a command, expiry, eviction,
// a flush, SWAPDB), and the change's deterministic effect: a command that, replayed against the
// state before it in `db`, produces the state after it, whatever the clock or random source says
// at replay time (absolute expiry times as SET ... PXAT / PEXPIREAT, the members SPOP chose as
// SREM, a key found expired as DEL).
//
// Grammar of what a consumer sees (per producing thread; records of different threads interleave
// only where they touch different shards):
//   stream := (record | group)*
//   group  := record+ group-end    -- one EXEC's changes (same `group` id): apply all or none
//
// Ordering. Producers publish while they hold the shard lock(s) of the keys they changed, so two
// records of one key come in the order they were applied; sequence numbers are taken under the
// same locks and increase in that order too. A change of whole databases (FLUSHDB, FLUSHALL,
// SWAPDB) is published with every shard locked.
//
// Cost. Consumers state their interest (nothing, keys only, or keys and effects) and may change
// it at any time. With no interested consumer, publishing is one relaxed load; producers ask
// wants_effects() before building an effect, so a keys-only consumer (WATCH) costs no string
// building. Consumers run on the producer's thread, under its shard locks: they must be quick,
// thread-safe, and must not call back into the store (the key probe below is the exception).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string_view>

#include "absl/types/span.h"

namespace gigakv {

// Why the keyspace changed.
enum class ChangeCause : uint8_t {
  kCommand,   // A client's write command (also inside EXEC).
  kExpiry,    // A key past its deadline was removed (lazily by a lookup, or by active expiry).
  kEviction,  // maxmemory eviction removed a key.
  kFlush,     // FLUSHDB / FLUSHALL.
  kSwapDb,    // SWAPDB.
};

// What a record changed.
enum class ChangeScope : uint8_t {
  kKeys,          // The keys listed.
  kDatabase,      // Every key of `db` (FLUSHDB).
  kAllDatabases,  // Every key of every database (FLUSHALL).
  kSwapDatabases  // The two `swapped_dbs` traded contents (SWAPDB).
};

// The classes of Redis's keyspace notifications (notify-keyspace-events letters), as bits: a
// listener asks for a set of them.
enum KeyEventClass : uint16_t {
  kGenericEvents = 1 << 0,  // g: DEL, EXPIRE, RENAME... on any type.
  kStringEvents = 1 << 1,   // $
  kListEvents = 1 << 2,     // l
  kSetEvents = 1 << 3,      // s
  kHashEvents = 1 << 4,     // h
  kZsetEvents = 1 << 5,     // z
  kExpiredEvents = 1 << 6,  // x: a key removed by expiry.
  kEvictedEvents = 1 << 7,  // e: a key removed by maxmemory eviction.
  kStreamEvents = 1 << 8,   // t
  kKeyMissEvents = 1 << 9,  // m: a read found no key (not a change: never in a record).
  kModuleEvents = 1 << 10,  // d
  kNewKeyEvents = 1 << 11,  // n: a key was added.
};

// One notification a change makes: Redis's notifyKeyspaceEvent(class, event, key, db).
struct KeyEvent {
  KeyEventClass type = kGenericEvents;
  std::string_view name;  // "set", "lpush", "rename_from"...
  int db = 0;
  std::string_view key;
};

// A key a record changed (its value, type or TTL), in its database: MOVE changes a key in two.
struct ChangedKey {
  int db = 0;
  std::string_view key;
};

// One change. Everything it points to is valid only during ChangeConsumer::OnChange.
struct ChangeRecord {
  uint64_t sequence = 0;  // Set by Publish: 1, 2, 3... while any consumer is interested.
  uint64_t group = 0;     // Non-zero: part of that group (ChangeStream::Group).
  ChangeCause cause = ChangeCause::kCommand;
  ChangeScope scope = ChangeScope::kKeys;
  int db = 0;                   // The database the effect runs in (kDatabase: the one emptied).
  int swapped_dbs[2] = {0, 0};  // kSwapDatabases: the two databases.
  absl::Span<const ChangedKey> keys;  // kKeys: every key changed. Others: empty.
  // The deterministic effect, args[0] the command name in upper case. Empty when no interested
  // consumer wants effects.
  absl::Span<const std::string_view> effect;
  // Notifications the change makes (cause kCommand), in the order Redis emits them: those Redis
  // emits once the change is made. Removals by expiry and eviction carry none: their cause says
  // it. Others are emitted where they happen (server/notifications.h): a key's creation ("new"),
  // a collection emptied by the change ("del"), and events Redis emits before its reply when the
  // effect is known only after it (SPOP).
  absl::Span<const KeyEvent> events;
  // False for a change Redis does not signal to WATCH (BITFIELD that only padded the key with
  // zero bytes): replayed for a faithful copy, but it fails no EXEC.
  bool signals_watchers = true;
  // Whole-database scopes: whether a key existed right before the change (in `db`, in either
  // swapped database, or in any database). Looks at the locked shards; callable only from
  // OnChange. WATCH uses it: a flush changes only the watched keys that existed.
  const std::function<bool(int db, std::string_view key)>* key_existed = nullptr;
};

class ChangeConsumer {
 public:
  enum class Interest : uint8_t { kNone = 0, kKeys = 1, kEffects = 2 };

  virtual ~ChangeConsumer() = default;
  // Called on the producer's thread with its shard lock(s) held (see the file comment).
  virtual void OnChange(const ChangeRecord& record) = 0;
  // The group `group` (which published at least one record) is complete.
  virtual void OnGroupEnd(uint64_t group) { (void)group; }
};

class ChangeStream {
 public:
  static constexpr int kMaxConsumers = 8;

  ChangeStream() = default;
  ChangeStream(const ChangeStream&) = delete;
  ChangeStream& operator=(const ChangeStream&) = delete;

  // Adds a consumer (not owned; it must outlive the stream or be removed first) with no
  // interest yet. Registration is for start-up and shutdown: not concurrent with Publish. At most
  // kMaxConsumers at once (the server registers three: WATCH, blocked clients, the effect sink);
  // more is a programming error, asserted in debug builds and ignored in release ones.
  void AddConsumer(ChangeConsumer* consumer);
  void RemoveConsumer(ChangeConsumer* consumer);
  // Any thread, any time: records published after it returns reach `consumer` per `interest`.
  void SetInterest(ChangeConsumer* consumer, ChangeConsumer::Interest interest);

  // Whether publishing reaches anyone; whether anyone reads effects (build them only then).
  bool active() const { return interest_mask_.load(std::memory_order_relaxed) != 0; }
  bool wants_effects() const {
    return (interest_mask_.load(std::memory_order_relaxed) & kEffectsBit) != 0;
  }

  // Hands `record` (its sequence and group filled in here) to every interested consumer.
  // Call with the shard locks of the changed keys held (every shard for whole databases).
  void Publish(ChangeRecord& record);
  // Shorthand for the common case: one key, command cause.
  void PublishKey(int db, std::string_view key, absl::Span<const std::string_view> effect);

  // The sequence number last handed out (0 before any). A record with a lower number has been
  // published or is being published right now by a thread holding its shard lock.
  uint64_t last_sequence() const { return next_sequence_.load(std::memory_order_acquire) - 1; }

  // While one is open on a thread, that thread's records of this stream form one group, ended
  // (OnGroupEnd) when it closes if it published anything. EXEC opens one. Groups do not nest:
  // an inner one joins the outer.
  class Group {
   public:
    explicit Group(ChangeStream& stream);
    ~Group();
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;

   private:
    ChangeStream& stream_;
    bool outer_;
  };

 private:
  static constexpr uint32_t kKeysBit = 1;
  static constexpr uint32_t kEffectsBit = 2;
  struct Slot {
    std::atomic<ChangeConsumer*> consumer{nullptr};
    std::atomic<uint8_t> interest{0};
  };
  void RecomputeMask();

  std::array<Slot, kMaxConsumers> slots_;
  // Slots [0, used_slots_) have ever held a consumer: Publish looks at no others.
  std::atomic<int> used_slots_{0};
  // Serialises interest changes (rare): recomputing the mask from the slots is then never
  // overtaken by a stale recomputation of another consumer's change.
  std::mutex interest_mutex_;
  std::atomic<uint32_t> interest_mask_{0};
  std::atomic<uint64_t> next_sequence_{1};
  std::atomic<uint64_t> next_group_{1};
};

}  // namespace gigakv
