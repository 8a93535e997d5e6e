// Server family: PING, ECHO, TIME, DBSIZE, FLUSHDB, FLUSHALL, COMMAND, CONFIG, SHUTDOWN,
// LASTSAVE, DEBUG, MEMORY, FUNCTION/SCRIPT FLUSH. INFO lives in info.cc.
#include <malloc.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gigakv/glob.h"
#include "gigakv/numbers.h"
#include "gigakv/strings.h"
#include "server/aof.h"
#include "server/blocking.h"
#include "server/client_registry.h"
#include "server/client_state.h"
#include "server/command_keys.h"
#include "server/command_metadata.h"
#include "server/commands/args.h"
#include "server/commands/key_access.h"
#include "server/config.h"
#include "server/dispatcher.h"
#include "server/functions.h"
#include "server/keyspace.h"
#include "server/lifecycle.h"
#include "server/pubsub.h"
#include "server/settings.h"
#include "server/slowlog.h"
#include "server/snapshots.h"
#include "server/stats.h"
#include "server/transaction.h"
#include "spdlog/spdlog.h"

namespace gigakv::server {

bool ParseDbIndexOrReply(CommandContext& ctx, std::string_view text, int* db) {
  int64_t index;
  if (!ParseInt64(text, &index) || index < INT32_MIN || index > INT32_MAX) {
    ctx.reply.Error(errors::kNotInteger);
    return false;
  }
  if (index < 0 || index >= ctx.store.databases()) {
    ctx.reply.Error(errors::kDbIndexOutOfRange);
    return false;
  }
  *db = static_cast<int>(index);
  return true;
}

namespace {

// Replies a list of help lines as Redis's addReplyHelp does: a header line, the lines, and the
// standard HELP line.
void ReplyHelp(CommandContext& ctx, std::initializer_list<std::string_view> lines) {
  std::string container = AsciiUpper(ctx.arg(0));
  ctx.reply.ArrayHeader(static_cast<int64_t>(lines.size()) + 3);
  ctx.reply.SimpleString(
      StrCat(container, " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
  for (std::string_view line : lines) ctx.reply.SimpleString(line);
  ctx.reply.SimpleString("HELP");
  ctx.reply.SimpleString("    Prints this help.");
}

void CmdPing(CommandContext& ctx) {
  if (ctx.argc() > 2) {
    ReplyWrongArity(ctx.reply, "ping");
    return;
  }
  if (ctx.client.resp == 2 && IsSubscribed(ctx.client)) {
    // Subscribed mode (RESP2): in the shape of a message, so clients read it as one.
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk("pong");
    ctx.reply.Bulk(ctx.argc() == 2 ? ctx.arg(1) : std::string_view());
  } else if (ctx.argc() == 2) {
    ctx.reply.Bulk(ctx.arg(1));
  } else {
    ctx.reply.SimpleString("PONG");
  }
}

void CmdEcho(CommandContext& ctx) { ctx.reply.Bulk(ctx.arg(1)); }

void CmdTime(CommandContext& ctx) {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(std::to_string(tv.tv_sec));
  ctx.reply.Bulk(std::to_string(tv.tv_usec));
}

void CmdDbSize(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.store.DbSize(ctx.db())));
}

// FLUSHDB / FLUSHALL [ASYNC|SYNC]. Tables are detached under the shard locks; ASYNC frees them
// on the background thread, SYNC frees them before replying; without an argument,
// lazyfree-lazy-user-flush chooses, as in Redis. Sets *async; false after a syntax error reply.
bool ParseFlushModeOrReply(CommandContext& ctx, bool* async) {
  if (ctx.argc() > 2) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  if (ctx.argc() == 2 && !ArgIs(ctx.arg(1), "async") && !ArgIs(ctx.arg(1), "sync")) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  *async =
      ctx.argc() == 2 ? ArgIs(ctx.arg(1), "async") : ctx.settings().lazyfree_lazy_user_flush.get();
  return true;
}

// Publishes the flush of `scope` (FLUSHDB or FLUSHALL) right before it happens, with every
// shard locked, so that no write falls on the wrong side of it in the stream. The key probe
// tells WATCH which watched keys exist (only those change, as in Redis). Counts, as Redis does,
// one change per key removed (a flush of nothing counts none).
std::function<void()> PublishFlush(CommandContext& ctx, ChangeScope scope) {
  return [&ctx, scope] {
    const std::function<bool(int, std::string_view)> existed = [&](int db, std::string_view key) {
      return ctx.store.HasRecord(ctx.store.shard(ctx.store.ShardIndex(key)), db, key);
    };
    const bool one_db = scope == ChangeScope::kDatabase;
    uint64_t removed = 0;
    for (uint32_t i = 0; i < ctx.store.shard_count(); ++i) {
      Shard& shard = ctx.store.shard(i);
      for (int db = one_db ? ctx.db() : 0; db < (one_db ? ctx.db() + 1 : ctx.store.databases());
           ++db) {
        if (const KeyTable* table = shard.FindTable(db)) removed += table->size();
      }
    }
    PublishDatabaseChange(ctx, scope, ctx.db(), {one_db ? "FLUSHDB" : "FLUSHALL"}, existed,
                          removed);
  };
}

void CmdFlushDb(CommandContext& ctx) {
  bool async;
  if (!ParseFlushModeOrReply(ctx, &async)) return;
  Store::DetachedTables tables =
      ctx.store.FlushDb(ctx.db(), PublishFlush(ctx, ChangeScope::kDatabase));
  if (async) ctx.keyspace().FreeLater(std::move(tables));
  ctx.reply.Ok();
}

// As Redis's flushAllDataAndResetRDB: a background save in progress is stopped (its file would
// hold what was just removed), and with save points set the empty dataset is saved at once.
void CmdFlushAll(CommandContext& ctx) {
  bool async;
  if (!ParseFlushModeOrReply(ctx, &async)) return;
  ctx.snapshots().AbortBackgroundSave();
  Store::DetachedTables tables = ctx.store.FlushAll(PublishFlush(ctx, ChangeScope::kAllDatabases));
  if (async) ctx.keyspace().FreeLater(std::move(tables));
  // Logged on failure; Redis replies OK all the same.
  if (ctx.settings().has_save_points()) ctx.snapshots().Save().IgnoreError();
  ctx.reply.Ok();
}

// --- COMMAND -------------------------------------------------------------------------------

// A set of key spec flags ("RW access update") as simple strings.
void ReplyKeyFlags(protocol::ReplyBuilder& reply, std::string_view flags) {
  std::vector<std::string> names = SplitNonEmpty(flags, ' ');
  reply.SetHeader(static_cast<int64_t>(names.size()));
  for (const std::string& name : names) reply.SimpleString(name);
}

// A key spec's "begin_search" or "find_keys" map: its type, then its spec's integer fields.
void ReplySearchStep(protocol::ReplyBuilder& reply, std::string_view type,
                     std::initializer_list<std::pair<std::string_view, int>> fields) {
  reply.MapHeader(2);
  reply.Bulk("type");
  reply.Bulk(type);
  reply.Bulk("spec");
  reply.MapHeader(static_cast<int64_t>(fields.size()));
  for (const auto& [name, value] : fields) {
    reply.Bulk(name);
    reply.Integer(value);
  }
}

// One key spec as COMMAND INFO sends it: a map of notes (if any), flags, begin_search and
// find_keys.
void ReplyKeySpec(protocol::ReplyBuilder& reply, const KeySpec& key_spec) {
  reply.MapHeader(key_spec.notes.empty() ? 3 : 4);
  if (!key_spec.notes.empty()) {
    reply.Bulk("notes");
    reply.Bulk(key_spec.notes);
  }
  reply.Bulk("flags");
  ReplyKeyFlags(reply, key_spec.flags);
  reply.Bulk("begin_search");
  switch (key_spec.begin.type) {
    case BeginSearch::Type::kIndex:
      ReplySearchStep(reply, "index", {{"index", key_spec.begin.index}});
      break;
    case BeginSearch::Type::kKeyword:
      reply.MapHeader(2);
      reply.Bulk("type");
      reply.Bulk("keyword");
      reply.Bulk("spec");
      reply.MapHeader(2);
      reply.Bulk("keyword");
      reply.Bulk(key_spec.begin.keyword);
      reply.Bulk("startfrom");
      reply.Integer(key_spec.begin.index);
      break;
    case BeginSearch::Type::kUnknown:
      ReplySearchStep(reply, "unknown", {});
      break;
  }
  reply.Bulk("find_keys");
  const FindKeys& find = key_spec.find;
  switch (find.type) {
    case FindKeys::Type::kRange:
      ReplySearchStep(
          reply, "range",
          {{"lastkey", find.last_key}, {"keystep", find.key_step}, {"limit", find.limit}});
      break;
    case FindKeys::Type::kKeynum:
      ReplySearchStep(reply, "keynum",
                      {{"keynumidx", find.keynum_index},
                       {"firstkey", find.first_key},
                       {"keystep", find.key_step}});
      break;
    case FindKeys::Type::kUnknown:
      ReplySearchStep(reply, "unknown", {});
      break;
  }
}

// Writes a list of metadata words as a set of simple strings (or bulk strings).
void ReplyWordSet(protocol::ReplyBuilder& reply, const std::vector<std::string_view>& words,
                  bool bulk = false) {
  reply.SetHeader(static_cast<int64_t>(words.size()));
  for (std::string_view word : words) {
    if (bulk) {
      reply.Bulk(word);
    } else {
      reply.SimpleString(word);
    }
  }
}

void ReplyCommandInfo(CommandContext& ctx, const CommandSpec& spec) {
  const CommandMetadata& metadata = *spec.metadata;
  ctx.reply.ArrayHeader(10);
  ctx.reply.Bulk(spec.name);
  ctx.reply.Integer(spec.arity);
  ReplyWordSet(ctx.reply, metadata.flags);
  ctx.reply.Integer(spec.first_key);
  ctx.reply.Integer(spec.last_key);
  ctx.reply.Integer(spec.key_step);
  ReplyWordSet(ctx.reply, metadata.acl_categories);
  ReplyWordSet(ctx.reply, metadata.tips, /*bulk=*/true);
  ctx.reply.SetHeader(static_cast<int64_t>(metadata.key_specs.size()));
  for (const KeySpec& key_spec : metadata.key_specs) ReplyKeySpec(ctx.reply, key_spec);
  auto subs = ctx.commands().Subcommands(spec.name);
  if (subs.empty()) {
    ctx.reply.SetHeader(0);  // As Redis 7.0 sends it: "~0" in RESP3 for a plain command.
  } else {
    ctx.reply.ArrayHeader(static_cast<int64_t>(subs.size()));
    for (const CommandSpec* sub : subs) ReplyCommandInfo(ctx, *sub);
  }
}

void ReplyCommandDocs(CommandContext& ctx, const CommandSpec& spec) {
  auto subs = ctx.commands().Subcommands(spec.name);
  const CommandMetadata& metadata = *spec.metadata;
  const std::vector<ArgumentDoc>& arguments = metadata.arguments;
  // Redis documents a few commands (MONITOR) without a complexity.
  const bool has_complexity = !metadata.complexity.empty();
  const bool deprecated = !metadata.deprecated_since.empty();
  const bool replaced = !metadata.replaced_by.empty();
  const bool history = !metadata.history.empty();
  ctx.reply.MapHeader(3 + (has_complexity ? 1 : 0) + (metadata.doc_flags.empty() ? 0 : 1) +
                      (deprecated ? 1 : 0) + (replaced ? 1 : 0) + (history ? 1 : 0) +
                      (arguments.empty() ? 0 : 1) + (subs.empty() ? 0 : 1));
  ctx.reply.Bulk("summary");
  ctx.reply.Bulk(metadata.summary);
  ctx.reply.Bulk("since");
  ctx.reply.Bulk(metadata.since);
  ctx.reply.Bulk("group");
  ctx.reply.Bulk(metadata.group);
  if (has_complexity) {
    ctx.reply.Bulk("complexity");
    ctx.reply.Bulk(metadata.complexity);
  }
  if (!metadata.doc_flags.empty()) {
    ctx.reply.Bulk("doc_flags");
    ReplyWordSet(ctx.reply, metadata.doc_flags);
  }
  if (deprecated) {
    ctx.reply.Bulk("deprecated_since");
    ctx.reply.Bulk(metadata.deprecated_since);
  }
  if (replaced) {
    ctx.reply.Bulk("replaced_by");
    ctx.reply.Bulk(metadata.replaced_by);
  }
  if (history) {
    ctx.reply.Bulk("history");
    ctx.reply.SetHeader(static_cast<int64_t>(metadata.history.size()));
    for (const auto& [version, change] : metadata.history) {
      ctx.reply.ArrayHeader(2);
      ctx.reply.Bulk(version);
      ctx.reply.Bulk(change);
    }
  }
  if (!arguments.empty()) {
    ctx.reply.Bulk("arguments");
    ReplyArguments(ctx.reply, arguments);
  }
  if (!subs.empty()) {
    ctx.reply.Bulk("subcommands");
    ctx.reply.MapHeader(static_cast<int64_t>(subs.size()));
    for (const CommandSpec* sub : subs) {
      ctx.reply.Bulk(sub->name);
      ReplyCommandDocs(ctx, *sub);
    }
  }
}

std::vector<const CommandSpec*> TopLevelCommands(const CommandTable& table) {
  std::vector<const CommandSpec*> result;
  for (const CommandSpec* spec : table.all()) {
    if (spec->name.find('|') == std::string_view::npos) result.push_back(spec);
  }
  return result;
}

// Bare COMMAND. With arguments the dispatcher runs the subcommand (COMMAND COUNT is
// command|count, with its own arity and counters, as in Redis).
void CmdCommand(CommandContext& ctx) {
  auto top = TopLevelCommands(ctx.commands());
  ctx.reply.ArrayHeader(static_cast<int64_t>(top.size()));
  for (const CommandSpec* spec : top) ReplyCommandInfo(ctx, *spec);
}

void CmdCommandCount(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(TopLevelCommands(ctx.commands()).size()));
}

// A command by name, "container|sub" naming a subcommand (as COMMAND INFO and DOCS accept).
const CommandSpec* FindCommandOrSubcommand(CommandContext& ctx, std::string_view name) {
  size_t bar = name.find('|');
  if (bar == std::string_view::npos) return ctx.commands().Find(name);
  const CommandSpec* container = ctx.commands().Find(name.substr(0, bar));
  if (container == nullptr) return nullptr;
  return ctx.commands().FindSub(container->name, name.substr(bar + 1));
}

void CmdCommandInfo(CommandContext& ctx) {
  if (ctx.argc() == 2) {
    CmdCommand(ctx);
    return;
  }
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argc() - 2));
  for (size_t i = 2; i < ctx.argc(); ++i) {
    const CommandSpec* spec = FindCommandOrSubcommand(ctx, ctx.arg(i));
    if (spec == nullptr) {
      ctx.reply.Null();
    } else {
      ReplyCommandInfo(ctx, *spec);
    }
  }
}

