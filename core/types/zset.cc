#include "core/types/zset.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/varint.h"
#include "gigakv/key_hash.h"

namespace gigakv {
namespace {

// --- Element blobs: score:f64 member_len:varint member_bytes ------------------------------------

using Blob = uint8_t*;

double BlobScore(const uint8_t* blob) {
  double score;
  std::memcpy(&score, blob, sizeof(score));
  return score;
}
void SetBlobScore(uint8_t* blob, double score) { std::memcpy(blob, &score, sizeof(score)); }

std::string_view BlobMember(const uint8_t* blob) {
  uint64_t length;
  const uint8_t* p = varint::Get(blob + sizeof(double), &length);
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(length)};
}

size_t BlobSize(size_t member_size) {
  return sizeof(double) + varint::Size(member_size) + member_size;
}

// Heap bytes glibc malloc uses for a request (chunk header, 16-byte rounding, 32-byte minimum).
size_t MallocCost(size_t request) { return std::max<size_t>(32, (request + 8 + 15) & ~size_t{15}); }

Blob MakeBlob(double score, std::string_view member) {
  auto* blob = static_cast<uint8_t*>(std::malloc(BlobSize(member.size())));
  if (blob == nullptr) throw std::bad_alloc();
  SetBlobScore(blob, score);
  uint8_t* p = varint::Put(blob + sizeof(double), member.size());
  if (!member.empty()) std::memcpy(p, member.data(), member.size());
  return blob;
}

// (score, member) ordering.
bool KeyLess(double a_score, std::string_view a_member, double b_score, std::string_view b_member) {
  if (a_score != b_score) return a_score < b_score;
  return a_member < b_member;
}
bool BlobLess(const uint8_t* a, double b_score, std::string_view b_member) {
  return KeyLess(BlobScore(a), BlobMember(a), b_score, b_member);
}

// --- Listpack score entries ---------------------------------------------------------------------

constexpr double kMaxExactInt = 9007199254740992.0;  // 2^53
constexpr char kDoubleTag = 'd';

void InsertScore(DenseListpack& lp, DenseListpack::Pos before, double score) {
  if (std::trunc(score) == score && std::fabs(score) < kMaxExactInt) {
    lp.InsertInt(before, static_cast<int64_t>(score));  // -0 becomes 0, as in Redis's listpack.
    return;
  }
  char bytes[sizeof(double) + 1];
  std::memcpy(bytes, &score, sizeof(double));
  bytes[sizeof(double)] = kDoubleTag;
  lp.Insert(before, std::string_view(bytes, sizeof(bytes)));
}

double DecodeScore(const ListpackEntry& entry) {
  if (entry.is_int) return static_cast<double>(entry.int_value);
  double score;
  std::memcpy(&score, entry.str.data(), sizeof(double));
  return score;
}

// Member text of a listpack entry (integers are written into `scratch`).
std::string_view EntryMember(const ListpackEntry& entry, std::string* scratch) {
  return entry.View(scratch);
}

// --- Counted B+tree of blobs
// ----------------------------------------------------------------------
//
// Leaves hold up to kCapacity blob pointers in order and are linked both ways; inner nodes hold up
// to kCapacity children with each child's element count and first element (the separator used to
// descend). Nodes below a quarter full merge with a neighbour when both fit in one node.

constexpr int kCapacity = 64;

struct Node {
  uint16_t n = 0;
  bool leaf = true;
};

struct Leaf : Node {
  Leaf* prev = nullptr;
  Leaf* next = nullptr;
  Blob items[kCapacity];
};

struct Inner : Node {
  size_t total = 0;
  Node* kids[kCapacity];
  size_t counts[kCapacity];
  Blob firsts[kCapacity];
};

size_t TotalOf(const Node* node) {
  return node->leaf ? node->n : static_cast<const Inner*>(node)->total;
}
Blob FirstOf(const Node* node) {
  return node->leaf ? static_cast<const Leaf*>(node)->items[0]
                    : static_cast<const Inner*>(node)->firsts[0];
}

class BTree {
 public:
  BTree() : root_(new Leaf()) { nodes_ = 1; }
  ~BTree() { FreeNode(root_); }
  BTree(const BTree&) = delete;
  BTree& operator=(const BTree&) = delete;

