#include "protocol/resp_reader.h"

#include <string>

#include "gtest/gtest.h"

namespace gigakv::protocol {
namespace {

TEST(RespReaderTest, ParsesNestedResp3) {
  std::string input = "%2\r\n$1\r\na\r\n*2\r\n:1\r\n_\r\n+b\r\n,1.5\r\n";
  RespValue value;
  ASSERT_EQ(ParseReply(input, &value), static_cast<int64_t>(input.size()));
  ASSERT_EQ(value.type, RespValue::Type::kMap);
  ASSERT_EQ(value.elements.size(), 4u);
  EXPECT_EQ(value.elements[0].str, "a");
  EXPECT_EQ(value.elements[1].elements[1].type, RespValue::Type::kNull);
  EXPECT_EQ(value.elements[3].type, RespValue::Type::kDouble);
  EXPECT_EQ(value.DebugString(), "%{\"a\", [:1, (nil)], +b, ,1.5}");
}

TEST(RespReaderTest, IncompleteAtEveryPrefix) {
  std::string input = "*3\r\n$3\r\nfoo\r\n:42\r\n-ERR x\r\n";
  for (size_t i = 0; i < input.size(); ++i) {
    RespValue value;
    EXPECT_EQ(ParseReply(input.substr(0, i), &value), 0) << i;
  }
}

TEST(RespReaderTest, Resp2Nulls) {
  RespValue value;
  EXPECT_EQ(ParseReply("$-1\r\n", &value), 5);
  EXPECT_EQ(value.type, RespValue::Type::kNull);
  EXPECT_EQ(ParseReply("*-1\r\n", &value), 5);
  EXPECT_EQ(value.type, RespValue::Type::kNull);
}

TEST(RespReaderTest, Malformed) {
  RespValue value;
  EXPECT_EQ(ParseReply("?what\r\n", &value), -1);
  EXPECT_EQ(ParseReply(":12x\r\n", &value), -1);
}

}  // namespace
}  // namespace gigakv::protocol

namespace gigakv::protocol {
namespace {

// Found by the fuzzer: a map count whose doubled size overflows int64.
TEST(RespReaderTest, HugeMapCountIsMalformed) {
  RespValue value;
  EXPECT_EQ(ParseReply("%4611686018427387904\r\n", &value), -1);
}

}  // namespace
}  // namespace gigakv::protocol
