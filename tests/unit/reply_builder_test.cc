// Golden bytes for every reply primitive in RESP2 and RESP3.
#include "protocol/reply_builder.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "protocol/wire_numbers.h"

namespace gigakv::protocol {
namespace {

struct Golden {
  const char* name;
  std::function<void(ReplyBuilder&)> write;
  std::string resp2;
  std::string resp3;
};

class ReplyBuilderGoldenTest : public ::testing::TestWithParam<Golden> {};

TEST_P(ReplyBuilderGoldenTest, Resp2) {
  ReplyBuilder builder(2);
  GetParam().write(builder);
  EXPECT_EQ(builder.buffer(), GetParam().resp2);
}

TEST_P(ReplyBuilderGoldenTest, Resp3) {
  ReplyBuilder builder(3);
  GetParam().write(builder);
  EXPECT_EQ(builder.buffer(), GetParam().resp3);
}

INSTANTIATE_TEST_SUITE_P(
    Primitives, ReplyBuilderGoldenTest,
    ::testing::Values(
        Golden{"simple", [](ReplyBuilder& b) { b.SimpleString("OK"); }, "+OK\r\n", "+OK\r\n"},
        Golden{"error", [](ReplyBuilder& b) { b.Error("ERR bad\r\nthing"); }, "-ERR bad  thing\r\n",
               "-ERR bad  thing\r\n"},
        Golden{"integer", [](ReplyBuilder& b) { b.Integer(-9223372036854775807LL - 1); },
               ":-9223372036854775808\r\n", ":-9223372036854775808\r\n"},
        Golden{"bulk", [](ReplyBuilder& b) { b.Bulk(std::string_view("a\0b", 3)); },
               std::string("$3\r\na\0b\r\n", 9), std::string("$3\r\na\0b\r\n", 9)},
        Golden{"empty_bulk", [](ReplyBuilder& b) { b.Bulk(""); }, "$0\r\n\r\n", "$0\r\n\r\n"},
        Golden{"null", [](ReplyBuilder& b) { b.Null(); }, "$-1\r\n", "_\r\n"},
        Golden{"null_array", [](ReplyBuilder& b) { b.NullArray(); }, "*-1\r\n", "_\r\n"},
        Golden{"array",
               [](ReplyBuilder& b) {
                 b.ArrayHeader(2);
                 b.Integer(1);
                 b.Bulk("x");
               },
               "*2\r\n:1\r\n$1\r\nx\r\n", "*2\r\n:1\r\n$1\r\nx\r\n"},
        Golden{"map",
               [](ReplyBuilder& b) {
                 b.MapHeader(1);
                 b.Bulk("k");
                 b.Integer(7);
               },
               "*2\r\n$1\r\nk\r\n:7\r\n", "%1\r\n$1\r\nk\r\n:7\r\n"},
        Golden{"set", [](ReplyBuilder& b) { b.SetHeader(0); }, "*0\r\n", "~0\r\n"},
        Golden{"push", [](ReplyBuilder& b) { b.PushHeader(3); }, "*3\r\n", ">3\r\n"},
        Golden{"pairs",
               [](ReplyBuilder& b) {
                 b.PairArrayHeader(1);
                 b.PairHeader();
                 b.Bulk("m");
                 b.Double(2);
               },
               "*2\r\n$1\r\nm\r\n$1\r\n2\r\n", "*1\r\n*2\r\n$1\r\nm\r\n,2\r\n"},
        Golden{"double", [](ReplyBuilder& b) { b.Double(1.5); }, "$3\r\n1.5\r\n", ",1.5\r\n"},
        Golden{"double_17g", [](ReplyBuilder& b) { b.Double(0.1); },
               "$19\r\n0.10000000000000001\r\n", ",0.10000000000000001\r\n"},
        Golden{"double_inf", [](ReplyBuilder& b) { b.Double(-INFINITY); }, "$4\r\n-inf\r\n",
               ",-inf\r\n"},
        Golden{"bool",
               [](ReplyBuilder& b) {
                 b.Bool(true);
                 b.Bool(false);
               },
               ":1\r\n:0\r\n", "#t\r\n#f\r\n"},
        Golden{"verbatim", [](ReplyBuilder& b) { b.Verbatim("txt", "hi"); }, "$2\r\nhi\r\n",
               "=6\r\ntxt:hi\r\n"},
        Golden{"bignum", [](ReplyBuilder& b) { b.BigNumber("12345678901234567890"); },
               "$20\r\n12345678901234567890\r\n", "(12345678901234567890\r\n"}),
    [](const ::testing::TestParamInfo<Golden>& info) { return info.param.name; });

TEST(ReplyBuilderTest, PairArraysNestInResp3AndFlattenInResp2) {
  for (int version : {2, 3}) {
    ReplyBuilder builder(version);
    builder.PairArrayHeader(2);
    for (std::string_view field : {"a", "b"}) {
      builder.PairHeader();
      builder.Bulk(field);
      builder.Integer(1);
    }
    EXPECT_EQ(builder.buffer(), version == 3
                                    ? "*2\r\n*2\r\n$1\r\na\r\n:1\r\n*2\r\n$1\r\nb\r\n:1\r\n"
                                    : "*4\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:1\r\n");
  }
}

// Integers and headers against std::to_string: digit-count boundaries, signs, extremes and a
// seeded random sample.
TEST(ReplyBuilderTest, IntegersAndHeadersAreDecimalAsToString) {
  std::vector<int64_t> values = {0,
                                 1,
                                 9,
                                 10,
                                 11,
                                 99,
                                 100,
                                 101,
                                 999,
                                 1000,
                                 12345,
                                 -1,
                                 -9,
                                 -10,
                                 -99,
                                 -100,
                                 -12345,
                                 std::numeric_limits<int64_t>::max(),
                                 std::numeric_limits<int64_t>::min(),
                                 std::numeric_limits<int64_t>::min() + 1};
  int64_t power = 1;
  for (int digits = 1; digits < 19; ++digits) {
    power *= 10;
    values.insert(values.end(), {power - 1, power, power + 1, -power, 1 - power});
  }
  std::mt19937_64 rng(20261201);
  for (int i = 0; i < 2000; ++i) {
    values.push_back(static_cast<int64_t>(rng()) >> (rng() % 64));
  }
  for (int64_t value : values) {
    ReplyBuilder reply;
    reply.Integer(value);
    reply.ArrayHeader(value);
    EXPECT_EQ(reply.buffer(),
              ":" + std::to_string(value) + "\r\n*" + std::to_string(value) + "\r\n");
    std::string appended = "x";
    AppendDecimal(&appended, value);
    EXPECT_EQ(appended, "x" + std::to_string(value));
  }
}

// Bulk strings of many sizes (header digit counts, empty, large), binary bytes included.
TEST(ReplyBuilderTest, BulkOfManySizes) {
  for (size_t size : {0, 1, 2, 9, 10, 11, 63, 64, 65, 66, 99, 100, 1000, 70000}) {
    std::string data(size, '\0');
    for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>("\r\nab\0\xff"[i % 6]);
    ReplyBuilder reply;
    reply.SimpleString("before");
    reply.Bulk(data);
    reply.Integer(7);
    EXPECT_EQ(reply.buffer(), "+before\r\n$" + std::to_string(size) + "\r\n" + data + "\r\n:7\r\n")
        << size;
  }
}

TEST(ReplyBuilderTest, CountsErrorsAndCode) {
  ReplyBuilder builder;
  builder.Error("WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(builder.errors_sent(), 1);
  EXPECT_EQ(builder.last_error_code(), "WRONGTYPE");
  builder.ResetErrorCount();
  EXPECT_EQ(builder.errors_sent(), 0);
}

}  // namespace
}  // namespace gigakv::protocol