  size_t size() const { return TotalOf(root_); }
  size_t nodes() const { return nodes_; }

  void Insert(Blob blob) {
    Node* right = InsertRec(root_, blob, BlobScore(blob), BlobMember(blob));
    if (right != nullptr) {
      auto* root = new Inner();
      ++nodes_;
      root->leaf = false;
      root->n = 2;
      root->kids[0] = root_;
      root->kids[1] = right;
      Refresh(root, 0);
      Refresh(root, 1);
      root->total = root->counts[0] + root->counts[1];
      root_ = root;
    }
  }

  // Removes the element with this key (it must be present).
  void Erase(double score, std::string_view member) {
    EraseRec(root_, score, member);
    while (!root_->leaf && root_->n == 1) {
      auto* old = static_cast<Inner*>(root_);
      root_ = old->kids[0];
      delete old;
      --nodes_;
    }
  }

  // The first rank whose element satisfies `pred` (monotone: false... then true...).
  template <typename Pred>
  size_t LowerBound(Pred pred) const {
    const Node* node = root_;
    size_t base = 0;
    while (!node->leaf) {
      const auto* inner = static_cast<const Inner*>(node);
      // Children whose first element fails the predicate: the answer is in the last of them.
      int lo = 0, hi = inner->n;
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (pred(inner->firsts[mid])) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      if (lo == 0) return base;
      for (int i = 0; i < lo - 1; ++i) base += inner->counts[i];
      node = inner->kids[lo - 1];
    }
    const auto* leaf = static_cast<const Leaf*>(node);
    int lo = 0, hi = leaf->n;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (pred(leaf->items[mid])) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return base + static_cast<size_t>(lo);
  }

  // The leaf and index holding `rank` (< size()).
  std::pair<const Leaf*, int> Seek(size_t rank) const {
    const Node* node = root_;
    while (!node->leaf) {
      const auto* inner = static_cast<const Inner*>(node);
      int i = 0;
      while (rank >= inner->counts[i]) rank -= inner->counts[i++];
      node = inner->kids[i];
    }
    return {static_cast<const Leaf*>(node), static_cast<int>(rank)};
  }

  template <typename Fn>
  void ForEach(Fn fn) const {
    if (size() == 0) return;
    auto [leaf, index] = Seek(0);
    for (; leaf != nullptr; leaf = leaf->next) {
      for (int i = 0; i < leaf->n; ++i) fn(leaf->items[i]);
    }
  }

 private:
  static void Refresh(Inner* inner, int i) {
    inner->counts[i] = TotalOf(inner->kids[i]);
    inner->firsts[i] = FirstOf(inner->kids[i]);
  }

