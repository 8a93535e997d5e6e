// Scripting commands (Redis's eval.c and functions.c): EVAL, EVALSHA, EVAL_RO, EVALSHA_RO,
// SCRIPT LOAD/EXISTS/FLUSH/KILL/HELP, FCALL, FCALL_RO and FUNCTION LOAD/DELETE/FLUSH/DUMP/
// RESTORE/LIST/STATS/KILL/HELP. The script cache is server/scripting.h, the function libraries
// server/functions.h; the Lua states scripts and functions run in, with Redis's sandbox and
// conversions, server/lua_engine.h.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gigakv/change_stream.h"
#include "gigakv/glob.h"
#include "gigakv/sha1.h"
#include "gigakv/strings.h"
#include "server/aof.h"
#include "server/client_registry.h"
#include "server/client_state.h"
#include "server/command.h"
#include "server/commands/args.h"
#include "server/commands/key_access.h"
#include "server/dispatcher.h"
#include "server/errors.h"
#include "server/functions.h"
#include "server/keyspace.h"
#include "server/lua_engine.h"
#include "server/pubsub.h"
#include "server/scripting.h"
#include "server/snapshots.h"
#include "server/transaction.h"

namespace gigakv::server {
namespace {

// Redis 7.0's first line `#!lua [flags=<flag>,...]`. Without it a script runs in EVAL's
// compatibility mode (writes allowed, deny-oom commands refused while over maxmemory until it
// wrote); with it, the flags decide.
struct Shebang {
  bool present = false;
  bool no_writes = false;
  bool allow_oom = false;
};

bool ParseShebangOrReply(CommandContext& ctx, std::string_view body, Shebang* shebang) {
  if (!body.starts_with("#!")) return true;
  const size_t end = body.find('\n');
  if (end == std::string_view::npos) {
    ctx.reply.Error("ERR Invalid script shebang");
    return false;
  }
  shebang->present = true;
  std::vector<std::string_view> parts;
  for (absl::string_view part : absl::StrSplit(ToAbsl(body.substr(0, end)),
                                               absl::ByAnyChar(" \t\r\n\v\f"), absl::SkipEmpty())) {
    parts.emplace_back(part.data(), part.size());
  }
  if (parts.empty() || parts[0] != "#!lua") {
    ctx.reply.Error(
        StrCat("ERR Unexpected engine in script shebang: ", parts.empty() ? "#!" : parts[0]));
    return false;
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    if (!parts[i].starts_with("flags=")) {
      ctx.reply.Error(StrCat("ERR Unknown lua shebang option: ", parts[i]));
      return false;
    }
    const std::string_view flags = parts[i].substr(6);
    if (flags.empty()) continue;  // "flags=": none (an empty one between commas is an error).
    for (absl::string_view piece : absl::StrSplit(ToAbsl(flags), ',')) {
      const std::string_view flag(piece.data(), piece.size());
      if (flag == "no-writes") {
        shebang->no_writes = true;
      } else if (flag == "allow-oom") {
        shebang->allow_oom = true;
      } else if (flag != "allow-stale" && flag != "no-cluster" && flag != "allow-cross-slot-keys") {
        // allow-stale, no-cluster and allow-cross-slot-keys: accepted; gigakv has neither
        // replicas nor cluster mode for them to change anything.
        ctx.reply.Error(StrCat("ERR Unexpected flag in script shebang: ", flag));
        return false;
      }
    }
  }
  return true;
}

// A script with declared flags (a shebang's or a function's) is a write command unless
// no-writes, and a deny-oom one unless no-writes or allow-oom (Redis's scriptFlagsToCmdFlags), so
// outside EXEC the dispatcher's refusals apply to it first, with their generic texts. True when
// refused (replied).
bool RefusedAsCommandOrReply(CommandContext& ctx, uint32_t flags) {
  if (ctx.client.in_exec) return false;
  const bool writes = !(flags & kScriptNoWrites);
  if (writes && !(flags & kScriptAllowOom) && ctx.keyspace().OverMaxmemory()) {
    ctx.reply.Error(errors::kOom);
  } else if (writes && ctx.snapshots().writes_refused()) {
    ctx.reply.Error(errors::kMisconf);
  } else if (writes && ctx.services.aof().writes_refused()) {
    ctx.reply.Error(StrCat(errors::kMisconfAofPrefix, ctx.services.aof().last_error()));
  } else {
    return false;
  }
  return true;
}

// Redis's scriptPrepareForRun for a script with declared flags: a writing script is refused
// while the disk fails and by the _RO commands; without allow-oom (or no-writes) it may not
// start over maxmemory. True when it may run.
bool PrepareOrReply(CommandContext& ctx, uint32_t flags, bool read_only) {
  if (!(flags & kScriptNoWrites)) {
    if (ctx.snapshots().writes_refused()) {
      ctx.reply.Error(
          "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
          "persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only "
          "scripts.");
      return false;
    }
    if (ctx.services.aof().writes_refused()) {
      ctx.reply.Error(StrCat(
          "MISCONF Redis is configured to persist data to AOF, but it's currently unable to "
          "persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only "
          "scripts. AOF error: ",
          ctx.services.aof().last_error()));
      return false;
    }
    if (read_only) {
      ctx.reply.Error("ERR Can not execute a script with write flag using *_ro command.");
      return false;
    }
  }
  if (!(flags & (kScriptNoWrites | kScriptAllowOom)) && ctx.keyspace().OverMaxmemory()) {
    ctx.reply.Error(
        "OOM allow-oom flag is not set on the script, can not run it when used memory > "
        "'maxmemory'");
    return false;
  }
  return true;
}

// The keys and arguments of EVAL's form (numkeys at 2, then keys, then args) into `invocation`,
// or an error reply (false).
bool ParseKeysAndArgsOrReply(CommandContext& ctx, ScriptInvocation* invocation) {
  int64_t numkeys = 0;
  if (!absl::SimpleAtoi(ToAbsl(ctx.arg(2)), &numkeys)) {
    ctx.reply.Error(errors::kNotInteger);
    return false;
  }
  if (numkeys > static_cast<int64_t>(ctx.argc() - 3)) {
    ctx.reply.Error("ERR Number of keys can't be greater than number of args");
    return false;
  }
  if (numkeys < 0) {
    ctx.reply.Error("ERR Number of keys can't be negative");
    return false;
  }
  const absl::Span<const std::string_view> after(ctx.args.data() + 3, ctx.argc() - 3);
  invocation->keys = after.subspan(0, static_cast<size_t>(numkeys));
  invocation->args = after.subspan(static_cast<size_t>(numkeys));
  return true;
}

// Runs `invocation` as one unit: no other command runs meanwhile, its writes are one
// change-stream group and its messages reach other clients after it. `cache_body`: EVAL's
// body, cached once it compiled (as Redis caches only scripts that compile).
void RunScript(CommandContext& ctx, ScriptInvocation& invocation, bool cache_body) {
  // Announced before the gate is taken: threads that wait for it meanwhile can answer BUSY once
  // the script runs too long. Inside EXEC the transaction already holds the gate, the group
  // and the messages.
  TransactionGate::ScriptScope script_scope(ctx.transaction_gate());
  std::optional<TransactionGate::ExclusiveScope> exclusive;
  if (!ctx.client.in_exec) {
    exclusive.emplace(ctx.transaction_gate());
    Dispatcher::TimedBatch::Restart();  // The wait for the gate is not the script's time.
  }
  // A script this thread's engine compiled is in the cache (a SCRIPT FLUSH replaces the engine),
  // and its shebang was read then: EVALSHA runs it without looking at the cache.
  LuaEngine& engine = ThreadEngine(ctx.scripts().generation());
  Shebang shebang;
  std::shared_ptr<const std::string> cached;  // EVALSHA's body, while invocation.body views it.
  if (std::optional<uint32_t> known = engine.ScriptFlags(invocation.sha); known.has_value()) {
    shebang.present = (*known & kShebangPresent) != 0;
    shebang.no_writes = (*known & kScriptNoWrites) != 0;
    shebang.allow_oom = (*known & kScriptAllowOom) != 0;
  } else {
    if (!cache_body) {  // EVALSHA.
      cached = ctx.scripts().Find(invocation.sha);
      if (cached == nullptr) {
        ctx.reply.Error("NOSCRIPT No matching script. Please use EVAL.");
        return;
      }
      invocation.body = *cached;
    }
    if (!ParseShebangOrReply(ctx, invocation.body, &shebang)) return;
    std::string error;
    if (!engine.Compile(invocation.sha, invocation.body, &error)) {
      ctx.reply.Error(error);
      return;
    }
    if (cache_body) ctx.scripts().Add(std::string(invocation.sha), invocation.body);
    engine.SetScriptFlags(invocation.sha, (shebang.present ? kShebangPresent : 0u) |
                                              (shebang.no_writes ? uint32_t{kScriptNoWrites} : 0u) |
                                              (shebang.allow_oom ? uint32_t{kScriptAllowOom} : 0u));
  }
  if (shebang.present) {
    const uint32_t flags = (shebang.no_writes ? uint32_t{kScriptNoWrites} : 0u) |
                           (shebang.allow_oom ? uint32_t{kScriptAllowOom} : 0u);
    if (RefusedAsCommandOrReply(ctx, flags) || !PrepareOrReply(ctx, flags, invocation.read_only)) {
      return;
    }
    invocation.read_only = invocation.read_only || shebang.no_writes;
  } else {
    invocation.oom_at_start = ctx.keyspace().OverMaxmemory();
  }
  PublishHoldScope hold_messages(ctx.pubsub(), ctx.client);
  ChangeStream::Group effects(ctx.keyspace().changes());
  engine.Run(invocation);
}

// EVAL and EVALSHA skip the dispatcher's MONITOR line (skip_monitor): they show before the
// commands the script runs, whatever becomes of them, as in Redis.
void FeedMonitorsFirst(CommandContext& ctx) {
  if (ctx.clients().HasMonitors()) ctx.clients().FeedMonitors(ctx.client, ctx.args, nullptr);
}

void Eval(CommandContext& ctx, bool read_only) {
  FeedMonitorsFirst(ctx);
  const std::string sha = Sha1Hex(ctx.arg(1));
  ScriptInvocation invocation{ctx, sha, ctx.arg(1), {}, {}, read_only};
  if (!ParseKeysAndArgsOrReply(ctx, &invocation)) return;
  RunScript(ctx, invocation, /*cache_body=*/true);
}

void EvalSha(CommandContext& ctx, bool read_only) {
  FeedMonitorsFirst(ctx);
  // The SHA-1 in lower case (a name of another length matches no script).
  char lower[40];
  std::string_view sha = ctx.arg(1);
  if (sha.size() == sizeof(lower)) {
    for (size_t i = 0; i < sizeof(lower); ++i) {
      lower[i] = absl::ascii_tolower(static_cast<unsigned char>(sha[i]));
    }
    sha = std::string_view(lower, sizeof(lower));
  }
  ScriptInvocation invocation{ctx, sha, "", {}, {}, read_only};
  if (!ParseKeysAndArgsOrReply(ctx, &invocation)) return;
  // A script missing from the cache is answered without taking the gate (RunScript checks again
  // under it); one this thread's engine compiled is there (checked without the cache's lock).
  if (sha.size() != sizeof(lower) ||
      (!ThreadEngine(ctx.scripts().generation()).ScriptFlags(sha).has_value() &&
       !ctx.scripts().Contains(sha))) {
    ctx.reply.Error("NOSCRIPT No matching script. Please use EVAL.");
    return;
  }
  RunScript(ctx, invocation, /*cache_body=*/false);
}

void CmdEval(CommandContext& ctx) { Eval(ctx, /*read_only=*/false); }
void CmdEvalRo(CommandContext& ctx) { Eval(ctx, /*read_only=*/true); }
void CmdEvalSha(CommandContext& ctx) { EvalSha(ctx, /*read_only=*/false); }
void CmdEvalShaRo(CommandContext& ctx) { EvalSha(ctx, /*read_only=*/true); }

void CmdScriptLoad(CommandContext& ctx) {
  Shebang shebang;
  if (!ParseShebangOrReply(ctx, ctx.arg(2), &shebang)) return;
  const std::string sha = Sha1Hex(ctx.arg(2));
  // Compiled first, as Redis does: a script with a syntax error is not cached.
  std::string error;
  if (!ThreadEngine(ctx.scripts().generation()).Compile(sha, ctx.arg(2), &error)) {
    ctx.reply.Error(error);
    return;
  }
  ctx.scripts().Add(sha, ctx.arg(2));
  ctx.reply.Bulk(sha);
}

void CmdScriptExists(CommandContext& ctx) {
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argc() - 2));
  for (size_t i = 2; i < ctx.argc(); ++i) ctx.reply.Integer(ctx.scripts().Contains(ctx.arg(i)));
}

