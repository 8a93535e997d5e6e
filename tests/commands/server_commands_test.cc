#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest-spi.h"
#include "server/cron.h"
#include "server/transaction.h"
#include "support/command_fixture.h"
#include "support/keyspace_digest.h"

namespace gigakv::testing {
namespace {

using absl::StrCat;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ServerCommandsTest : public CommandTest {};

TEST_F(ServerCommandsTest, PingEcho) {
  EXPECT_EQ(Reply({"PING"}), "+PONG");
  EXPECT_EQ(Reply({"ping", "hi"}), "\"hi\"");
  EXPECT_EQ(Reply({"PING", "a", "b"}), "-ERR wrong number of arguments for 'ping' command");
  EXPECT_EQ(Reply({"ECHO", "x"}), "\"x\"");
  EXPECT_EQ(Reply({"ECHO"}), "-ERR wrong number of arguments for 'echo' command");
}

TEST_F(ServerCommandsTest, UnknownCommandAndSubcommand) {
  EXPECT_EQ(Reply({"foo", "a", "b"}),
            "-ERR unknown command 'foo', with args beginning with: 'a' 'b' ");
  EXPECT_EQ(Reply({"foo"}), "-ERR unknown command 'foo', with args beginning with: ");
  EXPECT_EQ(Reply({"config", "foo"}), "-ERR unknown subcommand 'foo'. Try CONFIG HELP.");
  EXPECT_EQ(Reply({"config"}), "-ERR wrong number of arguments for 'config' command");
  EXPECT_EQ(Reply({"config", "get"}), "-ERR wrong number of arguments for 'config|get' command");
  EXPECT_EQ(Reply({"client", "nope"}), "-ERR unknown subcommand 'nope'. Try CLIENT HELP.");
}

// gigakv has no replicas, so WAIT counts none. An in-process client cannot block, so it gets
// its 0 at once, as a client inside MULTI does (tests/e2e/test_blocking.py covers the wait).
TEST_F(ServerCommandsTest, WaitCountsNoReplicas) {
  EXPECT_EQ(Reply({"WAIT", "0", "0"}), ":0");
  EXPECT_EQ(Reply({"WAIT", "3", "0"}), ":0");
  EXPECT_EQ(Reply({"WAIT", "3", "9223372036854775807"}), ":0");
  EXPECT_EQ(Reply({"WAIT", "x", "0"}), "-ERR value is not an integer or out of range");
  EXPECT_EQ(Reply({"WAIT", "1", "0.5"}), "-ERR timeout is not an integer or out of range");
  EXPECT_EQ(Reply({"WAIT", "1", "-1"}), "-ERR timeout is negative");
  EXPECT_EQ(Reply({"WAIT", "1"}), "-ERR wrong number of arguments for 'wait' command");
  EXPECT_EQ(Reply({"COMMAND", "GETKEYS", "WAIT", "1", "1"}),
            "-ERR The command has no key arguments");
}

// An in-process client expects one reply per command, like Redis's DENY BLOCKING clients, so it
// cannot monitor (tests/e2e/test_monitor.py covers monitors).
TEST_F(ServerCommandsTest, MonitorNeedsAConnection) {
  EXPECT_EQ(Reply({"MONITOR"}), "-ERR MONITOR isn't allowed for DENY BLOCKING client");
  EXPECT_EQ(Reply({"MONITOR", "x"}), "-ERR wrong number of arguments for 'monitor' command");
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");  // Still an ordinary client.
}

// CLIENT PAUSE holds the requests of connections (tests/e2e/test_pause.py); in-process clients,
// which expect a reply per call, are never held.
TEST_F(ServerCommandsTest, ClientPauseNeverHoldsInProcessClients) {
  EXPECT_EQ(Reply({"CLIENT", "PAUSE", "100000", "WRITE"}), "+OK");
  EXPECT_EQ(Reply({"SET", "k", "v"}), "+OK");
  EXPECT_EQ(Reply({"CLIENT", "PAUSE", "100000"}), "+OK");
  EXPECT_EQ(Reply({"GET", "k"}), "\"v\"");
  EXPECT_EQ(Reply({"CLIENT", "UNPAUSE"}), "+OK");
  EXPECT_EQ(Reply({"CLIENT", "PAUSE", "10", "NONE"}),
            "-ERR CLIENT PAUSE mode must be WRITE or ALL");
}

// A registered client with an outbox that keeps what other threads post to it, as a
// connection's would be handed it on its own thread.
class OutboxClient {
 public:
  explicit OutboxClient(server::Server& server)
      : server_(server),
        state_(std::make_shared<server::ClientState>(server.clients().NextClientId())) {
    state_->authenticated = true;
    state_->set_outbox(std::make_unique<Recorder>(*this));
    server_.clients().Register(state_);
  }
  ~OutboxClient() {
    server_.clients().RemoveMonitor(state_->id);
    server_.clients().Unregister(state_->id);
  }

  std::string Reply(const std::vector<std::string>& args) {
    return ParseOneReply(ExecuteRaw(server_, *state_, reply_, args)).DebugString();
  }
  // Runs a command and says what became of it.
  server::CommandOutcome Outcome(const std::vector<std::string>& args) {
    std::vector<std::string_view> views(args.begin(), args.end());
    return server_.dispatcher().Execute(*state_, views, reply_);
  }
  server::ClientState& state() { return *state_; }
  std::vector<server::ClientMessage> Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(posted_, {});
  }

