#include "gigakv/key_table.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/open_addressing.h"
#include "core/varint.h"

namespace gigakv {
namespace {

using open_addressing::OffsetSlots;
static_assert(KeyTable::kScanEnd == open_addressing::kScanEnd);

// Slots are below 2^32 - 1; kNotFound narrows to kNoSlot.
static_assert(static_cast<KeyTable::Slot>(open_addressing::kNotFound) == KeyTable::kNoSlot);
KeyTable::Slot ToSlot(size_t pos) { return static_cast<KeyTable::Slot>(pos); }

constexpr uint8_t kKindMask = 0x0f;
constexpr uint8_t kHasExpireBit = 0x10;
constexpr uint8_t kUnsharedBit = 0x20;
constexpr size_t kInitialCapacity = 8;
// Max load factor of the index: 7/8. Linear probing stays short thanks to the full 32-bit
// fingerprint check before any arena access.
constexpr size_t kLoadNum = 7;
constexpr size_t kLoadDen = 8;
constexpr size_t kMinCompactDeadBytes = 4096;
// Arenas past kHeapArenaMax bytes are allocated at kMappedArenaMin or more at once: the server
// serves blocks from 8 KiB on with mmap (server/main.cc), so a larger arena is a mapping that
// realloc moves with mremap and whose untouched tail costs no RSS. Growing by small steps through
// the heap instead leaves a trail of freed blocks that a thousand shards growing together turn
// into megabytes of fragmentation (about kHeapArenaMax per shard stays behind). The price: an
// arena that ends between 1 and 4 KiB touches a whole page.
constexpr size_t kHeapArenaMax = 1024;
constexpr size_t kMappedArenaMin = 8192;

size_t ArenaCapacityFor(size_t wanted) {
  return wanted > kHeapArenaMax && wanted < kMappedArenaMin ? kMappedArenaMin : wanted;
}

bool IsInline(ValueKind kind) { return IsInlineKind(kind); }

template <typename T>
T LoadLE(const char* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));  // x86-64 and aarch64 builds are little-endian.
  return value;
}

template <typename T>
void StoreLE(char* p, T value) {
  std::memcpy(p, &value, sizeof(T));
}

// Decoded positions of one record.
struct RecordLayout {
  uint8_t header;
  uint16_t access;
  const char* expire_at;  // nullptr if none
  std::string_view key;
  const char* payload;
  size_t payload_len;
  size_t total;
};

RecordLayout Decode(const char* record) {
  RecordLayout layout;
  const char* p = record;
  layout.header = static_cast<uint8_t>(*p++);
  layout.access = LoadLE<uint16_t>(p);
  p += 2;
  uint64_t key_len;
  p = varint::Get(p, &key_len);
  ValueKind kind = static_cast<ValueKind>(layout.header & kKindMask);
  uint64_t value_len = sizeof(void*);
  if (IsInline(kind)) p = varint::Get(p, &value_len);
  layout.expire_at = nullptr;
  if (layout.header & kHasExpireBit) {
    layout.expire_at = p;
    p += 8;
  }
  layout.key = std::string_view(p, key_len);
  p += key_len;
  layout.payload = p;
  layout.payload_len = value_len;
  layout.total = static_cast<size_t>(p - record) + value_len;
  return layout;
}

size_t ExternalSize(const std::string* s) { return sizeof(std::string) + s->capacity() + 1; }

// A large string value on its way to the large-object sink: freeing megabytes (munmap) takes
// time proportional to their size, as freeing a large collection does.
class DetachedString final : public Object {
 public:
  explicit DetachedString(std::unique_ptr<std::string> value) : value_(std::move(value)) {}
  KeyType type() const override { return KeyType::kString; }
  std::string_view encoding_name() const override { return "raw"; }
  size_t MemoryUsage() const override { return ExternalSize(value_.get()); }
  size_t Length() const override { return 1; }
  Object* Clone() const override {
    return new DetachedString(std::make_unique<std::string>(*value_));
  }
  void ForEachElement(absl::FunctionRef<void(std::string_view)> fn) const override { fn(*value_); }

