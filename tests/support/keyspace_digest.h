// Tools for tests that compare whole keyspaces: an in-process client for any Server, a canonical
// dump of everything a server holds, and a recorder of the change stream that can replay it.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/types/stream.h"
#include "gigakv/change_stream.h"
#include "gigakv/clock.h"
#include "gigakv/effects.h"
#include "gtest/gtest.h"
#include "persistence/rdb/rdb_io.h"
#include "persistence/rdb/rdb_values.h"
#include "protocol/reply_builder.h"
#include "protocol/resp_reader.h"
#include "server/server.h"
#include "support/command_fixture.h"

namespace gigakv::testing {

// A client of `server` without a connection. With `can_block` it is registered with an outbox,
// as a connection's client is: a blocking command that finds nothing parks it, and the reply it
// gets when served lands in TakeUnblockedReplies() (and clears `blocked`, as the connection
// does). Such a client is also held by CLIENT PAUSE (RunRaw then fails the test) and may
// MONITOR: everything posted to it is kept (TakeMessages).
class InProcessClient {
 public:
  explicit InProcessClient(server::Server& server, bool can_block = false)
      : server_(server),
        state_(std::make_shared<server::ClientState>(server.clients().NextClientId())) {
    state_->authenticated = true;
    if (can_block) {
      // A blocking command parks only a registered client with an outbox to be handed its reply.
      state_->set_outbox(std::make_unique<RecordingOutbox>(*this));
      server_.clients().Register(state_);
      registered_ = true;
    }
  }
  ~InProcessClient() {
    if (!registered_) return;
    // What a connection's Close undoes.
    server_.blocking().Remove(state_->id);
    if (state_->monitor.load()) server_.clients().RemoveMonitor(state_->id);
    if (state_->paused.exchange(false)) server_.clients().paused_clients().fetch_sub(1);
    server_.clients().Unregister(state_->id);
  }
  InProcessClient(const InProcessClient&) = delete;
  InProcessClient& operator=(const InProcessClient&) = delete;

  // Runs one command; returns its raw reply (empty while the client is blocked).
  std::string RunRaw(const std::vector<std::string>& args) {
    return ExecuteRaw(server_, *state_, reply_, args);
  }
  protocol::RespValue Run(const std::vector<std::string>& args) {
    return ParseOneReply(RunRaw(args));
  }
  std::string Reply(const std::vector<std::string>& args) { return Run(args).DebugString(); }

  // The replies that ended blocked waits, oldest first.
  std::vector<std::string> TakeUnblockedReplies() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(unblocked_, {});
  }
  // Every other message posted to the client (MONITOR lines, resumes, kills), oldest first.
  std::vector<server::ClientMessage> TakeMessages() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(messages_, {});
  }
  server::ClientState& state() { return *state_; }

 private:
  // Keeps what is posted to the client, delivered at once on the posting thread.
  class RecordingOutbox : public server::ClientOutbox {
   public:
    explicit RecordingOutbox(InProcessClient& client) : client_(client) {}
    void Post(server::ClientMessage message) override {
      std::lock_guard<std::mutex> lock(client_.mutex_);
      if (message.kind == server::ClientMessage::Kind::kUnblockedReply) {
        client_.state_->blocked.store(false);  // The wait is over, as for a connection.
        client_.unblocked_.push_back(std::move(message.bytes));
      } else {
        client_.messages_.push_back(std::move(message));
      }
    }

   private:
    InProcessClient& client_;
  };

  server::Server& server_;
  std::shared_ptr<server::ClientState> state_;
  bool registered_ = false;
  protocol::ReplyBuilder reply_;
  std::mutex mutex_;
  std::vector<std::string> unblocked_;
  std::vector<server::ClientMessage> messages_;
};

// "db:key" -> "type|absolute expiry (ms, -1 none)|value", the value canonical per type: string
// bytes, list elements in order, set members sorted, hash pairs sorted by field, zset pairs in
// rank order, stream entries in order. Reads with NO-TOUCH so that taking a digest does not
// change eviction's choices.
using Digest = std::map<std::string, std::string>;

inline std::string JoinElements(const protocol::RespValue& value, bool sort_pairs, bool sort) {
  std::vector<std::string> parts;
  const auto& elements = value.elements;
  if (sort_pairs) {
    for (size_t i = 0; i + 1 < elements.size(); i += 2) {
      parts.push_back(elements[i].str + "=" + elements[i + 1].str);
    }
  } else {
    for (const auto& element : elements) parts.push_back(element.str);
  }
  if (sort || sort_pairs) std::sort(parts.begin(), parts.end());
  std::string joined;
  for (const std::string& part : parts) {
    joined += std::to_string(part.size()) + ":" + part + ",";
  }
  return joined;
}

