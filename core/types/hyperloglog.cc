#include "core/types/hyperloglog.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace gigakv::hll {
namespace {

constexpr size_t kDenseBodySize = kDenseSize - kHeaderSize;  // 12288
constexpr int kQ = 50;                                       // Hash bits left after the index.
constexpr uint8_t kRegisterMax = 63;
constexpr size_t kEncodingOffset = 4;
constexpr size_t kCacheOffset = 8;
constexpr uint8_t kCacheStaleBit = 0x80;  // In byte kCacheOffset + 7.

// Sparse opcodes.
constexpr int kSparseValMaxValue = 32;
constexpr int kSparseValMaxLen = 4;
constexpr int kSparseZeroMaxLen = 64;
constexpr int kSparseXZeroMaxLen = 16384;
constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)

// Slack kept after a sparse value while it is rewritten in place: the byte right after the value
// plays Redis's sds terminator (read as 0 by a truncated XZERO, rewritten as Redis does), and an
// opcode split grows the value by up to 3 bytes.
constexpr size_t kSparseSlack = 8;

inline bool IsZeroOp(uint8_t op) { return (op & 0xc0) == 0; }
inline bool IsXZeroOp(uint8_t op) { return (op & 0xc0) == 0x40; }
inline bool IsValOp(uint8_t op) { return (op & 0x80) != 0; }
inline int ZeroLen(uint8_t op) { return (op & 0x3f) + 1; }
inline int XZeroLen(uint8_t op, uint8_t next) { return (((op & 0x3f) << 8) | next) + 1; }
inline int ValValue(uint8_t op) { return ((op >> 2) & 0x1f) + 1; }
inline int ValLen(uint8_t op) { return (op & 0x3) + 1; }
// The setters truncate to a byte exactly as Redis's macros do (only reachable with corrupt runs).
inline uint8_t MakeVal(int value, int len) {
  return static_cast<uint8_t>(((value - 1) << 2 | (len - 1)) | 0x80);
}
inline uint8_t MakeZero(int len) { return static_cast<uint8_t>(len - 1); }
inline void MakeXZero(uint8_t* p, int len) {
  int l = len - 1;
  p[0] = static_cast<uint8_t>((l >> 8) | 0x40);
  p[1] = static_cast<uint8_t>(l & 0xff);
}

inline uint8_t* Bytes(std::string* value) { return reinterpret_cast<uint8_t*>(value->data()); }
inline const uint8_t* Bytes(std::string_view value) {
  return reinterpret_cast<const uint8_t*>(value.data());
}
inline uint8_t Encoding(std::string_view value) { return Bytes(value)[kEncodingOffset]; }

// A byte of a sparse value, 0 past its end (Redis reads its sds terminator there).
inline uint8_t ByteOrZero(const uint8_t* p, size_t size, size_t pos) {
  return pos < size ? p[pos] : 0;
}

// --- Dense registers ---------------------------------------------------------------------------
// Register i occupies bits [6i, 6i + 6) counting from the least significant bit of body[0]. The
// last register ends exactly at the end of the body (Redis touches its terminator byte there,
// harmlessly; these skip it).

inline uint8_t DenseGet(const uint8_t* body, size_t index) {
  size_t byte = index * 6 / 8;
  unsigned shift = static_cast<unsigned>(index * 6 & 7);
  unsigned b0 = body[byte];
  unsigned b1 = byte + 1 < kDenseBodySize ? body[byte + 1] : 0;
  return static_cast<uint8_t>(((b0 >> shift) | (b1 << (8 - shift))) & kRegisterMax);
}

inline void DenseSetRegister(uint8_t* body, size_t index, uint8_t value) {
  size_t byte = index * 6 / 8;
  unsigned shift = static_cast<unsigned>(index * 6 & 7);
  unsigned v = value;
  body[byte] = static_cast<uint8_t>((body[byte] & ~(kRegisterMax << shift)) | (v << shift));
  if (byte + 1 < kDenseBodySize) {
    unsigned rest = 8 - shift;
    body[byte + 1] = static_cast<uint8_t>((body[byte + 1] & ~(kRegisterMax >> rest)) | (v >> rest));
  }
}

// Redis's hllDenseSet: raises the register to `count`; 1 if it changed.
inline int DenseRaise(uint8_t* body, size_t index, uint8_t count) {
  if (count <= DenseGet(body, index)) return 0;
  DenseSetRegister(body, index, count);
  return 1;
}

