#include "gigakv/store.h"

#include <algorithm>
#include <set>
#include <thread>

#include "core/types/quicklist.h"
#include "gigakv/access_stamp.h"
#include "gtest/gtest.h"

namespace gigakv {
namespace {

StoreOptions TestOptions(ManualClock* clock, uint32_t shards) {
  StoreOptions options;
  options.shard_count = shards;
  options.clock = clock;
  return options;
}

class StoreTest : public ::testing::Test {
 protected:
  StoreOptions Options() {
    StoreOptions options;
    options.shard_count = 16;
    options.clock = &clock_;
    return options;
  }
  ManualClock clock_;
};

TEST_F(StoreTest, SetGetDel) {
  Store store(Options());
  EXPECT_FALSE(store.Get(0, "k").has_value());
  store.Set(0, "k", "v");
  EXPECT_EQ(store.Get(0, "k"), "v");
  EXPECT_FALSE(store.Get(1, "k").has_value());  // Databases are separate.
  EXPECT_TRUE(store.Del(0, "k"));
  EXPECT_FALSE(store.Del(0, "k"));
}

TEST_F(StoreTest, LazyExpiryWithInjectedClock) {
  Store store(Options());
  std::vector<std::string> removed;
  store.set_removal_listener(
      [&](int, std::string_view key, RemovalCause) { removed.emplace_back(key); });
  store.Set(0, "k", "v", /*ttl_ms=*/1000);
  EXPECT_EQ(store.PttlMs(0, "k"), 1000);
  clock_.AdvanceMs(999);
  EXPECT_EQ(store.Get(0, "k"), "v");
  clock_.AdvanceMs(1);
  EXPECT_FALSE(store.Get(0, "k").has_value());
  EXPECT_EQ(store.expired_keys(), 1u);
  EXPECT_EQ(removed, std::vector<std::string>{"k"});
  EXPECT_EQ(store.PttlMs(0, "k"), -2);
}

TEST_F(StoreTest, ActiveExpiryRemovesUntouchedKeys) {
  Store store(Options());
  for (int i = 0; i < 1000; ++i) {
    store.Set(0, "k" + std::to_string(i), "v", i % 2 == 0 ? 100 : 0);
  }
  EXPECT_EQ(store.ExpiresCount(0), 500u);
  clock_.AdvanceMs(100);
  size_t removed = 0;
  for (int round = 0; round < 100 && store.DbSize(0) > 500; ++round) {
    removed += store.ActiveExpireCycle(100);  // Small budget: many bounded steps.
  }
  EXPECT_EQ(removed, 500u);
  EXPECT_EQ(store.DbSize(0), 500u);
  EXPECT_EQ(store.ExpiresCount(0), 0u);
}

// A pass that finds no TTL anywhere lets later ticks skip the walk; every way of giving a key a
// TTL afterwards (SET with TTL, EXPIRE, SWAPDB-ed and other databases) must be seen again.
TEST_F(StoreTest, ActiveExpiryFindsTtlsSetAfterAnIdlePass) {
  Store store(Options());
  for (int i = 0; i < 100; ++i) store.Set(0, "plain" + std::to_string(i), "v");
  EXPECT_EQ(store.ActiveExpireCycle(1000), 0u);  // Nothing has a TTL.
  EXPECT_EQ(store.ActiveExpireCycle(1000), 0u);
  EXPECT_EQ(store.SampleExpired(20).sampled, 0);

  store.Set(3, "soon", "v", /*ttl_ms=*/10);
  ASSERT_TRUE(store.Expire(0, "plain7", 10));
  clock_.AdvanceMs(10);
  EXPECT_EQ(store.SampleExpired(20).expired, 2);
  EXPECT_EQ(store.ActiveExpireCycle(1000), 2u);
  EXPECT_EQ(store.DbSize(3), 0u);
  EXPECT_EQ(store.DbSize(0), 99u);

  EXPECT_EQ(store.ActiveExpireCycle(1000), 0u);  // Idle again.
  ASSERT_TRUE(store.Expire(0, "plain8", 5));
  clock_.AdvanceMs(5);
  EXPECT_EQ(store.ActiveExpireCycle(1000), 1u);
  EXPECT_EQ(store.DbSize(0), 98u);
}

// Stores a list of `length` elements at `key` (no TTL) through the shard API, as the server does.
void PutList(Store& store, const std::string& key, int length) {
  auto list = std::make_unique<List>();
  for (int i = 0; i < length; ++i) list->Push(ListEnd::kTail, "e" + std::to_string(i));
  ValueSpec spec;
  spec.kind = ValueKind::kObject;
  spec.object = list.release();
  store.WithShardOf(key,
                    [&](Shard& shard) { shard.Table(0).Put(key, store.Hash(key), spec, 0, 0); });
}

TEST_F(StoreTest, ExpiredLargeCollectionsGoToTheReclaimer) {
  Store store(Options());
  std::vector<size_t> reclaimed;
  store.set_object_reclaimer(
      [&](std::unique_ptr<Object> object) { reclaimed.push_back(object->Length()); });
  PutList(store, "small", static_cast<int>(Store::kLargeObjectElements));
  PutList(store, "large", static_cast<int>(Store::kLargeObjectElements) + 1);
  ASSERT_TRUE(store.Expire(0, "small", 10));
  ASSERT_TRUE(store.Expire(0, "large", 10));
  clock_.AdvanceMs(10);
  EXPECT_EQ(store.ActiveExpireCycle(100), 2u);
  // Only the collection above the threshold is handed over; the small one was freed in place.
  EXPECT_EQ(reclaimed, (std::vector<size_t>{Store::kLargeObjectElements + 1}));
  EXPECT_EQ(store.DbSize(0), 0u);
  EXPECT_EQ(store.expired_keys(), 2u);
}

TEST_F(StoreTest, PersistAndExpireZero) {
  Store store(Options());
  store.Set(0, "k", "v", 1000);
  EXPECT_TRUE(store.Expire(0, "k", 5000));
  EXPECT_EQ(store.PttlMs(0, "k"), 5000);
  EXPECT_TRUE(store.Expire(0, "k", 0));  // A non-positive TTL deletes, as EXPIRE k 0 does.
  EXPECT_FALSE(store.Exists(0, "k"));
}

TEST_F(StoreTest, ScanSeesEveryKeyOnce) {
  Store store(Options());
  for (int i = 0; i < 2000; ++i) store.Set(3, "key:" + std::to_string(i), "v");
  std::multiset<std::string> seen;
  uint64_t cursor = 0;
  int steps = 0;
  do {
    std::vector<std::string> keys;
    cursor = store.Scan(3, cursor, 10, &keys);
    seen.insert(keys.begin(), keys.end());
    ASSERT_LT(++steps, 10000);
  } while (cursor != 0);
  EXPECT_EQ(seen.size(), 2000u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 2000u);
}

TEST_F(StoreTest, ScanSkipsExpiredKeysAndRemovesOnlyThoseItIsToldTo) {
  Store store(Options());
  for (int i = 0; i < 40; ++i) {
    store.Set(0, (i % 2 ? "odd:" : "even:") + std::to_string(i), "v", /*ttl_ms=*/i < 20 ? 10 : 0);
  }
  clock_.AdvanceMs(10);  // The first 20 keys are expired now, but still stored.
  ASSERT_EQ(store.DbSize(0), 40u);
  std::vector<std::string> returned;
  uint64_t cursor = 0;
  do {
    cursor = store.Scan(0, cursor, 7, &returned, nullptr,
                        [](std::string_view key) { return key.starts_with("even:"); });
  } while (cursor != 0);
  EXPECT_EQ(returned.size(), 20u);  // Only the live keys.
  EXPECT_EQ(store.DbSize(0), 30u);  // The 10 expired odd keys stay until something looks.
  EXPECT_EQ(store.expired_keys(), 10u);
}

TEST_F(StoreTest, HashTagsShareAShard) {
  Store store(Options());
  EXPECT_EQ(store.ShardIndex("{user1000}.following"), store.ShardIndex("{user1000}.followers"));
}

TEST_F(StoreTest, SwapDbAndFlush) {
  Store store(Options());
  store.Set(0, "a", "0");
  store.Set(1, "b", "1");
  EXPECT_TRUE(store.SwapDb(0, 1));
  EXPECT_EQ(store.Get(0, "b"), "1");
  EXPECT_EQ(store.Get(1, "a"), "0");
  EXPECT_FALSE(store.SwapDb(0, 16));
  EXPECT_EQ(store.FlushDb(0).size(), 1u);  // One shard held db 0's only key.
  EXPECT_EQ(store.DbSize(0), 0u);
  EXPECT_EQ(store.DbSize(1), 1u);
  EXPECT_FALSE(store.FlushAll().empty());
  EXPECT_EQ(store.DbSize(1), 0u);
}

TEST_F(StoreTest, ConcurrentWritersOnAllShards) {
  Store store(Options());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&store, t] {
      for (int i = 0; i < 5000; ++i)
        store.Set(0, "t" + std::to_string(t) + ":" + std::to_string(i), "v");
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(store.DbSize(0), 20000u);
}

TEST(MakeStringSpecTest, ChoosesRedisEncodings) {
  ValueSpec spec;
  MakeStringSpec("12345", false, &spec);
  EXPECT_EQ(spec.kind, ValueKind::kStringInt);
  MakeStringSpec("012", false, &spec);
  EXPECT_EQ(spec.kind, ValueKind::kStringEmbstr);
  MakeStringSpec(std::string(44, 'a'), false, &spec);
  EXPECT_EQ(spec.kind, ValueKind::kStringEmbstr);
  MakeStringSpec(std::string(45, 'a'), false, &spec);
  EXPECT_EQ(spec.kind, ValueKind::kStringRaw);
  MakeStringSpec(std::string(5000, 'a'), false, &spec);
  EXPECT_EQ(spec.kind, ValueKind::kStringExternal);
  delete spec.external;
}

}  // namespace
}  // namespace gigakv

