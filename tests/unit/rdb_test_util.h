// Helpers shared by the RDB value and file tests: encoding one value, decoding one, and a
// canonical text form of a collection for comparisons.
#pragma once

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "core/types/hash.h"
#include "core/types/quicklist.h"
#include "core/types/set.h"
#include "core/types/zset.h"
#include "gigakv/key_table.h"
#include "persistence/rdb/rdb_file.h"
#include "persistence/rdb/rdb_io.h"
#include "persistence/rdb/rdb_values.h"

namespace gigakv::persistence::rdb::testing {

// A writer's sink that keeps the bytes and the size of every piece handed to it.
struct RecordingSink {
  std::string bytes;
  std::vector<size_t> pieces;
  RdbSink AsSink() {
    return [this](std::string_view piece) {
      pieces.push_back(piece.size());
      bytes.append(piece);
      return absl::OkStatus();
    };
  }
};

inline std::string Hex(std::string_view bytes) {
  return absl::BytesToHexString(absl::string_view(bytes.data(), bytes.size()));
}
inline std::string Unhex(std::string_view hex) {
  return absl::HexStringToBytes(absl::string_view(hex.data(), hex.size()));
}

inline RecordView ObjectRecord(const Object* object) {
  RecordView view;
  view.kind = ValueKind::kObject;
  view.object = const_cast<Object*>(object);
  return view;
}
inline RecordView BytesRecord(ValueKind kind, std::string_view bytes) {
  RecordView view;
  view.kind = kind;
  view.str = bytes;
  return view;
}

// The type byte and value WriteValue produces for `record`.
inline std::string EncodeValue(const RecordView& record, bool compress = true) {
  std::string out;
  RdbWriter writer(
      [&](std::string_view bytes) {
        out.append(bytes);
        return absl::OkStatus();
      },
      RdbWriter::Options{.compress = compress});
  WriteValue(writer, record);
  (void)writer.Flush();
  return out;
}

// Reads a type byte and a value from `bytes`, which it must consume exactly.
inline absl::StatusOr<LoadedValue> DecodeValue(std::string_view bytes,
                                               const CollectionLimits& limits = {}) {
  RdbReader reader(bytes);
  absl::StatusOr<uint8_t> type = reader.ReadByte();
  if (!type.ok()) return type.status();
  absl::StatusOr<LoadedValue> value = ReadValue(reader, *type, limits);
  if (value.ok() && reader.offset() != bytes.size()) {
    return absl::DataLossError("value did not consume its bytes");
  }
  return value;
}

inline std::string ScoreText(double score) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", score);
  return text;
}

// Lists in order; sets sorted; hashes as sorted "field=value"; sorted sets as "member@score" in
// rank order.
inline std::vector<std::string> Contents(const Object& object) {
  std::vector<std::string> out;
  switch (object.type()) {
    case KeyType::kList:
      object.ForEachElement([&](std::string_view e) { out.emplace_back(e); });
      return out;
    case KeyType::kSet:
      object.ForEachElement([&](std::string_view e) { out.emplace_back(e); });
      std::sort(out.begin(), out.end());
      return out;
    case KeyType::kHash:
      static_cast<const Hash&>(object).ForEach([&](std::string_view f, std::string_view v) {
        out.push_back(std::string(f) + "=" + std::string(v));
      });
      std::sort(out.begin(), out.end());
      return out;
    case KeyType::kZSet: {
      const auto& zset = static_cast<const ZSet&>(object);
      zset.Visit(0, zset.size(), false, [&](std::string_view m, double s) {
        out.push_back(std::string(m) + "@" + ScoreText(s));
      });
      return out;
    }
    case KeyType::kStream:  // Entry IDs in order.
      object.ForEachElement([&](std::string_view e) { out.emplace_back(e); });
      return out;
    case KeyType::kString:
      break;
  }
  return out;
}

// A whole file of `entries` (WriteRdbFile) written through a small flush size.
inline std::string WriteFile(const std::vector<RdbFileEntry>& entries, const RdbFileInfo& info,
                             RdbWriter::Options options = {}) {
  std::string out;
  RdbWriter writer(
      [&](std::string_view bytes) {
        out.append(bytes);
        return absl::OkStatus();
      },
      options, /*flush_bytes=*/64);
  if (!WriteRdbFile(writer, info, entries).ok()) out.clear();  // Never with a memory sink.
  return out;
}

inline RdbFileEntry Entry(int db, std::string_view key, ValueKind kind, std::string_view value,
                          int64_t expire_ms = 0) {
  RdbFileEntry entry;
  entry.db = db;
  entry.record = BytesRecord(kind, value);
  entry.record.key = key;
  entry.record.expire_ms = expire_ms;
  return entry;
}

}  // namespace gigakv::persistence::rdb::testing