void CmdCommandDocs(CommandContext& ctx) {
  std::vector<const CommandSpec*> specs;
  if (ctx.argc() == 2) {
    specs = TopLevelCommands(ctx.commands());
  } else {
    for (size_t i = 2; i < ctx.argc(); ++i) {
      if (const CommandSpec* spec = FindCommandOrSubcommand(ctx, ctx.arg(i))) specs.push_back(spec);
    }
  }
  ctx.reply.MapHeader(static_cast<int64_t>(specs.size()));
  for (const CommandSpec* spec : specs) {
    ctx.reply.Bulk(spec->name);
    ReplyCommandDocs(ctx, *spec);
  }
}

void CmdCommandList(CommandContext& ctx) {
  std::string pattern;
  if (ctx.argc() == 5 && ArgIs(ctx.arg(2), "filterby") && ArgIs(ctx.arg(3), "pattern")) {
    pattern = std::string(ctx.arg(4));
  } else if (ctx.argc() == 5 && ArgIs(ctx.arg(2), "filterby") &&
             (ArgIs(ctx.arg(3), "aclcat") || ArgIs(ctx.arg(3), "module"))) {
    std::vector<std::string_view> names;
    if (ArgIs(ctx.arg(3), "aclcat")) {
      for (const CommandSpec* spec : ctx.commands().all()) {
        for (std::string_view category : spec->metadata->acl_categories) {
          if (EqualsIgnoreCase(category.substr(1), ctx.arg(4))) {  // "@read" for "read".
            names.push_back(spec->name);
            break;
          }
        }
      }
    }
    ctx.reply.ArrayHeader(static_cast<int64_t>(names.size()));
    for (std::string_view name : names) ctx.reply.Bulk(name);
    return;
  } else if (ctx.argc() != 2) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  std::vector<std::string_view> names;
  for (const CommandSpec* spec : ctx.commands().all()) {
    if (pattern.empty() || GlobMatch(pattern, spec->name, /*nocase=*/true)) {
      names.push_back(spec->name);
    }
  }
  ctx.reply.ArrayHeader(static_cast<int64_t>(names.size()));
  for (std::string_view name : names) ctx.reply.Bulk(name);
}