// Histograms have 64 buckets (a 6-bit register); Redis's estimator reads buckets 0..51.
using Histogram = int64_t[64];

void DenseHistogram(const uint8_t* body, Histogram histo) {
  // Four registers per three bytes.
  for (size_t i = 0; i < kDenseBodySize; i += 3) {
    unsigned b0 = body[i], b1 = body[i + 1], b2 = body[i + 2];
    ++histo[b0 & 63];
    ++histo[(b0 >> 6 | b1 << 2) & 63];
    ++histo[(b1 >> 4 | b2 << 4) & 63];
    ++histo[b2 >> 2];
  }
}

// Ertl's sigma and tau, iterated to a fixed point exactly as Redis's hllSigma/hllTau.
double Sigma(double x) {
  if (x == 1.) return std::numeric_limits<double>::infinity();
  double z_prime;
  double y = 1;
  double z = x;
  do {
    x *= x;
    z_prime = z;
    z += x * y;
    y += y;
  } while (z_prime != z);
  return z;
}

double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double z_prime;
  double y = 1.0;
  double z = 1 - x;
  do {
    x = std::sqrt(x);
    z_prime = z;
    y *= 0.5;
    double d = 1 - x;
    z -= d * d * y;  // Redis's pow(1 - x, 2), which the compiler folds to a product.
  } while (z_prime != z);
  return z / 3;
}

// Redis's hllCount tail: the estimate from the register histogram.
uint64_t Estimate(const Histogram histo) {
  const double m = static_cast<double>(kRegisters);
  double z = m * Tau((m - static_cast<double>(histo[kQ + 1])) / m);
  for (int j = kQ; j >= 1; --j) {
    z += static_cast<double>(histo[j]);
    z *= 0.5;
  }
  z += m * Sigma(static_cast<double>(histo[0]) / m);
  double e = static_cast<double>(std::llround(kAlphaInf * m * m / z));
  return static_cast<uint64_t>(e);
}

void WriteCache(std::string* value, uint64_t cardinality) {
  uint8_t* card = Bytes(value) + kCacheOffset;
  for (int i = 0; i < 8; ++i) card[i] = static_cast<uint8_t>(cardinality >> (8 * i));
}

// Decodes a sparse body run by run, calling fn(first_register, run_length, value) for each VAL.
// False as soon as a run would pass register 16383, or if the runs end short of it: the check of
// Redis 7.0.15 as shipped with the CVE-2025-32023 fix (Debian 7.0.15-1~deb12u5 and later, the
// golden server), where the original tag ignored VALs after a complete body. Every decoder of
// the patched Redis (hllSparseToDense, hllMerge, hllSparseRegHisto) accepts exactly the bodies
// whose runs sum to 16384, a truncated final XZERO reading 0 as its second byte.
template <typename ValFn>
bool DecodeSparse(std::string_view value, ValFn fn) {
  const uint8_t* p = Bytes(value);
  size_t size = value.size();
  int64_t index = 0;
  const auto limit = static_cast<int64_t>(kRegisters);
  for (size_t pos = kHeaderSize; pos < size;) {
    uint8_t op = p[pos];
    int run;
    if (IsZeroOp(op)) {
      run = ZeroLen(op);
      pos += 1;
    } else if (IsXZeroOp(op)) {
      run = XZeroLen(op, ByteOrZero(p, size, pos + 1));
      pos += 2;
    } else {
      run = ValLen(op);
      if (index + run > limit) return false;
      fn(static_cast<size_t>(index), run, static_cast<uint8_t>(ValValue(op)));
      pos += 1;
    }
    index += run;
    if (index > limit) return false;
  }
  return index == limit;
}

// Redis's hllSparseToDense on a sparse value: the dense value (header copied, cache included,
// encoding dense). False on a corrupt body.
bool SparseToDense(std::string_view sparse, std::string* dense) {
  dense->assign(kDenseSize, '\0');
  uint8_t* out = Bytes(dense);
  std::memcpy(out, sparse.data(), kHeaderSize);
  out[kEncodingOffset] = kEncodingDense;
  uint8_t* body = out + kHeaderSize;
  return DecodeSparse(sparse, [body](size_t first, int run, uint8_t reg) {
    for (int i = 0; i < run; ++i) DenseSetRegister(body, first + i, reg);
  });
}

