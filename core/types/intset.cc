#include "core/types/intset.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace gigakv {
namespace {

uint32_t LoadU32(const uint8_t* p) {
  uint32_t value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

void StoreU32(uint8_t* p, uint32_t value) { std::memcpy(p, &value, sizeof(value)); }

int64_t LoadValue(const uint8_t* p, size_t width) {
  switch (width) {
    case 2: {
      int16_t v;
      std::memcpy(&v, p, sizeof(v));
      return v;
    }
    case 4: {
      int32_t v;
      std::memcpy(&v, p, sizeof(v));
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, sizeof(v));
      return v;
    }
  }
}

void StoreValue(uint8_t* p, size_t width, int64_t value) {
  switch (width) {
    case 2: {
      int16_t v = static_cast<int16_t>(value);
      std::memcpy(p, &v, sizeof(v));
      break;
    }
    case 4: {
      int32_t v = static_cast<int32_t>(value);
      std::memcpy(p, &v, sizeof(v));
      break;
    }
    default:
      std::memcpy(p, &value, sizeof(value));
      break;
  }
}

uint8_t* Reallocate(uint8_t* data, size_t size) {
  void* grown = std::realloc(data, size);
  if (grown == nullptr) throw std::bad_alloc();
  return static_cast<uint8_t*>(grown);
}

}  // namespace

Intset::~Intset() { std::free(data_); }

Intset& Intset::operator=(Intset&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = other.data_;
    other.data_ = nullptr;
  }
  return *this;
}

Intset Intset::Clone() const {
  Intset copy;
  if (data_ != nullptr) {
    size_t n = bytes();
    copy.data_ = Reallocate(nullptr, n);
    std::memcpy(copy.data_, data_, n);
  }
  return copy;
}

Intset Intset::FromBytes(std::string_view bytes) {
  Intset copy;
  if (!bytes.empty()) {
    copy.data_ = Reallocate(nullptr, bytes.size());
    std::memcpy(copy.data_, bytes.data(), bytes.size());
  }
  return copy;
}

std::string_view Intset::raw() const {
  return std::string_view(reinterpret_cast<const char*>(data_), bytes());
}

size_t Intset::size() const { return data_ == nullptr ? 0 : LoadU32(data_ + 4); }

size_t Intset::width() const { return data_ == nullptr ? 2 : LoadU32(data_); }

size_t Intset::bytes() const { return data_ == nullptr ? 0 : kHeader + size() * width(); }

size_t Intset::WidthFor(int64_t value) {
  if (value >= INT16_MIN && value <= INT16_MAX) return 2;
  if (value >= INT32_MIN && value <= INT32_MAX) return 4;
  return 8;
}

int64_t Intset::Get(size_t index) const {
  return LoadValue(data_ + kHeader + index * width(), width());
}

void Intset::Set(size_t index, int64_t value) {
  size_t w = width();
  StoreValue(data_ + kHeader + index * w, w, value);
}

void Intset::SetCount(size_t count) { StoreU32(data_ + 4, static_cast<uint32_t>(count)); }

bool Intset::Search(int64_t value, size_t* index) const {
  size_t n = size();
  if (n == 0) {
    *index = 0;
    return false;
  }
  // Values outside [min, max] are answered without a search (common when appending in order).
  if (value > Max()) {
    *index = n;
    return false;
  }
  if (value < Min()) {
    *index = 0;
    return false;
  }
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int64_t current = Get(mid);
    if (current == value) {
      *index = mid;
      return true;
    }
    if (current < value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  *index = lo;
  return false;
}

bool Intset::Contains(int64_t value) const {
  if (data_ == nullptr || WidthFor(value) > width()) return false;
  size_t index;
  return Search(value, &index);
}

bool Intset::RawContains(std::string_view raw, int64_t value) {
  if (raw.size() < kHeader) return false;
  const auto* data = reinterpret_cast<const uint8_t*>(raw.data());
  const size_t width = LoadU32(data);
  if (WidthFor(value) > width) return false;
  size_t low = 0;
  size_t high = LoadU32(data + 4);  // Search [low, high).
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    int64_t at = LoadValue(data + kHeader + middle * width, width);
    if (at == value) return true;
    if (at < value) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return false;
}

void Intset::Upgrade(size_t new_width, size_t count) {
  size_t n = size();
  size_t old_width = width();
  uint8_t* grown = Reallocate(nullptr, kHeader + count * new_width);
  for (size_t i = 0; i < n; ++i) {
    StoreValue(grown + kHeader + i * new_width, new_width,
               LoadValue(data_ + kHeader + i * old_width, old_width));
  }
  StoreU32(grown, static_cast<uint32_t>(new_width));
  StoreU32(grown + 4, static_cast<uint32_t>(n));
  std::free(data_);
  data_ = grown;
}

bool Intset::Add(int64_t value) {
  size_t needed = WidthFor(value);
  if (data_ == nullptr) {
    data_ = Reallocate(nullptr, kHeader + needed);
    StoreU32(data_, static_cast<uint32_t>(needed));
    StoreU32(data_ + 4, 1);
    Set(0, value);
    return true;
  }
  size_t n = size();
  if (needed > width()) {
    // The value lies outside every current value's range: it goes first or last.
    Upgrade(needed, n + 1);
    if (value < 0) {
      std::memmove(data_ + kHeader + needed, data_ + kHeader, n * needed);
      Set(0, value);
    } else {
      Set(n, value);
    }
    SetCount(n + 1);
    return true;
  }
  size_t index;
  if (Search(value, &index)) return false;
  size_t w = width();
  data_ = Reallocate(data_, kHeader + (n + 1) * w);
  uint8_t* at = data_ + kHeader + index * w;
  std::memmove(at + w, at, (n - index) * w);
  SetCount(n + 1);
  Set(index, value);
  return true;
}

void Intset::RemoveAt(size_t index) {
  size_t n = size();
  if (n == 1) {
    Clear();
    return;
  }
  size_t w = width();
  uint8_t* at = data_ + kHeader + index * w;
  std::memmove(at, at + w, (n - index - 1) * w);
  SetCount(n - 1);
  data_ = Reallocate(data_, kHeader + (n - 1) * w);
}

bool Intset::Remove(int64_t value) {
  if (data_ == nullptr || WidthFor(value) > width()) return false;
  size_t index;
  if (!Search(value, &index)) return false;
  RemoveAt(index);
  return true;
}

void Intset::Clear() {
  std::free(data_);
  data_ = nullptr;
}

}  // namespace gigakv
