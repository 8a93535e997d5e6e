// Pub/Sub: who listens to which channel, and how a message reaches every listener on any I/O
// thread (Redis's pubsub.c).
//
//   registry    three tables: channels (SUBSCRIBE), patterns (PSUBSCRIBE) and shard channels
//               (SSUBSCRIBE; all slots are local until cluster mode exists). The channel tables
//               are split into kShards shards by the channel's hash, each with its own mutex, so
//               publishers to different channels never wait for each other and no lock is
//               global. Patterns are one list under a reader-writer lock, skipped with one
//               relaxed load while nobody listens to a pattern.
//   delivery    PUBLISH runs on the publisher's thread: it formats the message's frame once
//               (once more per matching pattern), and under the channel's shard lock appends a
//               shared reference to it to each listener's queue (PubSubClient), posting the
//               listener a kPubSubReady message when its queue was empty. The listener's own
//               thread then copies the queued frames into its output (Drain) in its current
//               protocol: RESP2 arrays or RESP3 push frames.
//   ordering    a channel's shard lock is held while its message is queued for every listener,
//               patterns included, so all listeners of a channel get its messages in one order
//               (the order the lock gave the publishers), and one publisher's messages arrive in
//               the order it sent them. An unsubscription takes the same lock: a message queued
//               before it is drained into the reply before the confirmation (Redis writes it
//               there first too) and none is queued after it, so a RESP2 client that left
//               subscribed mode never receives a message among its replies.
//
// Threading: Subscribe, Unsubscribe*, Drain and the client's own sets run on the client's own
// thread; Publish and the counts on any thread. Lock order: shard mutex, then the patterns' lock,
// then a client's queue mutex. Complexity: PUBLISH is O(listeners of the channel + patterns);
// SUBSCRIBE and UNSUBSCRIBE of one channel O(listeners of it) (Redis's are too); PUBSUB
// CHANNELS O(channels).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "protocol/reply_builder.h"

namespace gigakv::server {

class ClientState;
class PubSub;

// What a client listens to: SUBSCRIBE's channels, PSUBSCRIBE's patterns, SSUBSCRIBE's shard
// channels.
enum class PubSubKind : uint8_t { kChannel = 0, kPattern = 1, kShard = 2 };

// One message for one listener, framed by the listener's own thread in its current protocol.
//   kMessage      `frame` is the message's RESP2 array, formatted once per PUBLISH (per
//                 matching pattern for pmessage) and shared by every listener; in RESP3 the
//                 same bytes with '>' (push) in place of the leading '*'.
//   kInvalidation client tracking (server/tracking.h): `frame` is the keys' array (or a null);
//                 sent as a push `invalidate` in RESP3, dropped in RESP2.
//   kRedirectedInvalidation  the same for a REDIRECT client: a push in RESP3, a `message` on
//                 __redis__:invalidate when it is in Pub/Sub mode, else dropped.
//   kRedirectBroken  `frame` is the redirect id's integer: a push `tracking-redir-broken` in
//                 RESP3, dropped in RESP2.
struct PubSubDelivery {
  enum class Kind : uint8_t { kMessage, kInvalidation, kRedirectedInvalidation, kRedirectBroken };
  std::shared_ptr<const std::string> frame;
  Kind kind = Kind::kMessage;
};

// A client's subscriptions and its queue of deliveries. Created by the client's first
// subscription (ClientState::pubsub) and destroyed with the client, which leaves every table
// first.
class PubSubClient {
 public:
  PubSubClient(PubSub& registry, ClientState& client) : registry_(registry), client_(client) {}
  ~PubSubClient();
  PubSubClient(const PubSubClient&) = delete;
  PubSubClient& operator=(const PubSubClient&) = delete;

  // How many channels / patterns / shard channels the client listens to (CLIENT LIST's sub,
  // psub and ssub); any thread.
  int count(PubSubKind kind) const {
    return counts_[static_cast<int>(kind)].load(std::memory_order_relaxed);
  }
  // Redis's CLIENT_PUBSUB flag: the client listens to something (CLIENT LIST flag P, client
  // type pubsub, RESP2's subscribed mode); any thread.
  bool subscribed() const {
    return count(PubSubKind::kChannel) + count(PubSubKind::kPattern) + count(PubSubKind::kShard) >
           0;
  }

 private:
  friend class PubSub;

