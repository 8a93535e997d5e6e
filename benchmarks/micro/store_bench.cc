// The embeddable store API with 1M keys of 10-byte keys and 10-byte values: Set, Get, and Get
// from several threads (the figure to compare with rotom's 0.9M set/s, 3.9M get/s, 7.2M get/s),
// each next to an absl::flat_hash_map<std::string, std::string> doing the same work in the same
// run (BM_Map*): the map is the floor a plain in-process table sets, without the store's locks,
// TTL, databases, types or compact records. Goal: Get within 1.5x of the map's time, Set faster.
#include <unistd.h>

#include <cstdio>
#include <memory>
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

// The three access patterns, shared by the store and the map benchmarks.

// 1M distinct keys set into a table made here by make_table(); `measured` is the benchmark's own
// flag: RSS growth per key is reported for its first run only, because later runs
// (--benchmark_repetitions) refill memory that the allocator kept from the first.
template <typename MakeTable, typename SetFn>
void RunSets(benchmark::State& state, bool* measured, MakeTable make_table, SetFn set) {
  const auto& keys = Keys();
  const double resident_before = ResidentBytes();
  auto table = make_table();
  size_t i = 0;
  for (auto _ : state) {
    set(*table, keys[i]);
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  if (!std::exchange(*measured, true)) {
    state.counters["rss_bytes_per_key"] =
        (ResidentBytes() - resident_before) / static_cast<double>(kKeys);
  }
}

// Each thread walks the keys from its own offset, with a stride that defeats prefetching.
template <typename GetFn>
void RunStridedGets(benchmark::State& state, GetFn get) {
  const auto& keys = Keys();
  size_t i = static_cast<size_t>(state.thread_index()) * 7919;
  for (auto _ : state) {
    auto value = get(keys[i]);
    benchmark::DoNotOptimize(value);
    i += 7919;
    if (i >= keys.size()) i -= keys.size();
  }
  state.SetItemsProcessed(state.iterations());
}

// rotom's access pattern: keys read back in the order they were written (each thread from its own
// slice of the key range), so the records are visited in arena order and the hardware prefetcher
// helps. The strided pattern is the harder, cache-missing case. Two threads is one per core on a
// 2-core machine; eight oversubscribes it.
template <typename GetFn>
void RunInOrderGets(benchmark::State& state, GetFn get) {
  const auto& keys = Keys();
  const size_t slice = keys.size() / static_cast<size_t>(state.threads());
  const size_t begin = static_cast<size_t>(state.thread_index()) * slice;
  size_t i = begin;
  for (auto _ : state) {
    auto value = get(keys[i]);
    benchmark::DoNotOptimize(value);
    if (++i == begin + slice) i = begin;
  }
  state.SetItemsProcessed(state.iterations());
}

// --- The store ---------------------------------------------------------------------------------

Store& LoadedStore() {
  static Store* store = [] {
    auto* s = new Store();
    for (const std::string& key : Keys()) s->Set(0, key, "value:0001");
    return s;
  }();
  return *store;
}

void BM_StoreSet(benchmark::State& state) {
  static bool measured = false;
  RunSets(
      state, &measured, [] { return std::make_unique<Store>(); },
      [](Store& store, const std::string& key) { store.Set(0, key, "value:0001"); });
}
BENCHMARK(BM_StoreSet)->Iterations(kKeys);

void BM_StoreGet(benchmark::State& state) {
  Store& store = LoadedStore();
  RunStridedGets(state, [&](const std::string& key) { return store.Get(0, key); });
}
BENCHMARK(BM_StoreGet)->Threads(1)->Threads(2)->Threads(8)->UseRealTime();

// How much of a Get is the shard lock: the same lookup without it (one thread, so safe here).
void BM_StoreGetUnlocked(benchmark::State& state) {
  Store& store = LoadedStore();
  RunStridedGets(state, [&](const std::string& key) {
    KeyTable& table = store.shard(store.ShardIndex(key)).Table(0);
    KeyTable::Slot slot = table.Find(key, store.Hash(key));
    std::optional<std::string> value;
    if (slot != KeyTable::kNoSlot) value.emplace(table.View(slot).str);
    return value;
  });
}
BENCHMARK(BM_StoreGetUnlocked);

void BM_StoreGetInOrder(benchmark::State& state) {
  Store& store = LoadedStore();
  RunInOrderGets(state, [&](const std::string& key) { return store.Get(0, key); });
}
BENCHMARK(BM_StoreGetInOrder)->Threads(1)->Threads(2)->Threads(8)->UseRealTime();

// --- The map -----------------------------------------------------------------------------------

using Map = absl::flat_hash_map<std::string, std::string>;

const Map& LoadedMap() {
  static const Map* map = [] {
    auto* m = new Map();
    for (const std::string& key : Keys()) m->insert_or_assign(key, "value:0001");
    return m;
  }();
  return *map;
}

// The same contract as Store::Get: a copy of the value, or nullopt. A const flat_hash_map may be
// read from several threads at once.
std::optional<std::string> MapGet(const std::string& key) {
  const Map& map = LoadedMap();
  auto it = map.find(key);
  if (it == map.end()) return std::nullopt;
  return it->second;
}

void BM_MapSet(benchmark::State& state) {
  static bool measured = false;
  RunSets(
      state, &measured, [] { return std::make_unique<Map>(); },
      [](Map& map, const std::string& key) { map.insert_or_assign(key, "value:0001"); });
}
BENCHMARK(BM_MapSet)->Iterations(kKeys);

void BM_MapGet(benchmark::State& state) {
  LoadedMap();
  RunStridedGets(state, MapGet);
}
BENCHMARK(BM_MapGet)->Threads(1)->Threads(2)->UseRealTime();

void BM_MapGetInOrder(benchmark::State& state) {
  LoadedMap();
  RunInOrderGets(state, MapGet);
}
BENCHMARK(BM_MapGetInOrder)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace
}  // namespace gigakv
