#include "gigakv/numbers.h"

#include <cmath>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace gigakv {
namespace {

TEST(NumbersTest, ParseInt64FollowsString2ll) {
  int64_t v;
  EXPECT_TRUE(ParseInt64("0", &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(ParseInt64("-9223372036854775808", &v));
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_TRUE(ParseInt64("9223372036854775807", &v));
  EXPECT_FALSE(ParseInt64("9223372036854775808", &v));
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "01", "-0", "1a", "0x10", "1.0",
                          "-9223372036854775809", "18446744073709551616", "99999999999999999999",
                          "-99999999999999999999", "123456789012345678901", "--1", "1-"}) {
    EXPECT_FALSE(ParseInt64(bad, &v)) << bad;
  }
  EXPECT_FALSE(ParseInt64(std::string_view("12\0", 3), &v));
}

TEST(NumbersTest, ParseInt64RoundTripsEveryMagnitude) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    // Values of every digit count, both signs, including the extremes.
    int64_t expected = static_cast<int64_t>(rng() >> (rng() % 64));
    if (i % 2 == 1) expected = expected == INT64_MIN ? expected : -expected;
    if (i == 0) expected = INT64_MIN;
    if (i == 1) expected = INT64_MAX;
    int64_t parsed = 0;
    ASSERT_TRUE(ParseInt64(std::to_string(expected), &parsed)) << expected;
    EXPECT_EQ(parsed, expected);
  }
}

TEST(NumbersTest, ParseDouble) {
  double d;
  EXPECT_TRUE(ParseDouble("1.5", &d));
  EXPECT_EQ(d, 1.5);
  EXPECT_TRUE(ParseDouble("-inf", &d));
  EXPECT_TRUE(std::isinf(d));
  EXPECT_TRUE(ParseDouble("1e3", &d));
  EXPECT_EQ(d, 1000);
  for (const char* bad : {"", " 1", "1 ", "abc", "nan", "1e999"}) {
    EXPECT_FALSE(ParseDouble(bad, &d)) << bad;
  }
}

TEST(NumbersTest, FormatLongDoubleLikeIncrByFloat) {
  std::string out;
  ASSERT_TRUE(FormatLongDouble(10.5L, &out));
  EXPECT_EQ(out, "10.5");
  ASSERT_TRUE(FormatLongDouble(3.0L, &out));
  EXPECT_EQ(out, "3");
  ASSERT_TRUE(FormatLongDouble(5.0e3L, &out));
  EXPECT_EQ(out, "5000");
  EXPECT_FALSE(FormatLongDouble(INFINITY, &out));
}

}  // namespace
}  // namespace gigakv

namespace gigakv {
namespace {

TEST(NumbersTest, StripTrailingDecimalZeros) {
  for (auto [in, out] : std::vector<std::pair<std::string, std::string>>{{"1.500", "1.5"},
                                                                         {"2.000", "2"},
                                                                         {"100", "100"},
                                                                         {"0.0", "0"},
                                                                         {"10.05", "10.05"},
                                                                         {"", ""}}) {
    std::string text = in;
    StripTrailingDecimalZeros(&text);
    EXPECT_EQ(text, out) << in;
  }
}

}  // namespace
}  // namespace gigakv