void CmdScriptFlush(CommandContext& ctx) {
  if (ctx.argc() > 3 ||
      (ctx.argc() == 3 && !ArgIs(ctx.arg(2), "async") && !ArgIs(ctx.arg(2), "sync"))) {
    ctx.reply.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    return;
  }
  ctx.scripts().Flush();
  ctx.reply.Ok();
}

// SCRIPT KILL and FUNCTION KILL: each stops only its own kind of script.
void KillScript(CommandContext& ctx, bool function_kill) {
  switch (ctx.scripts().RequestKill(function_kill)) {
    case ScriptCache::KillResult::kNotBusy:
      ctx.reply.Error("NOTBUSY No scripts in execution right now.");
      return;
    case ScriptCache::KillResult::kUnkillable:
      ctx.reply.Error(
          "UNKILLABLE Sorry the script already executed write commands against the dataset. You "
          "can either wait the script termination or kill the server in a hard way using the "
          "SHUTDOWN NOSAVE command.");
      return;
    case ScriptCache::KillResult::kOtherKind:
      ctx.reply.Error(function_kill ? errors::kBusyScript : errors::kBusyFunction);
      return;
    case ScriptCache::KillResult::kKilled:
      ctx.reply.Ok();
      return;
  }
}

void CmdScriptKill(CommandContext& ctx) { KillScript(ctx, /*function_kill=*/false); }

