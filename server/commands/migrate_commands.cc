// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
//         [AUTH2 username password] [KEYS key...]
//
// Moves keys to another server (gigakv or Redis) as Redis 7.0 does (cluster.c migrateCommand):
// each key's DUMP payload goes out as a RESTORE (with the key's remaining TTL, and REPLACE when
// asked), after AUTH and a SELECT of the destination database when the cached link has not
// selected it already (MigrationLinks, migration_links.h); then one reply per command is read.
// A key the target acknowledged is deleted here unless COPY was given; +OK when every command
// succeeded, "+NOKEY" when none of the keys exists, the target's first error as "ERR Target
// instance replied with error: ..." (keys it did acknowledge are still moved), "-IOERR ..." when
// the link fails. A link that fails before anything was acknowledged, for another reason than the
// timeout, is reopened and the whole request sent once more (a cached link the target closed
// while idle is common).
//
// Unlike Redis, gigakv serves other clients while MIGRATE waits for the target (the I/O thread
// running MIGRATE waits; the others and the keys' shards do not): a key that another client
// changes between its DUMP and the target's acknowledgement is not deleted, since the target
// holds the value sent, not the new one; MIGRATE still answers +OK. The wait of each step is
// bounded by `timeout` milliseconds (1000 when 0 or negative, as Redis).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/client.h"
#include "gigakv/strings.h"
#include "persistence/rdb/rdb_values.h"
#include "server/command.h"
#include "server/commands/args.h"
#include "server/commands/key_access.h"
#include "server/errors.h"
#include "server/keyspace.h"
#include "server/migration_links.h"
#include "server/settings.h"

