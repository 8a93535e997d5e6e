// Redis's RDB snapshot format, version 10 (Redis 7.0), as gigakv writes it and reads it (reading
// also versions 1-9, as Redis 7.0 does; files before version 5 have no checksum trailer). The byte
// grammar, with every integer big-endian unless marked LE:
//
//   file        := "REDIS" version:4 ascii digits ("0010")  item*  EOF  checksum
//   checksum    := crc64:8 LE        CRC-64/Jones of every byte before it, magic to EOF
//                                    included; all zero when written with rdbchecksum no;
//                                    absent before version 5
//   item        := AUX key:string value:string
//                | SELECTDB db:length
//                | RESIZEDB keys:length expires:length
//                | FUNCTION2 code:string            (a Redis 7.0 function library, after AUX)
//                | MODULE_AUX ...                   (refused)
//                | key_prefix* type:u8 key:string value(type)
//   key_prefix  := EXPIRETIME_MS unix_ms:8 LE | EXPIRETIME unix_s:4 LE
//                | IDLE seconds:length | FREQ counter:u8
//
//   length      := 00xxxxxx                         6-bit length
//                | 01xxxxxx xxxxxxxx                14-bit length, big-endian
//                | 0x80 u32                         32-bit length, big-endian
//                | 0x81 u64                         64-bit length, big-endian
//   string      := length bytes{length}
//                | 0xC0 i8 | 0xC1 i16 LE | 0xC2 i32 LE     an integer, as decimal text
//                | 0xC3 compressed:length original:length lzf_bytes{compressed}
//   (11xxxxxx is "encoded": its low 6 bits say which of the four; only where a string is read.)
//   binary_double := f64:8 LE                       (ZSET_2 scores, LFU-free doubles)
//   text_double := len:u8 ascii{len} | 253 (NaN) | 254 (+inf) | 255 (-inf)   (old ZSET)
//
// A string is written integer-encoded when it is the canonical decimal text of an integer in
// int32 range of at most 11 characters (as Redis's rdbTryIntegerEncoding), else LZF-compressed
// when compression is on, it is longer than 20 bytes and compression saves at least 4 bytes,
// else raw.
//
// The values of each type (value(type)) are described in rdb_values.h, the compact structures
// inside them in redis_listpack.h (listpack) and redis_legacy.h (ziplist, zipmap, intset); the
// whole-file walk in rdb_file.h.
// DUMP's payload is one value: type:u8 value(type) rdb_version:2 LE crc64:8 LE.
#pragma once

#include <cstdint>

namespace gigakv::persistence::rdb {

inline constexpr int kRdbVersion = 10;     // What gigakv writes (Redis 7.0).
inline constexpr int kOldestReadable = 1;  // Redis 7.0 reads every version from 1.
inline constexpr int kFirstWithChecksum = 5;
inline constexpr char kMagic[] = "REDIS";  // Followed by the version as 4 digits.
inline constexpr size_t kMagicSize = 5;
inline constexpr size_t kHeaderSize = 9;  // Magic + version.

// Opcodes: a byte where a value type is expected.
enum Opcode : uint8_t {
  kOpFunction2 = 245,
  kOpFunction = 246,  // 7.0 release-candidate functions: Redis 7.0 loads them, gigakv refuses.
  kOpModuleAux = 247,
  kOpIdle = 248,
  kOpFreq = 249,
  kOpAux = 250,
  kOpResizeDb = 251,
  kOpExpireTimeMs = 252,
  kOpExpireTime = 253,
  kOpSelectDb = 254,
  kOpEof = 255,
};

// Value types.
enum ValueType : uint8_t {
  kTypeString = 0,
  kTypeList = 1,  // Linked list of strings (RDB < 7).
  kTypeSet = 2,
  kTypeZSet = 3,  // Text doubles.
  kTypeHash = 4,
  kTypeZSet2 = 5,  // Binary doubles.
  kTypeModule = 6,
  kTypeModule2 = 7,
  kTypeHashZipmap = 9,
  kTypeListZiplist = 10,
  kTypeSetIntset = 11,
  kTypeZSetZiplist = 12,
  kTypeHashZiplist = 13,
  kTypeListQuicklist = 14,
  kTypeStreamListpacks = 15,
  kTypeHashListpack = 16,
  kTypeZSetListpack = 17,
  kTypeListQuicklist2 = 18,
  kTypeStreamListpacks2 = 19,
};

// Length encoding: the top two bits of the first byte.
inline constexpr uint8_t kLen6Bit = 0;
inline constexpr uint8_t kLen14Bit = 1;
inline constexpr uint8_t kLen32Bit = 0x80;
inline constexpr uint8_t kLen64Bit = 0x81;
inline constexpr uint8_t kLenEncoded = 3;  // 11xxxxxx: a special string encoding follows.

// Special string encodings (the low 6 bits of an 11xxxxxx byte).
inline constexpr uint8_t kEncInt8 = 0;
inline constexpr uint8_t kEncInt16 = 1;
inline constexpr uint8_t kEncInt32 = 2;
inline constexpr uint8_t kEncLzf = 3;

// Quicklist 2 node containers.
inline constexpr uint64_t kQuicklistNodePlain = 1;
inline constexpr uint64_t kQuicklistNodePacked = 2;

}  // namespace gigakv::persistence::rdb