// A stream's entries, metadata (last, first and max deleted IDs, entries added) and consumer
// groups (positions, pending entries with their owners, times and counts, consumers), read from
// its DUMP payload: independent of the node layout (a replayed trim may flag entries where the
// original removed nodes).
inline std::string StreamDigest(const std::string& payload) {
  persistence::rdb::RdbReader reader(std::string_view(payload).substr(0, payload.size() - 10));
  absl::StatusOr<uint8_t> type = reader.ReadByte();
  if (!type.ok()) return "<bad dump>";
  absl::StatusOr<persistence::rdb::LoadedValue> loaded =
      persistence::rdb::ReadValue(reader, *type, CollectionLimits{});
  if (!loaded.ok() || loaded->object == nullptr) return "<bad dump>";
  const auto& stream = static_cast<const Stream&>(*loaded->object);
  std::string value = "last=" + stream.last_id().ToString() +
                      " first=" + stream.first_id().ToString() +
                      " max_deleted=" + stream.max_deleted_id().ToString() +
                      " added=" + std::to_string(stream.entries_added()) + " ";
  stream.Range(StreamID::Min(), StreamID::Max(), false,
               [&](const StreamID& id, absl::Span<const std::string_view> field_values) {
                 value += id.ToString() + "{";
                 for (std::string_view element : field_values) {
                   value += std::to_string(element.size()) + ":" + std::string(element) + ",";
                 }
                 value += "}";
                 return true;
               });
  for (const auto& [name, group] : stream.groups()) {
    value += " group " + std::to_string(name.size()) + ":" + name +
             " last=" + group->last_id.ToString() + " read=" + std::to_string(group->entries_read) +
             " pel[";
    for (const auto& [id, nack] : group->pel) {
      value += id.ToString() + ":" + nack->consumer->name + "@" +
               std::to_string(nack->delivery_time_ms) + "x" + std::to_string(nack->delivery_count) +
               ",";
    }
    value += "] consumers[";
    for (const auto& [consumer_name, consumer] : group->consumers) {
      value += std::to_string(consumer_name.size()) + ":" + consumer_name + "@" +
               std::to_string(consumer->seen_time_ms) + "(" + std::to_string(consumer->pel.size()) +
               "),";
    }
    value += "]";
  }
  return value;
}

inline Digest KeyspaceDigest(server::Server& server, int databases = 16) {
  InProcessClient client(server);
  client.state().no_touch = true;
  Digest digest;
  for (int db = 0; db < databases; ++db) {
    client.state().db = db;
    protocol::RespValue keys = client.Run({"KEYS", "*"});
    for (const protocol::RespValue& key_value : keys.elements) {
      const std::string& key = key_value.str;
      std::string type = client.Run({"TYPE", key}).str;
      std::string expiry = std::to_string(client.Run({"PEXPIRETIME", key}).integer);
      std::string value;
      if (type == "string") {
        value = client.Run({"GET", key}).str;
      } else if (type == "list") {
        value = JoinElements(client.Run({"LRANGE", key, "0", "-1"}), false, false);
      } else if (type == "set") {
        value = JoinElements(client.Run({"SMEMBERS", key}), false, true);
      } else if (type == "hash") {
        value = JoinElements(client.Run({"HGETALL", key}), true, false);
      } else if (type == "zset") {
        value = JoinElements(client.Run({"ZRANGE", key, "0", "-1", "WITHSCORES"}), false, false);
      } else if (type == "stream") {
        value = StreamDigest(client.Run({"DUMP", key}).str);
      } else {
        continue;  // Gone between KEYS and TYPE (expired): not part of the keyspace.
      }
      digest[std::to_string(db) + ":" + key] = type + "|" + expiry + "|" + value;
    }
  }
  return digest;
}

// The "db:key" entries that differ between two digests (added, removed or changed).
inline std::set<std::string> ChangedEntries(const Digest& before, const Digest& after) {
  std::set<std::string> changed;
  for (const auto& [key, value] : before) {
    auto found = after.find(key);
    if (found == after.end() || found->second != value) changed.insert(key);
  }
  for (const auto& [key, value] : after) {
    if (!before.contains(key)) changed.insert(key);
  }
  return changed;
}