 private:
  class Recorder : public server::ClientOutbox {
   public:
    explicit Recorder(OutboxClient& client) : client_(client) {}
    void Post(server::ClientMessage message) override {
      std::lock_guard<std::mutex> lock(client_.mutex_);
      client_.posted_.push_back(std::move(message));
    }

   private:
    OutboxClient& client_;
  };

  server::Server& server_;
  std::shared_ptr<server::ClientState> state_;
  protocol::ReplyBuilder reply_;
  std::mutex mutex_;
  std::vector<server::ClientMessage> posted_;
};

using Kind = server::ClientMessage::Kind;

// MONITOR lines and CLIENT KILL reach another client only through its outbox, in the order
// they were posted.
TEST_F(ServerCommandsTest, MonitorLinesAndKillArePostedToTheOutbox) {
  OutboxClient monitor(server_);
  EXPECT_EQ(monitor.Reply({"MONITOR"}), "+OK");
  EXPECT_EQ(Reply({"SET", "k", "v"}), "+OK");
  EXPECT_EQ(Reply({"GET", "k"}), "\"v\"");
  EXPECT_EQ(Reply({"CLIENT", "KILL", "ID", std::to_string(monitor.state().id)}), ":1");
  std::vector<server::ClientMessage> posted = monitor.Take();
  ASSERT_EQ(posted.size(), 3u);
  EXPECT_EQ(posted[0].kind, Kind::kPushOutput);
  EXPECT_THAT(posted[0].bytes, HasSubstr(" \"SET\" \"k\" \"v\"\r\n"));
  EXPECT_EQ(posted[1].kind, Kind::kPushOutput);
  EXPECT_THAT(posted[1].bytes, HasSubstr(" \"GET\" \"k\"\r\n"));
  EXPECT_EQ(posted[2].kind, Kind::kKill);
  EXPECT_EQ(posted[2].bytes, "");
}

// A client with an outbox is held by CLIENT PAUSE (its connection keeps the request); when the
// pause ends, a client waiting for it is told through its outbox.
TEST_F(ServerCommandsTest, PauseHoldsOutboxClientsAndPostsTheirResume) {
  OutboxClient held(server_);
  EXPECT_EQ(Reply({"CLIENT", "PAUSE", "100000", "WRITE"}), "+OK");
  // Not run: no reply, the connection keeps the request and waits.
  EXPECT_EQ(held.Outcome({"SET", "k", "v"}), server::CommandOutcome::kPostponed);
  held.state().paused.store(true);               // As its connection marks itself while it waits.
  EXPECT_EQ(held.Reply({"GET", "k"}), "(nil)");  // Reads still run under a WRITE pause.
  EXPECT_TRUE(held.Take().empty());
  EXPECT_EQ(Reply({"CLIENT", "UNPAUSE"}), "+OK");
  std::vector<server::ClientMessage> posted = held.Take();
  ASSERT_EQ(posted.size(), 1u);
  EXPECT_EQ(posted[0].kind, Kind::kResume);
  held.state().paused.store(false);
  EXPECT_EQ(held.Reply({"SET", "k", "v"}), "+OK");
}

// The test client with an outbox (support/keyspace_digest.h) acts on what is posted to it as a
// connection would: the reply that ends its wait clears `blocked`, MONITOR lines and resumes are
// kept, and a command CLIENT PAUSE holds fails the test instead of passing for an empty reply.
TEST_F(ServerCommandsTest, InProcessClientWithAnOutboxKeepsWhatIsPostedToIt) {
  InProcessClient blocker(server_, /*can_block=*/true);
  EXPECT_EQ(blocker.RunRaw({"BLPOP", "q", "0"}), "");
  EXPECT_TRUE(blocker.state().blocked.load());
  Run({"RPUSH", "q", "a"});
  EXPECT_EQ(blocker.TakeUnblockedReplies(),
            std::vector<std::string>{"*2\r\n$1\r\nq\r\n$1\r\na\r\n"});
  EXPECT_FALSE(blocker.state().blocked.load());

  InProcessClient monitor(server_, /*can_block=*/true);
  EXPECT_EQ(monitor.Reply({"MONITOR"}), "+OK");
  Run({"GET", "k"});
  std::vector<server::ClientMessage> posted = monitor.TakeMessages();
  ASSERT_EQ(posted.size(), 1u);
  EXPECT_EQ(posted[0].kind, server::ClientMessage::Kind::kPushOutput);
  EXPECT_THAT(posted[0].bytes, HasSubstr(" \"GET\" \"k\"\r\n"));

  EXPECT_EQ(Reply({"CLIENT", "PAUSE", "100000", "WRITE"}), "+OK");
  EXPECT_NONFATAL_FAILURE(blocker.RunRaw({"SET", "k", "v"}), "postponed by CLIENT PAUSE");
  blocker.state().paused.store(true);  // As its connection marks itself while it waits.
  server_.clients().paused_clients().fetch_add(1);
  EXPECT_EQ(Reply({"CLIENT", "UNPAUSE"}), "+OK");
  posted = blocker.TakeMessages();
  ASSERT_EQ(posted.size(), 1u);
  EXPECT_EQ(posted[0].kind, server::ClientMessage::Kind::kResume);
  blocker.state().paused.store(false);  // As its connection does when it tries again.
  server_.clients().paused_clients().fetch_sub(1);
  EXPECT_EQ(blocker.Reply({"SET", "k", "v"}), "+OK");
}

TEST_F(ServerCommandsTest, TimeIsTwoBulkNumbers) {
  protocol::RespValue reply = Run({"TIME"});
  ASSERT_EQ(reply.elements.size(), 2u);
  EXPECT_GT(std::stoll(reply.elements[0].str), 1'600'000'000);
}

TEST_F(ServerCommandsTest, ConfigGetSet) {
  EXPECT_EQ(Reply({"CONFIG", "GET", "maxclients"}), "[\"maxclients\", \"10000\"]");
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxclients", "50", "timeout", "7"}), "+OK");
  EXPECT_EQ(Reply({"CONFIG", "GET", "maxclients", "timeout"}),
            "[\"maxclients\", \"50\", \"timeout\", \"7\"]");
  UseResp(3);
  EXPECT_EQ(Reply({"CONFIG", "GET", "timeout"}), "%{\"timeout\", \"7\"}");
  EXPECT_EQ(Reply({"CONFIG", "SET", "foo", "bar"}),
            "-ERR Unknown option or number of arguments for CONFIG SET - 'foo'");
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxclients", "abc"}),
            "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument "
            "couldn't be parsed into an integer");
  EXPECT_EQ(Reply({"CONFIG", "SET", "databases", "3"}),
            "-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set "
            "immutable config");
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxclients", "10", "maxclients", "11"}),
            "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - duplicate "
            "parameter");
  // All or nothing: the valid first pair is rolled back when the second fails.
  EXPECT_EQ(Reply({"CONFIG", "SET", "timeout", "9", "hz", "-1"}),
            "-ERR CONFIG SET failed (possibly related to argument 'hz') - argument must be "
            "between 0 and 2147483647 inclusive");
  EXPECT_EQ(Reply({"CONFIG", "GET", "timeout"}), "%{\"timeout\", \"7\"}");
  // save is rolled back too (replaced, not added to as a config file's save lines are), and
  // CONFIG SET splits it at every space, as Redis does.
  EXPECT_EQ(Reply({"CONFIG", "SET", "save", "100 1"}), "+OK");
  EXPECT_THAT(Reply({"CONFIG", "SET", "save", "10 1", "hz", "-1"}), HasSubstr("-ERR"));
  EXPECT_EQ(Reply({"CONFIG", "GET", "save"}), "%{\"save\", \"100 1\"}");
  EXPECT_EQ(Reply({"CONFIG", "SET", "save", "100  1"}),
            "-ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save "
            "parameters");
  EXPECT_EQ(Reply({"CONFIG", "SET", "save", ""}), "+OK");
  EXPECT_EQ(Reply({"CONFIG", "GET", "save"}), "%{\"save\", \"\"}");
  EXPECT_EQ(Reply({"CONFIG", "REWRITE"}), "-ERR The server is running without a config file");
}