// Redis's hllSparseRegHisto: false on a corrupt body.
bool SparseHistogram(std::string_view value, Histogram histo) {
  int64_t nonzero = 0;
  bool valid = DecodeSparse(value, [histo, &nonzero](size_t, int run, uint8_t reg) {
    histo[reg] += run;
    nonzero += run;
  });
  histo[0] += static_cast<int64_t>(kRegisters) - nonzero;
  return valid;
}

// Converts a sparse *value to dense in place; false (value untouched) on a corrupt body.
bool ConvertToDense(std::string* value) {
  std::string dense;
  if (!SparseToDense(*value, &dense)) return false;
  *value = std::move(dense);
  return true;
}

// Redis's promotion path of hllSparseSet: convert, then raise the register in the dense body.
int PromoteAndSet(std::string* value, size_t index, uint8_t count) {
  if (!ConvertToDense(value)) return -1;
  return DenseRaise(Bytes(value) + kHeaderSize, index, count);
}

// Redis's hllSparseSet: raises register `index` of a sparse value to `count`, rewriting the runs
// in place. 1 if changed (cache invalidated), 0 if not, -1 if the body is corrupt where `index`
// should be.
int SparseSet(std::string* value, size_t index_in, uint8_t count, size_t sparse_max_bytes) {
  if (count > kSparseValMaxValue) return PromoteAndSet(value, index_in, count);

  const int64_t index = static_cast<int64_t>(index_in);
  size_t len = value->size();
  value->resize(len + kSparseSlack, '\0');  // byte `len` is the terminator, 0
  uint8_t* s = Bytes(value);
  // Redis's sdsIncrLen: the new length, and a terminator right after it.
  auto set_len = [&](size_t new_len) {
    len = new_len;
    s[len] = 0;
  };
  auto finish = [&](int result) {
    value->resize(len);
    return result;
  };

  // Step 1: find the opcode covering `index`.
  uint8_t* sparse = s + kHeaderSize;
  uint8_t* end = s + len;
  uint8_t* p = sparse;
  uint8_t* prev = nullptr;
  int64_t first = 0;
  int64_t span = 0;
  while (p < end) {
    int oplen = 1;
    if (IsZeroOp(*p)) {
      span = ZeroLen(*p);
    } else if (IsValOp(*p)) {
      span = ValLen(*p);
    } else {
      span = XZeroLen(p[0], p[1]);
      oplen = 2;
    }
    if (index <= first + span - 1) break;
    prev = p;
    p += oplen;
    first += span;
  }
  if (span == 0 || p >= end) return finish(-1);

  uint8_t* next = IsXZeroOp(*p) ? p + 2 : p + 1;
  if (next >= end) next = nullptr;

  bool is_zero = false, is_xzero = false, is_val = false;
  int64_t runlen;
  if (IsZeroOp(*p)) {
    is_zero = true;
    runlen = ZeroLen(*p);
  } else if (IsXZeroOp(*p)) {
    is_xzero = true;
    runlen = XZeroLen(p[0], p[1]);
  } else {
    is_val = true;
    runlen = ValLen(*p);
  }

  bool rewritten = false;
  if (is_val) {
    // A) The register already holds as much: nothing to do.
    if (ValValue(*p) >= count) return finish(0);
    // B) A VAL of one register: overwrite it.
    if (runlen == 1) {
      *p = MakeVal(count, 1);
      rewritten = true;
    }
  }
  // C) A ZERO of one register: becomes a VAL.
  if (!rewritten && is_zero && runlen == 1) {
    *p = MakeVal(count, 1);
    rewritten = true;
  }

  if (!rewritten) {
    // D) Split the run into [before] VAL:count,1 [after] (at most 5 bytes).
    uint8_t seq[5];
    uint8_t* n = seq;
    int64_t last = first + span - 1;
    if (is_zero || is_xzero) {
      auto put_zeros = [&](int64_t zeros) {
        if (zeros > kSparseZeroMaxLen) {
          MakeXZero(n, static_cast<int>(zeros));
          n += 2;
        } else {
          *n++ = MakeZero(static_cast<int>(zeros));
        }
      };
      if (index != first) put_zeros(index - first);
      *n++ = MakeVal(count, 1);
      if (index != last) put_zeros(last - index);
    } else {
      int current = ValValue(*p);
      if (index != first) *n++ = MakeVal(current, static_cast<int>(index - first));
      *n++ = MakeVal(count, 1);
      if (index != last) *n++ = MakeVal(current, static_cast<int>(last - index));
    }

    // Step 3: replace the old opcode with the sequence, unless that grows the value too much.
    int seqlen = static_cast<int>(n - seq);
    int oldlen = is_xzero ? 2 : 1;
    int delta = seqlen - oldlen;
    if (delta > 0 && len + static_cast<size_t>(delta) > sparse_max_bytes) {
      finish(0);
      return PromoteAndSet(value, index_in, count);
    }
    if (delta != 0 && next != nullptr) std::memmove(next + delta, next, end - next);
    set_len(len + delta);
    std::memcpy(p, seq, seqlen);
    end += delta;
  }

  // Step 4: merge adjacent VALs of equal value, scanning up to 5 opcodes from the previous one.
  p = prev != nullptr ? prev : sparse;
  int scanlen = 5;
  while (p < end && scanlen-- > 0) {
    if (IsXZeroOp(*p)) {
      p += 2;
      continue;
    }
    if (IsZeroOp(*p)) {
      p += 1;
      continue;
    }
    if (p + 1 < end && IsValOp(p[1])) {
      int v1 = ValValue(p[0]);
      int v2 = ValValue(p[1]);
      if (v1 == v2) {
        int merged = ValLen(p[0]) + ValLen(p[1]);
        if (merged <= kSparseValMaxLen) {
          p[1] = MakeVal(v1, merged);
          std::memmove(p, p + 1, end - p);
          set_len(len - 1);
          --end;
          continue;  // Try the merged VAL against the next one.
        }
      }
    }
    ++p;
  }

  s[kCacheOffset + 7] |= kCacheStaleBit;
  return finish(1);
}

