#include "core/types/listpack.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "gigakv/numbers.h"

namespace gigakv {
namespace {

constexpr size_t kHeaderSize = 8;  // total_bytes:u32 count:u32

uint32_t LoadU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void StoreU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

// Reads a little-endian signed integer of `width` bytes.
int64_t LoadSigned(const uint8_t* p, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  int shift = 64 - 8 * width;
  return static_cast<int64_t>(v << shift) >> shift;
}
void StoreSigned(uint8_t* p, int64_t value, int width) {
  auto v = static_cast<uint64_t>(value);
  for (int i = 0; i < width; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Bytes of the backlen field for an (encoding + payload) of `size` bytes.
size_t BacklenSize(size_t size) {
  size_t n = 1;
  while (size >= 128) {
    size >>= 7;
    ++n;
  }
  return n;
}

// Writes the backlen so that reading backwards from its last byte recovers `size`: the last byte
// holds the lowest 7 bits (high bit set when more bytes precede it).
void WriteBacklen(uint8_t* p, size_t size) {
  size_t n = BacklenSize(size);
  for (size_t i = 0; i < n; ++i) {
    auto bits = static_cast<uint8_t>((size >> (7 * i)) & 0x7f);
    if (i + 1 < n) bits |= 0x80;
    p[n - 1 - i] = bits;
  }
}

// Reads the backlen ending at `last` (inclusive); returns the encoded size, sets *backlen_size.
size_t ReadBacklen(const uint8_t* last, size_t* backlen_size) {
  size_t size = 0;
  size_t i = 0;
  while (true) {
    uint8_t b = *(last - i);
    size |= static_cast<size_t>(b & 0x7f) << (7 * i);
    ++i;
    if ((b & 0x80) == 0) break;
  }
  *backlen_size = i;
  return size;
}

// Encodes `value` (encoding + payload) into `out` (at least 13 bytes for integers, or
// 5 + value.size() for strings); returns the byte count.
// ParseInt64 accepts exactly the canonical decimal text of an int64 (no '+', leading zeros or
// "-0"), so a string it parses reads back as the same bytes.
size_t EncodeString(std::string_view value, uint8_t* out) {
  int64_t number;
  if (value.size() <= 20 && ParseInt64(value, &number)) {
    if (number >= 0 && number <= 127) {
      out[0] = static_cast<uint8_t>(number);
      return 1;
    }
    int width = 8;
    uint8_t tag = 0xf4;
    if (number >= INT16_MIN && number <= INT16_MAX) {
      width = 2, tag = 0xf1;
    } else if (number >= -(1 << 23) && number < (1 << 23)) {
      width = 3, tag = 0xf2;
    } else if (number >= INT32_MIN && number <= INT32_MAX) {
      width = 4, tag = 0xf3;
    }
    out[0] = tag;
    StoreSigned(out + 1, number, width);
    return 1 + width;
  }
  size_t len = value.size();
  size_t header;
  if (len < 64) {
    out[0] = static_cast<uint8_t>(0x80 | len);
    header = 1;
  } else if (len < 4096) {
    out[0] = static_cast<uint8_t>(0xc0 | (len >> 8));
    out[1] = static_cast<uint8_t>(len & 0xff);
    header = 2;
  } else {
    out[0] = 0xe0;
    StoreU32(out + 1, static_cast<uint32_t>(len));
    header = 5;
  }
  if (len > 0) std::memcpy(out + header, value.data(), len);
  return header + len;
}

size_t EncodedStringSize(std::string_view value) {
  int64_t number;
  if (value.size() <= 20 && ParseInt64(value, &number)) {
    if (number >= 0 && number <= 127) return 1;
    if (number >= INT16_MIN && number <= INT16_MAX) return 3;
    if (number >= -(1 << 23) && number < (1 << 23)) return 4;
    if (number >= INT32_MIN && number <= INT32_MAX) return 5;
    return 9;
  }
  size_t len = value.size();
  return (len < 64 ? 1 : len < 4096 ? 2 : 5) + len;
}

// Size of (encoding + payload) of the entry starting at `p`.
size_t EncodedSize(const uint8_t* p) {
  uint8_t tag = p[0];
  if (tag < 0x80) return 1;
  if (tag < 0xc0) return 1 + (tag & 0x3f);
  if (tag < 0xd0) return 2 + ((static_cast<size_t>(tag & 0x0f) << 8) | p[1]);
  switch (tag) {
    case 0xe0:
      return 5 + LoadU32(p + 1);
    case 0xf1:
      return 3;
    case 0xf2:
      return 4;
    case 0xf3:
      return 5;
    default:
      return 9;  // 0xf4
  }
}

// Bytes of an entry whose (encoding + payload) takes `encoded` bytes.
template <bool kBacklen>
size_t EntrySizeFor(size_t encoded) {
  return kBacklen ? encoded + BacklenSize(encoded) : encoded;
}

template <bool kBacklen>
size_t EntryTotalSize(const uint8_t* p) {
  return EntrySizeFor<kBacklen>(EncodedSize(p));
}

}  // namespace

std::string_view ListpackEntry::View(std::string* scratch) const {
  if (!is_int) return str;
  *scratch = std::to_string(int_value);
  return *scratch;
}

std::string ListpackEntry::ToString() const {
  return is_int ? std::to_string(int_value) : std::string(str);
}

bool ListpackEntry::Equals(std::string_view value) const {
  if (!is_int) return str == value;
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), int_value);
  return std::string_view(buffer, end - buffer) == value;
}

size_t ListpackEntry::Length() const {
  if (!is_int) return str.size();
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), int_value);
  return static_cast<size_t>(end - buffer);
}