TEST_F(ServerCommandsTest, CommandIntrospection) {
  protocol::RespValue count = Run({"COMMAND", "COUNT"});
  EXPECT_GT(count.integer, 20);
  protocol::RespValue info = Run({"COMMAND", "INFO", "get", "nosuch"});
  ASSERT_EQ(info.elements.size(), 2u);
  EXPECT_EQ(info.elements[0].elements[0].str, "get");
  EXPECT_EQ(info.elements[0].elements[1].integer, 2);
  EXPECT_EQ(info.elements[1].type, protocol::RespValue::Type::kNull);
  EXPECT_EQ(Reply({"COMMAND", "GETKEYS", "SET", "a", "b"}), "[\"a\"]");
  EXPECT_EQ(Reply({"COMMAND", "GETKEYS", "DEL", "a", "b", "c"}), "[\"a\", \"b\", \"c\"]");
  EXPECT_EQ(Reply({"COMMAND", "GETKEYS", "foo", "a"}), "-ERR Invalid command specified");
  EXPECT_EQ(Reply({"COMMAND", "GETKEYS", "get"}),
            "-ERR wrong number of arguments for 'command|getkeys' command");
  EXPECT_EQ(Reply({"COMMAND", "GETKEYS", "ping", "x"}), "-ERR The command has no key arguments");
  protocol::RespValue docs = Run({"COMMAND", "DOCS", "get"});
  ASSERT_EQ(docs.elements.size(), 2u);
  EXPECT_EQ(docs.elements[0].str, "get");
  EXPECT_THAT(docs.elements[1].DebugString(), HasSubstr("\"group\", \"string\""));
  protocol::RespValue list = Run({"COMMAND", "LIST", "FILTERBY", "PATTERN", "client|*"});
  EXPECT_GT(list.elements.size(), 5u);
}

