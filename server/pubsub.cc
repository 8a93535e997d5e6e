#include "server/pubsub.h"

#include <algorithm>
#include <new>
#include <utility>

#include "absl/hash/hash.h"
#include "gigakv/glob.h"
#include "gigakv/strings.h"
#include "server/client_state.h"
#include "spdlog/spdlog.h"

namespace gigakv::server {

namespace {

constexpr std::string_view kSubscribeType[] = {"subscribe", "psubscribe", "ssubscribe"};
constexpr std::string_view kUnsubscribeType[] = {"unsubscribe", "punsubscribe", "sunsubscribe"};

void EraseListener(std::vector<PubSubClient*>& listeners, PubSubClient* listener) {
  auto it = std::find(listeners.begin(), listeners.end(), listener);
  if (it != listeners.end()) listeners.erase(it);  // Keeps the order: delivery order is FIFO.
}

}  // namespace

PubSubClient::~PubSubClient() { registry_.Forget(client_); }

int SubscriptionCount(const ClientState& client, PubSubKind kind) {
  const PubSubClient* state = client.pubsub();
  return state == nullptr ? 0 : state->count(kind);
}

bool IsSubscribed(const ClientState& client) {
  const PubSubClient* state = client.pubsub();
  return state != nullptr && state->subscribed();
}

PubSub::Shard& PubSub::ChannelTable::For(std::string_view channel) {
  return shards[absl::HashOf(ToAbsl(channel)) % kShards];
}

const PubSub::Shard& PubSub::ChannelTable::For(std::string_view channel) const {
  return shards[absl::HashOf(ToAbsl(channel)) % kShards];
}

PubSubClient& PubSub::StateOf(ClientState& client) {
  if (PubSubClient* state = client.pubsub(); state != nullptr) return *state;
  return *client.EnsurePubSub([&] { return std::make_shared<PubSubClient>(*this, client); });
}

uint64_t ExecutingClientId() {
  return pubsub_internal::tls_executing_client == nullptr
             ? 0
             : pubsub_internal::tls_executing_client->id;
}

void PubSub::AddListener(PubSubKind kind, std::string_view name, PubSubClient* listener) {
  const int index = static_cast<int>(kind);
  if (kind == PubSubKind::kPattern) {
    std::unique_lock lock(patterns_mutex_);
    auto [it, added] = patterns_.try_emplace(ToAbsl(name));
    if (added) active_[index].fetch_add(1, std::memory_order_relaxed);
    it->second.listeners.push_back(listener);
    return;
  }
  Shard& shard = TableOf(kind).For(name);
  std::lock_guard lock(shard.mutex);
  auto [it, added] = shard.channels.try_emplace(ToAbsl(name));
  if (added) active_[index].fetch_add(1, std::memory_order_relaxed);
  it->second.push_back(listener);
}

void PubSub::RemoveListener(PubSubKind kind, std::string_view name, PubSubClient* listener) {
  const int index = static_cast<int>(kind);
  if (kind == PubSubKind::kPattern) {
    std::unique_lock lock(patterns_mutex_);
    auto it = patterns_.find(ToAbsl(name));
    if (it == patterns_.end()) return;
    EraseListener(it->second.listeners, listener);
    if (it->second.listeners.empty()) {
      patterns_.erase(it);
      active_[index].fetch_sub(1, std::memory_order_relaxed);
    }
    return;
  }
  Shard& shard = TableOf(kind).For(name);
  std::lock_guard lock(shard.mutex);
  auto it = shard.channels.find(ToAbsl(name));
  if (it == shard.channels.end()) return;
  EraseListener(it->second, listener);
  if (it->second.empty()) {
    // Forgotten with its last listener, so that many short-lived channels leave nothing behind.
    shard.channels.erase(it);
    active_[index].fetch_sub(1, std::memory_order_relaxed);
  }
}

int64_t PubSub::ConfirmationCount(const PubSubClient& state, PubSubKind kind) {
  // Redis counts channels and patterns together; shard channels apart.
  if (kind == PubSubKind::kShard) return state.count(PubSubKind::kShard);
  return state.count(PubSubKind::kChannel) + state.count(PubSubKind::kPattern);
}

void PubSub::ReplyConfirmation(protocol::ReplyBuilder& reply, std::string_view type,
                               const std::string_view* name, int64_t count) {
  reply.PushHeader(3);
  reply.Bulk(type);
  if (name != nullptr) {
    reply.Bulk(*name);
  } else {
    reply.Null();
  }
  reply.Integer(count);
}

void PubSub::Subscribe(ClientState& client, PubSubKind kind, std::string_view name,
                       protocol::ReplyBuilder& reply) {
  PubSubClient& state = StateOf(client);
  const int index = static_cast<int>(kind);
  if (state.names_[index].emplace(ToAbsl(name)).second) {
    AddListener(kind, name, &state);
    state.counts_[index].fetch_add(1, std::memory_order_relaxed);
  }
  ReplyConfirmation(reply, kSubscribeType[index], &name, ConfirmationCount(state, kind));
}

void PubSub::Unsubscribe(ClientState& client, PubSubKind kind, std::string_view name,
                         protocol::ReplyBuilder& reply, bool drain_first) {
  PubSubClient& state = StateOf(client);
  const int index = static_cast<int>(kind);
  auto it = state.names_[index].find(ToAbsl(name));
  if (it != state.names_[index].end()) {
    RemoveListener(kind, name, &state);
    state.names_[index].erase(it);
    state.counts_[index].fetch_sub(1, std::memory_order_relaxed);
  }
  // What was queued before the removal goes first (nothing is queued after it).
  if (drain_first) Drain(client, reply);
  ReplyConfirmation(reply, kUnsubscribeType[index], &name, ConfirmationCount(state, kind));
}

void PubSub::UnsubscribeAll(ClientState& client, PubSubKind kind, protocol::ReplyBuilder& reply,
                            bool drain_first) {
  PubSubClient& state = StateOf(client);
  const int index = static_cast<int>(kind);
  std::vector<std::string> names(state.names_[index].begin(), state.names_[index].end());
  for (const std::string& name : names) Unsubscribe(client, kind, name, reply, drain_first);
  if (names.empty()) {
    ReplyConfirmation(reply, kUnsubscribeType[index], nullptr, ConfirmationCount(state, kind));
  }
}

void PubSub::Forget(ClientState& client) {
  PubSubClient* state = client.pubsub();
  if (state == nullptr) return;
  for (PubSubKind kind : {PubSubKind::kChannel, PubSubKind::kPattern, PubSubKind::kShard}) {
    const int index = static_cast<int>(kind);
    for (const std::string& name : state->names_[index]) RemoveListener(kind, name, state);
    state->names_[index].clear();
    state->counts_[index].store(0, std::memory_order_relaxed);
  }
  // Nothing can be queued any more: what was is dropped.
  std::lock_guard lock(state->queue_mutex_);
  state->queue_.clear();
}

void PubSub::Enqueue(PubSubClient* listener, PubSubDelivery delivery, bool immediate) {
  bool post = false;
  // A blocked client's command re-run here (on the thread that served it) leaves its messages
  // for its own thread, which drains them after the delivered reply (Connection::OnUnblocked).
  const bool executing = &listener->client_ == pubsub_internal::tls_executing_client;
  const bool rerun = executing && listener->client_.rerunning_blocked;
  if (immediate && executing && !rerun) pubsub_internal::tls_executing_client_has_mail = true;
  {
    std::lock_guard lock(listener->queue_mutex_);
    listener->queue_.push_back(std::move(delivery));
    if (!rerun) {
      post = !listener->scheduled_;
      listener->scheduled_ = true;
    }
  }
  if (post) listener->client_.Post(ClientMessage::Kind::kPubSubReady);
}

namespace {

// A message frame as RESP2 writes it: *N, then the bulk strings.
std::shared_ptr<const std::string> MessageFrame(std::initializer_list<std::string_view> parts) {
  auto frame = std::make_shared<std::string>();
  size_t size = 16;
  for (std::string_view part : parts) size += part.size() + 16;
  frame->reserve(size);
  frame->append("*").append(std::to_string(parts.size())).append("\r\n");
  for (std::string_view part : parts) {
    frame->append("$").append(std::to_string(part.size())).append("\r\n");
    frame->append(part).append("\r\n");
  }
  return frame;
}

}  // namespace

namespace pubsub_internal {

struct PublishHold {
  // A message to publish (`target` null) or a delivery for `target`, in the order they came.
  struct Held {
    PubSubKind kind = PubSubKind::kChannel;
    std::string channel;
    std::string payload;
    std::shared_ptr<ClientState> target;
    PubSubDelivery delivery;
  };
  PubSub& pubsub;
  ClientState& publisher;
  std::vector<Held> held;
};

}  // namespace pubsub_internal

PublishHoldScope::PublishHoldScope(PubSub& pubsub, ClientState& publisher) {
  if (pubsub_internal::tls_publish_hold != nullptr) return;
  hold_.reset(new pubsub_internal::PublishHold{pubsub, publisher, {}});
  pubsub_internal::tls_publish_hold = hold_.get();
}

PublishHoldScope::~PublishHoldScope() {
  if (hold_ == nullptr) return;
  pubsub_internal::tls_publish_hold = nullptr;
  // The publisher's state now: it may have subscribed within the scope.
  const PubSubClient* self = hold_->publisher.pubsub();
  size_t dropped = 0;
  for (pubsub_internal::PublishHold::Held& item : hold_->held) {
    try {
      if (item.target != nullptr) {
        PubSub::Enqueue(&hold_->pubsub.StateOf(*item.target), std::move(item.delivery),
                        /*immediate=*/false);
      } else {
        hold_->pubsub.QueueForListeners(item.kind, item.channel, item.payload,
                                        PubSub::Recipients::kAllButSelf, self);
      }
    } catch (const std::bad_alloc&) {
      ++dropped;  // A destructor must not throw; the rest may still fit.
    }
  }
  if (dropped > 0) {
    spdlog::warn("Out of memory: {} messages held for the end of a transaction were dropped",
                 dropped);
  }
}

void PubSub::Deliver(const std::shared_ptr<ClientState>& client, PubSubDelivery delivery) {
  pubsub_internal::PublishHold* hold = pubsub_internal::tls_publish_hold;
  if (hold != nullptr && &hold->pubsub == this && client.get() != &hold->publisher) {
    pubsub_internal::PublishHold::Held item;
    item.target = client;
    item.delivery = std::move(delivery);
    hold->held.push_back(std::move(item));
    return;
  }
  Enqueue(&StateOf(*client), std::move(delivery), /*immediate=*/false);
}

int64_t PubSub::Publish(PubSubKind kind, std::string_view channel, std::string_view payload) {
  pubsub_internal::PublishHold* hold = pubsub_internal::tls_publish_hold;
  int64_t receivers;
  if (hold == nullptr || &hold->pubsub != this) {
    receivers = QueueForListeners(kind, channel, payload).listeners;
  } else {
    const Queued queued =
        QueueForListeners(kind, channel, payload, Recipients::kSelfOnly, hold->publisher.pubsub());
    if (queued.others > 0) {
      pubsub_internal::PublishHold::Held item;
      item.kind = kind;
      item.channel = channel;
      item.payload = payload;
      hold->held.push_back(std::move(item));
    }
    receivers = queued.listeners;
  }
  if (pubsub_internal::tls_executing_client_has_mail) {
    pubsub_internal::tls_executing_client_has_mail = false;
    ClientState& client = *pubsub_internal::tls_executing_client;
    // Inside EXEC a RESP2 client's message waits for the end of EXEC's array (a push frame
    // within it is what Redis writes in RESP3); replies being dropped (CLIENT REPLY OFF/SKIP)
    // leave it queued for after the command.
    if ((!client.in_exec || client.resp >= 3) && !client.reply_suppressed) {
      Drain(client, *pubsub_internal::tls_executing_reply, /*messages_only=*/true);
    }
  }
  return receivers;
}

PubSub::Queued PubSub::QueueForListeners(PubSubKind kind, std::string_view channel,
                                         std::string_view payload, Recipients recipients,
                                         const PubSubClient* self) {
  const bool shard_kind = kind == PubSubKind::kShard;
  Queued queued;
  // Counts `listeners` and queues the message (its frame made on first use) for those
  // `recipients` selects.
  auto offer = [&](const ListenerList& listeners, auto make_frame) {
    std::shared_ptr<const std::string> frame;
    for (PubSubClient* listener : listeners) {
      const bool is_self = listener == self;
      ++queued.listeners;
      if (!is_self) ++queued.others;
      if (recipients == Recipients::kSelfOnly ? !is_self
                                              : recipients == Recipients::kAllButSelf && is_self) {
        continue;
      }
      if (frame == nullptr) frame = make_frame();
      Enqueue(listener, {frame});
    }
  };
  Shard& shard = TableOf(kind).For(channel);
  // Held until every listener, patterns included, has the message: see ordering above.
  std::lock_guard lock(shard.mutex);
  if (auto it = shard.channels.find(ToAbsl(channel)); it != shard.channels.end()) {
    offer(it->second, [&] {
      return MessageFrame({shard_kind ? "smessage" : "message", channel, payload});
    });
  }
  if (shard_kind || ActiveNames(PubSubKind::kPattern) == 0) return queued;
  std::shared_lock patterns_lock(patterns_mutex_);
  for (const auto& [name, pattern] : patterns_) {
    if (!GlobMatch(name, channel)) continue;
    offer(pattern.listeners, [&] { return MessageFrame({"pmessage", name, channel, payload}); });
  }
  return queued;
}

size_t PubSub::Drain(ClientState& client, protocol::ReplyBuilder& reply, bool messages_only) {
  PubSubClient* state = client.pubsub();
  if (state == nullptr) return 0;
  std::vector<PubSubDelivery>& taken = state->draining_;
  {
    std::lock_guard lock(state->queue_mutex_);
    if (messages_only) {
      // Invalidations stay queued, in order, for after the command (their post is on its way).
      auto kept = std::stable_partition(state->queue_.begin(), state->queue_.end(),
                                        [](const PubSubDelivery& delivery) {
                                          return delivery.kind != PubSubDelivery::Kind::kMessage;
                                        });
      taken.assign(std::make_move_iterator(kept), std::make_move_iterator(state->queue_.end()));
      state->queue_.erase(kept, state->queue_.end());
      if (taken.empty()) return 0;
    } else {
      if (state->queue_.empty()) {
        state->scheduled_ = false;
        return 0;
      }
      taken.swap(state->queue_);
      state->scheduled_ = false;
    }
  }
  const bool push = reply.resp_version() >= 3;
  size_t drained = 0;
  for (const PubSubDelivery& delivery : taken) {
    std::string_view frame = *delivery.frame;
    switch (delivery.kind) {
      case PubSubDelivery::Kind::kMessage:
        if (push) {
          reply.Raw(">");
          frame.remove_prefix(1);
        }
        break;
      case PubSubDelivery::Kind::kInvalidation:
      case PubSubDelivery::Kind::kRedirectedInvalidation:
        if (push) {
          reply.Raw(">2\r\n$10\r\ninvalidate\r\n");
        } else if (delivery.kind == PubSubDelivery::Kind::kRedirectedInvalidation &&
                   state->subscribed()) {
          reply.Raw("*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n");
        } else {
          continue;  // RESP2 has no way to tell this connection.
        }
        break;
      case PubSubDelivery::Kind::kRedirectBroken:
        if (!push) continue;
        reply.Raw(">2\r\n$21\r\ntracking-redir-broken\r\n");
        break;
    }
    reply.Raw(frame);
    ++drained;
  }
  taken.clear();
  return drained;
}

std::vector<std::string> PubSub::Channels(PubSubKind kind, const std::string_view* pattern) const {
  std::vector<std::string> names;
  for (const Shard& shard : TableOf(kind).shards) {
    std::lock_guard lock(shard.mutex);
    for (const auto& [name, listeners] : shard.channels) {
      if (pattern == nullptr || GlobMatch(*pattern, name)) names.push_back(name);
    }
  }
  return names;
}

int64_t PubSub::CountListeners(PubSubKind kind, std::string_view channel) const {
  const Shard& shard = TableOf(kind).For(channel);
  std::lock_guard lock(shard.mutex);
  auto it = shard.channels.find(ToAbsl(channel));
  return it == shard.channels.end() ? 0 : static_cast<int64_t>(it->second.size());
}

}  // namespace gigakv::server
