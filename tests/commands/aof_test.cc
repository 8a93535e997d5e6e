// The append-only log in process (server/aof.h) over the in-memory file layer: what a restart
// replays, what a power loss keeps, what a failing or full disk does to writes (-MISCONF,
// nothing acknowledged that is not in the file), torn tails and damage, and a crash at every
// step of creating the directory.
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "persistence/log/log_reader.h"
#include "persistence/log/log_record.h"
#include "support/keyspace_digest.h"
#include "support/mem_file_system.h"

namespace gigakv::testing {
namespace {

class AofTest : public ::testing::Test {
 protected:
  // A server on fs_ with the log on (appendfsync `fsync`), opened: nullptr and *status set if
  // Open failed.
  std::unique_ptr<server::Server> Start(
      const std::string& fsync = "always", absl::Status* status = nullptr,
      const std::vector<std::pair<std::string, std::string>>& extra = {}) {
    auto config = std::make_unique<server::Config>();
    (void)config->SetOne("shards", "16", false);
    (void)config->SetOne("save", "", false);
    (void)config->SetOne("appendonly", "yes", false);
    (void)config->SetOne("appendfsync", fsync, false);
    for (const auto& [name, value] : extra) EXPECT_TRUE(config->SetOne(name, value, false).ok());
    server::ServerOptions options;
    options.clock = &clock_;
    options.file_system = &fs_;
    auto server = std::make_unique<server::Server>(*config, options);
    configs_.push_back(std::move(config));
    absl::Status opened = server->aof().Open();
    if (status != nullptr) *status = opened;
    if (!opened.ok()) {
      if (status == nullptr) ADD_FAILURE() << opened;
      return nullptr;
    }
    return server;
  }

