// KeyTable against a std::map model, with a fixed seed; collisions forced with weak hashes.
#include "gigakv/key_table.h"

#include <map>
#include <memory>
#include <new>
#include <random>
#include <set>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/hash/hash.h"
#include "gtest/gtest.h"

namespace gigakv {
namespace {

using HashFn = uint64_t (*)(std::string_view);

uint64_t StrongHash(std::string_view key) { return absl::HashOf(key); }
// Every key collides: same fingerprint, same home slot.
uint64_t ConstantHash(std::string_view) { return 0x1234567800000000ULL; }
// 16 distinct fingerprints: long clusters and many equal fingerprints.
uint64_t TinyHash(std::string_view key) { return (absl::HashOf(key) & 0xf) << 60; }

struct ModelValue {
  std::string value;
  int64_t expire_ms;
  ValueKind kind = ValueKind::kStringRaw;
};

class KeyTableModelTest : public ::testing::TestWithParam<HashFn> {
 protected:
  uint64_t Hash(std::string_view key) { return GetParam()(key); }

  void CheckAgainstModel() {
    ASSERT_EQ(table_.size(), model_.size());
    size_t expires = 0;
    for (const auto& [key, expected] : model_) {
      KeyTable::Slot slot = table_.Find(key, Hash(key));
      ASSERT_NE(slot, KeyTable::kNoSlot) << key;
      RecordView view = table_.View(slot);
      EXPECT_EQ(view.key, key);
      EXPECT_EQ(view.str, expected.value) << key;
      EXPECT_EQ(view.expire_ms, expected.expire_ms) << key;
      EXPECT_EQ(view.kind, expected.kind) << key;
      if (expected.expire_ms > 0) ++expires;
    }
    EXPECT_EQ(table_.expires_count(), expires);
  }