  PubSub& registry_;
  ClientState& client_;
  // The client's own thread only.
  std::array<absl::flat_hash_set<std::string>, 3> names_;
  std::vector<PubSubDelivery> draining_;  // Drain's buffer, kept for its capacity.
  std::array<std::atomic<int>, 3> counts_{};
  // Deliveries not yet drained; `scheduled`: a kPubSubReady message is on its way.
  std::mutex queue_mutex_;
  std::vector<PubSubDelivery> queue_;
  bool scheduled_ = false;
};

// A client's subscriptions of `kind` (0 before its first) and whether it has any (Redis's
// CLIENT_PUBSUB flag: CLIENT LIST's P, client type pubsub). Any thread.
int SubscriptionCount(const ClientState& client, PubSubKind kind);
bool IsSubscribed(const ClientState& client);

namespace pubsub_internal {
// The client whose command runs on this thread (ExecutingClientScope), its reply, and whether a
// message was queued for it since its last drain.
inline thread_local ClientState* tls_executing_client = nullptr;
inline thread_local protocol::ReplyBuilder* tls_executing_reply = nullptr;
inline thread_local bool tls_executing_client_has_mail = false;
struct PublishHold;
// The PublishHoldScope open on this thread, if any.
inline thread_local PublishHold* tls_publish_hold = nullptr;
}  // namespace pubsub_internal

// Marks `client` as the one whose command runs on this thread, with `reply` its reply, for
// the lifetime of the scope (the dispatcher opens one around each command; scopes nest).
// Inline: it costs two thread-local stores per command.
class ExecutingClientScope {
 public:
  ExecutingClientScope(ClientState& client, protocol::ReplyBuilder& reply)
      : previous_client_(pubsub_internal::tls_executing_client),
        previous_reply_(pubsub_internal::tls_executing_reply) {
    pubsub_internal::tls_executing_client = &client;
    pubsub_internal::tls_executing_reply = &reply;
  }
  ~ExecutingClientScope() {
    pubsub_internal::tls_executing_client = previous_client_;
    pubsub_internal::tls_executing_reply = previous_reply_;
    pubsub_internal::tls_executing_client_has_mail = false;
  }
  ExecutingClientScope(const ExecutingClientScope&) = delete;
  ExecutingClientScope& operator=(const ExecutingClientScope&) = delete;

 private:
  ClientState* previous_client_;
  protocol::ReplyBuilder* previous_reply_;
};

// The id of the client whose command runs on this thread (ExecutingClientScope), 0 if none.
uint64_t ExecutingClientId();

class PubSub {
 public:
  PubSub() = default;
  PubSub(const PubSub&) = delete;
  PubSub& operator=(const PubSub&) = delete;

  // (P|S)SUBSCRIBE of one name, on the client's thread: adds the client (a no-op when it
  // already listens) and replies the confirmation with the client's count, as Redis.
  void Subscribe(ClientState& client, PubSubKind kind, std::string_view name,
                 protocol::ReplyBuilder& reply);
  // (P|S)UNSUBSCRIBE of one name: removes the client and replies the confirmation, after the
  // messages queued for the client until then when `drain_first` (see ordering above; not
  // inside EXEC, whose reply is an array, nor while replies are dropped).
  void Unsubscribe(ClientState& client, PubSubKind kind, std::string_view name,
                   protocol::ReplyBuilder& reply, bool drain_first);
  // (P|S)UNSUBSCRIBE without names: every name of `kind`, one confirmation each, or one with a
  // null name when there was none. Patterns and channels count together as in Redis.
  void UnsubscribeAll(ClientState& client, PubSubKind kind, protocol::ReplyBuilder& reply,
                      bool drain_first);
  // Every subscription of the client, without replies (RESET, a closing connection).
  void Forget(ClientState& client);

  // PUBLISH (kChannel) and SPUBLISH (kShard): queues the message for every listener of the
  // channel (and, for kChannel, of every matching pattern) and returns how many deliveries
  // that made. Any thread. A listener whose command runs on this thread (ExecutingClientScope)
  // gets it in that command's reply at once, where Redis writes it: its own PUBLISH's message
  // before the count, the notifications of its own writes among the command's replies. Under a
  // PublishHoldScope the other listeners get it when the scope ends (still counted now).
  int64_t Publish(PubSubKind kind, std::string_view channel, std::string_view payload);

  // Queues `delivery` for `client` (any thread; its queue is created if it has none), after
  // its current command when it is the one running on this thread. Under a PublishHoldScope a
  // client other than the scope's publisher gets it when the scope ends, in sequence with the
  // held messages.
  void Deliver(const std::shared_ptr<ClientState>& client, PubSubDelivery delivery);

  // On the client's thread: formats the deliveries queued for it into `reply` (message /
  // pmessage / smessage, invalidations, in `reply`'s protocol) and empties its queue. Returns
  // how many it wrote.
  // `messages_only`: Pub/Sub messages only (a command's own, written where Redis writes them);
  // client-tracking invalidations stay queued for after the command.
  size_t Drain(ClientState& client, protocol::ReplyBuilder& reply, bool messages_only = false);

