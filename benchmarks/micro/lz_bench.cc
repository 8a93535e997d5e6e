// The list node codec (core/types/lz.h) on one 8 KiB listpack node of 12-byte entries
// ("m:00000042" as listpack entries), the node size and data of benchmarks/memory.sh's list
// workload: how long compressing a full node (once per node's worth of pushes) and decoding one
// (a read of a compressed middle node) take.
#include <cstdio>
#include <string>

#include "benchmark/benchmark.h"
#include "core/types/lz.h"

namespace gigakv {
namespace {

std::string NodeBytes() {
  std::string node;
  char buffer[32];
  for (int i = 0; node.size() + 12 <= 8184; ++i) {
    int n = std::snprintf(buffer, sizeof(buffer), "\x8am:%08d\x0b", i);
    node.append(buffer, static_cast<size_t>(n));
  }
  return node;
}

void BM_LzCompressNode(benchmark::State& state) {
  const std::string node = NodeBytes();
  std::string block;
  for (auto _ : state) {
    benchmark::DoNotOptimize(LzCompress(node, &block));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * node.size()));
  state.counters["ratio"] = static_cast<double>(block.size()) / static_cast<double>(node.size());
}
BENCHMARK(BM_LzCompressNode);

void BM_LzDecompressNode(benchmark::State& state) {
  const std::string node = NodeBytes();
  std::string block;
  LzCompress(node, &block);
  std::string out(node.size(), '\0');
  for (auto _ : state) {
    benchmark::DoNotOptimize(LzDecompress(block, out.data(), out.size()));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * node.size()));
}
BENCHMARK(BM_LzDecompressNode);

}  // namespace
}  // namespace gigakv
