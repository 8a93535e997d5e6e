#include "server/notifications.h"

#include "server/pubsub.h"

namespace gigakv::server {
namespace {

uint32_t ClassOf(char letter) {
  switch (letter) {
    case 'g':
      return kGenericEvents;
    case '$':
      return kStringEvents;
    case 'l':
      return kListEvents;
    case 's':
      return kSetEvents;
    case 'h':
      return kHashEvents;
    case 'z':
      return kZsetEvents;
    case 'x':
      return kExpiredEvents;
    case 'e':
      return kEvictedEvents;
    case 't':
      return kStreamEvents;
    case 'm':
      return kKeyMissEvents;
    case 'd':
      return kModuleEvents;
    case 'n':
      return kNewKeyEvents;
    default:
      return 0;
  }
}

}  // namespace

KeyspaceNotifier::KeyspaceNotifier(ChangeStream& changes, PubSub& pubsub)
    : changes_(changes), pubsub_(pubsub) {
  changes_.AddConsumer(this);
}

KeyspaceNotifier::~KeyspaceNotifier() { changes_.RemoveConsumer(this); }

void KeyspaceNotifier::Configure(std::string_view flags) {
  uint32_t classes = 0;
  uint32_t channels = 0;
  for (char letter : flags) {
    if (letter == 'K') {
      channels |= kKeyspaceChannel;
    } else if (letter == 'E') {
      channels |= kKeyeventChannel;
    } else if (letter == 'A') {
      for (char c : std::string_view("g$lshzxetd")) classes |= ClassOf(c);
    } else {
      classes |= ClassOf(letter);
    }
  }
  const uint32_t selected = channels != 0 ? classes : 0;
  flags_.store(classes | channels, std::memory_order_relaxed);
  selected_.store(selected, std::memory_order_relaxed);
  // Changes carry their events whenever the stream is active; "keymiss" needs no record.
  changes_.SetInterest(this, (selected & ~kKeyMissEvents) != 0 ? Interest::kKeys : Interest::kNone);
}

void KeyspaceNotifier::OnChange(const ChangeRecord& record) {
  if (selected_.load(std::memory_order_relaxed) == 0) return;
  switch (record.cause) {
    case ChangeCause::kCommand:
      for (const KeyEvent& event : record.events) Notify(event);
      return;
    case ChangeCause::kExpiry:
    case ChangeCause::kEviction: {
      const KeyEventClass type =
          record.cause == ChangeCause::kExpiry ? kExpiredEvents : kEvictedEvents;
      if (!wants(type)) return;
      for (const ChangedKey& key : record.keys) {
        Publish({type, type == kExpiredEvents ? "expired" : "evicted", key.db, key.key});
      }
      return;
    }
    case ChangeCause::kFlush:
    case ChangeCause::kSwapDb:
      return;  // Redis notifies neither.
  }
}

void KeyspaceNotifier::Publish(const KeyEvent& event) {
  const uint32_t flags = flags_.load(std::memory_order_relaxed);
  std::string channel;
  auto channel_of = [&](std::string_view kind, std::string_view suffix) {
    channel.assign(kind).append(std::to_string(event.db)).append("__:").append(suffix);
    return std::string_view(channel);
  };
  if (flags & kKeyspaceChannel) {
    pubsub_.Publish(PubSubKind::kChannel, channel_of("__keyspace@", event.key), event.name);
  }
  if (flags & kKeyeventChannel) {
    pubsub_.Publish(PubSubKind::kChannel, channel_of("__keyevent@", event.name), event.key);
  }
}

}  // namespace gigakv::server