  KeyTable table_;
  std::map<std::string, ModelValue> model_;
};

std::string RandomValue(std::mt19937_64& rng) {
  size_t length = std::uniform_int_distribution<size_t>(0, 100)(rng);
  if (rng() % 50 == 0) length = 5000;  // Past the inline limit: an external value.
  std::string value(length, 'x');
  for (char& c : value) c = static_cast<char>('a' + rng() % 26);
  return value;
}

TEST_P(KeyTableModelTest, RandomOperationsMatchModel) {
  std::mt19937_64 rng(42);
  const int key_space = GetParam() == ConstantHash ? 200 : 3000;
  for (int step = 0; step < 60000; ++step) {
    std::string key = "key:" + std::to_string(rng() % key_space);
    uint64_t hash = Hash(key);
    int op = static_cast<int>(rng() % 10);
    if (op < 5) {
      std::string value = RandomValue(rng);
      ValueSpec spec;
      std::string* external = nullptr;
      if (value.size() > 4096) {
        external = new std::string(value);
        spec.kind = ValueKind::kStringExternal;
        spec.external = external;
      } else {
        // Inline strings and inline collections (opaque bytes to the table) alike.
        static constexpr ValueKind kInlineKinds[] = {
            ValueKind::kStringRaw,    ValueKind::kInlineHash, ValueKind::kInlineSet,
            ValueKind::kInlineIntset, ValueKind::kInlineZSet,
        };
        spec.kind = kInlineKinds[rng() % 5];
        spec.bytes = value;
      }
      int64_t expire = rng() % 3 == 0 ? 1000 + static_cast<int64_t>(rng() % 1000) : 0;
      table_.Put(key, hash, spec, expire, 0);
      model_[key] = {value, expire, spec.kind};
    } else if (op < 8) {
      KeyTable::Slot slot = table_.Find(key, hash);
      ASSERT_EQ(slot != KeyTable::kNoSlot, model_.count(key) == 1) << key;
      if (slot != KeyTable::kNoSlot) {
        table_.Erase(slot);
        model_.erase(key);
      }
    } else {
      KeyTable::Slot slot = table_.Find(key, hash);
      if (slot != KeyTable::kNoSlot) {
        int64_t expire = rng() % 2 == 0 ? 0 : 5000 + static_cast<int64_t>(rng() % 100);
        table_.SetExpire(slot, expire);
        model_[key].expire_ms = expire;
      }
    }
    if (step % 5000 == 0) CheckAgainstModel();
  }
  CheckAgainstModel();
  // Holes are bounded: compaction keeps dead bytes under a quarter of the arena (plus slack).
  EXPECT_LE(table_.dead_bytes(), table_.arena_bytes() / 4 + 4096);
}

INSTANTIATE_TEST_SUITE_P(Hashes, KeyTableModelTest,
                         ::testing::Values(&StrongHash, &ConstantHash, &TinyHash),
                         [](const ::testing::TestParamInfo<HashFn>& info) {
                           return info.param == &StrongHash     ? "StrongHash"
                                  : info.param == &ConstantHash ? "ConstantHash"
                                                                : "TinyHash";
                         });

TEST(KeyTableTest, KeysWithEqualHashNeverAlias) {
  KeyTable table;
  ValueSpec a{ValueKind::kStringRaw, "A"};
  ValueSpec b{ValueKind::kStringRaw, "B"};
  table.Put("first", ConstantHash("first"), a, 0, 0);
  table.Put("second", ConstantHash("second"), b, 0, 0);
  EXPECT_EQ(table.View(table.Find("first", ConstantHash("first"))).str, "A");
  EXPECT_EQ(table.View(table.Find("second", ConstantHash("second"))).str, "B");
  EXPECT_EQ(table.Find("third", ConstantHash("third")), KeyTable::kNoSlot);
}

TEST(KeyTableTest, OverwriteInPlaceWhenItFits) {
  KeyTable table;
  uint64_t hash = StrongHash("k");
  ValueSpec big{ValueKind::kStringRaw, "0123456789"};
  ValueSpec small{ValueKind::kStringRaw, "abc"};
  table.Put("k", hash, big, 0, 0);
  size_t used = table.arena_bytes();
  table.Put("k", hash, small, 0, 0);
  EXPECT_EQ(table.arena_bytes(), used);  // Rewritten in place, no append.
  EXPECT_EQ(table.dead_bytes(), 7u);
  EXPECT_EQ(table.View(table.Find("k", hash)).str, "abc");
}

// The `unshared` flag (a COPY's duplicate of a small integer) stays with the record through TTL
// changes that rebuild it, Release and compaction, and goes with any new value.
TEST(KeyTableTest, UnsharedFlagFollowsTheRecordUntilTheValueIsWritten) {
  KeyTable table;
  auto put = [&](const std::string& key, std::string_view value, bool unshared) {
    ValueSpec spec{ValueKind::kStringInt, value};
    spec.unshared = unshared;
    table.Put(key, StrongHash(key), spec, 0, 0);
  };
  auto unshared = [&](const std::string& key) {
    return table.View(table.Find(key, StrongHash(key))).unshared;
  };
  put("copy", "5", true);
  put("plain", "5", false);
  EXPECT_TRUE(unshared("copy"));
  EXPECT_FALSE(unshared("plain"));
  KeyTable::Slot slot = table.Find("copy", StrongHash("copy"));
  table.SetExpire(slot, 123456);  // Grows the record: rebuilt elsewhere.
  EXPECT_TRUE(unshared("copy"));
  table.SetExpire(table.Find("copy", StrongHash("copy")), 0);
  EXPECT_TRUE(unshared("copy"));
  ValueSpec released;
  std::string bytes;
  table.Release(table.Find("copy", StrongHash("copy")), &released, &bytes);
  EXPECT_TRUE(released.unshared);
  table.Put("moved", StrongHash("moved"), released, 0, 0);
  EXPECT_TRUE(unshared("moved"));
  // Holes from many deletes force a compaction, which copies records byte for byte.
  for (int i = 0; i < 5000; ++i) put("filler" + std::to_string(i), "12345", false);
  for (int i = 0; i < 5000; ++i) {
    std::string key = "filler" + std::to_string(i);
    table.Erase(table.Find(key, StrongHash(key)));
  }
  EXPECT_LT(table.dead_bytes(), 4096u);  // Compacted (at least once).
  EXPECT_TRUE(unshared("moved"));
  table.OverwriteInline(table.Find("moved", StrongHash("moved")), "6");
  EXPECT_FALSE(unshared("moved"));
  EXPECT_EQ(table.View(table.Find("moved", StrongHash("moved"))).str, "6");
  put("moved", "7", true);
  put("moved", "8", false);  // Overwritten in place by Put.
  EXPECT_FALSE(unshared("moved"));
}

// A collection stand-in that counts its destructions.
class CountedObject final : public Object {
 public:
  CountedObject(size_t length, int* destroyed) : length_(length), destroyed_(destroyed) {}
  ~CountedObject() override { ++*destroyed_; }
  KeyType type() const override { return KeyType::kSet; }
  std::string_view encoding_name() const override { return "hashtable"; }
  size_t MemoryUsage() const override { return sizeof(*this); }
  size_t Length() const override { return length_; }
  Object* Clone() const override { return new CountedObject(length_, destroyed_); }
  void ForEachElement(absl::FunctionRef<void(std::string_view)>) const override {}