// A readable account of where two digests differ, for failure messages.
inline std::string DescribeDifference(const Digest& expected, const Digest& actual) {
  std::string text;
  for (const std::string& key : ChangedEntries(expected, actual)) {
    auto want = expected.find(key);
    auto got = actual.find(key);
    text += "  " + key + ": expected " + (want == expected.end() ? "(absent)" : want->second) +
            ", got " + (got == actual.end() ? "(absent)" : got->second) + "\n";
  }
  return text;
}

// Records every change a server publishes: the changed keys of each record (owned copies) as a
// consumer of the change stream, and the rendered effects (MULTI/EXEC around groups) as the log
// will receive them. Replay() feeds the effects to another server.
class ChangeRecorder : public ChangeConsumer, public EffectSink {
 public:
  struct Record {
    uint64_t sequence;
    ChangeCause cause;
    ChangeScope scope;
    int db;
    int swapped_dbs[2];
    std::vector<std::pair<int, std::string>> keys;
    std::vector<std::string> effect;
  };

  // With Interest::kKeys the recorder is the server's only consumer of keys and asks for no
  // effects (as WATCH and blocked clients do): records then carry empty effects and nothing can
  // be replayed.
  explicit ChangeRecorder(server::Server& server, Interest interest = Interest::kEffects)
      : server_(server), with_effects_(interest == Interest::kEffects) {
    server_.keyspace().changes().AddConsumer(this);
    server_.keyspace().changes().SetInterest(this, interest);
    if (with_effects_) server_.set_effect_sink(this);
  }
  ~ChangeRecorder() override {
    if (with_effects_) server_.set_effect_sink(nullptr);
    server_.keyspace().changes().RemoveConsumer(this);
  }

  void OnChange(const ChangeRecord& record) override {
    Record copy{record.sequence,
                record.cause,
                record.scope,
                record.db,
                {record.swapped_dbs[0], record.swapped_dbs[1]},
                {},
                {}};
    for (const ChangedKey& key : record.keys) copy.keys.emplace_back(key.db, std::string(key.key));
    copy.effect.assign(record.effect.begin(), record.effect.end());
    std::lock_guard<std::mutex> lock(mutex_);
    records_.push_back(std::move(copy));
  }
  void Append(Effect effect) override {
    int64_t now_ms = server_.keyspace().NowMs();
    std::lock_guard<std::mutex> lock(mutex_);
    effects_.push_back({std::move(effect), now_ms});
  }

  std::vector<Record> TakeRecords() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(records_, {});
  }
  size_t effect_count() {
    std::lock_guard<std::mutex> lock(mutex_);
    return effects_.size();
  }

  // Runs the effects recorded since the last Replay on `target`, as the log's replayer would:
  // SELECT where the database changes, then the effect. Fails the test on an error reply.
  // `target_clock` (the target server's clock) is set to the time each effect was published,
  // then to the source's time: a replica applies the stream as it comes, so a key whose TTL
  // ran out after a command used it is still there when that command is replayed.
  void Replay(InProcessClient& target, ManualClock& target_clock) {
    std::vector<TimedEffect> effects;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      effects.assign(effects_.begin() + replayed_, effects_.end());
      replayed_ = effects_.size();
    }
    int current_db = target.state().db;  // SELECT inside MULTI applies at EXEC: track it here.
    for (const auto& [effect, at_ms] : effects) {
      target_clock.SetMs(at_ms);
      if (effect.db != current_db) {
        protocol::RespValue selected = target.Run({"SELECT", std::to_string(effect.db)});
        EXPECT_FALSE(selected.is_error()) << selected.DebugString();
        current_db = effect.db;
      }
      protocol::RespValue reply = target.Run(effect.args);
      std::string rendered;
      for (const std::string& arg : effect.args) rendered += " " + arg;
      EXPECT_FALSE(reply.is_error()) << "replaying" << rendered << ": " << reply.DebugString();
      if (effect.args[0] == "EXEC") {
        for (const auto& element : reply.elements) {
          EXPECT_FALSE(element.is_error()) << "replaying a transaction: " << element.DebugString();
        }
      }
    }
    target_clock.SetMs(server_.keyspace().NowMs());
  }

 private:
  server::Server& server_;
  const bool with_effects_;
  std::mutex mutex_;
  struct TimedEffect {
    Effect effect;
    int64_t at_ms;  // The source's clock when it was published.
  };
  std::vector<Record> records_;
  std::vector<TimedEffect> effects_;
  size_t replayed_ = 0;
};

}  // namespace gigakv::testing
