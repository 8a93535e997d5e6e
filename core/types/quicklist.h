// List: the value of a Redis list key. A sequence of Listpack nodes (Redis's quicklist), each
// node bounded by list-max-listpack-size, kept in a ring of node slots so that both ends are
// reachable in O(1). OBJECT ENCODING reports "quicklist" whatever the size, as Redis 7.0 does.
//
// Layout: a list with at most one node stores it inline (24-byte object, no other allocation
// than the node's buffer); a longer list owns one NodeRing allocation:
//
//   ring       := header slot[capacity]            (one malloc)
//   header     := length:u64 head:u32 count:u32 capacity:u32
//   slot       := Listpack                         (8 bytes: the node buffer's pointer)
//
// Node i of the list lives in slot (head + i) % capacity; capacity is a power of two, doubled when
// full and halved when at most a quarter used. Nodes are never empty (except the inline node of an
// empty list). Node bounds (`fill`, from list-max-listpack-size at creation): fill > 0 allows at
// most `fill` entries per node (and at most 8 KiB, Redis's safety limit); fill -1..-5 allows at
// most 4, 8, 16, 32 or 64 KiB of listpack bytes per node. A node always accepts its first entry, so
// an element larger than the limit gets a node of its own. After a removal a node is merged with a
// neighbour when both fit in one node.
//
// Compression (always on; list-compress-depth is accepted and ignored): a node is compressed
// (core/types/lz.h) when a push overflows it, since it then sits full behind the end node that
// takes the pushes, and a node in the middle of the list (neither first nor last) is compressed
// again after a change decompressed it. Pops, changes and reads of an end node decompress it in
// place (so a list read at its cold end goes back to plain nodes there); reads of a middle node
// (Seek/Next/Prev/Get, ForEachElement) decompress a copy, so a run of reads on one node decodes
// it once. Nodes under 128 bytes, and nodes that would not shrink by an eighth, stay plain.
//
// Complexity: push/pop at either end O(1) amortized (plus the node's bytes for a head insert, as
// in Redis, and one node's compression or decompression per node's worth of pushes or pops);
// access by index O(nodes + node size); insert/remove in the middle O(nodes + node bytes). Not
// thread-safe: used under its shard's lock. ListpackEntry views returned by Get() point into the
// node or into this thread's decompressed copy: valid until the list changes or another
// compressed node is read on this thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "core/types/listpack.h"
#include "gigakv/object.h"

namespace gigakv {

enum class ListEnd : uint8_t { kHead, kTail };

class List final : public Object {
 public:
  // `fill` is list-max-listpack-size (see above); 0 is treated as 1.
  explicit List(int64_t fill = -2);
  ~List() override;
  List(const List&) = delete;
  List& operator=(const List&) = delete;

  // A position in the list: node index and the entry's position inside that node. Invalidated by
  // any mutation.
  struct Cursor {
    size_t node = 0;
    Listpack::Pos pos = Listpack::kEnd;
    bool valid() const { return pos != Listpack::kEnd; }
  };

  // Object.
  KeyType type() const override { return KeyType::kList; }
  std::string_view encoding_name() const override { return "quicklist"; }
  size_t MemoryUsage() const override;
  size_t Length() const override { return size(); }
  Object* Clone() const override;
  void ForEachElement(absl::FunctionRef<void(std::string_view)> fn) const override;

  size_t size() const;
  bool empty() const { return size() == 0; }
  size_t node_count() const;
  int32_t fill() const { return fill_; }

  void Push(ListEnd end, std::string_view value);
  // Removes the element at `end` into *value; false when the list is empty.
  bool Pop(ListEnd end, std::string* value);

  // Walking. Seek takes an index (negative counts from the end); the cursor is invalid when the
  // index is out of range. Next/Prev move one element (invalid past the ends).
  Cursor Seek(int64_t index) const;
  Cursor Next(Cursor cursor) const;
  Cursor Prev(Cursor cursor) const;
  ListpackEntry Get(Cursor cursor) const;

  // Replaces the element at `index` (negative from the end); false when out of range.
  bool Set(int64_t index, std::string_view value);
  // Inserts `value` before (or after) the first element equal to `pivot`; false if none.
  bool InsertAtPivot(std::string_view pivot, std::string_view value, bool after);
  // Removes up to |count| elements equal to `value` (all if count == 0), scanning from the head
  // when count >= 0 and from the tail when count < 0. Returns how many were removed.
  size_t Remove(std::string_view value, int64_t count);
  // Removes `count` elements from `end` (fewer if the list is shorter).
  void Erase(ListEnd end, size_t count);

  // Calls fn with each node in order, head to tail; a compressed node is decompressed into a
  // copy first (the list is not changed). For encoders that write the list node by node.
  void ForEachNode(absl::FunctionRef<void(const Listpack& node)> fn) const;

  // Debug: checks the structural invariants (node bounds, counts, compressed nodes decoding to
  // their recorded size); for tests.
  bool CheckInvariants() const;
  // Whether node i (0 <= i < node_count()) is stored compressed; for tests and MEMORY stats.
  bool IsNodeCompressed(size_t i) const;

 private:
  struct NodeRing;

  // The node's slot as stored: a plain or a compressed listpack (see quicklist.cc).
  Listpack& node(size_t i);
  const Listpack& node(size_t i) const;
  // The node's entries for reading: the node itself (an end node is decompressed in place
  // first), or, for a compressed node in the middle, a decompressed copy held in a per-thread
  // cache of one node, valid until the next Readable() of another compressed node on this thread.
  const Listpack& Readable(size_t i) const;
  // The node, decompressed in place first if needed; for changes.
  Listpack& Plain(size_t i);
  // Compresses the plain nodes among [first, last] that are not at either end.
  void CompressInterior(size_t first, size_t last);
  // Appends node i + 1's entries to node i and drops node i + 1.
  void MergeWithNext(size_t i);
  // Inserts an empty node at index i (0..node_count) and returns it.
  Listpack& InsertNode(size_t i);
  void EraseNode(size_t i);
  // Moves the nodes into a new ring of `capacity` slots (a power of two >= node count).
  void ResizeRing(uint32_t capacity);
  void AddLength(int64_t delta);
  bool NodeAccepts(size_t i, std::string_view value) const;
  bool NodesFitTogether(size_t i, size_t j) const;
  // Inserts `value` before the entry at `pos` of node `i` (kEnd: after its last entry).
  void InsertAt(size_t i, Listpack::Pos pos, std::string_view value);
  void InsertUncounted(size_t i, Listpack::Pos pos, std::string_view value);
  // Called after entries were removed from node `i`: drops it if empty, or merges it with a
  // neighbour when they fit in one node.
  void AfterRemoval(size_t i);

  // 24 bytes with the vtable pointer: the only node (inline) or the owned ring, told apart by
  // has_ring_.
  union {
    Listpack single_;
    NodeRing* ring_;
  };
  int32_t fill_;
  bool has_ring_ = false;
};

}  // namespace gigakv
