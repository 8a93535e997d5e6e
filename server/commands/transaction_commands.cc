// MULTI, EXEC, DISCARD, WATCH, UNWATCH. Queueing between MULTI and EXEC happens in
// Dispatcher::Execute; atomicity and WATCH bookkeeping are in server/transaction.h.
#include <string>
#include <string_view>
#include <vector>

#include "server/client_state.h"
#include "server/command.h"
#include "server/commands/key_access.h"
#include "server/dispatcher.h"
#include "server/errors.h"
#include "server/keyspace.h"
#include "server/pubsub.h"
#include "server/transaction.h"

namespace gigakv::server {
namespace {

void CmdMulti(CommandContext& ctx) {
  if (ctx.client.multi.active) {
    ctx.reply.Error(errors::kMultiNested);
    return;
  }
  ctx.client.multi.active = true;
  ctx.client.multi_count.store(0, std::memory_order_relaxed);
  ctx.reply.Ok();
}

void CmdDiscard(CommandContext& ctx) {
  if (!ctx.client.multi.active) {
    ctx.reply.Error(errors::kDiscardWithoutMulti);
    return;
  }
  DiscardTransaction(ctx.client, ctx.watches());
  ctx.reply.Ok();
}

void CmdExec(CommandContext& ctx) {
  ClientState& client = ctx.client;
  if (!client.multi.active) {
    ctx.reply.Error(errors::kExecWithoutMulti);
    return;
  }
  if (client.multi.aborted) {
    DiscardTransaction(client, ctx.watches());
    ctx.reply.Error(errors::kExecAbort);
    return;
  }
  std::vector<std::vector<std::string>> commands = std::move(client.multi.commands);
  {
    // No other I/O thread runs a command from the WATCH check to the last queued command.
    TransactionGate::ExclusiveScope exclusive(ctx.transaction_gate());
    Dispatcher::TimedBatch::Restart();  // The wait for the gate is no queued command's time.
    const bool watched_key_changed = ctx.watches().IsDirty(client.id, ctx.store.NowMs());
    ctx.watches().UnwatchAll(client.id);  // Before running anything, as Redis does.
    if (watched_key_changed) {
      DiscardTransaction(client, ctx.watches());
      ctx.reply.NullArray();
      return;
    }
    // Other clients receive the transaction's messages, keyspace events and invalidations
    // after it, as from Redis. Declared before `effects`, so that the log has the transaction
    // (OnGroupEnd) before any listener is told of it.
    PublishHoldScope hold_messages(ctx.pubsub(), client);
    ctx.reply.ArrayHeader(static_cast<int64_t>(commands.size()));
    // The queued commands run now instead of queueing again; CLIENT LIST shows the client in
    // MULTI (flags=x) until they are done.
    client.multi.active = false;
    struct InExec {  // Cleared however the loop ends.
      explicit InExec(ClientState& c) : client(c) { client.in_exec = true; }
      ~InExec() { client.in_exec = false; }
      ClientState& client;
    } in_exec(client);
    ChangeStream::Group effects(ctx.keyspace().changes());
    std::vector<std::string_view> args;
    for (const std::vector<std::string>& command : commands) {
      args.assign(command.begin(), command.end());
      ctx.dispatcher().Execute(client, args, ctx.reply);
    }
    DiscardTransaction(client, ctx.watches());
  }
  // The queued commands counted their own errors; EXEC's own reply is not an error.
  ctx.reply.ResetErrorCount();
}

void CmdWatch(CommandContext& ctx) {
  if (ctx.client.multi.active) {
    ctx.reply.Error(errors::kWatchInsideMulti);
    return;
  }
  for (size_t i = 1; i < ctx.argc(); ++i) {
    // Redis watches without a lookup: neither counted nor touched.
    WithKey(ctx, ctx.arg(i), Lookup::kPeek, [&](KeyAccess& access) {
      int64_t expire_ms = access.exists() ? access.view().expire_ms : 0;
      ctx.watches().Watch(ctx.client.id, access.db, access.key, expire_ms);
    });
  }
  ctx.reply.Ok();
}

void CmdUnwatch(CommandContext& ctx) {
  ctx.watches().UnwatchAll(ctx.client.id);
  ctx.reply.Ok();
}

}  // namespace

const std::vector<CommandBinding>& TransactionCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"multi", CmdMulti}, {"exec", CmdExec},       {"discard", CmdDiscard},
      {"watch", CmdWatch}, {"unwatch", CmdUnwatch},
  };
  return kCommands;
}

}  // namespace gigakv::server