namespace gigakv::server {
namespace {

struct MigrateOptions {
  bool copy = false;
  bool replace = false;
  std::optional<std::string_view> username;
  std::optional<std::string_view> password;
  size_t first_key = 3;
  size_t num_keys = 1;
  int64_t timeout_ms = 0;
  int64_t db = 0;
};

// Options in Redis's order of checks: the options, then the timeout, then the database.
bool ParseMigrateOrReply(CommandContext& ctx, MigrateOptions* options) {
  for (size_t j = 6; j < ctx.argc(); ++j) {
    const size_t more = ctx.argc() - 1 - j;
    if (ArgIs(ctx.arg(j), "copy")) {
      options->copy = true;
    } else if (ArgIs(ctx.arg(j), "replace")) {
      options->replace = true;
    } else if (ArgIs(ctx.arg(j), "auth")) {
      if (more < 1) return ctx.reply.Error(errors::kSyntax), false;
      options->password = ctx.arg(++j);
    } else if (ArgIs(ctx.arg(j), "auth2")) {
      if (more < 2) return ctx.reply.Error(errors::kSyntax), false;
      options->username = ctx.arg(++j);
      options->password = ctx.arg(++j);
    } else if (ArgIs(ctx.arg(j), "keys")) {
      if (!ctx.arg(3).empty()) return ctx.reply.Error(errors::kMigrateKeysNeedEmptyKey), false;
      options->first_key = j + 1;
      options->num_keys = ctx.argc() - j - 1;
      break;  // Everything after KEYS is a key.
    } else {
      return ctx.reply.Error(errors::kSyntax), false;
    }
  }
  if (!ParseIntOrReply(ctx, ctx.arg(5), &options->timeout_ms) ||
      !ParseIntOrReply(ctx, ctx.arg(4), &options->db)) {
    return false;
  }
  if (options->timeout_ms <= 0) options->timeout_ms = 1000;
  return true;
}

// One key as it was sent: its payload and expiry, to tell at deletion whether it changed.
struct OutgoingKey {
  std::string_view key;
  std::string payload;
  int64_t expire_ms = 0;  // 0 = none.
};

void AppendCommand(std::string* out, std::initializer_list<std::string_view> args) {
  StrAppend(out, "*", args.size(), "\r\n");
  for (std::string_view arg : args) StrAppend(out, "$", arg.size(), "\r\n", arg, "\r\n");
}

// The request for one attempt over `link`: AUTH, SELECT when needed, one RESTORE per key with
// its TTL as of now (a key that expired since its DUMP is left out, as Redis leaves it out).
std::string BuildRequest(CommandContext& ctx, const MigrateOptions& options, bool select,
                         std::vector<OutgoingKey>& keys) {
  std::string out;
  if (options.password) {
    if (options.username) {
      AppendCommand(&out, {"AUTH", *options.username, *options.password});
    } else {
      AppendCommand(&out, {"AUTH", *options.password});
    }
  }
  if (select) AppendCommand(&out, {"SELECT", IntText(options.db).view()});
  const int64_t now_ms = ctx.keyspace().NowMs();
  size_t kept = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    OutgoingKey& key = keys[i];
    int64_t ttl = 0;
    if (key.expire_ms != 0) {
      ttl = key.expire_ms - now_ms;
      if (ttl < 0) continue;
      if (ttl < 1) ttl = 1;
    }
    IntText ttl_text(ttl);
    if (options.replace) {
      AppendCommand(&out, {"RESTORE", key.key, ttl_text.view(), key.payload, "REPLACE"});
    } else {
      AppendCommand(&out, {"RESTORE", key.key, ttl_text.view(), key.payload});
    }
    if (kept != i) keys[kept] = std::move(key);
    ++kept;
  }
  keys.resize(kept);
  return out;
}

// Deletes `key` (MIGRATE without COPY, after the target acknowledged it) if it still holds what
// was sent, publishing the DEL.
void DeleteMigratedKey(CommandContext& ctx, const OutgoingKey& sent) {
  WithKey(ctx, sent.key, Lookup::kPeek, [&](KeyAccess& access) {
    if (!access.exists()) return;
    const RecordView view = access.view();
    if (view.expire_ms != sent.expire_ms ||
        persistence::rdb::EncodeDumpPayload(view, ctx.settings().rdbcompression.get()) !=
            sent.payload) {
      return;  // Changed by another client meanwhile: the new value stays.
    }
    access.table.Erase(access.slot);
    access.slot = KeyTable::kNoSlot;
    PublishChange(ctx, access.db, access.key, {kGenericEvents, "del"}, {"DEL", access.key});
  });
}

void CmdMigrate(CommandContext& ctx) {
  MigrateOptions options;
  if (!ParseMigrateOrReply(ctx, &options)) return;

  // The keys that exist (a read lookup each, as Redis's lookupKeyRead), with their payloads.
  std::vector<OutgoingKey> keys;
  for (size_t i = 0; i < options.num_keys; ++i) {
    std::string_view key = ctx.arg(options.first_key + i);
    WithKey(ctx, key, Lookup::kRead, [&](KeyAccess& access) {
      if (!access.exists()) return;
      const RecordView view = access.view();
      keys.push_back(
          {key, persistence::rdb::EncodeDumpPayload(view, ctx.settings().rdbcompression.get()),
           view.expire_ms});
    });
  }
  if (keys.empty()) return ctx.reply.SimpleString("NOKEY");

  MigrationLinks& links = ctx.migration_links();
  const std::string_view host = ctx.arg(1), port = ctx.arg(2);
  bool may_retry = true;
  while (true) {
    const int64_t now_s = ctx.keyspace().NowMs() / 1000;
    absl::StatusOr<std::unique_ptr<MigrationLinks::Link>> checked_out =
        links.Checkout(host, port, options.timeout_ms, now_s);
    if (!checked_out.ok()) {
      // Redis's blocking connect fails only when it cannot start connecting (the host does not
      // resolve, connect(2) fails at once); a refused or timed-out connection fails at its first
      // write, and is retried as a write failure is.
      if (absl::IsNotFound(checked_out.status()) || absl::IsAborted(checked_out.status())) {
        return ctx.reply.Error(errors::kMigrateConnect);
      }
      if (!absl::IsDeadlineExceeded(checked_out.status()) && may_retry) {
        may_retry = false;
        continue;
      }
      return ctx.reply.Error(errors::kMigrateWriting);
    }
    std::unique_ptr<MigrationLinks::Link> link = std::move(*checked_out);
    client::Client& connection = link->connection;

    const bool select = link->selected_db != options.db;
    const std::string request = BuildRequest(ctx, options, select, keys);
    bool timed_out = false;
    auto failed = [&](const absl::Status& status) {
      timed_out = absl::IsDeadlineExceeded(status);
      return !status.ok();
    };
    // Sending, then the AUTH and SELECT replies: a failure there changed nothing yet.
    std::string_view io_error;
    std::optional<protocol::RespValue> auth_reply, select_reply;
    if (failed(connection.SendRaw(request))) {
      io_error = errors::kMigrateWriting;
    } else {
      for (auto* reply :
           {options.password ? &auth_reply : nullptr, select ? &select_reply : nullptr}) {
        if (reply == nullptr) continue;
        absl::StatusOr<protocol::RespValue> value = connection.ReadReply();
        if (failed(value.status())) {
          io_error = errors::kMigrateReading;
          break;
        }
        *reply = std::move(*value);
      }
    }
    if (!io_error.empty()) {
      link.reset();  // Closed, not returned.
      if (!timed_out && may_retry) {
        may_retry = false;
        continue;
      }
      return ctx.reply.Error(io_error);
    }

    // One reply per RESTORE; the first error (AUTH's, SELECT's, then a RESTORE's) is the reply.
    std::optional<std::string> target_error;
    size_t acknowledged = 0;
    bool socket_error = false;
    for (const OutgoingKey& key : keys) {
      absl::StatusOr<protocol::RespValue> value = connection.ReadReply();
      if (failed(value.status())) {
        socket_error = true;
        break;
      }
      ++acknowledged;
      const protocol::RespValue* error = nullptr;
      if (auth_reply && auth_reply->is_error()) {
        error = &*auth_reply;
      } else if (select_reply && select_reply->is_error()) {
        error = &*select_reply;
      } else if (value->is_error()) {
        error = &*value;
      }
      if (error != nullptr) {
        if (!target_error) {
          link->selected_db = -1;  // Whatever the target selected, SELECT next time.
          target_error = StrCat(errors::kMigrateTargetError, error->str);
        }
      } else if (!options.copy) {
        DeleteMigratedKey(ctx, key);
      }
    }
    if (socket_error) {
      link.reset();
      if (!target_error && acknowledged == 0 && may_retry && !timed_out) {
        may_retry = false;
        continue;  // Nothing was processed: try once more on a new link.
      }
      if (target_error) return ctx.reply.Error(*target_error);
      return ctx.reply.Error(errors::kMigrateReading);
    }
    if (target_error) {
      links.Return(host, port, std::move(link), now_s);
      return ctx.reply.Error(*target_error);
    }
    link->selected_db = options.db;
    links.Return(host, port, std::move(link), now_s);
    return ctx.reply.Ok();
  }
}

}  // namespace

const std::vector<CommandBinding>& MigrateCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"migrate", CmdMigrate},
  };
  return kCommands;
}

}  // namespace gigakv::server
