// Snapshot commands: SAVE, BGSAVE [SCHEDULE], LASTSAVE. The work is Snapshots' (snapshots.h);
// these parse, choose Redis 7.0's reply and report. SHUTDOWN's save, FLUSHALL's and DEBUG
// RELOAD live with their commands (server_commands.cc) and call Snapshots too.
#include "server/aof.h"
#include "server/client_state.h"
#include "server/command.h"
#include "server/commands/args.h"
#include "server/errors.h"
#include "server/lifecycle.h"
#include "server/snapshots.h"

namespace gigakv::server {
namespace {

// SAVE: the snapshot written before the reply (other clients keep being served). Redis answers a
// failed save with a bare "-ERR" and logs the reason.
void CmdSave(CommandContext& ctx) {
  absl::Status status = ctx.snapshots().Save();
  if (status.ok()) return ctx.reply.Ok();
  if (absl::IsFailedPrecondition(status)) return ctx.reply.Error(errors::kBgsaveInProgress);
  ctx.reply.Error("ERR");
}

// BGSAVE [SCHEDULE]. Inside EXEC Redis only schedules it (it cannot fork there); gigakv does the
// same so that the replies match.
void CmdBgsave(CommandContext& ctx) {
  bool schedule = false;
  if (ctx.argc() > 1) {
    if (ctx.argc() == 2 && ArgIs(ctx.arg(1), "schedule")) {
      schedule = true;
    } else {
      return ctx.reply.Error(errors::kSyntax);
    }
  }
  Snapshots& snapshots = ctx.snapshots();
  if (snapshots.background_save_in_progress()) {
    return ctx.reply.Error(errors::kBgsaveInProgress);
  }
  if (ctx.services.aof().rewrite_in_progress() && !ctx.client.in_exec) {
    // The store's one snapshot is the log's rewrite: as Redis with an AOF child.
    if (!schedule) return ctx.reply.Error(errors::kBgsaveWhileAofRewrite);
    snapshots.ScheduleBackgroundSave();
    return ctx.reply.SimpleString("Background saving scheduled");
  }
  if (ctx.client.in_exec) {
    snapshots.ScheduleBackgroundSave();
    return ctx.reply.SimpleString("Background saving scheduled");
  }
  absl::Status status = snapshots.StartBackgroundSave();
  if (status.ok()) return ctx.reply.SimpleString("Background saving started");
  if (absl::IsFailedPrecondition(status)) {
    // A SAVE (or another client's BGSAVE) got there first.
    if (schedule) {
      snapshots.ScheduleBackgroundSave();
      return ctx.reply.SimpleString("Background saving scheduled");
    }
    return ctx.reply.Error(errors::kBgsaveInProgress);
  }
  ctx.reply.Error("ERR");
}

// BGREWRITEAOF: a new base for the append-only log, written in the background (server/aof.h).
void CmdBgrewriteaof(CommandContext& ctx) {
  AppendOnlyLog& aof = ctx.services.aof();
  if (aof.rewrite_in_progress()) return ctx.reply.Error(errors::kAofRewriteInProgress);
  if (ctx.client.in_exec) {
    aof.ScheduleRewrite();
    return ctx.reply.SimpleString("Background append only file rewriting scheduled");
  }
  absl::StatusOr<AppendOnlyLog::RewriteStart> started = aof.StartRewrite();
  if (!started.ok()) {
    if (absl::IsFailedPrecondition(started.status())) {
      return ctx.reply.Error(errors::kAofRewriteInProgress);
    }
    return ctx.reply.Error(errors::kAofRewriteFailed);
  }
  ctx.reply.SimpleString(*started == AppendOnlyLog::RewriteStart::kStarted
                             ? "Background append only file rewriting started"
                             : "Background append only file rewriting scheduled");
}

void CmdLastSave(CommandContext& ctx) { ctx.reply.Integer(ctx.lifecycle().lastsave_s()); }

}  // namespace

const std::vector<CommandBinding>& SnapshotCommands() {
  static const std::vector<CommandBinding> kCommands = {
      {"save", CmdSave},
      {"bgsave", CmdBgsave},
      {"lastsave", CmdLastSave},
      {"bgrewriteaof", CmdBgrewriteaof},
  };
  return kCommands;
}

}  // namespace gigakv::server