 private:
  std::unique_ptr<std::string> value_;
};

}  // namespace

std::string_view KeyTypeName(KeyType type) {
  switch (type) {
    case KeyType::kString:
      return "string";
    case KeyType::kList:
      return "list";
    case KeyType::kSet:
      return "set";
    case KeyType::kZSet:
      return "zset";
    case KeyType::kHash:
      return "hash";
    case KeyType::kStream:
      return "stream";
  }
  return "none";
}

size_t EncodedRecordSize(std::string_view key, const ValueSpec& value, bool has_expire) {
  size_t size = 3 + varint::Size(key.size()) + key.size() + (has_expire ? 8 : 0);
  if (IsInline(value.kind)) {
    size += varint::Size(value.bytes.size()) + value.bytes.size();
  } else {
    size += sizeof(void*);
  }
  return size;
}

KeyTable::~KeyTable() {
  Clear();
  std::free(index_);
  std::free(arena_);
}

void KeyTable::Clear() {
  for (size_t i = 0; i < capacity_; ++i) {
    if (index_[i] != 0) FreePayload(OffsetOf(static_cast<Slot>(i)), /*may_defer=*/false);
  }
  std::free(index_);
  std::free(arena_);
  index_ = nullptr;
  arena_ = nullptr;
  capacity_ = size_ = expires_ = 0;
  std::vector<uint64_t>().swap(deadlines_);
  arena_used_ = arena_capacity_ = dead_bytes_ = external_bytes_ = 0;
}

void KeyTable::Swap(KeyTable& other) noexcept {
  std::swap(index_, other.index_);
  std::swap(capacity_, other.capacity_);
  std::swap(size_, other.size_);
  std::swap(expires_, other.expires_);
  std::swap(arena_, other.arena_);
  std::swap(arena_used_, other.arena_used_);
  std::swap(arena_capacity_, other.arena_capacity_);
  std::swap(dead_bytes_, other.dead_bytes_);
  std::swap(external_bytes_, other.external_bytes_);
  deadlines_.swap(other.deadlines_);
  std::swap(deadline_base_ms_, other.deadline_base_ms_);
}

size_t KeyTable::MemoryUsage() const {
  return arena_capacity_ + (capacity_ + deadlines_.capacity()) * sizeof(uint64_t) + external_bytes_;
}

namespace {
constexpr uint64_t kMaxDeadlineOffset = 0xffffffffULL;
// std::push_heap/pop_heap build max-heaps; invert the order for a min-heap.
constexpr auto kLaterFirst = [](uint64_t a, uint64_t b) { return a > b; };
}  // namespace

void KeyTable::PushDeadline(uint32_t fingerprint, int64_t expire_ms) {
  // Read first: the flag is shared by every table of a store, and is almost always set already.
  if (deadline_flag_ != nullptr && !deadline_flag_->load(std::memory_order_relaxed)) {
    deadline_flag_->store(true, std::memory_order_relaxed);
  }
  if (deadlines_.empty()) deadline_base_ms_ = expire_ms;
  int64_t offset = expire_ms - deadline_base_ms_;
  if (offset < 0) {
    // An earlier deadline than the base: rebase everything so offsets stay unsigned.
    for (uint64_t& entry : deadlines_) {
      uint64_t shifted =
          std::min<uint64_t>((entry >> 32) + static_cast<uint64_t>(-offset), kMaxDeadlineOffset);
      entry = (shifted << 32) | (entry & 0xffffffffULL);
    }
    deadline_base_ms_ = expire_ms;
    offset = 0;
  }
  uint64_t clamped = std::min<uint64_t>(static_cast<uint64_t>(offset), kMaxDeadlineOffset);
  deadlines_.push_back((clamped << 32) | fingerprint);
  std::push_heap(deadlines_.begin(), deadlines_.end(), kLaterFirst);
  if (deadlines_.size() > 2 * expires_ + 1024) RebuildDeadlines();
}

