#include "core/types/quicklist.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "core/types/lz.h"

namespace gigakv {
namespace {

constexpr size_t kListpackHeader = 8;
// Redis's SIZE_SAFETY_LIMIT: a node bounded by entry count still stays below this many bytes.
constexpr size_t kSafetyLimitBytes = 8192;
constexpr size_t kByteLimits[] = {4096, 8192, 16384, 32768, 65536};

// Whether a node of `count` entries and `bytes` listpack bytes is within the bounds of `fill`.
bool WithinLimit(int32_t fill, size_t count, size_t bytes) {
  if (fill > 0) return count <= static_cast<size_t>(fill) && bytes <= kSafetyLimitBytes;
  int level = std::clamp(-fill, 1, 5);
  return bytes <= kByteLimits[level - 1];
}

// Compressed nodes. A compressed node is a Listpack whose header is valid (entry count, total
// bytes of the compressed buffer) and whose body is:
//
//   compressed_body := 0xFF plain_entry_bytes:u32 id:u64 lz_block     (see core/types/lz.h)
//
// 0xFF never starts a listpack entry, so it tells a compressed node from a plain one. `id` is
// unique per compression (a process-wide counter): a node's compressed bytes never change, so a
// decompressed copy cached under its id stays valid for as long as the id is seen (Clone() copies
// the id along with the identical bytes).
constexpr uint8_t kCompressedMarker = 0xFF;
constexpr size_t kCompressedPrefix = 1 + 4 + 8;
// Nodes with fewer plain bytes are not worth compressing.
constexpr size_t kMinCompressBytes = 128;

std::atomic<uint64_t> next_compression_id{1};

bool IsCompressed(const Listpack& lp) {
  std::string_view body = lp.entries();
  return !body.empty() && static_cast<uint8_t>(body[0]) == kCompressedMarker;
}

uint32_t LoadU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Bytes of the node's plain listpack (header included), compressed or not.
size_t PlainBytes(const Listpack& lp) {
  if (!IsCompressed(lp)) return lp.bytes();
  return kListpackHeader + LoadU32(lp.entries().data() + 1);
}

uint64_t CompressionId(const Listpack& lp) {
  uint64_t id;
  std::memcpy(&id, lp.entries().data() + 5, 8);
  return id;
}

Listpack Decompress(const Listpack& packed) {
  std::string_view body = packed.entries();
  size_t plain_entries = LoadU32(body.data() + 1);
  return Listpack::Build(static_cast<uint32_t>(packed.size()), plain_entries, [&](char* out) {
    // The block was produced by LzCompress in this process: failing to decode it means memory
    // corruption, not bad input.
    if (!LzDecompress(body.substr(kCompressedPrefix), out, plain_entries)) std::abort();
  });
}

// Replaces a plain node by its compressed form when that saves at least an eighth.
void Compress(Listpack& lp) {
  if (lp.bytes() < kMinCompressBytes || IsCompressed(lp)) return;
  thread_local std::string block;
  std::string_view entries = lp.entries();
  if (!LzCompress(entries, &block)) return;
  uint64_t id = next_compression_id.fetch_add(1, std::memory_order_relaxed);
  auto plain_entries = static_cast<uint32_t>(entries.size());
  lp = Listpack::Build(static_cast<uint32_t>(lp.size()), kCompressedPrefix + block.size(),
                       [&](char* body) {
                         body[0] = static_cast<char>(kCompressedMarker);
                         std::memcpy(body + 1, &plain_entries, 4);
                         std::memcpy(body + 5, &id, 8);
                         std::memcpy(body + kCompressedPrefix, block.data(), block.size());
                       });
}

// The last compressed node read through List::Readable on this thread, decompressed.
struct ReadCache {
  uint64_t id = 0;
  Listpack plain;
};
thread_local ReadCache read_cache;

}  // namespace

struct List::NodeRing {
  uint64_t length;
  uint32_t head;
  uint32_t count;
  uint32_t capacity;  // A power of two.

  Listpack* slots() { return reinterpret_cast<Listpack*>(reinterpret_cast<char*>(this) + kOffset); }
  Listpack& at(size_t i) { return slots()[(head + i) & (capacity - 1)]; }

  static constexpr size_t kOffset =
      (sizeof(uint64_t) + 3 * sizeof(uint32_t) + alignof(Listpack) - 1) / alignof(Listpack) *
      alignof(Listpack);