template <bool kBacklen>
BasicListpack<kBacklen>::~BasicListpack() {
  std::free(data_);
}

template <bool kBacklen>
BasicListpack<kBacklen>& BasicListpack<kBacklen>::operator=(BasicListpack&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = other.data_;
    other.data_ = nullptr;
  }
  return *this;
}

template <bool kBacklen>
BasicListpack<kBacklen> BasicListpack<kBacklen>::Clone() const {
  BasicListpack copy;
  if (data_ != nullptr) {
    size_t n = total();
    copy.data_ = static_cast<uint8_t*>(std::malloc(n));
    if (copy.data_ == nullptr) throw std::bad_alloc();
    std::memcpy(copy.data_, data_, n);
  }
  return copy;
}

template <bool kBacklen>
BasicListpack<kBacklen> BasicListpack<kBacklen>::FromEntries(std::string_view entries) {
  BasicListpack copy;
  if (entries.empty()) return copy;
  copy.Resize(kHeaderSize + entries.size());
  std::copy(entries.begin(), entries.end(), copy.data_ + kHeaderSize);
  uint32_t count = 0;
  for (size_t pos = kHeaderSize; pos < kHeaderSize + entries.size();
       pos += EntryTotalSize<kBacklen>(copy.data_ + pos)) {
    ++count;
  }
  copy.SetCount(count);
  return copy;
}

template <bool kBacklen>
BasicListpack<kBacklen> BasicListpack<kBacklen>::Build(
    uint32_t count, size_t body_size, absl::FunctionRef<void(char* body)> write_body) {
  BasicListpack built;
  if (body_size == 0) return built;
  built.Resize(kHeaderSize + body_size);
  write_body(reinterpret_cast<char*>(built.data_ + kHeaderSize));
  built.SetCount(count);
  return built;
}

template <bool kBacklen>
std::string_view BasicListpack<kBacklen>::entries() const {
  if (data_ == nullptr) return {};
  return std::string_view(reinterpret_cast<const char*>(data_) + kHeaderSize,
                          total() - kHeaderSize);
}

template <bool kBacklen>
uint32_t BasicListpack<kBacklen>::total() const {
  return data_ == nullptr ? 0 : LoadU32(data_);
}

template <bool kBacklen>
size_t BasicListpack<kBacklen>::size() const {
  return data_ == nullptr ? 0 : LoadU32(data_ + 4);
}

template <bool kBacklen>
size_t BasicListpack<kBacklen>::bytes() const {
  return total();
}

template <bool kBacklen>
void BasicListpack<kBacklen>::SetCount(uint32_t count) {
  StoreU32(data_ + 4, count);
}

template <bool kBacklen>
uint8_t* BasicListpack<kBacklen>::Resize(size_t new_total) {
  if (new_total <= kHeaderSize) {
    std::free(data_);
    data_ = nullptr;
    return nullptr;
  }
  bool fresh = data_ == nullptr;
  auto* grown = static_cast<uint8_t*>(std::realloc(data_, new_total));
  if (grown == nullptr) throw std::bad_alloc();
  data_ = grown;
  if (fresh) StoreU32(data_ + 4, 0);
  StoreU32(data_, static_cast<uint32_t>(new_total));
  return data_;
}

