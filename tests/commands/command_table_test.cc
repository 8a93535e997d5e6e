// CommandTable: the name lookup (every top-level command is found in any letter case, with its
// id; subcommand names and near-misses are not) and the table's build from the family rows and
// the command metadata.
#include <algorithm>
#include <set>
#include <string>

#include "gigakv/strings.h"
#include "gtest/gtest.h"
#include "server/command.h"
#include "server/command_metadata.h"

namespace gigakv::server {
namespace {

std::string MixedCase(std::string_view name) {
  std::string mixed(name);
  for (size_t i = 0; i < mixed.size(); i += 2) mixed[i] = AsciiUpper(mixed.substr(i, 1))[0];
  return mixed;
}

TEST(CommandTableTest, FindsEveryTopLevelCommandInAnyCase) {
  CommandTable table;
  size_t top_level = 0;
  for (const CommandSpec* spec : table.all()) {
    if (spec->name.find('|') != std::string_view::npos) continue;
    ++top_level;
    for (const std::string& name :
         {std::string(spec->name), AsciiUpper(spec->name), MixedCase(spec->name)}) {
      uint32_t id = ~0u;
      EXPECT_EQ(table.Find(name, &id), spec) << name;
      EXPECT_EQ(id, table.IdOf(spec)) << name;
    }
  }
  EXPECT_GT(top_level, 150u);  // All families registered.
}

TEST(CommandTableTest, UnknownNamesAreNotFound) {
  CommandTable table;
  for (std::string_view name :
       {"", "ge", "gett", "get ", "config|get", "CONFIG|GET", "g\xc3\xa9t", "GET_"}) {
    EXPECT_EQ(table.Find(name), nullptr) << name;
  }
  EXPECT_EQ(table.Find(std::string(1000, 'a')), nullptr);
  EXPECT_EQ(table.Find(std::string_view("get\0", 4)), nullptr);
}

// Every row names a command that has metadata, once; gigakv's own flags are the only flags a
// row adds; every hand-written entry (a command Redis 7.0 lacks) is bound; containers and
// subcommands come together.
TEST(CommandTableTest, EveryRowHasMetadataAndEveryNameIsBoundOnce) {
  std::set<std::string_view> bound;
  std::set<std::string_view> containers;
  for (const CommandBinding& row : AllCommandBindings()) {
    EXPECT_NE(FindCommandMetadata(row.name), nullptr) << row.name << " has no metadata";
    EXPECT_TRUE(bound.insert(row.name).second) << row.name << " is bound twice";
    EXPECT_EQ(row.own_flags & ~(kBoundedWork | kProtected | kMayReplicate | kLoggedRead), 0u)
        << row.name;
    if (row.handler == nullptr) containers.insert(row.name);
  }
  for (std::string_view name : bound) {
    size_t bar = name.find('|');
    if (bar != std::string_view::npos) {
      EXPECT_TRUE(bound.contains(name.substr(0, bar))) << name << " has no container row";
      containers.erase(name.substr(0, bar));
    }
  }
  EXPECT_TRUE(containers.empty()) << *containers.begin() << " has no handler nor subcommands";
  auto gigakv_only = ParseCommandTable(GigakvCommandTableText());
  ASSERT_TRUE(gigakv_only.ok()) << gigakv_only.status();
  for (const CommandMetadata& command : *gigakv_only) {
    EXPECT_TRUE(bound.contains(command.name)) << command.name << ": metadata without a row";
  }
}

// The dispatcher's plain fields are the metadata's, plus the row's own flags.
TEST(CommandTableTest, SpecsCopyTheMetadata) {
  CommandTable table;
  for (const CommandSpec* spec : table.all()) {
    ASSERT_NE(spec->metadata, nullptr) << spec->name;
    EXPECT_EQ(spec->metadata->name, spec->name);
    EXPECT_EQ(spec->arity, spec->metadata->arity) << spec->name;
    EXPECT_EQ(spec->first_key, spec->metadata->first_key) << spec->name;
    EXPECT_EQ(spec->last_key, spec->metadata->last_key) << spec->name;
    EXPECT_EQ(spec->key_step, spec->metadata->key_step) << spec->name;
    const auto& flags = spec->metadata->flags;
    auto has = [&](std::string_view flag) {
      return std::find(flags.begin(), flags.end(), flag) != flags.end();
    };
    EXPECT_EQ((spec->flags & kWrite) != 0, has("write")) << spec->name;
    EXPECT_EQ((spec->flags & kFast) != 0, has("fast")) << spec->name;
    EXPECT_EQ((spec->flags & kNoAuth) != 0, has("no_auth")) << spec->name;
  }
  EXPECT_EQ(table.Find("set")->flags, kWrite | kDenyOom | kBoundedWork);
  EXPECT_EQ(table.Find("get")->flags, kReadonly | kFast);
  EXPECT_EQ(table.Find("debug")->flags & kProtected, kProtected);
  EXPECT_EQ(table.FindSub("client", "setinfo")->arity, 4);
}

}  // namespace
}  // namespace gigakv::server