// SCRIPT DEBUG YES|SYNC|NO: gigakv has no Lua debugger (Redis's ldb), so YES and SYNC are
// refused with an error that says so; NO, which turns debugging off, is accepted.
void CmdScriptDebug(CommandContext& ctx) {
  if (ArgIs(ctx.arg(2), "no")) {
    ctx.reply.Ok();
  } else if (ArgIs(ctx.arg(2), "yes") || ArgIs(ctx.arg(2), "sync")) {
    ctx.reply.Error("ERR SCRIPT DEBUG YES and SYNC are not supported: gigakv has no Lua debugger");
  } else {
    ctx.reply.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
  }
}

void CmdScriptHelp(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DEBUG (YES|SYNC|NO)",
      "    Set the debug mode for subsequent scripts executed.",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Flush the Lua scripts cache. Very dangerous on replicas.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the scripts cache.",
      "    * SYNC: Synchronously flush the scripts cache.",
      "KILL",
      "    Kill the currently executing Lua script.",
      "LOAD <script>",
      "    Load a script into the scripts cache without executing it.",
      "HELP",
      "    Prints this help."};
  ctx.reply.ArrayHeader(static_cast<int64_t>(std::size(kLines)));
  for (std::string_view line : kLines) ctx.reply.SimpleString(line);
}