 private:
  size_t length_;
  int* destroyed_;
};

// Large collections that a write replaces or Erase removes go to the sink (to be freed off the
// thread); small ones, and everything Clear drops, are freed in place.
TEST(KeyTableTest, LargeObjectsReplacedOrErasedGoToTheSink) {
  int destroyed = 0;
  std::vector<std::unique_ptr<Object>> sunk;
  KeyTable::LargeObjectSink sink = [&](std::unique_ptr<Object> object) {
    sunk.push_back(std::move(object));
  };
  KeyTable table;
  table.set_large_object_sink(&sink);
  auto put_object = [&](const std::string& key, size_t length) {
    ValueSpec spec;
    spec.kind = ValueKind::kObject;
    spec.object = new CountedObject(length, &destroyed);
    table.Put(key, StrongHash(key), spec, 0, 0);
  };
  const size_t large = KeyTable::kLargeObjectElements + 1;
  put_object("big", large);
  put_object("small", KeyTable::kLargeObjectElements);
  table.Put("big", StrongHash("big"), ValueSpec{ValueKind::kStringRaw, "v"}, 0, 0);
  EXPECT_EQ(sunk.size(), 1u);
  EXPECT_EQ(destroyed, 0);
  table.Put("small", StrongHash("small"), ValueSpec{ValueKind::kStringRaw, "v"}, 0, 0);
  EXPECT_EQ(sunk.size(), 1u);
  EXPECT_EQ(destroyed, 1);  // Freed in place.
  put_object("big2", large);
  table.Erase(table.Find("big2", StrongHash("big2")));
  EXPECT_EQ(sunk.size(), 2u);
  EXPECT_EQ(destroyed, 1);
  put_object("big3", large);
  table.Clear();
  EXPECT_EQ(sunk.size(), 2u);
  EXPECT_EQ(destroyed, 2);
  sunk.clear();  // The sink's owner frees them.
  EXPECT_EQ(destroyed, 4);
  // A replacement that asks for it frees in place even a large object (a compact collection's
  // temporary working form going back inline).
  put_object("temp", large);
  table.Put("temp", StrongHash("temp"), ValueSpec{ValueKind::kInlineSet, "bytes"}, 0, 0,
            /*may_defer_free=*/false);
  EXPECT_EQ(sunk.size(), 0u);
  EXPECT_EQ(destroyed, 5);
  // A sink that throws (no memory for its queue): the object is freed in place by the
  // unwinding and the table stays consistent.
  KeyTable::LargeObjectSink throwing = [](std::unique_ptr<Object>) { throw std::bad_alloc(); };
  table.set_large_object_sink(&throwing);
  put_object("big4", large);
  table.Erase(table.Find("big4", StrongHash("big4")));
  EXPECT_EQ(destroyed, 6);
  EXPECT_EQ(table.Find("big4", StrongHash("big4")), KeyTable::kNoSlot);
  put_object("big5", large);
  table.Put("big5", StrongHash("big5"), ValueSpec{ValueKind::kStringRaw, "v"}, 0, 0);
  EXPECT_EQ(destroyed, 7);
  EXPECT_EQ(table.View(table.Find("big5", StrongHash("big5"))).str, "v");
  table.Clear();
  // String values: from a megabyte on, deferred as an Object of type string; smaller ones and
  // Clear() free in place.
  table.set_large_object_sink(&sink);
  auto put_external = [&](const std::string& key, size_t bytes) {
    ValueSpec external;
    external.kind = ValueKind::kStringExternal;
    external.external = new std::string(bytes, 'x');
    table.Put(key, StrongHash(key), external, 0, 0);
  };
  put_external("s1", KeyTable::kLargeStringBytes);
  put_external("s2", KeyTable::kLargeStringBytes - 1);
  const size_t external_bytes = table.MemoryUsage();
  table.Put("s1", StrongHash("s1"), ValueSpec{ValueKind::kStringRaw, "v"}, 0, 0);
  ASSERT_EQ(sunk.size(), 1u);
  EXPECT_EQ(sunk[0]->type(), KeyType::kString);
  EXPECT_EQ(sunk[0]->Length(), 1u);
  EXPECT_LT(table.MemoryUsage(), external_bytes - KeyTable::kLargeStringBytes + 4096);
  table.Erase(table.Find("s2", StrongHash("s2")));
  EXPECT_EQ(sunk.size(), 1u);
  put_external("s3", 2 * KeyTable::kLargeStringBytes);
  table.Erase(table.Find("s3", StrongHash("s3")));
  EXPECT_EQ(sunk.size(), 2u);
  put_external("s4", 2 * KeyTable::kLargeStringBytes);
  table.Clear();
  EXPECT_EQ(sunk.size(), 2u);
  sunk.clear();
  // An empty sink (a store without a reclaimer) frees in place.
  KeyTable::LargeObjectSink none;
  KeyTable plain;
  plain.set_large_object_sink(&none);
  ValueSpec spec;
  spec.kind = ValueKind::kObject;
  spec.object = new CountedObject(large, &destroyed);
  plain.Put("k", StrongHash("k"), spec, 0, 0);
  plain.Erase(plain.Find("k", StrongHash("k")));
  EXPECT_EQ(destroyed, 8);
}

TEST(KeyTableTest, ReleaseHandsOverExternalValue) {
  KeyTable table;
  uint64_t hash = StrongHash("k");
  ValueSpec spec;
  spec.kind = ValueKind::kStringExternal;
  spec.external = new std::string(10000, 'z');
  table.Put("k", hash, spec, 0, 0);
  ValueSpec released;
  std::string copy;
  table.Release(table.Find("k", hash), &released, &copy);
  ASSERT_EQ(released.kind, ValueKind::kStringExternal);
  ASSERT_NE(released.external, nullptr);
  EXPECT_EQ(released.external->size(), 10000u);
  EXPECT_EQ(table.size(), 0u);
  delete released.external;
}

// A stand-in collection for kObject records.
class FakeObject final : public Object {
 public:
  KeyType type() const override { return KeyType::kList; }
  std::string_view encoding_name() const override { return "fake"; }
  size_t MemoryUsage() const override { return 1000; }
  size_t Length() const override { return 1; }
  Object* Clone() const override { return new FakeObject(); }
  void ForEachElement(absl::FunctionRef<void(std::string_view)>) const override {}
};

TEST(KeyTableInlineTest, InlineCollectionsAreNotStringsAndKeepTheirBytes) {
  KeyTable table;
  const std::string blob(40, '\x01');
  const std::pair<ValueKind, KeyType> kinds[] = {{ValueKind::kInlineHash, KeyType::kHash},
                                                 {ValueKind::kInlineSet, KeyType::kSet},
                                                 {ValueKind::kInlineIntset, KeyType::kSet},
                                                 {ValueKind::kInlineZSet, KeyType::kZSet}};
  for (const auto& [kind, type] : kinds) {
    std::string key = "k" + std::to_string(static_cast<int>(kind));
    table.Put(key, StrongHash(key), ValueSpec{kind, blob}, 123456, 7);
    RecordView view = table.View(table.Find(key, StrongHash(key)));
    EXPECT_EQ(view.kind, kind);
    EXPECT_FALSE(view.is_string());
    EXPECT_EQ(view.type(), type);
    EXPECT_EQ(view.str, blob);
    EXPECT_EQ(view.object, nullptr);
    EXPECT_EQ(view.expire_ms, 123456);
    EXPECT_EQ(view.access, 7);
    // The bytes live in the record: MEMORY USAGE is the record plus its index slot.
    EXPECT_EQ(table.RecordMemory(table.Find(key, StrongHash(key))),
              EncodedRecordSize(key, ValueSpec{kind, blob}, true) + sizeof(uint64_t));
  }
  EXPECT_EQ(table.expires_count(), 4u);
  // Strings stay strings, including kinds past the old 3-bit kind field next to the expire bit.
  table.Put("s", StrongHash("s"), ValueSpec{ValueKind::kStringEmbstr, "v"}, 99, 0);
  RecordView string_view = table.View(table.Find("s", StrongHash("s")));
  EXPECT_TRUE(string_view.is_string());
  EXPECT_EQ(string_view.type(), KeyType::kString);
  EXPECT_EQ(string_view.expire_ms, 99);
}

TEST(KeyTableInlineTest, OverwriteReleaseAndExpireKeepInlineBytes) {
  KeyTable table;
  uint64_t hash = StrongHash("h");
  std::string blob = "listpack-bytes-listpack-bytes";
  // An object record turned inline (a command's write-back), then back (a write).
  ValueSpec object_spec;
  object_spec.kind = ValueKind::kObject;
  object_spec.object = new FakeObject();
  table.Put("h", hash, object_spec, 0, 1);
  // The record is the arena's last: it grows in place, leaving no hole.
  table.Put("h", hash, ValueSpec{ValueKind::kInlineHash, blob}, 0, 1);
  EXPECT_EQ(table.dead_bytes(), 0u);
  EXPECT_EQ(table.View(table.Find("h", hash)).str, blob);
  object_spec.object = new FakeObject();
  table.Put("h", hash, object_spec, 0, 1);
  EXPECT_EQ(table.View(table.Find("h", hash)).kind, ValueKind::kObject);
  table.Put("h", hash, ValueSpec{ValueKind::kInlineHash, blob}, 0, 1);
  // Adding and removing an expiry rebuilds the record around the same bytes.
  table.SetExpire(table.Find("h", hash), 5000);
  RecordView view = table.View(table.Find("h", hash));
  EXPECT_EQ(view.kind, ValueKind::kInlineHash);
  EXPECT_EQ(view.str, blob);
  EXPECT_EQ(view.expire_ms, 5000);
  table.SetExpire(table.Find("h", hash), 0);
  EXPECT_EQ(table.View(table.Find("h", hash)).str, blob);
  // Release hands over the kind and a copy of the bytes (RENAME, MOVE).
  ValueSpec released;
  std::string copy;
  table.Release(table.Find("h", hash), &released, &copy);
  EXPECT_EQ(released.kind, ValueKind::kInlineHash);
  EXPECT_EQ(released.bytes, blob);
  EXPECT_EQ(released.object, nullptr);
  EXPECT_EQ(table.size(), 0u);
  table.Put("renamed", StrongHash("renamed"), released, 0, 0);
  EXPECT_EQ(table.View(table.Find("renamed", StrongHash("renamed"))).str, blob);
}

TEST(KeyTableInlineTest, CompactionMovesInlineCollections) {
  KeyTable table;
  auto blob_of = [](int i) { return std::string(20 + i % 50, static_cast<char>('a' + i % 26)); };
  for (int i = 0; i < 3000; ++i) {
    std::string key = "z" + std::to_string(i);
    ValueKind kind = i % 2 == 0 ? ValueKind::kInlineZSet : ValueKind::kInlineIntset;
    table.Put(key, StrongHash(key), ValueSpec{kind, blob_of(i)}, i % 3 == 0 ? 1000 + i : 0, 0);
  }
  // Grow every other record out of place, and delete a third: holes force compactions.
  for (int i = 0; i < 3000; ++i) {
    std::string key = "z" + std::to_string(i);
    if (i % 3 == 1) {
      table.Erase(table.Find(key, StrongHash(key)));
    } else if (i % 2 == 0) {
      table.Put(key, StrongHash(key), ValueSpec{ValueKind::kInlineZSet, blob_of(i) + "grown"},
                i % 3 == 0 ? 1000 + i : 0, 0);
    }
  }
  EXPECT_LE(table.dead_bytes(), table.arena_bytes() / 4 + 4096);
  for (int i = 0; i < 3000; ++i) {
    std::string key = "z" + std::to_string(i);
    KeyTable::Slot slot = table.Find(key, StrongHash(key));
    if (i % 3 == 1) {
      EXPECT_EQ(slot, KeyTable::kNoSlot);
      continue;
    }
    ASSERT_NE(slot, KeyTable::kNoSlot) << key;
    RecordView view = table.View(slot);
    EXPECT_EQ(view.kind, i % 2 == 0 ? ValueKind::kInlineZSet : ValueKind::kInlineIntset);
    EXPECT_EQ(view.str, i % 2 == 0 ? blob_of(i) + "grown" : blob_of(i)) << key;
    EXPECT_EQ(view.expire_ms, i % 3 == 0 ? 1000 + i : 0);
  }
}

// A full scan returns every key present throughout exactly once, even when the table grows
// (and shrinks through deletes of other keys) between steps.
TEST(KeyTableTest, ScanReturnsStableKeysDespiteResizes) {
  for (HashFn hash_fn : {&StrongHash, &TinyHash}) {
    KeyTable table;
    std::set<std::string> stable;
    for (int i = 0; i < 500; ++i) {
      std::string key = "stable:" + std::to_string(i);
      table.Put(key, hash_fn(key), ValueSpec{ValueKind::kStringRaw, "v"}, 0, 0);
      stable.insert(key);
    }
    std::multiset<std::string> seen;
    uint64_t cursor = 0;
    int step = 0;
    int added = 0;
    do {
      std::vector<KeyTable::Slot> slots;
      cursor = table.ScanRange(cursor, 10, &slots);
      for (KeyTable::Slot slot : slots) seen.insert(std::string(table.View(slot).key));
      // Grow the table between steps.
      for (int j = 0; j < 20; ++j, ++added) {
        std::string key = "extra:" + std::to_string(added);
        table.Put(key, hash_fn(key), ValueSpec{ValueKind::kStringRaw, "v"}, 0, 0);
      }
      ASSERT_LT(++step, 100000);
    } while (cursor < KeyTable::kScanEnd);
    for (const std::string& key : stable) {
      EXPECT_EQ(seen.count(key), 1u) << key;
    }
  }
}

}  // namespace
}  // namespace gigakv

