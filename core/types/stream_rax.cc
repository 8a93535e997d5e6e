#include "core/types/stream_rax.h"

namespace gigakv {
namespace {

constexpr size_t kKeySize = 16;

// Nodes of the subtree holding `keys` (sorted, non-empty), which share their first `depth` bytes.
size_t SubtreeNodes(absl::Span<const RaxKey> keys, size_t depth) {
  if (depth == kKeySize) return 1;  // The leaf.
  if (keys.size() == 1) return 2;   // A run node for the rest of the key, then the leaf.
  // Sorted keys all share a byte exactly when the first and the last do.
  size_t shared = depth;
  while (shared < kKeySize && keys.front()[shared] == keys.back()[shared]) ++shared;
  if (shared > depth) return 1 + SubtreeNodes(keys, shared);  // A run node for the shared bytes.
  size_t nodes = 1;  // A branching node, one child per distinct byte at `depth`.
  while (!keys.empty()) {
    size_t same = 1;
    while (same < keys.size() && keys[same][depth] == keys[0][depth]) ++same;
    nodes += SubtreeNodes(keys.first(same), depth + 1);
    keys.remove_prefix(same);
  }
  return nodes;
}

}  // namespace

size_t RaxNodeCount(absl::Span<const RaxKey> sorted_keys) {
  if (sorted_keys.empty()) return 1;  // The head alone.
  return SubtreeNodes(sorted_keys, 0);
}

}  // namespace gigakv
