// The log's record codec (persistence/log/log_record.h): golden bytes of each record kind, round
// trips, and a catalogue of damaged payloads, each an error naming the byte, never a crash.
#include "persistence/log/log_record.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gigakv::persistence::log {
namespace {

using Args = std::vector<std::string_view>;

std::string EffectRecord(int db, const Args& args) {
  std::string out;
  AppendEffectRecord(db, args, &out);
  return out;
}

TEST(LogRecordTest, EffectGoldenBytes) {
  EXPECT_EQ(EffectRecord(0, {"SET", "k", "v"}), std::string("\x01\x00\x03\x03SET\x01k\x01v", 11));
  EXPECT_EQ(EffectRecord(15, {"DEL", ""}), std::string("\x01\x0f\x02\x03"
                                                       "DEL\x00",
                                                       8));
  // A 200-byte argument: its length takes two varint bytes.
  const std::string value(200, 'x');
  EXPECT_EQ(EffectRecord(1, {"SET", "k", value}),
            std::string("\x01\x01\x03\x03SET\x01k\xc8\x01", 11) + value);
}

TEST(LogRecordTest, TimestampGoldenBytes) {
  std::string out;
  AppendTimestampRecord(1700000000, &out);
  EXPECT_EQ(out, std::string("\x03\x80\xe2\xcf\xaa\x06", 6));
}

TEST(LogRecordTest, EffectRoundTrip) {
  const std::string binary("a\0b\r\n", 5);
  const std::string record = EffectRecord(7, {"HSET", binary, "", "f"});
  DecodedRecord decoded;
  ASSERT_TRUE(DecodeRecord(record, &decoded).ok());
  EXPECT_EQ(decoded.kind, RecordKind::kEffect);
  ASSERT_EQ(decoded.effect_count, 1u);
  EXPECT_EQ(decoded.effects[0].db, 7u);
  EXPECT_EQ(decoded.effects[0].args, (Args{"HSET", binary, "", "f"}));
}

TEST(LogRecordTest, TransactionRoundTrip) {
  std::string record(1, static_cast<char>(RecordKind::kTransaction));
  const Args first = {"INCR", "counter"};
  const Args second = {"PEXPIREAT", "counter", "1700000000000"};
  for (const Args* args : {&first, &second}) {
    const size_t start = record.size();
    record.resize(start + EncodedEffectSize(3, *args));
    char* end = EncodeEffect(record.data() + start, 3, *args);
    ASSERT_EQ(end, record.data() + record.size());
  }
  DecodedRecord decoded;
  ASSERT_TRUE(DecodeRecord(record, &decoded).ok());
  EXPECT_EQ(decoded.kind, RecordKind::kTransaction);
  ASSERT_EQ(decoded.effect_count, 2u);
  EXPECT_EQ(decoded.effects_view()[0].args, first);
  EXPECT_EQ(decoded.effects_view()[1].args, second);
  // Reusing the record for a shorter one keeps only the new effects visible.
  ASSERT_TRUE(DecodeRecord(EffectRecord(0, {"DEL", "x"}), &decoded).ok());
  EXPECT_EQ(decoded.effect_count, 1u);
  EXPECT_EQ(decoded.effects_view().size(), 1u);
}

TEST(LogRecordTest, TimestampRoundTrip) {
  std::string out;
  AppendTimestampRecord(UINT64_MAX, &out);
  DecodedRecord decoded;
  ASSERT_TRUE(DecodeRecord(out, &decoded).ok());
  EXPECT_EQ(decoded.kind, RecordKind::kTimestamp);
  EXPECT_EQ(decoded.unix_seconds, UINT64_MAX);
}

TEST(LogRecordTest, DamagedPayloads) {
  struct Case {
    std::string payload;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"", "bad log record: empty"},
      {"\x09", "bad log record: unknown kind 9"},
      {std::string("\x01", 1), "bad log record at payload byte 1: truncated varint"},
      {std::string("\x01\x00", 2), "bad log record at payload byte 2: truncated varint"},
      {std::string("\x01\x00\x00", 3),
       "bad log record at payload byte 3: effect without a command"},
      {std::string("\x01\x00\x05\x01x", 5),
       "bad log record at payload byte 5: effect has fewer arguments than its count"},
      {std::string("\x01\x00\x01\x05SE", 6),
       "bad log record at payload byte 3: argument of 5 bytes runs past the record"},
      {std::string("\x01\x00\x01\x03SETx", 8),
       "bad log record at payload byte 7: bytes after the end of the record"},
      {std::string("\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02\x01\x01x", 14),
       "bad log record at payload byte 1: varint overflows 64 bits"},
      {std::string("\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 12),
       "bad log record at payload byte 1: varint overflows 64 bits"},
      {std::string("\x02", 1), "bad log record at payload byte 1: truncated varint"},
      {std::string("\x02\x00\x01\x01x\x00", 6),
       "bad log record at payload byte 6: truncated varint"},
      {std::string("\x03", 1), "bad log record at payload byte 1: truncated varint"},
      {std::string("\x03\x01\x02", 3),
       "bad log record at payload byte 2: bytes after the end of the record"},
  };
  for (const Case& c : cases) {
    DecodedRecord decoded;
    absl::Status status = DecodeRecord(c.payload, &decoded);
    EXPECT_TRUE(absl::IsDataLoss(status)) << testing::PrintToString(c.payload);
    EXPECT_EQ(status.message(), c.error) << testing::PrintToString(c.payload);
  }
}

TEST(LogRecordTest, EveryTruncationIsAnError) {
  const std::string record = EffectRecord(2, {"SET", "key", "value", "PXAT", "1700000000000"});
  DecodedRecord decoded;
  for (size_t size = 0; size < record.size(); ++size) {
    EXPECT_FALSE(DecodeRecord(record.substr(0, size), &decoded).ok()) << size;
  }
  EXPECT_TRUE(DecodeRecord(record, &decoded).ok());
}

}  // namespace
}  // namespace gigakv::persistence::log
