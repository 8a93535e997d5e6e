// The embeddable store API with 1M keys of 10-byte keys and 10-byte values: Set, Get, and Get
// from several threads (the figure to compare with rotom's 0.9M set/s, 3.9M get/s, 7.2M get/s),
// each next to an absl::flat_hash_map<std::string, std::string> doing the same work in the same
// run (BM_Map*): the map is the floor a plain in-process table sets, without the store's locks,
// TTL, databases, types or compact records. Goal: Get within 1.5x of the map's time, Set faster.
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "benchmark/benchmark.h"
#include "gigakv/store.h"

namespace gigakv {
namespace {

constexpr int kKeys = 1'000'000;

// Resident set size of this process in bytes (Linux), for the bytes-per-key counters.
double ResidentBytes() {
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

// RSS growth per key over a whole Set run; only for a benchmark's first run, because later runs
// (--benchmark_repetitions) refill memory that the allocator kept from the first.
// `measured` is the benchmark's own flag.
void RecordResidentGrowth(benchmark::State& state, double resident_before, bool* measured) {
  if (std::exchange(*measured, true)) return;
  state.counters["rss_bytes_per_key"] =
      (ResidentBytes() - resident_before) / static_cast<double>(kKeys);
}

std::vector<std::string> MakeKeys() {
  std::vector<std::string> keys;
  keys.reserve(kKeys);
  char buf[16];
  for (int i = 0; i < kKeys; ++i) {
    std::snprintf(buf, sizeof(buf), "key:%06d", i);
    keys.emplace_back(buf);
  }
  return keys;
}

const std::vector<std::string>& Keys() {
  static const std::vector<std::string> keys = MakeKeys();
  return keys;
}

Store& LoadedStore() {
  static Store* store = [] {
    auto* s = new Store();
    for (const std::string& key : Keys()) s->Set(0, key, "value:0001");
    return s;
  }();
  return *store;
}

void BM_StoreSet(benchmark::State& state) {
  const auto& keys = Keys();
  const double resident_before = ResidentBytes();
  Store store;
  size_t i = 0;
  for (auto _ : state) {
    store.Set(0, keys[i], "value:0001");
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  static bool measured = false;
  RecordResidentGrowth(state, resident_before, &measured);
}
BENCHMARK(BM_StoreSet)->Iterations(kKeys);

// How much of a Get is the shard lock: the same lookup without it (one thread, so safe here).
void BM_StoreGetUnlocked(benchmark::State& state) {
  Store& store = LoadedStore();
  const auto& keys = Keys();
  size_t i = 0;
  for (auto _ : state) {
    const std::string& key = keys[i];
    uint64_t hash = store.Hash(key);
    Shard& shard = store.shard(store.ShardIndex(key));
    KeyTable& table = shard.Table(0);
    KeyTable::Slot slot = table.Find(key, hash);
    std::optional<std::string> value;
    if (slot != KeyTable::kNoSlot) value.emplace(table.View(slot).str);
    benchmark::DoNotOptimize(value);
    i += 7919;
    if (i >= keys.size()) i -= keys.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StoreGetUnlocked);

using Map = absl::flat_hash_map<std::string, std::string>;

void BM_MapSet(benchmark::State& state) {
  const auto& keys = Keys();
  const double resident_before = ResidentBytes();
  Map map;
  size_t i = 0;
  for (auto _ : state) {
    map.insert_or_assign(keys[i], "value:0001");
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  static bool measured = false;
  RecordResidentGrowth(state, resident_before, &measured);
}
BENCHMARK(BM_MapSet)->Iterations(kKeys);

const Map& LoadedMap() {
  static const Map* map = [] {
    auto* m = new Map();
    for (const std::string& key : Keys()) m->insert_or_assign(key, "value:0001");
    return m;
  }();
  return *map;
}

// The same contract as Store::Get: a copy of the value, or nullopt.
std::optional<std::string> MapGet(const Map& map, const std::string& key) {
  auto it = map.find(key);
  if (it == map.end()) return std::nullopt;
  return it->second;
}

void BM_StoreGet(benchmark::State& state) {
  Store& store = LoadedStore();
  const auto& keys = Keys();
  // Each thread walks the keys from its own offset, with a stride that defeats prefetching.
  size_t i = static_cast<size_t>(state.thread_index()) * 7919;
  for (auto _ : state) {
    auto value = store.Get(0, keys[i]);
    benchmark::DoNotOptimize(value);
    i += 7919;
    if (i >= keys.size()) i -= keys.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StoreGet)->Threads(1)->Threads(2)->Threads(8)->UseRealTime();

// A const flat_hash_map may be read from several threads at once.
void BM_MapGet(benchmark::State& state) {
  const Map& map = LoadedMap();
  const auto& keys = Keys();
  size_t i = static_cast<size_t>(state.thread_index()) * 7919;
  for (auto _ : state) {
    auto value = MapGet(map, keys[i]);
    benchmark::DoNotOptimize(value);
    i += 7919;
    if (i >= keys.size()) i -= keys.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MapGet)->Threads(1)->Threads(2)->UseRealTime();

// rotom's access pattern: keys read back in the order they were written (each thread from its own
// slice of the key range), so the records are visited in arena order and the hardware prefetcher
// helps. The strided BM_StoreGet above is the harder, cache-missing case. Two threads is one per
// core on a 2-core machine; eight oversubscribes it.
void BM_StoreGetInOrder(benchmark::State& state) {
  Store& store = LoadedStore();
  const auto& keys = Keys();
  const size_t slice = keys.size() / static_cast<size_t>(state.threads());
  const size_t begin = static_cast<size_t>(state.thread_index()) * slice;
  size_t i = begin;
  for (auto _ : state) {
    auto value = store.Get(0, keys[i]);
    benchmark::DoNotOptimize(value);
    if (++i == begin + slice) i = begin;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StoreGetInOrder)->Threads(1)->Threads(2)->Threads(8)->UseRealTime();

void BM_MapGetInOrder(benchmark::State& state) {
  const Map& map = LoadedMap();
  const auto& keys = Keys();
  const size_t slice = keys.size() / static_cast<size_t>(state.threads());
  const size_t begin = static_cast<size_t>(state.thread_index()) * slice;
  size_t i = begin;
  for (auto _ : state) {
    auto value = MapGet(map, keys[i]);
    benchmark::DoNotOptimize(value);
    if (++i == begin + slice) i = begin;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MapGetInOrder)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
}  // namespace gigakv