TEST_F(ServerCommandsTest, InfoHasRedisFields) {
  Run({"SET", "k", "v", "EX", "100"});
  std::string info = Run({"INFO"}).str;
  for (const char* field : {"redis_version:7.0.15", "gigakv_version:", "redis_mode:standalone",
                            "arch_bits:64", "os:", "process_id:", "tcp_port:", "uptime_in_seconds:",
                            "mem_allocator:", "cluster_enabled:0", "loading:0", "blocked_clients:0",
                            "used_memory:", "expired_keys:0", "rdb_changes_since_last_save:1",
                            "total_forks:0", "role:master", "db0:keys=1,expires=1,avg_ttl="}) {
    EXPECT_THAT(info, HasSubstr(field));
  }
  std::string server_only = Run({"INFO", "server"}).str;
  EXPECT_THAT(server_only, HasSubstr("# Server"));
  EXPECT_THAT(server_only, ::testing::Not(HasSubstr("# Clients")));
  std::string stats = Run({"INFO", "commandstats"}).str;
  EXPECT_THAT(stats, HasSubstr("cmdstat_set:calls=1,"));
  Run({"INCR", "k"});
  EXPECT_THAT(Run({"INFO", "errorstats"}).str, HasSubstr("errorstat_ERR:count=1"));
  EXPECT_THAT(Run({"INFO", "commandstats"}).str, HasSubstr("cmdstat_incr:calls=1,"));
  EXPECT_THAT(Run({"INFO", "commandstats"}).str, HasSubstr("failed_calls=1"));
  EXPECT_EQ(Reply({"CONFIG", "RESETSTAT"}), "+OK");
  EXPECT_THAT(Run({"INFO", "errorstats"}).str, ::testing::Not(HasSubstr("errorstat_ERR")));
}

// INFO latencystats: one line per command that ran, with the percentiles of
// latency-tracking-info-percentiles in their order, in µs with 3 decimals, as Redis prints them.
TEST_F(ServerCommandsTest, InfoLatencyStatsListsPercentilesPerCommand) {
  for (int i = 0; i < 10; ++i) Run({"SET", "k", "v"});
  Run({"GET", "k"});
  Run({"LPUSH", "k", "x"});  // WRONGTYPE: a failed call is timed too, as in Redis
  std::string stats = Run({"INFO", "latencystats"}).str;
  EXPECT_THAT(stats, HasSubstr("# Latencystats\r\n"));
  const std::string number = "[0-9]+\\.[0-9]{3}";
  for (const char* command : {"set", "get", "lpush"}) {
    EXPECT_THAT(stats, ::testing::ContainsRegex(StrCat("latency_percentiles_usec_", command,
                                                       ":p50=", number, ",p99=", number,
                                                       ",p99\\.9=", number, "\r\n")));
  }
  EXPECT_THAT(stats, ::testing::Not(HasSubstr("usec_incr:")));
  EXPECT_THAT(Run({"INFO", "everything"}).str, HasSubstr("latency_percentiles_usec_set:"));
  EXPECT_THAT(Run({"INFO"}).str, ::testing::Not(HasSubstr("Latencystats")));

  EXPECT_EQ(Reply({"CONFIG", "SET", "latency-tracking-info-percentiles", "100 0 12.5"}), "+OK");
  EXPECT_THAT(Run({"INFO", "latencystats"}).str,
              ::testing::ContainsRegex(StrCat("latency_percentiles_usec_get:p100=", number,
                                              ",p0=", number, ",p12\\.5=", number, "\r\n")));
  EXPECT_EQ(Reply({"CONFIG", "SET", "latency-tracking-info-percentiles", ""}), "+OK");
  EXPECT_THAT(Run({"INFO", "latencystats"}).str, HasSubstr("latency_percentiles_usec_get:\r\n"));

  EXPECT_EQ(Reply({"CONFIG", "RESETSTAT"}), "+OK");
  EXPECT_THAT(Run({"INFO", "latencystats"}).str, ::testing::Not(HasSubstr("usec_get:")));
  EXPECT_EQ(Reply({"CONFIG", "SET", "latency-tracking", "no"}), "+OK");
  Run({"GET", "k"});
  EXPECT_EQ(Run({"INFO", "latencystats"}).str, "# Latencystats\r\n");
  EXPECT_EQ(Reply({"CONFIG", "SET", "latency-tracking", "yes"}), "+OK");
  Run({"GET", "k"});
  EXPECT_THAT(Run({"INFO", "latencystats"}).str, HasSubstr("latency_percentiles_usec_get:"));
}

TEST_F(ServerCommandsTest, InfoIsVerbatimInResp3) {
  UseResp(3);
  EXPECT_EQ(RunRaw({"INFO", "cluster"}), "=34\r\ntxt:# Cluster\r\ncluster_enabled:0\r\n\r\n");
}

TEST_F(ServerCommandsTest, MemoryUsageAndStats) {
  EXPECT_EQ(Reply({"MEMORY", "USAGE", "nokey"}), "(nil)");
  Run({"SET", "k", std::string(1000, 'x')});
  protocol::RespValue usage = Run({"MEMORY", "USAGE", "k"});
  EXPECT_GE(usage.integer, 1000);
  EXPECT_LT(usage.integer, 1200);
  EXPECT_EQ(Reply({"MEMORY", "USAGE", "k", "SAMPLES", "x"}),
            "-ERR value is not an integer or out of range");
  // As in Redis: SAMPLES may repeat, must not be negative (0 = all), and is checked before the
  // key is looked up.
  EXPECT_EQ(Reply({"MEMORY", "USAGE", "k", "SAMPLES", "0", "SAMPLES", "3"}),
            Reply({"MEMORY", "USAGE", "k"}));
  EXPECT_EQ(Reply({"MEMORY", "USAGE", "k", "SAMPLES", "-1"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"MEMORY", "USAGE", "nokey", "SAMPLES", "-1"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"MEMORY", "USAGE", "k", "SAMPLES"}), "-ERR syntax error");
  EXPECT_EQ(Reply({"MEMORY", "USAGE", "k", "FOO", "1"}), "-ERR syntax error");
  protocol::RespValue stats = Run({"MEMORY", "STATS"});
  EXPECT_THAT(stats.DebugString(), HasSubstr("\"keys.count\", :1"));
}

