// The declarative command table and what a handler gets to work with.
//
// Adding a command = one handler `void CmdXxx(CommandContext&)`, one CommandBinding row in its
// family's table (server/commands/<family>_commands.cc), tests. The row binds the name to the
// handler (plus gigakv's own flags, if any); everything Redis defines about the command (arity,
// flags, keys, docs) comes from its metadata (command_metadata.h, generated from redis-server).
// The dispatcher (dispatcher.cc) looks the name up, checks arity, authentication and OOM, then
// calls the handler.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "protocol/reply_builder.h"

namespace gigakv {
class Store;
}

namespace gigakv::server {

class ClientState;
class Config;
class Settings;
class Keyspace;
class CommandTable;
class Dispatcher;
class ClientRegistry;
class Stats;
class SlowLog;
class TransactionGate;
class WatchRegistry;
class BlockingRegistry;
class Lifecycle;
class AppendOnlyLog;
class Snapshots;
class MigrationLinks;
class PubSub;
class KeyspaceNotifier;
class ClientTracking;
class ScriptCache;
class FunctionLibraries;

// Redis's command flags that gigakv acts on, set from the metadata's flag names (the others,
// such as movablekeys, are only reported), plus gigakv's own.
enum CommandFlag : uint32_t {
  kWrite = 1 << 0,
  kReadonly = 1 << 1,
  kDenyOom = 1 << 2,
  kAdmin = 1 << 3,
  kPubSub = 1 << 4,
  kNoScript = 1 << 5,
  kLoading = 1 << 6,
  kStale = 1 << 7,
  kFast = 1 << 8,
  kBlocking = 1 << 9,
  kNoAuth = 1 << 10,  // Allowed before AUTH.
  kSkipMonitor = 1 << 11,
  kSkipSlowlog = 1 << 12,
  kNoMulti = 1 << 13,
  kAllowBusy = 1 << 14,
  // gigakv's own, not reported by COMMAND: the command's work is bounded by its arguments'
  // count and size (what it replaces or removes is freed off-thread when large), so with few
  // and small arguments it cannot run long and the slow log does not time it (as fast
  // commands). Amortized upkeep that a write may trigger (a table's compaction or index
  // resize) is not counted, for these as for fast commands. Redis has no such flag: it times
  // every command.
  kBoundedWork = 1 << 20,
  // Refused unless enable-debug-command allows the client (Redis's internal CMD_PROTECTED,
  // which COMMAND does not report either): DEBUG.
  kProtected = 1 << 21,
  // Redis's CMD_MAY_REPLICATE, which COMMAND hides: not a write, but propagated (PUBLISH,
  // SPUBLISH), so CLIENT PAUSE WRITE holds it as it holds writes.
  kMayReplicate = 1 << 22,
  // gigakv's own: read-only, yet it may rewrite the value it reads and then logs itself, as
  // Redis propagates it (PFCOUNT storing its cached cardinality); the log's replay accepts it.
  kLoggedRead = 1 << 23,
};

struct CommandContext;
struct CommandMetadata;
using CommandHandler = void (*)(CommandContext& ctx);

// One row of a family's table.
struct CommandBinding {
  std::string_view name;   // Lower case; "container|sub" for subcommands. Must have metadata.
  CommandHandler handler;  // nullptr: a container (CONFIG...) whose subcommands have rows.
  uint32_t own_flags = 0;  // gigakv's own flags only: kBoundedWork ... kLoggedRead.
};

// A command as the dispatcher sees it: the row's name and handler, and the metadata's fields
// that the dispatcher reads, copied into plain fields when the table is built.
struct CommandSpec {
  std::string_view name;  // The row's (static) name.
  int arity;              // Redis's arity: N exact, -N at least N (name included).
  uint32_t flags;         // CommandFlag bits: Redis's flags and the row's own.
  int first_key;          // 0 = no keys.
  int last_key;           // -1 = last argument.
  int key_step;
  CommandHandler handler;
  const CommandMetadata* metadata;  // Never null.
};

// The server's parts a handler may use, by reference: Server (server.h) builds one and outlives
// it. Each part's header states its contract.
class CommandServices {
 public:
  CommandServices(Config& config, Settings& settings, Keyspace& keyspace,
                  const CommandTable& commands, Dispatcher& dispatcher, ClientRegistry& clients,
                  Stats& stats, SlowLog& slowlog, TransactionGate& transaction_gate,
                  WatchRegistry& watches, BlockingRegistry& blocking, Lifecycle& lifecycle,
                  Snapshots& snapshots, MigrationLinks& migration_links, AppendOnlyLog& aof,
                  PubSub& pubsub, KeyspaceNotifier& notifier, ClientTracking& tracking,
                  ScriptCache& scripts, FunctionLibraries& functions)
      : config_(config),
        settings_(settings),
        keyspace_(keyspace),
        commands_(commands),
        dispatcher_(dispatcher),
        clients_(clients),
        stats_(stats),
        slowlog_(slowlog),
        transaction_gate_(transaction_gate),
        watches_(watches),
        blocking_(blocking),
        lifecycle_(lifecycle),
        snapshots_(snapshots),
        migration_links_(migration_links),
        aof_(aof),
        pubsub_(pubsub),
        notifier_(notifier),
        tracking_(tracking),
        scripts_(scripts),
        functions_(functions) {}
  CommandServices(const CommandServices&) = delete;
  CommandServices& operator=(const CommandServices&) = delete;