void KeyTable::RebuildDeadlines() {
  std::vector<uint64_t>().swap(deadlines_);
  for (size_t i = 0; i < capacity_; ++i) {
    uint64_t entry = index_[i];
    if (entry == 0) continue;
    RecordLayout layout = Decode(arena_ + OffsetSlots::OffsetOf(entry));
    if (layout.expire_at == nullptr) continue;
    int64_t expire_ms = LoadLE<int64_t>(layout.expire_at);
    if (deadlines_.empty() || expire_ms < deadline_base_ms_) {
      // Keep offsets non-negative: base on the earliest deadline seen so far.
      if (!deadlines_.empty()) {
        int64_t shift = deadline_base_ms_ - expire_ms;
        for (uint64_t& d : deadlines_) {
          uint64_t shifted =
              std::min<uint64_t>((d >> 32) + static_cast<uint64_t>(shift), kMaxDeadlineOffset);
          d = (shifted << 32) | (d & 0xffffffffULL);
        }
      }
      deadline_base_ms_ = expire_ms;
    }
    uint64_t offset = std::min<uint64_t>(static_cast<uint64_t>(expire_ms - deadline_base_ms_),
                                         kMaxDeadlineOffset);
    deadlines_.push_back((offset << 32) | OffsetSlots::FingerprintOf(entry));
  }
  std::make_heap(deadlines_.begin(), deadlines_.end(), kLaterFirst);
}

void KeyTable::SampleTtls(int64_t now_ms, size_t limit, int64_t* sum_ms, int64_t* count) const {
  for (size_t i = 0; i < deadlines_.size() && i < limit; ++i) {
    int64_t remaining = deadline_base_ms_ + static_cast<int64_t>(deadlines_[i] >> 32) - now_ms;
    if (remaining <= 0) continue;
    *sum_ms += remaining;
    ++*count;
  }
}

bool KeyTable::PopDue(int64_t now_ms, uint32_t* fingerprint) {
  while (!deadlines_.empty()) {
    uint64_t top = deadlines_.front();
    uint64_t offset = top >> 32;
    int64_t deadline = deadline_base_ms_ + static_cast<int64_t>(offset);
    if (deadline > now_ms) return false;
    if (offset == kMaxDeadlineOffset) {
      // A clamped far deadline (more than ~49 days past the base) came up: rebase on the
      // earliest real deadline and look again.
      RebuildDeadlines();
      if (!deadlines_.empty() && (deadlines_.front() >> 32) == kMaxDeadlineOffset) return false;
      continue;
    }
    std::pop_heap(deadlines_.begin(), deadlines_.end(), kLaterFirst);
    deadlines_.pop_back();
    *fingerprint = static_cast<uint32_t>(top);
    return true;
  }
  return false;
}

KeyTable::Slot KeyTable::FindExpired(uint32_t fingerprint, int64_t now_ms) const {
  if (size_ == 0) return kNoSlot;
  return ToSlot(OffsetSlots(index_, capacity_).Find(fingerprint, [&](uint64_t entry) {
    RecordLayout layout = Decode(arena_ + OffsetSlots::OffsetOf(entry));
    return layout.expire_at != nullptr && LoadLE<int64_t>(layout.expire_at) <= now_ms;
  }));
}

size_t KeyTable::RecordSize(uint32_t offset) const { return Decode(arena_ + offset).total; }

size_t KeyTable::RecordMemory(Slot slot) const {
  RecordLayout layout = Decode(arena_ + OffsetOf(slot));
  size_t bytes = layout.total + sizeof(uint64_t);
  ValueKind kind = static_cast<ValueKind>(layout.header & kKindMask);
  if (kind == ValueKind::kStringExternal) {
    bytes += ExternalSize(LoadLE<std::string*>(layout.payload));
  } else if (kind == ValueKind::kObject) {
    bytes += LoadLE<Object*>(layout.payload)->MemoryUsage();
  }
  return bytes;
}

