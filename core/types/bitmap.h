// Bit operations on byte strings: the data-structure half of Redis's bitmap commands (SETBIT,
// GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD). Pure functions over bytes; no RESP, no store.
//
// Bit numbering follows Redis: bit 0 is the most significant bit of byte 0, bit 8 the most
// significant bit of byte 1, and so on. Bytes past the end of a string read as zero.
//
// Contracts common to every function: offsets and ranges are in bits unless named otherwise;
// functions that write require the string to be long enough already (callers grow it first, with
// BytesForBit), so none of them allocates.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gigakv {

// Bytes a string needs so that bit `offset` exists.
inline uint64_t BytesForBit(uint64_t offset) { return (offset >> 3) + 1; }

// The bit at `offset`; false past the end.
bool GetBit(std::string_view bytes, uint64_t offset);

// Sets the bit at `offset` (which must be inside `bytes`) to `value`; returns its old value.
bool SetBit(std::string& bytes, uint64_t offset, bool value);

// Redis's index normalization for BITCOUNT/BITPOS ranges over a sequence of `length` units:
// negative indexes count from the end, then both ends are clipped to [0, length - 1]. Returns false
// when the resulting range is empty (including length 0); otherwise *start <= *end.
bool NormalizeRange(int64_t length, int64_t* start, int64_t* end);

// Set bits in the inclusive bit range [first, last], which must lie inside `bytes`.
uint64_t CountBits(std::string_view bytes, uint64_t first, uint64_t last);

// Set bits in the whole string.
uint64_t CountBits(std::string_view bytes);

// Position of the first bit equal to `bit` in the inclusive bit range [first, last] (inside
// `bytes`), or -1 if there is none.
int64_t FindBit(std::string_view bytes, bool bit, uint64_t first, uint64_t last);

enum class BitOp { kAnd, kOr, kXor, kNot };

// BITOP: combines `sources` byte by byte into a string as long as the longest source; shorter
// sources (and missing keys, passed as empty views) count as zero bytes. kNot takes exactly one
// source. Returns the empty string when every source is empty.
std::string BitOperation(BitOp op, const std::vector<std::string_view>& sources);

// --- Bitfields ---------------------------------------------------------------------------------

// A BITFIELD integer type: i1..i64 or u1..u63 (u64 cannot be returned as a RESP integer).
struct BitfieldType {
  bool is_signed = false;
  int bits = 0;
};

// Parses "i<bits>" / "u<bits>" exactly as Redis does: a lower-case sign letter, then strict
// decimal digits up to the first NUL byte (Redis reads the rest as a C string). False otherwise.
bool ParseBitfieldType(std::string_view text, BitfieldType* type);

enum class BitfieldOverflow { kWrap, kSat, kFail };

// The unsigned integer of `bits` bits (1..64) at bit `offset`, zero-padded past the end.
uint64_t GetUnsignedField(std::string_view bytes, uint64_t offset, int bits);
// The same, sign-extended from `bits` bits.
int64_t GetSignedField(std::string_view bytes, uint64_t offset, int bits);
// Stores the low `bits` bits of `value` at bit `offset`; the field must lie inside `bytes`.
void SetField(std::string& bytes, uint64_t offset, int bits, uint64_t value);

// Redis's overflow checks for a field holding `value` that is incremented by `incr` (0 for SET).
// Return 0 when value + incr fits, otherwise 1 on overflow and -1 on underflow (except that, as in
// Redis, a wrapped underflow also returns 1). When non-zero, *limit receives the value to store:
// the wrapped result (kWrap) or the saturated bound (kSat); it is left untouched for kFail.
// These reproduce Redis's arithmetic bit for bit, including its quirks for SET values far out of
// range (e.g. SAT of i8 with -2^63 stores 127), so replies match redis-server exactly.
int CheckUnsignedOverflow(uint64_t value, int64_t incr, int bits, BitfieldOverflow policy,
                          uint64_t* limit);
int CheckSignedOverflow(int64_t value, int64_t incr, int bits, BitfieldOverflow policy,
                        int64_t* limit);

// The outcome of one BITFIELD SET or INCRBY.
struct BitfieldWrite {
  bool failed = false;   // OVERFLOW FAIL hit: nothing was written, the reply is nil.
  int64_t reply = 0;     // SET: the old value; INCRBY: the new value.
  bool changed = false;  // The stored bits differ from before.
};

// BITFIELD SET: stores `value` (with the overflow policy) and reports the old value. The field
// must lie inside `bytes`.
BitfieldWrite BitfieldSet(std::string& bytes, BitfieldType type, uint64_t offset, int64_t value,
                          BitfieldOverflow policy);
// BITFIELD INCRBY: adds `incr` (with the overflow policy) and reports the new value. The field
// must lie inside `bytes`.
BitfieldWrite BitfieldIncrBy(std::string& bytes, BitfieldType type, uint64_t offset, int64_t incr,
                             BitfieldOverflow policy);

}  // namespace gigakv
