// Pub/Sub in process (server/pubsub.h, server/commands/pubsub_commands.cc): the frames a
// subscriber gets and when, subscribed mode, RESET, and the registry under concurrent
// publishers, subscribers and churn. Byte-for-byte comparisons with redis-server are in
// tests/e2e/test_pubsub.py.
#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "protocol/resp_reader.h"
#include "server/pubsub.h"
#include "support/keyspace_digest.h"

namespace gigakv::testing {
namespace {

std::string Bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

std::string Frame(char type, const std::vector<std::string>& bulks, int64_t count = -1) {
  std::string out(1, type);
  out += std::to_string(bulks.size() + (count >= 0 ? 1 : 0)) + "\r\n";
  for (const std::string& b : bulks) out += Bulk(b);
  if (count >= 0) out += ":" + std::to_string(count) + "\r\n";
  return out;
}

class PubSubTest : public CommandTest {};

TEST_F(PubSubTest, ConfirmationsMessagesAndTheirOrder) {
  InProcessClient subscriber(server_, /*can_block=*/true);
  subscriber.state().authenticated = true;
  EXPECT_EQ(subscriber.RunRaw({"SUBSCRIBE", "a", "b", "a"}), Frame('*', {"subscribe", "a"}, 1) +
                                                                 Frame('*', {"subscribe", "b"}, 2) +
                                                                 Frame('*', {"subscribe", "a"}, 2));
  EXPECT_EQ(subscriber.RunRaw({"PSUBSCRIBE", "a*"}), Frame('*', {"psubscribe", "a*"}, 3));
  EXPECT_EQ(RunRaw({"PUBLISH", "a", "hi"}), ":2\r\n");
  EXPECT_EQ(RunRaw({"PUBLISH", "zz", "hi"}), ":0\r\n");
  // The subscriber was told once that messages wait; they come ahead of its next reply.
  std::vector<server::ClientMessage> posted = subscriber.TakeMessages();
  ASSERT_EQ(posted.size(), 1u);
  EXPECT_EQ(posted[0].kind, server::ClientMessage::Kind::kPubSubReady);
  EXPECT_EQ(subscriber.RunRaw({"PING"}), Frame('*', {"message", "a", "hi"}) +
                                             Frame('*', {"pmessage", "a*", "a", "hi"}) +
                                             Frame('*', {"pong", ""}));
  // Queued before the unsubscription: delivered before its confirmation, none after it.
  EXPECT_EQ(RunRaw({"PUBLISH", "b", "last"}), ":1\r\n");
  EXPECT_EQ(subscriber.RunRaw({"UNSUBSCRIBE", "b"}),
            Frame('*', {"message", "b", "last"}) + Frame('*', {"unsubscribe", "b"}, 2));
  EXPECT_EQ(RunRaw({"PUBLISH", "b", "gone"}), ":0\r\n");
  EXPECT_EQ(subscriber.RunRaw({"PUNSUBSCRIBE"}), Frame('*', {"punsubscribe", "a*"}, 1));
  EXPECT_EQ(subscriber.RunRaw({"PUNSUBSCRIBE"}), "*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:1\r\n");
  EXPECT_EQ(subscriber.RunRaw({"UNSUBSCRIBE"}), Frame('*', {"unsubscribe", "a"}, 0));
  EXPECT_EQ(subscriber.RunRaw({"PING"}), "+PONG\r\n");
}

TEST_F(PubSubTest, Resp2SubscribedModeAllowsOnlySubscriptionCommands) {
  InProcessClient subscriber(server_, /*can_block=*/true);
  subscriber.state().authenticated = true;
  subscriber.RunRaw({"SSUBSCRIBE", "s"});
  EXPECT_EQ(subscriber.Reply({"GET", "k"}),
            "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
            "QUIT / RESET are allowed in this context");
  EXPECT_EQ(subscriber.Reply({"CONFIG", "GET", "hz"}),
            "-ERR Can't execute 'config|get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / "
            "PING / QUIT / RESET are allowed in this context");
  // Not even HELLO (as Redis): a RESP2 subscriber stays one.
  EXPECT_EQ(subscriber.RunRaw({"HELLO", "3"}).substr(0, 27), "-ERR Can't execute 'hello':");
  // RESET leaves every channel without confirmations.
  EXPECT_EQ(subscriber.RunRaw({"RESET"}), "+RESET\r\n");
  EXPECT_EQ(RunRaw({"PUBSUB", "SHARDNUMSUB", "s"}), "*2\r\n$1\r\ns\r\n:0\r\n");
  EXPECT_EQ(subscriber.RunRaw({"GET", "k"}), "$-1\r\n");
  // RESP3 tells pushes from replies: everything runs alongside the messages.
  subscriber.RunRaw({"HELLO", "3"});
  EXPECT_EQ(subscriber.RunRaw({"SSUBSCRIBE", "s"}), Frame('>', {"ssubscribe", "s"}, 1));
  EXPECT_EQ(subscriber.RunRaw({"GET", "k"}), "_\r\n");
  EXPECT_EQ(RunRaw({"SPUBLISH", "s", "m"}), ":1\r\n");
  EXPECT_EQ(subscriber.RunRaw({"PING"}), Frame('>', {"smessage", "s", "m"}) + "+PONG\r\n");
}

TEST_F(PubSubTest, IntrospectionCountsListenersAndDropsEmptyChannels) {
  InProcessClient one(server_, true), two(server_, true);
  one.RunRaw({"SUBSCRIBE", "x", "y"});
  two.RunRaw({"SUBSCRIBE", "x"});
  two.RunRaw({"PSUBSCRIBE", "x*", "y*"});
  EXPECT_EQ(Run({"PUBSUB", "NUMSUB", "x", "y", "z"}).DebugString(),
            "[\"x\", :2, \"y\", :1, \"z\", :0]");
  EXPECT_EQ(Run({"PUBSUB", "NUMPAT"}).integer, 2);
  EXPECT_EQ(Run({"PUBSUB", "CHANNELS", "y"}).DebugString(), "[\"y\"]");
  EXPECT_EQ(RunRaw({"PUBLISH", "x", "m"}), ":3\r\n");  // Two channel listeners, one pattern.
  one.RunRaw({"UNSUBSCRIBE"});
  EXPECT_EQ(Run({"PUBSUB", "CHANNELS"}).DebugString(), "[\"x\"]");
  EXPECT_EQ(server_.pubsub().ActiveNames(server::PubSubKind::kChannel), 1);
}

// EXEC holds its messages back from other clients until it ends (as Redis's single thread
// writes them only to output buffers meanwhile); the publisher's own come in its reply at once.
TEST_F(PubSubTest, HeldMessagesReachOtherListenersWhenTheHoldEnds) {
  InProcessClient subscriber(server_, /*can_block=*/true);
  subscriber.state().authenticated = true;
  subscriber.RunRaw({"SUBSCRIBE", "a"});
  subscriber.RunRaw({"PSUBSCRIBE", "*"});
  UseResp(3);
  RunRaw({"SUBSCRIBE", "a"});
  {
    server::PublishHoldScope hold(server_.pubsub(), client_);
    server::PublishHoldScope inner(server_.pubsub(), client_);  // Holds nothing of its own.
    EXPECT_EQ(RunRaw({"PUBLISH", "a", "m1"}), Frame('>', {"message", "a", "m1"}) + ":3\r\n");
    EXPECT_EQ(RunRaw({"PUBLISH", "nobody", "m2"}), ":1\r\n");
    EXPECT_TRUE(subscriber.TakeMessages().empty());
    EXPECT_EQ(subscriber.RunRaw({"PING"}), Frame('*', {"pong", ""}));
  }
  std::vector<server::ClientMessage> posted = subscriber.TakeMessages();
  ASSERT_EQ(posted.size(), 1u);
  EXPECT_EQ(subscriber.RunRaw({"PING"}),
            Frame('*', {"message", "a", "m1"}) + Frame('*', {"pmessage", "*", "a", "m1"}) +
                Frame('*', {"pmessage", "*", "nobody", "m2"}) + Frame('*', {"pong", ""}));
  // The same through EXEC, with a message published after it by another client.
  RunRaw({"MULTI"});
  RunRaw({"PUBLISH", "a", "t1"});
  RunRaw({"SET", "k", "v"});
  RunRaw({"PUBLISH", "a", "t2"});
  EXPECT_EQ(RunRaw({"EXEC"}), "*3\r\n" + Frame('>', {"message", "a", "t1"}) + ":3\r\n+OK\r\n" +
                                  Frame('>', {"message", "a", "t2"}) + ":3\r\n");
  InProcessClient other(server_);
  other.state().authenticated = true;
  EXPECT_EQ(other.RunRaw({"PUBLISH", "a", "after"}), ":3\r\n");
  EXPECT_EQ(subscriber.RunRaw({"PING"}),
            Frame('*', {"message", "a", "t1"}) + Frame('*', {"pmessage", "*", "a", "t1"}) +
                Frame('*', {"message", "a", "t2"}) + Frame('*', {"pmessage", "*", "a", "t2"}) +
                Frame('*', {"message", "a", "after"}) +
                Frame('*', {"pmessage", "*", "a", "after"}) + Frame('*', {"pong", ""}));
}

// Within EXEC (seen from the change stream, as the SET runs) neither a message, nor a keyspace
// event, nor an invalidation has reached another client; after it they come in the order they
// were made.
TEST_F(PubSubTest, ExecHoldsMessagesEventsAndInvalidationsUntilItEnds) {
  struct Probe : ChangeConsumer {
    InProcessClient* watched = nullptr;
    int changes = 0;
    size_t posted_meanwhile = 0;
    void OnChange(const ChangeRecord&) override {
      ++changes;
      posted_meanwhile += watched->TakeMessages().size();
    }
  };
  ASSERT_EQ(Reply({"CONFIG", "SET", "notify-keyspace-events", "K$"}), "+OK");
  InProcessClient listener(server_, /*can_block=*/true);
  listener.state().authenticated = true;
  listener.RunRaw({"HELLO", "3"});
  listener.RunRaw({"CLIENT", "TRACKING", "ON"});
  listener.RunRaw({"GET", "k"});
  listener.RunRaw({"SUBSCRIBE", "a", "__keyspace@0__:k"});
  listener.TakeMessages();
  Probe probe;
  probe.watched = &listener;
  server_.keyspace().changes().AddConsumer(&probe);
  server_.keyspace().changes().SetInterest(&probe, ChangeConsumer::Interest::kKeys);
  RunRaw({"MULTI"});
  RunRaw({"PUBLISH", "a", "t1"});
  RunRaw({"SET", "k", "v"});
  RunRaw({"PUBLISH", "a", "t2"});
  EXPECT_EQ(RunRaw({"EXEC"}), "*3\r\n:1\r\n+OK\r\n:1\r\n");
  server_.keyspace().changes().RemoveConsumer(&probe);
  EXPECT_EQ(probe.changes, 1);
  EXPECT_EQ(probe.posted_meanwhile, 0u);
  EXPECT_EQ(listener.TakeMessages().size(), 1u);
  EXPECT_EQ(listener.RunRaw({"PING"}), Frame('>', {"message", "a", "t1"}) +
                                           Frame('>', {"message", "__keyspace@0__:k", "set"}) +
                                           ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n" +
                                           Frame('>', {"message", "a", "t2"}) + "+PONG\r\n");
}

TEST_F(PubSubTest, AClientThatGoesAwayLeavesItsChannels) {
  {
    InProcessClient gone(server_, true);
    gone.RunRaw({"SUBSCRIBE", "c"});
    gone.RunRaw({"PSUBSCRIBE", "*"});
    EXPECT_EQ(RunRaw({"PUBLISH", "c", "m"}), ":2\r\n");
  }
  EXPECT_EQ(RunRaw({"PUBLISH", "c", "m"}), ":0\r\n");
  EXPECT_EQ(Run({"PUBSUB", "NUMPAT"}).integer, 0);
}

// The registry under load: publishers on 8 threads, 200 subscribers owned by 4 threads (each
// drains its own clients, as an I/O thread does), half of them subscribing and unsubscribing
// all the time. A steady subscriber gets every message exactly once; every subscriber gets each
// publisher's messages in the order they were published, without duplicates.
TEST_F(PubSubTest, ConcurrentPublishersAndChurnLoseAndDuplicateNothing) {
  constexpr int kPublishers = 8;
  constexpr int kMessages = 400;
  constexpr int kOwners = 4;
  constexpr int kPerOwner = 50;
  std::vector<std::unique_ptr<InProcessClient>> clients;
  for (int i = 0; i < kOwners * kPerOwner; ++i) {
    clients.push_back(std::make_unique<InProcessClient>(server_, true));
  }
  std::atomic<int> subscribed{0};
  std::atomic<bool> publishing_done{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int owner = 0; owner < kOwners; ++owner) {
    threads.emplace_back([&, owner] {
      std::vector<std::vector<int>> last(kPerOwner, std::vector<int>(kPublishers, -1));
      std::vector<std::vector<int>> received(kPerOwner, std::vector<int>(kPublishers, 0));
      auto take = [&](int index, const std::string& bytes) {
        size_t at = 0;
        while (at < bytes.size()) {
          protocol::RespValue value;
          int64_t used = protocol::ParseReply(std::string_view(bytes).substr(at), &value);
          if (used <= 0) {
            failures.fetch_add(1);
            return;
          }
          at += used;
          if (value.elements.size() != 3 || value.elements[0].str != "message") continue;
          const std::string& payload = value.elements[2].str;
          const int publisher = std::stoi(payload.substr(0, payload.find(':')));
          const int seq = std::stoi(payload.substr(payload.find(':') + 1));
          if (seq <= last[index][publisher]) failures.fetch_add(1);  // Out of order or twice.
          last[index][publisher] = seq;
          ++received[index][publisher];
        }
      };
      for (int i = 0; i < kPerOwner; ++i) {
        clients[owner * kPerOwner + i]->RunRaw({"SUBSCRIBE", "news"});
      }
      subscribed.fetch_add(1);
      int round = 0;
      while (!publishing_done.load()) {
        for (int i = 0; i < kPerOwner; ++i) {
          InProcessClient& client = *clients[owner * kPerOwner + i];
          protocol::ReplyBuilder drained;
          server_.pubsub().Drain(client.state(), drained);
          take(i, drained.buffer());
          if (i % 2 == 1) {  // Churn: odd clients leave and come back.
            take(i, client.RunRaw({round % 2 == 0 ? "UNSUBSCRIBE" : "SUBSCRIBE", "news"}));
          }
        }
        ++round;
      }
      for (int i = 0; i < kPerOwner; ++i) {
        protocol::ReplyBuilder drained;
        server_.pubsub().Drain(clients[owner * kPerOwner + i]->state(), drained);
        take(i, drained.buffer());
        if (i % 2 == 0) {
          for (int p = 0; p < kPublishers; ++p) {
            if (received[i][p] != kMessages) failures.fetch_add(1);
          }
        }
      }
    });
  }
  while (subscribed.load() < kOwners) std::this_thread::yield();
  std::vector<std::thread> publishers;
  for (int p = 0; p < kPublishers; ++p) {
    publishers.emplace_back([&, p] {
      InProcessClient publisher(server_);
      for (int seq = 0; seq < kMessages; ++seq) {
        publisher.RunRaw({"PUBLISH", "news", std::to_string(p) + ":" + std::to_string(seq)});
      }
    });
  }
  for (std::thread& t : publishers) t.join();
  publishing_done.store(true);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace gigakv::testing
