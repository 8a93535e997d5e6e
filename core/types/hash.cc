#include "core/types/hash.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/open_addressing.h"
#include "core/varint.h"
#include "gigakv/key_hash.h"

namespace gigakv {
namespace {

// Slots beyond `capacity` home slots that probes may run into before the table must grow.
size_t TailFor(size_t capacity) { return 4 + capacity / 32; }

constexpr size_t kMinCapacity = 4;
// Listpacks stay well below the u32 total_bytes limit (Redis converts past 1 GiB too).
constexpr size_t kListpackSafeBytes = size_t{1} << 30;

uint64_t HashField(std::string_view field) { return KeyHash(field, KeyHashSecret::ForProcess()); }
uint32_t FingerprintOf(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }
uint64_t TagOf(uint64_t hash) { return (hash & 0xffff) << 48; }

struct Pair {
  std::string_view field;
  std::string_view value;
  size_t bytes;  // Blob size.
};

Pair ReadBlob(const uint8_t* blob) {
  uint64_t field_len, value_len;
  const uint8_t* p = varint::Get(varint::Get(blob, &field_len), &value_len);
  const char* chars = reinterpret_cast<const char*>(p);
  return Pair{std::string_view(chars, field_len), std::string_view(chars + field_len, value_len),
              static_cast<size_t>(p - blob) + field_len + value_len};
}

std::string_view FieldOfBlob(const uint8_t* blob) { return ReadBlob(blob).field; }

uint8_t* NewBlob(std::string_view field, std::string_view value, size_t* bytes) {
  size_t size =
      varint::Size(field.size()) + varint::Size(value.size()) + field.size() + value.size();
  auto* blob = static_cast<uint8_t*>(std::malloc(size));
  if (blob == nullptr) throw std::bad_alloc();
  uint8_t* p = varint::Put(varint::Put(blob, field.size()), value.size());
  if (!field.empty()) std::memcpy(p, field.data(), field.size());
  if (!value.empty()) std::memcpy(p + field.size(), value.data(), value.size());
  *bytes = size;
  return blob;
}

// What glibc malloc takes for a request of `bytes`: 8 bytes of header, 16-byte granularity,
// 32 bytes at least. An estimate for memory accounting only.
size_t ChunkSize(size_t bytes) { return std::max<size_t>(32, (bytes + 8 + 15) & ~size_t{15}); }

uint8_t* BlobOf(uint64_t slot) {
  return reinterpret_cast<uint8_t*>(slot & ((uint64_t{1} << 48) - 1));
}

uint64_t MakeSlot(uint64_t hash, const uint8_t* blob) {
  auto address = reinterpret_cast<uint64_t>(blob);
  // User-space addresses fit in 48 bits on x86-64 and AArch64 (4-level page tables), which is
  // what lets the tag share the word.
  if ((address >> 48) != 0) std::abort();
  return TagOf(hash) | address;
}

// HashTable's slot array as open_addressing sees it: `capacity` home slots plus an overflow tail,
// no wrap-around. Slots store no fingerprint: FingerprintAt rehashes the field.
class PairSlots {
 public:
  static constexpr bool kWraps = false;

  PairSlots(uint64_t* slots, size_t capacity, size_t length)
      : slots_(slots), capacity_(capacity), length_(length) {}

  size_t capacity() const { return capacity_; }
  size_t length() const { return length_; }
  bool IsFree(size_t pos) const { return slots_[pos] == 0; }
  uint32_t FingerprintAt(size_t pos) const {
    return FingerprintOf(HashField(FieldOfBlob(BlobOf(slots_[pos]))));
  }
  void Move(size_t from, size_t to) { slots_[to] = slots_[from]; }
  void Free(size_t pos) { slots_[pos] = 0; }

 protected:
  uint64_t* slots_;
  size_t capacity_;
  size_t length_;
};

// PairSlots for Scan: FingerprintAt keeps the pair it decoded, so the walk's emit (called right
// after it for the same slot) reads no blob twice.
class ScanPairSlots : public PairSlots {
 public:
  using PairSlots::PairSlots;

