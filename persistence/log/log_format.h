// The append-only log's physical format: a file header, then records framed in 32 KiB blocks as
// LevelDB frames its logs (db/log_format.h), so that a torn write or a flipped bit is caught by a
// checksum and costs at most the records it touches. What a record's bytes mean is
// log_record.h's business; docs/log-format.md describes both layers.
//
//   file        := file-header block*
//   file-header := magic:"GKVLOG\r\n" (8 bytes) version:fixed32 header-crc:fixed32
//                  -- header-crc: masked CRC32C of magic and version; 16 bytes in all
//   block       := fragment* trailer?               -- 32768 bytes, the last block may be short
//   fragment    := crc:fixed32 length:fixed16 type:uint8 payload[length]
//                  -- crc: masked CRC32C of type and payload; a fragment never crosses a block
//   trailer     := 0x00{0..6}                       -- fewer than 7 bytes left: zero-filled
//   type        := FULL(1) | FIRST(2) | MIDDLE(3) | LAST(4)
//   record      := FULL | FIRST MIDDLE* LAST        -- a record's payload is its fragments'
//
// Fixed-width integers are little-endian. Block boundaries count from the end of the file
// header: block n spans file offsets [16 + 32768 n, 16 + 32768 (n + 1)). Every block begins
// with a fragment header (a fragment never straddles blocks and a trailer is shorter than a
// header), which is what lets a reader tell damage in the middle of a file (a later block still
// verifies) from a torn tail (nothing after the damage verifies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gigakv::persistence::log {

enum FragmentType : uint8_t {
  kZeroType = 0,  // Never written; zero-filled (preallocated or lost) space reads as it.
  kFullType = 1,
  kFirstType = 2,
  kMiddleType = 3,
  kLastType = 4,
};
inline constexpr uint8_t kMaxFragmentType = kLastType;

inline constexpr size_t kBlockSize = 32768;
// crc (4 bytes), length (2 bytes), type (1 byte).
inline constexpr size_t kFragmentHeaderSize = 4 + 2 + 1;

inline constexpr std::string_view kFileMagic{"GKVLOG\r\n", 8};
inline constexpr uint32_t kFileVersion = 1;
inline constexpr size_t kFileHeaderSize = 16;

}  // namespace gigakv::persistence::log
