// Connection family: HELLO, AUTH, SELECT, QUIT, RESET, CLIENT.
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gigakv/strings.h"
#include "server/blocking.h"
#include "server/client_registry.h"
#include "server/client_state.h"
#include "server/commands/args.h"
#include "server/keyspace.h"
#include "server/lifecycle.h"
#include "server/pubsub.h"
#include "server/settings.h"
#include "server/tracking.h"
#include "server/transaction.h"

namespace gigakv::server {
namespace {

// Outcome of checking credentials against the default user (no ACL users yet).
bool CheckPassword(CommandContext& ctx, std::string_view user, std::string_view password) {
  std::string required = ctx.settings().requirepass.get();
  if (!EqualsIgnoreCase(user, "default") && user != "default") return false;
  if (required.empty()) return true;  // The default user is "nopass".
  return password == required;
}

void CmdAuth(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  std::string_view user = ctx.argc() == 3 ? ctx.arg(1) : "default";
  std::string_view password = ctx.argc() == 3 ? ctx.arg(2) : ctx.arg(1);
  if (ctx.argc() == 2 && ctx.settings().requirepass.get().empty()) {
    ctx.reply.Error(errors::kAuthNotConfigured);
    return;
  }
  if (user != "default" || !CheckPassword(ctx, user, password)) {
    ctx.reply.Error(errors::kWrongPass);
    return;
  }
  ctx.client.authenticated = true;
  ctx.reply.Ok();
}

bool ValidClientName(std::string_view name) {
  for (char c : name) {
    if (c < '!' || c > '~') return false;  // Redis allows printable ASCII without spaces.
  }
  return true;
}

void CmdHello(CommandContext& ctx) {
  int version = ctx.client.resp;
  size_t i = 1;
  if (ctx.argc() >= 2) {
    int64_t requested;
    if (!ParseInt64(ctx.arg(1), &requested)) {
      ctx.reply.Error(errors::kProtoVersionNotInteger);
      return;
    }
    if (requested < 2 || requested > 3) {
      ctx.reply.Error(errors::kNoProto);
      return;
    }
    version = static_cast<int>(requested);
    i = 2;
  }
  std::string_view user, password, name;
  bool auth = false, set_name = false;
  for (; i < ctx.argc(); ++i) {
    size_t more = ctx.argc() - i - 1;
    if (ArgIs(ctx.arg(i), "auth") && more >= 2) {
      auth = true;
      user = ctx.arg(i + 1);
      password = ctx.arg(i + 2);
      i += 2;
    } else if (ArgIs(ctx.arg(i), "setname") && more >= 1) {
      set_name = true;
      name = ctx.arg(i + 1);
      i += 1;
    } else {
      ctx.reply.Error(StrCat("ERR Syntax error in HELLO option '", ctx.arg(i), "'"));
      return;
    }
  }
  if (auth) {
    if (!CheckPassword(ctx, user, password)) {
      ctx.reply.Error(errors::kWrongPass);
      return;
    }
    ctx.client.authenticated = true;
  }
  if (!ctx.client.authenticated && !ctx.settings().requirepass.get().empty()) {
    ctx.reply.Error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
        "AUTH <user> <pass> option can be used to authenticate the client and select the "
        "RESP protocol version at the same time");
    return;
  }
  if (set_name) {
    if (!ValidClientName(name)) {
      ctx.reply.Error(errors::kClientNameSpaces);
      return;
    }
    ctx.client.set_name(std::string(name));
  }
  ctx.client.resp = version;
  ctx.client.tracking_resp.store(static_cast<int>(version), std::memory_order_relaxed);
  ctx.reply.set_resp_version(version);
  ctx.reply.MapHeader(7);
  ctx.reply.Bulk("server");
  ctx.reply.Bulk("redis");
  ctx.reply.Bulk("version");
  ctx.reply.Bulk(kRedisCompatVersion);
  ctx.reply.Bulk("proto");
  ctx.reply.Integer(version);
  ctx.reply.Bulk("id");
  ctx.reply.Integer(static_cast<int64_t>(ctx.client.id));
  ctx.reply.Bulk("mode");
  ctx.reply.Bulk("standalone");
  ctx.reply.Bulk("role");
  ctx.reply.Bulk("master");
  ctx.reply.Bulk("modules");
  ctx.reply.ArrayHeader(0);
}

void CmdSelect(CommandContext& ctx) {
  int db;
  if (!ParseDbIndexOrReply(ctx, ctx.arg(1), &db)) return;
  ctx.client.db.store(db);
  ctx.reply.Ok();
}

void CmdQuit(CommandContext& ctx) {
  ctx.client.close_after_reply = true;
  ctx.reply.Ok();
}

void CmdReset(CommandContext& ctx) {
  DiscardTransaction(ctx.client, ctx.watches());
  if (ctx.client.monitor.load()) ctx.clients().RemoveMonitor(ctx.client.id);
  ctx.pubsub().Forget(ctx.client);  // Without confirmations, as Redis.
  ctx.tracking().Disable(ctx.client);
  ctx.client.db.store(0);
  ctx.client.resp = 2;
  ctx.client.tracking_resp.store(2, std::memory_order_relaxed);
  ctx.reply.set_resp_version(2);
  ctx.client.reply_mode = ReplyMode::kOn;
  ctx.client.no_evict = false;
  ctx.client.no_touch = false;
  ctx.client.set_name("");
  ctx.client.authenticated = ctx.settings().requirepass.get().empty();
  ctx.reply.SimpleString("RESET");
}

// --- CLIENT --------------------------------------------------------------------------------

// Whether `type` (CLIENT LIST / KILL TYPE, validated) is the client's type, as Redis's
// getClientType: pubsub while it listens to a channel, else normal (a monitor too, as Redis
// exposes it); no client is a replica or the master link.
bool HasClientType(const ClientState& client, std::string_view type) {
  return ArgIs(type, IsSubscribed(client) ? "pubsub" : "normal");
}

// CLIENT GETREDIR, TRACKINGINFO's and CLIENT LIST's redirect: -1 while tracking is off.
int64_t TrackingRedirect(const ClientState& client) {
  if (!(client.tracking.load(std::memory_order_relaxed) & kTrackingOn)) return -1;
  return static_cast<int64_t>(client.tracking_redirect.load(std::memory_order_relaxed));
}

std::string ClientLine(const CommandServices& server, const ClientState& client) {
  int64_t now = server.keyspace().NowMs();
  std::string name = client.name();
  const int multi = client.multi_count.load(std::memory_order_relaxed);
  std::string flags;
  if (client.monitor.load()) flags += 'O';
  if (IsSubscribed(client)) flags += 'P';
  if (multi >= 0) flags += 'x';
  if (client.blocked.load() || client.paused.load()) flags += 'b';
  const uint32_t tracking = client.tracking.load(std::memory_order_relaxed);
  if (tracking & kTrackingOn) flags += 't';
  if (tracking & kTrackingBrokenRedirect) flags += 'R';
  if (tracking & kTrackingBcast) flags += 'B';
  if (flags.empty()) flags = "N";
  const size_t query_buffer = client.query_buffer_bytes.load(std::memory_order_relaxed);
  const size_t query_free = client.query_buffer_free.load(std::memory_order_relaxed);
  const size_t argv = client.argv_bytes.load(std::memory_order_relaxed);
  const size_t output = client.output_buffer_bytes.load(std::memory_order_relaxed);
  return StrCat("id=", client.id, " addr=", client.addr, " laddr=", client.laddr, " fd=", client.fd,
                " name=", name, " age=", (now - client.created_ms.load()) / 1000,
                " idle=", (now - client.last_interaction_ms.load()) / 1000, " flags=", flags,
                " db=", client.db.load(), " sub=", SubscriptionCount(client, PubSubKind::kChannel),
                " psub=", SubscriptionCount(client, PubSubKind::kPattern),
                " ssub=", SubscriptionCount(client, PubSubKind::kShard), " multi=", multi,
                " qbuf=", query_buffer, " qbuf-free=", query_free, " argv-mem=", argv,
                " multi-mem=0 rbs=16384 rbp=0 obl=0 oll=0 omem=", output,
                " tot-mem=", query_buffer + query_free + argv + output,
                " events=r cmd=", client.last_command.load(),
                " user=default redir=", TrackingRedirect(client), " resp=", client.resp,
                " lib-name=", client.lib_name(), " lib-ver=", client.lib_ver());
}

void CmdClientId(CommandContext& ctx) { ctx.reply.Integer(static_cast<int64_t>(ctx.client.id)); }

// CLIENT UNBLOCK id [TIMEOUT|ERROR]: ends another client's BLPOP-style wait as if it timed out,
// or with an UNBLOCKED error. Replies 1 when the client was blocked, else 0.
void CmdClientUnblock(CommandContext& ctx) {
  int64_t id;
  if (!ParseInt64(ctx.arg(2), &id)) {
    ctx.reply.Error(errors::kNotInteger);
    return;
  }
  std::string_view error;
  if (ctx.argc() == 4) {
    if (ArgIs(ctx.arg(3), "error")) {
      error = errors::kUnblockedByClient;
    } else if (!ArgIs(ctx.arg(3), "timeout")) {
      ctx.reply.Error(errors::kUnblockReason);
      return;
    }
  } else if (ctx.argc() > 4) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  bool unblocked = ctx.blocking().Unblock(static_cast<uint64_t>(id), error);
  ctx.reply.Integer(unblocked ? 1 : 0);
}

// CLIENT PAUSE timeout [WRITE|ALL]: for `timeout` ms, commands of every client (ALL, the
// default) or only writes (WRITE) wait unrun; see ClientRegistry::PauseClients.
void CmdClientPause(CommandContext& ctx) {
  // Redis's order of checks: argument count, mode, then timeout.
  if (ctx.argc() > 4) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  ClientRegistry::PauseType type = ClientRegistry::PauseType::kAll;
  if (ctx.argc() == 4) {
    if (ArgIs(ctx.arg(3), "write")) {
      type = ClientRegistry::PauseType::kWrite;
    } else if (!ArgIs(ctx.arg(3), "all")) {
      ctx.reply.Error(errors::kPauseMode);
      return;
    }
  }
  int64_t end_ms;
  if (!ParseMillisecondTimeoutOrReply(ctx, ctx.arg(2), &end_ms)) return;
  // A timeout of 0, or one whose end does not fit in 64 bits, pauses nothing (as Redis, whose
  // end time is then already past).
  if (end_ms > 0) {
    // With every other I/O thread between batches: a write that passed the pause check on
    // another thread has finished before this replies OK. Inside EXEC that already holds.
    std::optional<TransactionGate::ExclusiveScope> exclusive;
    if (!TransactionGate::ThisThreadIsExclusive()) {
      exclusive.emplace(ctx.transaction_gate());
    }
    ctx.clients().PauseClients(end_ms, type);
  }
  ctx.reply.Ok();
}

// CLIENT UNPAUSE: ends the pause; the waiting clients' requests run.
void CmdClientUnpause(CommandContext& ctx) {
  ctx.clients().UnpauseClients();
  ctx.reply.Ok();
}

void CmdClientSetName(CommandContext& ctx) {
  if (!ValidClientName(ctx.arg(2))) {
    ctx.reply.Error(errors::kClientNameSpaces);
    return;
  }
  ctx.client.set_name(std::string(ctx.arg(2)));
  ctx.reply.Ok();
}

void CmdClientGetName(CommandContext& ctx) {
  std::string name = ctx.client.name();
  if (name.empty()) {
    ctx.reply.Null();
  } else {
    ctx.reply.Bulk(name);
  }
}

void CmdClientList(CommandContext& ctx) {
  std::vector<uint64_t> ids;
  std::optional<std::string_view> type_filter;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (ArgIs(ctx.arg(i), "type") && i + 1 < ctx.argc()) {
      std::string_view type = ctx.arg(i + 1);
      if (!ArgIs(type, "normal") && !ArgIs(type, "master") && !ArgIs(type, "replica") &&
          !ArgIs(type, "slave") && !ArgIs(type, "pubsub")) {
        ctx.reply.Error(StrCat("ERR Unknown client type '", type, "'"));
        return;
      }
      type_filter = type;
      ++i;
    } else if (ArgIs(ctx.arg(i), "id") && i + 1 < ctx.argc()) {
      for (++i; i < ctx.argc(); ++i) {
        int64_t id;
        if (!ParseInt64(ctx.arg(i), &id) || id <= 0) {
          ctx.reply.Error("ERR Invalid client ID");
          return;
        }
        ids.push_back(static_cast<uint64_t>(id));
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  std::string text;
  for (const auto& client : ctx.clients().Clients()) {
    if (!ids.empty() && std::find(ids.begin(), ids.end(), client->id) == ids.end()) continue;
    if (type_filter && !HasClientType(*client, *type_filter)) continue;
    StrAppend(&text, ClientLine(ctx.services, *client), "\n");
  }
  ctx.reply.Verbatim("txt", text);
}

void CmdClientInfo(CommandContext& ctx) {
  ctx.reply.Verbatim("txt", ClientLine(ctx.services, ctx.client) + "\n");
}

void CmdClientKill(CommandContext& ctx) {
  // Old form: CLIENT KILL addr:port -> OK or error.
  if (ctx.argc() == 3) {
    for (const auto& client : ctx.clients().Clients()) {
      if (client->addr == ctx.arg(2)) {
        if (client.get() == &ctx.client) {
          ctx.client.close_after_reply = true;
        } else {
          client->Post(ClientMessage::Kind::kKill);
        }
        ctx.reply.Ok();
        return;
      }
    }
    ctx.reply.Error(errors::kNoSuchClient);
    return;
  }
  // New form: filters, reply = number killed.
  std::optional<uint64_t> id;
  std::optional<std::string_view> addr, laddr, type;
  bool skip_me = true;
  int64_t max_age = 0;
  if (ctx.argc() % 2 != 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  for (size_t i = 2; i + 1 < ctx.argc(); i += 2) {
    std::string_view option = ctx.arg(i), value = ctx.arg(i + 1);
    if (ArgIs(option, "id")) {
      int64_t parsed;
      if (!ParseInt64(value, &parsed) || parsed <= 0) {
        ctx.reply.Error("ERR client-id should be greater than 0");
        return;
      }
      id = static_cast<uint64_t>(parsed);
    } else if (ArgIs(option, "addr")) {
      addr = value;
    } else if (ArgIs(option, "laddr")) {
      laddr = value;
    } else if (ArgIs(option, "type")) {
      if (!ArgIs(value, "normal") && !ArgIs(value, "master") && !ArgIs(value, "replica") &&
          !ArgIs(value, "slave") && !ArgIs(value, "pubsub")) {
        ctx.reply.Error(StrCat("ERR Unknown client type '", value, "'"));
        return;
      }
      type = value;
    } else if (ArgIs(option, "user")) {
      if (value != "default") {
        ctx.reply.Error(StrCat("ERR No such user '", value, "'"));
        return;
      }
    } else if (ArgIs(option, "skipme")) {
      if (ArgIs(value, "yes")) {
        skip_me = true;
      } else if (ArgIs(value, "no")) {
        skip_me = false;
      } else {
        ctx.reply.Error(errors::kSyntax);
        return;
      }
    } else if (ArgIs(option, "maxage")) {
      if (!ParseIntOrReply(ctx, value, &max_age)) return;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  int64_t killed = 0;
  int64_t now = ctx.keyspace().NowMs();
  for (const auto& client : ctx.clients().Clients()) {
    if (id && client->id != *id) continue;
    if (addr && client->addr != *addr) continue;
    if (laddr && client->laddr != *laddr) continue;
    if (type && !HasClientType(*client, *type)) continue;
    if (max_age > 0 && (now - client->created_ms.load()) / 1000 < max_age) continue;
    if (client.get() == &ctx.client) {
      if (skip_me) continue;
      ctx.client.close_after_reply = true;
    } else {
      client->Post(ClientMessage::Kind::kKill);
    }
    ++killed;
  }
  ctx.reply.Integer(killed);
}

void CmdClientSetInfo(CommandContext& ctx) {
  std::string_view attr = ctx.arg(2), value = ctx.arg(3);
  bool lib_name = ArgIs(attr, "lib-name");
  if (!lib_name && !ArgIs(attr, "lib-ver")) {
    ctx.reply.Error(StrCat("ERR Unrecognized option '", attr, "'"));
    return;
  }
  if (!ValidClientName(value)) {
    ctx.reply.Error(FormatText(errors::kClientInfoChars, {lib_name ? "lib-name" : "lib-ver"}));
    return;
  }
  if (lib_name) {
    ctx.client.set_lib_name(std::string(value));
  } else {
    ctx.client.set_lib_ver(std::string(value));
  }
  ctx.reply.Ok();
}

bool ParseOnOffOrReply(CommandContext& ctx, bool* on) {
  if (ArgIs(ctx.arg(2), "on")) {
    *on = true;
  } else if (ArgIs(ctx.arg(2), "off")) {
    *on = false;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  return true;
}

void CmdClientNoEvict(CommandContext& ctx) {
  bool on;
  if (!ParseOnOffOrReply(ctx, &on)) return;
  ctx.client.no_evict = on;
  ctx.reply.Ok();
}

void CmdClientNoTouch(CommandContext& ctx) {
  bool on;
  if (!ParseOnOffOrReply(ctx, &on)) return;
  ctx.client.no_touch = on;
  ctx.reply.Ok();
}

// --- Client-side caching (server/tracking.h) ---------------------------------------------------

// CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p]... [OPTIN] [OPTOUT] [NOLOOP]: options
// parsed left to right, then checked in Redis's order, with its errors.
void CmdClientTracking(CommandContext& ctx) {
  int64_t redirect = 0;
  uint32_t options = 0;
  std::vector<std::string> prefixes;
  for (size_t j = 3; j < ctx.argc(); ++j) {
    const bool more = j + 1 < ctx.argc();
    std::string_view option = ctx.arg(j);
    if (ArgIs(option, "redirect") && more) {
      ++j;
      if (redirect != 0) return ctx.reply.Error(errors::kTrackingOneRedirect);
      if (!ParseInt64(ctx.arg(j), &redirect)) return ctx.reply.Error(errors::kNotInteger);
      // The client must exist now (it may go away later: tracking-redir-broken).
      if (redirect <= 0 || ctx.clients().FindClient(static_cast<uint64_t>(redirect)) == nullptr) {
        return ctx.reply.Error(errors::kTrackingNoSuchRedirect);
      }
    } else if (ArgIs(option, "bcast")) {
      options |= kTrackingBcast;
    } else if (ArgIs(option, "optin")) {
      options |= kTrackingOptIn;
    } else if (ArgIs(option, "optout")) {
      options |= kTrackingOptOut;
    } else if (ArgIs(option, "noloop")) {
      options |= kTrackingNoLoop;
    } else if (ArgIs(option, "prefix") && more) {
      prefixes.emplace_back(ctx.arg(++j));
    } else {
      return ctx.reply.Error(errors::kSyntax);
    }
  }
  ClientState& client = ctx.client;
  if (ArgIs(ctx.arg(2), "off")) {
    ctx.tracking().Disable(client);
    return ctx.reply.Ok();
  }
  if (!ArgIs(ctx.arg(2), "on")) return ctx.reply.Error(errors::kSyntax);
  const uint32_t current = client.tracking.load(std::memory_order_relaxed);
  if (!(options & kTrackingBcast) && !prefixes.empty()) {
    return ctx.reply.Error(errors::kTrackingPrefixNeedsBcast);
  }
  if ((current & kTrackingOn) && ((current & kTrackingBcast) != (options & kTrackingBcast))) {
    return ctx.reply.Error(errors::kTrackingBcastSwitch);
  }
  if ((options & kTrackingBcast) && (options & (kTrackingOptIn | kTrackingOptOut))) {
    return ctx.reply.Error(errors::kTrackingOptBcast);
  }
  if ((options & kTrackingOptIn) && (options & kTrackingOptOut)) {
    return ctx.reply.Error(errors::kTrackingOptBoth);
  }
  if (((options & kTrackingOptIn) && (current & kTrackingOptOut)) ||
      ((options & kTrackingOptOut) && (current & kTrackingOptIn))) {
    return ctx.reply.Error(errors::kTrackingOptSwitch);
  }
  if (options & kTrackingBcast) {
    for (size_t i = 0; i < prefixes.size(); ++i) {
      if (const std::string* existing = ClientTracking::OverlappingPrefix(client, prefixes[i])) {
        return ctx.reply.Error(
            FormatText(errors::kTrackingPrefixOverlapsExisting, {prefixes[i], *existing}));
      }
      for (size_t k = i + 1; k < prefixes.size(); ++k) {
        const size_t common = std::min(prefixes[i].size(), prefixes[k].size());
        if (prefixes[i].compare(0, common, prefixes[k], 0, common) == 0) {
          return ctx.reply.Error(
              FormatText(errors::kTrackingPrefixOverlapsGiven, {prefixes[i], prefixes[k]}));
        }
      }
    }
  }
  ctx.tracking().Enable(client, static_cast<uint64_t>(redirect), options, prefixes);
  ctx.reply.Ok();
}

// CLIENT CACHING YES|NO: whether the next command's keys are remembered (OPTIN / OPTOUT).
void CmdClientCaching(CommandContext& ctx) {
  const uint32_t flags = ctx.client.tracking.load(std::memory_order_relaxed);
  if (!(flags & kTrackingOn)) return ctx.reply.Error(errors::kCachingNotTracking);
  if (ArgIs(ctx.arg(2), "yes")) {
    if (!(flags & kTrackingOptIn)) return ctx.reply.Error(errors::kCachingYesNotOptIn);
  } else if (ArgIs(ctx.arg(2), "no")) {
    if (!(flags & kTrackingOptOut)) return ctx.reply.Error(errors::kCachingNoNotOptOut);
  } else {
    return ctx.reply.Error(errors::kSyntax);
  }
  ctx.client.tracking_caching = true;
  ctx.reply.Ok();
}

void CmdClientGetRedir(CommandContext& ctx) { ctx.reply.Integer(TrackingRedirect(ctx.client)); }

// CLIENT TRACKINGINFO: flags (a set in RESP3), redirect, prefixes, as Redis orders them.
void CmdClientTrackingInfo(CommandContext& ctx) {
  const ClientState& client = ctx.client;
  const uint32_t flags = client.tracking.load(std::memory_order_relaxed);
  std::vector<std::string_view> names = {(flags & kTrackingOn) ? "on" : "off"};
  if (flags & kTrackingBcast) names.push_back("bcast");
  if (flags & kTrackingOptIn) {
    names.push_back("optin");
    if (client.tracking_caching) names.push_back("caching-yes");
  }
  if (flags & kTrackingOptOut) {
    names.push_back("optout");
    if (client.tracking_caching) names.push_back("caching-no");
  }
  if (flags & kTrackingNoLoop) names.push_back("noloop");
  if (flags & kTrackingBrokenRedirect) names.push_back("broken_redirect");
  ctx.reply.MapHeader(3);
  ctx.reply.Bulk("flags");
  ctx.reply.SetHeader(static_cast<int64_t>(names.size()));
  for (std::string_view name : names) ctx.reply.Bulk(name);
  ctx.reply.Bulk("redirect");
  ctx.reply.Integer(TrackingRedirect(client));
  ctx.reply.Bulk("prefixes");
  ctx.reply.ArrayHeader(static_cast<int64_t>(client.tracking_prefixes.size()));
  for (const std::string& prefix : client.tracking_prefixes) ctx.reply.Bulk(prefix);
}

void CmdClientReply(CommandContext& ctx) {
  if (ArgIs(ctx.arg(2), "on")) {
    ctx.client.reply_mode = ReplyMode::kOn;
    ctx.reply.Ok();
  } else if (ArgIs(ctx.arg(2), "off")) {
    ctx.client.reply_mode = ReplyMode::kOff;
  } else if (ArgIs(ctx.arg(2), "skip")) {
    ctx.client.reply_mode = ReplyMode::kSkipNext;
  } else {
    ctx.reply.Error(errors::kSyntax);
  }
}

void CmdClientHelp(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CACHING (YES|NO)",
      "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
      "GETREDIR",
      "    Return the client ID we are redirecting to when tracking is enabled.",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are: ID, ADDR, LADDR, TYPE, USER, SKIPME, MAXAGE.",
      "LIST [options ...]",
      "    Return information about client connections.",
      "UNPAUSE",
      "    Stop the current client pause, resuming traffic.",
      "PAUSE <timeout> [WRITE|ALL]",
      "    Suspend all, or just write, clients for <timeout> milliseconds.",
      "REPLY (ON|OFF|SKIP)",
      "    Control the replies sent to the current connection.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "SETINFO <option> <value>",
      "    Set client meta attr (LIB-NAME, LIB-VER).",
      "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
      "         [OPTIN] [OPTOUT] [NOLOOP]",
      "    Control server assisted client side caching.",
      "TRACKINGINFO",
      "    Report tracking status for the current connection.",
      "NO-EVICT (ON|OFF)",
      "    Protect current client connection from eviction.",
      "NO-TOUCH (ON|OFF)",
      "    Will not touch LRU/LFU stats when this mode is on.",
      "HELP",
      "    Prints this help."};
  ctx.reply.ArrayHeader(static_cast<int64_t>(std::size(kLines)));
  for (std::string_view line : kLines) ctx.reply.SimpleString(line);
}

}  // namespace

const std::vector<CommandBinding>& ConnectionCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"auth", CmdAuth},
      {"hello", CmdHello},
      {"select", CmdSelect},
      {"quit", CmdQuit},
      {"reset", CmdReset},
      {"client", nullptr},
      {"client|id", CmdClientId},
      {"client|setname", CmdClientSetName},
      {"client|getname", CmdClientGetName},
      {"client|list", CmdClientList},
      {"client|info", CmdClientInfo},
      {"client|kill", CmdClientKill},
      {"client|setinfo", CmdClientSetInfo},
      {"client|no-evict", CmdClientNoEvict},
      {"client|no-touch", CmdClientNoTouch},
      {"client|reply", CmdClientReply},
      {"client|pause", CmdClientPause},
      {"client|unpause", CmdClientUnpause},
      {"client|unblock", CmdClientUnblock},
      {"client|help", CmdClientHelp},
      {"client|tracking", CmdClientTracking},
      {"client|caching", CmdClientCaching},
      {"client|getredir", CmdClientGetRedir},
      {"client|trackinginfo", CmdClientTrackingInfo},
  };
  return kCommands;
}

}  // namespace gigakv::server