template <bool kBacklen>
typename BasicListpack<kBacklen>::Pos BasicListpack<kBacklen>::First() const {
  return size() == 0 ? kEnd : kHeaderSize;
}

template <bool kBacklen>
typename BasicListpack<kBacklen>::Pos BasicListpack<kBacklen>::Last() const {
  if (size() == 0) return kEnd;
  if constexpr (!kBacklen) {
    Pos pos = First();
    for (Pos next = Next(pos); next != kEnd; next = Next(pos)) pos = next;
    return pos;
  }
  return Prev(total());
}

template <bool kBacklen>
typename BasicListpack<kBacklen>::Pos BasicListpack<kBacklen>::Next(Pos pos) const {
  Pos next = pos + static_cast<Pos>(EntryTotalSize<kBacklen>(data_ + pos));
  return next >= total() ? kEnd : next;
}

template <bool kBacklen>
typename BasicListpack<kBacklen>::Pos BasicListpack<kBacklen>::Prev(Pos pos) const {
  if (pos == kEnd) return Last();
  if (pos <= kHeaderSize) return kEnd;
  if constexpr (!kBacklen) {
    // No backlen: the entry before `pos` is found walking from the start.
    Pos prev = First();
    for (Pos next = Next(prev); next != kEnd && next < pos; next = Next(prev)) prev = next;
    return prev;
  }
  size_t backlen_size;
  size_t encoded = ReadBacklen(data_ + pos - 1, &backlen_size);
  return pos - static_cast<Pos>(encoded + backlen_size);
}

template <bool kBacklen>
typename BasicListpack<kBacklen>::Pos BasicListpack<kBacklen>::Seek(int64_t index) const {
  auto n = static_cast<int64_t>(size());
  if (index < 0) index += n;
  if (index < 0 || index >= n) return kEnd;
  if (!kBacklen || index <= n / 2) {
    Pos pos = First();
    for (int64_t i = 0; i < index; ++i) pos = Next(pos);
    return pos;
  }
  Pos pos = Last();
  for (int64_t i = n - 1; i > index; --i) pos = Prev(pos);
  return pos;
}

namespace {

// The entry whose encoding starts at `p`.
ListpackEntry DecodeEntry(const uint8_t* p) {
  ListpackEntry entry;
  uint8_t tag = p[0];
  if (tag < 0x80) {
    entry.is_int = true;
    entry.int_value = tag;
  } else if (tag < 0xc0) {
    entry.str = std::string_view(reinterpret_cast<const char*>(p + 1), tag & 0x3f);
  } else if (tag < 0xd0) {
    size_t len = (static_cast<size_t>(tag & 0x0f) << 8) | p[1];
    entry.str = std::string_view(reinterpret_cast<const char*>(p + 2), len);
  } else if (tag == 0xe0) {
    entry.str = std::string_view(reinterpret_cast<const char*>(p + 5), LoadU32(p + 1));
  } else {
    entry.is_int = true;
    int width = tag == 0xf1 ? 2 : tag == 0xf2 ? 3 : tag == 0xf3 ? 4 : 8;
    entry.int_value = LoadSigned(p + 1, width);
  }
  return entry;
}

}  // namespace

template <bool kBacklen>
ListpackEntry BasicListpack<kBacklen>::Get(Pos pos) const {
  return DecodeEntry(data_ + pos);
}

