#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gigakv/strings.h"
#include "server/command.h"
#include "server/errors.h"
#include "server/server.h"

namespace gigakv::server {
namespace {

// Lower-cases `name` into `buf` if it fits; command names are short.
std::string_view LowerName(std::string_view name, char* buf, size_t size) {
  if (name.size() > size) return {};
  for (size_t i = 0; i < name.size(); ++i) {
    buf[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
  }
  return std::string_view(buf, name.size());
}

bool NameLess(const std::pair<std::string, const CommandSpec*>& entry, std::string_view name) {
  return entry.first < name;
}

}  // namespace

int CommandContext::db() const { return client.db.load(std::memory_order_relaxed); }

CommandTable::CommandTable() {
  Add(ServerCommands());
  Add(ConnectionCommands());
  Add(StringCommands());
  Add(KeyspaceCommands());
  Add(BitmapCommands());
  Add(HashCommands());
  Add(SetCommands());
  Add(ListCommands());
  Add(SortCommands());
  Add(ZSetCommands());
  Add(TransactionCommands());
  std::sort(sorted_.begin(), sorted_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const CommandSpec* spec : all_) {
    ids_.emplace(spec, static_cast<uint32_t>(ids_.size()));
    if (spec->name.find('|') != std::string_view::npos) continue;
    NamedSpec entry{spec, ids_.at(spec)};
    by_name_.emplace(std::string(spec->name), entry);
    by_name_.emplace(AsciiUpper(spec->name), entry);
  }
}

void CommandTable::Add(const std::vector<CommandSpec>& family) {
  for (const CommandSpec& spec : family) {
    all_.push_back(&spec);
    sorted_.emplace_back(std::string(spec.name), &spec);
  }
}

const CommandSpec* CommandTable::Find(std::string_view name, uint32_t* id) const {
  auto found = by_name_.find(ToAbsl(name));
  if (found == by_name_.end()) {
    char buf[64];
    std::string_view lower = LowerName(name, buf, sizeof(buf));
    if (lower.empty()) return nullptr;
    found = by_name_.find(ToAbsl(lower));
    if (found == by_name_.end()) return nullptr;
  }
  if (id != nullptr) *id = found->second.id;
  return found->second.spec;
}

const CommandSpec* CommandTable::FindSub(std::string_view container, std::string_view sub) const {
  std::string full = AsciiLower(StrCat(container, "|", sub));
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), full, NameLess);
  if (it == sorted_.end() || it->first != full) return nullptr;
  return it->second;
}

std::vector<const CommandSpec*> CommandTable::Subcommands(std::string_view container) const {
  std::string prefix = AsciiLower(StrCat(container, "|"));
  std::vector<const CommandSpec*> result;
  for (auto it = std::lower_bound(sorted_.begin(), sorted_.end(), prefix, NameLess);
       it != sorted_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    result.push_back(it->second);
  }
  return result;
}

void ReplyUnknownSubcommand(CommandContext& ctx) {
  ctx.reply.Error(
      FormatText(errors::kUnknownSubcommand, {ctx.arg(1).substr(0, 128), AsciiUpper(ctx.arg(0))}));
}

void ReplySubcommandSyntaxError(CommandContext& ctx) {
  ctx.reply.Error(
      FormatText(errors::kSubcommandSyntax, {ctx.arg(1).substr(0, 128), AsciiUpper(ctx.arg(0))}));
}

void ReplyWrongArity(protocol::ReplyBuilder& reply, std::string_view name) {
  reply.Error(FormatText(errors::kWrongArity, {name}));
}

}  // namespace gigakv::server