// COMMAND GETKEYS / GETKEYSANDFLAGS: the keys of the full command after the subcommand name.
bool CommandKeyUsesOrReply(CommandContext& ctx, std::vector<std::string_view>* args,
                           std::vector<KeyUse>* uses) {
  args->assign(ctx.args.begin() + 2, ctx.args.end());
  const CommandSpec* spec = ctx.commands().Find((*args)[0]);
  if (spec != nullptr && spec->handler == nullptr && args->size() >= 2) {
    spec = ctx.commands().FindSub(spec->name, (*args)[1]);  // OBJECT ENCODING key...
  }
  if (spec == nullptr) {
    ctx.reply.Error("ERR Invalid command specified");
    return false;
  }
  if (!CommandHasKeys(*spec)) {
    ctx.reply.Error("ERR The command has no key arguments");  // Checked first, as Redis.
    return false;
  }
  size_t argc = args->size();
  if ((spec->arity > 0 && argc != static_cast<size_t>(spec->arity)) ||
      (spec->arity < 0 && argc < static_cast<size_t>(-spec->arity))) {
    ctx.reply.Error("ERR Invalid number of arguments specified for command");
    return false;
  }
  std::string_view error;
  if (!FindKeyUses(*spec, *args, uses, &error)) {
    ctx.reply.Error(error);
    return false;
  }
  return true;
}