namespace gigakv {
namespace {

// Scanning the whole table in one call (and in many small ones) returns each key once, also
// when clusters wrap around the end of the index.
TEST(KeyTableTest, ScanHandlesWrappedClusters) {
  for (size_t count : {size_t{1}, size_t{3}, SIZE_MAX}) {
    KeyTable table;
    // High fingerprints pile up at the end of the index and wrap to its front.
    for (int i = 0; i < 6; ++i) {
      std::string key = "hi:" + std::to_string(i);
      table.Put(key, 0xfffffff000000000ULL + (static_cast<uint64_t>(i) << 32),
                {ValueKind::kStringRaw, "v"}, 0, 0);
    }
    for (int i = 0; i < 20; ++i) {
      std::string key = "lo:" + std::to_string(i);
      table.Put(key, absl::HashOf(key) & 0x0fffffffffffffffULL, {ValueKind::kStringRaw, "v"}, 0, 0);
    }
    std::multiset<std::string> seen;
    uint64_t cursor = 0;
    int steps = 0;
    do {
      std::vector<KeyTable::Slot> slots;
      cursor = table.ScanRange(cursor, count, &slots);
      for (KeyTable::Slot slot : slots) seen.insert(std::string(table.View(slot).key));
      ASSERT_LT(++steps, 1000);
    } while (cursor < KeyTable::kScanEnd);
    EXPECT_EQ(seen.size(), 26u) << "count=" << count;
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 26u) << "count=" << count;
  }
}

}  // namespace
}  // namespace gigakv

