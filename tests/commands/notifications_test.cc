// Keyspace notifications in process (server/notifications.h): which events each kind of change
// makes, the classes and channels notify-keyspace-events selects, where a subscriber's own
// events land among its replies, and that nothing is published (and the change stream stays
// idle for it) while notifications are off. Byte-for-byte comparisons with redis-server, family
// by family, are in tests/e2e/test_notifications.py.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/keyspace_digest.h"

namespace gigakv::testing {
namespace {

std::string Bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

// One pmessage for the pattern "__key*__:*", as RESP2 (type '*') or RESP3 (type '>') frames it.
std::string KeyMessage(const std::string& channel, const std::string& payload, char type = '*') {
  return std::string(1, type) + "4\r\n" + Bulk("pmessage") + Bulk("__key*__:*") + Bulk(channel) +
         Bulk(payload);
}

// The keyspace and keyevent messages of `event` on `key` in database `db`.
std::string Event(const std::string& event, const std::string& key, int db = 0, char type = '*') {
  const std::string at = std::to_string(db) + "__:";
  return KeyMessage("__keyspace@" + at + key, event, type) +
         KeyMessage("__keyevent@" + at + event, key, type);
}

const std::string kPong = "*2\r\n$4\r\npong\r\n$0\r\n\r\n";

class NotificationsTest : public CommandTest {
 protected:
  NotificationsTest() : listener_(server_, /*can_block=*/true) {
    listener_.state().authenticated = true;
    listener_.RunRaw({"PSUBSCRIBE", "__key*__:*"});
  }

  // What the listener received since the last call (its PING's pong dropped).
  std::string Received() {
    std::string raw = listener_.RunRaw({"PING"});
    EXPECT_EQ(raw.substr(raw.size() - std::min(raw.size(), kPong.size())), kPong);
    return raw.substr(0, raw.size() - std::min(raw.size(), kPong.size()));
  }

  void Flags(const std::string& flags) {
    ASSERT_EQ(Reply({"CONFIG", "SET", "notify-keyspace-events", flags}), "+OK");
  }

