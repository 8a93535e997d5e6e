#include "persistence/rdb/rdb_file.h"

#include <algorithm>
#include <new>
#include <stdexcept>

#include "absl/strings/escaping.h"
#include "gigakv/strings.h"
#include "persistence/rdb/rdb_format.h"

namespace gigakv::persistence::rdb {
namespace {

// `status` with the key it concerns: a refused stream or a corrupt hash is found by its name.
absl::Status WithKey(const absl::Status& status, std::string_view key) {
  constexpr size_t kShown = 64;
  const std::string shown = absl::CEscape(ToAbsl(key.substr(0, kShown)));
  return absl::Status(status.code(), StrCat(FromAbsl(status.message()), " (key \"", shown,
                                            key.size() > kShown ? "\"...)" : "\")"));
}

absl::StatusOr<RdbLoadResult> Load(RdbReader& reader, const RdbLoadOptions& options,
                                   const RdbLoadHandler& handler) {
  RdbLoadResult result;
  absl::StatusOr<int> version = reader.ReadHeader();
  if (!version.ok()) return version.status();
  result.version = *version;
  if (handler.on_header) {
    if (absl::Status status = handler.on_header(result.version); !status.ok()) return status;
  }

  int db = 0;
  RdbKey pending;  // Prefixes gathered for the next key.
  bool has_prefix = false;
  std::string aux_key, aux_value;
  for (;;) {
    const uint64_t item_offset = reader.offset();
    absl::StatusOr<uint8_t> byte = reader.ReadByte();
    if (!byte.ok()) return byte.status();
    const uint8_t op = *byte;
    if (!has_prefix) pending.offset = item_offset;
    switch (op) {
      case kOpEof: {
        // A prefix without its key is dropped, as Redis does.
        if (result.version >= kFirstWithChecksum) {
          if (absl::Status status = reader.ReadChecksum(&result.checksum_verified); !status.ok()) {
            return status;
          }
        }
        result.bytes = reader.offset();
        return result;
      }
      case kOpSelectDb: {
        absl::StatusOr<uint64_t> id = reader.ReadLength();
        if (!id.ok()) return id.status();
        if (*id >= static_cast<uint64_t>(options.databases)) {
          return RdbReader::CorruptAt(item_offset,
                                      StrCat("the file selects database ", *id, " but only ",
                                             options.databases, " are configured"));
        }
        db = static_cast<int>(*id);
        if (handler.on_select_db) {
          if (absl::Status status = handler.on_select_db(db); !status.ok()) return status;
        }
        continue;
      }
      case kOpResizeDb: {
        absl::StatusOr<uint64_t> keys = reader.ReadLength();
        if (!keys.ok()) return keys.status();
        absl::StatusOr<uint64_t> expires = reader.ReadLength();
        if (!expires.ok()) return expires.status();
        if (handler.on_resize_db) {
          if (absl::Status status = handler.on_resize_db(db, *keys, *expires); !status.ok()) {
            return status;
          }
        }
        continue;
      }
      case kOpAux: {
        if (absl::Status status = reader.ReadString(&aux_key, options.max_string_length);
            !status.ok()) {
          return status;
        }
        if (absl::Status status = reader.ReadString(&aux_value, options.max_string_length);
            !status.ok()) {
          return status;
        }
        if (handler.on_aux) {
          if (absl::Status status = handler.on_aux(aux_key, aux_value); !status.ok()) {
            return status;
          }
        }
        continue;
      }
      case kOpExpireTimeMs: {
        absl::StatusOr<int64_t> ms = reader.ReadMillis();
        if (!ms.ok()) return ms.status();
        // Redis's "no expiry" is -1, in memory and in the file alike.
        pending.expire_ms = *ms == -1 ? std::nullopt : std::optional<int64_t>(*ms);
        has_prefix = true;
        continue;
      }
      case kOpExpireTime: {
        absl::StatusOr<int64_t> seconds = reader.ReadSeconds32();
        if (!seconds.ok()) return seconds.status();
        pending.expire_ms = *seconds * 1000;
        has_prefix = true;
        continue;
      }
      case kOpIdle: {
        absl::StatusOr<uint64_t> idle = reader.ReadLength();
        if (!idle.ok()) return idle.status();
        pending.idle_seconds = *idle;
        has_prefix = true;
        continue;
      }
      case kOpFreq: {
        absl::StatusOr<uint8_t> freq = reader.ReadByte();
        if (!freq.ok()) return freq.status();
        pending.freq = *freq;
        has_prefix = true;
        continue;
      }
      case kOpFunction2: {
        std::string code;
        if (absl::Status status = reader.ReadString(&code, options.max_string_length);
            !status.ok()) {
          return status;
        }
        if (!handler.on_function) {
          return absl::UnimplementedError(
              StrCat("the file holds a function library (FUNCTION2), which gigakv does not "
                     "support, at offset ",
                     item_offset));
        }
        if (absl::Status status = handler.on_function(code); !status.ok()) return status;
        continue;
      }
      case kOpFunction:
        return absl::UnimplementedError(StrCat(
            "pre-release function format (FUNCTION) is not supported, at offset ", item_offset));
      case kOpModuleAux:
        return absl::UnimplementedError(
            StrCat("module data (MODULE_AUX) is not supported, at offset ", item_offset));
      default:
        break;
    }
    if (!IsValueType(op)) {
      return RdbReader::CorruptAt(
          item_offset, StrCat("unknown RDB value type or opcode ", static_cast<int>(op)));
    }
    // A key: its name, then its value.
    if (absl::Status status = reader.ReadString(&pending.key, options.max_string_length);
        !status.ok()) {
      return status;
    }
    absl::StatusOr<LoadedValue> value =
        ReadValue(reader, op, options.limits, options.max_string_length);
    if (!value.ok()) return WithKey(value.status(), pending.key);
    pending.db = db;
    pending.value = std::move(*value);
    // As Redis: an empty key is skipped whatever its expiry; only then is the expiry looked at.
    if (options.drop_expired && pending.value.kind != LoadedValue::Kind::kEmpty &&
        pending.expire_ms.has_value() && *pending.expire_ms < options.now_ms) {
      ++result.expired_keys;
    } else {
      ++result.keys;
      if (pending.value.kind == LoadedValue::Kind::kEmpty) ++result.empty_keys;
      if (absl::Status status = handler.on_key(pending); !status.ok()) return status;
    }
    pending = RdbKey();
    has_prefix = false;
  }
}

}  // namespace

absl::StatusOr<RdbLoadResult> LoadRdb(RdbReader& reader, const RdbLoadOptions& options,
                                      const RdbLoadHandler& handler) {
  // Values catch their own allocation failures (ReadValue); this covers keys, AUX fields and
  // the callbacks, so that none escapes an API that returns Status.
  try {
    return Load(reader, options, handler);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  return absl::ResourceExhaustedError(
      StrCat("out of memory loading the RDB, at offset ", reader.offset()));
}

void RdbFileWriter::Begin(const RdbFileInfo& info, const std::vector<std::string>& functions) {
  writer_->WriteHeader();
  writer_->WriteAux("redis-ver", info.redis_ver);
  writer_->WriteAux("redis-bits", StrCat(info.redis_bits));
  writer_->WriteAux("ctime", StrCat(info.ctime));
  writer_->WriteAux("used-mem", StrCat(info.used_mem));
  writer_->WriteAux("aof-base", info.aof_base ? "1" : "0");
  for (const std::string& code : functions) {
    writer_->WriteByte(kOpFunction2);
    writer_->WriteString(code);
  }
}

void RdbFileWriter::SelectDb(int db, uint64_t keys, uint64_t expires) {
  writer_->WriteByte(kOpSelectDb);
  writer_->WriteLength(static_cast<uint64_t>(db));
  writer_->WriteByte(kOpResizeDb);
  writer_->WriteLength(keys);
  writer_->WriteLength(expires);
}

absl::Status RdbFileWriter::WriteKey(const RecordView& record, std::optional<uint64_t> idle_seconds,
                                     std::optional<uint8_t> freq) {
  if (record.expire_ms != 0) {
    writer_->WriteByte(kOpExpireTimeMs);
    writer_->WriteMillis(record.expire_ms);
  }
  if (idle_seconds.has_value()) {
    writer_->WriteByte(kOpIdle);
    writer_->WriteLength(*idle_seconds);
  }
  if (freq.has_value()) {
    writer_->WriteByte(kOpFreq);
    writer_->WriteByte(*freq);
  }
  writer_->WriteByte(RdbTypeOf(record));
  writer_->WriteString(record.key);
  WriteValueBody(*writer_, record);
  return writer_->MaybeFlush();
}

absl::Status WriteRdbFile(RdbWriter& writer, const RdbFileInfo& info,
                          const std::vector<RdbFileEntry>& entries) {
  RdbFileWriter file(&writer);
  file.Begin(info);
  for (size_t i = 0; i < entries.size();) {
    const int db = entries[i].db;
    size_t end = i;
    uint64_t expires = 0;
    for (; end < entries.size() && entries[end].db == db; ++end) {
      if (entries[end].record.expire_ms != 0) ++expires;
    }
    file.SelectDb(db, end - i, expires);
    for (; i < end; ++i) {
      if (absl::Status status = file.WriteKey(entries[i].record); !status.ok()) return status;
    }
  }
  return file.Finish();
}

}  // namespace gigakv::persistence::rdb
