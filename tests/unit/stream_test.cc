// Stream (core/types/stream.h): the node bytes against Redis's, and randomized appends, XDEL and
// trims checked against a model.
#include "core/types/stream.h"

#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"

namespace gigakv {
namespace {

namespace lp = redis_listpack;

using Entry = std::vector<std::string>;

std::vector<std::pair<StreamID, Entry>> Collect(const Stream& stream, StreamID start, StreamID end,
                                                bool reverse) {
  std::vector<std::pair<StreamID, Entry>> out;
  stream.Range(start, end, reverse,
               [&](const StreamID& id, absl::Span<const std::string_view> field_values) {
                 out.emplace_back(id, Entry(field_values.begin(), field_values.end()));
                 return true;
               });
  return out;
}

StreamID Add(Stream& stream, StreamID id, std::vector<std::string_view> field_values,
             const StreamNodeLimits& limits = {}) {
  StreamID added;
  EXPECT_EQ(stream.Append(field_values, &id, true, 0, limits, &added), Stream::AppendStatus::kOk);
  return added;
}

TEST(RedisListpackTest, IntegersRoundTripInTheSmallestEncoding) {
  const std::vector<std::pair<int64_t, size_t>> cases = {
      {0, 2},       {127, 2},       {128, 3},       {-1, 3},         {-4096, 3},
      {4095, 3},    {4096, 4},      {-32768, 4},    {32768, 5},      {-8388608, 5},
      {8388608, 6}, {INT32_MIN, 6}, {INT32_MAX, 6}, {INT64_MAX, 10}, {INT64_MIN, 10},
  };
  for (const auto& [value, size] : cases) {
    std::string listpack = lp::New();
    lp::AppendInteger(&listpack, value);
    EXPECT_EQ(listpack.size(), lp::kHeaderSize + size + 1) << value;
    EXPECT_EQ(lp::EntrySize(std::to_string(value)), size) << value;
    ListpackEntry entry = lp::Get(listpack, lp::First(listpack));
    EXPECT_TRUE(entry.is_int);
    EXPECT_EQ(entry.int_value, value);
    EXPECT_EQ(lp::Last(listpack), lp::First(listpack));
  }
}

TEST(RedisListpackTest, StringsWalkBothWays) {
  std::string listpack = lp::New();
  const std::vector<std::string> values = {"",
                                           "a",
                                           std::string(63, 'x'),
                                           std::string(64, 'y'),
                                           std::string(4095, 'z'),
                                           std::string(5000, 'w'),
                                           "-0",
                                           "007",
                                           "12"};
  for (const auto& value : values) lp::AppendString(&listpack, value);
  EXPECT_EQ(lp::TotalBytes(listpack), listpack.size());
  std::vector<std::string> forward, backward;
  for (size_t pos = lp::First(listpack); pos != lp::kEnd; pos = lp::Next(listpack, pos)) {
    forward.push_back(lp::Get(listpack, pos).ToString());
  }
  for (size_t pos = lp::Last(listpack); pos != lp::kEnd; pos = lp::Prev(listpack, pos)) {
    backward.insert(backward.begin(), lp::Get(listpack, pos).ToString());
  }
  EXPECT_EQ(forward, values);
  EXPECT_EQ(backward, values);
  EXPECT_TRUE(lp::Get(listpack, lp::Last(listpack)).is_int);  // "12"
}

// The node redis-server 7.0.15 builds for these four XADDs (its DUMP, rdbcompression no).
TEST(StreamTest, NodeBytesAreRedis) {
  Stream stream;
  Add(stream, {1, 1}, {"a", "1", "b", "hello"});
  Add(stream, {1, 2}, {"a", "2", "b", "x"});
  Add(stream, {2, 0}, {"c", "-5000"});
  Add(stream, {2, 1}, {"a", "123456789012", "b", ""});
  std::vector<std::pair<StreamID, std::string>> nodes;
  stream.ForEachNode([&](const StreamID& id, std::string_view node) {
    nodes.emplace_back(id, std::string(node));
  });
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].first, (StreamID{1, 1}));
  EXPECT_EQ(absl::BytesToHexString(nodes[0].second),
            "590000001f00040100010201816102816202000102010001000101018568656c6c6f06050102010001"
            "01010201817802050100010101dfff020101816302f178ec030601020101010001f4141a99be1c0000"
            "000980010501ff");
  EXPECT_EQ(stream.length(), 4u);
  EXPECT_EQ(stream.first_id(), (StreamID{1, 1}));
  EXPECT_EQ(stream.last_id(), (StreamID{2, 1}));
  EXPECT_EQ(stream.entries_added(), 4u);
  auto entries = Collect(stream, StreamID::Min(), StreamID::Max(), false);
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_THAT(entries[2].second, ::testing::ElementsAre("c", "-5000"));
  EXPECT_THAT(entries[3].second, ::testing::ElementsAre("a", "123456789012", "b", ""));
}

