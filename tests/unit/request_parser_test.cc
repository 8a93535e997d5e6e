#include "protocol/request_parser.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gigakv::protocol {
namespace {

using ::testing::ElementsAre;
using Result = RequestParser::Result;

struct Parsed {
  std::vector<std::vector<std::string>> commands;
  std::string error;
  size_t leftover = 0;
};

// Feeds `input` to a parser in chunks of `chunk` bytes, like reads from a socket, consuming
// completed requests exactly as the connection does.
Parsed FeedInChunks(const std::string& input, size_t chunk, ParserLimits limits = {}) {
  RequestParser parser(limits);
  Parsed parsed;
  std::string buffer;
  size_t offset = 0;
  while (offset < input.size()) {
    buffer.append(input, offset, chunk);
    offset += chunk;
    while (!buffer.empty()) {
      Result result = parser.Feed(buffer);
      if (result == Result::kCommand) {
        parsed.commands.emplace_back(parser.args().begin(), parser.args().end());
        buffer.erase(0, parser.consumed());
      } else if (result == Result::kEmpty) {
        buffer.erase(0, parser.consumed());
      } else if (result == Result::kError) {
        parsed.error = parser.error_text();
        return parsed;
      } else {
        break;
      }
    }
  }
  parsed.leftover = buffer.size();
  return parsed;
}

TEST(RequestParserTest, MultibulkCommand) {
  Parsed parsed = FeedInChunks("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n", 1 << 20);
  ASSERT_EQ(parsed.commands.size(), 1u);
  EXPECT_THAT(parsed.commands[0], ElementsAre("SET", "k", "hello"));
  EXPECT_EQ(parsed.leftover, 0u);
}

TEST(RequestParserTest, BinarySafeBulkWithCrlfInside) {
  std::string value("a\r\nb\0c", 6);
  std::string input = "*2\r\n$4\r\nECHO\r\n$6\r\n" + value + "\r\n";
  Parsed parsed = FeedInChunks(input, 1 << 20);
  ASSERT_EQ(parsed.commands.size(), 1u);
  EXPECT_EQ(parsed.commands[0][1], value);
}

TEST(RequestParserTest, EveryFragmentationGivesTheSameCommands) {
  std::string input =
      "*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$3\r\nkey\r\nSET k \"a b\" 'c d'\r\n"
      "*0\r\n\r\n*3\r\n$3\r\nSET\r\n$0\r\n\r\n$10\r\n0123456789\r\n";
  for (size_t chunk = 1; chunk <= input.size(); ++chunk) {
    Parsed parsed = FeedInChunks(input, chunk);
    ASSERT_EQ(parsed.commands.size(), 4u) << "chunk=" << chunk;
    EXPECT_THAT(parsed.commands[0], ElementsAre("PING"));
    EXPECT_THAT(parsed.commands[1], ElementsAre("GET", "key"));
    EXPECT_THAT(parsed.commands[2], ElementsAre("SET", "k", "a b", "c d"));
    EXPECT_THAT(parsed.commands[3], ElementsAre("SET", "", "0123456789"));
    EXPECT_EQ(parsed.leftover, 0u);
  }
}

TEST(RequestParserTest, PipelineOfManyCommands) {
  std::string input;
  for (int i = 0; i < 10000; ++i) input += "*2\r\n$4\r\nINCR\r\n$1\r\nx\r\n";
  Parsed parsed = FeedInChunks(input, 16 * 1024);
  EXPECT_EQ(parsed.commands.size(), 10000u);
}

TEST(RequestParserTest, PartialCommandStaysPending) {
  Parsed parsed = FeedInChunks("*2\r\n$3\r\nGET\r\n$3\r\nke", 1 << 20);
  EXPECT_TRUE(parsed.commands.empty());
  EXPECT_TRUE(parsed.error.empty());
}

TEST(RequestParserTest, LargeBulkHint) {
  RequestParser parser;
  std::string header = "*2\r\n$3\r\nSET\r\n$1000000\r\n";
  EXPECT_EQ(parser.Feed(header), Result::kNeedMore);
  EXPECT_EQ(parser.bytes_hint(), 1000002u);
}

TEST(RequestParserTest, InlineCommands) {
  Parsed parsed = FeedInChunks("PING\nset  k   v\r\n\r\n   \nECHO \"x\\ty\\x41\"\n", 1 << 20);
  ASSERT_EQ(parsed.commands.size(), 3u);
  EXPECT_THAT(parsed.commands[0], ElementsAre("PING"));
  EXPECT_THAT(parsed.commands[1], ElementsAre("set", "k", "v"));
  EXPECT_THAT(parsed.commands[2], ElementsAre("ECHO", "x\tyA"));
}

struct ErrorCase {
  const char* input;
  const char* error;
};

class ProtocolErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ProtocolErrorTest, GivesRedisText) {
  Parsed parsed = FeedInChunks(GetParam().input, 1 << 20);
  EXPECT_EQ(parsed.error, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ProtocolErrorTest,
    ::testing::Values(
        ErrorCase{"*abc\r\n", "Protocol error: invalid multibulk length"},
        ErrorCase{"*1048577\r\n", "Protocol error: invalid multibulk length"},
        ErrorCase{"*+1\r\n", "Protocol error: invalid multibulk length"},
        ErrorCase{"*1\r\nfoo\r\n", "Protocol error: expected '$', got 'f'"},
        ErrorCase{"*1\r\n$-1\r\n", "Protocol error: invalid bulk length"},
        ErrorCase{"*1\r\n$x\r\n", "Protocol error: invalid bulk length"},
        ErrorCase{"*1\r\n$536870913\r\n", "Protocol error: invalid bulk length"},
        // Leading zeros and lengths of 18 and 19 digits (Redis 7.0's replies).
        ErrorCase{"*01\r\n", "Protocol error: invalid multibulk length"},
        ErrorCase{"*1\r\n$01\r\n", "Protocol error: invalid bulk length"},
        ErrorCase{"*1\r\n$999999999999999999\r\n", "Protocol error: invalid bulk length"},
        ErrorCase{"*1\r\n$9999999999999999999\r\n", "Protocol error: invalid bulk length"},
        ErrorCase{"*1\r\n$1x\r\n", "Protocol error: invalid bulk length"},
        ErrorCase{"*2x\r\n", "Protocol error: invalid multibulk length"},
        ErrorCase{"SET k \"abc\n", "Protocol error: unbalanced quotes in request"},
        ErrorCase{"SET k 'abc\n", "Protocol error: unbalanced quotes in request"},
        ErrorCase{"SET k \"a\"b\n", "Protocol error: unbalanced quotes in request"}));

TEST(RequestParserTest, ZeroAndNegativeCountsAndEmptyBulks) {
  Parsed parsed =
      FeedInChunks("*0\r\n*-1\r\n*1\r\n$0\r\n\r\n*2\r\n$1\r\na\r\n$10\r\n0123456789\r\n", 3);
  EXPECT_EQ(parsed.error, "");
  ASSERT_EQ(parsed.commands.size(), 2u);
  EXPECT_THAT(parsed.commands[0], ElementsAre(""));
  EXPECT_THAT(parsed.commands[1], ElementsAre("a", "0123456789"));
  EXPECT_EQ(parsed.leftover, 0u);
}

// A length line split anywhere (even between '\r' and '\n') waits for the rest.
TEST(RequestParserTest, LengthLinesSplitAtEveryByte) {
  const std::string request =
      "*3\r\n$3\r\nSET\r\n$12\r\nkey:00000001\r\n$100\r\n" + std::string(100, 'v') + "\r\n";
  for (size_t chunk = 1; chunk <= request.size(); ++chunk) {
    Parsed parsed = FeedInChunks(request + request, chunk);
    ASSERT_EQ(parsed.commands.size(), 2u) << chunk;
    EXPECT_THAT(parsed.commands[1], ElementsAre("SET", "key:00000001", std::string(100, 'v')));
  }
}

TEST(RequestParserTest, TooBigInlineRequest) {
  Parsed parsed = FeedInChunks(std::string(70 * 1024, 'a'), 4096);
  EXPECT_EQ(parsed.error, "Protocol error: too big inline request");
}

TEST(RequestParserTest, TooBigCountStrings) {
  EXPECT_EQ(FeedInChunks("*" + std::string(70 * 1024, '1'), 4096).error,
            "Protocol error: too big mbulk count string");
  EXPECT_EQ(FeedInChunks("*1\r\n$" + std::string(70 * 1024, '1'), 4096).error,
            "Protocol error: too big bulk count string");
}

TEST(RequestParserTest, ProtoMaxBulkLenLimit) {
  ParserLimits limits;
  limits.max_bulk_len = 10;
  EXPECT_EQ(FeedInChunks("*1\r\n$11\r\n", 64, limits).error, "Protocol error: invalid bulk length");
  EXPECT_EQ(FeedInChunks("*1\r\n$10\r\n0123456789\r\n", 64, limits).commands.size(), 1u);
}

TEST(SplitInlineArgsTest, RedisCliQuoting) {
  std::vector<std::string> words;
  ASSERT_TRUE(SplitInlineArgs("a \"b c\" 'd \\' e' \"\\n\\r\\t\\b\\a\\\\\" \"\"", &words));
  EXPECT_THAT(words, ElementsAre("a", "b c", "d ' e", "\n\r\t\b\a\\", ""));
  ASSERT_TRUE(SplitInlineArgs("   ", &words));
  EXPECT_TRUE(words.empty());
}

}  // namespace
}  // namespace gigakv::protocol

namespace gigakv::protocol {
namespace {

TEST(RequestParserTest, UnauthenticatedLimits) {
  ParserLimits limits;
  limits.unauthenticated = true;
  std::string eleven = "*11\r\n";
  EXPECT_EQ(FeedInChunks(eleven, 64, limits).error,
            "Protocol error: unauthenticated multibulk length");
  EXPECT_EQ(FeedInChunks("*2\r\n$4\r\nAUTH\r\n$16385\r\n", 64, limits).error,
            "Protocol error: unauthenticated bulk length");
  EXPECT_EQ(FeedInChunks("*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n", 64, limits).commands.size(), 1u);
  limits.unauthenticated = false;
  EXPECT_TRUE(FeedInChunks(eleven, 64, limits).error.empty());
}

}  // namespace
}  // namespace gigakv::protocol
