// HyperLogLog: the data-structure half of Redis's PFADD/PFCOUNT/PFMERGE/PFDEBUG/PFSELFTEST, as
// pure functions over the string value that holds the sketch. Byte-compatible with Redis 7.0's
// src/hyperloglog.c: every function here leaves exactly the bytes redis-server leaves, so values
// can move between gigakv and Redis (RDB, replication, DUMP/RESTORE, GET/SET) unchanged.
//
// Byte format (a Redis string value):
//
//   value   := header body
//   header  := "HYLL" encoding:u8 unused:u8[3] cache:u64le             (kHeaderSize = 16 bytes)
//   encoding:= 0 (dense) | 1 (sparse)
//   cache   := the last computed cardinality, little endian; the most significant bit of the last
//              byte (value byte 15, bit 7) set means "stale, recompute". Invalidation only sets
//              that bit, so the other bits keep the old figure.
//   dense   := 12288 bytes: 16384 registers of 6 bits, packed from the least significant bit of
//              byte 0 upwards: register i is bits [6i, 6i + 6) of the little-endian bit stream,
//              i.e. byte 0 = r1[1:0] r0[5:0], byte 1 = r2[3:0] r1[5:2], byte 2 = r3[5:0] r2[5:4].
//              A dense value is exactly kDenseSize bytes.
//   sparse  := op*  covering the registers 0..16383 in order (run-length encoded):
//     ZERO  := 00xxxxxx              xxxxxx + 1 registers (1..64) set to 0
//     XZERO := 01xxxxxx yyyyyyyy     (xxxxxx << 8 | yyyyyyyy) + 1 registers (1..16384) set to 0
//     VAL   := 1vvvvvxx              xx + 1 registers (1..4) set to vvvvv + 1 (1..32)
//   A new sketch is sparse: header (cache 0, valid) + XZERO:16384 = 18 bytes.
//
// Adding an element: h = MurmurHash64A(element, 0xadc83b19); register h & 16383 is raised to the
// position (1-based) of the lowest set bit of (h >> 14) | 1 << 50, a value in 1..51. A sparse
// value is rewritten in place as Redis does (split the run holding the register, then merge
// adjacent equal VALs), and is promoted to dense when a register would exceed 32 or the value
// would grow past `sparse_max_bytes` (the hll-sparse-max-bytes setting, Redis's default 3000).
//
// The estimate is Ertl's improved raw estimator ("New cardinality estimation algorithms for
// HyperLogLog sketches", arXiv:1702.01284) over the register histogram, computed in doubles with
// the same operation order as Redis so the result is the same integer.
//
// Corrupt values: IsValid() is only Redis's cheap header check, so a sparse body may still be
// corrupt (runs not summing to 16384, truncated opcodes). The decoders (Count, MergeInto,
// StoreMerged, ToDense, DebugGetRegisters, promotion inside Add) accept exactly the bodies whose
// runs sum to 16384, as Redis 7.0.15 does with the CVE-2025-32023 fix (the Debian 7.0.15 build
// the goldens come from; the unpatched tag also accepted VALs after a complete body). Add, like
// Redis's hllSparseSet, only needs the runs up to the register it changes, and rewrites a corrupt
// body in place. A truncated final XZERO reads its missing byte as 0 (Redis's sds terminator).
// Known deviation, only with such a truncated XZERO: when Redis splits it, the split's last byte
// lands in its terminator and later operations on that in-memory string read it back; gigakv
// keeps no byte past the value, so it reads 0 again (Redis's own result there does not survive
// an RDB reload or replication either).
//
// Complexity: Add on a dense value O(1); on a sparse value O(sparse size) (scan + memmove).
// Count, MergeInto, CountRegisters, ToDense and StoreMerged into a dense value O(16384);
// StoreMerged into a sparse value O(16384 + non-zero registers * sparse size), as in Redis. No
// exceptions other than std::bad_alloc; allocation is limited to the value itself (the 12 KB
// dense string on promotion) and DebugDecode's text. Not thread-safe per value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gigakv::hll {

inline constexpr size_t kRegisters = 16384;             // 2^14 registers (HLL_P = 14).
inline constexpr size_t kHeaderSize = 16;               // "HYLL", encoding, 3 unused, cache.
inline constexpr size_t kDenseSize = 16 + 12288;        // Header + 16384 * 6 bits.
inline constexpr size_t kDefaultSparseMaxBytes = 3000;  // Redis's hll-sparse-max-bytes default.
inline constexpr uint8_t kEncodingDense = 0;
inline constexpr uint8_t kEncodingSparse = 1;
inline constexpr uint64_t kHashSeed = 0xadc83b19;

// Redis's isHLLObjectOrReply checks: at least kHeaderSize bytes, magic "HYLL", encoding <= 1, and
// a dense value exactly kDenseSize bytes. False = "WRONGTYPE Key is not a valid HyperLogLog
// string value." Every other function expects a value that passed this check (they return
// false / -1 / a failure rather than misbehave on one that did not).
bool IsValid(std::string_view value);

// True for a valid value in the sparse encoding.
bool IsSparse(std::string_view value);