void CmdCommandGetKeys(CommandContext& ctx) {
  std::vector<std::string_view> args;
  std::vector<KeyUse> uses;
  if (!CommandKeyUsesOrReply(ctx, &args, &uses)) return;
  ctx.reply.ArrayHeader(static_cast<int64_t>(uses.size()));
  for (const KeyUse& use : uses) ctx.reply.Bulk(args[use.position]);
}

void CmdCommandGetKeysAndFlags(CommandContext& ctx) {
  std::vector<std::string_view> args;
  std::vector<KeyUse> uses;
  if (!CommandKeyUsesOrReply(ctx, &args, &uses)) return;
  ctx.reply.ArrayHeader(static_cast<int64_t>(uses.size()));
  for (const KeyUse& use : uses) {
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(args[use.position]);
    ReplyKeyFlags(ctx.reply, use.flags);
  }
}

void CmdCommandHelp(CommandContext& ctx) {
  ReplyHelp(ctx,
            {"(no subcommand)", "    Return details about all Redis commands.", "COUNT",
             "    Return the total number of commands in this Redis server.", "LIST",
             "    Return a list of all commands in this Redis server.", "INFO [<command-name> ...]",
             "    Return details about multiple Redis commands.",
             "    If no command names are given, documentation details for all",
             "    commands are returned.", "DOCS [<command-name> ...]",
             "    Return documentation details about multiple Redis commands.",
             "    If no command names are given, documentation details for all",
             "    commands are returned.", "GETKEYS <full-command>",
             "    Return the keys from a full Redis command.", "GETKEYSANDFLAGS <full-command>",
             "    Return the keys and the access flags from a full Redis command."});
}

// COMMAND with no subcommand lists everything; otherwise it dispatches like a container.
// --- CONFIG --------------------------------------------------------------------------------

void CmdConfigGet(CommandContext& ctx) {
  std::vector<std::pair<std::string, std::string>> matches;
  auto add = [&](std::string name, std::string value) {
    for (const auto& existing : matches) {
      if (EqualsIgnoreCase(existing.first, name)) return;
    }
    matches.emplace_back(std::move(name), std::move(value));
  };
  for (size_t i = 2; i < ctx.argc(); ++i) {
    std::string_view pattern = ctx.arg(i);
    if (pattern.find_first_of("*?[") == std::string_view::npos) {
      // An exact name is echoed as the client spelled it, like Redis does.
      if (FindDirective(pattern) != nullptr) {
        add(std::string(pattern), ctx.config().Get(pattern));
      }
      continue;
    }
    for (auto& [name, value] : ctx.config().Match(pattern)) add(name, value);
  }
  ctx.reply.MapHeader(static_cast<int64_t>(matches.size()));
  for (const auto& [name, value] : matches) {
    ctx.reply.Bulk(name);
    ctx.reply.Bulk(value);
  }
}