  InProcessClient listener_;
};

TEST_F(NotificationsTest, OffByDefaultAndTheChangeStreamStaysIdleForThem) {
  server_.set_effect_sink(nullptr);  // The fixture's recorder would keep the stream busy.
  EXPECT_EQ(Reply({"CONFIG", "GET", "notify-keyspace-events"}),
            "[\"notify-keyspace-events\", \"\"]");
  EXPECT_FALSE(server_.keyspace().changes().active());
  RunRaw({"SET", "k", "v"});
  RunRaw({"GET", "missing"});
  EXPECT_EQ(Received(), "");
  Flags("KEA");
  EXPECT_TRUE(server_.keyspace().changes().active());
  // Key misses alone need no change records.
  Flags("Em");
  EXPECT_FALSE(server_.keyspace().changes().active());
  // Classes without a channel (K or E) publish nothing.
  Flags("A");
  EXPECT_FALSE(server_.keyspace().changes().active());
  RunRaw({"SET", "k", "v2"});
  EXPECT_EQ(Received(), "");
}

TEST_F(NotificationsTest, CommandsNameTheirEventsInRedisOrder) {
  Flags("KEA");
  RunRaw({"SET", "s", "1", "EX", "100"});
  EXPECT_EQ(Received(), Event("set", "s") + Event("expire", "s"));
  RunRaw({"INCRBY", "s", "2"});
  RunRaw({"INCRBYFLOAT", "s", "0.5"});
  EXPECT_EQ(Received(), Event("incrby", "s") + Event("incrbyfloat", "s"));
  // A collection emptied by a command: its event, then "del".
  RunRaw({"RPUSH", "l", "a"});
  RunRaw({"LPOP", "l"});
  EXPECT_EQ(Received(), Event("rpush", "l") + Event("lpop", "l") + Event("del", "l"));
  // LMOVE: the push on the destination, then the pop on the source.
  RunRaw({"RPUSH", "src", "a", "b"});
  Received();
  RunRaw({"LMOVE", "src", "dst", "LEFT", "RIGHT"});
  EXPECT_EQ(Received(), Event("rpush", "dst") + Event("lpop", "src"));
  // SMOVE that empties the source: "srem", "del", then "sadd".
  RunRaw({"SADD", "from", "m"});
  Received();
  RunRaw({"SMOVE", "from", "to", "m"});
  EXPECT_EQ(Received(), Event("srem", "from") + Event("del", "from") + Event("sadd", "to"));
  RunRaw({"RENAME", "to", "renamed"});
  EXPECT_EQ(Received(), Event("rename_from", "to") + Event("rename_to", "renamed"));
  RunRaw({"MOVE", "renamed", "3"});
  EXPECT_EQ(Received(), Event("move_from", "renamed") + Event("move_to", "renamed", 3));
  RunRaw({"ZADD", "z", "INCR", "1", "m"});
  RunRaw({"ZPOPMAX", "z"});
  EXPECT_EQ(Received(), Event("zincr", "z") + Event("zpopmax", "z") + Event("del", "z"));
  // An empty *STORE result over an existing key deletes it: "del" only.
  RunRaw({"SET", "dest", "x"});
  Received();
  RunRaw({"SINTERSTORE", "dest", "nothing"});
  EXPECT_EQ(Received(), Event("del", "dest"));
  // Writes that change nothing notify nothing.
  RunRaw({"SETNX", "s", "other"});
  RunRaw({"ZADD", "z2", "XX", "1", "m"});
  RunRaw({"PERSIST", "missing"});
  EXPECT_EQ(Received(), "");
}

TEST_F(NotificationsTest, ExpiryAndEvictionComeFromTheRemovalItself) {
  Flags("KEA");
  RunRaw({"DEBUG", "SET-ACTIVE-EXPIRE", "0"});
  RunRaw({"SET", "short", "v", "PX", "10"});
  Received();
  clock_.AdvanceMs(20);
  EXPECT_EQ(Reply({"GET", "short"}), "(nil)");  // The lookup removes it: "expired".
  EXPECT_EQ(Received(), Event("expired", "short"));
  // A deadline already past deletes at once: "del", not "expired".
  RunRaw({"SET", "k", "v"});
  Received();
  RunRaw({"PEXPIREAT", "k", "1"});
  EXPECT_EQ(Received(), Event("del", "k"));
  // Eviction.
  RunRaw({"SET", "victim", std::string(100, 'x')});
  Received();
  RunRaw({"CONFIG", "SET", "maxmemory-policy", "allkeys-random"});
  RunRaw({"CONFIG", "SET", "maxmemory", "1"});
  server_.Cron();  // Evicts down to the limit.
  RunRaw({"CONFIG", "SET", "maxmemory", "0"});
  EXPECT_EQ(Received(), Event("evicted", "victim"));
}

TEST_F(NotificationsTest, ClassesChannelsAndTheHiddenNewClass) {
  Flags("Kl");  // Lists only, keyspace channel only.
  RunRaw({"SET", "s", "1"});
  RunRaw({"LPUSH", "l", "a"});
  EXPECT_EQ(Received(), KeyMessage("__keyspace@0__:l", "lpush"));
  Flags("E$");
  RunRaw({"LPUSH", "l", "b"});
  RunRaw({"APPEND", "s", "2"});
  EXPECT_EQ(Received(), KeyMessage("__keyevent@0__:append", "s"));
  // Key creation ('n') and misses ('m') are not in 'A'.
  Flags("KEA");
  RunRaw({"GET", "missing"});
  RunRaw({"SET", "fresh", "v"});
  EXPECT_EQ(Received(), Event("set", "fresh"));
  Flags("En");
  RunRaw({"HSET", "h", "f", "v"});
  RunRaw({"HSET", "h", "g", "v"});  // Not new any more.
  EXPECT_EQ(Received(), KeyMessage("__keyevent@0__:new", "h"));
  // Redis prints 'A' without the 'n' given with it, and keeps the class on.
  Flags("KEAnm");
  EXPECT_EQ(Reply({"CONFIG", "GET", "notify-keyspace-events"}),
            "[\"notify-keyspace-events\", \"AKEm\"]");
  RunRaw({"COPY", "h", "h2"});
  RunRaw({"OBJECT", "ENCODING", "missing"});  // OBJECT's lookup notifies no miss.
  RunRaw({"TYPE", "missing"});
  EXPECT_EQ(Received(), Event("new", "h2") + Event("copy_to", "h2") + Event("keymiss", "missing"));
}

TEST_F(NotificationsTest, AResp3ListenerGetsItsOwnEventsWhereRedisWritesThem) {
  Flags("KEA");
  listener_.RunRaw({"PUNSUBSCRIBE"});
  listener_.RunRaw({"HELLO", "3"});
  listener_.RunRaw({"PSUBSCRIBE", "__key*__:*"});
  // SET notifies before it replies; RPUSH replies first.
  EXPECT_EQ(listener_.RunRaw({"SET", "k", "v"}), Event("set", "k", 0, '>') + "+OK\r\n");
  EXPECT_EQ(listener_.RunRaw({"RPUSH", "l", "a"}), ":1\r\n" + Event("rpush", "l", 0, '>'));
  // ZPOPMIN's notification sits inside its reply, after the array header.
  listener_.RunRaw({"ZADD", "z", "1", "m"});
  EXPECT_EQ(
      listener_.RunRaw({"ZPOPMIN", "z"}),
      "*2\r\n" + Event("zpopmin", "z", 0, '>') + Bulk("m") + ",1\r\n" + Event("del", "z", 0, '>'));
  // Dropped replies (CLIENT REPLY SKIP) leave the events queued for the next command.
  listener_.RunRaw({"CLIENT", "REPLY", "SKIP"});
  EXPECT_EQ(listener_.RunRaw({"SET", "k", "w"}), "");
  EXPECT_EQ(listener_.RunRaw({"PING"}), Event("set", "k", 0, '>') + "+PONG\r\n");
}

TEST_F(NotificationsTest, EventsOfADifferentClientWaitForTheListenersNextReply) {
  Flags("KEA");
  RunRaw({"MULTI"});
  RunRaw({"SET", "a", "1"});
  RunRaw({"DEL", "a"});
  RunRaw({"EXEC"});
  // The listener was told once that messages wait.
  std::vector<server::ClientMessage> posted = listener_.TakeMessages();
  ASSERT_EQ(posted.size(), 1u);
  EXPECT_EQ(posted[0].kind, server::ClientMessage::Kind::kPubSubReady);
  EXPECT_EQ(Received(), Event("set", "a") + Event("del", "a"));
}

}  // namespace
}  // namespace gigakv::testing
