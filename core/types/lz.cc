#include "core/types/lz.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace gigakv {
namespace {

constexpr int kTableBits = 12;
constexpr size_t kMaxDistance = 8192;
constexpr size_t kMinMatch = 3;
constexpr size_t kMaxShortMatch = 8;
constexpr size_t kMaxMatch = 264;
constexpr size_t kMaxLiteralRun = 32;
// After this many input bytes the output must have shrunk by at least 1/16, or compression stops.
constexpr size_t kProbeBytes = 1024;

uint32_t Hash3(const uint8_t* p) {
  uint32_t v = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
               static_cast<uint32_t>(p[2]) << 16;
  return (v * 2654435761u) >> (32 - kTableBits);
}

}  // namespace

bool LzCompress(std::string_view input, std::string* out) {
  const auto* in = reinterpret_cast<const uint8_t*>(input.data());
  const size_t n = input.size();
  if (n < 16) return false;
  const size_t limit = n - n / 8;  // The output must stay below this many bytes.
  out->resize(limit);
  auto* op = reinterpret_cast<uint8_t*>(out->data());
  size_t o = 0;

  uint32_t table[size_t{1} << kTableBits] = {};  // Position + 1 of the last 3-byte prefix seen.
  size_t literal_start = 0;
  auto flush_literals = [&](size_t end) {
    while (literal_start < end) {
      size_t run = std::min(kMaxLiteralRun, end - literal_start);
      if (o + 1 + run >= limit) return false;
      op[o++] = static_cast<uint8_t>(run - 1);
      std::memcpy(op + o, in + literal_start, run);
      o += run;
      literal_start += run;
    }
    return true;
  };

  bool probed = false;
  size_t ip = 0;
  while (ip + kMinMatch <= n) {
    if (!probed && ip >= kProbeBytes) {
      probed = true;
      if (o + (ip - literal_start) > ip - ip / 16) return false;
    }
    uint32_t h = Hash3(in + ip);
    size_t candidate = table[h];
    table[h] = static_cast<uint32_t>(ip + 1);
    if (candidate != 0) {
      size_t ref = candidate - 1;
      size_t distance = ip - ref;
      if (distance <= kMaxDistance && std::memcmp(in + ref, in + ip, kMinMatch) == 0) {
        size_t max_length = std::min(kMaxMatch, n - ip);
        size_t length = kMinMatch;
        while (length < max_length && in[ref + length] == in[ip + length]) ++length;
        if (!flush_literals(ip) || o + 3 >= limit) return false;
        size_t d = distance - 1;
        if (length <= kMaxShortMatch) {
          op[o++] = static_cast<uint8_t>((length - 2) << 5 | d >> 8);
          op[o++] = static_cast<uint8_t>(d & 0xff);
        } else {
          op[o++] = static_cast<uint8_t>(7 << 5 | d >> 8);
          op[o++] = static_cast<uint8_t>(d & 0xff);
          op[o++] = static_cast<uint8_t>(length - 9);
        }
        // Index the match's last two positions only: cheaper than all of them, and what the
        // next match mostly needs (neighbouring entries repeat at the entry's stride).
        size_t end = ip + length;
        for (size_t p = std::max(ip + 1, end - 2); p < end && p + kMinMatch <= n; ++p) {
          table[Hash3(in + p)] = static_cast<uint32_t>(p + 1);
        }
        ip = end;
        literal_start = ip;
        continue;
      }
    }
    ++ip;
  }
  if (!flush_literals(n)) return false;
  out->resize(o);
  return true;
}

bool LzDecompress(std::string_view block, char* out, size_t size) {
  const auto* ip = reinterpret_cast<const uint8_t*>(block.data());
  const uint8_t* end = ip + block.size();
  size_t o = 0;
  while (ip < end) {
    uint8_t token = *ip++;
    size_t kind = token >> 5;
    if (kind == 0) {
      size_t run = (token & 31u) + 1;
      if (static_cast<size_t>(end - ip) >= kMaxLiteralRun && size - o >= kMaxLiteralRun) {
        std::memcpy(out + o, ip, kMaxLiteralRun);  // Fixed size: inlined; the excess is rewritten.
      } else {
        if (static_cast<size_t>(end - ip) < run || size - o < run) return false;
        std::memcpy(out + o, ip, run);
      }
      ip += run;
      o += run;
      continue;
    }
    if (ip == end) return false;
    size_t distance = ((token & 31u) << 8 | *ip++) + 1;
    size_t length = kind + 2;
    if (kind == 7) {
      if (ip == end) return false;
      length = 9 + *ip++;
    }
    if (distance > o || size - o < length) return false;
    char* dst = out + o;
    const char* src = dst - distance;
    if (distance >= 8 && size - o >= length + 8) {
      // 8 bytes at a time, each chunk read from bytes already written (distance >= 8); up to 7
      // bytes past the match are written and later overwritten.
      for (size_t i = 0; i < length; i += 8) std::memcpy(dst + i, src + i, 8);
    } else if (distance >= length) {
      std::memcpy(dst, src, length);
    } else {
      for (size_t i = 0; i < length; ++i) dst[i] = src[i];  // Overlapping: repeats a pattern.
    }
    o += length;
  }
  return o == size;
}

}  // namespace gigakv
