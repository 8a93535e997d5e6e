// The command metadata text (server/command_metadata.h): its parser, the generated and the
// hand-written texts, and docs/commands.md kept in step with them.
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "gigakv/strings.h"
#include "gtest/gtest.h"
#include "server/command.h"
#include "server/command_metadata.h"

#ifndef GIGAKV_SOURCE_DIR
#error "GIGAKV_SOURCE_DIR must be defined"
#endif

namespace gigakv::server {
namespace {

std::vector<CommandMetadata> ParseOrDie(std::string_view text) {
  auto parsed = ParseCommandTable(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *std::move(parsed) : std::vector<CommandMetadata>{};
}

// docs/commands.md lists every Redis 7.0 command once, with Redis's group, and says "yes"
// exactly for the commands gigakv's table binds.
TEST(CommandsDocTest, EveryRedisCommandHasOneRowMarkedYesExactlyWhenImplemented) {
  std::ifstream file(std::string(GIGAKV_SOURCE_DIR) + "/docs/commands.md");
  ASSERT_TRUE(file.good());
  struct Row {
    std::string group;
    std::string state;
  };
  std::map<std::string, Row> rows;
  for (std::string line; std::getline(file, line);) {
    // "| NAME | group | state | notes |"
    std::vector<std::string> cells = SplitNonEmpty(line, '|');
    if (cells.size() < 3 || !line.starts_with("| ")) continue;
    std::string name(StripWhitespace(cells[0]));
    if (name == "command" || name.starts_with("---")) continue;  // The table's header.
    EXPECT_TRUE(rows.emplace(AsciiLower(name), Row{std::string(StripWhitespace(cells[1])),
                                                   std::string(StripWhitespace(cells[2]))})
                    .second)
        << name << " has two rows";
  }
  CommandTable table;
  std::set<std::string> listed;
  for (const CommandMetadata& command : ParseOrDie(RedisCommandTableText())) {
    if (command.name.find('|') != std::string_view::npos) continue;
    std::string name(command.name);
    listed.insert(name);
    auto it = rows.find(name);
    ASSERT_NE(it, rows.end()) << "docs/commands.md has no row for " << name;
    EXPECT_EQ(it->second.group, command.group) << name;
    EXPECT_EQ(it->second.state == "yes", table.Find(name) != nullptr)
        << name << ": marked " << it->second.state;
  }
  EXPECT_GT(listed.size(), 230u);
  for (const auto& [name, row] : rows) {
    EXPECT_TRUE(listed.contains(name)) << name << " is not a Redis 7.0 command";
  }
}

TEST(CommandMetadataTest, ParsesEveryFieldAndAttribute) {
  std::vector<CommandMetadata> parsed = ParseOrDie(R"(
set -3 write,denyoom 1 1 1 @write,@string,@slow
  tips: nondeterministic_output,request_policy:all_shards
  key_spec: RW,access,update index 1 range 0 1 0 RW and ACCESS due to the optional `GET` argument
  summary: Set the string value of a key
  since: 1.0.0
  group: string
  complexity: O(1)
  doc_flags: deprecated,syscmd
  deprecated_since: 6.2.0
  replaced_by: "  spaced  "
  history: 2.6.12 Added the `EX`, `PX`, `NX` and `XX` options.
  history: 6.0.0 Added the `KEEPTTL` option.
  key key #0
  condition oneof ^2.6.12 ?
    nx pure-token =NX
    xx pure-token =XX
  expiration oneof ?
    seconds integer =EX ^2.6.12
  pattern pattern =GET ? * +

georadius -6 write,movablekeys 1 1 1 -
  key_spec: OW,update keyword STORE 6 range 0 1 0
  key_spec: RO,access unknown keynum 0 1 2
  key_spec: RO unknown unknown
  summary: "A container "
  since: 3.2.0
  group: geo
client|kill -3 - 0 0 0 @admin
  summary: Kill
  since: 2.4.0
  group: connection
  ip:port string !2.8.12
  empty_string pure-token =
)");
  ASSERT_EQ(parsed.size(), 3u);
  const CommandMetadata& set = parsed[0];
  EXPECT_EQ(set.name, "set");
  EXPECT_EQ(set.arity, -3);
  EXPECT_EQ(set.flags, (std::vector<std::string_view>{"write", "denyoom"}));
  EXPECT_EQ(set.first_key, 1);
  EXPECT_EQ(set.last_key, 1);
  EXPECT_EQ(set.key_step, 1);
  EXPECT_EQ(set.acl_categories, (std::vector<std::string_view>{"@write", "@string", "@slow"}));
  EXPECT_EQ(set.tips, (std::vector<std::string_view>{"nondeterministic_output",
                                                     "request_policy:all_shards"}));
  ASSERT_EQ(set.key_specs.size(), 1u);
  EXPECT_EQ(set.key_specs[0].flags, "RW access update");
  EXPECT_EQ(set.key_specs[0].begin.type, BeginSearch::Type::kIndex);
  EXPECT_EQ(set.key_specs[0].begin.index, 1);
  EXPECT_EQ(set.key_specs[0].find.type, FindKeys::Type::kRange);
  EXPECT_EQ(set.key_specs[0].notes, "RW and ACCESS due to the optional `GET` argument");
  EXPECT_EQ(set.summary, "Set the string value of a key");
  EXPECT_EQ(set.since, "1.0.0");
  EXPECT_EQ(set.group, "string");
  EXPECT_EQ(set.complexity, "O(1)");
  EXPECT_EQ(set.doc_flags, (std::vector<std::string_view>{"deprecated", "syscmd"}));
  EXPECT_EQ(set.deprecated_since, "6.2.0");
  EXPECT_EQ(set.replaced_by, "  spaced  ");
  ASSERT_EQ(set.history.size(), 2u);
  EXPECT_EQ(set.history[0].first, "2.6.12");
  EXPECT_EQ(set.history[1].second, "Added the `KEEPTTL` option.");
  ASSERT_EQ(set.arguments.size(), 4u);
  EXPECT_EQ(set.arguments[0].key_spec_index, 0);
  EXPECT_EQ(set.arguments[1].type, "oneof");
  EXPECT_EQ(set.arguments[1].since, "2.6.12");
  EXPECT_TRUE(set.arguments[1].optional);
  EXPECT_FALSE(set.arguments[1].multiple);
  ASSERT_EQ(set.arguments[1].arguments.size(), 2u);
  EXPECT_EQ(set.arguments[1].arguments[1].token, "XX");
  EXPECT_EQ(set.arguments[1].arguments[1].key_spec_index, -1);
  EXPECT_FALSE(set.arguments[1].token.has_value());
  ASSERT_EQ(set.arguments[2].arguments.size(), 1u);  // Back to level 1 after a deeper level.
  EXPECT_EQ(set.arguments[2].arguments[0].token, "EX");
  EXPECT_TRUE(set.arguments[3].optional && set.arguments[3].multiple &&
              set.arguments[3].multiple_token);

  const CommandMetadata& geo = parsed[1];
  EXPECT_TRUE(geo.acl_categories.empty());
  EXPECT_EQ(geo.summary, "A container ");
  ASSERT_EQ(geo.key_specs.size(), 3u);
  EXPECT_EQ(geo.key_specs[0].begin.type, BeginSearch::Type::kKeyword);
  EXPECT_EQ(geo.key_specs[0].begin.keyword, "STORE");
  EXPECT_EQ(geo.key_specs[0].begin.index, 6);
  EXPECT_TRUE(geo.key_specs[0].notes.empty());
  EXPECT_EQ(geo.key_specs[1].begin.type, BeginSearch::Type::kUnknown);
  EXPECT_EQ(geo.key_specs[1].find.type, FindKeys::Type::kKeynum);
  EXPECT_EQ(geo.key_specs[1].find.first_key, 1);
  EXPECT_EQ(geo.key_specs[1].find.key_step, 2);
  EXPECT_EQ(geo.key_specs[2].flags, "RO");
  EXPECT_EQ(geo.key_specs[2].find.type, FindKeys::Type::kUnknown);
  EXPECT_TRUE(geo.complexity.empty());
  EXPECT_TRUE(geo.arguments.empty());

  EXPECT_TRUE(parsed[2].flags.empty());
  ASSERT_EQ(parsed[2].arguments.size(), 2u);
  EXPECT_EQ(parsed[2].arguments[0].name, "ip:port");
  EXPECT_EQ(parsed[2].arguments[0].deprecated_since, "2.8.12");
  EXPECT_EQ(parsed[2].arguments[1].token, "");

  // "=*" is the token "*" (XADD's id), not the multiple flag.
  auto star = ParseOrDie(
      "xadd -5 - 1 1 1 -\n  summary: s\n  since: 5.0.0\n  group: stream\n"
      "  id string =*\n");
  ASSERT_EQ(star.size(), 1u);
  EXPECT_EQ(star[0].arguments.at(0).token, "*");
  EXPECT_FALSE(star[0].arguments.at(0).multiple);
}

TEST(CommandMetadataTest, RejectsMalformedText) {
  constexpr std::string_view kDocs = "  summary: s\n  since: 1.0.0\n  group: g\n";
  auto command = [&](std::string_view header, std::string_view more) {
    return StrCat(header, "\n", kDocs, more);
  };
  const std::string kGet = "get 2 readonly,fast 1 1 1 @read";
  const std::vector<std::string> bad = {
      "  key key\n",                                    // An argument without a command.
      "  summary: s\n",                                 // A field without a command.
      command("get 2 readonly,fast 1 1 @read", ""),     // A header field missing.
      command("get x readonly 1 1 1 @read", ""),        // A bad number.
      command("get 2 readonly,,fast 1 1 1 @read", ""),  // An empty list item.
      command("get 2 readonly fast 1 1 1 @read", ""),   // Too many header words.
      command("get  2 readonly 1 1 1 @read", ""),       // A doubled space.
      command(kGet, "    key key\n"),                   // A level skipped.
      command(kGet, "   key key\n"),                    // Odd indentation.
      command(kGet, "  key\n"),                         // An argument without a type.
      command(kGet, "  key key %x\n"),                  // An unknown attribute.
      command(kGet, "  key key #x\n"),                  // A bad key spec index.
      command(kGet, "  key key ?x\n"),                  // A flag with a value.
      command(kGet, "  key key ^\n"),                   // An empty version.
      command(kGet, "  color: red\n"),                  // An unknown field.
      command(kGet, "  summary:\n"),                    // A field without a value.
      command(kGet, "  since: 1.0 .0\n"),               // A word with a space.
      command(kGet, "  complexity: \"O(1)\n"),          // An unclosed quote.
      command(kGet, "  history: 6.0.0\n"),              // A history entry without a change.
      command(kGet, "  key_spec: RO index x range 0 1 0\n"),
      command(kGet, "  key_spec: RO index 1 range 0 1\n"),
      command(kGet, "  key_spec: RO index 1 ranges 0 1 0\n"),
      command(kGet, "  key_spec: RO start 1 range 0 1 0\n"),
      command(kGet, "  key_spec: RO keyword 1 range 0 1 0\n"),
      command(kGet, "  key_spec: - index 1 range 0 1 0\n"),  // A key spec without flags.
      command(kGet, "  key key\n  tips: a\n"),               // A field after the arguments.
      StrCat(kGet, "\n  summary: s\n  since: 1.0.0\n"),      // No group.
      StrCat(kGet, "\n  since: 1.0.0\n  group: g\nping -1 - 0 0 0 -\n", kDocs),  // No summary.
  };
  for (const std::string& text : bad) {
    EXPECT_FALSE(ParseCommandTable(text).ok()) << text;
  }
  EXPECT_TRUE(ParseCommandTable(command(kGet, "  key key #0\n")).ok());
}

// Both texts parse, name no command twice, and each key argument points at one of its
// command's key specs; a command with keys has key specs (COMMAND GETKEYS follows them).
TEST(CommandMetadataTest, TheTextsParseAndAgreeWithThemselves) {
  std::vector<CommandMetadata> redis = ParseOrDie(RedisCommandTableText());
  std::vector<CommandMetadata> gigakv = ParseOrDie(GigakvCommandTableText());
  EXPECT_GT(redis.size(), 360u);
  EXPECT_FALSE(gigakv.empty());
  std::set<std::string_view> names;
  for (const auto* list : {&redis, &gigakv}) {
    for (const CommandMetadata& command : *list) {
      EXPECT_TRUE(names.insert(command.name).second) << command.name;
      EXPECT_EQ(FindCommandMetadata(command.name)->summary, command.summary) << command.name;
      if (command.first_key > 0) {
        EXPECT_FALSE(command.key_specs.empty()) << command.name;
      }
      std::vector<const std::vector<ArgumentDoc>*> pending = {&command.arguments};
      while (!pending.empty()) {
        const std::vector<ArgumentDoc>* level = pending.back();
        pending.pop_back();
        for (const ArgumentDoc& argument : *level) {
          // Every key has one (SORT's BY and GET patterns have one too).
          if (argument.type == "key") {
            EXPECT_GE(argument.key_spec_index, 0) << command.name;
          }
          if (argument.key_spec_index >= 0) {
            EXPECT_LT(static_cast<size_t>(argument.key_spec_index), command.key_specs.size())
                << command.name;
          }
          pending.push_back(&argument.arguments);
        }
      }
    }
  }
  EXPECT_EQ(FindCommandMetadata("no-such-command"), nullptr);
  EXPECT_EQ(FindCommandMetadata("GET"), nullptr);  // Names are lower case.
}

}  // namespace
}  // namespace gigakv::server