void CmdConfigSet(CommandContext& ctx) {
  if (ctx.argc() % 2 != 0) {
    ctx.reply.Error(errors::kSyntax);  // An odd number of name/value words, as Redis says.
    return;
  }
  Config& config = ctx.config();
  std::vector<std::pair<std::string, std::string>> previous;
  // Check names and duplicates first so nothing changes on those errors.
  for (size_t i = 2; i < ctx.argc(); i += 2) {
    std::string name = AsciiLower(ctx.arg(i));
    if (FindDirective(name) == nullptr) {
      ctx.reply.Error(FormatText(errors::kConfigSetUnknown, {ctx.arg(i)}));
      return;
    }
    for (size_t j = 2; j < i; j += 2) {
      if (EqualsIgnoreCase(ctx.arg(j), name)) {
        ctx.reply.Error(FormatText(errors::kConfigSetDuplicate, {ctx.arg(i)}));
        return;
      }
    }
  }
  // Redis's protected configs: where files are written, unless enable-protected-configs allows.
  for (size_t i = 2; i < ctx.argc(); i += 2) {
    std::string name = AsciiLower(ctx.arg(i));
    if ((name == "dir" || name == "dbfilename") &&
        !Dispatcher::ProtectedActionAllowed(ctx.settings().enable_protected_configs.get(),
                                            ctx.client)) {
      ctx.reply.Error(
          FormatText(errors::kConfigSetFailed, {ctx.arg(i), "can't set protected config"}));
      return;
    }
  }
  auto words = [](std::string_view name, std::string_view value) {
    // Multi-word directives (bind, save, client-output-buffer-limit...) take one quoted value.
    // Redis splits save's at every single space, so a stray space makes an empty (invalid) word.
    if (name == "save") {
      std::vector<std::string> split;
      size_t start = 0;
      while (!value.empty()) {
        size_t space = value.find(' ', start);
        split.emplace_back(value.substr(start, space - start));
        if (space == std::string_view::npos) break;
        start = space + 1;
      }
      return split;
    }
    if (IsMultiWordDirective(name)) return SplitNonEmpty(value, ' ');
    return std::vector<std::string>{std::string(value)};
  };
  // Restores what this command already changed: CONFIG SET is all or nothing. Through CONFIG
  // SET's own path, which replaces values (a config file's save lines would add up).
  auto roll_back = [&] {
    for (auto it = previous.rbegin(); it != previous.rend(); ++it) {
      (void)config.Set(it->first, words(it->first, it->second), /*from_config_set=*/true);
    }
    // Applying each restored value also reloads the server's Settings.
    for (const auto& [name, value] : previous) (void)config.ApplyChange(name);
  };
  for (size_t i = 2; i < ctx.argc(); i += 2) {
    std::string name = AsciiLower(ctx.arg(i));
    std::string old_value = config.Get(name);
    absl::Status status = config.Set(name, words(name, ctx.arg(i + 1)), /*from_config_set=*/true);
    if (!status.ok()) {
      roll_back();
      ctx.reply.Error(
          FormatText(errors::kConfigSetFailed, {ctx.arg(i), FromAbsl(status.message())}));
      return;
    }
    previous.emplace_back(name, old_value);
  }
  for (size_t i = 0; i < previous.size(); ++i) {
    absl::Status status = config.ApplyChange(previous[i].first);
    if (!status.ok()) {
      roll_back();
      ctx.reply.Error(
          FormatText(errors::kConfigSetFailed, {previous[i].first, FromAbsl(status.message())}));
      return;
    }
  }
  ctx.reply.Ok();
}

void CmdConfigResetStat(CommandContext& ctx) {
  ctx.stats().Reset();
  ctx.keyspace().ResetStats();
  ctx.reply.Ok();
}

void CmdConfigRewrite(CommandContext& ctx) {
  if (ctx.config().config_file().empty()) {
    ctx.reply.Error(errors::kNoConfigFile);
    return;
  }
  absl::Status status = ctx.config().Rewrite();
  if (!status.ok()) {
    ctx.reply.Error(StrCat("ERR Rewriting config file: ", status.message()));
    return;
  }
  ctx.reply.Ok();
}

void CmdConfigHelp(CommandContext& ctx) {
  ReplyHelp(ctx, {"GET <pattern>",
                  "    Return parameters matching the glob-like <pattern> and their values.",
                  "SET <directive> <value>", "    Set the configuration <directive> to <value>.",
                  "RESETSTAT", "    Reset statistics reported by the INFO command.", "REWRITE",
                  "    Rewrite the configuration file."});
}

// --- SLOWLOG ------------------------------------------------------------------------------

void CmdSlowlogGet(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(FormatText(errors::kSubcommandSyntax, {ctx.arg(1), "SLOWLOG"}));
    return;
  }
  int64_t count = 10;
  if (ctx.argc() == 3) {
    if (!ParseInt64(ctx.arg(2), &count) || count < -1) {
      ctx.reply.Error("ERR count should be greater than or equal to -1");
      return;
    }
  }
  std::vector<SlowLogEntry> entries = ctx.slowlog().Get(count);
  ctx.reply.ArrayHeader(static_cast<int64_t>(entries.size()));
  for (const SlowLogEntry& entry : entries) {
    ctx.reply.ArrayHeader(6);
    ctx.reply.Integer(static_cast<int64_t>(entry.id));
    ctx.reply.Integer(entry.unix_seconds);
    ctx.reply.Integer(entry.duration_us);
    ctx.reply.ArrayHeader(static_cast<int64_t>(entry.args.size()));
    for (const std::string& arg : entry.args) ctx.reply.Bulk(arg);
    ctx.reply.Bulk(entry.client_addr);
    ctx.reply.Bulk(entry.client_name);
  }
}

