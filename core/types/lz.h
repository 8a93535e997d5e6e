// Lz: a small, fast LZ77 byte codec for list nodes (quicklist compression). Greedy matching with
// one 4096-entry hash table of 3-byte prefixes; no entropy coding. Built for speed over ratio:
// listpack nodes of 4-64 KiB, where repeated prefixes and digits between neighbouring entries are
// the common case. Stateless and thread-safe (all state is on the caller's stack).
//
// Compressed format (a sequence of tokens, no header; the caller records the decompressed size):
//
//   block    := token*
//   token    := literal | match
//   literal  := 0b000nnnnn byte{n + 1}            the next 1..32 bytes, copied as they are
//   match    := 0bLLLhhhhh lo:u8                  LLL in 1..6: copy LLL + 2 (3..8) bytes
//             | 0b111hhhhh lo:u8 extra:u8         copy 9 + extra (9..264) bytes
//   where the bytes are copied from `distance` = (hhhhh << 8 | lo) + 1 (1..8192) bytes back in
//   the output; a match may overlap the bytes it produces (distance < length repeats a pattern).
//
// Complexity: O(n) both ways; compression bails out early (returns false) when the first
// kProbeBytes do not shrink, so incompressible input costs little.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gigakv {

// Compresses `input` into *out (replacing its contents). Returns false (and leaves *out
// unspecified) when the result would not be at least input.size() / 8 bytes smaller.
bool LzCompress(std::string_view input, std::string* out);

// Decompresses `block` into exactly `size` bytes at `out`. Returns false on malformed input
// (a token reading past the block, a match reaching before the output's start, or a size that
// does not come out exactly); `out` must have room for `size` bytes.
bool LzDecompress(std::string_view block, char* out, size_t size);

}  // namespace gigakv
