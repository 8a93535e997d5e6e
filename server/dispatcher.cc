#include "server/dispatcher.h"

#include <chrono>
#include <cstring>
#include <exception>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gigakv/strings.h"
#include "server/commands/collection_access.h"
#include "server/cycle_clock.h"
#include "server/errors.h"
#include "server/server.h"
#include "server/tracking.h"

namespace gigakv::server {
namespace {

bool ArityOk(int arity, size_t argc) {
  return arity >= 0 ? argc == static_cast<size_t>(arity) : argc >= static_cast<size_t>(-arity);
}

// Redis formats these texts with %s, which stops at a NUL byte; do the same.
std::string_view UpToNul(std::string_view text) { return text.substr(0, text.find('\0')); }

std::string UnknownCommandText(const std::vector<std::string_view>& args) {
  std::string list;
  for (size_t i = 1; i < args.size() && list.size() < 128; ++i) {
    StrAppend(&list, "'", UpToNul(args[i]).substr(0, 128 - list.size()), "' ");
  }
  return FormatText(errors::kUnknownCommand, {UpToNul(args[0]).substr(0, 128), list});
}

// Command timing inside a TimedBatch (one per pipelined batch of a connection). Reading the
// clock costs tens of ns, a few % of a pipelined GET, so a run of outermost commands with the
// same counters (a pipeline of GETs) is timed as a whole: the clock is read when the run ends
// (another command starts, the batch ends, or timing restarts) and the run's time is added to
// those counters, which hold sums (usec, usec_per_call) so the total stays exact.
//   tls_mark      the time from which the next outermost command is timed; 0 outside a batch.
//   tls_open_run  the counters of the commands run since tls_mark, not yet charged; or nullptr.
//   tls_open_run_calls  how many commands that run holds.
//   tls_disturbed set when a nested command or a Restart() moved the timing during a command.
// Nested commands (inside EXEC, or blocked clients served by a push) are timed on their own.
// INFO latencystats gets a run as that many samples of its average time.
thread_local uint64_t tls_mark = 0;
thread_local CommandCounters* tls_open_run = nullptr;
thread_local uint64_t tls_open_run_calls = 0;
thread_local bool tls_disturbed = false;
thread_local int tls_execute_depth = 0;
// latency-tracking of the server whose Execute ran last on this thread.
thread_local bool tls_latency_tracking = false;

// Adds `calls` latency samples of ticks / calls each to the command's histogram (created on
// first use: only this thread writes these counters).
void RecordLatency(CommandCounters& counters, uint64_t ticks, uint64_t calls) {
  if (!tls_latency_tracking || calls == 0) return;
  LatencyHistogram* histogram = counters.latency.load(std::memory_order_relaxed);
  if (histogram == nullptr) {
    histogram = new LatencyHistogram();
    counters.latency.store(histogram, std::memory_order_release);
  }
  uint64_t average = calls == 1 ? ticks : ticks / calls;
  histogram->Record(static_cast<int64_t>(CycleClock::ToNanos(average)), calls);
}

// Charges the open run, if any, with the time up to now; the next command is timed from now,
// which it returns.
uint64_t CloseRun() {
  uint64_t now = CycleClock::Now();
  if (tls_open_run != nullptr) {
    AddOwned(tls_open_run->ticks, now - tls_mark);
    RecordLatency(*tls_open_run, now - tls_mark, tls_open_run_calls);
  }
  tls_open_run = nullptr;
  tls_open_run_calls = 0;
  tls_mark = now;
  return now;
}

struct ExecuteDepth {
  ExecuteDepth() { ++tls_execute_depth; }
  ~ExecuteDepth() { --tls_execute_depth; }
  bool top() const { return tls_execute_depth == 1; }
  ExecuteDepth(const ExecuteDepth&) = delete;
  ExecuteDepth& operator=(const ExecuteDepth&) = delete;
};

// The peer address of `client` ("ip:port") is the loopback address, as Redis's islocalClient.
bool IsLocalClient(const ClientState& client) {
  std::string_view addr = client.addr;
  size_t colon = addr.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string_view ip = addr.substr(0, colon);
  return ip == "127.0.0.1" || ip == "::1";
}

// Commands that run at once between MULTI and EXEC instead of being queued.
bool RunsInsideMulti(const CommandSpec& spec) {
  const std::string_view name = spec.name;
  return name == "exec" || name == "discard" || name == "multi" || name == "watch" ||
         name == "quit" || name == "reset";
}

// Whether `spec` is refused while used memory is over maxmemory. As in Redis, every command
// queued in MULTI is (queueing takes memory), and EXEC is when a queued command is.
bool DeniedOnOom(const CommandSpec& spec, const ClientState& client) {
  if (spec.flags & kDenyOom) return true;
  if (!client.multi.active) return false;
  if (spec.name == "exec") return (client.multi.flags & kDenyOom) != 0;
  return spec.name != "discard" && spec.name != "quit" && spec.name != "reset";
}

// After a failed background save (Snapshots::writes_refused), as Redis: write commands, EXEC of
// a transaction that queued one, and PING.
// (P|S)SUBSCRIBE and (P|S)UNSUBSCRIBE: their replies are confirmations, pushes to Redis.
bool IsSubscriptionCommand(const CommandSpec& spec) {
  return (spec.flags & kPubSub) && spec.name.find("subscribe") != std::string_view::npos;
}

// A RESP2 client that listens to a channel is in subscribed mode: its connection carries
// messages, so only what manages the subscriptions runs (RESP3 tells pushes from replies).
// Checked as Redis's processCommand does: not for the commands EXEC runs.
bool RefusedWhenSubscribed(const CommandSpec& spec, const ClientState& client) {
  // The pointer first: inline, and null for every client that never subscribed.
  if (client.pubsub() == nullptr || client.resp != 2 || client.in_exec || !IsSubscribed(client)) {
    return false;
  }
  return !IsSubscriptionCommand(spec) && spec.name != "ping" && spec.name != "quit" &&
         spec.name != "reset";
}

// SHUTDOWN NOSAVE and the like: whether an argument after the name is `word`.
bool HasArgIgnoringCase(const std::vector<std::string_view>& args, std::string_view word) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], word)) return true;
  }
  return false;
}