void CmdSlowlogLen(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.slowlog().Len()));
}

void CmdSlowlogReset(CommandContext& ctx) {
  ctx.slowlog().Reset();
  ctx.reply.Ok();
}

void CmdSlowlogHelp(CommandContext& ctx) {
  ReplyHelp(ctx, {"GET [<count>]",
                  "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
                  "    Entries are made of:",
                  "    id, timestamp, time in microseconds, arguments array, client IP and port,",
                  "    client name", "LEN", "    Return the length of the slowlog.", "RESET",
                  "    Reset the slowlog."});
}

// --- SHUTDOWN, LASTSAVE, DEBUG, MEMORY, FUNCTION, SCRIPT ------------------------------------

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], as Redis 7.0: the final save (when save points
// are set or SAVE is given, unless NOSAVE) must succeed unless FORCE; a failed one leaves the
// server running. NOW changes nothing here (gigakv has no replicas to wait for).
void CmdShutdown(CommandContext& ctx) {
  bool nosave = false, save = false, force = false, abort = false, other = false;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    if (ArgIs(ctx.arg(i), "nosave")) {
      nosave = true;
    } else if (ArgIs(ctx.arg(i), "save")) {
      save = true;
    } else if (ArgIs(ctx.arg(i), "now")) {
      other = true;
    } else if (ArgIs(ctx.arg(i), "force")) {
      force = true;
    } else if (ArgIs(ctx.arg(i), "abort")) {
      abort = true;
    } else {
      return ctx.reply.Error(errors::kSyntax);
    }
  }
  if ((abort && (nosave || save || force || other)) || (nosave && save)) {
    return ctx.reply.Error(errors::kSyntax);
  }
  if (abort) return ctx.reply.Error("ERR No shutdown in progress.");
  absl::Status status = ctx.services.aof().PrepareShutdown(force);
  if (status.ok()) status = ctx.snapshots().PrepareShutdown(save, nosave);
  if (!status.ok() && !force) return ctx.reply.Error("ERR Errors trying to SHUTDOWN. Check logs.");
  // Like Redis, a successful SHUTDOWN sends no reply: the connection just closes.
  ctx.client.close_after_reply = true;
  ctx.lifecycle().RequestShutdown();
}

// ROLE: gigakv has no replication, so it is always a master without replicas, at offset 0.
void CmdRole(CommandContext& ctx) {
  ctx.reply.ArrayHeader(3);
  ctx.reply.Bulk("master");
  ctx.reply.Integer(0);
  ctx.reply.ArrayHeader(0);
}

// MONITOR: from now on the client gets a line for every command any client runs
// (ClientRegistry::FeedMonitors) and may run no command that reads or writes keys. Ignored, without
// a reply, when it already monitors; refused inside MULTI and for in-process clients, which expect
// one reply per command (Redis's DENY BLOCKING clients). RESET or closing ends it.
void CmdMonitor(CommandContext& ctx) {
  if (ctx.client.in_exec || !ctx.client.has_outbox()) {
    ctx.reply.Error(errors::kMonitorDenyBlocking);
    return;
  }
  if (ctx.client.monitor.load()) return;
  std::shared_ptr<ClientState> client = ctx.clients().FindClient(ctx.client.id);
  if (client == nullptr) {
    ctx.reply.Error(errors::kMonitorDenyBlocking);
    return;
  }
  ctx.reply.Ok();
  ctx.clients().AddMonitor(client);
}

// WAIT numreplicas timeout: the number of replicas that acknowledged the client's writes, which
// is always 0, as gigakv has no replicas. As Redis answers without replicas: at once when
// numreplicas <= 0 or the client cannot block (inside MULTI); otherwise once the timeout (ms,
// 0 = forever) passes or CLIENT UNBLOCK ends the wait.
void CmdWait(CommandContext& ctx) {
  int64_t numreplicas;
  if (!ParseInt64(ctx.args[1], &numreplicas)) {
    ctx.reply.Error(errors::kNotInteger);
    return;
  }
  int64_t deadline_ms;
  if (!ParseMillisecondTimeoutOrReply(ctx, ctx.args[2], &deadline_ms)) return;
  constexpr int64_t kAcknowledgingReplicas = 0;
  if (numreplicas <= kAcknowledgingReplicas || !BlockWithoutKeys(ctx, deadline_ms)) {
    ctx.reply.Integer(kAcknowledgingReplicas);
  }
}

