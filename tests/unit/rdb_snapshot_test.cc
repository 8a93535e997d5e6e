// Point-in-time snapshots of a live store (rdb_snapshot.h, Store::BeginCapture): the file holds
// exactly the dataset as of Begin() while other threads write, delete and flush; loading it back
// gives the same keys, values, TTLs and databases; loads refuse duplicate keys.
#include "persistence/rdb/rdb_snapshot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/types/hash.h"
#include "core/types/inline_value.h"
#include "core/types/quicklist.h"
#include "core/types/set.h"
#include "core/types/zset.h"
#include "gigakv/strings.h"
#include "tests/unit/rdb_test_util.h"

namespace gigakv::persistence::rdb {
namespace {

using ::testing::HasSubstr;
using namespace ::gigakv::persistence::rdb::testing;

// Every key of every database: (db, key) -> (expiry, the value's RDB type and contents).
using Dataset = std::map<std::pair<int, std::string>, std::pair<int64_t, std::string>>;

// The RDB type the value is written as, and its contents in a canonical order.
std::string Canonical(const RecordView& view) {
  std::string out = StrCat(RdbTypeOf(view), ":");
  if (view.is_string()) return out + std::string(view.str);
  std::unique_ptr<Object> copy;
  const Object* object = view.object;
  if (view.kind != ValueKind::kObject) {
    copy = ObjectFromInline(view.kind, view.str);
    object = copy.get();
  }
  for (const std::string& element : Contents(*object)) out += element + ",";
  return out;
}

Dataset Dump(Store& store) {
  Dataset contents;
  std::vector<KeyTable::Slot> slots;
  for (uint32_t i = 0; i < store.shard_count(); ++i) {
    Shard& shard = store.shard(i);
    Store::ShardLock lock(store, shard);
    for (int db = 0; db < store.databases(); ++db) {
      KeyTable* table = shard.FindTable(db);
      if (table == nullptr) continue;
      uint64_t cursor = 0;
      do {
        slots.clear();
        cursor = table->ScanRange(cursor, 1000, &slots);
        for (KeyTable::Slot slot : slots) {
          RecordView view = table->View(slot);
          contents[{db, std::string(view.key)}] = {view.expire_ms, Canonical(view)};
        }
      } while (cursor < KeyTable::kScanEnd);
    }
  }
  return contents;
}

// The keys that differ, for a readable failure ("" when none do).
std::string Differences(const Dataset& actual, const Dataset& expected) {
  std::string out;
  int shown = 0;
  for (const auto& [key, value] : expected) {
    auto it = actual.find(key);
    if (it == actual.end()) {
      out += StrCat("missing ", key.first, "/", key.second, "\n");
    } else if (it->second != value) {
      out += StrCat("differs ", key.first, "/", key.second, ": ", it->second.second, " ttl ",
                    it->second.first, " vs ", value.second, " ttl ", value.first, "\n");
    } else {
      continue;
    }
    if (++shown == 10) return out;
  }
  for (const auto& [key, value] : actual) {
    if (!expected.contains(key)) out += StrCat("extra ", key.first, "/", key.second, "\n");
    if (++shown == 10) return out;
  }
  return out;
}

void PutObject(Store& store, int db, std::string_view key, std::unique_ptr<Object> object,
               int64_t expire_ms = 0) {
  store.WithShardOf(key, [&](Shard& shard) {
    ValueSpec spec;
    spec.kind = ValueKind::kObject;
    spec.object = object.release();
    shard.Table(db).Put(key, store.Hash(key), spec, expire_ms, 0);
  });
}

// Strings in every db, and one collection of each type and encoding.
void Fill(Store& store, int string_keys) {
  for (int i = 0; i < string_keys; ++i) {
    store.Set(i % store.databases(), StrCat("key:", i), StrCat("value-", i * 7),
              i % 5 == 0 ? 3600000 : 0);
  }
  CollectionLimits limits;
  auto small_hash = std::make_unique<Hash>();
  small_hash->Set("f", "v", limits);
  PutObject(store, 0, "hash:small", std::move(small_hash));
  auto big_hash = std::make_unique<Hash>();
  for (int i = 0; i < 300; ++i) big_hash->Set(StrCat("field", i), StrCat(i), limits);
  PutObject(store, 1, "hash:big", std::move(big_hash), store.NowMs() + 50000);
  auto list = std::make_unique<List>(-2);
  for (int i = 0; i < 1000; ++i) list->Push(ListEnd::kTail, StrCat("element-", i));
  PutObject(store, 2, "list", std::move(list));
  auto ints = std::make_unique<Set>();
  for (int i = 0; i < 10; ++i) ints->Add(StrCat(i * 3), limits);
  PutObject(store, 3, "set:ints", std::move(ints));
  auto strings = std::make_unique<Set>();
  for (int i = 0; i < 200; ++i) strings->Add(StrCat("m", i), limits);
  PutObject(store, 3, "set:strings", std::move(strings));
  auto zset = std::make_unique<ZSet>();
  double ignored;
  for (int i = 0; i < 200; ++i) zset->Add(StrCat("z", i), i * 0.5, {}, limits, &ignored);
  PutObject(store, 15, "zset", std::move(zset));
}

absl::StatusOr<std::string> Snapshot(Store& store, const SnapshotOptions& options = {}) {
  RdbSnapshot snapshot(store, options);
  if (!snapshot.Begin()) return absl::FailedPreconditionError("busy");
  RecordingSink sink;
  absl::Status status = snapshot.WriteTo(sink.AsSink());
  if (!status.ok()) return status;
  return sink.bytes;
}

absl::StatusOr<RdbLoadResult> LoadInto(const std::string& file, Store& store,
                                       bool drop_expired = false) {
  RdbReader reader(file);
  StoreLoadOptions options;
  options.load.drop_expired = drop_expired;
  options.load.now_ms = store.NowMs();
  return LoadRdbIntoStore(reader, options, store);
}

TEST(RdbSnapshotTest, RoundTripsEveryTypeAndDatabase) {
  Store store(StoreOptions{.shard_count = 64});
  Fill(store, 5000);
  absl::StatusOr<std::string> file = Snapshot(store);
  ASSERT_TRUE(file.ok()) << file.status();
  Store loaded(StoreOptions{.shard_count = 16});
  absl::StatusOr<RdbLoadResult> result = LoadInto(*file, loaded);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->keys, 5006u);
  EXPECT_EQ(result->bytes, file->size());
  EXPECT_EQ(Differences(Dump(loaded), Dump(store)), "");
  EXPECT_FALSE(store.capture_in_progress());
}

TEST(RdbSnapshotTest, ChecksumOffWritesZerosAndCompressionOffWritesRawStrings) {
  Store store(StoreOptions{.shard_count = 4});
  store.Set(0, "k", std::string(100, 'a'));
  SnapshotOptions options;
  options.writer.checksum = false;
  options.writer.compress = false;
  absl::StatusOr<std::string> file = Snapshot(store, options);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->substr(file->size() - 8), std::string(8, '\0'));
  EXPECT_THAT(*file, HasSubstr(std::string(100, 'a')));
  Store loaded;
  ASSERT_TRUE(LoadInto(*file, loaded).ok());
  EXPECT_EQ(loaded.Get(0, "k"), std::string(100, 'a'));
}

