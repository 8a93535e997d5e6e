// Request parsing and reply writing throughput.
#include <string>

#include "benchmark/benchmark.h"
#include "protocol/reply_builder.h"
#include "protocol/request_parser.h"

namespace gigakv::protocol {
namespace {

std::string PipelinedSets(int count) {
  std::string input;
  for (int i = 0; i < count; ++i) {
    input += "*3\r\n$3\r\nSET\r\n$10\r\nkey:000001\r\n$10\r\nvalue:0001\r\n";
  }
  return input;
}

void BM_ParseMultibulkPipeline(benchmark::State& state) {
  std::string input = PipelinedSets(100);
  RequestParser parser;
  for (auto _ : state) {
    std::string_view rest = input;
    while (!rest.empty()) {
      RequestParser::Result result = parser.Feed(rest);
      benchmark::DoNotOptimize(parser.args().data());
      if (result != RequestParser::Result::kCommand) break;
      rest.remove_prefix(parser.consumed());
    }
  }
  state.SetItemsProcessed(state.iterations() * 100);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(input.size()));
}
BENCHMARK(BM_ParseMultibulkPipeline);

void BM_ParseInline(benchmark::State& state) {
  std::string input = "SET key:000001 \"value with spaces\"\r\n";
  RequestParser parser;
  for (auto _ : state) {
    parser.Feed(input);
    benchmark::DoNotOptimize(parser.args().data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseInline);

void BM_WriteReplies(benchmark::State& state) {
  ReplyBuilder builder(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    builder.buffer().clear();
    for (int i = 0; i < 100; ++i) {
      builder.Ok();
      builder.Bulk("value:0001");
      builder.Integer(i);
      builder.Null();
      builder.Double(1.5);
    }
    benchmark::DoNotOptimize(builder.buffer().data());
  }
  state.SetItemsProcessed(state.iterations() * 500);
}
BENCHMARK(BM_WriteReplies)->Arg(2)->Arg(3);

// The replies of a pipeline of GETs of small values, and of INCRs: bulk strings and integers.
void BM_WriteBulkAndIntegerReplies(benchmark::State& state) {
  ReplyBuilder builder(2);
  for (auto _ : state) {
    builder.buffer().clear();
    for (int i = 0; i < 100; ++i) {
      builder.Bulk("value:0001");
      builder.Integer(1000000 + i);
    }
    benchmark::DoNotOptimize(builder.buffer().data());
  }
  state.SetItemsProcessed(state.iterations() * 200);
}
BENCHMARK(BM_WriteBulkAndIntegerReplies);

}  // namespace
}  // namespace gigakv::protocol