  // The child of `inner` where the key belongs: the last one whose first element is <= key.
  static int ChildFor(const Inner* inner, double score, std::string_view member) {
    int lo = 1, hi = inner->n;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (BlobLess(inner->firsts[mid], score, member) ||
          (BlobScore(inner->firsts[mid]) == score && BlobMember(inner->firsts[mid]) == member)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo - 1;
  }

  void FreeNode(Node* node) {
    if (!node->leaf) {
      auto* inner = static_cast<Inner*>(node);
      for (int i = 0; i < inner->n; ++i) FreeNode(inner->kids[i]);
      delete inner;
    } else {
      delete static_cast<Leaf*>(node);
    }
  }

  // Inserts into the subtree; returns a new right sibling when the node split.
  Node* InsertRec(Node* node, Blob blob, double score, std::string_view member) {
    if (node->leaf) {
      auto* leaf = static_cast<Leaf*>(node);
      int pos = static_cast<int>(std::lower_bound(leaf->items, leaf->items + leaf->n, blob,
                                                  [&](const uint8_t* a, const uint8_t*) {
                                                    return BlobLess(a, score, member);
                                                  }) -
                                 leaf->items);
      Leaf* right = nullptr;
      if (leaf->n == kCapacity) {
        right = new Leaf();
        ++nodes_;
        // Appending past the last leaf (ascending inserts) leaves it full instead of half full.
        int half = (pos == kCapacity && leaf->next == nullptr) ? kCapacity : kCapacity / 2;
        std::memcpy(right->items, leaf->items + half, sizeof(Blob) * (kCapacity - half));
        right->n = static_cast<uint16_t>(kCapacity - half);
        leaf->n = static_cast<uint16_t>(half);
        right->next = leaf->next;
        if (right->next != nullptr) right->next->prev = right;
        right->prev = leaf;
        leaf->next = right;
        if (pos > half || half == kCapacity) {
          leaf = right;
          pos -= half;
        }
      }
      std::memmove(leaf->items + pos + 1, leaf->items + pos, sizeof(Blob) * (leaf->n - pos));
      leaf->items[pos] = blob;
      ++leaf->n;
      return right;
    }
    auto* inner = static_cast<Inner*>(node);
    int i = ChildFor(inner, score, member);
    Node* split = InsertRec(inner->kids[i], blob, score, member);
    Refresh(inner, i);
    ++inner->total;
    if (split == nullptr) return nullptr;
    Inner* right = nullptr;
    Inner* target = inner;
    int at = i + 1;
    if (inner->n == kCapacity) {
      right = new Inner();
      ++nodes_;
      right->leaf = false;
      int half = kCapacity / 2;
      int moved = kCapacity - half;
      std::memcpy(right->kids, inner->kids + half, sizeof(Node*) * moved);
      std::memcpy(right->counts, inner->counts + half, sizeof(size_t) * moved);
      std::memcpy(right->firsts, inner->firsts + half, sizeof(Blob) * moved);
      right->n = static_cast<uint16_t>(moved);
      inner->n = static_cast<uint16_t>(half);
      size_t right_total = 0;
      for (int k = 0; k < moved; ++k) right_total += right->counts[k];
      right->total = right_total;
      inner->total -= right_total;
      if (at > half) {
        target = right;
        at -= half;
      }
    }
    std::memmove(target->kids + at + 1, target->kids + at, sizeof(Node*) * (target->n - at));
    std::memmove(target->counts + at + 1, target->counts + at, sizeof(size_t) * (target->n - at));
    std::memmove(target->firsts + at + 1, target->firsts + at, sizeof(Blob) * (target->n - at));
    target->kids[at] = split;
    ++target->n;
    Refresh(target, at);
    if (right != nullptr) {
      // Both halves' totals follow from their children's counts.
      size_t total = 0;
      for (int k = 0; k < inner->n; ++k) total += inner->counts[k];
      inner->total = total;
      total = 0;
      for (int k = 0; k < right->n; ++k) total += right->counts[k];
      right->total = total;
    }
    return right;
  }

  void EraseRec(Node* node, double score, std::string_view member) {
    if (node->leaf) {
      auto* leaf = static_cast<Leaf*>(node);
      int lo = 0, hi = leaf->n;
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (BlobLess(leaf->items[mid], score, member)) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      std::memmove(leaf->items + lo, leaf->items + lo + 1, sizeof(Blob) * (leaf->n - lo - 1));
      --leaf->n;
      return;
    }
    auto* inner = static_cast<Inner*>(node);
    int i = ChildFor(inner, score, member);
    Node* kid = inner->kids[i];
    EraseRec(kid, score, member);
    --inner->total;
    if (kid->n == 0) {
      RemoveKid(inner, i);
      return;
    }
    Refresh(inner, i);
    if (kid->n < kCapacity / 4) {
      if (i + 1 < inner->n && kid->n + inner->kids[i + 1]->n <= kCapacity) {
        MergeKids(inner, i);
      } else if (i > 0 && kid->n + inner->kids[i - 1]->n <= kCapacity) {
        MergeKids(inner, i - 1);
      }
    }
  }

  // Frees inner->kids[i] (empty or already merged away) and closes the gap.
  void RemoveKid(Inner* inner, int i) {
    Node* kid = inner->kids[i];
    if (kid->leaf) {
      auto* leaf = static_cast<Leaf*>(kid);
      if (leaf->prev != nullptr) leaf->prev->next = leaf->next;
      if (leaf->next != nullptr) leaf->next->prev = leaf->prev;
      delete leaf;
    } else {
      delete static_cast<Inner*>(kid);
    }
    --nodes_;
    int tail = inner->n - i - 1;
    std::memmove(inner->kids + i, inner->kids + i + 1, sizeof(Node*) * tail);
    std::memmove(inner->counts + i, inner->counts + i + 1, sizeof(size_t) * tail);
    std::memmove(inner->firsts + i, inner->firsts + i + 1, sizeof(Blob) * tail);
    --inner->n;
  }

  // Moves everything of kids[i + 1] into kids[i] (same kind, combined size fits) and removes it.
  void MergeKids(Inner* inner, int i) {
    Node* left = inner->kids[i];
    Node* right = inner->kids[i + 1];
    if (left->leaf) {
      auto* l = static_cast<Leaf*>(left);
      auto* r = static_cast<Leaf*>(right);
      std::memcpy(l->items + l->n, r->items, sizeof(Blob) * r->n);
      l->n = static_cast<uint16_t>(l->n + r->n);
      r->n = 0;
    } else {
      auto* l = static_cast<Inner*>(left);
      auto* r = static_cast<Inner*>(right);
      std::memcpy(l->kids + l->n, r->kids, sizeof(Node*) * r->n);
      std::memcpy(l->counts + l->n, r->counts, sizeof(size_t) * r->n);
      std::memcpy(l->firsts + l->n, r->firsts, sizeof(Blob) * r->n);
      l->n = static_cast<uint16_t>(l->n + r->n);
      l->total += r->total;
      r->n = 0;
    }
    RemoveKid(inner, i + 1);
    Refresh(inner, i);
  }

  Node* root_;
  size_t nodes_ = 0;
};

struct MemberHash {
  using is_transparent = void;
  size_t operator()(std::string_view member) const {
    return KeyHash(member, KeyHashSecret::ForProcess());
  }
  size_t operator()(const uint8_t* blob) const { return (*this)(BlobMember(blob)); }
};
struct MemberEq {
  using is_transparent = void;
  static std::string_view M(std::string_view member) { return member; }
  static std::string_view M(const uint8_t* blob) { return BlobMember(blob); }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return M(a) == M(b);
  }
};

}  // namespace