bool DeniedOnDiskError(const CommandSpec& spec, const ClientState& client) {
  if (spec.flags & kWrite) return true;
  if (spec.name == "exec") return (client.multi.flags & kWrite) != 0;
  return spec.name == "ping";
}

void QueueInTransaction(ClientState& client, const CommandSpec& spec,
                        const std::vector<std::string_view>& args) {
  client.multi.commands.emplace_back(args.begin(), args.end());
  client.multi.flags |= spec.flags;
  client.multi_count.store(static_cast<int>(client.multi.commands.size()),
                           std::memory_order_relaxed);
}

}  // namespace

Dispatcher::TimedBatch::TimedBatch() {
  tls_mark = CycleClock::Now();
  tls_open_run = nullptr;
}
Dispatcher::TimedBatch::~TimedBatch() {
  CloseRun();
  tls_mark = 0;
}
void Dispatcher::TimedBatch::Restart() {
  if (tls_mark == 0 || tls_execute_depth > 1) return;
  CloseRun();
  tls_disturbed = true;
}

bool Dispatcher::ProtectedCommandAllowed(const ClientState& client) const {
  return ProtectedActionAllowed(server_.settings().enable_debug_command.get(), client);
}

bool Dispatcher::ProtectedActionAllowed(DebugCommandAccess access, const ClientState& client) {
  return access == DebugCommandAccess::kYes ||
         (access == DebugCommandAccess::kLocal && IsLocalClient(client));
}

