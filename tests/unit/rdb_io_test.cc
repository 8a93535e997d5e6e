// The RDB byte layer: golden bytes from redis-server 7.0 (DUMP payloads of strings), round trips
// of every length and string encoding, and the reader's refusals of malformed input.
#include "persistence/rdb/rdb_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "persistence/rdb/rdb_format.h"

namespace gigakv::persistence::rdb {
namespace {

using ::testing::HasSubstr;

using namespace std::literals;

// A writer whose sink appends to `out`.
RdbWriter WriterInto(std::string* out, bool compress = true, size_t flush_bytes = 64 * 1024) {
  return RdbWriter(
      [out](std::string_view bytes) {
        out->append(bytes);
        return absl::OkStatus();
      },
      RdbWriter::Options{compress, true}, flush_bytes);
}

// DUMP's payload of a string value, written by gigakv.
std::string DumpString(std::string_view value) {
  std::string out;
  RdbWriter writer = WriterInto(&out);
  writer.WriteByte(kTypeString);
  writer.WriteString(value);
  EXPECT_TRUE(writer.FinishPayload().ok());
  return out;
}

TEST(Crc64Test, PublishedCheckValue) {
  EXPECT_EQ(Crc64(0, "123456789"), 0xe9c6d914c4b8d9caull);
  EXPECT_EQ(Crc64(0, ""), 0u);
  // Extending is the same as one pass, at every split (the 8-byte steps and the byte tail).
  std::string data;
  for (int i = 0; i < 100; ++i) data.push_back(static_cast<char>(i * 37));
  for (size_t split = 0; split <= data.size(); ++split) {
    EXPECT_EQ(Crc64(Crc64(0, std::string_view(data).substr(0, split)),
                    std::string_view(data).substr(split)),
              Crc64(0, data));
  }
}

// `redis-cli --no-raw DUMP k` on redis-server 7.0.15 after SET k <value>.
TEST(RdbWriterTest, StringPayloadsMatchRedis) {
  EXPECT_EQ(DumpString("hello"), std::string("\x00\x05hello\n\x00"
                                             "cr\xdfve4 \n"sv));
  EXPECT_EQ(DumpString("123"), std::string("\x00\xc0{\n\x00H\xe2S\xe1\x00zg\xb9"sv));
  EXPECT_EQ(DumpString("-200"), std::string("\x00\xc1"
                                            "8\xff\n\x00\";\x8f\xbb\xe8\xf4"
                                            "a\xf3"sv));
  EXPECT_EQ(DumpString("70000"), std::string("\x00\xc2p\x11\x01\x00\n\x00\x01\xa4\b\xfe\x95"
                                             "0\x95\xa5"sv));
  EXPECT_EQ(DumpString("12345678901"), std::string("\x00\x0b"
                                                   "12345678901\n\x00"
                                                   "0NR\xd7'\x17"
                                                   "e\x10"sv));
  EXPECT_EQ(DumpString(std::string(100, 'a')), std::string("\x00\xc3\t@d\x01"
                                                           "aa\xe0W\x00\x01"
                                                           "aa\n\x00\xe8\xa3\xb5\a\xb0m\xf2q"sv));
}

TEST(RdbWriterTest, IntegerEncodingOnlyForCanonicalInt32Text) {
  auto encoded = [](std::string_view value) {
    std::string out;
    RdbWriter writer = WriterInto(&out);
    writer.WriteString(value);
    EXPECT_TRUE(writer.Flush().ok());
    return out;
  };
  EXPECT_EQ(encoded("0"), std::string("\xc0\x00"sv));
  EXPECT_EQ(encoded("-128"), std::string("\xc0\x80"sv));
  EXPECT_EQ(encoded("128"), std::string("\xc1\x80\x00"sv));
  EXPECT_EQ(encoded("2147483647"), std::string("\xc2\xff\xff\xff\x7f"sv));
  EXPECT_EQ(encoded("2147483648"), std::string("\x0a"
                                               "2147483648"sv));  // Over int32: text.
  EXPECT_EQ(encoded("007"), std::string("\x03"
                                        "007"sv));  // Not canonical: text.
  EXPECT_EQ(encoded("+7"), std::string("\x02+7"sv));
  EXPECT_EQ(encoded("-0"), std::string("\x02-0"sv));
}

TEST(RdbWriterTest, LengthEncodings) {
  const std::pair<uint64_t, std::string> cases[] = {
      {0, std::string("\x00"sv)},
      {63, std::string("\x3f"sv)},
      {64, std::string("\x40\x40"sv)},
      {16383, std::string("\x7f\xff"sv)},
      {16384, std::string("\x80\x00\x00\x40\x00"sv)},
      {0xffffffffull, std::string("\x80\xff\xff\xff\xff"sv)},
      {0x100000000ull, std::string("\x81\x00\x00\x00\x01\x00\x00\x00\x00"sv)},
  };
  for (const auto& [length, bytes] : cases) {
    std::string out;
    RdbWriter writer = WriterInto(&out);
    writer.WriteLength(length);
    ASSERT_TRUE(writer.Flush().ok());
    EXPECT_EQ(out, bytes) << length;
    RdbReader reader(out);
    absl::StatusOr<uint64_t> read = reader.ReadLength();
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(*read, length);
  }
}

TEST(RdbIoTest, StringsRoundTripThroughASmallSource) {
  std::mt19937_64 random(7);
  std::vector<std::string> values = {"",
                                     "0",
                                     "-1",
                                     "127",
                                     "-32768",
                                     "2147483647",
                                     "x",
                                     std::string(100000, 'z'),
                                     std::string(1 << 20, '\0')};
  for (int i = 0; i < 200; ++i) {
    std::string value(random() % 3000, '\0');
    for (char& c : value) c = static_cast<char>(random() % (i % 2 == 0 ? 4 : 256));
    values.push_back(value);
  }
  std::string file;
  RdbWriter writer = WriterInto(&file, /*compress=*/true, /*flush_bytes=*/100);
  writer.WriteHeader();
  for (const std::string& value : values) {
    writer.WriteString(value);
    ASSERT_TRUE(writer.MaybeFlush().ok());
  }
  writer.WriteBinaryDouble(-0.5);
  writer.WriteMillis(1700000000123);
  ASSERT_TRUE(writer.Finish().ok());
  EXPECT_EQ(writer.bytes_written(), file.size());
  EXPECT_LT(file.size(), 1000000u);  // The long runs were compressed.

  // Read back through a source that hands out 7 bytes at a time.
  size_t at = 0;
  RdbReader reader([&](char* buffer, size_t capacity) -> absl::StatusOr<size_t> {
    size_t n = std::min<size_t>({capacity, 7, file.size() - at});
    std::memcpy(buffer, file.data() + at, n);
    at += n;
    return n;
  });
  absl::StatusOr<int> version = reader.ReadHeader();
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(*version, 10);
  for (const std::string& value : values) {
    std::string read;
    ASSERT_TRUE(reader.ReadString(&read).ok());
    ASSERT_EQ(read, value);
  }
  EXPECT_EQ(*reader.ReadBinaryDouble(), -0.5);
  EXPECT_EQ(*reader.ReadMillis(), 1700000000123);
  EXPECT_EQ(*reader.ReadByte(), kOpEof);
  EXPECT_TRUE(reader.ReadChecksum().ok());
  EXPECT_EQ(reader.offset(), file.size());
}

TEST(RdbReaderTest, ChecksumMismatchAndZeroChecksum) {
  std::string file;
  RdbWriter writer = WriterInto(&file);
  writer.WriteHeader();
  writer.WriteAux("redis-ver", "7.0.15");
  ASSERT_TRUE(writer.Finish().ok());

  std::string flipped = file;
  flipped[12] ^= 1;  // Inside the AUX key.
  RdbReader bad(flipped);
  ASSERT_TRUE(bad.ReadHeader().ok());
  std::string text;
  ASSERT_TRUE(bad.ReadByte().ok());
  ASSERT_TRUE(bad.ReadString(&text).ok());
  ASSERT_TRUE(bad.ReadString(&text).ok());
  ASSERT_TRUE(bad.ReadByte().ok());
  absl::Status status = bad.ReadChecksum();
  EXPECT_THAT(status.message(), HasSubstr("wrong RDB checksum at offset"));

  std::string unchecked;
  RdbWriter no_checksum(
      [&](std::string_view bytes) {
        unchecked.append(bytes);
        return absl::OkStatus();
      },
      RdbWriter::Options{true, false});
  no_checksum.WriteHeader();
  ASSERT_TRUE(no_checksum.Finish().ok());
  EXPECT_EQ(unchecked, std::string("REDIS0010\xff\0\0\0\0\0\0\0\0"sv));
  RdbReader reader(unchecked);
  ASSERT_TRUE(reader.ReadHeader().ok());
  ASSERT_TRUE(reader.ReadByte().ok());
  EXPECT_TRUE(reader.ReadChecksum().ok());
}

TEST(RdbReaderTest, RefusesMalformedInput) {
  auto read_string = [](std::string_view bytes) {
    RdbReader reader(bytes);
    std::string out;
    return reader.ReadString(&out);
  };
  // Truncated raw string, truncated 14-bit length, truncated integers.
  EXPECT_THAT(read_string("\x05hel").message(), HasSubstr("unexpected end of input at offset"));
  EXPECT_FALSE(read_string("\x40").ok());
  EXPECT_FALSE(read_string("\xc1\x01").ok());
  // A length far beyond the input costs nothing and fails.
  EXPECT_FALSE(read_string("\x80\x7f\xff\xff\xff"
                           "abc")
                   .ok());
  EXPECT_THAT(read_string("\x81\x00\x00\x00\x10\x00\x00\x00\x00"sv).message(),
              HasSubstr("over the limit"));
  // Unknown encodings.
  EXPECT_THAT(read_string("\xc4").message(), HasSubstr("unknown string encoding"));
  EXPECT_THAT(read_string("\x82").message(), HasSubstr("unknown length encoding"));
  // LZF: impossible expansion, zero lengths, garbage data, wrong original length.
  EXPECT_THAT(read_string("\xc3\x01\x80\x00\x10\x00\x00"
                          "a"sv)
                  .message(),
              HasSubstr("invalid LZF lengths"));
  EXPECT_FALSE(read_string("\xc3\x00\x00"sv).ok());
  EXPECT_THAT(read_string("\xc3\x03\x0a\xff\xff\xff").message(), HasSubstr("invalid LZF data"));
  std::string good = DumpString(std::string(100, 'a')).substr(1);  // 0xc3 9 100 data...
  good[3] = 99;  // The original length (14-bit form, its second byte) one short.
  EXPECT_THAT(read_string(good).message(), HasSubstr("invalid LZF data"));
  // An encoded byte where a plain length belongs.
  RdbReader reader("\xc0");
  EXPECT_FALSE(reader.ReadLength().ok());
}

TEST(RdbReaderTest, HeaderChecks) {
  EXPECT_FALSE(RdbReader("REDIS00").ReadHeader().ok());
  EXPECT_THAT(RdbReader("RODIS0010").ReadHeader().status().message(), HasSubstr("signature"));
  EXPECT_THAT(RdbReader("REDIS0011").ReadHeader().status().message(),
              HasSubstr("can't handle RDB format version 11"));
  EXPECT_FALSE(RdbReader("REDIS0000").ReadHeader().ok());
  EXPECT_EQ(*RdbReader("REDIS0003").ReadHeader(), 3);  // Redis 7.0 reads every version from 1.
  EXPECT_FALSE(RdbReader("REDIS00x9").ReadHeader().ok());
  EXPECT_EQ(*RdbReader("REDIS0009").ReadHeader(), 9);
}

TEST(RdbReaderTest, TextDoubles) {
  RdbReader reader(
      std::string_view("\xfd\xfe\xff\x03"
                       "1.5\x02"
                       "1x",
                       10));
  EXPECT_TRUE(std::isnan(*reader.ReadTextDouble()));
  EXPECT_EQ(*reader.ReadTextDouble(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(*reader.ReadTextDouble(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(*reader.ReadTextDouble(), 1.5);
  EXPECT_FALSE(reader.ReadTextDouble().ok());
}

TEST(DumpPayloadTest, VerifiesVersionAndChecksum) {
  std::string payload = DumpString("hello");
  std::string_view value;
  ASSERT_TRUE(VerifyDumpPayload(payload, &value).ok());
  EXPECT_EQ(value, std::string("\x00\x05hello"sv));
  std::string corrupt = payload;
  corrupt[3] ^= 0x20;
  EXPECT_EQ(VerifyDumpPayload(corrupt, &value).message(),
            "DUMP payload version or checksum are wrong");
  std::string newer = payload;
  newer[payload.size() - 10] = 11;  // Version 11: refused before the CRC is looked at.
  EXPECT_FALSE(VerifyDumpPayload(newer, &value).ok());
  EXPECT_FALSE(VerifyDumpPayload("short", &value).ok());
}

}  // namespace
}  // namespace gigakv::persistence::rdb
