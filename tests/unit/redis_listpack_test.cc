// Redis's listpack as RDB values carry it: golden bytes from redis-server 7.0, every encoding
// round trip, and the validator's refusals.
#include "persistence/rdb/redis_listpack.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/escaping.h"

namespace gigakv::persistence::rdb {
namespace {

std::vector<std::string> Entries(std::string_view listpack, absl::Status* status) {
  std::vector<std::string> out;
  *status = ForEachRedisListpackEntry(listpack, [&](const ListpackEntry& entry) {
    out.push_back(entry.ToString());
    return absl::OkStatus();
  });
  return out;
}

std::string RepeatHex(std::string_view hex, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out.append(hex);
  return out;
}

// HSET h a 1 bbb -5000 c 3000000000 d <60 x> e -4096 f 4095 g 70000 n -9000000000 on
// redis-server 7.0.15, DUMP h with rdbcompression no: the listpack inside the HASH_LISTPACK
// value (after the type byte and its 2-byte length).
const std::string kRedisHashListpackHex =
    "84000000100081610201018362626204f178ec03816302f4005ed0b20000000009816402bc" +
    RepeatHex("78", 60) + "3d816502d00002816602cfff02816702f270110104816e02f400e68ee7fdffffff09ff";

const std::vector<std::string> kHashEntries = {
    "a", "1",     "bbb", "-5000", "c", "3000000000", "d", std::string(60, 'x'),
    "e", "-4096", "f",   "4095",  "g", "70000",      "n", "-9000000000"};

TEST(RedisListpackTest, BuildsRedisBytes) {
  std::string out = "prefix";
  RedisListpackBuilder builder(&out);
  for (const std::string& entry : kHashEntries) builder.Add(entry);
  builder.Finish();
  EXPECT_EQ(absl::BytesToHexString(out.substr(6)), kRedisHashListpackHex);
  EXPECT_EQ(out.substr(0, 6), "prefix");
  EXPECT_EQ(builder.count(), 16u);
}

TEST(RedisListpackTest, ReadsRedisBytes) {
  const std::string bytes = absl::HexStringToBytes(kRedisHashListpackHex);
  absl::Status status;
  EXPECT_EQ(Entries(bytes, &status), kHashEntries);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(RedisListpackTest, EveryEncodingRoundTrips) {
  std::vector<std::string> values = {"",
                                     "0",
                                     "127",
                                     "128",
                                     "-1",
                                     "-4096",
                                     "4095",
                                     "4096",
                                     "-32768",
                                     "32767",
                                     "-8388608",
                                     "8388607",
                                     "2147483647",
                                     "-2147483648",
                                     "9223372036854775807",
                                     "-9223372036854775808",
                                     "9223372036854775808",
                                     "007",
                                     "+1",
                                     "-0",
                                     std::string(63, 'a'),
                                     std::string(64, 'b'),
                                     std::string(4095, 'c'),
                                     std::string(4096, 'd'),
                                     std::string(20000, 'e'),
                                     std::string(3000000, 'f')};
  std::string out;
  RedisListpackBuilder builder(&out);
  for (const std::string& value : values) builder.Add(value);
  builder.Finish();
  absl::Status status;
  EXPECT_EQ(Entries(out, &status), values);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(RedisListpackTest, CountOverflowIsUnknown) {
  std::string out;
  RedisListpackBuilder builder(&out);
  for (int i = 0; i < 70000; ++i) builder.AddInteger(i);
  builder.Finish();
  EXPECT_EQ(static_cast<uint8_t>(out[4]), 0xff);
  EXPECT_EQ(static_cast<uint8_t>(out[5]), 0xff);
  absl::Status status;
  EXPECT_EQ(Entries(out, &status).size(), 70000u);
  EXPECT_TRUE(status.ok());
}

TEST(RedisListpackTest, RefusesCorruption) {
  const std::string good = absl::HexStringToBytes(kRedisHashListpackHex);
  absl::Status status;
  // Every truncation, and every single-byte change of the header, the terminator or a backlen.
  for (size_t size = 0; size < good.size(); ++size) {
    Entries(std::string_view(good).substr(0, size), &status);
    EXPECT_FALSE(status.ok()) << size;
  }
  auto corrupted = [&](size_t at, char byte) {
    std::string bad = good;
    bad[at] = byte;
    Entries(bad, &status);
    return !status.ok();
  };
  EXPECT_TRUE(corrupted(0, 0x7f));                     // Total bytes.
  EXPECT_TRUE(corrupted(4, 15));                       // Count.
  EXPECT_TRUE(corrupted(good.size() - 1, 0));          // Terminator.
  EXPECT_TRUE(corrupted(8, 0x03));                     // "a"'s backlen.
  EXPECT_TRUE(corrupted(6, static_cast<char>(0xF5)));  // Unknown encoding.
  EXPECT_TRUE(corrupted(6, static_cast<char>(0xBF)));  // A string longer than the listpack.
  // A callback's error stops the walk.
  int seen = 0;
  status = ForEachRedisListpackEntry(good, [&](const ListpackEntry&) {
    return ++seen == 3 ? absl::InvalidArgumentError("stop") : absl::OkStatus();
  });
  EXPECT_EQ(status.message(), "stop");
  EXPECT_EQ(seen, 3);
}

}  // namespace
}  // namespace gigakv::persistence::rdb