CommandOutcome Dispatcher::Execute(ClientState& client, const std::vector<std::string_view>& args,
                                   protocol::ReplyBuilder& reply) {
  Server& server = server_;
  const CommandTable& commands = server.commands();
  const Settings& settings = server.settings();
  Keyspace& keyspace = server.keyspace();
  ExecuteDepth depth;
  // Client-side caching: the table back within tracking-table-max-keys before a command runs,
  // as Redis's processCommand does it
  // (this client's own invalidations then go out just below, ahead of its reply).
  if (depth.top() && server.tracking().clients() > 0) {
    server.tracking().EnforceLimit(settings.tracking_table_max_keys.get());
  }
  // Messages queued for a subscriber go out ahead of this command's reply, as Redis writes them
  // into the client's buffer when they are published (pushes ignore CLIENT REPLY OFF there too).
  if (client.pubsub() != nullptr && !client.in_exec && !client.rerunning_blocked) {
    server.pubsub().Drain(client, reply);
  }
  const size_t reply_mark = reply.buffer().size();
  const ReplyMode mode_before = client.reply_mode;
  if (mode_before == ReplyMode::kSkipNext) client.reply_mode = ReplyMode::kOn;
  const bool rerun = client.rerunning_blocked;
  if (!rerun) {
    client.reply_suppressed = mode_before == ReplyMode::kSkipNext || mode_before == ReplyMode::kOff;
  }
  reply.ResetErrorCount();

  // Eviction before the command: the client's own "evicted" notifications precede its reply,
  // as Redis evicts inside processCommand.
  auto evict = [&] {
    ExecutingClientScope executing(client, reply);
    const bool evicted = keyspace.EvictToLimit();
    // Its own invalidations of evicted keys too, as Redis sends them right after evicting.
    if (client.pubsub() != nullptr && !client.reply_suppressed)
      server.pubsub().Drain(client, reply);
    return evicted;
  };
  uint32_t spec_id = 0;
  const CommandSpec* spec = nullptr;
  const std::string_view name = args[0];
  if (!rerun && client.last_command_spec != nullptr &&
      name.size() == client.last_command_name_len &&
      std::memcmp(name.data(), client.last_command_name, name.size()) == 0) {
    spec = client.last_command_spec;
    spec_id = client.last_command_id;
  } else {
    spec = commands.Find(name, &spec_id);
    if (!rerun && spec != nullptr && name.size() <= ClientState::kLastCommandNameMax) {
      std::memcpy(client.last_command_name, name.data(), name.size());
      client.last_command_name_len = static_cast<uint8_t>(name.size());
      client.last_command_spec = spec;
      client.last_command_id = spec_id;
    }
  }
  CommandCounters* counters = server.stats().LocalCommandCounters();
  CommandCounters* stats = nullptr;
  CommandOutcome outcome = CommandOutcome::kRan;
  auto reject = [&](std::string_view text) {
    outcome = CommandOutcome::kRejected;
    reply.Error(text);
    if (stats != nullptr) AddOwned(stats->rejected_calls, 1);
    if (client.multi.active) client.multi.aborted = true;  // EXEC will answer EXECABORT.
    TimedBatch::Restart();                                 // Its time is not the next command's.
  };

  if (spec == nullptr) {
    reject(UnknownCommandText(args));
  } else if (!ArityOk(spec->arity, args.size())) {
    stats = &counters[spec_id];
    reject(FormatText(errors::kWrongArity, {spec->name}));
  } else if ((spec->handler == nullptr || (args.size() >= 2 && spec->name == "command")) &&
             commands.FindSub(spec->name, args[1]) == nullptr) {
    // A container command (CONFIG, CLIENT...) with an unknown subcommand: as in Redis, it is
    // no command, so no command's counters move.
    reject(FormatText(errors::kUnknownSubcommand,
                      {UpToNul(args[1]).substr(0, 128), AsciiUpper(args[0])}));
  } else {
    // A subcommand has its own counters and arity. COMMAND also runs bare, so it has a handler
    // of its own, but COMMAND COUNT counts as command|count as in Redis.
    if (spec->handler == nullptr || (args.size() >= 2 && spec->name == "command")) {
      if (const CommandSpec* sub = commands.FindSub(spec->name, args[1]); sub != nullptr) {
        spec = sub;
        spec_id = commands.IdOf(spec);
      }
    }
    stats = &counters[spec_id];
    // Like Redis: a client is asked to authenticate only while a password is set and it has
    // not authenticated (clients connected before the password was set stay logged in).
    const bool auth_required =
        !client.authenticated && !(spec->flags & kNoAuth) && settings.password_set.get();
    if ((spec->flags & kProtected) && !ProtectedCommandAllowed(client)) {
      reject(errors::kDebugNotAllowed);  // As in Redis, checked before authentication.
    } else if (auth_required) {
      reject(errors::kNoAuth);
    } else if ((spec->flags & (kWrite | kReadonly)) &&
               client.monitor.load(std::memory_order_relaxed)) {
      reject(errors::kReplicaKeyspace);  // A monitor is a replica to Redis.
    } else if (!ArityOk(spec->arity, args.size())) {
      reject(FormatText(errors::kWrongArity, {spec->name}));
    } else if (!rerun && !client.in_exec && server.clients().PostponesCommand(*spec, client)) {
      // CLIENT PAUSE: not run, not counted; the connection keeps the request and runs it again
      // once the pause ends. Its CLIENT REPLY SKIP still applies to it then.
      client.reply_mode = mode_before;
      client.last_command.store(spec->name.data(), std::memory_order_relaxed);
      return CommandOutcome::kPostponed;
    } else if (!rerun && !client.in_exec && keyspace.OverMaxmemory() &&
               !server.transaction_gate().busy() &&  // No eviction under a busy script.
               !server.clients().Paused() && !evict() &&
               DeniedOnOom(*spec, client)) {  // EXEC was checked once for all it runs.
      reject(errors::kOom);
    } else if (!rerun && !client.in_exec && server.snapshots().writes_refused() &&
               DeniedOnDiskError(*spec, client)) {
      reject(errors::kMisconf);
    } else if (!rerun && !client.in_exec && server.aof().writes_refused() &&
               DeniedOnDiskError(*spec, client)) {
      reject(StrCat(errors::kMisconfAofPrefix, server.aof().last_error()));
    } else if (RefusedWhenSubscribed(*spec, client)) {
      reject(FormatText(errors::kSubscribedContext, {spec->name}));
    } else if ((server.snapshots().loading() || server.aof().loading()) &&
               !(spec->flags & kLoading)) {
      reject(errors::kLoading);
    } else if (!client.in_exec && server.transaction_gate().busy() &&
               (!(spec->flags & kAllowBusy) ||
                (spec->name == "shutdown" && !HasArgIgnoringCase(args, "nosave")))) {
      // A script ran past busy-reply-threshold: only what may stop it (or the server) runs;
      // SHUTDOWN only with NOSAVE (a save would hold half the script's writes), as in Redis.
      reject(server.scripts().running_function() ? errors::kBusyFunction : errors::kBusyScript);
    } else if (client.multi.active && !RunsInsideMulti(*spec)) {
      if (spec->flags & kNoMulti) {
        reject(errors::kNotAllowedInMulti);
      } else {
        QueueInTransaction(client, *spec, args);
        reply.SimpleString("QUEUED");
        outcome = CommandOutcome::kQueued;
        TimedBatch::Restart();
      }
    } else {
      // The log's backpressure: a write (or an EXEC of writes, once for all it runs) waits
      // while the disk falls behind.
      if (!client.in_exec && ((spec->flags & kWrite) ||
                              (spec->name == "exec" && (client.multi.flags & kWrite) != 0))) {
        server.aof().WaitForRoom();
      }
      client.last_command.store(spec->name.data(), std::memory_order_relaxed);
      tls_latency_tracking = settings.latency_tracking.get();
      CommandContext ctx{args, reply, client, server.services(), keyspace.store(), *spec};
      // Outermost commands of a batch are timed in runs (see tls_mark); others on their own.
      const bool run_timed = tls_mark != 0 && tls_execute_depth == 1 && !rerun;
      // The slow log times commands one by one, or not at all when they cannot be slow
      // (SlowLog::NeedsTiming). An outermost command timed for it closes its run when it ends,
      // so the next one starts from that clock read: one read per command, as the run timing's
      // own.
      const bool slowlog_timed =
          !rerun && SlowLog::NeedsTiming(spec->flags, args, settings.slowlog_log_slower_than.get());
      uint64_t start = 0;
      if (run_timed) {
        // A closed run left the mark at the last clock read: this command starts from it.
        if (tls_open_run != nullptr && (tls_open_run != stats || slowlog_timed)) CloseRun();
        start = tls_mark;
        tls_disturbed = false;
      } else {
        start = CycleClock::Now();
        if (tls_execute_depth > 1) tls_disturbed = true;
      }
      {
        // Stores collections the command wrote back inline when it ends (collection_access.h).
        InlineCommandScope inline_scope(keyspace.store());
        // The log keeps a command's effects together (MSET, SUNIONSTORE's DEL and SADD): one
        // record, replayed all or nothing, as Redis logs one command.
        std::optional<ChangeStream::Group> effects_group;
        if ((spec->flags & kWrite) && server.aof().enabled()) {
          effects_group.emplace(keyspace.changes());
        }
        ExecutingClientScope executing(client, reply);
        // Client-side caching: a tracking client's read-only command remembers its keys before
        // it reads them (a write on another thread in between is then seen) and after (its own
        // lazy expiry of a key dropped the entry).
        const uint32_t tracking = client.tracking.load(std::memory_order_relaxed);
        const bool remembers = (tracking & kTrackingOn) && !(tracking & kTrackingBcast);
        if (remembers) server.tracking().RememberKeys(client, *spec, args);
        try {
          spec->handler(ctx);
        } catch (const std::exception& e) {
          // Last-resort guard: a handler bug or an allocation failure must not take the server
          // down. Handlers themselves report errors through replies, never exceptions.
          reply.Error(StrCat("ERR internal error executing '", spec->name, "': ", e.what()));
        }
        if (remembers) server.tracking().RememberKeys(client, *spec, args);
      }
      // A blocking command parked the client (blocking.h); a re-run is never parked again.
      if (!rerun && client.blocked.load(std::memory_order_relaxed)) {
        outcome = CommandOutcome::kBlocked;
      }
      uint64_t end = 0;
      if (run_timed) {
        tls_open_run_calls = tls_open_run == stats ? tls_open_run_calls + 1 : 1;
        tls_open_run = stats;
        // Nested commands or a Restart() took the clock meanwhile: close the run now.
        if (tls_disturbed || slowlog_timed) end = CloseRun();
      } else if (!rerun) {
        end = CycleClock::Now();
        AddOwned(stats->ticks, end - start);
        RecordLatency(*stats, end - start, 1);
      }
      if (slowlog_timed) {
        auto duration_us = static_cast<int64_t>(CycleClock::ToMicros(end - start));
        // Read again: the command may have been a CONFIG SET of the threshold (Redis compares
        // after running it).
        int64_t threshold = settings.slowlog_log_slower_than.get();
        if (threshold >= 0 && duration_us >= threshold) {
          server.slowlog().Push(args, duration_us, keyspace.NowMs() / 1000, client.addr,
                                client.name(), static_cast<size_t>(settings.slowlog_max_len.get()));
        }
      }
      if (!rerun) {  // A served blocked command was counted when it first ran.
        AddOwned(stats->calls, 1);
        if (reply.errors_sent() > 0) AddOwned(stats->failed_calls, 1);
        // Admin commands are not shown, as in Redis; nor is a re-run of a blocked command.
        // Inside EXEC the command's reply is part of EXEC's array, so its own line is posted.
        if (server.clients().HasMonitors() && !(spec->flags & (kAdmin | kSkipMonitor))) {
          server.clients().FeedMonitors(client, args, client.in_exec ? nullptr : &reply);
        }
      }
    }
  }
  if (const int counted = reply.errors_sent() - reply.errors_counted_elsewhere(); counted > 0) {
    server.stats().total_error_replies.fetch_add(static_cast<uint64_t>(counted),
                                                 std::memory_order_relaxed);
    server.stats().CountError(reply.last_error_code());
  }
  if (!rerun) AddOwned(client.commands_processed, 1);  // Only the client's own thread writes it.
  // Clients blocked on keys this command pushed to are served now, with no lock held.
  // Inside EXEC they are served once the whole transaction has run.
  if (BlockingRegistry::HasReadyKeys() && !client.in_exec && !server.transaction_gate().busy())
    server.blocking().ServeReadyKeys(*this, keyspace.store());

  if (tls_execute_depth == 1) {
    // CLIENT CACHING applies to the next command, or to a whole transaction; CLIENT commands
    // keep it (Redis's resetClient).
    if (client.tracking_caching && !rerun && client.multi_count.load() < 0 &&
        (spec == nullptr || !spec->name.starts_with("client|"))) {
      client.tracking_caching = false;
    }
    // BCAST invalidations of the keys this command changed, after its reply.
    if (server.tracking().broadcasts_pending()) server.tracking().FlushBroadcasts();
  }
  const ReplyMode mode_after = client.reply_mode;
  // A subscription's confirmations are pushes, which Redis sends whatever CLIENT REPLY says.
  if ((mode_before == ReplyMode::kSkipNext || mode_after == ReplyMode::kOff ||
       mode_after == ReplyMode::kSkipNext) &&
      !(outcome == CommandOutcome::kRan && IsSubscriptionCommand(*spec))) {
    reply.buffer().resize(reply_mark);
  }
  return outcome;
}