struct ZSet::Large {
  BTree tree;
  absl::flat_hash_set<Blob, MemberHash, MemberEq> index;
  size_t blob_bytes = 0;  // Heap bytes of the blobs (malloc chunks).

  ~Large() {
    for (Blob blob : index) std::free(blob);
  }

  void Insert(double score, std::string_view member) {
    Blob blob = MakeBlob(score, member);
    index.insert(blob);
    tree.Insert(blob);
    blob_bytes += MallocCost(BlobSize(member.size()));
  }

  // Removes and frees the element (which must be present).
  void Erase(Blob blob) {
    std::string_view member = BlobMember(blob);
    tree.Erase(BlobScore(blob), member);
    index.erase(member);
    blob_bytes -= MallocCost(BlobSize(member.size()));
    std::free(blob);
  }
};

ZSet::~ZSet() { delete large_; }

std::string_view ZSet::encoding_name() const { return large_ ? "skiplist" : "listpack"; }

size_t ZSet::size() const { return large_ ? large_->index.size() : listpack_.size() / 2; }

size_t ZSet::MemoryUsage() const {
  if (large_ == nullptr) return sizeof(ZSet) + listpack_.bytes();
  size_t table = large_->index.capacity() * (sizeof(Blob) + 1);
  size_t nodes = large_->tree.nodes() * MallocCost(sizeof(Leaf));
  return sizeof(ZSet) + sizeof(Large) + large_->blob_bytes + table + nodes;
}

std::optional<double> ZSet::CompactScore(std::string_view bytes, std::string_view member) {
  ListpackEntry score;
  if (!DenseListpack::EntriesFindPair(bytes, member, &score)) return std::nullopt;
  return DecodeScore(score);
}

