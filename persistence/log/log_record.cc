#include "persistence/log/log_record.h"

#include <cstring>

#include "core/varint.h"
#include "gigakv/strings.h"

namespace gigakv::persistence::log {

namespace {

class PayloadReader {
 public:
  // Reads `payload` from byte `start` (offsets in errors count from the payload's first byte).
  PayloadReader(std::string_view payload, size_t start) : payload_(payload), pos_(start) {}

  bool done() const { return pos_ == payload_.size(); }
  size_t pos() const { return pos_; }

  absl::Status Varint(uint64_t* value) {
    const size_t start = pos_;
    uint64_t result = 0;
    for (int i = 0; i < static_cast<int>(varint::kMaxBytes); ++i) {
      if (pos_ == payload_.size()) return ErrorAt(start, "truncated varint");
      const uint8_t byte = static_cast<uint8_t>(payload_[pos_++]);
      if (i == 9 && byte > 1) return ErrorAt(start, "varint overflows 64 bits");
      result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
      if ((byte & 0x80) == 0) {
        *value = result;
        return absl::OkStatus();
      }
    }
    return ErrorAt(start, "varint longer than 10 bytes");
  }

  absl::Status Bytes(std::string_view* bytes) {
    const size_t at = pos_;
    uint64_t length = 0;
    if (absl::Status status = Varint(&length); !status.ok()) return status;
    if (length > payload_.size() - pos_) {
      pos_ = at;
      return Error(StrCat("argument of ", length, " bytes runs past the record"));
    }
    *bytes = payload_.substr(pos_, length);
    pos_ += length;
    return absl::OkStatus();
  }

  absl::Status Error(std::string_view what) const { return ErrorAt(pos_, what); }
  static absl::Status ErrorAt(size_t offset, std::string_view what) {
    return absl::DataLossError(StrCat("bad log record at payload byte ", offset, ": ", what));
  }

 private:
  std::string_view payload_;
  size_t pos_;
};

absl::Status DecodeEffect(PayloadReader& reader, DecodedEffect* effect) {
  if (absl::Status status = reader.Varint(&effect->db); !status.ok()) return status;
  uint64_t argc = 0;
  if (absl::Status status = reader.Varint(&argc); !status.ok()) return status;
  if (argc == 0) return reader.Error("effect without a command");
  effect->args.clear();
  for (uint64_t i = 0; i < argc; ++i) {
    // Each argument takes at least one byte: a count beyond the bytes left is damage, caught
    // before it could size anything.
    if (reader.done()) return reader.Error("effect has fewer arguments than its count");
    std::string_view arg;
    if (absl::Status status = reader.Bytes(&arg); !status.ok()) return status;
    effect->args.push_back(arg);
  }
  return absl::OkStatus();
}

}  // namespace

size_t EncodedEffectSize(int db, absl::Span<const std::string_view> args) {
  size_t size = varint::Size(static_cast<uint64_t>(db)) + varint::Size(args.size());
  for (std::string_view arg : args) size += varint::Size(arg.size()) + arg.size();
  return size;
}

char* EncodeEffect(char* out, int db, absl::Span<const std::string_view> args) {
  out = varint::Put(out, static_cast<uint64_t>(db));
  out = varint::Put(out, args.size());
  for (std::string_view arg : args) {
    out = varint::Put(out, arg.size());
    if (!arg.empty()) std::memcpy(out, arg.data(), arg.size());
    out += arg.size();
  }
  return out;
}

void AppendEffectRecord(int db, absl::Span<const std::string_view> args, std::string* out) {
  const size_t start = out->size();
  out->resize(start + kRecordKindSize + EncodedEffectSize(db, args));
  char* p = out->data() + start;
  *p++ = static_cast<char>(RecordKind::kEffect);
  EncodeEffect(p, db, args);
}

void AppendTimestampRecord(uint64_t unix_seconds, std::string* out) {
  char buffer[1 + varint::kMaxBytes];
  buffer[0] = static_cast<char>(RecordKind::kTimestamp);
  char* end = varint::Put(buffer + 1, unix_seconds);
  out->append(buffer, static_cast<size_t>(end - buffer));
}

absl::Status DecodeRecord(std::string_view payload, DecodedRecord* record) {
  record->effect_count = 0;
  if (payload.empty()) return absl::DataLossError("bad log record: empty");
  PayloadReader reader(payload, kRecordKindSize);
  const uint8_t kind = static_cast<uint8_t>(payload[0]);
  auto next_effect = [&]() -> DecodedEffect* {
    if (record->effects.size() == record->effect_count) record->effects.emplace_back();
    return &record->effects[record->effect_count++];
  };
  switch (kind) {
    case static_cast<uint8_t>(RecordKind::kEffect):
      record->kind = RecordKind::kEffect;
      if (absl::Status status = DecodeEffect(reader, next_effect()); !status.ok()) return status;
      break;
    case static_cast<uint8_t>(RecordKind::kTransaction):
      record->kind = RecordKind::kTransaction;
      do {
        if (absl::Status status = DecodeEffect(reader, next_effect()); !status.ok()) {
          return status;
        }
      } while (!reader.done());
      break;
    case static_cast<uint8_t>(RecordKind::kTimestamp):
      record->kind = RecordKind::kTimestamp;
      if (absl::Status status = reader.Varint(&record->unix_seconds); !status.ok()) {
        return status;
      }
      break;
    default:
      return absl::DataLossError(StrCat("bad log record: unknown kind ", kind));
  }
  if (!reader.done()) return reader.Error("bytes after the end of the record");
  return absl::OkStatus();
}

}  // namespace gigakv::persistence::log
