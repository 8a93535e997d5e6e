// Shared helpers for the collection families (hash, set, list, zset, sort): find the collection
// at a key with Redis's type checks, create one at a missing key, delete it once emptied. (Clients
// blocked on a key learn that a list or sorted set appeared from the change record the command
// publishes, not from here.)
//
// All functions run under the key's shard lock (inside WithKey, or with a MultiLock held and a
// KeyAccess from FindLocked). Objects stay owned by their record; pointers returned here are
// valid until the key is next written or removed, and never past the end of the command.
// The lookup that made the KeyAccess did the bookkeeping (hit/miss counting and touching; see
// key_access.h): read commands look up with Lookup::kRead and use ReadObject, write commands
// with Lookup::kWrite and use WriteObject. Nothing here counts or touches.
//
// Inline collections. A small hash, set or sorted set in its compact encoding is stored inline
// in its key's arena record (ValueKind::kInlineHash, kInlineSet, kInlineIntset, kInlineZSet:
// listpack entries or intset bytes, no Object; core/types/inline_value.h). This header makes
// them transparent to the families:
//  - Reads (ReadObject, ObjectForRead) of an inline record return a temporary object built from
//    a copy of the bytes. It is owned by a per-thread pool emptied when the command ends, so a
//    multi-key command may hold several. It must not be modified: changes would be lost.
//  - Writes (WriteObject, ObjectForWrite) turn an inline record into a kObject record holding
//    the materialized object (keeping TTL and access stamp) and remember (db, key) in a
//    per-thread write-back list. CreateObject stores a kObject record and remembers the key too.
//  - When the outermost command ends (InlineCommandScope, opened by Dispatcher::Execute around the
//    handler, closed before blocked clients are served), every remembered key is looked up
//    again under its shard lock and, if it still holds a non-empty collection in a compact
//    encoding, is stored back inline with its TTL and access stamp. Keys written by other
//    clients meanwhile are just re-checked; whatever holds a compact collection then is stored
//    inline, so the step is idempotent.
// Large collections (hashtable, skiplist, quicklist) and lists are always kObject records: reads
// and writes of them pay one comparison; creating a hash, set or sorted set costs one more
// lookup when the command ends. Code outside this header that looks at RecordView::object must
// use ObjectForRead / ObjectForWrite instead.
#pragma once

#include <memory>
#include <string_view>

#include "gigakv/object.h"
#include "server/commands/key_access.h"

namespace gigakv::server {

// The collection a record holds, for reading: view.object for kObject records, a temporary
// copy (see above) for inline collections, nullptr for strings.
Object* ObjectForRead(const RecordView& view);

// The collection at the existing key `access`, for writing: an inline record is first turned
// into a kObject record (access.slot stays valid) and remembered for write-back. nullptr for
// strings.
Object* ObjectForWrite(KeyAccess& access);

// Remembers `key` in `db` for the write-back at the end of the command.
void NoteInlineWriteBack(int db, std::string_view key);

// Opened by Dispatcher::Execute around a command's handler, and by a connection around each batch
// of pipelined commands it runs. When the outermost scope on a thread closes, the write-back list
// is stored back inline and the temporary objects are freed; a batch scope thus stores a collection
// written by 16 pipelined commands back once, not 16 times (and flushes early, between commands,
// once 64 keys or copies are pending). Must be closed with no shard lock held.
class InlineCommandScope {
 public:
  explicit InlineCommandScope(Store& store);
  ~InlineCommandScope();
  InlineCommandScope(const InlineCommandScope&) = delete;
  InlineCommandScope& operator=(const InlineCommandScope&) = delete;

 private:
  Store& store_;
};

// The collection at `access` if it is of `type`. Returns nullptr when the key is missing (the
// caller sends its empty reply) or holds another type (WRONGTYPE is sent and *wrong_type set).
template <typename T>
T* ReadObject(CommandContext& ctx, KeyAccess& access, KeyType type, bool* wrong_type) {
  *wrong_type = false;
  if (!access.exists()) return nullptr;
  RecordView view = access.view();
  if (view.type() != type) {
    ctx.reply.Error(errors::kWrongType);
    *wrong_type = true;
    return nullptr;
  }
  return static_cast<T*>(view.kind == ValueKind::kObject ? view.object : ObjectForRead(view));
}

// Like ReadObject for write commands: an inline collection is made writable (ObjectForWrite).
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
  return static_cast<T*>(view.kind == ValueKind::kObject ? view.object : ObjectForWrite(access));
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

namespace collection_access_internal {
// Puts `object` at the missing key (no notification).
template <typename T>
T* PutObject(CommandContext& ctx, KeyAccess& access, std::unique_ptr<T> object) {
  T* raw = object.release();
  ValueSpec spec;
  spec.kind = ValueKind::kObject;
  spec.object = raw;
  access.slot = access.table.Put(access.key, access.hash, spec, 0, NewStamp(ctx));
  KeyType type = raw->type();
  if (type != KeyType::kList) NoteInlineWriteBack(access.db, access.key);
  return raw;
}
}  // namespace collection_access_internal

// Stores `object` at the (missing) key, without TTL, and returns it; notifies "new". (Clients
// blocked on the key are woken by the change record the caller publishes.)
template <typename T>
T* CreateObject(CommandContext& ctx, KeyAccess& access, std::unique_ptr<T> object) {
  NotifyNewKey(ctx, access.db, access.key);
  return collection_access_internal::PutObject(ctx, access, std::move(object));
}

// Replaces the value at the key (existing or not) with `object`, keeping no TTL, as the *STORE
// commands do (Redis's setKey: "new" only when the key did not exist).
template <typename T>
T* ReplaceWithObject(CommandContext& ctx, KeyAccess& access, std::unique_ptr<T> object) {
  if (!access.exists()) return CreateObject(ctx, access, std::move(object));
  access.table.Erase(access.slot);
  access.slot = KeyTable::kNoSlot;
  return collection_access_internal::PutObject(ctx, access, std::move(object));
}

// Removes the key (e.g. a *STORE with an empty result). No-op when missing.
inline void RemoveKey(KeyAccess& access) {
  if (!access.exists()) return;
  access.table.Erase(access.slot);
  access.slot = KeyTable::kNoSlot;
}

// Deletes the key when its collection has become empty (Redis never keeps empty collections),
// notifying "del": call it after publishing the command's change, whose event comes first.
// Returns true when it deleted it.
inline bool DeleteIfEmpty(CommandContext& ctx, KeyAccess& access) {
  if (!access.exists()) return false;
  RecordView view = access.view();
  // Inline collections are never empty.
  if (view.kind != ValueKind::kObject || view.object->Length() != 0) return false;
  RemoveKey(access);
  NotifyDeleted(ctx, access.db, access.key);
  return true;
}

}  // namespace gigakv::server
