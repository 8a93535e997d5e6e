// The dispatcher: the one place that checks a request before its handler runs, runs it, and says
// what became of it.
//
// Execute looks the name up in the command table (a pipeline repeating one name skips the
// lookup), resolves container subcommands (CONFIG GET -> config|get), checks arity, protected
// commands, authentication, a monitor's keyspace access, CLIENT PAUSE, maxmemory (evicting
// first) and MULTI queueing, then runs the handler with a CommandContext. Around the handler it
// times the command (commandstats, latencystats, the slow log), counts calls and errors, feeds
// MONITOR, stores inline collections back (collection_access.h) and serves clients that the
// command's writes unblocked. CLIENT REPLY OFF/SKIP drop the reply here.
//
// Threading: Execute runs on whichever thread owns the client (an I/O thread; the caller's in
// tests), concurrently for different clients; it nests (EXEC runs its queued commands, a served
// blocked client's command is run again from the serving thread). Never throws.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "protocol/reply_builder.h"
#include "server/settings.h"

namespace gigakv::server {

class Server;
class ClientState;

// What became of one request; the caller (the connection) acts on it.
enum class CommandOutcome : uint8_t {
  kRan,        // The handler ran; its reply (an error too) is in the builder, unless suppressed.
  kRejected,   // Refused before it ran (unknown, arity, auth, OOM...): an error reply.
  kQueued,     // Queued between MULTI and EXEC: +QUEUED.
  kPostponed,  // Held by CLIENT PAUSE, not run and not counted: the caller keeps the request and
               // runs it again once the client's outbox gets kResume.
  kBlocked,    // The handler parked the client (BLPOP...): no reply until a push serves it or
               // its timeout passes; the caller runs nothing more for the client meanwhile.
};

class Dispatcher {
 public:
  // `server` owns the dispatcher and every part it reaches.
  explicit Dispatcher(Server& server) : server_(server) {}
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Runs one request (`args[0]` the command name) for `client`, appending its reply (if any) to
  // `reply`.
  CommandOutcome Execute(ClientState& client, const std::vector<std::string_view>& args,
                         protocol::ReplyBuilder& reply);

  // Applies one effect replayed from the append-only log for `client` (its db selected): the
  // command's handler alone, without Execute's checks, counters, slow log or monitors (Redis
  // runs its AOF's commands on a fake client the same way). InvalidArgument for an unknown
  // command or a wrong number of arguments; the handler's reply (an error too) goes to `reply`.
  absl::Status Replay(ClientState& client, const std::vector<std::string_view>& args,
                      protocol::ReplyBuilder& reply);

  // Marks a batch of pipelined commands on the calling thread: within it each command is timed
  // from the end of the previous one (one clock read per command instead of two; the parsing in
  // between is counted with the command). Batches must not nest.
  class TimedBatch {
   public:
    TimedBatch();
    ~TimedBatch();
    TimedBatch(const TimedBatch&) = delete;
    TimedBatch& operator=(const TimedBatch&) = delete;
    // The next command is timed from now (after a wait that is nobody's execution time, and
    // after commands rejected or queued without running).
    static void Restart();
  };

  // Whether `access` (enable-debug-command, enable-protected-configs) lets `client` go on:
  // "yes", or "local" for a client on the loopback address, as Redis's allowProtectedAction.
  static bool ProtectedActionAllowed(DebugCommandAccess access, const ClientState& client);

 private:
  // Whether enable-debug-command lets `client` run a protected command (DEBUG).
  bool ProtectedCommandAllowed(const ClientState& client) const;

  Server& server_;
};

}  // namespace gigakv::server