// Shared checks: header present, and the dense size right for a dense value.
bool HasHeader(std::string_view value) { return value.size() >= kHeaderSize; }

}  // namespace

bool IsValid(std::string_view value) {
  if (value.size() < kHeaderSize) return false;
  if (value.substr(0, 4) != "HYLL") return false;
  uint8_t encoding = Encoding(value);
  if (encoding > kEncodingSparse) return false;
  if (encoding == kEncodingDense && value.size() != kDenseSize) return false;
  return true;
}

bool IsSparse(std::string_view value) {
  return IsValid(value) && Encoding(value) == kEncodingSparse;
}

std::string NewSparse() {
  std::string value(kHeaderSize + 2, '\0');
  std::memcpy(value.data(), "HYLL", 4);
  value[kEncodingOffset] = static_cast<char>(kEncodingSparse);
  MakeXZero(Bytes(&value) + kHeaderSize, kSparseXZeroMaxLen);
  return value;
}

void InvalidateCache(std::string* value) {
  if (HasHeader(*value)) Bytes(value)[kCacheOffset + 7] |= kCacheStaleBit;
}

int Add(std::string* value, std::string_view element, size_t sparse_max_bytes) {
  if (!HasHeader(*value)) return -1;
  size_t index;
  uint8_t count;
  PatternLength(element, &index, &count);
  int result;
  switch (Encoding(*value)) {
    case kEncodingDense:
      if (value->size() != kDenseSize) return -1;
      result = DenseRaise(Bytes(value) + kHeaderSize, index, count);
      break;
    case kEncodingSparse:
      result = SparseSet(value, index, count, sparse_max_bytes);
      break;
    default:
      return -1;
  }
  // Redis's PFADD invalidates once per updating command; per update is the same bytes.
  if (result == 1) InvalidateCache(value);
  return result;
}

bool CachedCardinality(std::string_view value, uint64_t* cardinality) {
  if (!HasHeader(value)) return false;
  const uint8_t* card = Bytes(value) + kCacheOffset;
  if (card[7] & kCacheStaleBit) return false;
  uint64_t result = 0;
  for (int i = 7; i >= 0; --i) result = result << 8 | card[i];
  *cardinality = result;
  return true;
}