TEST_F(ServerCommandsTest, DebugSubset) {
  EXPECT_EQ(Reply({"DEBUG", "SLEEP", "0"}), "+OK");
  EXPECT_EQ(Reply({"DEBUG", "SET-ACTIVE-EXPIRE", "0"}), "+OK");
  EXPECT_EQ(Reply({"DEBUG", "JMAP"}),
            "-ERR unknown subcommand or wrong number of arguments for 'JMAP'. Try DEBUG HELP.");
  Run({"SET", "k", "v", "PX", "5"});
  clock_.AdvanceMs(10);
  server_.Cron();  // Active expiry is off: the expired key stays until touched.
  EXPECT_EQ(Reply({"DBSIZE"}), ":1");
  EXPECT_EQ(Reply({"DEBUG", "SET-ACTIVE-EXPIRE", "1"}), "+OK");
  server_.Cron();
  EXPECT_EQ(Reply({"DBSIZE"}), ":0");
}

TEST_F(ServerCommandsTest, DebugIsRefusedUnlessEnableDebugCommandAllowsTheClient) {
  const std::string refused =
      "-ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
      "you can run it from a local connection, otherwise you need to set this option in the "
      "configuration file, and then restart the server.";
  ASSERT_TRUE(config_.SetOne("enable-debug-command", "no", false).ok());
  server_.settings().Load(config_);  // As a restart with that configuration.
  EXPECT_EQ(Reply({"DEBUG", "HELP"}), refused);
  EXPECT_EQ(Reply({"DEBUG"}), "-ERR wrong number of arguments for 'debug' command");  // First.
  // Before authentication, as in Redis.
  EXPECT_EQ(Reply({"CONFIG", "SET", "requirepass", "pw"}), "+OK");
  client_.authenticated = false;
  EXPECT_EQ(Reply({"DEBUG", "SLEEP", "0"}), refused);
  EXPECT_EQ(Reply({"PING"}), "-NOAUTH Authentication required.");
  EXPECT_EQ(Reply({"AUTH", "pw"}), "+OK");
  // Inside MULTI it is refused at once and the transaction is aborted.
  EXPECT_EQ(Reply({"MULTI"}), "+OK");
  EXPECT_EQ(Reply({"DEBUG", "SLEEP", "0"}), refused);
  EXPECT_EQ(Reply({"EXEC"}), "-EXECABORT Transaction discarded because of previous errors.");

  ASSERT_TRUE(config_.SetOne("enable-debug-command", "local", false).ok());
  server_.settings().Load(config_);  // As a restart with that configuration.
  for (const char* addr : {"127.0.0.1:50000", "::1:50000"}) {
    client_.addr = addr;
    EXPECT_EQ(Reply({"DEBUG", "SLEEP", "0"}), "+OK") << addr;
  }
  for (const char* addr : {"10.0.0.7:50000", "127.0.0.2:50000", ""}) {
    client_.addr = addr;
    EXPECT_EQ(Reply({"DEBUG", "SLEEP", "0"}), refused) << addr;
  }
  ASSERT_TRUE(config_.SetOne("enable-debug-command", "yes", false).ok());
  server_.settings().Load(config_);  // As a restart with that configuration.
  EXPECT_EQ(Reply({"DEBUG", "SLEEP", "0"}), "+OK");
  // Immutable, as in Redis.
  EXPECT_EQ(Reply({"CONFIG", "SET", "enable-debug-command", "no"}),
            "-ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - can't "
            "set immutable config");
}