std::unique_ptr<ZSet> ZSet::FromListpack(std::string_view bytes) {
  auto zset = std::make_unique<ZSet>();
  zset->listpack_ = DenseListpack::FromEntries(bytes);
  return zset;
}

Object* ZSet::Clone() const {
  auto* copy = new ZSet();
  if (large_ == nullptr) {
    copy->listpack_ = listpack_.Clone();
    return copy;
  }
  copy->large_ = new Large();
  copy->large_->index.reserve(large_->index.size());
  large_->tree.ForEach(
      [&](const uint8_t* blob) { copy->large_->Insert(BlobScore(blob), BlobMember(blob)); });
  return copy;
}

void ZSet::ForEachElement(absl::FunctionRef<void(std::string_view)> fn) const {
  Visit(0, size(), false, [&](std::string_view member, double) { fn(member); });
}

void ZSet::ConvertToSkiplist() {
  if (large_ != nullptr) return;
  auto* large = new Large();
  large->index.reserve(size());
  std::string scratch;
  for (DenseListpack::Pos pos = listpack_.First(); pos != DenseListpack::kEnd;) {
    ListpackEntry member = listpack_.Get(pos);
    DenseListpack::Pos score_pos = listpack_.Next(pos);
    large->Insert(DecodeScore(listpack_.Get(score_pos)), EntryMember(member, &scratch));
    pos = listpack_.Next(score_pos);
  }
  listpack_.Clear();
  large_ = large;
}

DenseListpack::Pos ZSet::ListpackFind(std::string_view member, double* score) const {
  DenseListpack::Pos pos = listpack_.Find(member, listpack_.First(), /*skip=*/1);
  if (pos != DenseListpack::kEnd && score != nullptr) {
    *score = DecodeScore(listpack_.Get(listpack_.Next(pos)));
  }
  return pos;
}

void ZSet::ListpackInsert(std::string_view member, double score) {
  std::string scratch;
  DenseListpack::Pos pos = listpack_.First();
  while (pos != DenseListpack::kEnd) {
    DenseListpack::Pos score_pos = listpack_.Next(pos);
    double current = DecodeScore(listpack_.Get(score_pos));
    if (current > score ||
        (current == score && EntryMember(listpack_.Get(pos), &scratch) > member)) {
      break;
    }
    pos = listpack_.Next(score_pos);
  }
  DenseListpack::Pos member_pos = listpack_.Insert(pos, member);
  InsertScore(listpack_, listpack_.Next(member_pos), score);
}

ZAddOutcome ZSet::Add(std::string_view member, double score, const ZAddFlags& flags,
                      const CollectionLimits& limits, double* new_score) {
  std::optional<double> current = Score(member);
  if (current.has_value()) {
    if (flags.nx) return ZAddOutcome::kSkipped;
    if (flags.incr) {
      score += *current;
      if (std::isnan(score)) return ZAddOutcome::kNan;
    }
    if ((flags.lt && score >= *current) || (flags.gt && score <= *current)) {
      return ZAddOutcome::kSkipped;
    }
    *new_score = score;  // As computed (-0 stays -0 here even where the listpack stores 0).
    if (score == *current) return ZAddOutcome::kUnchanged;
    if (large_ == nullptr) {
      // Remove and re-insert at the new position.
      DenseListpack::Pos pos = ListpackFind(member, nullptr);
      std::string saved(member);
      listpack_.Erase(pos, 2);
      ListpackInsert(saved, score);
    } else {
      auto it = large_->index.find(member);
      Blob blob = *it;
      large_->tree.Erase(*current, member);
      SetBlobScore(blob, score);
      large_->tree.Insert(blob);
    }
    return ZAddOutcome::kUpdated;
  }
  if (flags.xx) return ZAddOutcome::kSkipped;
  if (large_ == nullptr && (static_cast<int64_t>(size()) + 1 > limits.zset_max_listpack_entries ||
                            static_cast<int64_t>(member.size()) > limits.zset_max_listpack_value)) {
    ConvertToSkiplist();
  }
  if (large_ == nullptr) {
    ListpackInsert(member, score);
  } else {
    large_->Insert(score, member);
  }
  *new_score = score;
  return ZAddOutcome::kAdded;
}

