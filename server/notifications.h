// Keyspace notifications (Redis's notify.c): every change of the keyspace, published as Pub/Sub
// messages for the classes `notify-keyspace-events` selects.
//
//   channels   for an event `e` of class `c` on key `k` in database `d`, when `c` is selected:
//                __keyspace@<d>__:<k>   with the message <e>   (flag K)
//                __keyevent@<d>__:<e>   with the message <k>   (flag E)
//              to channel and pattern listeners (never to shard channels), in that order.
//   sources    a command's events travel with its change record (ChangeRecord::events, given
//              by the Publish* helpers of server/commands/key_access.h, which every write calls
//              with its event: no command can publish a change without naming it). Removals by
//              expiry ("expired") and eviction ("evicted") come from the record's cause. Three
//              events are not changes and are emitted where they happen, as Redis does: "new"
//              where a key is added (dbAdd), "del" where a command deletes the collection it
//              emptied, and "keymiss" where a read lookup finds no key.
//   cost       nothing is published, and the change stream stays idle for it, while no class
//              is selected with K or E (the default, ""). Checking costs one relaxed load.
//
// Threading: any thread; events are published on the producer's thread while it holds the
// changed keys' shard locks (lock order: store shard, then Pub/Sub's locks), so one key's
// events reach a listener in the order the key changed. Inside EXEC they are held until it ends
// (PublishHoldScope), and no other command runs meanwhile, so that order holds there too.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "gigakv/change_stream.h"

namespace gigakv::server {

class PubSub;

class KeyspaceNotifier : public ChangeConsumer {
 public:
  KeyspaceNotifier(ChangeStream& changes, PubSub& pubsub);
  ~KeyspaceNotifier() override;
  KeyspaceNotifier(const KeyspaceNotifier&) = delete;
  KeyspaceNotifier& operator=(const KeyspaceNotifier&) = delete;

  // notify-keyspace-events as CONFIG stores it (letters of "g$lshzxetdnKEm", 'A' expanded):
  // selects the classes and channels. Unknown letters are ignored (the config validates them).
  void Configure(std::string_view flags);

  // Whether events of `type` are published at all (their class and K or E selected).
  bool wants(KeyEventClass type) const {
    return (selected_.load(std::memory_order_relaxed) & type) != 0;
  }

  // Publishes `event` now, if its class is selected.
  void Notify(const KeyEvent& event) {
    if (wants(event.type)) Publish(event);
  }

  void OnChange(const ChangeRecord& record) override;

 private:
  static constexpr uint32_t kKeyspaceChannel = 1u << 16;  // K
  static constexpr uint32_t kKeyeventChannel = 1u << 17;  // E

  void Publish(const KeyEvent& event);

  ChangeStream& changes_;
  PubSub& pubsub_;
  // The classes published (zero unless K or E is selected too).
  std::atomic<uint32_t> selected_{0};
  // The classes and the K and E bits.
  std::atomic<uint32_t> flags_{0};
};

}  // namespace gigakv::server