// What PFADD and PFMERGE create for a missing key (Redis's createHLLObject): sparse, all registers
// zero, cache 0 and valid. Note that Redis's PFADD then counts the creation as an update, so a
// key created by PFADD (even with no elements) replies 1 and has its cache invalidated: call
// InvalidateCache() in that case; PFMERGE's StoreMerged() invalidates on its own.
std::string NewSparse();

// Sets the "stale" bit of the cached cardinality (value byte 15 |= 0x80).
void InvalidateCache(std::string* value);

// PFADD of one element. Returns 1 if a register grew (the cache is then invalidated), 0 if not
// (the value is untouched), -1 if the sparse body is corrupt where the element lands (Redis's
// INVALIDOBJ; the value is then untouched). A sparse value may be promoted to dense (then the
// result is 1). O(1) dense, O(size) sparse.
int Add(std::string* value, std::string_view element, size_t sparse_max_bytes);

// PFCOUNT of one key. With a valid cache returns it without decoding anything (as Redis, even
// for a corrupt body); otherwise computes the estimate, stores it in the header (cache valid) and
// sets *cache_updated (Redis then counts a change and propagates the key). Returns false, value
// untouched, if the sparse body is corrupt (INVALIDOBJ). O(16384) when recomputing.
bool Count(std::string* value, uint64_t* cardinality, bool* cache_updated);

// The cached cardinality if the cache is valid (for tests and introspection).
bool CachedCardinality(std::string_view value, uint64_t* cardinality);

// PFCOUNT k1 k2... / PFMERGE: raises each of registers[0..16384) (one byte per register, Redis's
// HLL_RAW layout; start from zeros) to the value's register. False if the sparse body is corrupt
// (registers may then be partly updated, as in Redis; the caller replies INVALIDOBJ). O(16384).
bool MergeInto(std::string_view value, uint8_t* registers);

// The estimate of a raw register array (PFCOUNT of several keys). O(16384).
uint64_t CountRegisters(const uint8_t* registers);

// PFMERGE's destination write (the tail of Redis's pfmergeCommand). `value` is the destination's
// current value (NewSparse() if the key is missing), `registers` the union, which must include
// the destination's own registers (PFMERGE merges dest as its first source). `use_dense`: true if
// any existing source (dest included) was dense; then the destination is converted to dense
// first, otherwise it stays sparse and each non-zero register is set in ascending order as a
// sparse add would (so it may be promoted to dense by sparse_max_bytes or a register > 32).
// Invalidates the cache. False only if the conversion to dense meets a corrupt body (INVALIDOBJ;
// value untouched).
bool StoreMerged(std::string* value, const uint8_t* registers, bool use_dense,
                 size_t sparse_max_bytes);

// --- PFDEBUG -----------------------------------------------------------------------------------

// PFDEBUG GETREG: converts a sparse value to dense in place (as Redis does; *converted tells the
// caller to count a change) and writes the 16384 registers. False on a corrupt sparse body.
bool DebugGetRegisters(std::string* value, uint8_t* registers, bool* converted);

// PFDEBUG DECODE: Redis's text for a sparse body, opcodes separated by one space: "Z:<len>" for
// XZERO, "z:<len>" for ZERO, "v:<value>,<len>" for VAL, e.g. "Z:1000 v:2,1 z:19 v:3,2 Z:15362"
// (empty for an empty body). The body is not validated. False if the value is dense (Redis's
// "HLL encoding is not sparse").
bool DebugDecode(std::string_view value, std::string* text);

// PFDEBUG ENCODING: "dense" or "sparse".
std::string_view EncodingName(std::string_view value);

// PFDEBUG TODENSE: 1 if a sparse value was converted (Redis counts a change), 0 if it was already
// dense, -1 on a corrupt sparse body (INVALIDOBJ; value untouched). The header, cache included, is
// kept.
int ToDense(std::string* value);

// --- PFSELFTEST and primitives -----------------------------------------------------------------

// PFSELFTEST: Redis's two checks. 1) 1000 rounds of setting all 16384 dense registers to
// pseudo-random values and reading them back. 2) 10^7 distinct elements added to a dense and a
// sparse sketch together: at 1, 10, ..., 10^7 elements the sparse one must still be sparse while
// the count is below sparse_max_bytes / 2, both must estimate the same, and the error must be
// within 6 standard errors (1 at 10 elements). Deterministic (fixed seeds instead of rand()).
// Returns "" on success, else Redis's error text without the leading '-', e.g.
// "TESTFAILED Register 5 should be 3 but is 2". About 0.3 s with sparse_max_bytes <= 3000; like
// Redis's, far slower (a minute) with large values, where the sparse sketch is never promoted.
std::string SelfTest(size_t sparse_max_bytes = kDefaultSparseMaxBytes);

// Redis's MurmurHash64A (MurmurHash2, 64-bit, little-endian reads on every platform).
uint64_t MurmurHash64A(std::string_view key, uint64_t seed);

// The register an element lands in (0..16383) and the value it proposes (1..51).
void PatternLength(std::string_view element, size_t* index, uint8_t* count);

}  // namespace gigakv::hll