std::optional<double> ZSet::Score(std::string_view member) const {
  if (large_ == nullptr) {
    double score;
    if (ListpackFind(member, &score) == DenseListpack::kEnd) return std::nullopt;
    return score;
  }
  auto it = large_->index.find(member);
  if (it == large_->index.end()) return std::nullopt;
  return BlobScore(*it);
}

size_t ZSet::LowerBound(absl::FunctionRef<bool(std::string_view, double)> pred) const {
  if (large_ == nullptr) {
    std::string scratch;
    size_t rank = 0;
    for (DenseListpack::Pos pos = listpack_.First(); pos != DenseListpack::kEnd; ++rank) {
      DenseListpack::Pos score_pos = listpack_.Next(pos);
      if (pred(EntryMember(listpack_.Get(pos), &scratch), DecodeScore(listpack_.Get(score_pos)))) {
        return rank;
      }
      pos = listpack_.Next(score_pos);
    }
    return rank;
  }
  return large_->tree.LowerBound(
      [&](const uint8_t* blob) { return pred(BlobMember(blob), BlobScore(blob)); });
}

std::optional<size_t> ZSet::Rank(std::string_view member, bool reverse) const {
  std::optional<double> score = Score(member);
  if (!score.has_value()) return std::nullopt;
  double key_score = *score;
  size_t rank =
      LowerBound([&](std::string_view m, double s) { return !KeyLess(s, m, key_score, member); });
  return reverse ? size() - 1 - rank : rank;
}

bool ZSet::Remove(std::string_view member) {
  if (large_ == nullptr) {
    DenseListpack::Pos pos = ListpackFind(member, nullptr);
    if (pos == DenseListpack::kEnd) return false;
    listpack_.Erase(pos, 2);
    return true;
  }
  auto it = large_->index.find(member);
  if (it == large_->index.end()) return false;
  large_->Erase(*it);
  return true;
}

bool ScoreAboveMin(double score, const ZScoreRange& range) {
  return range.min_exclusive ? score > range.min : score >= range.min;
}
bool ScoreBelowMax(double score, const ZScoreRange& range) {
  return range.max_exclusive ? score < range.max : score <= range.max;
}
bool MemberAboveMin(std::string_view member, const ZLexRange& range) {
  switch (range.min_kind) {
    case ZLexRange::Kind::kNegInf:
      return true;
    case ZLexRange::Kind::kPosInf:
      return false;
    case ZLexRange::Kind::kInclusive:
      return member >= std::string_view(range.min);
    case ZLexRange::Kind::kExclusive:
      return member > std::string_view(range.min);
  }
  return false;
}
bool MemberBelowMax(std::string_view member, const ZLexRange& range) {
  switch (range.max_kind) {
    case ZLexRange::Kind::kNegInf:
      return false;
    case ZLexRange::Kind::kPosInf:
      return true;
    case ZLexRange::Kind::kInclusive:
      return member <= std::string_view(range.max);
    case ZLexRange::Kind::kExclusive:
      return member < std::string_view(range.max);
  }
  return false;
}

std::pair<size_t, size_t> ZSet::ScoreSpan(const ZScoreRange& range) const {
  size_t begin = LowerBound([&](std::string_view, double s) { return ScoreAboveMin(s, range); });
  size_t end = LowerBound([&](std::string_view, double s) { return !ScoreBelowMax(s, range); });
  return {begin, std::max(begin, end)};
}

std::pair<size_t, size_t> ZSet::LexSpan(const ZLexRange& range) const {
  size_t begin = LowerBound([&](std::string_view m, double) { return MemberAboveMin(m, range); });
  size_t end = LowerBound([&](std::string_view m, double) { return !MemberBelowMax(m, range); });
  return {begin, std::max(begin, end)};
}