  static NodeRing* Create(uint32_t capacity) {
    void* memory = std::malloc(kOffset + capacity * sizeof(Listpack));
    if (memory == nullptr) throw std::bad_alloc();
    auto* ring = new (memory) NodeRing{0, 0, 0, capacity};
    for (uint32_t i = 0; i < capacity; ++i) new (ring->slots() + i) Listpack();
    return ring;
  }
  static void Destroy(NodeRing* ring) {
    for (uint32_t i = 0; i < ring->capacity; ++i) ring->slots()[i].~Listpack();
    std::free(ring);
  }
  size_t AllocatedBytes() const { return kOffset + capacity * sizeof(Listpack); }
};

List::List(int64_t fill)
    : fill_(static_cast<int32_t>(std::clamp<int64_t>(fill == 0 ? 1 : fill, -5, INT32_MAX))) {
  new (&single_) Listpack();
}

List::~List() {
  if (has_ring_) {
    NodeRing::Destroy(ring_);
  } else {
    single_.~Listpack();
  }
}

size_t List::size() const { return has_ring_ ? ring_->length : single_.size(); }

size_t List::node_count() const {
  if (has_ring_) return ring_->count;
  return single_.empty() ? 0 : 1;
}

Listpack& List::node(size_t i) { return has_ring_ ? ring_->at(i) : single_; }
const Listpack& List::node(size_t i) const { return has_ring_ ? ring_->at(i) : single_; }

const Listpack& List::Readable(size_t i) const {
  const Listpack& lp = node(i);
  if (!IsCompressed(lp)) return lp;
  if (i == 0 || i + 1 == node_count()) {
    // An end node that is read is likely read again (LRANGE 0 9 on an RPUSH-built list): keep
    // it decompressed, as a pop would. Logically const: the entries do not change.
    return const_cast<List*>(this)->Plain(i);
  }
  ReadCache& cache = read_cache;
  uint64_t id = CompressionId(lp);
  if (cache.id != id) {
    cache.id = 0;
    cache.plain = Decompress(lp);
    cache.id = id;
  }
  return cache.plain;
}

Listpack& List::Plain(size_t i) {
  Listpack& lp = node(i);
  if (IsCompressed(lp)) lp = Decompress(lp);
  return lp;
}

bool List::IsNodeCompressed(size_t i) const { return IsCompressed(node(i)); }

void List::CompressInterior(size_t first, size_t last) {
  size_t nodes = node_count();
  if (nodes < 3) return;
  first = std::max<size_t>(first, 1);
  last = std::min(last, nodes - 2);
  for (size_t i = first; i <= last; ++i) Compress(node(i));
}

void List::AddLength(int64_t delta) {
  if (has_ring_) ring_->length += static_cast<uint64_t>(delta);
}

Listpack& List::InsertNode(size_t i) {
  if (!has_ring_) {
    if (single_.empty()) return single_;
    Listpack only = std::move(single_);
    single_.~Listpack();
    ring_ = NodeRing::Create(4);
    has_ring_ = true;
    ring_->length = only.size();
    ring_->count = 1;
    ring_->at(0) = std::move(only);
  }
  if (ring_->count == ring_->capacity) ResizeRing(ring_->capacity * 2);
  NodeRing* ring = ring_;
  // Shift the shorter side by one slot.
  if (i < ring->count / 2) {
    ring->head = (ring->head + ring->capacity - 1) & (ring->capacity - 1);
    for (size_t j = 0; j < i; ++j) ring->at(j) = std::move(ring->at(j + 1));
  } else {
    for (size_t j = ring->count; j > i; --j) ring->at(j) = std::move(ring->at(j - 1));
  }
  ++ring->count;
  ring->at(i) = Listpack();
  return ring->at(i);
}

void List::EraseNode(size_t i) {
  if (!has_ring_) {
    single_.Clear();
    return;
  }
  NodeRing* ring = ring_;
  ring->length -= ring->at(i).size();
  if (i < ring->count / 2) {
    for (size_t j = i; j > 0; --j) ring->at(j) = std::move(ring->at(j - 1));
    ring->at(0).Clear();
    ring->head = (ring->head + 1) & (ring->capacity - 1);
  } else {
    for (size_t j = i; j + 1 < ring->count; ++j) ring->at(j) = std::move(ring->at(j + 1));
    ring->at(ring->count - 1).Clear();
  }
  --ring->count;
  if (ring->count <= 1) {
    Listpack only = ring->count == 1 ? std::move(ring->at(0)) : Listpack();
    NodeRing::Destroy(ring);
    has_ring_ = false;
    new (&single_) Listpack(std::move(only));
  } else if (ring->capacity > 4 && ring->count * 4 <= ring->capacity) {
    ResizeRing(ring->capacity / 2);  // A list that shrank much gives its slots back.
  }
}

void List::ResizeRing(uint32_t capacity) {
  NodeRing* resized = NodeRing::Create(capacity);
  resized->length = ring_->length;
  resized->count = ring_->count;
  for (uint32_t j = 0; j < ring_->count; ++j) resized->at(j) = std::move(ring_->at(j));
  NodeRing::Destroy(ring_);
  ring_ = resized;
}

bool List::NodeAccepts(size_t i, std::string_view value) const {
  const Listpack& lp = node(i);
  if (lp.empty()) return true;
  return WithinLimit(fill_, lp.size() + 1, PlainBytes(lp) + Listpack::EntrySize(value));
}

bool List::NodesFitTogether(size_t i, size_t j) const {
  const Listpack& a = node(i);
  const Listpack& b = node(j);
  return WithinLimit(fill_, a.size() + b.size(), PlainBytes(a) + PlainBytes(b) - kListpackHeader);
}

void List::Push(ListEnd end, std::string_view value) {
  size_t nodes = node_count();
  // A push that overflows the end node starts a new one; the full node it leaves behind receives
  // no more pushes, so it is compressed.
  if (end == ListEnd::kHead) {
    if (nodes > 0 && NodeAccepts(0, value)) {
      Plain(0).Prepend(value);
    } else {
      InsertNode(0).Prepend(value);
      if (nodes > 0) Compress(node(1));
    }
  } else {
    if (nodes > 0 && NodeAccepts(nodes - 1, value)) {
      Plain(nodes - 1).Append(value);
    } else {
      InsertNode(nodes).Append(value);
      if (nodes > 0) Compress(node(nodes - 1));
    }
  }
  AddLength(1);
}

bool List::Pop(ListEnd end, std::string* value) {
  size_t nodes = node_count();
  if (nodes == 0) return false;
  size_t i = end == ListEnd::kHead ? 0 : nodes - 1;
  Listpack& lp = Plain(i);
  Listpack::Pos pos = end == ListEnd::kHead ? lp.First() : lp.Last();
  *value = lp.Get(pos).ToString();
  lp.Erase(pos);
  AddLength(-1);
  if (lp.empty()) EraseNode(i);
  return true;
}

List::Cursor List::Seek(int64_t index) const {
  auto length = static_cast<int64_t>(size());
  if (index < 0) index += length;
  if (index < 0 || index >= length) return {};
  size_t nodes = node_count();
  if (index <= length / 2) {
    auto remaining = static_cast<size_t>(index);
    for (size_t i = 0; i < nodes; ++i) {
      size_t here = node(i).size();
      if (remaining < here) return {i, Readable(i).Seek(static_cast<int64_t>(remaining))};
      remaining -= here;
    }
  } else {
    auto remaining = static_cast<size_t>(length - 1 - index);  // Counted from the tail.
    for (size_t i = nodes; i-- > 0;) {
      size_t here = node(i).size();
      if (remaining < here) return {i, Readable(i).Seek(-1 - static_cast<int64_t>(remaining))};
      remaining -= here;
    }
  }
  return {};
}

List::Cursor List::Next(Cursor cursor) const {
  Listpack::Pos pos = Readable(cursor.node).Next(cursor.pos);
  if (pos != Listpack::kEnd) return {cursor.node, pos};
  // Every node has entries, and a plain or decompressed node's first entry sits at the same
  // offset, so the next node need not be decompressed here.
  if (cursor.node + 1 < node_count()) return {cursor.node + 1, Listpack::kFirstPos};
  return {};
}

List::Cursor List::Prev(Cursor cursor) const {
  Listpack::Pos pos = Readable(cursor.node).Prev(cursor.pos);
  if (pos != Listpack::kEnd) return {cursor.node, pos};
  if (cursor.node > 0) return {cursor.node - 1, Readable(cursor.node - 1).Last()};
  return {};
}

ListpackEntry List::Get(Cursor cursor) const { return Readable(cursor.node).Get(cursor.pos); }

void List::InsertAt(size_t i, Listpack::Pos pos, std::string_view value) {
  InsertUncounted(i, pos, value);
  AddLength(1);  // After: a list leaving inline mode starts its ring with the old length.
}

void List::InsertUncounted(size_t i, Listpack::Pos pos, std::string_view value) {
  Listpack& lp = Plain(i);
  if (NodeAccepts(i, value)) {
    lp.Insert(pos, value);
    return;
  }
  if (pos == lp.First()) {  // Before the node: the tail of the previous one, or a new node.
    if (i > 0 && NodeAccepts(i - 1, value)) {
      Plain(i - 1).Append(value);
    } else {
      InsertNode(i).Append(value);
    }
    return;
  }
  if (pos == Listpack::kEnd) {  // After the node: the head of the next one, or a new node.
    if (i + 1 < node_count() && NodeAccepts(i + 1, value)) {
      Plain(i + 1).Prepend(value);
    } else {
      InsertNode(i + 1).Append(value);
    }
    return;
  }
  // In the middle of a full node: split it at the insertion point (as Redis does), then put the
  // value at the end of the left part, the start of the right part, or in a node between.
  InsertNode(i + 1);  // First, so that a list leaving inline mode counts the whole node.
  node(i + 1) = node(i).SplitAt(pos);
  if (NodeAccepts(i, value)) {
    node(i).Append(value);
  } else if (NodeAccepts(i + 1, value)) {
    node(i + 1).Prepend(value);
  } else {
    InsertNode(i + 1).Append(value);
  }
}

void List::AfterRemoval(size_t i) {
  if (node(i).empty()) {
    EraseNode(i);
    return;
  }
  if (i + 1 < node_count() && NodesFitTogether(i, i + 1)) {
    MergeWithNext(i);
  } else if (i > 0 && NodesFitTogether(i - 1, i)) {
    MergeWithNext(i - 1);
  }
}

void List::MergeWithNext(size_t i) {
  Plain(i).AppendAll(std::move(Plain(i + 1)));
  EraseNode(i + 1);
}

bool List::Set(int64_t index, std::string_view value) {
  Cursor cursor = Seek(index);
  if (!cursor.valid()) return false;
  Listpack& lp = Plain(cursor.node);
  std::string scratch;
  size_t old_size = Listpack::EntrySize(lp.Get(cursor.pos).View(&scratch));
  if (lp.size() == 1 ||
      WithinLimit(fill_, lp.size(), lp.bytes() - old_size + Listpack::EntrySize(value))) {
    lp.Replace(cursor.pos, value);
  } else {
    // The new value does not fit in place: remove the old one and insert as LINSERT would.
    Listpack::Pos next = lp.Erase(cursor.pos);
    AddLength(-1);
    InsertAt(cursor.node, next, value);
  }
  CompressInterior(cursor.node, cursor.node + 2);  // The node, or its split and a new node.
  return true;
}

bool List::InsertAtPivot(std::string_view pivot, std::string_view value, bool after) {
  size_t nodes = node_count();
  for (size_t i = 0; i < nodes; ++i) {
    const Listpack& lp = Readable(i);
    Listpack::Pos pos = lp.Find(pivot, lp.First());
    if (pos == Listpack::kEnd) continue;
    // Positions in a decompressed copy are positions in the node once decompressed.
    InsertAt(i, after ? lp.Next(pos) : pos, value);
    CompressInterior(i, i + 2);  // The node, or its split and a new node.
    return true;
  }
  return false;
}

size_t List::Remove(std::string_view value, int64_t count) {
  size_t limit = count == 0  ? SIZE_MAX
                 : count < 0 ? static_cast<size_t>(-(count + 1)) + 1
                             : static_cast<size_t>(count);
  size_t removed = 0;
  if (count >= 0) {
    for (size_t i = 0; i < node_count() && removed < limit;) {
      const Listpack& readable = Readable(i);
      Listpack::Pos pos = readable.Find(value, readable.First());
      if (pos == Listpack::kEnd) {  // Nodes without the value are not decompressed.
        ++i;
        continue;
      }
      Listpack& lp = Plain(i);
      size_t here = 0;
      while (pos != Listpack::kEnd && removed < limit) {
        pos = lp.Erase(pos);
        ++removed, ++here;
        if (pos != Listpack::kEnd) pos = lp.Find(value, pos);
      }
      AddLength(-static_cast<int64_t>(here));
      if (lp.empty()) {
        EraseNode(i);
      } else {
        ++i;
      }
    }
  } else {
    for (size_t i = node_count(); i-- > 0 && removed < limit;) {
      const Listpack& readable = Readable(i);
      if (readable.Find(value, readable.First()) == Listpack::kEnd) continue;
      Listpack& lp = Plain(i);
      size_t here = 0;
      for (Listpack::Pos pos = lp.Last(); pos != Listpack::kEnd && removed < limit;) {
        Listpack::Pos prev = lp.Prev(pos);  // Positions before an erased entry stay valid.
        if (lp.EntryEquals(pos, value)) {
          lp.Erase(pos);
          ++removed, ++here;
        }
        pos = prev;
      }
      AddLength(-static_cast<int64_t>(here));
      if (lp.empty()) EraseNode(i);
    }
  }
  if (removed > 0) {
    // Merge neighbours that now fit together.
    for (size_t i = 0; i + 1 < node_count();) {
      if (NodesFitTogether(i, i + 1)) {
        MergeWithNext(i);
      } else {
        ++i;
      }
    }
    CompressInterior(0, node_count());
  }
  return removed;
}

void List::Erase(ListEnd end, size_t count) {
  while (count > 0 && node_count() > 0) {
    size_t i = end == ListEnd::kHead ? 0 : node_count() - 1;
    if (node(i).size() <= count) {
      count -= node(i).size();
      EraseNode(i);
      continue;
    }
    Listpack& lp = Plain(i);
    if (end == ListEnd::kHead) {
      lp.Erase(lp.First(), count);
    } else {
      lp.Erase(lp.Seek(static_cast<int64_t>(lp.size() - count)), count);
    }
    AddLength(-static_cast<int64_t>(count));
    count = 0;
    AfterRemoval(i);
  }
}

size_t List::MemoryUsage() const {
  size_t bytes = sizeof(List);
  if (has_ring_) bytes += ring_->AllocatedBytes();
  for (size_t i = 0, n = node_count(); i < n; ++i) bytes += node(i).bytes();
  return bytes;
}

Object* List::Clone() const {
  auto* copy = new List(fill_);
  size_t nodes = node_count();
  if (nodes <= 1) {
    if (nodes == 1) copy->single_ = single_.Clone();
    return copy;
  }
  uint32_t capacity = 4;
  while (capacity < nodes) capacity *= 2;
  copy->single_.~Listpack();
  copy->ring_ = NodeRing::Create(capacity);
  copy->has_ring_ = true;
  copy->ring_->length = ring_->length;
  copy->ring_->count = static_cast<uint32_t>(nodes);
  for (size_t i = 0; i < nodes; ++i) copy->ring_->at(i) = ring_->at(i).Clone();
  return copy;
}

void List::ForEachNode(absl::FunctionRef<void(const Listpack& node)> fn) const {
  Listpack decompressed;  // Not the read cache: `fn` may read other lists.
  for (size_t i = 0, n = node_count(); i < n; ++i) {
    const Listpack& lp = node(i);
    if (IsCompressed(lp)) {
      decompressed = Decompress(lp);
      fn(decompressed);
    } else {
      fn(lp);
    }
  }
}

void List::ForEachElement(absl::FunctionRef<void(std::string_view)> fn) const {
  std::string scratch;
  Listpack decompressed;  // Not the read cache: `fn` may read other lists.
  for (size_t i = 0, n = node_count(); i < n; ++i) {
    const Listpack* node_entries = &node(i);
    if (IsCompressed(*node_entries)) {
      decompressed = Decompress(*node_entries);
      node_entries = &decompressed;
    }
    const Listpack& lp = *node_entries;
    for (Listpack::Pos pos = lp.First(); pos != Listpack::kEnd; pos = lp.Next(pos)) {
      fn(lp.Get(pos).View(&scratch));
    }
  }
}

bool List::CheckInvariants() const {
  size_t total = 0;
  size_t nodes = node_count();
  if (has_ring_ && nodes < 2) return false;
  for (size_t i = 0; i < nodes; ++i) {
    const Listpack& lp = node(i);
    if (lp.empty()) return false;
    if (lp.size() > 1 && !WithinLimit(fill_, lp.size(), PlainBytes(lp))) return false;
    if (IsCompressed(lp)) {
      Listpack plain = Decompress(lp);
      if (plain.size() != lp.size() || Listpack::FromEntries(plain.entries()).size() != lp.size() ||
          plain.bytes() != PlainBytes(lp)) {
        return false;
      }
    }
    total += lp.size();
  }
  return total == size();
}

}  // namespace gigakv