KeyTable::Slot KeyTable::Find(std::string_view key, uint64_t hash) const {
  if (size_ == 0) return kNoSlot;
  const uint32_t fingerprint = static_cast<uint32_t>(hash >> 32);
  return ToSlot(OffsetSlots(index_, capacity_).Find(fingerprint, [&](uint64_t entry) {
    return Decode(arena_ + OffsetSlots::OffsetOf(entry)).key == key;
  }));
}

RecordView KeyTable::View(Slot slot) const {
  RecordLayout layout = Decode(arena_ + OffsetOf(slot));
  RecordView view;
  view.kind = static_cast<ValueKind>(layout.header & kKindMask);
  view.unshared = (layout.header & kUnsharedBit) != 0;
  view.key = layout.key;
  view.access = layout.access;
  view.expire_ms = layout.expire_at ? LoadLE<int64_t>(layout.expire_at) : 0;
  if (IsInline(view.kind)) {
    view.str = std::string_view(layout.payload, layout.payload_len);
  } else if (view.kind == ValueKind::kStringExternal) {
    view.str = *LoadLE<std::string*>(layout.payload);
  } else {
    view.object = LoadLE<Object*>(layout.payload);
  }
  return view;
}

uint32_t KeyTable::AppendRecord(size_t size) {
  if (arena_used_ + size > arena_capacity_) {
    size_t wanted = arena_used_ + size;
    // Grow by 1/8: keeps slack small (memory per key is a product goal); realloc of large
    // blocks is an mremap, not a copy.
    size_t new_capacity = std::max(wanted, arena_capacity_ + arena_capacity_ / 8);
    new_capacity = ArenaCapacityFor(std::max<size_t>(new_capacity, 256));
    assert(new_capacity < UINT32_MAX);
    char* grown = static_cast<char*>(std::realloc(arena_, new_capacity));
    if (grown == nullptr) throw std::bad_alloc();
    arena_ = grown;
    arena_capacity_ = new_capacity;
  }
  uint32_t offset = static_cast<uint32_t>(arena_used_);
  arena_used_ += size;
  return offset;
}

void KeyTable::WriteRecord(uint32_t offset, std::string_view key, const ValueSpec& value,
                           int64_t expire_ms, uint16_t access) {
  char* p = arena_ + offset;
  *p++ = static_cast<char>(static_cast<uint8_t>(value.kind) | (expire_ms > 0 ? kHasExpireBit : 0) |
                           (value.unshared ? kUnsharedBit : 0));
  StoreLE<uint16_t>(p, access);
  p += 2;
  p = varint::Put(p, key.size());
  if (IsInline(value.kind)) p = varint::Put(p, value.bytes.size());
  if (expire_ms > 0) {
    StoreLE<int64_t>(p, expire_ms);
    p += 8;
  }
  std::memcpy(p, key.data(), key.size());
  p += key.size();
  if (IsInline(value.kind)) {
    if (!value.bytes.empty()) std::memcpy(p, value.bytes.data(), value.bytes.size());
  } else if (value.kind == ValueKind::kStringExternal) {
    StoreLE<std::string*>(p, value.external);
    external_bytes_ += ExternalSize(value.external);
  } else {
    StoreLE<Object*>(p, value.object);
  }
}