TEST(StreamTest, AutomaticIdsFollowTheClockAndTheLastId) {
  Stream stream;
  StreamID added;
  const StreamNodeLimits limits;
  std::vector<std::string_view> fv = {"f", "v"};
  ASSERT_EQ(stream.Append(fv, nullptr, false, 100, limits, &added), Stream::AppendStatus::kOk);
  EXPECT_EQ(added, (StreamID{100, 0}));
  ASSERT_EQ(stream.Append(fv, nullptr, false, 100, limits, &added), Stream::AppendStatus::kOk);
  EXPECT_EQ(added, (StreamID{100, 1}));
  ASSERT_EQ(stream.Append(fv, nullptr, false, 50, limits, &added), Stream::AppendStatus::kOk);
  EXPECT_EQ(added, (StreamID{100, 2}));  // The clock went back: the last ID's successor.
  StreamID ms_only{100, 0};
  ASSERT_EQ(stream.Append(fv, &ms_only, false, 0, limits, &added), Stream::AppendStatus::kOk);
  EXPECT_EQ(added, (StreamID{100, 3}));  // "100-*"
  StreamID older{99, 7};
  EXPECT_EQ(stream.Append(fv, &older, true, 0, limits, &added),
            Stream::AppendStatus::kIdNotGreater);
  StreamID max = StreamID::Max();
  ASSERT_EQ(stream.Append(fv, &max, true, 0, limits, &added), Stream::AppendStatus::kOk);
  EXPECT_EQ(stream.Append(fv, nullptr, false, 0, limits, &added),
            Stream::AppendStatus::kIdNotGreater);
  StreamID max_ms{UINT64_MAX, 0};
  EXPECT_EQ(stream.Append(fv, &max_ms, false, 0, limits, &added),
            Stream::AppendStatus::kIdNotGreater);
}

