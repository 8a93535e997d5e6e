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
