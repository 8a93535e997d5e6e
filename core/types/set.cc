#include "core/types/set.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <new>
#include <numeric>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/open_addressing.h"
#include "core/varint.h"
#include "gigakv/key_hash.h"

namespace gigakv {
namespace {

using open_addressing::OffsetSlots;
static_assert(SetHashTable::kScanEnd == open_addressing::kScanEnd);

void* Allocate(void* old, size_t size) {
  void* grown = std::realloc(old, size);
  if (grown == nullptr) throw std::bad_alloc();
  return grown;
}

// Decimal text of an int64 into `buf` (at least 20 bytes).
std::string_view FormatInt(int64_t value, char* buf, size_t size) {
  auto result = std::to_chars(buf, buf + size, value);
  return std::string_view(buf, static_cast<size_t>(result.ptr - buf));
}

// Digits (and sign) of an int64's decimal text.
size_t DecimalLength(int64_t value) {
  char buf[24];
  return FormatInt(value, buf, sizeof(buf)).size();
}

constexpr size_t kIntBuf = 24;

}  // namespace

bool ParseCanonicalInt64(std::string_view text, int64_t* value) {
  if (text.empty() || text.size() > 20) return false;
  size_t digits_start = text[0] == '-' ? 1 : 0;
  if (digits_start == text.size()) return false;
  char first = text[digits_start];
  if (first < '0' || first > '9') return false;
  if (first == '0' && (text.size() > 1)) return false;  // Leading zero, or "-0".
  auto result = std::from_chars(text.data(), text.data() + text.size(), *value);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

// --- SetHashTable -----------------------------------------------------------------------------

SetHashTable::SetHashTable(size_t expected) {
  if (expected > 0) Resize(std::max<size_t>(8, expected * 2));
}

SetHashTable::~SetHashTable() {
  std::free(slots_);
  std::free(arena_);
}

std::unique_ptr<SetHashTable> SetHashTable::Clone() const {
  auto copy = std::make_unique<SetHashTable>();
  if (capacity_ > 0) {
    copy->slots_ = static_cast<uint64_t*>(Allocate(nullptr, capacity_ * sizeof(uint64_t)));
    std::memcpy(copy->slots_, slots_, capacity_ * sizeof(uint64_t));
  }
  if (arena_capacity_ > 0) {
    copy->arena_ = static_cast<uint8_t*>(Allocate(nullptr, arena_capacity_));
    std::memcpy(copy->arena_, arena_, arena_used_);
  }
  copy->capacity_ = capacity_;
  copy->size_ = size_;
  copy->arena_used_ = arena_used_;
  copy->arena_capacity_ = arena_capacity_;
  copy->dead_bytes_ = dead_bytes_;
  return copy;
}

uint32_t SetHashTable::Fingerprint(std::string_view member) {
  return static_cast<uint32_t>(KeyHash(member, KeyHashSecret::ForProcess()) >> 32);
}

size_t SetHashTable::EntrySize(size_t length) { return varint::Size(length) + length; }

std::string_view SetHashTable::EntryAt(uint64_t slot_value) const {
  const uint8_t* p = arena_ + OffsetSlots::OffsetOf(slot_value);
  uint64_t length;
  p = varint::Get(p, &length);
  return std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(length));
}

uint32_t SetHashTable::AppendEntry(std::string_view member) {
  size_t need = EntrySize(member.size());
  if (arena_used_ + need > UINT32_MAX - 1) throw std::bad_alloc();
  if (arena_used_ + need > arena_capacity_) {
    size_t grown = std::max<size_t>(64, (arena_used_ + need) + (arena_used_ + need) / 2);
    arena_ = static_cast<uint8_t*>(Allocate(arena_, grown));
    arena_capacity_ = grown;
  }
  uint32_t offset = static_cast<uint32_t>(arena_used_);
  uint8_t* p = varint::Put(arena_ + arena_used_, member.size());
  if (!member.empty()) std::memcpy(p, member.data(), member.size());
  arena_used_ += need;
  return offset;
}

size_t SetHashTable::Find(std::string_view member, uint32_t fingerprint) const {
  if (capacity_ == 0) return open_addressing::kNotFound;
  return OffsetSlots(slots_, capacity_).Find(fingerprint, [&](uint64_t value) {
    return EntryAt(value) == member;
  });
}

bool SetHashTable::Contains(std::string_view member) const {
  return Find(member, Fingerprint(member)) != open_addressing::kNotFound;
}

void SetHashTable::Resize(size_t new_capacity) {
  uint64_t* old = slots_;
  size_t old_capacity = capacity_;
  slots_ = static_cast<uint64_t*>(Allocate(nullptr, new_capacity * sizeof(uint64_t)));
  std::memset(slots_, 0, new_capacity * sizeof(uint64_t));
  capacity_ = new_capacity;
  OffsetSlots(slots_, capacity_).InsertAll(old, old_capacity);
  std::free(old);
}

bool SetHashTable::Insert(std::string_view member) {
  uint32_t fingerprint = Fingerprint(member);
  if (Find(member, fingerprint) != open_addressing::kNotFound) return false;
  if ((size_ + 1) * 5 > capacity_ * 4) Resize(std::max<size_t>(8, (size_ + 1) * 2));
  uint32_t offset = AppendEntry(member);
  OffsetSlots(slots_, capacity_).Insert(OffsetSlots::MakeWord(fingerprint, offset));
  ++size_;
  return true;
}

bool SetHashTable::Erase(std::string_view member) {
  size_t pos = Find(member, Fingerprint(member));
  if (pos == open_addressing::kNotFound) return false;
  dead_bytes_ += EntrySize(EntryAt(slots_[pos]).size());
  OffsetSlots slots(slots_, capacity_);
  open_addressing::Erase(slots, pos);
  --size_;
  if (size_ == 0) {
    std::free(slots_);
    std::free(arena_);
    slots_ = nullptr;
    arena_ = nullptr;
    capacity_ = arena_used_ = arena_capacity_ = dead_bytes_ = 0;
    return true;
  }
  if (capacity_ > 8 && size_ * 5 < capacity_) Resize(std::max<size_t>(8, size_ * 2));
  if (dead_bytes_ > 64 && dead_bytes_ * 2 > arena_used_) Compact();
  return true;
}

void SetHashTable::Compact() {
  size_t live = arena_used_ - dead_bytes_;
  size_t new_capacity = std::max<size_t>(64, live + live / 4);
  auto* fresh = static_cast<uint8_t*>(Allocate(nullptr, new_capacity));
  size_t used = 0;
  for (size_t i = 0; i < capacity_; ++i) {
    if (slots_[i] == 0) continue;
    uint32_t offset = OffsetSlots::OffsetOf(slots_[i]);
    std::string_view member = EntryAt(slots_[i]);
    size_t entry = EntrySize(member.size());
    std::memcpy(fresh + used, arena_ + offset, entry);
    slots_[i] = OffsetSlots::WithOffset(slots_[i], used);
    used += entry;
  }
  std::free(arena_);
  arena_ = fresh;
  arena_used_ = used;
  arena_capacity_ = new_capacity;
  dead_bytes_ = 0;
}

std::string_view SetHashTable::RandomMember(uint64_t random) const {
  size_t pos = open_addressing::NextOccupied(OffsetSlots(slots_, capacity_),
                                             static_cast<size_t>(random % capacity_));
  return EntryAt(slots_[pos]);
}

void SetHashTable::ForEach(absl::FunctionRef<void(std::string_view)> fn) const {
  for (size_t i = 0; i < capacity_; ++i) {
    if (slots_[i] != 0) fn(EntryAt(slots_[i]));
  }
}

uint64_t SetHashTable::Scan(uint64_t cursor, size_t count,
                            absl::FunctionRef<void(std::string_view)> fn) const {
  if (size_ == 0) return kScanEnd;
  return open_addressing::Scan(OffsetSlots(slots_, capacity_), cursor, count,
                               [&](size_t pos) { fn(EntryAt(slots_[pos])); });
}

size_t SetHashTable::MemoryUsage() const { return capacity_ * sizeof(uint64_t) + arena_capacity_; }

// --- Set ------------------------------------------------------------------------------------

size_t Set::MaxIntsetEntries(const CollectionLimits& limits) {
  return static_cast<size_t>(std::clamp<int64_t>(limits.set_max_intset_entries, 0, 1 << 30));
}

std::unique_ptr<Set> Set::Create(std::string_view first_member, size_t size_hint,
                                 const CollectionLimits& limits) {
  auto set = std::make_unique<Set>();
  int64_t value;
  if (ParseCanonicalInt64(first_member, &value) && size_hint <= MaxIntsetEntries(limits)) {
    return set;
  }
  if (size_hint <= static_cast<uint64_t>(std::max<int64_t>(0, limits.set_max_listpack_entries))) {
    set->rep_.emplace<DenseListpack>();
  } else {
    set->rep_ = std::make_unique<SetHashTable>(size_hint);
  }
  return set;
}

std::string_view Set::encoding_name() const {
  switch (encoding()) {
    case Encoding::kIntset:
      return "intset";
    case Encoding::kListpack:
      return "listpack";
    case Encoding::kHashtable:
      return "hashtable";
  }
  return "unknown";
}

size_t Set::MemoryUsage() const {
  size_t bytes = sizeof(Set);
  switch (encoding()) {
    case Encoding::kIntset:
      return bytes + std::get<Intset>(rep_).bytes();
    case Encoding::kListpack:
      return bytes + std::get<DenseListpack>(rep_).bytes();
    case Encoding::kHashtable: {
      const SetHashTable& table = *std::get<std::unique_ptr<SetHashTable>>(rep_);
      return bytes + sizeof(SetHashTable) + table.MemoryUsage();
    }
  }
  return bytes;
}

size_t Set::Length() const {
  switch (encoding()) {
    case Encoding::kIntset:
      return std::get<Intset>(rep_).size();
    case Encoding::kListpack:
      return std::get<DenseListpack>(rep_).size();
    case Encoding::kHashtable:
      return std::get<std::unique_ptr<SetHashTable>>(rep_)->size();
  }
  return 0;
}

std::unique_ptr<Set> Set::FromCompact(Encoding encoding, std::string_view bytes) {
  auto set = std::make_unique<Set>();
  if (encoding == Encoding::kListpack) {
    set->rep_ = DenseListpack::FromEntries(bytes);
  } else {
    set->rep_ = Intset::FromBytes(bytes);
  }
  return set;
}

bool Set::CompactContains(Encoding encoding, std::string_view bytes, std::string_view member) {
  if (encoding == Encoding::kListpack) return DenseListpack::EntriesContain(bytes, member);
  int64_t value;
  return ParseCanonicalInt64(member, &value) && Intset::RawContains(bytes, value);
}

std::string_view Set::CompactBytes() const {
  if (const auto* intset = std::get_if<Intset>(&rep_)) return intset->raw();
  if (const auto* listpack = std::get_if<DenseListpack>(&rep_)) return listpack->entries();
  return {};
}

Object* Set::Clone() const {
  auto* copy = new Set();
  switch (encoding()) {
    case Encoding::kIntset:
      copy->rep_ = std::get<Intset>(rep_).Clone();
      break;
    case Encoding::kListpack:
      copy->rep_ = std::get<DenseListpack>(rep_).Clone();
      break;
    case Encoding::kHashtable:
      copy->rep_ = std::get<std::unique_ptr<SetHashTable>>(rep_)->Clone();
      break;
  }
  return copy;
}

void Set::ConvertToHashtable(size_t expected) {
  auto table = std::make_unique<SetHashTable>(expected);
  ForEach([&](std::string_view member) { table->Insert(member); });
  rep_ = std::move(table);
}

void Set::ConvertToListpack() {
  const Intset& ints = std::get<Intset>(rep_);
  DenseListpack lp;
  for (size_t i = 0; i < ints.size(); ++i) lp.InsertInt(DenseListpack::kEnd, ints.Get(i));
  rep_ = std::move(lp);
}

bool Set::Add(std::string_view member, const CollectionLimits& limits) {
  const size_t listpack_entries =
      static_cast<size_t>(std::max<int64_t>(0, limits.set_max_listpack_entries));
  const size_t listpack_value =
      static_cast<size_t>(std::max<int64_t>(0, limits.set_max_listpack_value));
  switch (encoding()) {
    case Encoding::kIntset: {
      Intset& ints = std::get<Intset>(rep_);
      int64_t value;
      if (ParseCanonicalInt64(member, &value)) {
        if (!ints.Add(value)) return false;
        if (ints.size() > MaxIntsetEntries(limits)) ConvertToHashtable(ints.size());
        return true;
      }
      // A non-integer: listpack if the limits allow every member (the new one included).
      size_t n = ints.size();
      size_t longest = n == 0 ? 0 : std::max(DecimalLength(ints.Min()), DecimalLength(ints.Max()));
      if (n < listpack_entries && member.size() <= listpack_value && longest <= listpack_value) {
        ConvertToListpack();
        std::get<DenseListpack>(rep_).Append(member);
      } else {
        ConvertToHashtable(n + 1);
        std::get<std::unique_ptr<SetHashTable>>(rep_)->Insert(member);
      }
      return true;
    }
    case Encoding::kListpack: {
      DenseListpack& lp = std::get<DenseListpack>(rep_);
      if (lp.Find(member, lp.First()) != DenseListpack::kEnd) return false;
      if (lp.size() < listpack_entries && member.size() <= listpack_value) {
        lp.Append(member);
      } else {
        ConvertToHashtable(lp.size() + 1);
        std::get<std::unique_ptr<SetHashTable>>(rep_)->Insert(member);
      }
      return true;
    }
    case Encoding::kHashtable:
      return std::get<std::unique_ptr<SetHashTable>>(rep_)->Insert(member);
  }
  return false;
}

bool Set::Remove(std::string_view member) {
  switch (encoding()) {
    case Encoding::kIntset: {
      int64_t value;
      return ParseCanonicalInt64(member, &value) && std::get<Intset>(rep_).Remove(value);
    }
    case Encoding::kListpack: {
      DenseListpack& lp = std::get<DenseListpack>(rep_);
      DenseListpack::Pos pos = lp.Find(member, lp.First());
      if (pos == DenseListpack::kEnd) return false;
      lp.Erase(pos);
      return true;
    }
    case Encoding::kHashtable:
      return std::get<std::unique_ptr<SetHashTable>>(rep_)->Erase(member);
  }
  return false;
}

bool Set::Contains(std::string_view member) const {
  switch (encoding()) {
    case Encoding::kIntset: {
      int64_t value;
      return ParseCanonicalInt64(member, &value) && std::get<Intset>(rep_).Contains(value);
    }
    case Encoding::kListpack: {
      const DenseListpack& lp = std::get<DenseListpack>(rep_);
      return lp.Find(member, lp.First()) != DenseListpack::kEnd;
    }
    case Encoding::kHashtable:
      return std::get<std::unique_ptr<SetHashTable>>(rep_)->Contains(member);
  }
  return false;
}

void Set::ForEach(absl::FunctionRef<void(std::string_view)> fn) const {
  switch (encoding()) {
    case Encoding::kIntset: {
      const Intset& ints = std::get<Intset>(rep_);
      char buf[kIntBuf];
      for (size_t i = 0; i < ints.size(); ++i) fn(FormatInt(ints.Get(i), buf, sizeof(buf)));
      break;
    }
    case Encoding::kListpack: {
      const DenseListpack& lp = std::get<DenseListpack>(rep_);
      std::string scratch;
      for (DenseListpack::Pos pos = lp.First(); pos != DenseListpack::kEnd; pos = lp.Next(pos)) {
        fn(lp.Get(pos).View(&scratch));
      }
      break;
    }
    case Encoding::kHashtable:
      std::get<std::unique_ptr<SetHashTable>>(rep_)->ForEach(fn);
      break;
  }
}

uint64_t Set::Scan(uint64_t cursor, size_t count,
                   absl::FunctionRef<void(std::string_view)> fn) const {
  if (encoding() != Encoding::kHashtable) {
    ForEach(fn);
    return 0;
  }
  uint64_t next = std::get<std::unique_ptr<SetHashTable>>(rep_)->Scan(cursor, count, fn);
  return next >= SetHashTable::kScanEnd ? 0 : next;
}

size_t Set::RandomCount(int64_t count) const {
  if (count < 0) return static_cast<size_t>(-static_cast<uint64_t>(count));
  return std::min(static_cast<size_t>(count), Length());
}

namespace {

// Random access by index for the compact encodings, through a one-off position table for the
// listpack (O(n) once instead of O(n) per pick).
class IndexedMembers {
 public:
  IndexedMembers(const Intset* ints, const DenseListpack* lp) : ints_(ints), lp_(lp) {
    if (lp_ != nullptr) {
      positions_.reserve(lp_->size());
      for (DenseListpack::Pos pos = lp_->First(); pos != DenseListpack::kEnd;
           pos = lp_->Next(pos)) {
        positions_.push_back(pos);
      }
    }
  }
  size_t size() const { return ints_ != nullptr ? ints_->size() : positions_.size(); }
  std::string_view At(size_t index) {
    if (ints_ != nullptr) return FormatInt(ints_->Get(index), buf_, sizeof(buf_));
    return lp_->Get(positions_[index]).View(&scratch_);
  }

