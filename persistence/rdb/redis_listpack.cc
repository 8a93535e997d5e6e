#include "persistence/rdb/redis_listpack.h"

#include <cstring>

#include "gigakv/numbers.h"

namespace gigakv::persistence::rdb {
namespace {

constexpr size_t kHeaderSize = 6;
constexpr uint8_t kEof = 0xFF;
constexpr uint32_t kCountUnknown = 65535;

// Bytes of the backlen that records an entry of `length` bytes.
size_t BacklenSize(uint64_t length) {
  if (length <= 127) return 1;
  if (length < 16383) return 2;
  if (length < 2097151) return 3;
  if (length < 268435455) return 4;
  return 5;
}

void AppendBacklen(std::string* out, uint64_t length) {
  const size_t size = BacklenSize(length);
  for (size_t i = size; i-- > 0;) {
    uint8_t byte = (length >> (7 * i)) & 127;
    if (i != size - 1) byte |= 128;
    out->push_back(static_cast<char>(byte));
  }
}

// The backlen ending at `last` (inclusive), read backwards; UINT64_MAX when it runs over 5 bytes
// or past `first`.
uint64_t DecodeBacklen(const uint8_t* first, const uint8_t* last) {
  uint64_t value = 0;
  for (uint64_t shift = 0;; shift += 7) {
    if (shift > 28 || last < first) return UINT64_MAX;
    value |= static_cast<uint64_t>(*last & 127) << shift;
    if (!(*last & 128)) return value;
    --last;
  }
}

uint32_t Load32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

int64_t LoadSigned(const uint8_t* p, int bytes) {
  uint64_t raw = 0;
  for (int i = bytes; i-- > 0;) raw = raw << 8 | p[i];
  const int shift = 64 - 8 * bytes;
  return static_cast<int64_t>(raw << shift) >> shift;
}

}  // namespace

RedisListpackBuilder::RedisListpackBuilder(std::string* out) : out_(out), start_(out->size()) {
  out_->append(kHeaderSize, '\0');
}

void RedisListpackBuilder::AddEncoded(const char* encoded, size_t size, std::string_view payload) {
  out_->append(encoded, size);
  out_->append(payload);
  AppendBacklen(out_, size + payload.size());
  ++count_;
}

void RedisListpackBuilder::AddInteger(int64_t v) {
  char e[9];
  size_t size;
  auto little = [&](uint64_t u, int bytes) {
    for (int i = 0; i < bytes; ++i) e[1 + i] = static_cast<char>((u >> (8 * i)) & 0xff);
  };
  const uint64_t u = static_cast<uint64_t>(v);
  if (v >= 0 && v <= 127) {
    e[0] = static_cast<char>(v);
    size = 1;
  } else if (v >= -4096 && v <= 4095) {
    const uint64_t t = u & 0x1fff;
    e[0] = static_cast<char>(0xC0 | t >> 8);
    e[1] = static_cast<char>(t & 0xff);
    size = 2;
  } else if (v >= -32768 && v <= 32767) {
    e[0] = static_cast<char>(0xF1);
    little(u, 2);
    size = 3;
  } else if (v >= -8388608 && v <= 8388607) {
    e[0] = static_cast<char>(0xF2);
    little(u, 3);
    size = 4;
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    e[0] = static_cast<char>(0xF3);
    little(u, 4);
    size = 5;
  } else {
    e[0] = static_cast<char>(0xF4);
    little(u, 8);
    size = 9;
  }
  AddEncoded(e, size, {});
}

void RedisListpackBuilder::Add(std::string_view value) {
  int64_t number;
  if (ParseInt64(value, &number)) {
    AddInteger(number);
    return;
  }
  char e[5];
  size_t size;
  const size_t length = value.size();
  if (length < 64) {
    e[0] = static_cast<char>(0x80 | length);
    size = 1;
  } else if (length < 4096) {
    e[0] = static_cast<char>(0xE0 | length >> 8);
    e[1] = static_cast<char>(length & 0xff);
    size = 2;
  } else {
    e[0] = static_cast<char>(0xF0);
    for (int i = 0; i < 4; ++i) e[1 + i] = static_cast<char>((length >> (8 * i)) & 0xff);
    size = 5;
  }
  AddEncoded(e, size, value);
}

void RedisListpackBuilder::Finish() {
  out_->push_back(static_cast<char>(kEof));
  const uint64_t total = out_->size() - start_;
  char* header = out_->data() + start_;
  for (int i = 0; i < 4; ++i) header[i] = static_cast<char>((total >> (8 * i)) & 0xff);
  const uint32_t count = count_ < kCountUnknown ? count_ : kCountUnknown;
  header[4] = static_cast<char>(count & 0xff);
  header[5] = static_cast<char>(count >> 8);
}

absl::Status ForEachRedisListpackEntry(std::string_view listpack,
                                       absl::FunctionRef<absl::Status(const ListpackEntry&)> fn) {
  const absl::Status corrupt = absl::DataLossError("invalid listpack");
  const auto* lp = reinterpret_cast<const uint8_t*>(listpack.data());
  const size_t size = listpack.size();
  if (size < kHeaderSize + 1 || Load32(lp) != size || lp[size - 1] != kEof) return corrupt;
  const uint32_t declared = static_cast<uint32_t>(lp[4]) | static_cast<uint32_t>(lp[5]) << 8;
  const uint8_t* end = lp + size - 1;  // The terminator.
  const uint8_t* p = lp + kHeaderSize;
  uint32_t count = 0;
  while (p < end) {
    const uint8_t first = p[0];
    ListpackEntry entry;
    size_t header = 1;  // Encoding bytes.
    uint64_t payload = 0;
    if (first < 0x80) {
      entry.is_int = true;
      entry.int_value = first;
    } else if ((first & 0xC0) == 0x80) {
      payload = first & 0x3F;
    } else if ((first & 0xE0) == 0xC0) {
      header = 2;
    } else if ((first & 0xF0) == 0xE0) {
      header = 2;
    } else if (first == 0xF0) {
      header = 5;
    } else if (first >= 0xF1 && first <= 0xF4) {
      static constexpr int kIntBytes[] = {2, 3, 4, 8};
      header = 1 + static_cast<size_t>(kIntBytes[first - 0xF1]);
    } else {
      return corrupt;  // 0xF5..0xFE, or a terminator before the end.
    }
    if (static_cast<size_t>(end - p) < header) return corrupt;
    if ((first & 0xE0) == 0xC0) {
      entry.is_int = true;
      const int64_t raw = (static_cast<int64_t>(first & 0x1F) << 8) | p[1];
      entry.int_value = raw >= 4096 ? raw - 8192 : raw;
    } else if ((first & 0xF0) == 0xE0) {
      payload = static_cast<uint64_t>(first & 0x0F) << 8 | p[1];
    } else if (first == 0xF0) {
      payload = Load32(p + 1);
    } else if (first >= 0xF1 && first <= 0xF4) {
      entry.is_int = true;
      entry.int_value = LoadSigned(p + 1, static_cast<int>(header - 1));
    }
    const uint64_t entry_length = header + payload;
    const size_t backlen = BacklenSize(entry_length);
    if (static_cast<uint64_t>(end - p) < entry_length + backlen) return corrupt;
    if (DecodeBacklen(p + entry_length, p + entry_length + backlen - 1) != entry_length) {
      return corrupt;
    }
    if (!entry.is_int) {
      entry.str = std::string_view(reinterpret_cast<const char*>(p + header), payload);
    }
    p += entry_length + backlen;
    ++count;
    if (absl::Status status = fn(entry); !status.ok()) return status;
  }
  if (declared != kCountUnknown && declared != count) return corrupt;
  return absl::OkStatus();
}

}  // namespace gigakv::persistence::rdb