  static void WaitDurable(server::Server& server) {
    for (int i = 0; i < 5000 && server.aof().durable() < server.aof().appended(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_GE(server.aof().durable(), server.aof().appended());
  }

  template <typename Predicate>
  static bool Eventually(Predicate predicate) {
    for (int i = 0; i < 5000; ++i) {
      if (predicate()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return predicate();
  }

  std::string IncrPath() const {
    char cwd[4096];
    return std::string(::getcwd(cwd, sizeof(cwd))) + "/appendonlydir/appendonly.aof.1.incr.gkv";
  }

  ManualClock clock_;
  MemFileSystem fs_;
  std::vector<std::unique_ptr<server::Config>> configs_;
};

void FillSomething(InProcessClient& client) {
  ASSERT_EQ(client.Reply({"SET", "a", "1"}), "+OK");
  client.Run({"RPUSH", "list", "x", "y", "z"});
  client.Run({"SADD", "set", "m1", "m2", "7"});
  client.Run({"HSET", "hash", "f", "v", "g", "w"});
  client.Run({"ZADD", "zset", "1.5", "a", "-2", "b"});
  client.Run({"SET", "ttl", "v", "PX", "100000"});
  client.Run({"MULTI"});
  client.Run({"INCR", "counter"});
  client.Run({"INCRBY", "counter", "41"});
  client.Run({"LPUSH", "list", "w"});
  EXPECT_EQ(client.Run({"EXEC"}).elements.size(), 3u);
  client.Run({"SPOP", "set"});
  client.Run({"SELECT", "3"});
  client.Run({"SET", "in3", "three"});
  client.Run({"SELECT", "5"});
  client.Run({"SET", "gone", "x"});
  client.Run({"FLUSHDB"});
  client.Run({"SELECT", "0"});
  client.Run({"SWAPDB", "3", "4"});
  client.Run({"COPY", "hash", "hash2"});
  client.Run({"RENAME", "a", "b"});
  client.Run({"MOVE", "b", "7"});
  client.Run({"APPEND", "str", "abc"});
  client.Run({"SETRANGE", "str", "10", "z"});
}

TEST_F(AofTest, RestartReplaysTheSameDataset) {
  Digest before;
  {
    auto server = Start();
    ASSERT_NE(server, nullptr);
    InProcessClient client(*server);
    FillSomething(client);
    WaitDurable(*server);
    before = KeyspaceDigest(*server);
  }
  auto server = Start();
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(KeyspaceDigest(*server), before) << DescribeDifference(before, KeyspaceDigest(*server));
  EXPECT_EQ(before.count("7:b"), 1u);
  EXPECT_EQ(before.count("4:in3"), 1u);
}

TEST_F(AofTest, ExpiredKeysDoNotChangeWhatLaterEffectsMean) {
  {
    auto server = Start();
    InProcessClient client(*server);
    // The key expires between the two runs: replaying APPEND must find it, not create "x".
    client.Run({"SET", "k", "v", "PX", "500"});
    client.Run({"APPEND", "k", "x"});
    WaitDurable(*server);
  }
  clock_.AdvanceMs(10'000);
  auto server = Start();
  InProcessClient client(*server);
  EXPECT_EQ(client.Reply({"GET", "k"}), "(nil)");
  EXPECT_EQ(client.Reply({"EXISTS", "k"}), ":0");
}

TEST_F(AofTest, APowerLossKeepsEveryDurableRecordAndAPrefixOfTheRest) {
  {
    auto server = Start();
    InProcessClient client(*server);
    for (int i = 0; i < 100; ++i) client.Run({"SET", "k" + std::to_string(i), "v"});
    WaitDurable(*server);
    for (int i = 100; i < 300; ++i) client.Run({"SET", "k" + std::to_string(i), "v"});
    fs_.PowerLoss();  // Before the log thread may have written the last ones.
  }
  auto server = Start();
  ASSERT_NE(server, nullptr);
  InProcessClient client(*server);
  int present = 0;
  bool gap = false;
  for (int i = 0; i < 300; ++i) {
    const bool exists = client.Reply({"EXISTS", "k" + std::to_string(i)}) == ":1";
    if (i < 100) {
      ASSERT_TRUE(exists) << i;
    }
    if (!exists) gap = true;
    ASSERT_FALSE(exists && gap) << "record " << i << " survived one before it that did not";
    present += exists;
  }
  EXPECT_GE(present, 100);
}

TEST_F(AofTest, AFailingFsyncRefusesWritesAndAcknowledgesNothing) {
  auto server = Start();
  InProcessClient client(*server);
  client.Run({"SET", "before", "1"});
  WaitDurable(*server);
  fs_.fail_syncs(true);
  client.Run({"SET", "x", "1"});
  ASSERT_TRUE(Eventually([&] { return server->aof().writes_refused(); }));
  EXPECT_LT(server->aof().durable(), server->aof().appended());  // Not acknowledged.
  EXPECT_EQ(client.Reply({"SET", "y", "1"}),
            "-MISCONF Errors writing to the AOF file: Input/output error");
  EXPECT_EQ(client.Reply({"PING"}), "-MISCONF Errors writing to the AOF file: Input/output error");
  EXPECT_EQ(client.Reply({"GET", "before"}), "\"1\"");  // Reads go on.
  EXPECT_NE(client.Run({"INFO", "persistence"}).str.find("aof_last_write_status:err"),
            std::string::npos);
  fs_.fail_syncs(false);
  server->aof().Cron();
  ASSERT_TRUE(Eventually([&] { return !server->aof().writes_refused(); }));
  WaitDurable(*server);
  EXPECT_EQ(client.Reply({"SET", "z", "1"}), "+OK");
  WaitDurable(*server);
  server.reset();
  server = Start();
  InProcessClient again(*server);
  EXPECT_EQ(again.Reply({"MGET", "before", "x", "y", "z"}), "[\"1\", \"1\", (nil), \"1\"]");
}

TEST_F(AofTest, AFullDiskWritesTheRestOnceThereIsRoom) {
  fs_.support_preallocate(false);  // Else the first records land in reserved space.
  auto server = Start();
  InProcessClient client(*server);
  WaitDurable(*server);
  fs_.set_space_left(40);  // Part of the next record only.
  const std::string value(200, 'v');
  client.Run({"SET", "big", value});
  ASSERT_TRUE(Eventually([&] { return server->aof().writes_refused(); }));
  EXPECT_EQ(client.Reply({"SET", "other", "1"}),
            "-MISCONF Errors writing to the AOF file: No space left on device");
  fs_.set_space_left(UINT64_MAX);
  server->aof().Cron();
  ASSERT_TRUE(Eventually([&] { return !server->aof().writes_refused(); }));
  WaitDurable(*server);
  server.reset();
  // The file is whole: its records read to a clean end.
  auto source = *fs_.NewSequentialFile(IncrPath());
  persistence::log::LogReader reader(source.get());
  std::string scratch;
  std::string_view record;
  int records = 0;
  persistence::log::LogReader::Outcome outcome;
  while ((outcome = reader.ReadRecord(&record, &scratch)) ==
         persistence::log::LogReader::Outcome::kRecord) {
    ++records;
  }
  EXPECT_EQ(outcome, persistence::log::LogReader::Outcome::kEnd);
  EXPECT_EQ(records, 1);
  server = Start();
  InProcessClient again(*server);
  EXPECT_EQ(again.Run({"GET", "big"}).str, value);
}

// The log thread reserves space ahead of its writes (fallocate): a power loss leaves zeros
// after the last record, which start-up takes for the end of the log (not a torn tail, so
// aof-load-truncated no starts too), and the next records go where the zeros began.
TEST_F(AofTest, SpaceReservedAheadIsTheEndOfTheLogAfterACrash) {
  {
    auto server = Start();
    InProcessClient client(*server);
    for (int i = 0; i < 100; ++i) client.Run({"SET", "k" + std::to_string(i), "v"});
    WaitDurable(*server);
    fs_.PowerLoss();
  }
  const std::string crashed = fs_.Contents(IncrPath());
  ASSERT_GT(crashed.size(), 1u << 20);  // The reservation survived...
  EXPECT_EQ(crashed.back(), '\0');      // ...as zeros.
  {
    auto server = Start("always", nullptr, {{"aof-load-truncated", "no"}});
    ASSERT_NE(server, nullptr);
    InProcessClient client(*server);
    EXPECT_EQ(client.Reply({"DBSIZE"}), ":100");
    client.Run({"SET", "after", "crash"});
    WaitDurable(*server);
    fs_.PowerLoss();
  }
  auto server = Start("always", nullptr, {{"aof-load-truncated", "no"}});
  ASSERT_NE(server, nullptr);
  InProcessClient client(*server);
  EXPECT_EQ(client.Reply({"DBSIZE"}), ":101");
  EXPECT_EQ(client.Reply({"GET", "after"}), "\"crash\"");
  server.reset();  // A clean close gives the reserved space back.
  auto source = *fs_.NewSequentialFile(IncrPath());
  persistence::log::LogReader reader(source.get());
  std::string scratch;
  std::string_view record;
  while (reader.ReadRecord(&record, &scratch) == persistence::log::LogReader::Outcome::kRecord) {
  }
  EXPECT_EQ(reader.valid_end(), fs_.Contents(IncrPath()).size());
}

// A disk that fills up after the log reserved its space does not stop the writes that fit in it.
TEST_F(AofTest, WritesGoOnIntoReservedSpaceWhenTheDiskIsFull) {
  auto server = Start();
  InProcessClient client(*server);
  client.Run({"SET", "first", "1"});
  WaitDurable(*server);
  fs_.set_space_left(0);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(client.Reply({"SET", "k" + std::to_string(i), std::string(100, 'v')}), "+OK");
  }
  WaitDurable(*server);
  EXPECT_FALSE(server->aof().writes_refused());
  fs_.PowerLoss();
  fs_.set_space_left(std::numeric_limits<uint64_t>::max());
  server.reset();
  server = Start();
  ASSERT_NE(server, nullptr);
  InProcessClient again(*server);
  EXPECT_EQ(again.Reply({"DBSIZE"}), ":101");
}

// no-appendfsync-on-rewrite yes: while a background save (or a rewrite) runs, the log is
// written but not fsynced, so a write acknowledged meanwhile may be lost to a power loss, as in
// Redis; with no (the default) it is fsynced before its reply.
TEST_F(AofTest, NoAppendfsyncOnRewriteSkipsFsyncsWhileABackgroundSaveRuns) {
  for (const std::string setting : {"no", "yes"}) {
    SCOPED_TRACE(setting);
    {
      auto server = Start("always", nullptr, {{"no-appendfsync-on-rewrite", setting}});
      ASSERT_NE(server, nullptr);
      InProcessClient client(*server);
      for (int i = 0; i < 500; ++i) client.Run({"SET", "k" + std::to_string(i), "v"});
      WaitDurable(*server);
      (void)configs_.back()->SetOne("rdb-key-save-delay", "2000", false);  // A 1 s walk.
      server->settings().Load(*configs_.back());
      ASSERT_EQ(client.Reply({"BGSAVE"}), "+Background saving started");
      ASSERT_EQ(client.Reply({"SET", "during", setting}), "+OK");
      WaitDurable(*server);
      fs_.PowerLoss();
      (void)configs_.back()->SetOne("rdb-key-save-delay", "0", false);
      server->settings().Load(*configs_.back());
    }
    auto server = Start("always");
    ASSERT_NE(server, nullptr);
    InProcessClient client(*server);
    EXPECT_EQ(client.Reply({"EXISTS", "k499"}), ":1");
    EXPECT_EQ(client.Reply({"EXISTS", "during"}), setting == "no" ? ":1" : ":0");
    client.Run({"FLUSHALL"});
    WaitDurable(*server);
  }
}

// Bytes written while fsync was off are fsynced once it is on again, also when no write
// follows (Redis compares its fsynced offset with the file's size).
TEST_F(AofTest, BytesWrittenWithoutFsyncAreFsyncedWhenFsyncComesBack) {
  for (const std::string policy : {"everysec", "always"}) {
    SCOPED_TRACE(policy);
    {
      auto server = Start("no");
      ASSERT_NE(server, nullptr);
      InProcessClient client(*server);
      ASSERT_EQ(client.Reply({"SET", "owed", policy}), "+OK");
      WaitDurable(*server);  // Written: appendfsync no counts a write as durable.
      const std::string path = IncrPath();
      const size_t written = server->aof().info().current_size - server->aof().info().base_size;
      EXPECT_LT(fs_.SyncedBytes(path), written);
      // The log thread is idle by now: the change of policy alone must bring the fsync.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ASSERT_EQ(client.Reply({"CONFIG", "SET", "appendfsync", policy}), "+OK");
      EXPECT_TRUE(Eventually([&] { return fs_.SyncedBytes(path) >= written; }));
      fs_.PowerLoss();
    }
    auto server = Start("always");
    ASSERT_NE(server, nullptr);
    InProcessClient client(*server);
    EXPECT_EQ(client.Reply({"GET", "owed"}), "\"" + policy + "\"");
    client.Run({"FLUSHALL"});
    WaitDurable(*server);
  }
}

// Backpressure: when the disk stops taking the log's writes, write commands wait once
// AppendOnlyLog::kMaxPendingBytes of records are waiting (as Redis's event loop blocks in
// write()), instead of buffering without bound; they go on when the disk does.
TEST_F(AofTest, WritesWaitWhileTheDiskFallsBehind) {
  auto server = Start("everysec");
  ASSERT_NE(server, nullptr);
  InProcessClient client(*server);
  client.Run({"SET", "first", "1"});
  WaitDurable(*server);
  fs_.hold_writes(true);
  const std::string value(1 << 20, 'v');
  const int total = 2 * server::AppendOnlyLog::kMaxPendingBytes / value.size();
  std::atomic<int> done{0};
  std::thread writer([&] {
    InProcessClient own(*server);
    for (int i = 0; i < total; ++i) {
      own.Run({"SET", "k" + std::to_string(i), value});
      done.fetch_add(1);
    }
  });
  // The log thread took the first record into its stuck write; the next ones fill the buffer
  // to the limit, and the writer waits there rather than finishing.
  ASSERT_TRUE(Eventually([&] { return server->aof().waits_for_room() > 0; }));
  EXPECT_LT(done.load(), total);
  EXPECT_EQ(client.Reply({"GET", "first"}), "\"1\"");  // Reads go on.
  fs_.hold_writes(false);
  writer.join();
  EXPECT_EQ(done.load(), total);
  WaitDurable(*server);
  server.reset();
  server = Start("everysec");
  ASSERT_NE(server, nullptr);
  InProcessClient again(*server);
  EXPECT_EQ(again.Reply({"DBSIZE"}), ":" + std::to_string(total + 1));
}

TEST_F(AofTest, ATornTailIsCutAndADamagedMiddleStopsStartUp) {
  {
    auto server = Start();
    InProcessClient client(*server);
    for (int i = 0; i < 5000; ++i) client.Run({"SET", "k" + std::to_string(i), "value"});
    WaitDurable(*server);
  }
  const std::string whole = fs_.Contents(IncrPath());
  ASSERT_GT(whole.size(), 3 * 32768u);
  // A torn last record: refused with aof-load-truncated no, cut with yes.
  fs_.SetContents(IncrPath(), whole.substr(0, whole.size() - 3));
  absl::Status status;
  EXPECT_EQ(Start("always", &status, {{"aof-load-truncated", "no"}}), nullptr);
  EXPECT_NE(std::string(status.message()).find("Unexpected end of file"), std::string::npos)
      << status;
  {
    auto server = Start();
    ASSERT_NE(server, nullptr);
    InProcessClient client(*server);
    EXPECT_EQ(client.Reply({"DBSIZE"}), ":4999");
    client.Run({"SET", "after", "cut"});
    WaitDurable(*server);
  }
  {
    auto server = Start();
    InProcessClient client(*server);
    EXPECT_EQ(client.Reply({"GET", "after"}), "\"cut\"");
  }
  // A flipped byte in the first block: the rest still verifies, so it is not a torn tail.
  std::string damaged = fs_.Contents(IncrPath());
  damaged[100] = static_cast<char>(damaged[100] ^ 0x40);
  fs_.SetContents(IncrPath(), damaged);
  EXPECT_EQ(Start("always", &status), nullptr);
  EXPECT_NE(std::string(status.message())
                .find("Bad file format reading the append only file "
                      "appendonly.aof.1.incr.gkv"),
            std::string::npos)
      << status;
}

TEST_F(AofTest, ACrashAtAnyStepOfCreatingTheDirectoryLeavesOneThatOpens) {
  uint64_t steps = 0;
  {
    const uint64_t start = fs_.operations();
    auto server = Start();
    InProcessClient client(*server);
    client.Run({"SET", "a", "1"});
    WaitDurable(*server);
    steps = fs_.operations() - start;
  }
  ASSERT_GT(steps, 3u);
  for (uint64_t crash_at = 0; crash_at <= steps; ++crash_at) {
    fs_.~MemFileSystem();
    new (&fs_) MemFileSystem();
    fs_.set_operations_left(crash_at);
    bool acknowledged = false;
    {
      absl::Status status;
      auto server = Start("always", &status);
      if (server != nullptr) {
        InProcessClient client(*server);
        client.Run({"SET", "a", "1"});
        for (int i = 0; i < 200 && server->aof().durable() < server->aof().appended(); ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        acknowledged = server->aof().durable() >= server->aof().appended();
      }
      fs_.PowerLoss();
    }
    absl::Status status;
    auto server = Start("always", &status);
    ASSERT_NE(server, nullptr) << "crash after " << crash_at << " steps: " << status;
    InProcessClient client(*server);
    if (acknowledged) {
      EXPECT_EQ(client.Reply({"GET", "a"}), "\"1\"") << crash_at;
    }
  }
}

std::string Resp(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& arg : args) {
    out += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
  }
  return out;
}

// A Redis 6 style appendonly.aof in `dir` is moved into the directory as the base of a new
// manifest, as Redis 7 upgrades it; a crash at any step of that leaves files that load.
TEST_F(AofTest, ARedis6FileUpgradesAndACrashAtAnyStepLeavesItLoadable) {
  char cwd[4096];
  const std::string legacy = std::string(::getcwd(cwd, sizeof(cwd))) + "/appendonly.aof";
  // What Redis 6 writes: annotations, SCRIPT LOAD (no keys: skipped), a script's effects as a
  // transaction with its own SELECT, and a nested MULTI as Redis 7.0 leaves after cutting a
  // truncated transaction.
  const std::string text = "#TS:1700000000\r\n" + Resp({"SELECT", "0"}) + Resp({"SET", "a", "1"}) +
                           Resp({"SCRIPT", "LOAD", "return 1"}) + Resp({"RPUSH", "l", "x", "y"}) +
                           Resp({"MULTI"}) + Resp({"INCR", "n"}) + Resp({"MULTI"}) +
                           Resp({"INCR", "n"}) + Resp({"SELECT", "3"}) + Resp({"SET", "b", "2"}) +
                           Resp({"EXEC"}) + Resp({"SELECT", "0"}) + Resp({"SCRIPT", "FLUSH"});
  const auto check = [](server::Server& server, uint64_t crash_at) {
    InProcessClient client(server);
    EXPECT_EQ(client.Reply({"GET", "a"}), "\"1\"") << crash_at;
    EXPECT_EQ(client.Reply({"LLEN", "l"}), ":2") << crash_at;
    EXPECT_EQ(client.Reply({"GET", "n"}), "\"2\"") << crash_at;
    client.Run({"SELECT", "3"});
    EXPECT_EQ(client.Reply({"GET", "b"}), "\"2\"") << crash_at;
  };
  uint64_t steps = 0;
  {
    fs_.SetContents(legacy, text);
    const uint64_t start = fs_.operations();
    auto server = Start();
    steps = fs_.operations() - start;
    check(*server, steps);
    EXPECT_FALSE(fs_.FileExists(legacy));
    EXPECT_EQ(fs_.Contents(std::string(cwd) + "/appendonlydir/appendonly.aof"), text);
  }
  ASSERT_GT(steps, 3u);
  for (uint64_t crash_at = 0; crash_at <= steps; ++crash_at) {
    fs_.~MemFileSystem();
    new (&fs_) MemFileSystem();
    fs_.SetContents(legacy, text);
    ASSERT_TRUE(fs_.SyncDir(cwd).ok());
    fs_.set_operations_left(crash_at);
    {
      absl::Status status;
      auto server = Start("always", &status);
      fs_.PowerLoss();
    }
    absl::Status status;
    auto server = Start("always", &status);
    ASSERT_NE(server, nullptr) << "crash after " << crash_at << " steps: " << status;
    check(*server, crash_at);
  }
}

// DEBUG LOADAOF loads the files again, from the manifest on disk: a command added to a file
// behind the server's back appears, the server's own logged writes stay, and the reload itself
// logs nothing.
TEST_F(AofTest, DebugLoadAofReloadsTheFiles) {
  char cwd[4096];
  const std::string legacy = std::string(::getcwd(cwd, sizeof(cwd))) + "/appendonly.aof";
  fs_.SetContents(legacy, Resp({"SET", "a", "1"}));
  auto server = Start("always", nullptr, {{"enable-debug-command", "yes"}});
  ASSERT_NE(server, nullptr);
  InProcessClient client(*server);
  client.Run({"SET", "c", "3"});
  client.Run({"SET", "a", "changed"});
  WaitDurable(*server);
  const std::string base = std::string(cwd) + "/appendonlydir/appendonly.aof";
  fs_.SetContents(base, fs_.Contents(base) + Resp({"SET", "b", "2"}));
  const uint64_t appended = server->aof().appended();
  EXPECT_EQ(client.Reply({"DEBUG", "LOADAOF"}), "+OK");
  EXPECT_EQ(client.Reply({"GET", "a"}), "\"changed\"");
  EXPECT_EQ(client.Reply({"GET", "b"}), "\"2\"");
  EXPECT_EQ(client.Reply({"GET", "c"}), "\"3\"");
  EXPECT_EQ(server->aof().appended(), appended);
  EXPECT_EQ(client.Reply({"DEBUG", "LOADAOF", "x"}).substr(0, 4), "-ERR");
  // Logging goes on after the reload.
  client.Run({"SET", "d", "4"});
  WaitDurable(*server);
  server.reset();
  auto again = Start();
  InProcessClient after(*again);
  EXPECT_EQ(after.Reply({"GET", "d"}), "\"4\"");
  EXPECT_EQ(after.Reply({"GET", "b"}), "\"2\"");
}

TEST_F(AofTest, DebugLoadAofNeedsTheLogOn) {
  auto server = Start("always", nullptr, {{"enable-debug-command", "yes"}});
  InProcessClient client(*server);
  EXPECT_EQ(client.Reply({"CONFIG", "SET", "appendonly", "no"}), "+OK");
  EXPECT_EQ(client.Reply({"DEBUG", "LOADAOF"}), "-ERR The append only file is off");
}

TEST_F(AofTest, OneCommandsEffectsAreOneRecord) {
  auto server = Start();
  InProcessClient client(*server);
  std::vector<std::string> mset = {"MSET"};
  for (int i = 0; i < 50; ++i) {
    mset.push_back("k" + std::to_string(i));
    mset.push_back("v");
  }
  client.Run(mset);
  client.Run({"SADD", "a", "1", "2"});
  client.Run({"SUNIONSTORE", "a", "a", "a"});  // DEL a, then SADD a: together.
  WaitDurable(*server);
  server.reset();
  auto source = *fs_.NewSequentialFile(IncrPath());
  persistence::log::LogReader reader(source.get());
  std::string scratch;
  std::string_view payload;
  std::vector<size_t> effects;
  persistence::log::DecodedRecord decoded;
  while (reader.ReadRecord(&payload, &scratch) == persistence::log::LogReader::Outcome::kRecord) {
    ASSERT_TRUE(persistence::log::DecodeRecord(payload, &decoded).ok());
    effects.push_back(decoded.effect_count);
  }
  ASSERT_EQ(effects.size(), 3u);
  EXPECT_EQ(effects[0], 50u);
  EXPECT_EQ(effects[1], 1u);
  EXPECT_GE(effects[2], 1u);
}

void WaitRewriteEnd(server::Server& server) {
  for (int i = 0; i < 10000 && server.aof().rewrite_in_progress(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  server.aof().Cron();  // Joins the rewrite's thread.
}

TEST_F(AofTest, RewriteWritesANewBaseWhileWritesGoOn) {
  Digest before;
  {
    auto server = Start();
    InProcessClient client(*server);
    for (int i = 0; i < 2000; ++i) client.Run({"SET", "k" + std::to_string(i), "old"});
    client.Run({"RPUSH", "list", "a", "b"});
    // A slow walk: writes land while the base is being written.
    (void)configs_.back()->SetOne("rdb-key-save-delay", "200", false);
    server->settings().Load(*configs_.back());
    ASSERT_EQ(client.Reply({"BGREWRITEAOF"}), "+Background append only file rewriting started");
    EXPECT_EQ(client.Reply({"BGREWRITEAOF"}),
              "-ERR Background append only file rewriting already in progress");
    EXPECT_EQ(client.Reply({"BGSAVE"}),
              "-ERR Another child process is active (AOF?): can't BGSAVE right now. Use "
              "BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.");
    for (int i = 0; i < 2000; i += 7) client.Run({"SET", "k" + std::to_string(i), "new"});
    client.Run({"DEL", "k1"});
    client.Run({"RPUSH", "list", "c"});
    (void)configs_.back()->SetOne("rdb-key-save-delay", "0", false);
    server->settings().Load(*configs_.back());
    WaitRewriteEnd(*server);
    const server::AppendOnlyLog::Info info = server->aof().info();
    EXPECT_TRUE(info.last_rewrite_ok);
    EXPECT_EQ(info.rewrites, 1u);
    client.Run({"SET", "after", "rewrite"});
    WaitDurable(*server);
    before = KeyspaceDigest(*server);
  }
  char cwd[4096];
  const std::string dir = std::string(::getcwd(cwd, sizeof(cwd))) + "/appendonlydir/";
  EXPECT_EQ(fs_.Contents(dir + "appendonly.aof.manifest"),
            "file appendonly.aof.2.base.rdb seq 2 type b\n"
            "file appendonly.aof.2.incr.gkv seq 2 type i\n");
  EXPECT_FALSE(fs_.FileExists(dir + "appendonly.aof.1.incr.gkv"));  // History is deleted.
  EXPECT_FALSE(fs_.FileExists(dir + "appendonly.aof.1.base.rdb"));
  auto server = Start();
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(KeyspaceDigest(*server), before) << DescribeDifference(before, KeyspaceDigest(*server));
}

TEST_F(AofTest, ACrashAtAnyStepOfARewriteLeavesEveryDurableWrite) {
  // Count the steps of a whole rewrite first.
  uint64_t steps = 0;
  {
    auto server = Start();
    InProcessClient client(*server);
    for (int i = 0; i < 50; ++i) client.Run({"SET", "k" + std::to_string(i), "v"});
    WaitDurable(*server);
    const uint64_t start = fs_.operations();
    ASSERT_TRUE(server->aof().StartRewrite().ok());
    client.Run({"SET", "during", "x"});
    WaitRewriteEnd(*server);
    WaitDurable(*server);
    steps = fs_.operations() - start;
  }
  ASSERT_GT(steps, 5u);
  for (uint64_t crash_at = 0; crash_at <= steps + 2; ++crash_at) {
    fs_.~MemFileSystem();
    new (&fs_) MemFileSystem();
    bool during_durable = false;
    {
      auto server = Start();
      ASSERT_NE(server, nullptr);
      InProcessClient client(*server);
      for (int i = 0; i < 50; ++i) client.Run({"SET", "k" + std::to_string(i), "v"});
      WaitDurable(*server);
      fs_.set_operations_left(crash_at);
      (void)server->aof().StartRewrite();
      // Refused with -MISCONF once the log failed: then it is not a write to look for.
      const bool accepted = client.Reply({"SET", "during", "x"}) == "+OK";
      WaitRewriteEnd(*server);
      for (int i = 0; i < 200 && server->aof().durable() < server->aof().appended(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      during_durable = accepted && server->aof().durable() >= server->aof().appended();
      fs_.PowerLoss();
    }
    absl::Status status;
    auto server = Start("always", &status);
    ASSERT_NE(server, nullptr) << "crash after " << crash_at << " steps: " << status;
    InProcessClient client(*server);
    if (during_durable) {
      EXPECT_EQ(client.Reply({"DBSIZE"}), ":51") << crash_at;
    }
    for (int i = 0; i < 50; ++i) {
      ASSERT_EQ(client.Reply({"GET", "k" + std::to_string(i)}), "\"v\"") << crash_at;
    }
    if (during_durable) {
      EXPECT_EQ(client.Reply({"GET", "during"}), "\"x\"") << crash_at;
    }
  }
}

// After three failed rewrites in a row, scheduled and automatic ones back off (1 minute, then
// 2...), as Redis's aofRewriteLimited; BGREWRITEAOF itself is not limited.
TEST_F(AofTest, RepeatedRewriteFailuresBackOff) {
  auto server = Start("everysec");
  ASSERT_NE(server, nullptr);
  InProcessClient client(*server);
  client.Run({"SET", "a", "1"});
  WaitDurable(*server);
  fs_.set_space_left(0);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(server->aof().StartRewrite().ok());
    WaitRewriteEnd(*server);
  }
  EXPECT_EQ(server->aof().info().rewrites_consecutive_failures, 3u);
  server->aof().ScheduleRewrite();
  server->aof().Cron();
  EXPECT_FALSE(server->aof().rewrite_in_progress());  // Limited: retry in 1 minute.
  clock_.AdvanceMs(30'000);
  server->aof().Cron();
  EXPECT_FALSE(server->aof().rewrite_in_progress());
  fs_.set_space_left(std::numeric_limits<uint64_t>::max());
  clock_.AdvanceMs(31'000);
  server->aof().Cron();
  WaitRewriteEnd(*server);
  EXPECT_EQ(server->aof().info().rewrites_consecutive_failures, 0u);
  EXPECT_EQ(client.Reply({"GET", "a"}), "\"1\"");
}

TEST_F(AofTest, AppendonlyTurnsOnAndOffAtRuntime) {
  Digest before;
  {
    auto server = Start("always", nullptr, {{"appendonly", "no"}});
    ASSERT_NE(server, nullptr);
    EXPECT_FALSE(server->aof().enabled());
    InProcessClient client(*server);
    for (int i = 0; i < 500; ++i) client.Run({"SET", "k" + std::to_string(i), "before"});
    client.Run({"RPUSH", "list", "a"});
    EXPECT_EQ(client.Reply({"CONFIG", "SET", "appendonly", "yes"}), "+OK");
    EXPECT_TRUE(server->aof().enabled());
    for (int i = 0; i < 500; i += 3) client.Run({"SET", "k" + std::to_string(i), "during"});
    WaitRewriteEnd(*server);
    EXPECT_TRUE(server->aof().info().last_rewrite_ok);
    client.Run({"RPUSH", "list", "b"});
    WaitDurable(*server);
    before = KeyspaceDigest(*server);
    // Off: fsynced and closed; writes are no longer logged.
    EXPECT_EQ(client.Reply({"CONFIG", "SET", "appendonly", "no"}), "+OK");
    EXPECT_FALSE(server->aof().enabled());
    client.Run({"SET", "unlogged", "x"});
  }
  char cwd[4096];
  const std::string dir = std::string(::getcwd(cwd, sizeof(cwd))) + "/appendonlydir/";
  EXPECT_EQ(fs_.Contents(dir + "appendonly.aof.manifest"),
            "file appendonly.aof.1.base.rdb seq 1 type b\n"
            "file appendonly.aof.1.incr.gkv seq 1 type i\n");
  auto server = Start();
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(KeyspaceDigest(*server), before) << DescribeDifference(before, KeyspaceDigest(*server));
}

}  // namespace
}  // namespace gigakv::testing
