// Client-side caching in process (server/tracking.h): which commands remember keys, who gets an
// invalidation and how it is framed, BCAST batches, the table's counts and limit, and
// invalidations from writers on other threads. Byte-for-byte comparisons with redis-server
// over real connections are in tests/e2e/test_tracking.py.
#include "server/tracking.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "support/keyspace_digest.h"

namespace gigakv::testing {
namespace {

std::string Bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

// An invalidation push for `keys` (RESP3).
std::string Invalidate(const std::vector<std::string>& keys) {
  std::string out = ">2\r\n" + Bulk("invalidate") + "*" + std::to_string(keys.size()) + "\r\n";
  for (const std::string& key : keys) out += Bulk(key);
  return out;
}

class TrackingTest : public CommandTest {
 protected:
  TrackingTest() : tracker_(server_, /*can_block=*/true) {
    tracker_.state().authenticated = true;
    tracker_.RunRaw({"HELLO", "3"});
  }

  // What the tracker received since the last call (its PING's +PONG dropped).
  std::string Received() {
    std::string raw = tracker_.RunRaw({"PING"});
    EXPECT_GE(raw.size(), 7u);
    return raw.substr(0, raw.size() - 7);
  }

  server::ClientTracking& tracking() { return server_.tracking(); }

  InProcessClient tracker_;
};

TEST_F(TrackingTest, ReadsRememberKeysAndOneChangeInvalidatesOnce) {
  EXPECT_EQ(tracker_.RunRaw({"CLIENT", "TRACKING", "ON"}), "+OK\r\n");
  tracker_.RunRaw({"GET", "k"});  // Missing keys are remembered too.
  RunRaw({"MSET", "a", "1", "b", "1"});
  tracker_.RunRaw({"MGET", "a", "b"});
  tracker_.RunRaw({"SET", "w", "1"});  // Writes remember nothing.
  EXPECT_EQ(tracking().total_keys(), 3);
  EXPECT_EQ(tracking().total_items(), 3);
  EXPECT_EQ(tracking().clients(), 1);
  RunRaw({"SET", "k", "v"});
  RunRaw({"SET", "k", "again"});  // Forgotten after the first invalidation.
  RunRaw({"SET", "w", "2"});
  EXPECT_EQ(Received(), Invalidate({"k"}));
  RunRaw({"DEL", "a", "b"});
  EXPECT_EQ(Received(), Invalidate({"a"}) + Invalidate({"b"}));
  EXPECT_EQ(tracking().total_keys(), 0);
  // Keys are names: a change in another database invalidates too.
  tracker_.RunRaw({"GET", "k"});
  RunRaw({"SELECT", "5"});
  RunRaw({"SET", "k", "elsewhere"});
  EXPECT_EQ(Received(), Invalidate({"k"}));
}

TEST_F(TrackingTest, OwnWritesComeAfterTheReplyUnlessNoLoop) {
  tracker_.RunRaw({"CLIENT", "TRACKING", "ON"});
  tracker_.RunRaw({"GET", "k"});
  // The invalidation waits for the command's end: the reply first.
  EXPECT_EQ(tracker_.RunRaw({"SET", "k", "v"}), "+OK\r\n");
  EXPECT_EQ(Received(), Invalidate({"k"}));
  tracker_.RunRaw({"CLIENT", "TRACKING", "ON", "NOLOOP"});
  tracker_.RunRaw({"GET", "k"});
  tracker_.RunRaw({"SET", "k", "w"});
  EXPECT_EQ(Received(), "");
}

TEST_F(TrackingTest, OwnInvalidationFollowsTheReplyAmongItsOwnKeyspacePushes) {
  ASSERT_EQ(Reply({"CONFIG", "SET", "notify-keyspace-events", "Kg"}), "+OK");
  tracker_.RunRaw({"CLIENT", "TRACKING", "ON"});
  tracker_.RunRaw({"PSUBSCRIBE", "__keyspace@0__:*"});
  RunRaw({"RPUSH", "l", "a"});
  tracker_.RunRaw({"LRANGE", "l", "0", "-1"});
  // LTRIM empties the list: its "del" push comes inside the command, the invalidation after.
  const std::string del = ">4\r\n" + Bulk("pmessage") + Bulk("__keyspace@0__:*") +
                          Bulk("__keyspace@0__:l") + Bulk("del");
  EXPECT_EQ(tracker_.RunRaw({"LTRIM", "l", "1", "0"}), del + "+OK\r\n");
  EXPECT_EQ(Received(), Invalidate({"l"}));
}

TEST_F(TrackingTest, EntriesOfAClientThatStoppedGoWithTheirKeysNextChange) {
  tracker_.RunRaw({"CLIENT", "TRACKING", "ON"});
  tracker_.RunRaw({"GET", "k"});
  tracker_.RunRaw({"CLIENT", "TRACKING", "OFF"});
  EXPECT_EQ(tracking().clients(), 0);
  EXPECT_EQ(tracking().total_keys(), 1);  // As Redis: kept until the key changes.
  RunRaw({"SET", "k", "v"});
  EXPECT_EQ(tracking().total_keys(), 0);
  EXPECT_EQ(Received(), "");
}

TEST_F(TrackingTest, OptInRemembersOnlyAfterCachingYesForOneCommand) {
  tracker_.RunRaw({"CLIENT", "TRACKING", "ON", "OPTIN"});
  tracker_.RunRaw({"GET", "a"});
  EXPECT_EQ(tracking().total_keys(), 0);
  EXPECT_EQ(tracker_.RunRaw({"CLIENT", "CACHING", "YES"}), "+OK\r\n");
  tracker_.RunRaw({"GET", "b"});
  tracker_.RunRaw({"GET", "c"});  // The flag lasted one command.
  EXPECT_EQ(tracking().total_keys(), 1);
  EXPECT_EQ(tracker_.RunRaw({"CLIENT", "CACHING", "NO"}),
            "-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.\r\n");
  EXPECT_EQ(tracker_.RunRaw({"CLIENT", "TRACKING", "ON", "OPTOUT"}),
            "-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
            "and then re-enabling it with a different mode.\r\n");
}

TEST_F(TrackingTest, BcastSendsChangedKeysPerPrefixSortedAfterTheCommand) {
  EXPECT_EQ(tracker_.RunRaw({"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "b", "PREFIX", "a"}),
            "+OK\r\n");
  EXPECT_EQ(tracking().total_prefixes(), 2);
  EXPECT_EQ(tracker_.RunRaw({"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ax"}),
            "-ERR Prefix 'ax' overlaps with an existing prefix 'a'. Prefixes for a single client "
            "must not overlap.\r\n");
  RunRaw({"MSET", "a2", "1", "c", "1", "b1", "1", "a1", "1"});
  EXPECT_EQ(Received(), Invalidate({"a1", "a2"}) + Invalidate({"b1"}));
  // Reads are not remembered in BCAST mode.
  tracker_.RunRaw({"GET", "zz"});
  EXPECT_EQ(tracking().total_keys(), 0);
  tracker_.RunRaw({"CLIENT", "TRACKING", "OFF"});
  EXPECT_EQ(tracking().total_prefixes(), 0);
  RunRaw({"SET", "a1", "2"});
  EXPECT_EQ(Received(), "");
}

TEST_F(TrackingTest, RedirectToAResp2SubscriberAndABrokenRedirect) {
  InProcessClient listener(server_, /*can_block=*/true);
  listener.state().authenticated = true;
  listener.RunRaw({"SUBSCRIBE", "__redis__:invalidate"});
  const std::string id = std::to_string(listener.state().id);
  EXPECT_EQ(tracker_.RunRaw({"CLIENT", "TRACKING", "ON", "REDIRECT", id}), "+OK\r\n");
  EXPECT_EQ(tracker_.RunRaw({"CLIENT", "GETREDIR"}), ":" + id + "\r\n");
  tracker_.RunRaw({"GET", "k"});
  RunRaw({"SET", "k", "v"});
  EXPECT_EQ(listener.RunRaw({"PING"}), "*3\r\n" + Bulk("message") + Bulk("__redis__:invalidate") +
                                           "*1\r\n" + Bulk("k") + "*2\r\n" + Bulk("pong") +
                                           Bulk(""));
  // FLUSHALL: a null in the tracking client's protocol (RESP3 here), through the redirect.
  RunRaw({"FLUSHALL"});
  EXPECT_EQ(listener.RunRaw({"PING"}), "*3\r\n" + Bulk("message") + Bulk("__redis__:invalidate") +
                                           "_\r\n" + "*2\r\n" + Bulk("pong") + Bulk(""));
  EXPECT_EQ(tracker_.RunRaw({"CLIENT", "TRACKING", "ON", "REDIRECT", "999999"}),
            "-ERR The client ID you want redirect to does not exist\r\n");
}

TEST_F(TrackingTest, TheLimitInvalidatesKeysUntilTheTableFits) {
  tracker_.RunRaw({"CLIENT", "TRACKING", "ON"});
  tracker_.RunRaw({"MGET", "k1", "k2", "k3", "k4", "k5"});
  RunRaw({"CONFIG", "SET", "tracking-table-max-keys", "2"});
  RunRaw({"PING"});  // The limit is enforced before a command.
  EXPECT_EQ(tracking().total_keys(), 2);
  const std::string pushes = Received();
  size_t count = 0;
  for (size_t at = pushes.find("invalidate"); at != std::string::npos;
       at = pushes.find("invalidate", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 3u);
}

TEST_F(TrackingTest, WritersOnOtherThreadsInvalidateEveryReadKeyOnce) {
  tracker_.RunRaw({"CLIENT", "TRACKING", "ON"});
  constexpr int kKeys = 400;
  for (int i = 0; i < kKeys; ++i) tracker_.RunRaw({"GET", "key:" + std::to_string(i)});
  EXPECT_EQ(tracking().total_keys(), kKeys);
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([this] {
      InProcessClient writer(server_);
      writer.state().authenticated = true;
      for (int i = 0; i < kKeys; ++i) writer.RunRaw({"SET", "key:" + std::to_string(i), "v"});
    });
  }
  for (std::thread& writer : writers) writer.join();
  const std::string pushes = Received();
  for (int i = 0; i < kKeys; ++i) {
    const std::string one = Invalidate({"key:" + std::to_string(i)});
    const size_t first = pushes.find(one);
    ASSERT_NE(first, std::string::npos) << i;
    EXPECT_EQ(pushes.find(one, first + 1), std::string::npos) << i;
  }
  EXPECT_EQ(tracking().total_keys(), 0);
  EXPECT_EQ(tracking().total_items(), 0);
}

}  // namespace
}  // namespace gigakv::testing
