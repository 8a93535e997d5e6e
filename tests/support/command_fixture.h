// In-process command testing: a Server without networking, an injected clock, and a client whose
// replies are parsed back into RespValues (RESP2 or RESP3).
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gigakv/clock.h"
#include "gigakv/effects.h"
#include "gtest/gtest.h"
#include "protocol/reply_builder.h"
#include "protocol/resp_reader.h"
#include "server/config.h"
#include "server/dispatcher.h"
#include "server/server.h"

namespace gigakv::testing {

// Collects effects handed to the log, rendered as "db: ARG ARG ...".
class RecordingEffectSink : public EffectSink {
 public:
  void Append(Effect effect) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string line = std::to_string(effect.db) + ":";
    for (const std::string& arg : effect.args) line += " " + arg;
    lines_.push_back(std::move(line));
  }
  // Returns and forgets what was logged so far.
  std::vector<std::string> Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(lines_, {});
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

// Runs one command for `client` on `server` as a connection would (coarse clock refreshed first)
// and returns the raw reply bytes. A command CLIENT PAUSE postponed (a client with an outbox)
// ran not at all and has no reply: that fails the test, as no caller here would run it again.
inline std::string ExecuteRaw(server::Server& server, server::ClientState& client,
                              protocol::ReplyBuilder& reply, const std::vector<std::string>& args) {
  std::vector<std::string_view> views(args.begin(), args.end());
  reply.buffer().clear();
  server.keyspace().RefreshCoarseClock();  // As the connection does once per batch of requests.
  if (server.dispatcher().Execute(client, views, reply) == server::CommandOutcome::kPostponed) {
    ADD_FAILURE() << "postponed by CLIENT PAUSE, not run: " << (args.empty() ? "" : args[0]);
  }
  return reply.buffer();
}

// Parses raw reply bytes that must hold exactly one value (an empty input is a null value).
inline protocol::RespValue ParseOneReply(const std::string& raw) {
  protocol::RespValue value;
  int64_t used = protocol::ParseReply(raw, &value);
  EXPECT_EQ(used, static_cast<int64_t>(raw.size())) << "reply bytes: " << raw;
  return value;
}

class CommandTest : public ::testing::Test {
 protected:
  CommandTest()
      : server_(Configure(config_), MakeOptions()), client_(server_.clients().NextClientId()) {
    client_.authenticated = true;
    server_.set_effect_sink(&effects_);
  }

  // Runs one command and returns the raw reply bytes.
  std::string RunRaw(const std::vector<std::string>& args) {
    return ExecuteRaw(server_, client_, reply_, args);
  }

  // Runs one command and parses its reply (exactly one value must come back).
  protocol::RespValue Run(const std::vector<std::string>& args) {
    return ParseOneReply(RunRaw(args));
  }

  // Shorthand: the reply rendered by RespValue::DebugString ("+OK", ":1", "\"v\"", "(nil)"...).
  std::string Reply(const std::vector<std::string>& args) { return Run(args).DebugString(); }

  void UseResp(int version) {
    client_.resp = version;
    reply_.set_resp_version(version);
  }

  // Small shard count: tests stay fast and still cross shards. DEBUG allowed for every client
  // (tests set client addresses of their own).
  static server::Config& Configure(server::Config& config) {
    (void)config.SetOne("shards", "16", false);
    (void)config.SetOne("enable-debug-command", "yes", false);
    (void)config.SetOne("save", "", false);  // No background saves unless a test asks.
    return config;
  }
  server::ServerOptions MakeOptions() {
    server::ServerOptions options;
    options.clock = &clock_;
    return options;
  }

  ManualClock clock_;
  RecordingEffectSink effects_;
  server::Config config_;
  server::Server server_;
  server::ClientState client_;
  protocol::ReplyBuilder reply_;
};

}  // namespace gigakv::testing