namespace gigakv {
namespace {

TEST(StoreEvictionTest, LruPicksTheLongestIdleAmongSamples) {
  ManualClock clock;
  StoreOptions options = TestOptions(&clock, 16);
  Store store(options);
  int64_t now = clock.NowMs();
  // One key per shard (found by trying names), so a pass over the shards samples every key.
  std::vector<std::string> keys(options.shard_count);
  for (int i = 0; std::any_of(keys.begin(), keys.end(), [](auto& k) { return k.empty(); }); ++i) {
    std::string key = "k" + std::to_string(i);
    std::string& slot = keys[store.ShardIndex(key)];
    if (slot.empty()) slot = key;
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    uint64_t hash = store.Hash(keys[i]);
    store.WithShardOf(keys[i], [&](Shard& shard) {
      ValueSpec spec;
      MakeStringSpec("v", false, &spec);
      // keys[5] was last used an hour ago; the others just now.
      int64_t stamp_time = i == 5 ? now - 3'600'000 : now;
      shard.Table(0).Put(keys[i], hash, spec, 0, NewAccessStamp(AccessMode::kLru, stamp_time));
    });
  }
  std::vector<std::string> evicted;
  store.set_removal_listener([&](int, std::string_view key, RemovalCause cause) {
    if (cause == RemovalCause::kEvicted) evicted.emplace_back(key);
  });
  EXPECT_GT(store.EvictOne(Store::EvictionPolicy::kAllKeysLru, 16, now), 0u);
  EXPECT_EQ(evicted, std::vector<std::string>{keys[5]});
  EXPECT_EQ(store.evicted_keys(), 1u);
}

TEST(StoreEvictionTest, VolatilePoliciesSpareKeysWithoutTtl) {
  ManualClock clock;
  StoreOptions options = TestOptions(&clock, 16);
  Store store(options);
  for (int i = 0; i < 50; ++i) {
    store.Set(0, "persistent" + std::to_string(i), "v");
    store.Set(0, "volatile" + std::to_string(i), "v", /*ttl_ms=*/1000 + i);
  }
  size_t evicted = 0;
  while (store.EvictOne(Store::EvictionPolicy::kVolatileTtl, 5, clock.NowMs()) > 0) {
    ASSERT_LT(++evicted, 1000u);
  }
  EXPECT_EQ(evicted, 50u);
  EXPECT_EQ(store.DbSize(0), 50u);
  EXPECT_EQ(store.ExpiresCount(0), 0u);
  EXPECT_EQ(store.EvictOne(Store::EvictionPolicy::kNoEviction, 5, clock.NowMs()), 0u);
}

}  // namespace
}  // namespace gigakv

