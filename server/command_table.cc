#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gigakv/strings.h"
#include "server/client_state.h"
#include "server/command.h"
#include "server/command_metadata.h"
#include "server/errors.h"
#include "server/keyspace.h"

namespace gigakv::server {
namespace {

// Lower-cases `name` into `buf` (of `size` bytes); empty if it does not fit.
std::string_view LowerName(std::string_view name, char* buf, size_t size) {
  if (name.size() > size) return {};
  for (size_t i = 0; i < name.size(); ++i) {
    auto c = static_cast<unsigned char>(name[i]);
    buf[i] = static_cast<char>(c + (static_cast<unsigned>(c - 'A') < 26u ? 32 : 0));
  }
  return std::string_view(buf, name.size());
}

// FNV-1a over a (lower-cased) command name: names are short and few, and the table is built from
// our own names, so a simple hash suffices.
uint64_t NameHash(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return hash;
}

bool NameLess(const std::pair<std::string, const CommandSpec*>& entry, std::string_view name) {
  return entry.first < name;
}

// The CommandFlag bit of each Redis flag name that gigakv acts on.
uint32_t FlagBits(const std::vector<std::string_view>& names) {
  static constexpr std::pair<std::string_view, uint32_t> kBits[] = {
      {"write", kWrite},
      {"readonly", kReadonly},
      {"denyoom", kDenyOom},
      {"admin", kAdmin},
      {"pubsub", kPubSub},
      {"noscript", kNoScript},
      {"loading", kLoading},
      {"stale", kStale},
      {"fast", kFast},
      {"blocking", kBlocking},
      {"no_auth", kNoAuth},
      {"skip_monitor", kSkipMonitor},
      {"skip_slowlog", kSkipSlowlog},
      {"no_multi", kNoMulti},
      {"allow_busy", kAllowBusy},
  };
  uint32_t bits = 0;
  for (std::string_view name : names) {
    for (const auto& [flag, bit] : kBits) {
      if (flag == name) bits |= bit;
    }
  }
  return bits;
}

[[noreturn]] void BadRow(std::string_view name, const char* what) {
  std::fprintf(stderr, "command table: %.*s %s\n", static_cast<int>(name.size()), name.data(),
               what);
  std::abort();
}

}  // namespace

int CommandContext::db() const { return client.db.load(std::memory_order_relaxed); }

std::vector<CommandBinding> AllCommandBindings() {
  std::vector<CommandBinding> rows;
  for (const auto* family :
       {&ServerCommands(), &ConnectionCommands(), &StringCommands(), &KeyspaceCommands(),
        &BitmapCommands(), &HllCommands(), &GeoCommands(), &StreamCommands(), &HashCommands(),
        &SetCommands(), &ListCommands(), &SortCommands(), &ZSetCommands(), &TransactionCommands(),
        &SnapshotCommands(), &MigrateCommands(), &PubSubCommands(), &ScriptingCommands()}) {
    rows.insert(rows.end(), family->begin(), family->end());
  }
  return rows;
}

CommandTable::CommandTable() {
  const std::vector<CommandBinding> rows = AllCommandBindings();
  specs_.reserve(rows.size());  // No reallocation: the lookups below point into it.
  for (const CommandBinding& row : rows) {
    const CommandMetadata* metadata = FindCommandMetadata(row.name);
    if (metadata == nullptr) BadRow(row.name, "has no metadata");
    if ((row.own_flags & ~(kBoundedWork | kProtected | kMayReplicate | kLoggedRead)) != 0) {
      BadRow(row.name, "has Redis flags");
    }
    specs_.push_back(CommandSpec{row.name, metadata->arity,
                                 FlagBits(metadata->flags) | row.own_flags, metadata->first_key,
                                 metadata->last_key, metadata->key_step, row.handler, metadata});
    all_.push_back(&specs_.back());
    sorted_.emplace_back(std::string(row.name), &specs_.back());
  }
  std::sort(sorted_.begin(), sorted_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 1; i < sorted_.size(); ++i) {
    if (sorted_[i - 1].first == sorted_[i].first) BadRow(sorted_[i].first, "has two rows");
  }
  size_t slots = 16;
  while (slots < all_.size() * 4) slots *= 2;
  name_slots_.resize(slots);
  name_mask_ = slots - 1;
  for (const CommandSpec* spec : all_) {
    uint32_t id = static_cast<uint32_t>(ids_.size());
    ids_.emplace(spec, id);
    if (spec->name.find('|') != std::string_view::npos) continue;
    // Family tables spell names in lower case (FindSub relies on it too).
    size_t i = NameHash(spec->name) & name_mask_;
    while (!name_slots_[i].lower_name.empty()) i = (i + 1) & name_mask_;
    name_slots_[i] = NameSlot{spec->name, spec, id};
  }
}

const CommandSpec* CommandTable::Find(std::string_view name, uint32_t* id) const {
  char buf[kMaxNameLength];
  std::string_view lower = LowerName(name, buf, sizeof(buf));
  if (lower.empty()) return nullptr;
  for (size_t i = NameHash(lower) & name_mask_;; i = (i + 1) & name_mask_) {
    const NameSlot& slot = name_slots_[i];
    if (slot.lower_name.empty()) return nullptr;
    if (slot.lower_name == lower) {
      if (id != nullptr) *id = slot.id;
      return slot.spec;
    }
  }
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