bool Count(std::string* value, uint64_t* cardinality, bool* cache_updated) {
  *cache_updated = false;
  if (CachedCardinality(*value, cardinality)) return true;
  if (!HasHeader(*value)) return false;
  Histogram histo = {};
  switch (Encoding(*value)) {
    case kEncodingDense:
      if (value->size() != kDenseSize) return false;
      DenseHistogram(Bytes(value) + kHeaderSize, histo);
      break;
    case kEncodingSparse:
      if (!SparseHistogram(*value, histo)) return false;
      break;
    default:
      return false;
  }
  *cardinality = Estimate(histo);
  WriteCache(value, *cardinality);
  *cache_updated = true;
  return true;
}

bool MergeInto(std::string_view value, uint8_t* registers) {
  if (!IsValid(value)) return false;
  const uint8_t* p = Bytes(value);
  if (Encoding(value) == kEncodingDense) {
    const uint8_t* body = p + kHeaderSize;
    for (size_t i = 0; i < kRegisters; ++i) {
      uint8_t reg = DenseGet(body, i);
      if (reg > registers[i]) registers[i] = reg;
    }
    return true;
  }
  return DecodeSparse(value, [registers](size_t first, int run, uint8_t reg) {
    for (size_t i = first; i < first + run; ++i) {
      if (reg > registers[i]) registers[i] = reg;
    }
  });
}

uint64_t CountRegisters(const uint8_t* registers) {
  Histogram histo = {};
  for (size_t i = 0; i < kRegisters; ++i) ++histo[registers[i] & 63];
  return Estimate(histo);
}

bool StoreMerged(std::string* value, const uint8_t* registers, bool use_dense,
                 size_t sparse_max_bytes) {
  if (!IsValid(*value)) return false;
  if (use_dense && ToDense(value) < 0) return false;
  for (size_t i = 0; i < kRegisters; ++i) {
    if (registers[i] == 0) continue;
    // The encoding is read again each time: a sparse set may promote the value.
    if (Encoding(*value) == kEncodingDense) {
      DenseRaise(Bytes(value) + kHeaderSize, i, registers[i]);
    } else {
      SparseSet(value, i, registers[i], sparse_max_bytes);  // Result ignored, as in Redis.
    }
  }
  InvalidateCache(value);
  return true;
}

bool DebugGetRegisters(std::string* value, uint8_t* registers, bool* converted) {
  *converted = false;
  if (!IsValid(*value)) return false;
  if (Encoding(*value) == kEncodingSparse) {
    if (!ConvertToDense(value)) return false;
    *converted = true;
  }
  const uint8_t* body = Bytes(value) + kHeaderSize;
  for (size_t i = 0; i < kRegisters; ++i) registers[i] = DenseGet(body, i);
  return true;
}

bool DebugDecode(std::string_view value, std::string* text) {
  text->clear();
  if (!HasHeader(value) || Encoding(value) != kEncodingSparse) return false;
  const uint8_t* p = Bytes(value);
  size_t size = value.size();
  for (size_t pos = kHeaderSize; pos < size;) {
    if (!text->empty()) text->push_back(' ');
    uint8_t op = p[pos];
    if (IsZeroOp(op)) {
      text->append("z:").append(std::to_string(ZeroLen(op)));
      pos += 1;
    } else if (IsXZeroOp(op)) {
      text->append("Z:").append(std::to_string(XZeroLen(op, ByteOrZero(p, size, pos + 1))));
      pos += 2;
    } else {
      text->append("v:")
          .append(std::to_string(ValValue(op)))
          .append(",")
          .append(std::to_string(ValLen(op)));
      pos += 1;
    }
  }
  return true;
}

std::string_view EncodingName(std::string_view value) {
  return HasHeader(value) && Encoding(value) == kEncodingDense ? "dense" : "sparse";
}

int ToDense(std::string* value) {
  if (!IsValid(*value)) return -1;
  if (Encoding(*value) == kEncodingDense) return 0;
  return ConvertToDense(value) ? 1 : -1;
}

