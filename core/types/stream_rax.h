// XINFO STREAM's radix-tree-nodes: how many nodes Redis's radix tree (rax.c) would have if it held
// the stream's node keys. Redis keys a stream's nodes in a rax by master ID, 16 bytes big-endian
// (ms then seq); gigakv keeps them in a B-tree, so it computes the figure from the keys.
//
// rax nodes. A node stores the bytes of the edges leaving it: a branching node one byte per child
// (two or more children), a run node (rax's "compressed" node, or a plain node with one child) a
// run of bytes leading to its single child, a leaf none. The head node always exists: an empty rax
// is the head alone (1 node). A key ends at the node reached after its last byte; as every key
// here has 16 bytes, no key is a prefix of another and keys end exactly at the leaves.
//
// Canonical shape. For the keys of a subtree at depth d (all sharing their first d bytes):
//   d = 16                              1  (the key's leaf)
//   one key, d < 16                     2  (a run node for bytes d..15, then the leaf)
//   the keys share bytes d..s-1, s > d  1 + nodes(d = s)  (a run node for the shared bytes)
//   the keys differ at byte d           1 + sum over each distinct byte b at d of
//                                           nodes(the keys with b, d + 1)  (a branching node)
// The count of a non-empty key set is nodes(all keys, d = 0); the head is its root node.
//
// The count depends on the key set only, not on the insert/remove history: inserting splits a run
// exactly where the new key departs (prefix run, branching node, rest of the run) and removing a
// key frees its unshared chain and re-merges any chain of single-child nodes left behind into one
// run, so rax always holds the maximally merged trie above. Checked against redis-server 7.0.15
// (XINFO STREAM after random XADD/XDEL/XTRIM histories, node keys read from DUMP) and against rax.c
// itself under random insert/remove orders. (rax caps a run at 2^29 - 1 bytes and skips merging
// when out of memory; neither can happen with 16-byte keys.)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace gigakv {

// A stream node's rax key: ms then seq, each 8 bytes big-endian, so byte order is ID order.
using RaxKey = std::array<uint8_t, 16>;

inline RaxKey StreamRaxKey(uint64_t ms, uint64_t seq) {
  RaxKey key;
  for (int i = 0; i < 8; ++i) {
    key[i] = static_cast<uint8_t>(ms >> (56 - 8 * i));
    key[8 + i] = static_cast<uint8_t>(seq >> (56 - 8 * i));
  }
  return key;
}

// rax->numnodes of a rax holding exactly `sorted_keys` (ascending, distinct). O(16 * keys) time,
// O(1) space besides a recursion at most 33 calls deep.
size_t RaxNodeCount(absl::Span<const RaxKey> sorted_keys);

}  // namespace gigakv
