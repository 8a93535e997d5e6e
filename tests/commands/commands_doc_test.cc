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
    // Redis's own COMMAND DOCS has no complexity for MONITOR.
    EXPECT_EQ(doc->complexity.empty(), spec->name == "monitor") << spec->name;
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

#include "server/command_key_specs.h"

namespace gigakv::server {
namespace {

TEST(ArgumentTreesTest, ParsesEveryAttributeAndNesting) {
  auto parsed = ParseArgumentTrees(R"(
set
  key key #0
  condition oneof ^2.6.12 ?
    nx pure-token =NX
    xx pure-token =XX
  expiration oneof ?
    seconds integer =EX ^2.6.12
  pattern pattern =GET ? * +
client|kill
  ip:port string !2.8.12
ping
)");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 3u);
  const auto& [set_name, set] = (*parsed)[0];
  EXPECT_EQ(set_name, "set");
  ASSERT_EQ(set.size(), 4u);
  EXPECT_EQ(set[0].name, "key");
  EXPECT_EQ(set[0].key_spec_index, 0);
  EXPECT_EQ(set[1].type, "oneof");
  EXPECT_EQ(set[1].since, "2.6.12");
  EXPECT_TRUE(set[1].optional);
  EXPECT_FALSE(set[1].multiple);
  ASSERT_EQ(set[1].arguments.size(), 2u);
  EXPECT_EQ(set[1].arguments[1].token, "XX");
  EXPECT_EQ(set[1].arguments[1].key_spec_index, -1);
  ASSERT_EQ(set[2].arguments.size(), 1u);  // Back to level 1 after a deeper level.
  EXPECT_EQ(set[2].arguments[0].token, "EX");
  EXPECT_TRUE(set[3].optional && set[3].multiple && set[3].multiple_token);
  EXPECT_EQ((*parsed)[1].second.at(0).name, "ip:port");
  EXPECT_EQ((*parsed)[1].second.at(0).deprecated_since, "2.8.12");
  EXPECT_TRUE((*parsed)[2].second.empty());
  // "=*" is the token "*" (XADD's id), not the multiple flag.
  auto star = ParseArgumentTrees("xadd\n  id string =*\n");
  ASSERT_TRUE(star.ok());
  EXPECT_EQ((*star)[0].second.at(0).token, "*");
  EXPECT_FALSE((*star)[0].second.at(0).multiple);
}

TEST(ArgumentTreesTest, RejectsMalformedLines) {
  for (const char* text :
       {"  key key\n", "get\n    key key\n", "get\n   key key\n", "get\n  key\n",
        "get\n  key key %x\n", "get\n  key key #x\n", "get\n  key key ?x\n", "get extra\n"}) {
    EXPECT_FALSE(ParseArgumentTrees(text).ok()) << text;
  }
}

// The generated table parses, and each key argument of a gigakv command points at one of the
// command's key specs.
TEST(ArgumentTreesTest, RedisTreesCoverTheCommandsAndTheirKeySpecs) {
  ASSERT_TRUE(ParseArgumentTrees(RedisArgumentTreesText()).ok());
  CommandTable table;
  size_t with_tree = 0;
  for (const CommandSpec* spec : table.all()) {
    const std::vector<ArgumentDoc>* arguments = RedisArgumentsOf(spec->name);
    if (arguments == nullptr) continue;  // A command Redis 7.0 does not have (7.2's).
    ++with_tree;
    size_t key_specs = KeySpecsOf(spec->name).size();
    std::vector<const std::vector<ArgumentDoc>*> pending = {arguments};
    while (!pending.empty()) {
      const std::vector<ArgumentDoc>* level = pending.back();
      pending.pop_back();
      for (const ArgumentDoc& argument : *level) {
        // Every key has one (SORT's BY and GET patterns have one too).
        if (argument.type == "key") {
          EXPECT_GE(argument.key_spec_index, 0) << spec->name;
        }
        if (argument.key_spec_index >= 0) {
          EXPECT_LT(static_cast<size_t>(argument.key_spec_index), key_specs) << spec->name;
        }
        pending.push_back(&argument.arguments);
      }
    }
  }
  EXPECT_GT(with_tree, 190u);
  EXPECT_EQ(RedisArgumentsOf("no-such-command"), nullptr);
}

}  // namespace
}  // namespace gigakv::server