// The point-in-time property: writers change, delete and add keys in every shard from the moment
// the snapshot begins, while the walk is slowed down; the file holds the dataset as of Begin().
TEST(RdbSnapshotTest, FileHoldsTheDatasetAsOfBeginWhileWritersRun) {
  Store store(StoreOptions{.shard_count = 256});
  Fill(store, 20000);
  const Dataset before = Dump(store);
  RdbSnapshot snapshot(store, {});
  ASSERT_TRUE(snapshot.Begin());
  // Changes right after Begin, before the walk starts: their shards are captured first.
  store.Set(0, "key:0", "changed");
  store.Del(1, "key:1");
  store.Set(0, "new-key", "x");
  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t) {
    writers.emplace_back([&, t] {
      std::mt19937 rng(t);
      while (!stop.load()) {
        const int i = static_cast<int>(rng() % 20000);
        const int db = i % store.databases();
        switch (rng() % 3) {
          case 0:
            store.Set(db, StrCat("key:", i), "overwritten");
            break;
          case 1:
            store.Del(db, StrCat("key:", i));
            break;
          default:
            store.Set(db, StrCat("added:", t, ":", rng()), "new");
        }
        writes.fetch_add(1);
      }
    });
  }
  RecordingSink sink;
  int pieces = 0;
  absl::Status status = snapshot.WriteTo([&](std::string_view bytes) {
    // Slow the walk so that writers overtake it.
    if (++pieces % 2 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    sink.bytes.append(bytes);
    return absl::OkStatus();
  });
  stop.store(true);
  for (std::thread& writer : writers) writer.join();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_GT(writes.load(), 0);
  EXPECT_GT(snapshot.shards_captured_by_clients(), 0u);
  EXPECT_EQ(snapshot.keys_written(), before.size());
  Store loaded(StoreOptions{.shard_count = 16});
  ASSERT_TRUE(LoadInto(sink.bytes, loaded).ok());
  EXPECT_EQ(Differences(Dump(loaded), before), "");
  EXPECT_FALSE(store.capture_in_progress());
  // The live store did change (no writer touches this key).
  EXPECT_EQ(store.Get(0, "new-key"), "x");
  EXPECT_FALSE(loaded.Exists(0, "new-key"));
}