TEST_F(ServerCommandsTest, DebugPopulateCreatesMissingKeysAndLogsThem) {
  EXPECT_EQ(Reply({"SET", "key:1", "mine"}), "+OK");
  effects_.Take();
  EXPECT_EQ(Reply({"DEBUG", "POPULATE", "3"}), "+OK");
  EXPECT_EQ(Reply({"GET", "key:0"}), "\"value:0\"");
  EXPECT_EQ(Reply({"GET", "key:1"}), "\"mine\"");  // Existing keys are left alone.
  EXPECT_EQ(Reply({"GET", "key:2"}), "\"value:2\"");
  EXPECT_EQ(Reply({"OBJECT", "ENCODING", "key:2"}), "\"embstr\"");
  EXPECT_THAT(effects_.Take(), ElementsAre("0: SET key:0 value:0", "0: SET key:2 value:2"));
  // A size pads with zero bytes or cuts; 0 keeps "value:<n>".
  EXPECT_EQ(Reply({"DEBUG", "POPULATE", "2", "p", "10"}), "+OK");
  EXPECT_EQ(RunRaw({"GET", "p:1"}), std::string("$10\r\nvalue:1\0\0\0\r\n", 17));
  EXPECT_EQ(Reply({"DEBUG", "POPULATE", "2", "q", "3"}), "+OK");
  EXPECT_EQ(Reply({"GET", "q:1"}), "\"val\"");
  EXPECT_EQ(Reply({"DEBUG", "POPULATE", "1", "r", "0"}), "+OK");
  EXPECT_EQ(Reply({"GET", "r:0"}), "\"value:0\"");
  EXPECT_EQ(Reply({"DEBUG", "POPULATE", "0"}), "+OK");
  EXPECT_EQ(Reply({"DBSIZE"}), ":8");
  // In the client's database.
  EXPECT_EQ(Reply({"SELECT", "2"}), "+OK");
  EXPECT_EQ(Reply({"DEBUG", "POPULATE", "2"}), "+OK");
  EXPECT_EQ(Reply({"DBSIZE"}), ":2");
  // Errors as Redis's getPositiveLongFromObjectOrReply: text and negatives alike.
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"DEBUG", "POPULATE", "-1"},
                                              {"DEBUG", "POPULATE", "abc"},
                                              {"DEBUG", "POPULATE", "2", "p", "-3"},
                                              {"DEBUG", "POPULATE", "2", "p", "x"}}) {
    EXPECT_EQ(Reply(bad), "-ERR value is out of range, must be positive");
  }
  EXPECT_EQ(Reply({"DEBUG", "POPULATE"}),
            "-ERR unknown subcommand or wrong number of arguments for 'POPULATE'. Try DEBUG HELP.");
  EXPECT_EQ(Reply({"DEBUG", "POPULATE", "1", "p", "0", "extra"}),
            "-ERR unknown subcommand or wrong number of arguments for 'POPULATE'. Try DEBUG HELP.");
}

TEST_F(ServerCommandsTest, ScriptingFlushesAnswerOk) {
  EXPECT_EQ(Reply({"FUNCTION", "FLUSH"}), "+OK");
  EXPECT_EQ(Reply({"FUNCTION", "FLUSH", "ASYNC"}), "+OK");
  EXPECT_EQ(Reply({"SCRIPT", "FLUSH"}), "+OK");
  EXPECT_EQ(Reply({"SCRIPT", "FLUSH", "BAD"}), "-ERR SCRIPT FLUSH only support SYNC|ASYNC option");
  EXPECT_EQ(Reply({"FUNCTION", "FLUSH", "BAD"}),
            "-ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
  EXPECT_EQ(Reply({"LASTSAVE"}).substr(0, 1), ":");
}

TEST_F(ServerCommandsTest, OomRejectsDenyOomCommands) {
  EXPECT_EQ(Reply({"SET", "k", std::string(10000, 'x')}), "+OK");
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory", "1000"}), "+OK");
  server_.Cron();  // Refreshes used_memory.
  EXPECT_EQ(Reply({"SET", "k2", "v"}), "-OOM command not allowed when used memory > 'maxmemory'.");
  EXPECT_EQ(Reply({"GET", "k2"}), "(nil)");
  EXPECT_EQ(Reply({"DEL", "k"}), ":1");  // DEL is not denyoom.
}

// The append-only log's buffers are not counted against maxmemory (Redis's
// freeMemoryGetNotCountedMemory): evicting keys cannot shrink them.
TEST_F(ServerCommandsTest, MemoryNotCountedForEvictionIsLeftOut) {
  EXPECT_EQ(Reply({"SET", "k", "v"}), "+OK");
  server_.Cron();
  const int64_t used = server_.keyspace().UsedMemory();
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory", std::to_string(used - 4096)}), "+OK");
  server_.Cron();
  EXPECT_TRUE(server_.keyspace().OverMaxmemory());
  server_.keyspace().set_not_counted_memory(1 << 20);
  server_.Cron();
  EXPECT_FALSE(server_.keyspace().OverMaxmemory());
  EXPECT_EQ(Reply({"SET", "k2", "v"}), "+OK");
  EXPECT_EQ(Reply({"DBSIZE"}), ":2");  // Nothing evicted.
  EXPECT_THAT(Reply({"INFO", "memory"}), ::testing::HasSubstr("mem_not_counted_for_evict:1048576"));
  server_.keyspace().set_not_counted_memory(0);
}

}  // namespace
}  // namespace gigakv::testing

