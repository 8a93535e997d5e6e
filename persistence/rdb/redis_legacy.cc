#include "persistence/rdb/redis_legacy.h"

#include <cstring>

namespace gigakv::persistence::rdb {
namespace {

uint64_t LoadLittle(const uint8_t* p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes; i-- > 0;) value = value << 8 | p[i];
  return value;
}

int64_t LoadSigned(const uint8_t* p, int bytes) {
  const int shift = 64 - 8 * bytes;
  return static_cast<int64_t>(LoadLittle(p, bytes) << shift) >> shift;
}

constexpr size_t kZiplistHeader = 10;
constexpr uint8_t kEnd = 0xFF;

}  // namespace

absl::Status ForEachZiplistEntry(std::string_view ziplist,
                                 absl::FunctionRef<absl::Status(const ListpackEntry&)> fn) {
  const absl::Status corrupt = absl::DataLossError("invalid ziplist");
  const auto* zl = reinterpret_cast<const uint8_t*>(ziplist.data());
  const uint64_t size = ziplist.size();
  if (size < kZiplistHeader + 1 || LoadLittle(zl, 4) != size || zl[size - 1] != kEnd) {
    return corrupt;
  }
  const uint64_t tail = LoadLittle(zl + 4, 4);
  if (tail > size - 1) return corrupt;
  const uint32_t declared = static_cast<uint32_t>(LoadLittle(zl + 8, 2));
  const uint64_t last = size - 1;  // Offset of the terminator: no entry reaches past it.
  uint64_t p = kZiplistHeader;
  uint64_t prev_size = 0;
  uint64_t prev = 0;  // Offset of the previous entry (0: none yet).
  uint32_t count = 0;
  while (zl[p] != kEnd) {
    // prevlen.
    uint64_t prevlen_size = zl[p] < 254 ? 1 : 5;
    if (p + prevlen_size > last) return corrupt;
    const uint64_t prevlen = prevlen_size == 1 ? zl[p] : LoadLittle(zl + p + 1, 4);
    if (prevlen != prev_size) return corrupt;
    // encoding.
    const uint64_t e = p + prevlen_size;
    const uint8_t first = zl[e];
    uint64_t len_size = 1;
    uint64_t payload = 0;
    ListpackEntry entry;
    switch (first >> 6) {
      case 0:
        payload = first & 0x3F;
        break;
      case 1:
        len_size = 2;
        break;
      case 2:
        len_size = 5;
        break;
      default:
        entry.is_int = true;
        if (first == 0xC0) {
          payload = 2;
        } else if (first == 0xD0) {
          payload = 4;
        } else if (first == 0xE0) {
          payload = 8;
        } else if (first == 0xF0) {
          payload = 3;
        } else if (first == 0xFE) {
          payload = 1;
        } else if (first >= 0xF1 && first <= 0xFD) {
          entry.int_value = first - 0xF1;
        } else {
          return corrupt;
        }
    }
    if (e + len_size > last) return corrupt;
    if (len_size == 2) {
      payload = static_cast<uint64_t>(first & 0x3F) << 8 | zl[e + 1];
    } else if (len_size == 5) {
      payload = static_cast<uint64_t>(zl[e + 1]) << 24 | static_cast<uint64_t>(zl[e + 2]) << 16 |
                static_cast<uint64_t>(zl[e + 3]) << 8 | zl[e + 4];
    }
    const uint64_t header = prevlen_size + len_size;
    if (payload > last - p - header) return corrupt;  // The entry must end by the terminator.
    const uint8_t* data = zl + p + header;
    if (entry.is_int) {
      if (payload > 0) entry.int_value = LoadSigned(data, static_cast<int>(payload));
    } else {
      entry.str = std::string_view(reinterpret_cast<const char*>(data), payload);
    }
    if (absl::Status status = fn(entry); !status.ok()) return status;
    prev = p;
    prev_size = header + payload;
    p += prev_size;
    ++count;
  }
  if (p != last) return corrupt;  // A 0xFF before the end.
  if (prev != 0 && prev != tail) return corrupt;
  if (declared != 65535 && declared != count) return corrupt;
  return absl::OkStatus();
}

absl::Status ForEachZipmapPair(
    std::string_view zipmap,
    absl::FunctionRef<absl::Status(std::string_view field, std::string_view value)> fn) {
  const absl::Status corrupt = absl::DataLossError("invalid zipmap");
  const auto* zm = reinterpret_cast<const uint8_t*>(zipmap.data());
  const uint64_t size = zipmap.size();
  if (size < 2 || zm[size - 1] != kEnd) return corrupt;
  const uint64_t last = size - 1;
  // Reads a length at `p` (which must be <= last), advancing p; false when it runs past `last`.
  auto read_length = [&](uint64_t* p, uint64_t* length) {
    const uint64_t s = zm[*p] < 254 ? 1 : 5;
    if (*p + s > last) return false;
    *length = s == 1 ? zm[*p] : LoadLittle(zm + *p + 1, 4);
    *p += s;
    return true;
  };
  uint64_t p = 1;
  uint32_t count = 0;
  while (zm[p] != kEnd) {
    uint64_t field_length, value_length;
    if (!read_length(&p, &field_length)) return corrupt;
    if (field_length > last - p) return corrupt;
    const std::string_view field(reinterpret_cast<const char*>(zm + p), field_length);
    p += field_length;
    if (!read_length(&p, &value_length)) return corrupt;
    const uint64_t free = zm[p++];
    if (p > last || value_length + free > last - p) return corrupt;
    const std::string_view value(reinterpret_cast<const char*>(zm + p), value_length);
    p += value_length + free;
    ++count;
    if (absl::Status status = fn(field, value); !status.ok()) return status;
  }
  if (count == 0) return corrupt;
  if (zm[0] != 254 && zm[0] != count) return corrupt;
  return absl::OkStatus();
}

absl::Status ValidateIntset(std::string_view intset, uint32_t* count, uint32_t* width) {
  const absl::Status corrupt = absl::DataLossError("invalid intset");
  const auto* p = reinterpret_cast<const uint8_t*>(intset.data());
  if (intset.size() < 8) return corrupt;
  const uint64_t w = LoadLittle(p, 4);
  if (w != 2 && w != 4 && w != 8) return corrupt;
  const uint64_t n = LoadLittle(p + 4, 4);
  if (8 + n * w != intset.size() || n == 0) return corrupt;
  *width = static_cast<uint32_t>(w);
  *count = static_cast<uint32_t>(n);
  int64_t previous = IntsetValueAt(intset, *width, 0);
  for (uint32_t i = 1; i < n; ++i) {
    const int64_t value = IntsetValueAt(intset, *width, i);
    if (value <= previous) return corrupt;
    previous = value;
  }
  return absl::OkStatus();
}

int64_t IntsetValueAt(std::string_view intset, uint32_t width, uint32_t index) {
  const auto* p = reinterpret_cast<const uint8_t*>(intset.data()) + 8 + uint64_t{index} * width;
  return LoadSigned(p, static_cast<int>(width));
}

}  // namespace gigakv::persistence::rdb
