// CommandTable's name lookup: every top-level command is found in any letter case, with its id;
// subcommand names and near-misses are not.
#include <string>

#include "gigakv/strings.h"
#include "gtest/gtest.h"
#include "server/command.h"
#include "server/command_key_specs.h"

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

// COMMAND GETKEYS/GETKEYSANDFLAGS find keys only through key specs: a command that takes keys
// and has none would report no keys at all.
TEST(CommandTableTest, EveryCommandWithKeysHasKeySpecs) {
  CommandTable table;
  for (const CommandSpec* spec : table.all()) {
    if (spec->first_key > 0) {
      EXPECT_FALSE(KeySpecsOf(spec->name).empty()) << spec->name;
    }
  }
}

}  // namespace
}  // namespace gigakv::server