TEST(RdbSnapshotTest, FlushAndSwapDuringTheWalkLeaveTheFileIntact) {
  Store store(StoreOptions{.shard_count = 64});
  Fill(store, 3000);
  const Dataset before = Dump(store);
  RdbSnapshot snapshot(store, {});
  ASSERT_TRUE(snapshot.Begin());
  ASSERT_TRUE(store.SwapDb(0, 1));
  { Store::DetachedTables gone = store.FlushDb(2); }
  RecordingSink sink;
  ASSERT_TRUE(snapshot.WriteTo(sink.AsSink()).ok());
  Store loaded(StoreOptions{.shard_count = 64});
  ASSERT_TRUE(LoadInto(sink.bytes, loaded).ok());
  EXPECT_EQ(Differences(Dump(loaded), before), "");
}

TEST(RdbSnapshotTest, OneCaptureAtATimeAndCancel) {
  Store store(StoreOptions{.shard_count = 8});
  Fill(store, 100);
  RdbSnapshot first(store, {});
  ASSERT_TRUE(first.Begin());
  EXPECT_TRUE(store.capture_in_progress());
  RdbSnapshot second(store, {});
  EXPECT_FALSE(second.Begin());
  first.Cancel();
  RecordingSink sink;
  EXPECT_TRUE(absl::IsCancelled(first.WriteTo(sink.AsSink())));
  EXPECT_FALSE(store.capture_in_progress());
  // Writes after a cancelled capture see no capture.
  store.Set(0, "after", "1");
  RdbSnapshot third(store, {});
  EXPECT_TRUE(third.Begin());
}

TEST(RdbSnapshotTest, DestroyingABegunSnapshotEndsTheCapture) {
  Store store(StoreOptions{.shard_count = 8});
  {
    RdbSnapshot snapshot(store, {});
    ASSERT_TRUE(snapshot.Begin());
  }
  EXPECT_FALSE(store.capture_in_progress());
  store.Set(0, "k", "v");
  EXPECT_EQ(store.Get(0, "k"), "v");
}

TEST(RdbSnapshotTest, SinkErrorsStopTheWalk) {
  Store store(StoreOptions{.shard_count = 8});
  Fill(store, 20000);
  SnapshotOptions options;
  options.flush_bytes = 1024;
  RdbSnapshot snapshot(store, options);
  ASSERT_TRUE(snapshot.Begin());
  int calls = 0;
  absl::Status status = snapshot.WriteTo([&](std::string_view) {
    return ++calls > 3 ? absl::InternalError("disk full") : absl::OkStatus();
  });
  EXPECT_THAT(status.message(), HasSubstr("disk full"));
  EXPECT_FALSE(store.capture_in_progress());
}

TEST(RdbSnapshotTest, LoadDropsExpiredKeysWhenAskedAndKeepsThemOtherwise) {
  Store store(StoreOptions{.shard_count = 4});
  store.Set(0, "live", "1");
  store.Set(0, "dead", "2");
  PutObject(store, 0, "dead-hash", std::make_unique<Hash>(), 0);
  store.WithShardOf("dead", [&](Shard& shard) {
    KeyTable& table = shard.Table(0);
    table.SetExpire(table.Find("dead", store.Hash("dead")), 1000);  // 1970.
  });
  store.Del(0, "dead-hash");
  absl::StatusOr<std::string> file = Snapshot(store);
  ASSERT_TRUE(file.ok());
  Store dropped;
  absl::StatusOr<RdbLoadResult> result = LoadInto(*file, dropped, /*drop_expired=*/true);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->keys, 1u);
  EXPECT_EQ(result->expired_keys, 1u);
  EXPECT_EQ(dropped.DbSize(0), 1u);
  Store kept;
  ASSERT_TRUE(LoadInto(*file, kept, /*drop_expired=*/false).ok());
  EXPECT_EQ(kept.DbSize(0), 2u);  // The expired key is there, and reads as missing.
  EXPECT_FALSE(kept.Get(0, "dead").has_value());
}

TEST(RdbSnapshotTest, LoadRefusesDuplicateKeys) {
  std::vector<RdbFileEntry> entries = {Entry(4, "twice", ValueKind::kStringRaw, "a"),
                                       Entry(4, "twice", ValueKind::kStringRaw, "b")};
  const std::string file = WriteFile(entries, RdbFileInfo{});
  Store store;
  absl::StatusOr<RdbLoadResult> result = LoadInto(file, store);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("Duplicate key \"twice\" found in DB 4"));
  EXPECT_THAT(result.status().message(), HasSubstr("at offset"));
  // The same key in two databases is fine.
  entries[1].db = 5;
  Store other;
  EXPECT_TRUE(LoadInto(WriteFile(entries, RdbFileInfo{}), other).ok());
}

}  // namespace
}  // namespace gigakv::persistence::rdb
