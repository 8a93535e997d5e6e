// Shared helpers for the collection families (hash, set, list, zset, sort): find the collection
// at a key with Redis's type checks, create one at a missing key, delete it once emptied, and tell
// blocked clients that a list or sorted set appeared.
//
// All functions run under the key's shard lock (inside WithKey, or with a MultiLock held and a
// KeyAccess from FindLocked). Objects stay owned by their record; pointers returned here are
// valid until the key is next written or removed.
#pragma once

#include <memory>
#include <string_view>

#include "gigakv/object.h"
#include "server/commands/key_access.h"

namespace gigakv::server {

// Tells the blocking machinery that `key` in `db` may now hold data for clients blocked on it
// (BLPOP, BZPOPMIN...). Cheap when nobody is blocked. Defined in blocking.cc.
void SignalKeyAsReady(CommandContext& ctx, int db, std::string_view key);

// The collection at `access` if it is of `type`. Returns nullptr when the key is missing (the
// caller sends its empty reply) or holds another type (WRONGTYPE is sent and *wrong_type set).
// Counts the lookup in keyspace_hits/misses and marks the key accessed when found.
template <typename T>
T* ReadObject(CommandContext& ctx, KeyAccess& access, KeyType type, bool* wrong_type) {
  *wrong_type = false;
  CountLookup(ctx, access.exists());
  if (!access.exists()) return nullptr;
  RecordView view = access.view();
  if (view.type() != type) {
    ctx.reply.Error(errors::kWrongType);
    *wrong_type = true;
    return nullptr;
  }
  Touch(ctx, access);
  return static_cast<T*>(view.object);
}

// Like ReadObject for write commands: no hit/miss counting (Redis counts only reads).
template <typename T>
T* WriteObject(CommandContext& ctx, KeyAccess& access, KeyType type, bool* wrong_type) {
  *wrong_type = false;
  if (!access.exists()) return nullptr;
  RecordView view = access.view();
  if (view.type() != type) {
    ctx.reply.Error(errors::kWrongType);
    *wrong_type = true;
    return nullptr;
  }
  Touch(ctx, access);
  return static_cast<T*>(view.object);
}

// True when the key exists with another type than `type` (WRONGTYPE sent). For commands that
// must check several keys before doing anything.
inline bool IsWrongTypeOrReply(CommandContext& ctx, const KeyAccess& access, KeyType type) {
  if (access.exists() && access.view().type() != type) {
    ctx.reply.Error(errors::kWrongType);
    return true;
  }
  return false;
}

// Stores `object` at the (missing) key, without TTL, and returns it. Signals blocked clients for
// lists and sorted sets, as any new key of those types can serve them.
template <typename T>
T* CreateObject(CommandContext& ctx, KeyAccess& access, std::unique_ptr<T> object) {
  T* raw = object.release();
  ValueSpec spec;
  spec.kind = ValueKind::kObject;
  spec.object = raw;
  access.slot = access.table.Put(access.key, access.hash, spec, 0, NewStamp(ctx));
  KeyType type = raw->type();
  if (type == KeyType::kList || type == KeyType::kZSet)
    SignalKeyAsReady(ctx, access.db, access.key);
  return raw;
}

// Replaces the value at the key (existing or not) with `object`, keeping no TTL, as the *STORE
// commands do. Signals blocked clients like CreateObject.
template <typename T>
T* ReplaceWithObject(CommandContext& ctx, KeyAccess& access, std::unique_ptr<T> object) {
  if (access.exists()) {
    access.table.Erase(access.slot);
    access.slot = KeyTable::kNoSlot;
  }
  return CreateObject(ctx, access, std::move(object));
}

// Removes the key (e.g. a *STORE with an empty result). No-op when missing.
inline void RemoveKey(KeyAccess& access) {
  if (!access.exists()) return;
  access.table.Erase(access.slot);
  access.slot = KeyTable::kNoSlot;
}

// Deletes the key when its collection has become empty (Redis never keeps empty collections).
// Returns true when it deleted it.
inline bool DeleteIfEmpty(KeyAccess& access) {
  if (!access.exists()) return false;
  RecordView view = access.view();
  if (view.kind != ValueKind::kObject || view.object->Length() != 0) return false;
  RemoveKey(access);
  return true;
}

}  // namespace gigakv::server