void ZSet::Visit(size_t begin, size_t end, bool reverse,
                 absl::FunctionRef<void(std::string_view, double)> fn) const {
  end = std::min(end, size());
  if (begin >= end) return;
  size_t count = end - begin;
  if (large_ == nullptr) {
    std::string scratch;
    if (!reverse) {
      DenseListpack::Pos pos = listpack_.Seek(static_cast<int64_t>(2 * begin));
      for (size_t i = 0; i < count; ++i) {
        DenseListpack::Pos score_pos = listpack_.Next(pos);
        fn(EntryMember(listpack_.Get(pos), &scratch), DecodeScore(listpack_.Get(score_pos)));
        pos = listpack_.Next(score_pos);
      }
    } else {
      // Entries have no backlen: find the span's members walking forwards, then visit them
      // backwards.
      std::vector<DenseListpack::Pos> members;
      members.reserve(count);
      DenseListpack::Pos pos = listpack_.Seek(static_cast<int64_t>(2 * begin));
      for (size_t i = 0; i < count; ++i) {
        members.push_back(pos);
        pos = listpack_.Next(listpack_.Next(pos));
      }
      for (size_t i = count; i-- > 0;) {
        DenseListpack::Pos score_pos = listpack_.Next(members[i]);
        fn(EntryMember(listpack_.Get(members[i]), &scratch), DecodeScore(listpack_.Get(score_pos)));
      }
    }
    return;
  }
  auto [leaf, index] = large_->tree.Seek(reverse ? end - 1 : begin);
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* blob = leaf->items[index];
    fn(BlobMember(blob), BlobScore(blob));
    if (!reverse) {
      if (++index == leaf->n) {
        leaf = leaf->next;
        index = 0;
      }
    } else if (--index < 0) {
      leaf = leaf->prev;
      if (leaf != nullptr) index = leaf->n - 1;
    }
  }
}

ZElement ZSet::At(size_t rank) const {
  ZElement element;
  Visit(rank, rank + 1, false, [&](std::string_view member, double score) {
    element.member.assign(member);
    element.score = score;
  });
  return element;
}

size_t ZSet::EraseSpan(size_t begin, size_t end) {
  end = std::min(end, size());
  if (begin >= end) return 0;
  size_t count = end - begin;
  if (large_ == nullptr) {
    listpack_.Erase(listpack_.Seek(static_cast<int64_t>(2 * begin)), 2 * count);
    return count;
  }
  std::vector<Blob> doomed;
  doomed.reserve(count);
  auto [leaf, index] = large_->tree.Seek(begin);
  for (size_t i = 0; i < count; ++i) {
    doomed.push_back(leaf->items[index]);
    if (++index == leaf->n) {
      leaf = leaf->next;
      index = 0;
    }
  }
  for (Blob blob : doomed) large_->Erase(blob);
  return count;
}

namespace {
// Scores as unsigned integers in the same order (NaN never occurs): the ZSCAN cursor.
uint64_t OrderedBits(double score) {
  uint64_t bits;
  std::memcpy(&bits, &score, sizeof(bits));
  return (bits >> 63) ? ~bits : bits | (uint64_t{1} << 63);
}
double FromOrderedBits(uint64_t ordered) {
  uint64_t bits = (ordered >> 63) ? ordered & ~(uint64_t{1} << 63) : ~ordered;
  double score;
  std::memcpy(&score, &bits, sizeof(score));
  return score;
}
}  // namespace

uint64_t ZSet::Scan(uint64_t cursor, size_t count,
                    absl::FunctionRef<void(std::string_view, double)> fn) const {
  if (large_ == nullptr) {
    Visit(0, size(), false, fn);
    return 0;
  }
  size_t begin = 0;
  if (cursor != 0) {
    double from = FromOrderedBits(cursor);
    if (std::isnan(from)) return 0;
    begin = LowerBound([&](std::string_view, double s) { return s >= from; });
  }
  size_t total = size();
  if (begin >= total) return 0;
  size_t end = std::min(total, begin + std::max<size_t>(count, 1));
  // Extend to every element sharing the last score, so the cursor (a score) moves past them.
  double last = At(end - 1).score;
  end = LowerBound([&](std::string_view, double s) { return s > last; });
  Visit(begin, end, false, fn);
  if (end >= total) return 0;
  return OrderedBits(At(end).score);
}

}  // namespace gigakv