// ---- functions --------------------------------------------------------------------------------

// FCALL / FCALL_RO function numkeys key... arg...: runs as EVAL's scripts do (one unit, one
// change-stream group, messages held), its flags deciding as a shebang's do.
void FCall(CommandContext& ctx, bool read_only) {
  FeedMonitorsFirst(ctx);
  // Taken before the lookup: no FUNCTION DELETE can drop the function while it runs.
  TransactionGate::ScriptScope script_scope(ctx.transaction_gate());
  std::optional<TransactionGate::ExclusiveScope> exclusive;
  if (!ctx.client.in_exec) {
    exclusive.emplace(ctx.transaction_gate());
    Dispatcher::TimedBatch::Restart();
  }
  FunctionLibraries::FunctionRef function;
  if (!ctx.functions().Find(ctx.arg(1), &function)) {
    ctx.reply.Error("ERR Function not found");
    return;
  }
  const uint32_t flags = function.function->flags;
  if (RefusedAsCommandOrReply(ctx, flags)) return;
  int64_t numkeys = 0;
  if (!absl::SimpleAtoi(ToAbsl(ctx.arg(2)), &numkeys)) {
    ctx.reply.Error("ERR Bad number of keys provided");
    return;
  }
  ScriptInvocation invocation{ctx, function.function->name, "", {}, {}, read_only};
  if (!ParseKeysAndArgsOrReply(ctx, &invocation)) return;
  if (!PrepareOrReply(ctx, flags, read_only)) return;
  invocation.read_only = read_only || (flags & kScriptNoWrites) != 0;
  invocation.function_ref = function.function->ref;
  PublishHoldScope hold_messages(ctx.pubsub(), ctx.client);
  ChangeStream::Group effects(ctx.keyspace().changes());
  ctx.functions().engine().Run(invocation);
  ctx.functions().RefreshMemory();
}