uint64_t MurmurHash64A(std::string_view key, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const size_t len = key.size();
  const auto* data = reinterpret_cast<const uint8_t*>(key.data());
  uint64_t h = seed ^ (static_cast<uint64_t>(len) * m);
  const uint8_t* block_end = data + (len - (len & 7));
  for (; data != block_end; data += 8) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; --i) k = k << 8 | data[i];  // Little endian everywhere.
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  switch (len & 7) {
    case 7:
      h ^= static_cast<uint64_t>(data[6]) << 48;
      [[fallthrough]];
    case 6:
      h ^= static_cast<uint64_t>(data[5]) << 40;
      [[fallthrough]];
    case 5:
      h ^= static_cast<uint64_t>(data[4]) << 32;
      [[fallthrough]];
    case 4:
      h ^= static_cast<uint64_t>(data[3]) << 24;
      [[fallthrough]];
    case 3:
      h ^= static_cast<uint64_t>(data[2]) << 16;
      [[fallthrough]];
    case 2:
      h ^= static_cast<uint64_t>(data[1]) << 8;
      [[fallthrough]];
    case 1:
      h ^= static_cast<uint64_t>(data[0]);
      h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

void PatternLength(std::string_view element, size_t* index, uint8_t* count) {
  uint64_t hash = MurmurHash64A(element, kHashSeed);
  *index = static_cast<size_t>(hash & (kRegisters - 1));
  hash >>= 14;
  hash |= uint64_t{1} << kQ;  // Bounds the count to kQ + 1.
  *count = static_cast<uint8_t>(std::countr_zero(hash) + 1);
}

std::string SelfTest(size_t sparse_max_bytes) {
  // A fixed xorshift64* sequence stands in for Redis's rand().
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  auto next_random = [&state] {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1dULL;
  };

  // Test 1: every register keeps its own value, neighbours untouched.
  std::string dense(kDenseSize, '\0');
  uint8_t* body = Bytes(&dense) + kHeaderSize;
  uint8_t expected[kRegisters];
  for (int round = 0; round < 1000; ++round) {
    for (size_t i = 0; i < kRegisters; i += 8) {
      uint64_t r = next_random();
      for (size_t k = 0; k < 8; ++k) {
        expected[i + k] = static_cast<uint8_t>((r >> (8 * k)) & kRegisterMax);
        DenseSetRegister(body, i + k, expected[i + k]);
      }
    }
    for (size_t i = 0; i < kRegisters; ++i) {
      uint8_t got = DenseGet(body, i);
      if (got != expected[i]) {
        return "TESTFAILED Register " + std::to_string(i) + " should be " +
               std::to_string(expected[i]) + " but is " + std::to_string(got);
      }
    }
  }

  // Test 2: approximation error, dense and sparse side by side.
  std::memset(body, 0, kDenseBodySize);
  std::memcpy(dense.data(), "HYLL", 4);
  std::string sparse = NewSparse();
  const double relerr = 1.04 / std::sqrt(static_cast<double>(kRegisters));
  auto count_of = [](std::string_view value) {
    Histogram histo = {};
    if (Encoding(value) == kEncodingDense) {
      DenseHistogram(Bytes(value) + kHeaderSize, histo);
    } else {
      SparseHistogram(value, histo);
    }
    return Estimate(histo);
  };
  const uint64_t seed = 0x5eed0fa11ab1e5edULL;
  int64_t checkpoint = 1;
  for (uint64_t j = 1; j <= 10000000; ++j) {
    uint64_t ele = j ^ seed;
    char bytes[8];
    std::memcpy(bytes, &ele, sizeof(bytes));  // Native order, as Redis hashes &ele.
    std::string_view element(bytes, sizeof(bytes));
    size_t index;
    uint8_t count;
    PatternLength(element, &index, &count);
    DenseRaise(body, index, count);
    Add(&sparse, element, sparse_max_bytes);
    if (static_cast<int64_t>(j) != checkpoint) continue;

    if (j < sparse_max_bytes / 2 && Encoding(sparse) != kEncodingSparse) {
      return "TESTFAILED sparse encoding not used";
    }
    uint64_t dense_count = count_of(dense);
    if (dense_count != count_of(sparse)) return "TESTFAILED dense/sparse disagree";
    int64_t abserr = checkpoint - static_cast<int64_t>(dense_count);
    uint64_t maxerr =
        static_cast<uint64_t>(std::ceil(relerr * 6 * static_cast<double>(checkpoint)));
    if (j == 10) maxerr = 1;  // Collisions make larger errors likely at 10 elements.
    if (abserr < 0) abserr = -abserr;
    if (abserr > static_cast<int64_t>(maxerr)) {
      return "TESTFAILED Too big error. card:" + std::to_string(checkpoint) +
             " abserr:" + std::to_string(abserr);
    }
    checkpoint *= 10;
  }
  return "";
}

}  // namespace gigakv::hll