 private:
  const Intset* ints_;
  const DenseListpack* lp_;
  std::vector<DenseListpack::Pos> positions_;
  char buf_[kIntBuf];
  std::string scratch_;
};

}  // namespace

void Set::RandomMembers(int64_t count, std::mt19937_64& rng,
                        absl::FunctionRef<void(std::string_view)> fn) const {
  size_t size = Length();
  if (size == 0 || count == 0) return;
  if (count > 0 && static_cast<size_t>(count) >= size) {
    ForEach(fn);
    return;
  }
  size_t wanted = RandomCount(count);
  if (encoding() == Encoding::kHashtable) {
    const SetHashTable& table = *std::get<std::unique_ptr<SetHashTable>>(rep_);
    if (count < 0) {
      for (size_t i = 0; i < wanted; ++i) fn(table.RandomMember(rng()));
      return;
    }
    if (wanted * 3 > size) {
      // Many of them: a partial shuffle of all members (views stay valid, nothing mutates).
      std::vector<std::string_view> all;
      all.reserve(size);
      table.ForEach([&](std::string_view member) { all.push_back(member); });
      for (size_t i = 0; i < wanted; ++i) {
        std::swap(all[i], all[i + rng() % (size - i)]);
        fn(all[i]);
      }
      return;
    }
    absl::flat_hash_set<std::string_view> chosen;
    chosen.reserve(wanted);
    while (chosen.size() < wanted) {
      std::string_view member = table.RandomMember(rng());
      if (chosen.insert(member).second) fn(member);
    }
    return;
  }
  IndexedMembers members(std::get_if<Intset>(&rep_), std::get_if<DenseListpack>(&rep_));
  if (count < 0) {
    for (size_t i = 0; i < wanted; ++i) fn(members.At(rng() % size));
    return;
  }
  std::vector<uint32_t> order(size);
  std::iota(order.begin(), order.end(), 0);
  for (size_t i = 0; i < wanted; ++i) {
    std::swap(order[i], order[i + rng() % (size - i)]);
    fn(members.At(order[i]));
  }
}

std::string Set::RandomMember(std::mt19937_64& rng) const {
  std::string result;
  RandomMembers(-1, rng, [&](std::string_view member) { result.assign(member); });
  return result;
}

void Set::PopRandom(size_t count, std::mt19937_64& rng,
                    absl::FunctionRef<void(std::string_view)> fn) {
  for (size_t i = 0; i < count; ++i) {
    switch (encoding()) {
      case Encoding::kIntset: {
        Intset& ints = std::get<Intset>(rep_);
        size_t index = rng() % ints.size();
        char buf[kIntBuf];
        fn(FormatInt(ints.Get(index), buf, sizeof(buf)));
        ints.RemoveAt(index);
        break;
      }
      case Encoding::kListpack: {
        DenseListpack& lp = std::get<DenseListpack>(rep_);
        DenseListpack::Pos pos = lp.Seek(static_cast<int64_t>(rng() % lp.size()));
        std::string scratch;
        fn(lp.Get(pos).View(&scratch));
        lp.Erase(pos);
        break;
      }
      case Encoding::kHashtable: {
        SetHashTable& table = *std::get<std::unique_ptr<SetHashTable>>(rep_);
        std::string_view member = table.RandomMember(rng());
        fn(member);
        table.Erase(member);
        break;
      }
    }
  }
}

}  // namespace gigakv