void CmdFcall(CommandContext& ctx) { FCall(ctx, /*read_only=*/false); }
void CmdFcallRo(CommandContext& ctx) { FCall(ctx, /*read_only=*/true); }

// A change of the libraries: published as the command itself (the log replays it; Redis
// propagates it verbatim) and counted as a change for the save points.
void PublishLibraryChange(CommandContext& ctx, std::string_view subcommand) {
  std::vector<std::string_view> effect;
  if (WantsEffects(ctx)) {
    effect.assign(ctx.args.begin(), ctx.args.end());
    effect[0] = "FUNCTION";  // Command names in upper case, as the change stream has them.
    effect[1] = subcommand;
  }
  PublishChange(ctx, ctx.db(), absl::Span<const ChangedKey>(), absl::Span<const KeyEvent>(),
                effect);
}

// The libraries change only under the exclusive gate: no function runs meanwhile (inside EXEC
// this thread holds it already).
class LibrariesExclusive {
 public:
  explicit LibrariesExclusive(CommandContext& ctx) {
    if (!TransactionGate::ThisThreadIsExclusive()) scope_.emplace(ctx.transaction_gate());
  }

 private:
  std::optional<TransactionGate::ExclusiveScope> scope_;
};

void CmdFunctionLoad(CommandContext& ctx) {
  bool replace = false;
  size_t at = 2;
  for (; at + 1 < ctx.argc(); ++at) {
    if (!ArgIs(ctx.arg(at), "replace")) {
      ctx.reply.Error(StrCat("ERR Unknown option given: ", ctx.arg(at)));
      return;
    }
    replace = true;
  }
  LibrariesExclusive exclusive(ctx);
  // The log's replay loads without a time limit, as Redis loads its AOF.
  const int64_t timeout_ms = ctx.client.replaying ? 0 : FunctionLibraries::kLoadTimeoutMs;
  absl::StatusOr<std::string> name = ctx.functions().Load(ctx.arg(at), replace, timeout_ms);
  if (!name.ok()) {
    ctx.reply.Error(std::string(name.status().message()));
    return;
  }
  PublishLibraryChange(ctx, "LOAD");
  ctx.reply.Bulk(*name);
}

void CmdFunctionDelete(CommandContext& ctx) {
  LibrariesExclusive exclusive(ctx);
  if (!ctx.functions().Delete(ctx.arg(2))) {
    ctx.reply.Error("ERR Library not found");
    return;
  }
  PublishLibraryChange(ctx, "DELETE");
  ctx.reply.Ok();
}

void CmdFunctionFlush(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(FormatText(errors::kSubcommandSyntax, {ctx.arg(1), "FUNCTION"}));
    return;
  }
  if (ctx.argc() == 3 && !ArgIs(ctx.arg(2), "async") && !ArgIs(ctx.arg(2), "sync")) {
    ctx.reply.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    return;
  }
  LibrariesExclusive exclusive(ctx);
  ctx.functions().Flush();
  PublishLibraryChange(ctx, "FLUSH");
  ctx.reply.Ok();
}

