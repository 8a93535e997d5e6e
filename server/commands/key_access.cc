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

namespace gigakv::server {

std::unique_ptr<std::string> TakeString(KeyAccess& access) {
  RecordView view = access.view();
  if (view.kind == ValueKind::kStringExternal) {
    ValueSpec spec;
    std::string unused;
    access.table.Release(access.slot, &spec, &unused);
    access.slot = KeyTable::kNoSlot;
    return std::unique_ptr<std::string>(spec.external);
  }
  return std::make_unique<std::string>(view.str);
}

void StoreModified(KeyAccess& access, std::unique_ptr<std::string> value, int64_t expire_ms,
                   uint16_t stamp) {
  ValueSpec spec;
  if (value->size() <= StringValue::kInlineMax) {
    MakeStringSpec(*value, /*force_raw=*/true, &spec);
  } else {
    spec.kind = ValueKind::kStringExternal;
    spec.external = value.release();  // Adopted by the table.
  }
  access.slot = access.table.PutAt(access.slot, access.key, access.hash, spec, expire_ms, stamp);
}

}  // namespace gigakv::server