// Random appends (IDs with gaps, varying fields), XDELs and trims, against a map. Node limits are
// small so entries spread over many nodes.
TEST(StreamTest, RandomOperationsMatchAModel) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 20; ++round) {
    Stream stream;
    std::map<StreamID, Entry> model;
    const StreamNodeLimits limits{static_cast<int64_t>(rng() % 2 ? 200 : 4096),
                                  static_cast<int64_t>(1 + rng() % 12)};
    StreamID next{1, 0};
    for (int op = 0; op < 400; ++op) {
      const int kind = static_cast<int>(rng() % 10);
      if (kind < 6) {
        next.ms += rng() % 3;
        next.seq = next.ms % 2 ? rng() % 5 : next.seq + 1 + rng() % 3;
        if (!model.empty() && next <= model.rbegin()->first) next = model.rbegin()->first;
        if (next <= stream.last_id()) {
          next = stream.last_id();
          next.Increment();
        }
        Entry entry;
        const int fields = 1 + static_cast<int>(rng() % 3);
        for (int f = 0; f < fields; ++f) {
          entry.push_back(rng() % 4 ? "f" + std::to_string(f) : std::to_string(rng() % 300));
          entry.push_back(rng() % 2 ? std::to_string(static_cast<int64_t>(rng()) >> (rng() % 60))
                                    : std::string(rng() % 20, 'v'));
        }
        std::vector<std::string_view> views(entry.begin(), entry.end());
        Add(stream, next, views, limits);
        model[next] = entry;
      } else if (kind < 8 && !model.empty()) {
        auto it = model.begin();
        std::advance(it, static_cast<long>(rng() % model.size()));
        const StreamID id = it->first;
        EXPECT_TRUE(stream.Delete(id));
        EXPECT_FALSE(stream.Delete(id));
        model.erase(it);
      } else if (kind == 8) {
        StreamTrim trim;
        trim.strategy = StreamTrim::Strategy::kMaxLen;
        trim.maxlen = model.size() > 5 ? model.size() - rng() % 5 : model.size();
        const int64_t removed = stream.Trim(trim);
        EXPECT_EQ(static_cast<uint64_t>(removed), model.size() - trim.maxlen);
        while (model.size() > trim.maxlen) model.erase(model.begin());
      } else if (!model.empty()) {
        StreamTrim trim;
        trim.strategy = StreamTrim::Strategy::kMinId;
        trim.minid = std::next(model.begin(), static_cast<long>(rng() % model.size()))->first;
        stream.Trim(trim);
        model.erase(model.begin(), model.lower_bound(trim.minid));
      }
      ASSERT_EQ(stream.length(), model.size());
      if (model.empty()) {
        EXPECT_EQ(stream.first_id(), StreamID{});
      } else {
        EXPECT_EQ(stream.first_id(), model.begin()->first);
      }
    }
    // Every range, both ways.
    std::vector<std::pair<StreamID, Entry>> expected(model.begin(), model.end());
    EXPECT_EQ(Collect(stream, StreamID::Min(), StreamID::Max(), false), expected);
    std::vector<std::pair<StreamID, Entry>> reversed(expected.rbegin(), expected.rend());
    EXPECT_EQ(Collect(stream, StreamID::Min(), StreamID::Max(), true), reversed);
    for (int q = 0; q < 50 && !expected.empty(); ++q) {
      size_t a = rng() % expected.size(), b = rng() % expected.size();
      if (a > b) std::swap(a, b);
      StreamID start = expected[a].first, end = expected[b].first;
      if (rng() % 2) start.Increment();
      std::vector<std::pair<StreamID, Entry>> want;
      for (const auto& e : expected) {
        if (e.first >= start && e.first <= end) want.push_back(e);
      }
      EXPECT_EQ(Collect(stream, start, end, false), want);
      std::reverse(want.begin(), want.end());
      EXPECT_EQ(Collect(stream, start, end, true), want);
    }
    // A clone is equal and independent.
    std::unique_ptr<Object> clone(stream.Clone());
    EXPECT_EQ(Collect(static_cast<Stream&>(*clone), StreamID::Min(), StreamID::Max(), false),
              expected);
  }
}

TEST(StreamTest, NodesSplitAtTheEntryLimitAndApproxTrimRemovesWholeNodes) {
  Stream stream;
  const StreamNodeLimits limits{4096, 10};
  for (uint64_t i = 1; i <= 95; ++i) Add(stream, {i, 0}, {"f", "v"}, limits);
  EXPECT_EQ(stream.node_count(), 10u);
  StreamTrim trim;
  trim.strategy = StreamTrim::Strategy::kMaxLen;
  trim.approx = true;
  trim.maxlen = 52;
  EXPECT_EQ(stream.Trim(trim), 40);  // Four whole nodes; a fifth would leave fewer than 52.
  EXPECT_EQ(stream.length(), 55u);
  EXPECT_EQ(stream.first_id(), (StreamID{41, 0}));
  trim.approx = false;
  trim.limit = 0;
  EXPECT_EQ(stream.Trim(trim), 3);
  EXPECT_EQ(stream.first_id(), (StreamID{44, 0}));
}

}  // namespace
}  // namespace gigakv