void CmdFunctionDump(CommandContext& ctx) {
  ctx.reply.Bulk(ctx.functions().Dump(ctx.settings().rdbcompression.get()));
}

void CmdFunctionRestore(CommandContext& ctx) {
  if (ctx.argc() > 4) {
    ctx.reply.Error(FormatText(errors::kSubcommandSyntax, {ctx.arg(1), "FUNCTION"}));
    return;
  }
  FunctionLibraries::RestorePolicy policy = FunctionLibraries::RestorePolicy::kAppend;
  if (ctx.argc() == 4) {
    if (ArgIs(ctx.arg(3), "append")) {
      policy = FunctionLibraries::RestorePolicy::kAppend;
    } else if (ArgIs(ctx.arg(3), "replace")) {
      policy = FunctionLibraries::RestorePolicy::kReplace;
    } else if (ArgIs(ctx.arg(3), "flush")) {
      policy = FunctionLibraries::RestorePolicy::kFlush;
    } else {
      ctx.reply.Error(
          "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
      return;
    }
  }
  LibrariesExclusive exclusive(ctx);
  if (absl::Status status = ctx.functions().Restore(ctx.arg(2), policy); !status.ok()) {
    ctx.reply.Error(std::string(status.message()));
    return;
  }
  PublishLibraryChange(ctx, "RESTORE");
  ctx.reply.Ok();
}

// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]: each library as a map (name, engine, its
// functions with description and flags, its code).
void CmdFunctionList(CommandContext& ctx) {
  bool with_code = false;
  std::optional<std::string_view> pattern;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (!with_code && ArgIs(ctx.arg(i), "withcode")) {
      with_code = true;
      continue;
    }
    if (!pattern.has_value() && ArgIs(ctx.arg(i), "libraryname")) {
      if (i + 1 >= ctx.argc()) {
        ctx.reply.Error("ERR library name argument was not given");
        return;
      }
      pattern = ctx.arg(++i);
      continue;
    }
    ctx.reply.Error(StrCat("ERR Unknown argument ", ctx.arg(i)));
    return;
  }
  std::vector<const FunctionLibraries::Library*> chosen;
  protocol::ReplyBuilder& reply = ctx.reply;
  ctx.functions().ForEachLibrary([&](const FunctionLibraries::Library& library) {
    if (pattern.has_value() && !GlobMatch(*pattern, library.name, /*nocase=*/true)) return;
    chosen.push_back(&library);
  });
  // The pointers stay valid: the libraries change only under the exclusive gate, which waits
  // for this command's batch to end.
  reply.ArrayHeader(static_cast<int64_t>(chosen.size()));
  for (const FunctionLibraries::Library* chosen_library : chosen) {
    const FunctionLibraries::Library& library = *chosen_library;
    reply.MapHeader(with_code ? 4 : 3);
    reply.Bulk("library_name");
    reply.Bulk(library.name);
    reply.Bulk("engine");
    reply.Bulk("LUA");
    reply.Bulk("functions");
    reply.ArrayHeader(static_cast<int64_t>(library.functions.size()));
    for (const RegisteredFunction& function : library.functions) {
      reply.MapHeader(3);
      reply.Bulk("name");
      reply.Bulk(function.name);
      reply.Bulk("description");
      if (function.description.has_value()) {
        reply.Bulk(*function.description);
      } else {
        reply.Null();
      }
      reply.Bulk("flags");
      int64_t count = 0;
      for (const ScriptFlagName& flag : kScriptFlagNames)
        count += (function.flags & flag.flag) != 0;
      reply.SetHeader(count);
      for (const ScriptFlagName& flag : kScriptFlagNames) {
        if (function.flags & flag.flag) reply.SimpleString(flag.name);
      }
    }
    if (with_code) {
      reply.Bulk("library_code");
      reply.Bulk(library.code);
    }
  }
}

