// The embeddable store API with 1M keys of 10-byte keys and 10-byte values: Set, Get, and Get
// from several threads (the figure to compare with rotom's 0.9M set/s, 3.9M get/s, 7.2M get/s).
#include <cstdio>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "gigakv/store.h"

namespace gigakv {
namespace {

constexpr int kKeys = 1'000'000;

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
  Store store;
  const auto& keys = Keys();
  size_t i = 0;
  for (auto _ : state) {
    store.Set(0, keys[i], "value:0001");
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StoreSet)->Iterations(kKeys);

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

}  // namespace
}  // namespace gigakv
