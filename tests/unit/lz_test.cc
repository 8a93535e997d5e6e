#include "core/types/lz.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace gigakv {
namespace {

std::string RoundTrip(const std::string& input) {
  std::string block;
  if (!LzCompress(input, &block)) return input;  // Not worth compressing: nothing to check.
  EXPECT_LE(block.size(), input.size() - input.size() / 8);
  std::string output(input.size(), '\0');
  EXPECT_TRUE(LzDecompress(block, output.data(), output.size()));
  return output;
}

TEST(LzTest, RepetitiveInputShrinksAndRoundTrips) {
  std::string input;
  char buffer[32];
  for (int i = 0; i < 700; ++i) {
    int n = std::snprintf(buffer, sizeof(buffer), "\x8am:%08d\x0b", i);
    input.append(buffer, static_cast<size_t>(n));
  }
  std::string block;
  ASSERT_TRUE(LzCompress(input, &block));
  EXPECT_LT(block.size(), input.size() / 2);
  std::string output(input.size(), '\0');
  ASSERT_TRUE(LzDecompress(block, output.data(), output.size()));
  EXPECT_EQ(output, input);
}

TEST(LzTest, LongRunsUseOverlappingMatches) {
  std::string input(10000, 'z');
  input += "tail";
  std::string block;
  ASSERT_TRUE(LzCompress(input, &block));
  EXPECT_LT(block.size(), 200u);
  EXPECT_EQ(RoundTrip(input), input);
}

TEST(LzTest, IncompressibleAndTinyInputsAreRefused) {
  std::mt19937_64 rng(7);
  std::string noise(8192, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  std::string block;
  EXPECT_FALSE(LzCompress(noise, &block));
  EXPECT_FALSE(LzCompress("short", &block));
}

TEST(LzTest, RandomMixesRoundTrip) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 300; ++round) {
    std::string input;
    size_t target = 16 + rng() % 20000;
    while (input.size() < target) {
      switch (rng() % 3) {
        case 0:  // Literal noise.
          for (size_t i = rng() % 40; i > 0; --i) input.push_back(static_cast<char>(rng()));
          break;
        case 1: {  // A copy from up to 10000 bytes back (some beyond the 8192 window).
          if (input.empty()) break;
          size_t from = input.size() - 1 - rng() % std::min<size_t>(input.size(), 10000);
          size_t length = 1 + rng() % 300;
          for (size_t i = 0; i < length; ++i) input.push_back(input[from + i]);
          break;
        }
        default:
          input.append(rng() % 20, static_cast<char>('a' + rng() % 3));
      }
    }
    ASSERT_EQ(RoundTrip(input), input) << "round " << round;
  }
}

TEST(LzTest, MalformedBlocksAreRejectedWithoutOverrun) {
  std::string input;
  for (int i = 0; i < 200; ++i) input += "key:" + std::to_string(i % 17) + ";";
  std::string block;
  ASSERT_TRUE(LzCompress(input, &block));
  std::string output(input.size(), '\0');
  // Truncated blocks and wrong sizes.
  for (size_t cut = 0; cut < block.size(); ++cut) {
    EXPECT_FALSE(
        LzDecompress(std::string_view(block).substr(0, cut), output.data(), output.size()));
  }
  EXPECT_FALSE(LzDecompress(block, output.data(), output.size() - 1));
  // A match reaching before the start of the output.
  EXPECT_FALSE(LzDecompress(std::string("\x20\x05", 2), output.data(), 3));
  // Random blocks: any answer, but no out-of-bounds access (checked under ASan).
  std::mt19937_64 rng(3);
  for (int round = 0; round < 2000; ++round) {
    std::string junk(rng() % 64, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    std::string out(rng() % 128, '\0');
    LzDecompress(junk, out.data(), out.size());
  }
}

}  // namespace
}  // namespace gigakv