namespace gigakv::testing {
namespace {

TEST_F(ServerCommandsTest, ExpiredStalePercIsTheSmoothedShareOfExpiredSamples) {
  auto stale = [&] {
    std::string info = Run({"INFO", "stats"}).str;
    size_t at = info.find("expired_stale_perc:");
    return info.substr(at, info.find("\r\n", at) - at);
  };
  EXPECT_EQ(stale(), "expired_stale_perc:0.00");
  for (int i = 0; i < 100; ++i) Run({"SET", "k" + std::to_string(i), "v", "PX", "100"});
  Run({"SET", "persistent", "v"});  // Keys without a TTL are never sampled.
  server_.Cron();                   // Nothing is past its TTL yet: 0 of 20.
  EXPECT_EQ(stale(), "expired_stale_perc:0.00");
  clock_.AdvanceMs(200);
  server_.Cron();  // 20 of 20 sampled are expired (then removed): 0.05 * 100%.
  EXPECT_EQ(stale(), "expired_stale_perc:5.00");
  EXPECT_EQ(Reply({"DBSIZE"}), ":1");
  server_.Cron();  // No key with a TTL left: the average decays, 0.95 * 5%.
  EXPECT_EQ(stale(), "expired_stale_perc:4.75");
  EXPECT_EQ(Reply({"CONFIG", "RESETSTAT"}), "+OK");  // Redis resets stat_expired_stale_perc.
  EXPECT_EQ(stale(), "expired_stale_perc:0.00");
}

// During CLIENT PAUSE nothing expires actively and nothing is evicted or refused for memory,
// and expired_stale_perc stays as it was, as in Redis (whose expiry cycle and eviction return
// early while clients are paused).
TEST_F(ServerCommandsTest, PauseStopsActiveExpiryAndEviction) {
  auto stat = [&](const std::string& name) {
    std::string info = Run({"INFO", "stats"}).str;
    size_t at = info.find(name + ":");
    return info.substr(at, info.find("\r\n", at) - at);
  };
  for (int i = 0; i < 100; ++i) Run({"SET", "t" + std::to_string(i), "v", "PX", "100"});
  for (int i = 0; i < 100; ++i) Run({"SET", "p" + std::to_string(i), "v"});
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"}), "+OK");
  EXPECT_EQ(Reply({"CLIENT", "PAUSE", "100000", "WRITE"}), "+OK");
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory", "1"}), "+OK");
  clock_.AdvanceMs(200);
  for (int i = 0; i < 10; ++i) server_.Cron();
  EXPECT_EQ(Reply({"DBSIZE"}), ":200");
  EXPECT_EQ(Reply({"SET", "new", "v"}), "+OK");  // Not refused: nothing evicts, nothing refuses.
  EXPECT_EQ(Reply({"DBSIZE"}), ":201");
  EXPECT_EQ(stat("expired_keys"), "expired_keys:0");
  EXPECT_EQ(stat("evicted_keys"), "evicted_keys:0");
  EXPECT_EQ(stat("expired_stale_perc"), "expired_stale_perc:0.00");
  EXPECT_EQ(Reply({"CLIENT", "UNPAUSE"}), "+OK");
  server_.Cron();  // Expiry and eviction resume.
  EXPECT_EQ(stat("expired_stale_perc"), "expired_stale_perc:5.00");
  EXPECT_NE(stat("expired_keys"), "expired_keys:0");
  EXPECT_NE(stat("evicted_keys"), "evicted_keys:0");
}

class EvictionCommandsTest : public CommandTest {};

TEST_F(EvictionCommandsTest, AllKeysPolicyEvictsAndCounts) {
  for (int i = 0; i < 200; ++i) Run({"SET", "key" + std::to_string(i), "value"});
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"}), "+OK");
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory", "1"}), "+OK");
  for (int i = 0; i < 10; ++i) server_.Cron();  // Each tick evicts a bounded batch.
  EXPECT_EQ(Reply({"DBSIZE"}), ":0");
  EXPECT_THAT(Run({"INFO", "stats"}).str, ::testing::HasSubstr("evicted_keys:200\r\n"));
  // Nothing is left to evict: writes are refused, reads still work.
  EXPECT_EQ(Reply({"SET", "k", "v"}), "-OOM command not allowed when used memory > 'maxmemory'.");
  EXPECT_EQ(Reply({"GET", "k"}), "(nil)");
}

TEST_F(EvictionCommandsTest, VolatileTtlKeepsPersistentKeys) {
  for (int i = 0; i < 50; ++i) {
    Run({"SET", "p" + std::to_string(i), "v"});
    Run({"SET", "t" + std::to_string(i), "v", "EX", std::to_string(100 + i)});
  }
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory-policy", "volatile-ttl", "maxmemory", "1"}), "+OK");
  for (int i = 0; i < 10; ++i) server_.Cron();
  EXPECT_EQ(Reply({"DBSIZE"}), ":50");
  EXPECT_EQ(Reply({"EXISTS", "p0", "p49"}), ":2");
}

TEST_F(EvictionCommandsTest, ObjectFreqUnderLfu) {
  Run({"SET", "k", "v"});
  EXPECT_THAT(Reply({"OBJECT", "FREQ", "k"}),
              ::testing::HasSubstr("An LFU maxmemory policy is not selected"));
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"}), "+OK");
  // An overwrite keeps the key's stamp, touched, as Redis's dbOverwrite does: k's stamp was an
  // LRU clock, read as an LFU counter it decays to 0 and the touch makes it 1 (redis-server 7.0
  // answers 1 to the same commands).
  Run({"SET", "k", "v"});
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "k"}), ":1");
  Run({"SET", "fresh", "v"});
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "fresh"}), ":5");  // Redis's initial LFU counter.
  Run({"SET", "fresh", "v2"});  // At 5 the touch always counts: 6, as in Redis.
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "fresh"}), ":6");
  for (int i = 0; i < 200; ++i) Run({"GET", "k"});
  EXPECT_GT(Run({"OBJECT", "FREQ", "k"}).integer, 5);
  EXPECT_THAT(Reply({"OBJECT", "IDLETIME", "k"}),
              ::testing::HasSubstr("An LFU maxmemory policy is selected"));
}

