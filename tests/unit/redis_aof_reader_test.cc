// RedisAofReader (persistence/log/redis_aof_reader.h): Redis's RESP append-only text, its
// annotations, every truncation and the damage it must not load.
#include "persistence/log/redis_aof_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/mem_file_system.h"

namespace gigakv::persistence::log {
namespace {

using Outcome = RedisAofReader::Outcome;

std::string Command(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& arg : args) {
    out += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
  }
  return out;
}

struct ReadResult {
  std::vector<std::vector<std::string>> commands;
  std::vector<uint64_t> offsets;
  Outcome outcome = Outcome::kCommand;
  uint64_t valid_end = 0;
  uint64_t problem_offset = 0;
  std::string problem;
};

ReadResult ReadAll(const std::string& bytes, uint64_t start_offset = 0) {
  gigakv::testing::MemFileSystem fs;
  fs.SetContents("aof", bytes.substr(start_offset));
  auto file = fs.NewSequentialFile("aof");
  EXPECT_TRUE(file.ok());
  RedisAofReader reader(file->get(), start_offset);
  ReadResult result;
  std::vector<std::string_view> args;
  while ((result.outcome = reader.ReadCommand(&args)) == Outcome::kCommand) {
    result.commands.emplace_back(args.begin(), args.end());
    result.offsets.push_back(reader.command_offset());
  }
  // Every later call says the same.
  EXPECT_EQ(reader.ReadCommand(&args), result.outcome);
  result.valid_end = reader.valid_end();
  result.problem_offset = reader.problem_offset();
  result.problem = reader.problem();
  return result;
}

TEST(RedisAofReaderTest, EmptyFile) {
  ReadResult result = ReadAll("");
  EXPECT_EQ(result.outcome, Outcome::kEnd);
  EXPECT_TRUE(result.commands.empty());
  EXPECT_EQ(result.valid_end, 0u);
}

TEST(RedisAofReaderTest, CommandsAnnotationsAndBinaryArguments) {
  const std::string binary("a\r\nb\0c*$#", 10);
  const std::string bytes = "#TS:1700000000\r\n" + Command({"SELECT", "0"}) +
                            Command({"SET", "k", binary}) + "#TS:1700000001\r\n" +
                            Command({"DEL", ""}) + "*1\n$5\nMULTI\r\n";
  ReadResult result = ReadAll(bytes);
  ASSERT_EQ(result.outcome, Outcome::kEnd);
  ASSERT_EQ(result.commands.size(), 4u);
  EXPECT_EQ(result.commands[0], (std::vector<std::string>{"SELECT", "0"}));
  EXPECT_EQ(result.commands[1], (std::vector<std::string>{"SET", "k", binary}));
  EXPECT_EQ(result.commands[2], (std::vector<std::string>{"DEL", ""}));
  EXPECT_EQ(result.commands[3], (std::vector<std::string>{"MULTI"}));
  EXPECT_EQ(result.offsets[0], 16u);
  EXPECT_EQ(result.valid_end, bytes.size());
}

TEST(RedisAofReaderTest, ArgumentsLargerThanTheReadBuffer) {
  const std::string big(300 * 1024 + 7, 'v');
  std::string bytes;
  for (int i = 0; i < 5; ++i) bytes += Command({"SET", "key" + std::to_string(i), big});
  ReadResult result = ReadAll(bytes);
  ASSERT_EQ(result.outcome, Outcome::kEnd);
  ASSERT_EQ(result.commands.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(result.commands[i][1], "key" + std::to_string(i));
    EXPECT_EQ(result.commands[i][2], big);
  }
}

TEST(RedisAofReaderTest, StartOffsetAfterAPreamble) {
  const std::string preamble(100, 'R');
  const std::string bytes = preamble + Command({"INCR", "n"}) + Command({"INCR", "n"});
  ReadResult result = ReadAll(bytes, preamble.size());
  ASSERT_EQ(result.outcome, Outcome::kEnd);
  ASSERT_EQ(result.offsets.size(), 2u);
  EXPECT_EQ(result.offsets[0], 100u);
  EXPECT_EQ(result.offsets[1], 100u + Command({"INCR", "n"}).size());
  EXPECT_EQ(result.valid_end, bytes.size());
}

// Cutting the file anywhere yields the commands before the cut, then a clean end at a command
// boundary (or inside an annotation, which Redis skips too) and a truncation anywhere else,
// naming the unfinished command's start, with valid_end at the last complete command.
TEST(RedisAofReaderTest, EveryTruncation) {
  const std::vector<std::string> pieces = {Command({"SELECT", "3"}), "#TS:1\r\n",
                                           Command({"RPUSH", "list", "a", "bb"}),
                                           Command({"SET", "x", std::string(70000, 'y')})};
  std::string bytes;
  std::vector<size_t> command_starts, command_ends;
  for (const std::string& piece : pieces) {
    if (piece[0] == '*') command_starts.push_back(bytes.size());
    bytes += piece;
    if (piece[0] == '*') command_ends.push_back(bytes.size());
  }
  const size_t annotation_begin = pieces[0].size(), annotation_end = annotation_begin + 7;
  for (size_t cut = 0; cut <= bytes.size();
       cut += (cut > 200 && cut + 200 < bytes.size()) ? 997 : 1) {
    ReadResult result = ReadAll(bytes.substr(0, cut));
    size_t complete = 0;
    while (complete < command_ends.size() && command_ends[complete] <= cut) ++complete;
    ASSERT_EQ(result.commands.size(), complete) << "cut at " << cut;
    const size_t valid = complete == 0 ? 0 : command_ends[complete - 1];
    EXPECT_EQ(result.valid_end, valid) << "cut at " << cut;
    const bool clean = cut == valid || (cut > annotation_begin && cut <= annotation_end);
    EXPECT_EQ(result.outcome, clean ? Outcome::kEnd : Outcome::kTruncated) << "cut at " << cut;
    if (!clean) {
      EXPECT_EQ(result.problem_offset, command_starts[complete]) << "cut at " << cut;
    }
  }
}

struct BadCase {
  std::string bytes;
  uint64_t offset;
  std::string problem;
};

TEST(RedisAofReaderTest, DamageIsBadFormat) {
  const std::string good = Command({"SET", "a", "1"});
  const std::vector<BadCase> cases = {
      {good + "+OK\r\n", good.size(), "expected '*' (a command's argument count), found '+'"},
      {good + "*0\r\n", good.size(), "a command without arguments"},
      {good + "*-1\r\n", good.size(), "bad a command's argument count '*-1'"},
      {good + "*2x\r\n", good.size(), "bad a command's argument count '*2x'"},
      {good + "*\r\n", good.size(), "bad a command's argument count '*'"},
      {good + "*2\r\n$3\r\nGET\r\n:1\r\n", good.size() + 13,
       "expected '$' (an argument's length), found ':'"},
      // A length one short: the argument is not followed by CRLF.
      {good + "*2\r\n$2\r\nGET\r\n$1\r\nk\r\n", good.size() + 10,
       "argument 1 of 2 (2 bytes) is not followed by CRLF"},
      {good + "*1\r\n$" + std::string(2000, '1') + "\r\n", good.size() + 4,
       "the line of an argument's length is too long"},
      {good + std::string("\0\0\0\0", 4), good.size(),
       "expected '*' (a command's argument count), found byte 0x00"},
  };
  for (const BadCase& bad : cases) {
    ReadResult result = ReadAll(bad.bytes);
    EXPECT_EQ(result.outcome, Outcome::kBadFormat) << bad.problem;
    EXPECT_EQ(result.commands.size(), 1u) << bad.problem;
    EXPECT_EQ(result.problem_offset, bad.offset) << bad.problem;
    EXPECT_EQ(result.problem, bad.problem);
    EXPECT_EQ(result.valid_end, good.size());
  }
}

// A damaged length far beyond the file reads to the end (no allocation of what it claims).
TEST(RedisAofReaderTest, AHugeLengthAtTheEndIsATruncation) {
  const std::string good = Command({"SET", "a", "1"});
  ReadResult result = ReadAll(good + "*2\r\n$3\r\nSET\r\n$999999999999\r\nabc");
  EXPECT_EQ(result.outcome, Outcome::kTruncated);
  EXPECT_EQ(result.problem_offset, good.size());
  EXPECT_EQ(result.valid_end, good.size());
}

TEST(RedisAofReaderTest, AnAnnotationLongerThanRedisReadsIsBadFormat) {
  const std::string good = Command({"SET", "a", "1"});
  ReadResult ok = ReadAll(good + "#" + std::string(1000, 'x') + "\n" + good);
  EXPECT_EQ(ok.outcome, Outcome::kEnd);
  EXPECT_EQ(ok.commands.size(), 2u);
  for (const std::string& tail : {std::string(2000, 'x') + "\n", std::string(200000, 'x')}) {
    ReadResult result = ReadAll(good + "#" + tail + good);
    EXPECT_EQ(result.outcome, Outcome::kBadFormat);
    EXPECT_EQ(result.problem, "an annotation longer than 1024 bytes");
    EXPECT_EQ(result.problem_offset, good.size());
  }
}

// Given the file's size, an argument said to end past it is a truncation without reading on.
TEST(RedisAofReaderTest, ALengthPastTheKnownFileSizeIsATruncationAtOnce) {
  const std::string good = Command({"SET", "a", "1"});
  const std::string bytes = good + "*2\r\n$3\r\nSET\r\n$100\r\nabc";
  gigakv::testing::MemFileSystem fs;
  fs.SetContents("aof", bytes);
  auto file = fs.NewSequentialFile("aof");
  ASSERT_TRUE(file.ok());
  RedisAofReader reader(file->get(), 0, bytes.size());
  std::vector<std::string_view> args;
  EXPECT_EQ(reader.ReadCommand(&args), Outcome::kCommand);
  EXPECT_EQ(reader.ReadCommand(&args), Outcome::kTruncated);
  EXPECT_EQ(reader.problem_offset(), good.size());
  EXPECT_EQ(reader.valid_end(), good.size());
}

}  // namespace
}  // namespace gigakv::persistence::log
