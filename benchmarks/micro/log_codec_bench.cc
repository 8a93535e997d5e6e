// The append-only log's record codec (persistence/log/) against Redis's AOF text (RESP, what
// Redis's catAppendOnlyGenericCommand writes, with a SELECT whenever the database changes) on a
// realistic mix of effects: SETs with and without an absolute expiry, HSET, RPUSH, SADD, ZADD,
// DEL, INCRBY-style SETs, keys "key:%08d" over 16 databases. Encoding includes the framing and
// its CRC32C for the codec; decoding is LogReader + DecodeRecord vs the server's RESP parser.
// Counters: bytes per record; the time per iteration is per 10,000 records.
#include <charconv>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "persistence/file_system.h"
#include "persistence/log/log_reader.h"
#include "persistence/log/log_record.h"
#include "persistence/log/log_writer.h"
#include "protocol/request_parser.h"

namespace gigakv {
namespace {

using persistence::log::DecodedRecord;
using persistence::log::LogReader;
using persistence::log::LogWriter;

constexpr int kRecords = 10000;

struct Effect {
  int db;
  std::vector<std::string> args;
};

std::vector<Effect> Mix() {
  std::mt19937 rnd(42);
  std::vector<Effect> effects;
  char key[32];
  for (int i = 0; i < kRecords; ++i) {
    std::snprintf(key, sizeof(key), "key:%08u", static_cast<unsigned>(rnd() % 1000000));
    const int db = rnd() % 10 < 8 ? 0 : static_cast<int>(rnd() % 16);
    const std::string value(3 + rnd() % 97, 'v');
    switch (rnd() % 10) {
      case 0:
      case 1:
      case 2:
        effects.push_back({db, {"SET", key, value}});
        break;
      case 3:
        effects.push_back({db, {"SET", key, value, "PXAT", "1767225600000"}});
        break;
      case 4:
        effects.push_back({db, {"HSET", key, "field:" + std::to_string(rnd() % 100), value}});
        break;
      case 5:
        effects.push_back({db, {"RPUSH", key, value}});
        break;
      case 6:
        effects.push_back({db, {"SADD", key, "member:" + std::to_string(rnd() % 1000)}});
        break;
      case 7:
        effects.push_back(
            {db, {"ZADD", key, std::to_string(rnd() % 100000), "m" + std::to_string(i)}});
        break;
      case 8:
        effects.push_back({db, {"DEL", key}});
        break;
      default:
        effects.push_back({db, {"SET", key, std::to_string(rnd() % 100000)}});
        break;
    }
  }
  return effects;
}

std::vector<std::vector<std::string_view>> Views(const std::vector<Effect>& effects) {
  std::vector<std::vector<std::string_view>> views;
  for (const Effect& e : effects) views.emplace_back(e.args.begin(), e.args.end());
  return views;
}

void EncodeCodec(const std::vector<Effect>& effects,
                 const std::vector<std::vector<std::string_view>>& views, std::string* payload,
                 std::string* file) {
  LogWriter writer;
  writer.AddFileHeader(file);
  for (size_t i = 0; i < effects.size(); ++i) {
    payload->clear();
    persistence::log::AppendEffectRecord(effects[i].db, views[i], payload);
    writer.AddRecord(*payload, file);
  }
}

// As Redis's catAppendOnlyGenericCommand builds it (integers by a fast conversion, as its
// ll2string, not printf).
void AppendResp(const std::vector<std::string_view>& args, std::string* out) {
  char buffer[24];
  auto append_header = [&](char prefix, size_t n) {
    out->push_back(prefix);
    char* end = std::to_chars(buffer, buffer + sizeof(buffer), n).ptr;
    out->append(buffer, static_cast<size_t>(end - buffer));
    out->append("\r\n");
  };
  append_header('*', args.size());
  for (std::string_view arg : args) {
    append_header('$', arg.size());
    out->append(arg);
    out->append("\r\n");
  }
}

void EncodeResp(const std::vector<Effect>& effects,
                const std::vector<std::vector<std::string_view>>& views, std::string* file) {
  int selected = -1;
  for (size_t i = 0; i < effects.size(); ++i) {
    if (effects[i].db != selected) {
      const std::string db = std::to_string(effects[i].db);
      AppendResp({"SELECT", db}, file);
      selected = effects[i].db;
    }
    AppendResp(views[i], file);
  }
}

void BM_EncodeCodec(benchmark::State& state) {
  const std::vector<Effect> effects = Mix();
  const auto views = Views(effects);
  std::string payload, file;
  for (auto _ : state) {
    file.clear();
    EncodeCodec(effects, views, &payload, &file);
    benchmark::DoNotOptimize(file.data());
  }
  state.counters["bytes_per_record"] = static_cast<double>(file.size()) / kRecords;
  state.counters["ns_per_record"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kRecords,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_EncodeCodec);

void BM_EncodeResp(benchmark::State& state) {
  const std::vector<Effect> effects = Mix();
  const auto views = Views(effects);
  std::string file;
  for (auto _ : state) {
    file.clear();
    EncodeResp(effects, views, &file);
    benchmark::DoNotOptimize(file.data());
  }
  state.counters["bytes_per_record"] = static_cast<double>(file.size()) / kRecords;
  state.counters["ns_per_record"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kRecords,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_EncodeResp);

// A SequentialFile over a string.
class StringFile : public persistence::SequentialFile {
 public:
  explicit StringFile(std::string_view data) : data_(data) {}
  absl::StatusOr<size_t> Read(size_t n, char* scratch) override {
    const size_t got = std::min(n, data_.size() - pos_);
    std::memcpy(scratch, data_.data() + pos_, got);
    pos_ += got;
    return got;
  }
  absl::Status Skip(uint64_t n) override {
    pos_ = std::min<size_t>(data_.size(), pos_ + n);
    return absl::OkStatus();
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

void BM_DecodeCodec(benchmark::State& state) {
  const std::vector<Effect> effects = Mix();
  const auto views = Views(effects);
  std::string payload, file;
  EncodeCodec(effects, views, &payload, &file);
  DecodedRecord decoded;
  std::string scratch;
  for (auto _ : state) {
    StringFile source(file);
    LogReader reader(&source);
    std::string_view record;
    size_t args = 0;
    while (reader.ReadRecord(&record, &scratch) == LogReader::Outcome::kRecord) {
      if (!persistence::log::DecodeRecord(record, &decoded).ok()) state.SkipWithError("bad");
      args += decoded.effects[0].args.size();
    }
    benchmark::DoNotOptimize(args);
  }
  state.counters["ns_per_record"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kRecords,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_DecodeCodec);

void BM_DecodeResp(benchmark::State& state) {
  const std::vector<Effect> effects = Mix();
  const auto views = Views(effects);
  std::string file;
  EncodeResp(effects, views, &file);
  for (auto _ : state) {
    protocol::RequestParser parser;
    std::string_view input = file;
    size_t args = 0;
    while (!input.empty()) {
      if (parser.Feed(input) != protocol::RequestParser::Result::kCommand) {
        state.SkipWithError("bad");
        break;
      }
      args += parser.args().size();
      input.remove_prefix(parser.consumed());
    }
    benchmark::DoNotOptimize(args);
  }
  state.counters["ns_per_record"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kRecords,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_DecodeResp);

}  // namespace
}  // namespace gigakv