absl::Status Dispatcher::Replay(ClientState& client, const std::vector<std::string_view>& args,
                                protocol::ReplyBuilder& reply) {
  const CommandTable& commands = server_.commands();
  const CommandSpec* spec = args.empty() ? nullptr : commands.Find(args[0]);
  if (spec != nullptr && spec->handler == nullptr && args.size() >= 2) {
    spec = commands.FindSub(spec->name, args[1]);
  }
  if (spec == nullptr || spec->handler == nullptr) {
    return absl::InvalidArgumentError(StrCat("Unknown command '",
                                             args.empty() ? std::string_view() : args[0],
                                             "' reading the append only file"));
  }
  if (!ArityOk(spec->arity, args.size())) {
    return absl::InvalidArgumentError(
        StrCat("Wrong number of arguments for '", spec->name, "' reading the append only file"));
  }
  if (!(spec->flags & (kWrite | kLoggedRead))) {
    // Only writes are effects: a log holding SHUTDOWN or CLIENT PAUSE is not one gigakv wrote.
    return absl::InvalidArgumentError(
        StrCat("Command '", spec->name, "' is not a write, reading the append only file"));
  }
  CommandContext ctx{args, reply, client, server_.services(), server_.keyspace().store(), *spec};
  InlineCommandScope inline_scope(server_.keyspace().store());
  try {
    spec->handler(ctx);
  } catch (const std::exception& e) {
    return absl::InternalError(StrCat("Error replaying '", spec->name, "': ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace gigakv::server