  uint32_t FingerprintAt(size_t pos) const {
    last_ = ReadBlob(BlobOf(slots_[pos]));
    return FingerprintOf(HashField(last_.field));
  }
  const Pair& last() const { return last_; }

 private:
  mutable Pair last_;
};

// Iterates a listpack's field/value pairs, converting integer entries to text.
template <typename Fn>
void ForEachListpackPair(const DenseListpack& lp, Fn&& fn) {
  std::string field_scratch, value_scratch;
  for (DenseListpack::Pos pos = lp.First(); pos != DenseListpack::kEnd;) {
    DenseListpack::Pos value_pos = lp.Next(pos);
    std::string_view field = lp.Get(pos).View(&field_scratch);
    std::string_view value = lp.Get(value_pos).View(&value_scratch);
    fn(field, value, pos);
    pos = lp.Next(value_pos);
  }
}

}  // namespace

// --- HashTable ---------------------------------------------------------------------------------

HashTable::~HashTable() {
  for (size_t i = 0; i < length_; ++i) {
    if (slots_[i] != 0) std::free(BlobOf(slots_[i]));
  }
  std::free(slots_);
}

std::unique_ptr<HashTable> HashTable::Clone() const {
  auto copy = std::make_unique<HashTable>();
  if (length_ == 0) return copy;
  copy->slots_ = static_cast<uint64_t*>(std::calloc(length_, sizeof(uint64_t)));
  if (copy->slots_ == nullptr) throw std::bad_alloc();
  copy->capacity_ = capacity_;
  copy->length_ = length_;
  for (size_t i = 0; i < length_; ++i) {
    if (slots_[i] == 0) continue;
    const uint8_t* blob = BlobOf(slots_[i]);
    size_t bytes = ReadBlob(blob).bytes;
    auto* duplicate = static_cast<uint8_t*>(std::malloc(bytes));
    if (duplicate == nullptr) throw std::bad_alloc();
    std::memcpy(duplicate, blob, bytes);
    // Same hash, same position: keep the tag, swap the pointer.
    copy->slots_[i] = (slots_[i] & ~kPointerMask) | reinterpret_cast<uint64_t>(duplicate);
    copy->blob_bytes_ += ChunkSize(bytes);
    ++copy->size_;
  }
  return copy;
}

size_t HashTable::MemoryUsage() const {
  return sizeof(HashTable) + (length_ == 0 ? 0 : ChunkSize(length_ * sizeof(uint64_t))) +
         blob_bytes_;
}

size_t HashTable::FindSlot(std::string_view field, uint64_t hash) const {
  if (size_ == 0) return open_addressing::kNotFound;
  const uint64_t tag = TagOf(hash);
  return open_addressing::Find(
      PairSlots(slots_, capacity_, length_), open_addressing::Home(FingerprintOf(hash), capacity_),
      [&](size_t pos) { return (slots_[pos] & ~kPointerMask) == tag; },
      [&](size_t pos) { return FieldOfBlob(BlobOf(slots_[pos])) == field; });
}

std::optional<std::string_view> HashTable::Find(std::string_view field) const {
  size_t pos = FindSlot(field, HashField(field));
  if (pos == open_addressing::kNotFound) return std::nullopt;
  return ReadBlob(BlobOf(slots_[pos])).value;
}

bool HashTable::Place(uint64_t hash, uint8_t* blob) {
  size_t pos = open_addressing::FindFree(PairSlots(slots_, capacity_, length_),
                                         open_addressing::Home(FingerprintOf(hash), capacity_));
  if (pos == open_addressing::kNotFound) return false;
  slots_[pos] = MakeSlot(hash, blob);
  return true;
}

void HashTable::Rebuild(size_t capacity) {
  capacity = std::max(capacity, kMinCapacity);
  while (true) {
    size_t length = capacity + TailFor(capacity);
    auto* fresh = static_cast<uint64_t*>(std::calloc(length, sizeof(uint64_t)));
    if (fresh == nullptr) throw std::bad_alloc();
    uint64_t* old = slots_;
    size_t old_length = length_;
    slots_ = fresh;
    capacity_ = capacity;
    length_ = length;
    bool placed_all = true;
    for (size_t i = 0; i < old_length && placed_all; ++i) {
      if (old[i] == 0) continue;
      uint8_t* blob = BlobOf(old[i]);
      placed_all = Place(HashField(FieldOfBlob(blob)), blob);
    }
    if (placed_all) {
      std::free(old);
      return;
    }
    // A probe ran past the tail (very unlikely): retry larger, from the old array.
    std::free(fresh);
    slots_ = old;
    length_ = old_length;
    capacity = capacity + capacity / 2;
  }
}

void HashTable::MaybeGrowFor(size_t entries) {
  if (entries * 5 <= capacity_ * 4) return;
  Rebuild(std::max(capacity_ + capacity_ / 2, entries * 5 / 4 + 1));
}

void HashTable::Reserve(size_t entries) { MaybeGrowFor(entries); }

void HashTable::InsertNew(std::string_view field, std::string_view value) {
  InsertNewHashed(field, value, HashField(field));
}

void HashTable::InsertNewHashed(std::string_view field, std::string_view value, uint64_t hash) {
  MaybeGrowFor(size_ + 1);
  size_t bytes;
  uint8_t* blob = NewBlob(field, value, &bytes);
  while (!Place(hash, blob)) Rebuild(capacity_ + capacity_ / 2);
  blob_bytes_ += ChunkSize(bytes);
  ++size_;
}

bool HashTable::Set(std::string_view field, std::string_view value) {
  uint64_t hash = HashField(field);
  size_t pos = FindSlot(field, hash);
  if (pos == open_addressing::kNotFound) {
    InsertNewHashed(field, value, hash);
    return true;
  }
  uint8_t* old = BlobOf(slots_[pos]);
  size_t bytes;
  // The new blob is built before the old one is freed: `field` or `value` may point into it.
  uint8_t* blob = NewBlob(field, value, &bytes);
  blob_bytes_ -= ChunkSize(ReadBlob(old).bytes);
  blob_bytes_ += ChunkSize(bytes);
  std::free(old);
  slots_[pos] = MakeSlot(hash, blob);
  return false;
}

bool HashTable::Erase(std::string_view field) {
  size_t pos = FindSlot(field, HashField(field));
  if (pos == open_addressing::kNotFound) return false;
  uint8_t* blob = BlobOf(slots_[pos]);
  blob_bytes_ -= ChunkSize(ReadBlob(blob).bytes);
  std::free(blob);
  PairSlots slots(slots_, capacity_, length_);
  open_addressing::Erase(slots, pos);
  --size_;
  if (size_ == 0) {
    std::free(slots_);
    slots_ = nullptr;
    capacity_ = length_ = 0;
  } else if (capacity_ > kMinCapacity && size_ * 8 < capacity_) {
    Rebuild(size_ * 2);
  }
  return true;
}

void HashTable::ForEach(PairFn fn) const {
  for (size_t i = 0; i < length_; ++i) {
    if (slots_[i] == 0) continue;
    Pair pair = ReadBlob(BlobOf(slots_[i]));
    fn(pair.field, pair.value);
  }
}

uint64_t HashTable::Scan(uint64_t cursor, size_t count, PairFn fn) const {
  if (size_ == 0) return 0;
  const ScanPairSlots slots(slots_, capacity_, length_);
  uint64_t next = open_addressing::Scan(
      slots, cursor, count, [&](size_t) { fn(slots.last().field, slots.last().value); });
  return next == open_addressing::kScanEnd ? 0 : next;
}

size_t HashTable::RandomPair(std::mt19937_64& rng, PairFn fn) const {
  std::uniform_int_distribution<size_t> pick(0, length_ - 1);
  while (true) {
    size_t pos = pick(rng);
    if (slots_[pos] == 0) continue;
    PairAt(pos, fn);
    return pos;
  }
}

void HashTable::PairAt(size_t slot, PairFn fn) const {
  Pair pair = ReadBlob(BlobOf(slots_[slot]));
  fn(pair.field, pair.value);
}

// --- Hash --------------------------------------------------------------------------------------

Hash::Hash() = default;
Hash::~Hash() = default;

std::string_view Hash::encoding_name() const {
  return table_ == nullptr ? "listpack" : "hashtable";
}

size_t Hash::MemoryUsage() const {
  return sizeof(Hash) + (table_ == nullptr ? listpack_.bytes() : table_->MemoryUsage());
}

size_t Hash::Length() const { return table_ == nullptr ? listpack_.size() / 2 : table_->size(); }

bool Hash::CompactHasValue(std::string_view bytes, std::string_view field, std::string_view value) {
  ListpackEntry current;
  return DenseListpack::EntriesFindPair(bytes, field, &current) && current.Equals(value);
}

std::unique_ptr<Hash> Hash::FromListpack(std::string_view bytes) {
  auto hash = std::make_unique<Hash>();
  hash->listpack_ = DenseListpack::FromEntries(bytes);
  return hash;
}

Object* Hash::Clone() const {
  auto* copy = new Hash();
  if (table_ == nullptr) {
    copy->listpack_ = listpack_.Clone();
  } else {
    copy->table_ = table_->Clone();
  }
  return copy;
}

void Hash::ForEachElement(absl::FunctionRef<void(std::string_view)> fn) const {
  ForEach([&](std::string_view field, std::string_view) { fn(field); });
}

void Hash::ConvertToTable() {
  if (table_ != nullptr) return;
  auto table = std::make_unique<HashTable>();
  table->Reserve(listpack_.size() / 2);
  ForEachListpackPair(listpack_, [&](std::string_view field, std::string_view value,
                                     DenseListpack::Pos) { table->InsertNew(field, value); });
  listpack_.Clear();
  table_ = std::move(table);
}

void Hash::ConvertToTableFor(size_t fields) {
  ConvertToTable();
  table_->Reserve(fields);
}

void Hash::ConvertIfTooLong(std::string_view text, const CollectionLimits& limits) {
  if (table_ == nullptr && static_cast<int64_t>(text.size()) > limits.hash_max_listpack_value) {
    ConvertToTable();
  }
}

bool Hash::Set(std::string_view field, std::string_view value, const CollectionLimits& limits) {
  if (table_ == nullptr) {
    ConvertIfTooLong(field, limits);
    ConvertIfTooLong(value, limits);
    if (table_ == nullptr &&
        listpack_.bytes() + field.size() + value.size() + 32 > kListpackSafeBytes) {
      ConvertToTable();
    }
  }
  if (table_ != nullptr) return table_->Set(field, value);
  DenseListpack::Pos pos = listpack_.Find(field, listpack_.First(), 1);
  bool added = pos == DenseListpack::kEnd;
  if (added) {
    listpack_.Append(field);
    listpack_.Append(value);
  } else {
    listpack_.Replace(listpack_.Next(pos), value);
  }
  // As Redis's hashTypeSet, after an update too: hash-max-listpack-entries may have been
  // lowered since the hash was built.
  if (static_cast<int64_t>(listpack_.size() / 2) > limits.hash_max_listpack_entries) {
    ConvertToTable();
  }
  return added;
}

bool Hash::SetIfAbsent(std::string_view field, std::string_view value,
                       const CollectionLimits& limits) {
  if (Contains(field)) return false;
  Set(field, value, limits);
  return true;
}

std::optional<std::string_view> Hash::Get(std::string_view field, std::string* scratch) const {
  if (table_ != nullptr) return table_->Find(field);
  DenseListpack::Pos pos = listpack_.Find(field, listpack_.First(), 1);
  if (pos == DenseListpack::kEnd) return std::nullopt;
  return listpack_.Get(listpack_.Next(pos)).View(scratch);
}

bool Hash::Contains(std::string_view field) const {
  if (table_ != nullptr) return table_->Find(field).has_value();
  return listpack_.Find(field, listpack_.First(), 1) != DenseListpack::kEnd;
}

size_t Hash::ValueLength(std::string_view field) const {
  if (table_ != nullptr) {
    auto value = table_->Find(field);
    return value ? value->size() : 0;
  }
  DenseListpack::Pos pos = listpack_.Find(field, listpack_.First(), 1);
  return pos == DenseListpack::kEnd ? 0 : listpack_.Get(listpack_.Next(pos)).Length();
}

bool Hash::Delete(std::string_view field) {
  if (table_ != nullptr) return table_->Erase(field);
  DenseListpack::Pos pos = listpack_.Find(field, listpack_.First(), 1);
  if (pos == DenseListpack::kEnd) return false;
  listpack_.Erase(pos, 2);
  return true;
}

void Hash::ForEach(PairFn fn) const {
  if (table_ != nullptr) {
    table_->ForEach(fn);
    return;
  }
  ForEachListpackPair(listpack_, [&](std::string_view field, std::string_view value,
                                     DenseListpack::Pos) { fn(field, value); });
}

uint64_t Hash::Scan(uint64_t cursor, size_t count, PairFn fn) const {
  if (table_ != nullptr) return table_->Scan(cursor, count, fn);
  ForEach(fn);
  return 0;
}

void Hash::RandomPairs(uint64_t count, bool distinct, std::mt19937_64& rng, PairFn fn) const {
  size_t size = Length();
  if (count == 0 || size == 0) return;
  if (distinct && count >= size) {
    ForEach(fn);
    return;
  }
  if (table_ == nullptr) {
    // Positions of the fields, then picks by index.
    std::vector<DenseListpack::Pos> fields;
    fields.reserve(size);
    ForEachListpackPair(listpack_, [&](std::string_view, std::string_view, DenseListpack::Pos pos) {
      fields.push_back(pos);
    });
    std::string field_scratch, value_scratch;
    auto emit = [&](DenseListpack::Pos pos) {
      std::string_view field = listpack_.Get(pos).View(&field_scratch);
      fn(field, listpack_.Get(listpack_.Next(pos)).View(&value_scratch));
    };
    if (!distinct) {
      std::uniform_int_distribution<size_t> pick(0, size - 1);
      for (uint64_t i = 0; i < count; ++i) emit(fields[pick(rng)]);
      return;
    }
    // Selection sampling (Knuth's algorithm S): `count` distinct fields in listpack order.
    uint64_t needed = count;
    for (size_t i = 0; i < size && needed > 0; ++i) {
      std::uniform_int_distribution<size_t> pick(0, size - i - 1);
      if (pick(rng) < needed) {
        emit(fields[i]);
        --needed;
      }
    }
    return;
  }
  if (!distinct) {
    for (uint64_t i = 0; i < count; ++i) table_->RandomPair(rng, fn);
    return;
  }
  if (count * 3 > size) {
    // A large share of the hash: one pass of selection sampling.
    uint64_t needed = count;
    size_t remaining = size;
    table_->ForEach([&](std::string_view field, std::string_view value) {
      if (needed == 0) return;
      std::uniform_int_distribution<size_t> pick(0, remaining - 1);
      --remaining;
      if (pick(rng) < needed) {
        fn(field, value);
        --needed;
      }
    });
    return;
  }
  // A small share: random picks, skipping repeats; a third of the hash at most, so each pick is
  // new with probability above 2/3.
  absl::flat_hash_set<size_t> chosen;
  chosen.reserve(count);
  auto ignore = [](std::string_view, std::string_view) {};
  while (chosen.size() < count) {
    size_t slot = table_->RandomPair(rng, ignore);
    if (chosen.insert(slot).second) table_->PairAt(slot, fn);
  }
}

}  // namespace gigakv
