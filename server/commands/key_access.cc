#include "server/commands/key_access.h"

namespace gigakv::server::key_access_internal {

void PublishStringSetRecord(CommandContext& ctx, const KeyAccess& access, Event event,
                            uint64_t dirty) {
  if (!WantsEffects(ctx)) {  // Keys only: no need to look at the value.
    PublishChange(ctx, access.db, access.key, event, {}, dirty);
    return;
  }
  RecordView view = access.view();
  if (view.expire_ms <= 0) {
    PublishChange(ctx, access.db, access.key, event, {"SET", access.key, view.str}, dirty);
    return;
  }
  IntText deadline(view.expire_ms);
  PublishChange(ctx, access.db, access.key, event,
                {"SET", access.key, view.str, "PXAT", deadline.view()}, dirty);
}

}  // namespace gigakv::server::key_access_internal
