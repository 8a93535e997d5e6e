#include "server/commands/collection_access.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/types/inline_value.h"

namespace gigakv::server {
namespace {

struct InlineState {
  int depth = 0;                                         // Open InlineCommandScopes.
  std::vector<std::unique_ptr<Object>> temporaries;      // ObjectForRead copies.
  std::vector<std::pair<int, std::string>> write_backs;  // (db, key) to store back inline.
  std::string scratch;                                   // Bytes being stored back.
};

InlineState& State() {
  thread_local InlineState state;
  return state;
}

// Stores the key back inline if it holds a compact collection. Runs under the shard lock.
void WriteBack(Store& store, int db, std::string_view key, std::string& scratch) {
  uint64_t hash = store.Hash(key);
  store.WithShardOf(key, [&](Shard& shard) {
    KeyTable* table = shard.FindTable(db);
    if (table == nullptr) return;
    KeyTable::Slot slot = table->Find(key, hash);
    if (slot == KeyTable::kNoSlot) return;
    RecordView view = table->View(slot);
    if (view.kind != ValueKind::kObject) return;
    ValueSpec spec;
    std::string_view bytes;
    if (!InlineFormOf(*view.object, &spec.kind, &bytes)) return;
    // Put frees the object before writing the record: copy its bytes out first. The object
    // was only the working form of this compact collection: freed here, never deferred.
    scratch.assign(bytes);
    spec.bytes = scratch;
    table->PutAt(slot, key, hash, spec, view.expire_ms, view.access, /*may_defer_free=*/false);
  });
}

}  // namespace

Object* ObjectForRead(const RecordView& view) {
  if (view.kind == ValueKind::kObject) return view.object;
  if (!IsInlineCollection(view.kind)) return nullptr;
  std::unique_ptr<Object> object = ObjectFromInline(view.kind, view.str);
  Object* raw = object.get();
  State().temporaries.push_back(std::move(object));
  return raw;
}

Object* ObjectForWrite(KeyAccess& access) {
  RecordView view = access.view();
  if (view.kind == ValueKind::kObject) return view.object;
  if (!IsInlineCollection(view.kind)) return nullptr;
  // The bytes are copied before Put rewrites the record they live in.
  Object* raw = ObjectFromInline(view.kind, view.str).release();
  ValueSpec spec;
  spec.kind = ValueKind::kObject;
  spec.object = raw;
  access.slot = access.table.Put(access.key, access.hash, spec, view.expire_ms, view.access);
  NoteInlineWriteBack(access.db, access.key);
  return raw;
}

void NoteInlineWriteBack(int db, std::string_view key) {
  State().write_backs.emplace_back(db, std::string(key));
}

InlineCommandScope::InlineCommandScope(Store& store) : store_(store) { ++State().depth; }

// Stores every noted key back inline and frees the temporary read copies.
static void FlushPending(Store& store, InlineState& state) {
  std::vector<std::pair<int, std::string>>& write_backs = state.write_backs;
  if (write_backs.size() > 1) {
    // Each key once, even when the command wrote it several times.
    std::sort(write_backs.begin(), write_backs.end());
    write_backs.erase(std::unique(write_backs.begin(), write_backs.end()), write_backs.end());
  }
  for (const auto& [db, key] : write_backs) WriteBack(store, db, key, state.scratch);
  write_backs.clear();
  if (write_backs.capacity() > 64) write_backs.shrink_to_fit();
  state.temporaries.clear();
  if (state.scratch.capacity() > 4096) std::string().swap(state.scratch);
}

InlineCommandScope::~InlineCommandScope() {
  // Pending work past which a batch scope flushes between commands anyway, so a long pipeline
  // neither keeps many collections in object form nor many read copies alive.
  constexpr size_t kMaxPending = 64;
  InlineState& state = State();
  --state.depth;
  if (state.depth == 0 || (state.depth == 1 && (state.write_backs.size() >= kMaxPending ||
                                                state.temporaries.size() >= kMaxPending))) {
    FlushPending(store_, state);
  }
}

}  // namespace gigakv::server