namespace gigakv {
namespace {

TEST(KeyTableDeadlinesTest, PopsDueDeadlinesInOrderAndSkipsStaleOnes) {
  KeyTable table;
  auto put = [&](const std::string& key, int64_t expire_ms) {
    table.Put(key, absl::HashOf(key), ValueSpec{ValueKind::kStringRaw, "v"}, expire_ms, 0);
  };
  put("a", 3000);
  put("b", 1000);
  put("c", 2000);
  put("forever", 0);
  // Extending "b" leaves its old entry stale.
  table.SetExpire(table.Find("b", absl::HashOf(std::string("b"))), 5000);
  std::vector<std::string> expired;
  auto drain = [&](int64_t now) {
    uint32_t fingerprint;
    while (table.PopDue(now, &fingerprint)) {
      for (auto slot = table.FindExpired(fingerprint, now); slot != KeyTable::kNoSlot;
           slot = table.FindExpired(fingerprint, now)) {
        expired.emplace_back(table.View(slot).key);
        table.Erase(slot);
      }
    }
  };
  drain(999);
  EXPECT_TRUE(expired.empty());
  drain(2500);  // b's stale 1000 entry is skipped; c is due.
  EXPECT_EQ(expired, std::vector<std::string>{"c"});
  drain(10000);
  EXPECT_EQ(expired, (std::vector<std::string>{"c", "a", "b"}));
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.deadline_entries(), 0u);
}

TEST(KeyTableDeadlinesTest, StaleEntriesStayBounded) {
  KeyTable table;
  std::string key = "k";
  uint64_t hash = absl::HashOf(key);
  table.Put(key, hash, ValueSpec{ValueKind::kStringRaw, "v"}, 1'000'000, 0);
  // Rewriting the TTL a million times must not keep a million heap entries.
  for (int i = 0; i < 100'000; ++i) table.SetExpire(table.Find(key, hash), 2'000'000 + i);
  EXPECT_LE(table.deadline_entries(), 2u * table.expires_count() + 1025);
}

TEST(KeyTableDeadlinesTest, FarDeadlinesBeyondTheOffsetRange) {
  KeyTable table;
  const int64_t day = 86'400'000;
  table.Put("near", absl::HashOf(std::string("near")), ValueSpec{ValueKind::kStringRaw, "v"}, day,
            0);
  table.Put("far", absl::HashOf(std::string("far")), ValueSpec{ValueKind::kStringRaw, "v"},
            400 * day, 0);
  uint32_t fingerprint;
  ASSERT_TRUE(table.PopDue(day, &fingerprint));  // "near".
  table.Erase(table.FindExpired(fingerprint, day));
  EXPECT_FALSE(table.PopDue(100 * day, &fingerprint));  // "far" came up clamped: not due.
  ASSERT_TRUE(table.PopDue(400 * day, &fingerprint));
  EXPECT_NE(table.FindExpired(fingerprint, 400 * day), KeyTable::kNoSlot);
}

}  // namespace
}  // namespace gigakv

namespace gigakv {
namespace {

TEST(KeyTableTest, IndexShrinksAfterMassDeletes) {
  KeyTable table;
  for (int i = 0; i < 20000; ++i) {
    std::string key = "k" + std::to_string(i);
    table.Put(key, absl::HashOf(key), ValueSpec{ValueKind::kStringRaw, "v"}, 0, 0);
  }
  size_t full_capacity = table.capacity();
  for (int i = 0; i < 19000; ++i) {
    std::string key = "k" + std::to_string(i);
    table.Erase(table.Find(key, absl::HashOf(key)));
  }
  EXPECT_LT(table.capacity(), full_capacity / 4);
  for (int i = 19000; i < 20000; ++i) {  // The survivors are all still found.
    std::string key = "k" + std::to_string(i);
    EXPECT_NE(table.Find(key, absl::HashOf(key)), KeyTable::kNoSlot) << key;
  }
}

}  // namespace
}  // namespace gigakv
