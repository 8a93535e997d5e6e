// Keeps docs/commands.md in step with the command table: every top-level command must have a
// row marked "yes".
#include <fstream>
#include <sstream>

#include "gigakv/strings.h"
#include "gtest/gtest.h"
#include "server/command.h"

#ifndef GIGAKV_SOURCE_DIR
#error "GIGAKV_SOURCE_DIR must be defined"
#endif

namespace gigakv::server {
namespace {

TEST(CommandsDocTest, EveryCommandIsDocumentedAsSupported) {
  std::ifstream file(std::string(GIGAKV_SOURCE_DIR) + "/docs/commands.md");
  ASSERT_TRUE(file.good());
  std::stringstream contents;
  contents << file.rdbuf();
  std::string text = contents.str();
  CommandTable table;
  for (const CommandSpec* spec : table.all()) {
    if (spec->name.find('|') != std::string_view::npos) continue;
    std::string row = StrCat("| ", AsciiUpper(spec->name), " | ");
    size_t at = text.find(row);
    ASSERT_NE(at, std::string::npos) << "docs/commands.md has no row for " << spec->name;
    size_t end = text.find('\n', at);
    EXPECT_NE(text.substr(at, end - at).find("| yes |"), std::string::npos)
        << spec->name << " is implemented but not marked yes";
  }
}

}  // namespace
}  // namespace gigakv::server

#include "server/command_docs.h"

namespace gigakv::server {
namespace {

TEST(CommandsDocTest, EveryCommandHasSyntaxAndComplexity) {
  CommandTable table;
  for (const CommandSpec* spec : table.all()) {
    const CommandDoc* doc = FindCommandDoc(spec->name);
    ASSERT_NE(doc, nullptr) << "no COMMAND DOCS entry for " << spec->name;
    EXPECT_FALSE(doc->complexity.empty()) << spec->name;
  }
}

TEST(CommandsDocTest, SyntaxBecomesStructuredArguments) {
  auto arguments = ParseSyntax("key value [NX|XX] [GET] [EX seconds|PX milliseconds|KEEPTTL]");
  ASSERT_EQ(arguments.size(), 5u);
  EXPECT_EQ(arguments[0].name, "key");
  EXPECT_EQ(arguments[0].type, "key");
  EXPECT_EQ(arguments[1].type, "string");
  EXPECT_EQ(arguments[2].type, "oneof");
  EXPECT_TRUE(arguments[2].optional);
  ASSERT_EQ(arguments[2].arguments.size(), 2u);
  EXPECT_EQ(arguments[2].arguments[0].type, "pure-token");
  EXPECT_EQ(arguments[2].arguments[0].token, "NX");
  EXPECT_EQ(arguments[3].token, "GET");
  ASSERT_EQ(arguments[4].arguments.size(), 3u);
  EXPECT_EQ(arguments[4].arguments[0].token, "EX");
  EXPECT_EQ(arguments[4].arguments[0].name, "seconds");
  EXPECT_EQ(arguments[4].arguments[0].type, "integer");

  auto mset = ParseSyntax("{key value}...");
  ASSERT_EQ(mset.size(), 1u);
  EXPECT_EQ(mset[0].type, "block");
  EXPECT_TRUE(mset[0].multiple);
  EXPECT_FALSE(mset[0].optional);
  EXPECT_EQ(mset[0].arguments.size(), 2u);

  auto del = ParseSyntax("key...");
  ASSERT_EQ(del.size(), 1u);
  EXPECT_TRUE(del[0].multiple);
}

}  // namespace
}  // namespace gigakv::server
