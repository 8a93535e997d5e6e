// Scripting commands (Redis's eval.c): EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD,
// EXISTS, FLUSH, HELP. The script cache is server/scripting.h; the Lua state each thread runs
// scripts in, with Redis's sandbox and conversions, is server/lua_engine.h.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gigakv/change_stream.h"
#include "gigakv/sha1.h"
#include "gigakv/strings.h"
#include "server/client_registry.h"
#include "server/client_state.h"
#include "server/command.h"
#include "server/commands/args.h"
#include "server/dispatcher.h"
#include "server/errors.h"
#include "server/keyspace.h"
#include "server/lua_engine.h"
#include "server/pubsub.h"
#include "server/scripting.h"
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
  invocation->keys.assign(ctx.args.begin() + 3, ctx.args.begin() + 3 + numkeys);
  invocation->args.assign(ctx.args.begin() + 3 + numkeys, ctx.args.end());
  return true;
}

// Runs `invocation` as one unit: no other command runs meanwhile, its writes are one
// change-stream group and its messages reach other clients after it. `cache_body`: EVAL's
// body, cached once it compiled (as Redis caches only scripts that compile).
void RunScript(CommandContext& ctx, ScriptInvocation& invocation, bool cache_body) {
  Shebang shebang;
  if (!ParseShebangOrReply(ctx, invocation.body, &shebang)) return;
  // Announced before the gate is taken: threads that wait for it meanwhile can answer BUSY once
  // the script runs too long. Inside EXEC the transaction already holds the gate, the group
  // and the messages.
  TransactionGate::ScriptScope script_scope(ctx.transaction_gate());
  std::optional<TransactionGate::ExclusiveScope> exclusive;
  if (!ctx.client.in_exec) {
    exclusive.emplace(ctx.transaction_gate());
    Dispatcher::TimedBatch::Restart();  // The wait for the gate is not the script's time.
  }
  LuaEngine& engine = ThreadEngine(ctx.scripts().generation());
  std::string error;
  if (!engine.Compile(invocation.sha, invocation.body, &error)) {
    ctx.reply.Error(error);
    return;
  }
  if (cache_body) ctx.scripts().Add(std::string(invocation.sha), invocation.body);
  if (shebang.present) {
    if (invocation.read_only && !shebang.no_writes) {
      ctx.reply.Error("ERR Can not execute a script with write flag using *_ro command.");
      return;
    }
    // no-writes implies allow-oom.
    if (!shebang.no_writes && !shebang.allow_oom && ctx.keyspace().OverMaxmemory()) {
      ctx.reply.Error(errors::kOom);
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
  const std::string sha = AsciiLower(ctx.arg(1));
  ScriptInvocation invocation{ctx, sha, "", {}, {}, read_only};
  if (!ParseKeysAndArgsOrReply(ctx, &invocation)) return;
  std::shared_ptr<const std::string> body = ctx.scripts().Find(ctx.arg(1));
  if (body == nullptr) {
    ctx.reply.Error("NOSCRIPT No matching script. Please use EVAL.");
    return;
  }
  invocation.body = *body;
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

void CmdScriptKill(CommandContext& ctx) {
  switch (ctx.scripts().RequestKill()) {
    case ScriptCache::KillResult::kNotBusy:
      ctx.reply.Error("NOTBUSY No scripts in execution right now.");
      return;
    case ScriptCache::KillResult::kUnkillable:
      ctx.reply.Error(
          "UNKILLABLE Sorry the script already executed write commands against the dataset. You "
          "can either wait the script termination or kill the server in a hard way using the "
          "SHUTDOWN NOSAVE command.");
      return;
    case ScriptCache::KillResult::kKilled:
      ctx.reply.Ok();
      return;
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
  };
  return kCommands;
}

}  // namespace gigakv::server