// Writes that replace a value keep the LFU counter their lookup touched, large bitmaps (values
// stored outside the arena) included, and RENAME / MOVE carry the key's counter along. Every
// counter is the one redis-server 7.0 answers to the same commands.
TEST_F(EvictionCommandsTest, OverwritesAndMovesKeepTheLfuCounter) {
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu", "lfu-log-factor", "0",
                   "lfu-decay-time", "0"}),
            "+OK");
  Run({"SETBIT", "big", "80000", "1"});  // 10001 bytes.
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "big"}), ":5");
  Run({"SETBIT", "big", "80001", "1"});
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "big"}), ":6");
  Run({"BITFIELD", "big", "SET", "u8", "0", "255"});
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "big"}), ":7");
  Run({"SETBIT", "src", "80000", "1"});
  EXPECT_EQ(Reply({"BITOP", "OR", "big", "src", "src"}), ":10001");
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "big"}), ":8");
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "src"}), ":7");  // Two read lookups.
  Run({"SET", "a", "x"});
  Run({"GET", "a"});
  Run({"GET", "a"});
  EXPECT_EQ(Reply({"RENAME", "a", "b"}), "+OK");
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "b"}), ":8");
  EXPECT_EQ(Reply({"MOVE", "b", "1"}), ":1");
  Run({"SELECT", "1"});
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "b"}), ":9");
}

// Under LRU too, RENAME and MOVE move the key's clock with it: untouched (CLIENT NO-TOUCH), the
// key stays as idle as it was.
TEST_F(EvictionCommandsTest, MovesKeepTheLruClock) {
  Run({"SET", "a", "x"});
  clock_.AdvanceMs(20 * 1000);
  server_.keyspace().RefreshCoarseClock();
  Run({"CLIENT", "NO-TOUCH", "on"});
  EXPECT_EQ(Reply({"RENAME", "a", "b"}), "+OK");
  EXPECT_EQ(Reply({"OBJECT", "IDLETIME", "b"}), ":20");
  EXPECT_EQ(Reply({"MOVE", "b", "1"}), ":1");
  Run({"SELECT", "1"});
  EXPECT_EQ(Reply({"OBJECT", "IDLETIME", "b"}), ":20");
}

// lfu-log-factor 0 makes every access count (probability 1, as in Redis: 10 GETs take a new
// key from 5 to 15); lfu-decay-time takes one off per that many idle minutes, 0 = never.
TEST_F(EvictionCommandsTest, LfuLogFactorAndDecayTime) {
  EXPECT_EQ(Reply({"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu", "lfu-log-factor", "0",
                   "lfu-decay-time", "2"}),
            "+OK");
  Run({"SET", "k", "v"});
  for (int i = 0; i < 10; ++i) Run({"GET", "k"});
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "k"}), ":15");
  clock_.AdvanceMs(6 * 60 * 1000);
  server_.keyspace().RefreshCoarseClock();
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "k"}), ":12");  // Three 2-minute periods.
  EXPECT_EQ(Reply({"CONFIG", "SET", "lfu-decay-time", "0"}), "+OK");
  EXPECT_EQ(Reply({"OBJECT", "FREQ", "k"}), ":15");
  // The default factor (10) makes the counter grow far slower than one per access.
  EXPECT_EQ(Reply({"CONFIG", "SET", "lfu-log-factor", "10"}), "+OK");
  Run({"SET", "slow", "v"});
  for (int i = 0; i < 100; ++i) Run({"GET", "slow"});
  EXPECT_LT(Run({"OBJECT", "FREQ", "slow"}).integer, 50);
}

}  // namespace
}  // namespace gigakv::testing

namespace gigakv::testing {
namespace {

class OpsPerSecTest : public CommandTest {};

TEST_F(OpsPerSecTest, InstantaneousOpsFollowTheCommandRate) {
  server_.Cron();
  for (int tick = 0; tick < 20; ++tick) {
    for (int i = 0; i < 50; ++i) Run({"PING"});
    clock_.AdvanceMs(100);
    server_.Cron();
  }
  // 50 commands per 100 ms tick = 500 per second.
  EXPECT_THAT(Run({"INFO", "stats"}).str,
              ::testing::HasSubstr("instantaneous_ops_per_sec:500\r\n"));
}

// The cron thread takes the transaction gate for each pass: while an EXEC holds it, active
// expiry removes nothing, so no expiry lands between a transaction's writes. Waits are bounded
// polls; the pause under the gate only gives a misbehaving cron the chance to show itself.
TEST_F(ServerCommandsTest, CronPassesWaitForARunningExec) {
  ASSERT_EQ(Reply({"CONFIG", "SET", "hz", "100"}), "+OK");
  auto wait_until_empty = [&] {
    for (int i = 0; i < 2000 && server_.keyspace().store().DbSize(0) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return server_.keyspace().store().DbSize(0) == 0;
  };
  Run({"SET", "first", "v", "PX", "5"});
  clock_.AdvanceMs(10);
  server::CronThread cron(server_);
  cron.Start();
  ASSERT_TRUE(wait_until_empty());  // The thread runs (and is registered with the gate).

  Run({"SET", "second", "v", "PX", "5"});
  {
    server::TransactionGate::ExclusiveScope exec(server_.transaction_gate());
    clock_.AdvanceMs(10);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(server_.keyspace().store().DbSize(0), 1u);  // Due, but no pass ran during the "EXEC".
  }
  EXPECT_TRUE(wait_until_empty());
  cron.Stop();
}

}  // namespace
}  // namespace gigakv::testing
