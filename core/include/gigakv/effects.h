// The deterministic effects of writes, as the append-only log (and later replicas) consume them.
//
// An Effect is a command that, replayed in order against the state before it, produces the state
// after it, whatever the clock or random source says at replay time: expiry times are absolute
// (SET k v PXAT <ms>, PEXPIREAT), random choices are explicit (the members SPOP removed), and
// keys removed by expiry or eviction appear as DEL. Effects of one key are handed over in the
// order they were applied (the producer holds the key's shard lock while appending).
//
// Grammar of the stream (per producing thread):
//   stream      := (effect | transaction)*
//   transaction := MULTI effect+ EXEC      -- one EXEC's writes; apply all or none
//   effect      := a write command with deterministic arguments (SET k v PXAT t, DEL k, ...)
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gigakv/change_stream.h"

namespace gigakv {

struct Effect {
  int db = 0;
  std::vector<std::string> args;  // args[0] is the command name, upper case.
};

// Receives effects. Append may be called from any thread, concurrently, while the caller holds
// a shard lock: implementations must be thread-safe and must not block for long (queue and
// return) or call back into the store.
class EffectSink {
 public:
  virtual ~EffectSink() = default;
  virtual void Append(Effect effect) = 0;
};

// Renders the change stream's effects as Effects for a sink: each record's effect in its
// database, and a group's records between MULTI and EXEC, handed over together when the group
// ends. The sink's order is the order of the changes only if no other thread publishes while a
// group is open: the server guarantees it (EXEC excludes every I/O thread and the cron thread,
// server/transaction.h); an embedding that publishes from ungated threads during a group gets
// those records before the group's. Interested in effects once attached.
class EffectSinkConsumer : public ChangeConsumer {
 public:
  explicit EffectSinkConsumer(EffectSink& sink) : sink_(sink) {}
  void OnChange(const ChangeRecord& record) override;
  void OnGroupEnd(uint64_t group) override;

 private:
  EffectSink& sink_;
  std::mutex mutex_;
  absl::flat_hash_map<uint64_t, std::vector<Effect>> open_groups_;
};

}  // namespace gigakv
