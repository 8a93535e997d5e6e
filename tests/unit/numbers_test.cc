#include "gigakv/numbers.h"

#include <cmath>

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
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "01", "-0", "1a", "0x10", "1.0"}) {
    EXPECT_FALSE(ParseInt64(bad, &v)) << bad;
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