namespace {

// Whether the n bytes at a and b are equal. Short entries (the common case: a field of a few
// bytes plus its header) are compared with two overlapping word loads instead of a memcmp call,
// which halves the cost of a linear Find over a listpack of short strings.
template <typename Word>
bool SameEnds(const uint8_t* a, const uint8_t* b, size_t n) {  // sizeof(Word) <= n <= 2 words
  Word a0, b0, a1, b1;
  std::memcpy(&a0, a, sizeof(Word));
  std::memcpy(&b0, b, sizeof(Word));
  std::memcpy(&a1, a + n - sizeof(Word), sizeof(Word));
  std::memcpy(&b1, b + n - sizeof(Word), sizeof(Word));
  return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

inline bool SameBytes(const uint8_t* a, const uint8_t* b, size_t n) {
  if (n >= 8 && n <= 16) return SameEnds<uint64_t>(a, b, n);
  if (n >= 4 && n < 8) return SameEnds<uint32_t>(a, b, n);
  if (n < 4) {
    for (size_t i = 0; i < n; ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }
  return std::memcmp(a, b, n) == 0;
}

// The first entry in [p, end) equal to `value`, then every (skip + 1)-th one after it; nullptr
// if none. Compares encoded forms: equal strings have equal encodings, so one comparison per
// candidate of the same encoded size.
template <bool kBacklen>
const uint8_t* FindEntry(const uint8_t* p, const uint8_t* end, std::string_view value,
                         size_t skip) {
  uint8_t encoded_stack[80];
  std::string encoded_heap;
  uint8_t* encoded = encoded_stack;
  if (value.size() + 5 > sizeof(encoded_stack)) {
    encoded_heap.resize(value.size() + 5);
    encoded = reinterpret_cast<uint8_t*>(encoded_heap.data());
  }
  size_t encoded_size = EncodeString(value, encoded);
  while (p < end) {
    size_t size = EncodedSize(p);
    if (size == encoded_size && SameBytes(p, encoded, size)) return p;
    p += EntrySizeFor<kBacklen>(size);
    for (size_t i = 0; i < skip && p < end; ++i) p += EntryTotalSize<kBacklen>(p);
  }
  return nullptr;
}

}  // namespace

template <bool kBacklen>
typename BasicListpack<kBacklen>::Pos BasicListpack<kBacklen>::Find(std::string_view value,
                                                                    Pos start, size_t skip) const {
  if (start == kEnd || data_ == nullptr) return kEnd;
  const uint8_t* found = FindEntry<kBacklen>(data_ + start, data_ + total(), value, skip);
  return found == nullptr ? kEnd : static_cast<Pos>(found - data_);
}

template <bool kBacklen>
bool BasicListpack<kBacklen>::EntriesContain(std::string_view entries, std::string_view value) {
  const auto* p = reinterpret_cast<const uint8_t*>(entries.data());
  return FindEntry<kBacklen>(p, p + entries.size(), value, 0) != nullptr;
}

template <bool kBacklen>
size_t BasicListpack<kBacklen>::EntriesCount(std::string_view entries) {
  const auto* p = reinterpret_cast<const uint8_t*>(entries.data());
  const uint8_t* end = p + entries.size();
  size_t count = 0;
  for (; p < end; p += EntryTotalSize<kBacklen>(p)) ++count;
  return count;
}

template <bool kBacklen>
bool BasicListpack<kBacklen>::EntriesFindPair(std::string_view entries, std::string_view key,
                                              ListpackEntry* value) {
  const auto* p = reinterpret_cast<const uint8_t*>(entries.data());
  const uint8_t* end = p + entries.size();
  const uint8_t* found = FindEntry<kBacklen>(p, end, key, 1);
  if (found == nullptr) return false;
  const uint8_t* next = found + EntryTotalSize<kBacklen>(found);
  if (next >= end) return false;  // A key without its value: not a pair listpack.
  *value = DecodeEntry(next);
  return true;
}

template <bool kBacklen>
void BasicListpack<kBacklen>::ForEachEntry(std::string_view entries,
                                           absl::FunctionRef<void(const ListpackEntry&)> fn) {
  const auto* p = reinterpret_cast<const uint8_t*>(entries.data());
  const uint8_t* end = p + entries.size();
  for (; p < end; p += EntryTotalSize<kBacklen>(p)) fn(DecodeEntry(p));
}

template <bool kBacklen>
typename BasicListpack<kBacklen>::Pos BasicListpack<kBacklen>::SpliceIn(Pos before,
                                                                        const uint8_t* encoded,
                                                                        size_t encoded_size) {
  size_t entry_size = EntrySizeFor<kBacklen>(encoded_size);
  size_t old_total = data_ == nullptr ? kHeaderSize : total();
  Pos at = before == kEnd ? static_cast<Pos>(old_total) : before;
  uint32_t count = static_cast<uint32_t>(size());
  Resize(old_total + entry_size);
  std::memmove(data_ + at + entry_size, data_ + at, old_total - at);
  std::memcpy(data_ + at, encoded, encoded_size);
  if constexpr (kBacklen) WriteBacklen(data_ + at + encoded_size, encoded_size);
  SetCount(count + 1);
  return at;
}

template <bool kBacklen>
typename BasicListpack<kBacklen>::Pos BasicListpack<kBacklen>::Insert(Pos before,
                                                                      std::string_view value) {
  if (value.size() + 5 <= 80) {
    uint8_t encoded[80];
    return SpliceIn(before, encoded, EncodeString(value, encoded));
  }
  std::string encoded(value.size() + 5, '\0');
  auto* bytes = reinterpret_cast<uint8_t*>(encoded.data());
  return SpliceIn(before, bytes, EncodeString(value, bytes));
}

template <bool kBacklen>
typename BasicListpack<kBacklen>::Pos BasicListpack<kBacklen>::InsertInt(Pos before,
                                                                         int64_t value) {
  return Insert(before, std::to_string(value));
}

template <bool kBacklen>
typename BasicListpack<kBacklen>::Pos BasicListpack<kBacklen>::Replace(Pos pos,
                                                                       std::string_view value) {
  // In place: one shift of the tail (in the direction the size changes) and one realloc at most.
  uint8_t stack[80];
  std::string heap;
  uint8_t* encoded = stack;
  if (value.size() + 5 > sizeof(stack)) {
    heap.resize(value.size() + 5);
    encoded = reinterpret_cast<uint8_t*>(heap.data());
  }
  size_t encoded_size = EncodeString(value, encoded);
  size_t new_size = EntrySizeFor<kBacklen>(encoded_size);
  size_t old_size = EntryTotalSize<kBacklen>(data_ + pos);
  uint32_t old_total = total();
  if (new_size != old_size) {
    size_t tail = old_total - pos - old_size;
    size_t new_total = old_total - old_size + new_size;
    if (new_size < old_size) {
      std::memmove(data_ + pos + new_size, data_ + pos + old_size, tail);
      Resize(new_total);
    } else {
      Resize(new_total);
      std::memmove(data_ + pos + new_size, data_ + pos + old_size, tail);
    }
  }
  std::memcpy(data_ + pos, encoded, encoded_size);
  if constexpr (kBacklen) WriteBacklen(data_ + pos + encoded_size, encoded_size);
  return pos;
}

template <bool kBacklen>
typename BasicListpack<kBacklen>::Pos BasicListpack<kBacklen>::Erase(Pos pos, size_t count) {
  if (pos == kEnd || count == 0) return pos;
  uint32_t old_total = total();
  Pos end = pos;
  size_t erased = 0;
  while (erased < count && end < old_total) {
    end += static_cast<Pos>(EntryTotalSize<kBacklen>(data_ + end));
    ++erased;
  }
  uint32_t remaining = static_cast<uint32_t>(size() - erased);
  std::memmove(data_ + pos, data_ + end, old_total - end);
  if (remaining == 0) {
    Resize(0);
    return kEnd;
  }
  SetCount(remaining);
  Resize(old_total - (end - pos));
  return pos >= total() ? kEnd : pos;
}

template <bool kBacklen>
void BasicListpack<kBacklen>::Clear() {
  Resize(0);
}

template <bool kBacklen>
BasicListpack<kBacklen> BasicListpack<kBacklen>::SplitAt(Pos pos) {
  BasicListpack tail;
  if (pos == kEnd || data_ == nullptr || pos >= total()) return tail;
  uint32_t old_total = total();
  uint32_t kept = 0;
  for (Pos p = First(); p != kEnd && p < pos; p = Next(p)) ++kept;
  uint32_t moved = static_cast<uint32_t>(size()) - kept;
  size_t moved_bytes = old_total - pos;
  tail.Resize(kHeaderSize + moved_bytes);
  std::memcpy(tail.data_ + kHeaderSize, data_ + pos, moved_bytes);
  tail.SetCount(moved);
  if (kept == 0) {
    Resize(0);
  } else {
    Resize(pos);
    SetCount(kept);
  }
  return tail;
}

template <bool kBacklen>
void BasicListpack<kBacklen>::AppendAll(BasicListpack&& other) {
  if (other.data_ == nullptr) return;
  if (data_ == nullptr) {
    std::swap(data_, other.data_);
    return;
  }
  uint32_t old_total = total();
  uint32_t count = static_cast<uint32_t>(size() + other.size());
  size_t added = other.total() - kHeaderSize;
  Resize(old_total + added);
  std::memcpy(data_ + old_total, other.data_ + kHeaderSize, added);
  SetCount(count);
  other.Clear();
}

template <bool kBacklen>
size_t BasicListpack<kBacklen>::EntrySize(std::string_view value) {
  return EntrySizeFor<kBacklen>(EncodedStringSize(value));
}

template class BasicListpack<true>;
template class BasicListpack<false>;

}  // namespace gigakv