// DEBUG POPULATE count [prefix] [size]: string keys prefix:0 .. prefix:count-1 (prefix "key")
// holding "value:<n>", zero-padded or cut to `size` bytes when it is given; keys that exist are
// left alone. Unlike Redis, which does not propagate them, each key created is logged as a SET,
// so it survives a restart.
void DebugPopulate(CommandContext& ctx) {
  int64_t count = 0;
  int64_t size = 0;
  // As Redis's getPositiveLongFromObjectOrReply: one error for text and negatives alike.
  if (!ParseIntAtLeastOrReply(ctx, ctx.arg(2), 0, errors::kMustBePositive, &count)) return;
  if (ctx.argc() == 5 &&
      !ParseIntAtLeastOrReply(ctx, ctx.arg(4), 0, errors::kMustBePositive, &size)) {
    return;
  }
  if (count > 0 && size > ctx.settings().proto_max_bulk_len.get()) {  // gigakv's own limit.
    ctx.reply.Error(errors::kStringTooLong);
    return;
  }
  const std::string_view prefix = ctx.argc() >= 4 ? ctx.arg(3) : std::string_view("key");
  std::string key;
  std::string value;
  for (int64_t n = 0; n < count; ++n) {
    std::string number = std::to_string(n);
    key.assign(prefix).append(":").append(number);
    value.assign("value:").append(number);
    if (size > 0) value.resize(static_cast<size_t>(size), '\0');
    WithKey(ctx, key, Lookup::kWrite, [&](KeyAccess& access) {
      if (access.exists()) return;
      PutString(ctx, access, value, /*expire_ms=*/0);
      // Redis counts no change for DEBUG POPULATE, and notifies only "new" (PutString's).
      PublishStringSet(ctx, access, kNoEvent, /*dirty=*/0);
    });
  }
  ctx.reply.Ok();
}

// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save, empty the dataset, load the file back (MERGE
// lets loaded keys replace those kept by NOFLUSH).
void DebugReload(CommandContext& ctx) {
  bool merge = false, flush = true, save = true;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (ArgIs(ctx.arg(i), "merge")) {
      merge = true;
    } else if (ArgIs(ctx.arg(i), "noflush")) {
      flush = false;
    } else if (ArgIs(ctx.arg(i), "nosave")) {
      save = false;
    } else {
      return ctx.reply.Error(
          "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
    }
  }
  if (ctx.snapshots().loading() || ctx.services.aof().loading()) {
    return ctx.reply.Error(errors::kLoading);
  }
  // Nothing runs meanwhile: the function libraries are emptied and loaded again too, and their
  // Lua state is used only under the gate.
  std::optional<TransactionGate::ExclusiveScope> exclusive;
  if (!TransactionGate::ThisThreadIsExclusive()) exclusive.emplace(ctx.transaction_gate());
  if (save && !ctx.snapshots().Save().ok()) return ctx.reply.Error("ERR");
  // Not published: the dataset comes back as it was, so the change stream (the log, WATCH) has
  // nothing to record.
  if (flush) {
    ctx.keyspace().FreeLater(ctx.store.FlushAll());
    ctx.functions().Flush();  // Redis's emptyData empties the libraries too.
  }
  if (absl::Status status = ctx.snapshots().Load(/*replace_existing=*/merge); !status.ok()) {
    spdlog::warn("{}", std::string(status.message()));
    return ctx.reply.Error("ERR Error trying to load the RDB dump");
  }
  spdlog::warn("DB reloaded by DEBUG RELOAD");
  ctx.reply.Ok();
}

// DEBUG LOADAOF: write the log out, empty the dataset and load the append-only files again.
// A load that fails midway leaves a dataset that is not the files': the server exits, as Redis.
void DebugLoadAof(CommandContext& ctx) {
  // Inside EXEC the transaction's earlier effects would reach the reopened log after the
  // reload, though the reloaded dataset lacks them.
  if (ctx.client.in_exec) return ctx.reply.Error("ERR DEBUG LOADAOF is not allowed in MULTI");
  TransactionGate::ExclusiveScope exclusive(ctx.transaction_gate());
  bool started = false;
  absl::Status status = ctx.services.aof().Reload(&started, [&ctx] { ctx.functions().Flush(); });
  if (!started) return ctx.reply.Error(StrCat("ERR ", status.message()));
  if (!status.ok()) {
    spdlog::critical("DEBUG LOADAOF failed: {}", std::string(status.message()));
    spdlog::shutdown();
    std::_Exit(1);
  }
  spdlog::warn("Append Only File loaded by DEBUG LOADAOF");
  ctx.reply.Ok();
}

void CmdDebug(CommandContext& ctx) {
  if (ArgIs(ctx.arg(1), "populate") && ctx.argc() >= 3 && ctx.argc() <= 5) {
    DebugPopulate(ctx);
    return;
  }
  if (ArgIs(ctx.arg(1), "help")) {
    ReplyHelp(ctx,
              {"POPULATE <count> [<prefix>] [<size>]",
               "    Create <count> string keys named key:<num>. If <prefix> is specified then",
               "    it is used instead of the 'key' prefix. A key that already exists is",
               "    left alone.", "SLEEP <seconds>",
               "    Stop the server for <seconds>. Decimals allowed.", "SET-ACTIVE-EXPIRE <0|1>",
               "    Setting it to 0 disables expiring keys in background when they are not "
               "accessed (otherwise the Redis behavior). Setting it to 1 reenables back the "
               "default."});
    return;
  }
  if (ArgIs(ctx.arg(1), "sleep") && ctx.argc() == 3) {
    double seconds;
    if (!ParseDouble(ctx.arg(2), &seconds)) {
      ctx.reply.Error(errors::kNotFloat);
      return;
    }
    if (seconds > 0)
      std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6)));
    ctx.reply.Ok();
    return;
  }
  if (ArgIs(ctx.arg(1), "reload")) {
    DebugReload(ctx);
    return;
  }
  if (ArgIs(ctx.arg(1), "loadaof") && ctx.argc() == 2) {
    DebugLoadAof(ctx);
    return;
  }
  if (ArgIs(ctx.arg(1), "set-active-expire") && ctx.argc() == 3) {
    int64_t enabled;
    if (!ParseIntOrReply(ctx, ctx.arg(2), &enabled)) return;
    ctx.keyspace().set_active_expire_enabled(enabled != 0);
    ctx.reply.Ok();
    return;
  }
  ReplySubcommandSyntaxError(ctx);
}