void KeyTable::FreePayload(uint32_t offset, bool may_defer) {
  RecordLayout layout = Decode(arena_ + offset);
  ValueKind kind = static_cast<ValueKind>(layout.header & kKindMask);
  const bool can_defer = may_defer && large_object_sink_ != nullptr && *large_object_sink_;
  std::unique_ptr<Object> deferred;
  if (kind == ValueKind::kStringExternal) {
    std::unique_ptr<std::string> value(LoadLE<std::string*>(layout.payload));
    external_bytes_ -= ExternalSize(value.get());
    if (can_defer && value->size() >= kLargeStringBytes) {
      try {  // No memory for the wrapper: `value` is freed in place.
        deferred = std::make_unique<DetachedString>(std::move(value));
      } catch (...) {
      }
    }
  } else if (kind == ValueKind::kObject) {
    std::unique_ptr<Object> object(LoadLE<Object*>(layout.payload));
    if (can_defer && object->Length() > kLargeObjectElements) deferred = std::move(object);
  }
  if (deferred == nullptr) return;  // Freed in place, if anything was held.
  // The record still points at the value until the caller rewrites or unlinks it, so nothing
  // may escape from here: if the sink throws (no memory for its queue), the unwinding has
  // freed the value in place, and the caller goes on as if it had.
  try {
    (*large_object_sink_)(std::move(deferred));
  } catch (...) {
  }
}

void KeyTable::GrowIndex() {
  // Grow by 1/4: memory per key is a product goal, and re-inserting is cheap (no key is read).
  ResizeIndex(capacity_ == 0 ? kInitialCapacity : capacity_ + capacity_ / 4);
}

void KeyTable::Reserve(size_t keys) {
  const size_t needed = keys * kLoadDen / kLoadNum + 1;
  if (needed > capacity_) ResizeIndex(std::max(needed, kInitialCapacity));
}

void KeyTable::MaybeShrinkIndex() {
  // After mass deletes, give index memory back once the load falls under 1/4; the new load is
  // 5/8, between the shrink and grow thresholds, so tables do not oscillate.
  if (capacity_ > 1024 && size_ * 4 < capacity_) ResizeIndex(std::max<size_t>(size_ * 8 / 5, 8));
}

void KeyTable::ResizeIndex(size_t new_capacity) {
  uint64_t* old = index_;
  size_t old_capacity = capacity_;
  index_ = static_cast<uint64_t*>(std::calloc(new_capacity, sizeof(uint64_t)));
  if (index_ == nullptr) throw std::bad_alloc();
  capacity_ = new_capacity;
  // Fingerprints carry the home slot, so no key is rehashed and the arena is not touched.
  OffsetSlots(index_, capacity_).InsertAll(old, old_capacity);
  std::free(old);
}

KeyTable::Slot KeyTable::Put(std::string_view key, uint64_t hash, const ValueSpec& value,
                             int64_t expire_ms, uint16_t access, bool may_defer_free) {
  return PutAt(Find(key, hash), key, hash, value, expire_ms, access, may_defer_free);
}

KeyTable::Slot KeyTable::PutAt(Slot slot, std::string_view key, uint64_t hash,
                               const ValueSpec& value, int64_t expire_ms, uint16_t access,
                               bool may_defer_free) {
  assert(slot == Find(key, hash));
  // Callers may pass views into this table's arena (e.g. a key read from a record); the arena can
  // move or be rewritten below, so take copies first.
  std::string key_copy;
  if (arena_ != nullptr && key.data() >= arena_ && key.data() < arena_ + arena_capacity_) {
    key_copy.assign(key);
    key = key_copy;
  }
  std::string bytes_copy;
  ValueSpec spec = value;
  if (arena_ != nullptr && !spec.bytes.empty() && spec.bytes.data() >= arena_ &&
      spec.bytes.data() < arena_ + arena_capacity_) {
    bytes_copy.assign(spec.bytes);
    spec.bytes = bytes_copy;
  }
  const size_t size = EncodedRecordSize(key, spec, expire_ms > 0);
  if (slot != kNoSlot) {
    uint32_t offset = OffsetOf(slot);
    RecordLayout old = Decode(arena_ + offset);
    if (old.expire_at != nullptr) --expires_;
    FreePayload(offset, may_defer_free);
    if (size <= old.total) {
      WriteRecord(offset, key, spec, expire_ms, access);
      dead_bytes_ += old.total - size;
    } else if (offset + old.total == arena_used_) {
      // The arena's last record grows where it is (e.g. a collection created by the command
      // being stored inline at its end): no hole.
      arena_used_ = offset;
      uint32_t same_offset = AppendRecord(size);
      WriteRecord(same_offset, key, spec, expire_ms, access);
    } else {
      uint32_t new_offset = AppendRecord(size);
      WriteRecord(new_offset, key, spec, expire_ms, access);
      index_[slot] = OffsetSlots::WithOffset(index_[slot], new_offset);
      dead_bytes_ += old.total;
    }
    if (expire_ms > 0) {
      ++expires_;
      PushDeadline(static_cast<uint32_t>(hash >> 32), expire_ms);
    }
    MaybeCompact();  // Moves records, never index slots.
    return slot;
  }
  if ((size_ + 1) * kLoadDen > capacity_ * kLoadNum) GrowIndex();
  uint32_t offset = AppendRecord(size);
  WriteRecord(offset, key, spec, expire_ms, access);
  const uint32_t fingerprint = static_cast<uint32_t>(hash >> 32);
  const size_t pos =
      OffsetSlots(index_, capacity_).Insert(OffsetSlots::MakeWord(fingerprint, offset));
  ++size_;
  if (expire_ms > 0) {
    ++expires_;
    PushDeadline(fingerprint, expire_ms);
  }
  return static_cast<Slot>(pos);
}