// FUNCTION STATS: the running function (while it is busy, the only time another command runs
// meanwhile) and the engine's counts. Refused while an EVAL script is busy, as in Redis.
void CmdFunctionStats(CommandContext& ctx) {
  if (ctx.scripts().running() && !ctx.scripts().running_function() &&
      ctx.transaction_gate().busy()) {
    ctx.reply.Error(errors::kBusyScript);
    return;
  }
  protocol::ReplyBuilder& reply = ctx.reply;
  reply.MapHeader(2);
  reply.Bulk("running_script");
  ScriptCache::RunningFunction running;
  if (!ctx.scripts().GetRunningFunction(&running)) {
    reply.Null();
  } else {
    reply.MapHeader(3);
    reply.Bulk("name");
    reply.Bulk(running.name);
    reply.Bulk("command");
    reply.ArrayHeader(static_cast<int64_t>(running.command.size()));
    for (const std::string& arg : running.command) reply.Bulk(arg);
    reply.Bulk("duration_ms");
    reply.Integer(running.duration_ms);
  }
  reply.Bulk("engines");
  reply.MapHeader(1);
  reply.Bulk("LUA");
  reply.MapHeader(2);
  reply.Bulk("libraries_count");
  reply.Integer(static_cast<int64_t>(ctx.functions().library_count()));
  reply.Bulk("functions_count");
  reply.Integer(static_cast<int64_t>(ctx.functions().function_count()));
}

void CmdFunctionKill(CommandContext& ctx) { KillScript(ctx, /*function_kill=*/true); }

void CmdFunctionHelp(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "LOAD [REPLACE] <FUNCTION CODE>",
      "    Create a new library with the given library name and code.",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library.",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries:",
      "    * Library name",
      "    * The engine used to run the Library",
      "    * Library description",
      "    * Functions list",
      "    * Library code (if WITHCODE is given)",
      "    It also possible to get only function that matches a pattern using LIBRARYNAME "
      "argument.",
      "STATS",
      "    Return information about the current function running:",
      "    * Function name",
      "    * Command used to run the function",
      "    * Duration in MS that the function is running",
      "    If no function is running, return nil",
      "    In addition, returns a list of available engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the libraries.",
      "    * SYNC: Synchronously flush the libraries.",
      "DUMP",
      "    Return a serialized payload representing the current libraries, can be restored "
      "using FUNCTION RESTORE command",
      "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
      "    Restore the libraries represented by the given payload, it is possible to give a "
      "restore policy to",
      "    control how to handle existing libraries (default APPEND):",
      "    * FLUSH: delete all existing libraries.",
      "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
      "abort.",
      "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
      "replace the old",
      "      libraries with the new libraries (notice that even on this option there is a "
      "chance of failure",
      "      in case of functions name collision with another library).",
      "HELP",
      "    Prints this help."};
  ctx.reply.ArrayHeader(static_cast<int64_t>(std::size(kLines)));
  for (std::string_view line : kLines) ctx.reply.SimpleString(line);
}

}  // namespace

const std::vector<CommandBinding>& ScriptingCommands() {
  static const std::vector<CommandBinding> kCommands = {
      // May replicate (Redis's flag, hidden from COMMAND): CLIENT PAUSE WRITE holds them.
      {"eval", CmdEval, kMayReplicate},
      {"evalsha", CmdEvalSha, kMayReplicate},
      {"eval_ro", CmdEvalRo},
      {"evalsha_ro", CmdEvalShaRo},
      {"script", nullptr},
      {"script|load", CmdScriptLoad},
      {"script|exists", CmdScriptExists},
      {"script|flush", CmdScriptFlush},
      {"script|kill", CmdScriptKill},
      {"script|help", CmdScriptHelp},
      {"script|debug", CmdScriptDebug},
      {"fcall", CmdFcall, kMayReplicate},
      {"fcall_ro", CmdFcallRo},
      {"function", nullptr},
      {"function|load", CmdFunctionLoad},
      {"function|delete", CmdFunctionDelete},
      {"function|flush", CmdFunctionFlush},
      {"function|dump", CmdFunctionDump},
      {"function|restore", CmdFunctionRestore},
      {"function|list", CmdFunctionList},
      {"function|stats", CmdFunctionStats},
      {"function|kill", CmdFunctionKill},
      {"function|help", CmdFunctionHelp},
  };
  return kCommands;
}

}  // namespace gigakv::server