  Config& config() const { return config_; }        // Directives as text: CONFIG GET/SET/REWRITE.
  Settings& settings() const { return settings_; }  // Directives as typed fields.
  Keyspace& keyspace() const { return keyspace_; }
  const CommandTable& commands() const { return commands_; }
  Dispatcher& dispatcher() const { return dispatcher_; }  // EXEC runs its queue through it.
  ClientRegistry& clients() const { return clients_; }
  Stats& stats() const { return stats_; }
  SlowLog& slowlog() const { return slowlog_; }
  TransactionGate& transaction_gate() const { return transaction_gate_; }
  WatchRegistry& watches() const { return watches_; }
  BlockingRegistry& blocking() const { return blocking_; }
  Lifecycle& lifecycle() const { return lifecycle_; }
  Snapshots& snapshots() const { return snapshots_; }
  MigrationLinks& migration_links() const { return migration_links_; }
  AppendOnlyLog& aof() const { return aof_; }
  PubSub& pubsub() const { return pubsub_; }
  KeyspaceNotifier& notifier() const { return notifier_; }     // Keyspace notifications.
  ClientTracking& tracking() const { return tracking_; }       // Client-side caching.
  ScriptCache& scripts() const { return scripts_; }            // EVAL's script cache.
  FunctionLibraries& functions() const { return functions_; }  // FUNCTION's libraries.

 private:
  Config& config_;
  Settings& settings_;
  Keyspace& keyspace_;
  const CommandTable& commands_;
  Dispatcher& dispatcher_;
  ClientRegistry& clients_;
  Stats& stats_;
  SlowLog& slowlog_;
  TransactionGate& transaction_gate_;
  WatchRegistry& watches_;
  BlockingRegistry& blocking_;
  Lifecycle& lifecycle_;
  Snapshots& snapshots_;
  MigrationLinks& migration_links_;
  AppendOnlyLog& aof_;
  PubSub& pubsub_;
  KeyspaceNotifier& notifier_;
  ClientTracking& tracking_;
  ScriptCache& scripts_;
  FunctionLibraries& functions_;
};

// Everything a handler may touch: its request, its reply, its client, and the server's parts
// through `services` (shortcuts below). Arguments are views into the connection's input buffer
// and valid only during the call.
struct CommandContext {
  const std::vector<std::string_view>& args;
  protocol::ReplyBuilder& reply;
  ClientState& client;
  const CommandServices& services;
  Store& store;  // keyspace().store(), on the hot path.
  const CommandSpec& spec;

  size_t argc() const { return args.size(); }
  std::string_view arg(size_t i) const { return args[i]; }
  int db() const;