namespace gigakv {
namespace {

// A key past its deadline leaves within one active-expiry pass, however many other keys have
// TTLs: the pass only looks at deadlines that are due.
TEST(StoreActiveExpiryTest, DueKeyGoesInOnePassAmongManyVolatileKeys) {
  ManualClock clock;
  StoreOptions options = TestOptions(&clock, 64);
  Store store(options);
  for (int i = 0; i < 100'000; ++i) store.Set(0, "k" + std::to_string(i), "v", 1'000'000 + i);
  store.Set(0, "soon", "v", 100);
  clock.AdvanceMs(100);
  EXPECT_EQ(store.ActiveExpireCycle(/*budget=*/1000), 1u);
  EXPECT_EQ(store.DbSize(0), 100'000u);
  EXPECT_FALSE(store.Exists(0, "soon"));
}

}  // namespace
}  // namespace gigakv

namespace gigakv {
namespace {

TEST(StoreAverageTtlTest, AveragesRemainingTtls) {
  ManualClock clock;
  StoreOptions options = TestOptions(&clock, 4);
  Store store(options);
  EXPECT_EQ(store.AverageTtlMs(0), 0);
  store.Set(0, "a", "v", 1000);
  store.Set(0, "b", "v", 3000);
  store.Set(0, "c", "v");  // No TTL: not counted.
  EXPECT_EQ(store.AverageTtlMs(0), 2000);
  clock.AdvanceMs(500);
  EXPECT_EQ(store.AverageTtlMs(0), 1500);
}

}  // namespace
}  // namespace gigakv