void CmdMemoryUsage(CommandContext& ctx) {
  // [SAMPLES count]..., checked before the key is looked up, as Redis does. gigakv knows each
  // value's size exactly, so the count changes nothing.
  for (size_t i = 3; i < ctx.argc(); i += 2) {
    if (!ArgIs(ctx.arg(i), "samples") || i + 1 >= ctx.argc()) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
    int64_t samples;
    if (!ParseIntOrReply(ctx, ctx.arg(i + 1), &samples)) return;
    if (samples < 0) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  std::string_view key = ctx.arg(2);
  uint64_t hash = ctx.store.Hash(key);
  int db = ctx.db();
  ctx.store.WithShardOf(key, [&](Shard& shard) {
    uint32_t slot = ctx.store.FindLive(shard, db, key, hash);
    if (slot == KeyTable::kNoSlot) {
      ctx.reply.Null();
      return;
    }
    ctx.reply.Integer(static_cast<int64_t>(shard.Table(db).RecordMemory(slot)));
  });
}

void CmdMemoryStats(CommandContext& ctx) {
  Store::ArenaStats arena = ctx.store.GetArenaStats();
  int64_t used = ctx.keyspace().UsedMemory(/*refresh=*/true);
  int64_t startup = ctx.keyspace().startup_used_memory();
  int64_t dataset = static_cast<int64_t>(ctx.store.UsedMemory());
  int64_t overhead = std::max<int64_t>(0, used - dataset);
  int64_t keys = static_cast<int64_t>(arena.keys);
  std::vector<std::pair<std::string_view, int64_t>> fields = {
      {"peak.allocated", ctx.keyspace().peak_used_memory()},
      {"total.allocated", used},
      {"startup.allocated", startup},
      {"replication.backlog", 0},
      {"clients.slaves", 0},
      {"clients.normal", ctx.stats().connected_clients.load() * 16 * 1024},
      {"aof.buffer", ctx.services.aof().info().buffer_memory},
      {"overhead.total", overhead},
      {"keys.count", keys},
      {"keys.bytes-per-key", keys == 0 ? 0 : (used - startup) / keys},
      {"dataset.bytes", dataset},
      {"arena.used", static_cast<int64_t>(arena.arena_used)},
      {"arena.capacity", static_cast<int64_t>(arena.arena_capacity)},
      {"arena.dead-bytes", static_cast<int64_t>(arena.dead_bytes)},
      {"index.slots", static_cast<int64_t>(arena.index_slots)},
  };
  ctx.reply.MapHeader(static_cast<int64_t>(fields.size()));
  for (const auto& [name, value] : fields) {
    ctx.reply.Bulk(name);
    ctx.reply.Integer(value);
  }
}

void CmdMemoryPurge(CommandContext& ctx) {
  malloc_trim(0);
  ctx.reply.Ok();
}

void CmdMemoryHelp(CommandContext& ctx) {
  ReplyHelp(ctx, {"USAGE <key> [SAMPLES <count>]",
                  "    Return memory in bytes used by <key> and its value.", "STATS",
                  "    Return information about the memory usage of the server.", "PURGE",
                  "    Attempt to purge dirty pages for reclamation by the allocator."});
}

}  // namespace

void RegisterInfo(std::vector<CommandBinding>* table);  // info.cc

const std::vector<CommandBinding>& ServerCommands() {
  static const std::vector<CommandBinding> kCommands = [] {
    std::vector<CommandBinding> commands = {
        {"ping", CmdPing},
        {"echo", CmdEcho},
        {"time", CmdTime},
        {"dbsize", CmdDbSize},
        {"flushdb", CmdFlushDb},
        {"flushall", CmdFlushAll},
        {"command", CmdCommand},
        {"command|count", CmdCommandCount},
        {"command|info", CmdCommandInfo},
        {"command|docs", CmdCommandDocs},
        {"command|list", CmdCommandList},
        {"command|getkeys", CmdCommandGetKeys},
        {"command|getkeysandflags", CmdCommandGetKeysAndFlags},
        {"command|help", CmdCommandHelp},
        {"config", nullptr},
        {"config|get", CmdConfigGet},
        {"config|set", CmdConfigSet},
        {"config|resetstat", CmdConfigResetStat},
        {"config|rewrite", CmdConfigRewrite},
        {"config|help", CmdConfigHelp},
        {"shutdown", CmdShutdown},
        {"role", CmdRole},
        {"monitor", CmdMonitor},
        {"wait", CmdWait},
        {"debug", CmdDebug, kProtected},
        {"slowlog", nullptr},
        {"slowlog|get", CmdSlowlogGet},
        {"slowlog|len", CmdSlowlogLen},
        {"slowlog|reset", CmdSlowlogReset},
        {"slowlog|help", CmdSlowlogHelp},
        {"memory", nullptr},
        {"memory|usage", CmdMemoryUsage},
        {"memory|stats", CmdMemoryStats},
        {"memory|purge", CmdMemoryPurge},
        {"memory|help", CmdMemoryHelp},
    };
    RegisterInfo(&commands);
    return commands;
  }();
  return kCommands;
}

}  // namespace gigakv::server