  Config& config() const { return services.config(); }
  Settings& settings() const { return services.settings(); }
  Keyspace& keyspace() const { return services.keyspace(); }
  const CommandTable& commands() const { return services.commands(); }
  Dispatcher& dispatcher() const { return services.dispatcher(); }
  ClientRegistry& clients() const { return services.clients(); }
  Stats& stats() const { return services.stats(); }
  SlowLog& slowlog() const { return services.slowlog(); }
  TransactionGate& transaction_gate() const { return services.transaction_gate(); }
  WatchRegistry& watches() const { return services.watches(); }
  BlockingRegistry& blocking() const { return services.blocking(); }
  Lifecycle& lifecycle() const { return services.lifecycle(); }
  Snapshots& snapshots() const { return services.snapshots(); }
  MigrationLinks& migration_links() const { return services.migration_links(); }
  PubSub& pubsub() const { return services.pubsub(); }
  KeyspaceNotifier& notifier() const { return services.notifier(); }
  ClientTracking& tracking() const { return services.tracking(); }
  ScriptCache& scripts() const { return services.scripts(); }
  FunctionLibraries& functions() const { return services.functions(); }
};

// Registry of all families' tables; built once at start-up.
class CommandTable {
 public:
  // Aborts when a row has no metadata or a name has two rows (tests check both).
  CommandTable();
  CommandTable(const CommandTable&) = delete;
  CommandTable& operator=(const CommandTable&) = delete;
  // Case-insensitive lookup of a top-level command; nullptr if unknown. Sets *id (if given) to
  // IdOf(result), saving the dispatcher a second lookup.
  const CommandSpec* Find(std::string_view name, uint32_t* id = nullptr) const;
  // Dense id of a spec in [0, all().size()), for per-command counters.
  uint32_t IdOf(const CommandSpec* spec) const { return ids_.at(spec); }
  const CommandSpec* FindSub(std::string_view container, std::string_view sub) const;
  const std::vector<const CommandSpec*>& all() const { return all_; }
  // Subcommands of a container command ("config" -> config|get, config|set...).
  std::vector<const CommandSpec*> Subcommands(std::string_view container) const;

 private:
  std::vector<CommandSpec> specs_;  // Built once; all_ and the lookups point into it.
  std::vector<const CommandSpec*> all_;
  std::vector<std::pair<std::string, const CommandSpec*>> sorted_;  // For subcommand ranges.
  // Top-level names, lower-cased, in an open-addressing table probed linearly from a hash of the
  // lower-cased name: a lookup folds case once, hashes once and usually compares one name. It is
  // never more than 1/4 full, so probes stay short; built once, read-only afterwards.
  struct NameSlot {
    std::string_view lower_name;  // Empty: free slot. The spec's own (static) name.
    const CommandSpec* spec = nullptr;
    uint32_t id = 0;
  };
  static constexpr size_t kMaxNameLength = 32;  // Longer than any command name.
  std::vector<NameSlot> name_slots_;
  size_t name_mask_ = 0;
  absl::flat_hash_map<const CommandSpec*, uint32_t> ids_;
};

// Each family file defines its table; AllCommandBindings() is their concatenation, in the
// order the table lists them (COMMAND's order).
const std::vector<CommandBinding>& ServerCommands();       // server_commands.cc
const std::vector<CommandBinding>& ConnectionCommands();   // connection_commands.cc
const std::vector<CommandBinding>& StringCommands();       // string_commands.cc
const std::vector<CommandBinding>& KeyspaceCommands();     // keyspace_commands.cc
const std::vector<CommandBinding>& BitmapCommands();       // bitmap_commands.cc
const std::vector<CommandBinding>& HllCommands();          // hll_commands.cc
const std::vector<CommandBinding>& GeoCommands();          // geo_commands.cc
const std::vector<CommandBinding>& StreamCommands();       // stream_commands.cc
const std::vector<CommandBinding>& HashCommands();         // hash_commands.cc
const std::vector<CommandBinding>& SetCommands();          // set_commands.cc
const std::vector<CommandBinding>& ListCommands();         // list_commands.cc
const std::vector<CommandBinding>& SortCommands();         // sort_commands.cc
const std::vector<CommandBinding>& ZSetCommands();         // zset_commands.cc
const std::vector<CommandBinding>& TransactionCommands();  // transaction_commands.cc
const std::vector<CommandBinding>& MigrateCommands();      // migrate_commands.cc
const std::vector<CommandBinding>& SnapshotCommands();     // snapshot_commands.cc
const std::vector<CommandBinding>& PubSubCommands();       // pubsub_commands.cc
const std::vector<CommandBinding>& ScriptingCommands();    // scripting_commands.cc
std::vector<CommandBinding> AllCommandBindings();

// Replies "unknown subcommand" for a container command (CLIENT, CONFIG...).
void ReplyUnknownSubcommand(CommandContext& ctx);
// Replies Redis's addReplySubcommandSyntaxError: a known subcommand with arguments it does not
// take ("unknown subcommand or wrong number of arguments for 'X'. Try CMD HELP.").
void ReplySubcommandSyntaxError(CommandContext& ctx);
// Replies the wrong-arity error for `name`.
void ReplyWrongArity(protocol::ReplyBuilder& reply, std::string_view name);

}  // namespace gigakv::server
