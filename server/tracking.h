// Client-side caching (Redis's tracking.c): CLIENT TRACKING tells a client which keys it may
// have cached became stale.
//
//   default mode   a tracking client's read-only commands remember their keys (existing or not)
//                  in the tracking table: key name → ids of the clients that read it (names
//                  only, as Redis: a change of the name in any database invalidates). The next
//                  change of the key sends each of them one invalidation and forgets the key.
//                  OPTIN remembers only after CLIENT CACHING yes, OPTOUT not after CLIENT
//                  CACHING no (for the next command; a whole MULTI ... EXEC).
//   BCAST          no table: the client names prefixes ("" = every key); every changed key that
//                  matches one is collected and sent to the prefix's clients as one array, in
//                  key order, after the command that changed it (Redis: once per event-loop
//                  round) or after expiry and eviction in the cron.
//   NOLOOP         the client is not told about its own changes.
//   delivery       a push `invalidate [keys]` on the client's connection (RESP3) or, with
//                  REDIRECT, on the redirect client's: a push if it speaks RESP3, else a
//                  `message` on __redis__:invalidate when it is in Pub/Sub mode, else nothing.
//                  A redirect client that went away turns the next invalidation into a
//                  `tracking-redir-broken` push (RESP3) and the client's flag R. Messages go
//                  through the receiver's Pub/Sub queue (server/pubsub.h): the receiver's own
//                  thread frames them in its protocol. A client's own invalidations come after
//                  its command's reply, as Redis sends them after the command.
//   flush          FLUSHDB and FLUSHALL send every tracking client a null invalidation and empty
//                  the table. SWAPDB sends nothing, as in Redis 7.0.
//   limit          tracking-table-max-keys: keys are invalidated until the table fits, before a
//                  command and in the cron.
//   races          a read-only command remembers its keys before it runs and again after: a
//                  write on another thread between its read and the remembering cannot slip
//                  by unseen (the invalidation then follows the reply).
//
// Threading: the table is split into kShards shards by the key's hash, each with its own mutex;
// prefixes live under one mutex. Changes arrive on the producer's thread under its store shard
// locks (lock order: store shard, tracking shard or prefix lock, client registry, a client's
// queue). Enable/Disable/RememberKeys run on the client's own thread. Costs nothing while no
// client tracks (the change stream then skips this consumer).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gigakv/change_stream.h"

namespace gigakv::server {

class ClientRegistry;
class ClientState;
class PubSub;
struct CommandSpec;

// ClientState::tracking bits.
enum TrackingFlag : uint32_t {
  kTrackingOn = 1 << 0,
  kTrackingBcast = 1 << 1,
  kTrackingOptIn = 1 << 2,
  kTrackingOptOut = 1 << 3,
  kTrackingNoLoop = 1 << 4,
  kTrackingBrokenRedirect = 1 << 5,  // R: the redirect client went away.
};

class ClientTracking : public ChangeConsumer {
 public:
  ClientTracking(ChangeStream& changes, PubSub& pubsub, ClientRegistry& clients);
  ~ClientTracking() override;
  ClientTracking(const ClientTracking&) = delete;
  ClientTracking& operator=(const ClientTracking&) = delete;

  // CLIENT TRACKING ON with options already validated (CLIENT TRACKING checks them in Redis's
  // order, with its errors): `flags` are kTrackingBcast/OptIn/OptOut/NoLoop, `redirect` 0 or a
  // client id. BCAST adds `prefixes` ("" when none) to those the client has. Own thread.
  void Enable(ClientState& client, uint64_t redirect, uint32_t flags,
              const std::vector<std::string>& prefixes);
  // CLIENT TRACKING OFF, RESET, a closing connection. Own thread.
  void Disable(ClientState& client);
  // The prefix among the client's BCAST prefixes that `prefix` overlaps (one is a prefix of the
  // other), or nullptr.
  static const std::string* OverlappingPrefix(const ClientState& client, std::string_view prefix);

  // After a command of `client` ran: remembers the keys of a read-only command (default mode,
  // per OPTIN/OPTOUT and CLIENT CACHING). Own thread.
  void RememberKeys(ClientState& client, const CommandSpec& spec,
                    const std::vector<std::string_view>& args);
  // Sends the BCAST invalidations collected since the last call. Any thread, no locks held.
  void FlushBroadcasts();
  bool broadcasts_pending() const { return broadcasts_pending_.load(std::memory_order_relaxed); }
  // The cron's part: invalidates keys until the table holds at most `max_keys` (0: no limit),
  // with an effort that grows while it stays over.
  void EnforceLimit(int64_t max_keys);

  // INFO: tracking_clients, tracking_total_keys, tracking_total_items, tracking_total_prefixes.
  int64_t clients() const { return clients_count_.load(std::memory_order_relaxed); }
  int64_t total_keys() const { return total_keys_.load(std::memory_order_relaxed); }
  int64_t total_items() const { return total_items_.load(std::memory_order_relaxed); }
  int64_t total_prefixes() const;

  void OnChange(const ChangeRecord& record) override;

  static constexpr size_t kShards = 64;

 private:
  struct Shard {
    std::mutex mutex;
    absl::flat_hash_map<std::string, std::vector<uint64_t>> keys;
  };
  struct Prefix {
    std::vector<uint64_t> clients;
    // Keys changed since the last flush, each with the client that changed it last (0: none,
    // e.g. expiry), for NOLOOP.
    std::map<std::string, uint64_t, std::less<>> changed;
  };

  Shard& ShardOf(std::string_view key);
  // Sends the clients that read `key` its invalidation and forgets it. `executing`: the client
  // whose command runs on this thread (NOLOOP), 0 if none.
  void InvalidateKey(std::string_view key, uint64_t executing);
  void CollectForBroadcast(std::string_view key, uint64_t modifier);
  // Sends `payload` (the keys' array, or a null) to `target` (or its redirect client).
  void Send(const std::shared_ptr<ClientState>& target, std::shared_ptr<const std::string> payload);
  // Every tracking client gets a null invalidation; the table is emptied.
  void InvalidateAll();
  // Adds `delta` to the tracking clients; the change-stream interest follows.
  void ChangeClientCount(int delta);
  // Interested while a client tracks or the table holds keys. Under count_mutex_.
  void UpdateInterestLocked();
  // Takes forgotten keys and items off the counts (and maybe the interest).
  void ForgetKeys(int64_t keys, int64_t items);

  ChangeStream& changes_;
  PubSub& pubsub_;
  ClientRegistry& clients_;
  std::array<Shard, kShards> shards_;
  std::atomic<int64_t> total_keys_{0};
  std::atomic<int64_t> total_items_{0};
  std::mutex count_mutex_;   // Serialises interest changes.
  bool interested_ = false;  // Guarded by count_mutex_.
  std::atomic<int64_t> clients_count_{0};
  mutable std::mutex prefixes_mutex_;
  std::map<std::string, Prefix, std::less<>> prefixes_;  // Guarded by prefixes_mutex_.
  std::atomic<bool> has_prefixes_{false};
  std::atomic<bool> broadcasts_pending_{false};
  std::atomic<int> limit_rounds_{0};  // Consecutive cron rounds over the limit.
};

}  // namespace gigakv::server
