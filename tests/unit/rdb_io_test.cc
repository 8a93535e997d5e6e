// The RDB byte layer: golden bytes from redis-server 7.0 (DUMP payloads of strings), round trips
// of every length and string encoding, and the reader's refusals of malformed input.
#include "persistence/rdb/rdb_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "persistence/rdb/rdb_format.h"
#include "tests/unit/rdb_test_util.h"

namespace gigakv::persistence::rdb {
namespace {

using ::gigakv::persistence::rdb::testing::RecordingSink;

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
              HasSubstr("unexpected end of input"));
  // Unknown encodings.
  EXPECT_THAT(read_string("\xc4").message(), HasSubstr("unknown string encoding"));
  EXPECT_THAT(read_string("\x82").message(), HasSubstr("unknown length encoding"));
  // LZF: impossible expansion, zero lengths, garbage data, wrong original length.
  EXPECT_THAT(read_string("\xc3\x01\x80\x00\x10\x00\x00"
                          "a"sv)
                  .message(),
              HasSubstr("invalid LZF lengths"));
  EXPECT_THAT(read_string("\xc3\x00\x05"sv).message(), HasSubstr("invalid LZF lengths"));
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

// The DUMP of the integer 10 that redis.io's DUMP page shows: an independent golden.
TEST(RdbWriterTest, DumpOfTenMatchesRedisDocumentation) {
  EXPECT_EQ(DumpString("10"), std::string("\x00\xc0\n\n\x00n\x9fWE\x0e\xae"
                                          "c\xbb"sv));
  std::string_view value;
  ASSERT_TRUE(VerifyDumpPayload("\x00\xc0\n\n\x00n\x9fWE\x0e\xae"
                                "c\xbb"sv,
                                &value)
                  .ok());
  RdbReader reader(value.substr(1));
  std::string read;
  ASSERT_TRUE(reader.ReadString(&read).ok());
  EXPECT_EQ(read, "10");
}

// The string cap is the caller's (the server passes proto-max-bulk-len); by default any length
// is accepted, and a raw string costs only what its bytes turn out to be.
TEST(RdbReaderTest, StringLengthCapIsAnOption) {
  // 600 MiB claimed, 3 bytes present: a truncation, not a refusal of the length.
  const std::string_view big =
      "\x80\x25\x80\x00\x00"
      "abc"sv;
  std::string out;
  EXPECT_THAT(RdbReader(big).ReadString(&out).message(), HasSubstr("unexpected end of input"));
  EXPECT_THAT(RdbReader(big).ReadString(&out, 512ull << 20).message(),
              HasSubstr("string length over the limit at offset 5"));
  // At the cap is fine, one over is not; for LZF the original length counts.
  EXPECT_TRUE(RdbReader("\x03"
                        "abc"sv)
                  .ReadString(&out, 3)
                  .ok());
  EXPECT_THAT(RdbReader("\x03"
                        "abc"sv)
                  .ReadString(&out, 2)
                  .message(),
              HasSubstr("over the limit"));
  const std::string lzf = DumpString(std::string(100, 'a')).substr(1);
  EXPECT_TRUE(RdbReader(lzf).ReadString(&out, 100).ok());
  EXPECT_EQ(out, std::string(100, 'a'));
  EXPECT_THAT(RdbReader(lzf).ReadString(&out, 99).message(), HasSubstr("over the limit"));
}

// liblzf takes unsigned lengths: bigger strings must be written raw, and are refused on read
// before any allocation.
TEST(RdbIoTest, LzfOnlyWithinUnsignedLengths) {
  EXPECT_FALSE(LzfEligible(0));
  EXPECT_FALSE(LzfEligible(20));
  EXPECT_TRUE(LzfEligible(21));
  EXPECT_TRUE(LzfEligible(0xffffffffull));
  EXPECT_FALSE(LzfEligible(0x100000000ull));
  EXPECT_FALSE(LzfEligible(0x100000015ull));  // Truncated to 32 bits it would be 21.

  std::string out;
  // Original length 2^32 + 1 from 50 MB of compressed bytes: within the 88x rule, over liblzf's.
  absl::Status status =
      RdbReader("\xc3\x80\x02\xfa\xf0\x80\x81\x00\x00\x00\x01\x00\x00\x00\x01"sv).ReadString(&out);
  EXPECT_TRUE(absl::IsUnimplemented(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("LZF string of more than 4 GiB"));
  status = RdbReader("\xc3\x81\x00\x00\x00\x01\x00\x00\x00\x00\x05"sv).ReadString(&out);
  EXPECT_TRUE(absl::IsUnimplemented(status)) << status;
}

// Redis reads an LZF string whose original length is 0 as the empty string, whatever its
// compressed bytes (lzf_decompress into no room returns 0, the length expected).
TEST(RdbReaderTest, LzfOfLengthZeroIsEmpty) {
  for (std::string_view bytes : {"\xc3\x00\x00"sv, "\xc3\x02\x00xy"sv}) {
    RdbReader reader(bytes);
    std::string out = "old";
    ASSERT_TRUE(reader.ReadString(&out).ok()) << bytes.size();
    EXPECT_EQ(out, "");
    EXPECT_EQ(reader.offset(), bytes.size());
  }
  std::string out;
  EXPECT_FALSE(RdbReader("\xc3\x02\x00x"sv).ReadString(&out).ok());  // Still reads its bytes.
}

TEST(RdbWriterTest, NoTrailerBeforeVersion5) {
  std::string out;
  RdbWriter writer = WriterInto(&out);
  writer.WriteHeader(4);
  ASSERT_TRUE(writer.Finish().ok());
  EXPECT_EQ(out, std::string("REDIS0004\xff"sv));
  out.clear();
  RdbWriter v5 = WriterInto(&out);
  v5.WriteHeader(5);
  ASSERT_TRUE(v5.Finish().ok());
  EXPECT_EQ(out.size(), 9u + 1 + 8);
}

TEST(RdbWriterTest, SinkErrorsStickAndStopTheOutput) {
  int calls = 0;
  RdbWriter writer(
      [&](std::string_view) {
        ++calls;
        return absl::DataLossError("disk full");
      },
      RdbWriter::Options{}, /*flush_bytes=*/16);
  writer.WriteString("abc");
  EXPECT_TRUE(writer.MaybeFlush().ok());  // Under flush_bytes: not passed yet.
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(writer.Flush().message(), "disk full");
  EXPECT_EQ(calls, 1);
  // Later output is dropped, not buffered, and the sink is not called again.
  for (int i = 0; i < 1000; ++i) {
    writer.WriteString("some value of a few bytes");
    writer.WriteRaw(std::string(100, 'y'));  // Long enough to bypass the buffer.
    EXPECT_EQ(writer.MaybeFlush().message(), "disk full");
  }
  EXPECT_EQ(writer.Flush().message(), "disk full");
  EXPECT_EQ(writer.Finish().message(), "disk full");
  EXPECT_EQ(writer.FinishPayload().message(), "disk full");
  EXPECT_EQ(calls, 1);
  EXPECT_LT(writer.retained_bytes(), 4096u);
}

TEST(RdbReaderTest, SourceErrorsAreReturned) {
  int calls = 0;
  RdbReader reader([&](char* buffer, size_t capacity) -> absl::StatusOr<size_t> {
    if (++calls > 1) return absl::UnavailableError("connection reset");
    const std::string_view start =
        "\x0a"
        "hello"sv;  // 10 bytes announced, 5 delivered.
    const size_t n = std::min(capacity, start.size());
    std::memcpy(buffer, start.data(), n);
    return n;
  });
  std::string out;
  absl::Status status = reader.ReadString(&out);
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_EQ(status.message(), "connection reset");
  // The error sticks: the bytes that arrived can still be read, but the source is not asked
  // again.
  EXPECT_TRUE(absl::IsUnavailable(reader.ReadExact(6, &out)));
  EXPECT_EQ(calls, 2);
}

// Large strings go to the sink as they are; everything else in pieces of about flush_bytes.
TEST(RdbWriterTest, LargeStringsBypassTheBuffer) {
  RecordingSink sink;
  RdbWriter writer(sink.AsSink(), RdbWriter::Options{.compress = false}, /*flush_bytes=*/1024);
  std::vector<size_t>& pieces = sink.pieces;
  std::string& out = sink.bytes;
  std::mt19937_64 random(3);
  std::vector<std::string> values;
  for (int i = 0; i < 300; ++i) {
    std::string value(i % 50 == 0 ? 100000 : random() % 300, 'v');
    for (char& c : value) c = static_cast<char>(random());
    values.push_back(value);
    writer.WriteString(value);
    ASSERT_TRUE(writer.MaybeFlush().ok());
  }
  ASSERT_TRUE(writer.Finish().ok());
  for (size_t piece : pieces) {
    EXPECT_TRUE(piece <= 2 * 1024 || piece == 100000) << piece;
  }
  RdbReader reader(out);
  for (const std::string& value : values) {
    std::string read;
    ASSERT_TRUE(reader.ReadString(&read).ok());
    ASSERT_EQ(read, value);
  }
  ASSERT_EQ(*reader.ReadByte(), kOpEof);
  EXPECT_TRUE(reader.ReadChecksum().ok());  // The CRC covers the bytes passed directly.
}

// A large value's scratch space is released after it, not kept for the rest of the save.
TEST(RdbWriterTest, ScratchBuffersShrinkAfterALargeValue) {
  RdbWriter writer([](std::string_view) { return absl::OkStatus(); }, RdbWriter::Options{},
                   /*flush_bytes=*/4096);
  writer.WriteString(std::string(8 << 20, 'a'));  // LZF scratch of 8 MiB.
  writer.blob_scratch()->assign(4 << 20, 'b');
  writer.WriteString(*writer.blob_scratch());
  ASSERT_TRUE(writer.MaybeFlush().ok());
  EXPECT_LT(writer.retained_bytes(), 2u << 20);
}

TEST(RdbReaderTest, TakeBufferedReturnsTheReadAhead) {
  const std::string stream =
      "\x03"
      "abcTAIL BYTES";
  // From memory: the rest of the input.
  RdbReader memory(stream);
  std::string out;
  ASSERT_TRUE(memory.ReadString(&out).ok());
  EXPECT_EQ(memory.buffered(), "TAIL BYTES");
  EXPECT_EQ(memory.TakeBuffered(), "TAIL BYTES");
  EXPECT_EQ(memory.offset(), 4u);
  EXPECT_EQ(memory.buffered(), "");
  // From a source: what it read ahead, then the source continues.
  size_t at = 0;
  RdbReader source([&](char* buffer, size_t capacity) -> absl::StatusOr<size_t> {
    const size_t n = std::min<size_t>({capacity, 6, stream.size() - at});
    std::memcpy(buffer, stream.data() + at, n);
    at += n;
    return n;
  });
  ASSERT_TRUE(source.ReadString(&out).ok());
  EXPECT_EQ(out, "abc");
  const std::string taken = source.TakeBuffered();
  EXPECT_EQ(taken + stream.substr(at), "TAIL BYTES");
  EXPECT_EQ(source.offset(), 4u);
  if (at < stream.size()) {
    EXPECT_EQ(*source.ReadByte(), static_cast<uint8_t>(stream[at]));
  }
}

}  // namespace
}  // namespace gigakv::persistence::rdb