void KeyTable::Erase(Slot slot) { EraseImpl(slot, /*free_payload=*/true); }

void KeyTable::EraseImpl(Slot slot, bool free_payload) {
  uint32_t offset = OffsetOf(slot);
  RecordLayout layout = Decode(arena_ + offset);
  if (layout.expire_at != nullptr) --expires_;
  if (free_payload) FreePayload(offset);
  dead_bytes_ += layout.total;
  OffsetSlots slots(index_, capacity_);
  open_addressing::Erase(slots, slot);
  --size_;
  MaybeShrinkIndex();
  if (size_ == 0) {
    // An empty table gives all its memory back.
    std::free(index_);
    std::free(arena_);
    index_ = nullptr;
    arena_ = nullptr;
    capacity_ = 0;
    arena_used_ = arena_capacity_ = dead_bytes_ = 0;
    return;
  }
  MaybeCompact();
}

void KeyTable::Release(Slot slot, ValueSpec* value, std::string* inline_copy) {
  RecordView view = View(slot);
  value->kind = view.kind;
  value->unshared = view.unshared;
  value->external = nullptr;
  value->object = nullptr;
  value->bytes = {};
  if (IsInline(view.kind)) {
    inline_copy->assign(view.str);
    value->bytes = *inline_copy;
  } else if (view.kind == ValueKind::kStringExternal) {
    RecordLayout layout = Decode(arena_ + OffsetOf(slot));
    value->external = LoadLE<std::string*>(layout.payload);
    external_bytes_ -= ExternalSize(value->external);
  } else {
    value->object = view.object;
  }
  EraseImpl(slot, /*free_payload=*/false);
}

void KeyTable::SetExpire(Slot slot, int64_t expire_ms) {
  uint32_t offset = OffsetOf(slot);
  RecordLayout layout = Decode(arena_ + offset);
  if (layout.expire_at != nullptr && expire_ms > 0) {
    StoreLE<int64_t>(const_cast<char*>(layout.expire_at), expire_ms);
    PushDeadline(FingerprintAt(slot), expire_ms);
    return;
  }
  if (layout.expire_at == nullptr && expire_ms <= 0) return;
  // The record changes size: rebuild it (the payload pointer, if any, moves with it).
  RecordView view = View(slot);
  ValueSpec spec;
  spec.kind = view.kind;
  spec.unshared = view.unshared;
  std::string key_copy(view.key);
  std::string bytes_copy;
  if (IsInline(view.kind)) {
    bytes_copy.assign(view.str);
    spec.bytes = bytes_copy;
  } else if (view.kind == ValueKind::kStringExternal) {
    spec.external = LoadLE<std::string*>(layout.payload);
    external_bytes_ -= ExternalSize(spec.external);  // WriteRecord adds it back.
  } else {
    spec.object = view.object;
  }
  size_t size = EncodedRecordSize(key_copy, spec, expire_ms > 0);
  if (size <= layout.total) {
    WriteRecord(offset, key_copy, spec, expire_ms, layout.access);
    dead_bytes_ += layout.total - size;
  } else {
    uint32_t new_offset = AppendRecord(size);
    WriteRecord(new_offset, key_copy, spec, expire_ms, layout.access);
    index_[slot] = OffsetSlots::WithOffset(index_[slot], new_offset);
    dead_bytes_ += layout.total;
  }
  if (expire_ms > 0) {
    ++expires_;
    PushDeadline(FingerprintAt(slot), expire_ms);
  } else {
    --expires_;
  }
  MaybeCompact();
}

