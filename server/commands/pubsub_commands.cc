// Pub/Sub commands (Redis's pubsub.c): SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE,
// PUBLISH, Redis 7.0's sharded SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH, and PUBSUB's introspection.
// The registry and the delivery of messages are server/pubsub.h; the dispatcher keeps a RESP2
// client in subscribed mode to the commands Redis allows there.
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gigakv/strings.h"
#include "server/client_state.h"
#include "server/command.h"
#include "server/commands/args.h"
#include "server/pubsub.h"

namespace gigakv::server {
namespace {

// A client that expects one reply per command cannot subscribe (Redis's CLIENT_DENY_BLOCKING:
// its EXEC, for the sharded form only, as Redis keeps SUBSCRIBE inside MULTI working).
bool RefusedInExec(CommandContext& ctx, std::string_view command) {
  if (!ctx.client.in_exec) return false;
  ctx.reply.Error(StrCat("ERR ", command, " isn't allowed for a DENY BLOCKING client"));
  return true;
}

void SubscribeAll(CommandContext& ctx, PubSubKind kind) {
  for (size_t i = 1; i < ctx.argc(); ++i)
    ctx.pubsub().Subscribe(ctx.client, kind, ctx.arg(i), ctx.reply);
}

void UnsubscribeNamed(CommandContext& ctx, PubSubKind kind) {
  // Inside EXEC the messages queued so far wait for the next drain rather than land in a reply
  // that is an array element. Confirmations go out even with CLIENT REPLY OFF (as Redis's
  // pushes; the dispatcher keeps them), and so do the messages ahead of them.
  const bool drain_first = !ctx.client.in_exec;
  if (ctx.argc() == 1) {
    ctx.pubsub().UnsubscribeAll(ctx.client, kind, ctx.reply, drain_first);
    return;
  }
  for (size_t i = 1; i < ctx.argc(); ++i) {
    ctx.pubsub().Unsubscribe(ctx.client, kind, ctx.arg(i), ctx.reply, drain_first);
  }
}

void CmdSubscribe(CommandContext& ctx) { SubscribeAll(ctx, PubSubKind::kChannel); }

void CmdPsubscribe(CommandContext& ctx) { SubscribeAll(ctx, PubSubKind::kPattern); }

void CmdSsubscribe(CommandContext& ctx) {
  if (RefusedInExec(ctx, "SSUBSCRIBE")) return;
  SubscribeAll(ctx, PubSubKind::kShard);
}

void CmdUnsubscribe(CommandContext& ctx) { UnsubscribeNamed(ctx, PubSubKind::kChannel); }

void CmdPunsubscribe(CommandContext& ctx) { UnsubscribeNamed(ctx, PubSubKind::kPattern); }

void CmdSunsubscribe(CommandContext& ctx) { UnsubscribeNamed(ctx, PubSubKind::kShard); }

// PUBLISH / SPUBLISH: the receivers' count. A publisher that listens to the channel itself
// (RESP3) gets its message ahead of the count, as from Redis (PubSub::Publish writes it).
void Publish(CommandContext& ctx, PubSubKind kind) {
  const int64_t receivers = ctx.pubsub().Publish(kind, ctx.arg(1), ctx.arg(2));
  ctx.reply.Integer(receivers);
}

void CmdPublish(CommandContext& ctx) { Publish(ctx, PubSubKind::kChannel); }

void CmdSpublish(CommandContext& ctx) { Publish(ctx, PubSubKind::kShard); }

// PUBSUB CHANNELS / SHARDCHANNELS [pattern]
void ReplyChannels(CommandContext& ctx, PubSubKind kind) {
  if (ctx.argc() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  const std::string_view pattern = ctx.argc() == 3 ? ctx.arg(2) : std::string_view();
  const std::vector<std::string> names =
      ctx.pubsub().Channels(kind, ctx.argc() == 3 ? &pattern : nullptr);
  ctx.reply.ArrayHeader(static_cast<int64_t>(names.size()));
  for (const std::string& name : names) ctx.reply.Bulk(name);
}

// PUBSUB NUMSUB / SHARDNUMSUB [channel ...]: channel, count pairs (a flat array, as Redis).
void ReplyNumsub(CommandContext& ctx, PubSubKind kind) {
  ctx.reply.ArrayHeader(static_cast<int64_t>((ctx.argc() - 2) * 2));
  for (size_t i = 2; i < ctx.argc(); ++i) {
    ctx.reply.Bulk(ctx.arg(i));
    ctx.reply.Integer(ctx.pubsub().CountListeners(kind, ctx.arg(i)));
  }
}

void CmdPubsubChannels(CommandContext& ctx) { ReplyChannels(ctx, PubSubKind::kChannel); }

void CmdPubsubShardChannels(CommandContext& ctx) { ReplyChannels(ctx, PubSubKind::kShard); }

void CmdPubsubNumsub(CommandContext& ctx) { ReplyNumsub(ctx, PubSubKind::kChannel); }

void CmdPubsubShardNumsub(CommandContext& ctx) { ReplyNumsub(ctx, PubSubKind::kShard); }

void CmdPubsubNumpat(CommandContext& ctx) {
  ctx.reply.Integer(ctx.pubsub().ActiveNames(PubSubKind::kPattern));
}

void CmdPubsubHelp(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: '*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
      "HELP",
      "    Prints this help."};
  ctx.reply.ArrayHeader(static_cast<int64_t>(std::size(kLines)) + 1);
  ctx.reply.SimpleString(
      StrCat(AsciiUpper(ctx.arg(0)), " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
  for (std::string_view line : kLines) ctx.reply.SimpleString(line);
}

}  // namespace

const std::vector<CommandBinding>& PubSubCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"subscribe", CmdSubscribe},
      {"unsubscribe", CmdUnsubscribe},
      {"psubscribe", CmdPsubscribe},
      {"punsubscribe", CmdPunsubscribe},
      {"publish", CmdPublish, kMayReplicate},
      {"ssubscribe", CmdSsubscribe},
      {"sunsubscribe", CmdSunsubscribe},
      {"spublish", CmdSpublish, kMayReplicate},
      {"pubsub", nullptr},
      {"pubsub|channels", CmdPubsubChannels},
      {"pubsub|numsub", CmdPubsubNumsub},
      {"pubsub|numpat", CmdPubsubNumpat},
      {"pubsub|shardchannels", CmdPubsubShardChannels},
      {"pubsub|shardnumsub", CmdPubsubShardNumsub},
      {"pubsub|help", CmdPubsubHelp},
  };
  return kCommands;
}

}  // namespace gigakv::server
