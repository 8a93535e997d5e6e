// What a log record's payload means (the framing around it is log_format.h's): one write's
// deterministic effect, one transaction's effects, or a timestamp annotation. A compact binary
// codec in the spirit of core's byte formats: varints and length-prefixed bytes, no text.
//
//   record      := EFFECT effect | TRANSACTION effect+ | TIMESTAMP unix-seconds:varint
//   EFFECT      := 0x01
//   TRANSACTION := 0x02              -- one EXEC's effects, up to the record's end: all or none
//   TIMESTAMP   := 0x03              -- aof-timestamp-enabled: when the records after it were
//                                    -- written (for point-in-time recovery by hand)
//   effect      := db:varint argc:varint arg{argc}    -- argc >= 1, arg[0] the command name
//   arg         := length:varint byte{length}
//   varint      := LEB128, at most 10 bytes, at most 2^64-1
//
// An effect is a command replayed as it is against the database `db`: absolute expiry times,
// explicit removals (core/include/gigakv/effects.h). The command name is written as text, not as
// a number from a table, so the format does not change when commands are added.
//
// Encoding writes into memory the caller provides (no allocation); decoding validates every
// length against the payload and points into it (no copy). Thread-safe: no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace gigakv::persistence::log {

enum class RecordKind : uint8_t { kEffect = 1, kTransaction = 2, kTimestamp = 3 };

// Encoding. A record is built as its kind byte followed by one (kEffect) or more
// (kTransaction) effects.
inline constexpr size_t kRecordKindSize = 1;
size_t EncodedEffectSize(int db, absl::Span<const std::string_view> args);
// Writes the effect at `out` (room for EncodedEffectSize bytes) and returns the byte after it.
char* EncodeEffect(char* out, int db, absl::Span<const std::string_view> args);
// Convenience for tests and tools: appends a whole record to `out`.
void AppendEffectRecord(int db, absl::Span<const std::string_view> args, std::string* out);
void AppendTimestampRecord(uint64_t unix_seconds, std::string* out);

struct DecodedEffect {
  uint64_t db = 0;
  std::vector<std::string_view> args;  // Point into the payload.
};

// A decoded record, reusable: decoding into it again keeps its vectors' capacity.
struct DecodedRecord {
  RecordKind kind = RecordKind::kEffect;
  uint64_t unix_seconds = 0;  // kTimestamp.
  // kEffect: one; kTransaction: one or more. Only the first effect_count entries are valid.
  size_t effect_count = 0;
  std::vector<DecodedEffect> effects;

  absl::Span<const DecodedEffect> effects_view() const {
    return absl::MakeConstSpan(effects.data(), effect_count);
  }
};

// Decodes `payload` into *record; the views point into `payload`. An error names the byte
// offset within the payload and what is wrong (unknown kind, truncated varint or argument,
// an effect without arguments, bytes after a complete effect or timestamp).
absl::Status DecodeRecord(std::string_view payload, DecodedRecord* record);

}  // namespace gigakv::persistence::log