  // PUBSUB CHANNELS / SHARDCHANNELS: the channels (kChannel or kShard) with a listener that
  // match `pattern` (all without one), in no particular order (as Redis's dict).
  std::vector<std::string> Channels(PubSubKind kind, const std::string_view* pattern) const;
  // PUBSUB NUMSUB / SHARDNUMSUB: the channel's listeners, patterns not counted.
  int64_t CountListeners(PubSubKind kind, std::string_view channel) const;
  // Channels, patterns or shard channels with a listener (PUBSUB NUMPAT, INFO pubsub_*).
  int64_t ActiveNames(PubSubKind kind) const {
    return active_[static_cast<int>(kind)].load(std::memory_order_relaxed);
  }

  // One channel's shard of a channel table.
  static constexpr size_t kShards = 64;

 private:
  friend class PubSubClient;

  using ListenerList = std::vector<PubSubClient*>;
  struct Shard {
    mutable std::mutex mutex;
    absl::flat_hash_map<std::string, ListenerList> channels;
  };
  struct ChannelTable {
    std::array<Shard, kShards> shards;
    Shard& For(std::string_view channel);
    const Shard& For(std::string_view channel) const;
  };
  struct Pattern {
    ListenerList listeners;
  };

  ChannelTable& TableOf(PubSubKind kind) {
    return kind == PubSubKind::kShard ? shards_ : channels_;
  }
  const ChannelTable& TableOf(PubSubKind kind) const {
    return kind == PubSubKind::kShard ? shards_ : channels_;
  }
  // The client's state, created on its first subscription.
  PubSubClient& StateOf(ClientState& client);
  // Adds or removes `listener` in the registry's table for `kind` (the caller keeps the
  // client's own set).
  void AddListener(PubSubKind kind, std::string_view name, PubSubClient* listener);
  void RemoveListener(PubSubKind kind, std::string_view name, PubSubClient* listener);
  // Which listeners QueueForListeners queues for; every listener is counted either way.
  // `self` is the publishing client's state (null when it listens to nothing).
  enum class Recipients : uint8_t { kAll, kSelfOnly, kAllButSelf };
  struct Queued {
    int64_t listeners = 0;  // Deliveries the message makes (PUBLISH's reply).
    int64_t others = 0;     // Of them, to listeners other than `self`.
  };
  Queued QueueForListeners(PubSubKind kind, std::string_view channel, std::string_view payload,
                           Recipients recipients = Recipients::kAll,
                           const PubSubClient* self = nullptr);
  // Queues a delivery for `listener` and posts it kPubSubReady if its queue was empty. Under
  // the channel's shard lock. `immediate`: a listener whose command runs on this thread gets
  // it in that command's reply (Publish).
  static void Enqueue(PubSubClient* listener, PubSubDelivery delivery, bool immediate = true);
  static void ReplyConfirmation(protocol::ReplyBuilder& reply, std::string_view type,
                                const std::string_view* name, int64_t count);
  static int64_t ConfirmationCount(const PubSubClient& state, PubSubKind kind);

  friend class PublishHoldScope;

  ChannelTable channels_;
  ChannelTable shards_;
  mutable std::shared_mutex patterns_mutex_;
  absl::flat_hash_map<std::string, Pattern> patterns_;  // Guarded by patterns_mutex_.
  std::array<std::atomic<int64_t>, 3> active_{};
};

// Holds back what `pubsub` sends on this thread while the scope is open (PUBLISH, SPUBLISH and
// keyspace-notification messages, client-tracking invalidations) from every client but
// `publisher`, and queues it for them in its original order when the scope closes. `publisher`
// still gets its own at once, where Redis writes them; PUBLISH's count is taken at publish time.
// EXEC opens one under its exclusive gate, so other clients receive a transaction's messages
// after it, as from Redis's single thread (which writes them only to output buffers until EXEC
// ends), and before anything sent after it. The hold belongs to the thread: whatever runs on it
// meanwhile is held, and `publisher` is the one client exempt. An inner scope is a no-op (the
// outer one keeps holding). A message that cannot be queued for lack of memory at the end is
// dropped and logged. Cost outside a scope: one thread-local load per PUBLISH or delivery.
class PublishHoldScope {
 public:
  PublishHoldScope(PubSub& pubsub, ClientState& publisher);
  ~PublishHoldScope();  // Queues what was held.
  PublishHoldScope(const PublishHoldScope&) = delete;
  PublishHoldScope& operator=(const PublishHoldScope&) = delete;

 private:
  std::unique_ptr<pubsub_internal::PublishHold> hold_;  // Null for an inner scope.
};

}  // namespace gigakv::server
