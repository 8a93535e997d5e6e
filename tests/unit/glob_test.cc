#include "gigakv/glob.h"

#include "gtest/gtest.h"

namespace gigakv {
namespace {

TEST(GlobTest, RedisPatterns) {
  EXPECT_TRUE(GlobMatch("*", "anything"));
  EXPECT_TRUE(GlobMatch("h?llo", "hello"));
  EXPECT_FALSE(GlobMatch("h?llo", "hllo"));
  EXPECT_TRUE(GlobMatch("h*llo", "heeeello"));
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[ae]llo", "hillo"));
  EXPECT_TRUE(GlobMatch("h[^e]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[^e]llo", "hello"));
  EXPECT_TRUE(GlobMatch("h[a-b]llo", "hbllo"));
  EXPECT_TRUE(GlobMatch("h\\*llo", "h*llo"));
  EXPECT_FALSE(GlobMatch("h\\*llo", "hello"));
  EXPECT_TRUE(GlobMatch("max*", "MAXCLIENTS", /*nocase=*/true));
  EXPECT_FALSE(GlobMatch("max*", "MAXCLIENTS"));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXXbYY"));
}

TEST(GlobTest, PathologicalPatternTerminates) {
  std::string pattern(60, '*');
  pattern += "b";
  EXPECT_FALSE(GlobMatch(pattern, std::string(100, 'a')));
}

}  // namespace
}  // namespace gigakv