void KeyTable::OverwriteInline(Slot slot, std::string_view bytes) {
  const size_t offset = OffsetOf(slot);
  RecordLayout layout = Decode(arena_ + offset);
  assert(IsInline(static_cast<ValueKind>(layout.header & kKindMask)));
  assert(layout.payload_len == bytes.size());
  std::memcpy(arena_ + (layout.payload - arena_), bytes.data(), bytes.size());
  arena_[offset] = static_cast<char>(layout.header & ~kUnsharedBit);  // A new value.
}

void KeyTable::EditExternal(Slot slot, absl::FunctionRef<void(std::string&)> edit) {
  const size_t offset = OffsetOf(slot);
  RecordLayout layout = Decode(arena_ + offset);
  assert(static_cast<ValueKind>(layout.header & kKindMask) == ValueKind::kStringExternal);
  std::string* value = LoadLE<std::string*>(layout.payload);
  external_bytes_ -= ExternalSize(value);
  edit(*value);
  external_bytes_ += ExternalSize(value);
  arena_[offset] = static_cast<char>(layout.header & ~kUnsharedBit);  // A new value.
}

void KeyTable::SetAccess(Slot slot, uint16_t access) {
  StoreLE<uint16_t>(arena_ + OffsetOf(slot) + 1, access);
}

void KeyTable::MaybeCompact() {
  if (dead_bytes_ >= kMinCompactDeadBytes && dead_bytes_ * 4 >= arena_used_) Compact();
}

void KeyTable::Compact() {
  size_t live = arena_used_ - dead_bytes_;
  size_t new_capacity = ArenaCapacityFor(std::max<size_t>(live + live / 8, 256));
  char* fresh = static_cast<char*>(std::malloc(new_capacity));
  if (fresh == nullptr) throw std::bad_alloc();
  size_t used = 0;
  for (size_t i = 0; i < capacity_; ++i) {
    uint64_t entry = index_[i];
    if (entry == 0) continue;
    const char* record = arena_ + OffsetSlots::OffsetOf(entry);
    size_t size = Decode(record).total;
    std::memcpy(fresh + used, record, size);
    index_[i] = OffsetSlots::WithOffset(entry, used);
    used += size;
  }
  std::free(arena_);
  arena_ = fresh;
  arena_used_ = used;
  arena_capacity_ = new_capacity;
  dead_bytes_ = 0;
}

uint64_t KeyTable::ScanRange(uint64_t cursor, size_t count, std::vector<Slot>* out) const {
  if (size_ == 0) return kScanEnd;
  return open_addressing::Scan(OffsetSlots(index_, capacity_), cursor, count,
                               [out](size_t pos) { out->push_back(static_cast<Slot>(pos)); });
}

KeyTable::Slot KeyTable::OccupiedAtOrAfter(size_t start) const {
  if (size_ == 0) return kNoSlot;
  return ToSlot(open_addressing::NextOccupied(OffsetSlots(index_, capacity_), start % capacity_));
}

}  // namespace gigakv
