// SHA-1 (FIPS 180-4), as Redis uses it to name scripts (EVALSHA, SCRIPT LOAD, redis.sha1hex).
// Not for security: SHA-1 is broken for collision resistance; Redis's script names need only
// Redis's digest.
//
// Thread-safe (no state); O(n) in the input's length.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace gigakv {

// The 20-byte digest of `data`.
std::array<uint8_t, 20> Sha1(std::string_view data);

// The digest as 40 lower-case hex digits (Redis's script names).
std::string Sha1Hex(std::string_view data);

}  // namespace gigakv
