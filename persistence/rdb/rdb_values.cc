#include "persistence/rdb/rdb_values.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>

#include "core/types/hash.h"
#include "core/types/listpack.h"
#include "core/types/quicklist.h"
#include "core/types/set.h"
#include "core/types/stream.h"
#include "core/types/zset.h"
#include "gigakv/numbers.h"
#include "gigakv/strings.h"
#include "persistence/rdb/rdb_format.h"
#include "persistence/rdb/redis_legacy.h"
#include "persistence/rdb/redis_listpack.h"

namespace gigakv::persistence::rdb {
namespace {

// A count read from the input may be hostile: sizing hints derived from it stay below this, and
// structures grow as the elements actually arrive.
constexpr uint64_t kMaxSizeHint = 1 << 16;

// --- Writing -----------------------------------------------------------------------------------

// The score a gigakv zset listpack entry holds (core/types/zset.h's score grammar).
double GigakvScore(const ListpackEntry& entry) {
  if (entry.is_int) return static_cast<double>(entry.int_value);
  double score = 0;
  if (entry.str.size() == 9 && entry.str[8] == 'd') {
    std::memcpy(&score, entry.str.data(), sizeof(score));
  } else {
    ParseDouble(entry.str, &score);  // Not produced by ZSet; kept total for safety.
  }
  return score;
}

// Redis's double2ll: true when `d` is integral and within +-LLONG_MAX/2.
bool DoubleToInt64(double d, int64_t* out) {
  constexpr double kLimit = static_cast<double>(INT64_MAX / 2);
  if (!(d >= -kLimit && d <= kLimit)) return false;  // Also false for NaN.
  const auto value = static_cast<int64_t>(d);
  if (static_cast<double>(value) != d) return false;
  *out = value;
  return true;
}

// A sorted-set score entry as Redis's zzlInsertAt writes it: an integer when double2ll allows,
// else d2string's text.
void AddRedisScore(RedisListpackBuilder& builder, double score) {
  int64_t integer;
  if (DoubleToInt64(score, &integer)) {
    builder.AddInteger(integer);
  } else if (std::isinf(score)) {
    builder.Add(score < 0 ? "-inf" : "inf");
  } else {
    char text[32];
    const int length = std::snprintf(text, sizeof(text), "%.17g", score);
    builder.Add(std::string_view(text, static_cast<size_t>(length)));
  }
}

// Writes a member as Redis's rdbSaveRawString would (integers in int32 range int-encoded).
void WriteEntryString(RdbWriter& writer, const ListpackEntry& entry) {
  if (entry.is_int) {
    writer.WriteIntegerString(entry.int_value);
  } else {
    writer.WriteString(entry.str);
  }
}

void WriteHashListpack(RdbWriter& writer, std::string_view entries) {
  std::string* blob = writer.blob_scratch();
  blob->clear();
  RedisListpackBuilder builder(blob);
  DenseListpack::ForEachEntry(entries, [&](const ListpackEntry& e) { builder.Add(e); });
  builder.Finish();
  writer.WriteString(*blob);
}

void WriteZSetListpack(RdbWriter& writer, std::string_view entries) {
  std::string* blob = writer.blob_scratch();
  blob->clear();
  RedisListpackBuilder builder(blob);
  bool member = true;
  DenseListpack::ForEachEntry(entries, [&](const ListpackEntry& e) {
    if (member) {
      builder.Add(e);
    } else {
      AddRedisScore(builder, GigakvScore(e));
    }
    member = !member;
  });
  builder.Finish();
  writer.WriteString(*blob);
}

// gigakv's listpack sets: Redis 7.0 has no such type, so a plain SET.
void WriteSetListpack(RdbWriter& writer, std::string_view entries) {
  writer.WriteLength(DenseListpack::EntriesCount(entries));
  DenseListpack::ForEachEntry(entries, [&](const ListpackEntry& e) {
    WriteEntryString(writer, e);
    (void)writer.MaybeFlush();
  });
}

void WriteList(RdbWriter& writer, const List& list) {
  writer.WriteLength(list.node_count());
  const uint64_t plain_threshold = writer.options().plain_node_threshold;
  list.ForEachNode([&](const Listpack& node) {
    // A sink error sticks in the writer: the caller sees it at its next MaybeFlush.
    (void)writer.MaybeFlush();
    if (node.size() == 1) {
      const ListpackEntry only = node.Get(node.First());
      if (!only.is_int && only.str.size() >= plain_threshold) {
        writer.WriteLength(kQuicklistNodePlain);
        writer.WriteString(only.str);
        return;
      }
    }
    writer.WriteLength(kQuicklistNodePacked);
    std::string* blob = writer.blob_scratch();
    blob->clear();
    RedisListpackBuilder builder(blob);
    Listpack::ForEachEntry(node.entries(), [&](const ListpackEntry& e) { builder.Add(e); });
    builder.Finish();
    writer.WriteString(*blob);
  });
}

}  // namespace

uint8_t RdbTypeOf(const RecordView& record) {
  switch (record.kind) {
    case ValueKind::kStringInt:
    case ValueKind::kStringEmbstr:
    case ValueKind::kStringRaw:
    case ValueKind::kStringExternal:
      return kTypeString;
    case ValueKind::kInlineHash:
      return kTypeHashListpack;
    case ValueKind::kInlineSet:
      return kTypeSet;
    case ValueKind::kInlineIntset:
      return kTypeSetIntset;
    case ValueKind::kInlineZSet:
      return kTypeZSetListpack;
    case ValueKind::kObject:
      break;
  }
  const Object& object = *record.object;
  switch (object.type()) {
    case KeyType::kString:
      return kTypeString;
    case KeyType::kList:
      return kTypeListQuicklist2;
    case KeyType::kSet: {
      const auto& set = static_cast<const Set&>(object);
      return set.encoding() == Set::Encoding::kIntset ? kTypeSetIntset : kTypeSet;
    }
    case KeyType::kZSet:
      return static_cast<const ZSet&>(object).is_listpack() ? kTypeZSetListpack : kTypeZSet2;
    case KeyType::kHash:
      return static_cast<const Hash&>(object).is_listpack() ? kTypeHashListpack : kTypeHash;
    case KeyType::kStream:
      return kTypeStreamListpacks2;
  }
  return kTypeString;
}

// STREAM_LISTPACKS_2 (Redis's rdbSaveObject of a stream):
//   stream   := nodes:len (node_key:string[16] listpack:string){nodes}
//               length:len last_ms:len last_seq:len first_ms:len first_seq:len
//               max_deleted_ms:len max_deleted_seq:len entries_added:len groups:len group*
//   node_key := ms:u64 BE seq:u64 BE (the node's master ID; also the form of every raw_id)
//   group    := name:string last_ms:len last_seq:len entries_read:len (-1 as 2^64 - 1)
//               pel:len (raw_id:16 bytes delivery_time:millis delivery_count:len){pel}
//               consumers:len consumer*
//   consumer := name:string seen_time:millis pel:len raw_id{pel}   (each in the group's pel)
// STREAM_LISTPACKS (version 1) lacks first/max-deleted IDs, entries added and entries_read.
void WriteRawId(RdbWriter& writer, const StreamID& id) {
  char raw[16];
  for (int i = 0; i < 8; ++i) {
    raw[i] = static_cast<char>(id.ms >> (56 - 8 * i));
    raw[8 + i] = static_cast<char>(id.seq >> (56 - 8 * i));
  }
  writer.WriteRaw(std::string_view(raw, sizeof(raw)));
}

void WriteStream(RdbWriter& writer, const Stream& stream) {
  writer.WriteLength(stream.node_count());
  std::string key;
  stream.ForEachNode([&](const StreamID& master, std::string_view listpack) {
    key.clear();
    for (int i = 0; i < 8; ++i) key.push_back(static_cast<char>(master.ms >> (56 - 8 * i)));
    for (int i = 0; i < 8; ++i) key.push_back(static_cast<char>(master.seq >> (56 - 8 * i)));
    writer.WriteString(key);
    writer.WriteString(listpack);
    (void)writer.MaybeFlush();
  });
  writer.WriteLength(stream.length());
  for (const StreamID& id : {stream.last_id(), stream.first_id(), stream.max_deleted_id()}) {
    writer.WriteLength(id.ms);
    writer.WriteLength(id.seq);
  }
  writer.WriteLength(stream.entries_added());
  writer.WriteLength(stream.groups().size());
  for (const auto& [name, group] : stream.groups()) {
    writer.WriteString(name);
    writer.WriteLength(group->last_id.ms);
    writer.WriteLength(group->last_id.seq);
    writer.WriteLength(static_cast<uint64_t>(group->entries_read));
    writer.WriteLength(group->pel.size());
    for (const auto& [id, nack] : group->pel) {
      WriteRawId(writer, id);
      writer.WriteMillis(nack->delivery_time_ms);
      writer.WriteLength(nack->delivery_count);
      (void)writer.MaybeFlush();
    }
    writer.WriteLength(group->consumers.size());
    for (const auto& [consumer_name, consumer] : group->consumers) {
      writer.WriteString(consumer_name);
      writer.WriteMillis(consumer->seen_time_ms);
      writer.WriteLength(consumer->pel.size());
      for (const auto& [id, nack] : consumer->pel) WriteRawId(writer, id);
      (void)writer.MaybeFlush();
    }
  }
}

void WriteValue(RdbWriter& writer, const RecordView& record) {
  writer.WriteByte(RdbTypeOf(record));
  WriteValueBody(writer, record);
}

std::string EncodeDumpPayload(const RecordView& record, bool compress) {
  std::string payload;
  RdbWriter writer(
      [&payload](std::string_view bytes) {
        payload.append(bytes);
        return absl::OkStatus();
      },
      RdbWriter::Options{.compress = compress});
  WriteValue(writer, record);
  writer.FinishPayload().IgnoreError();  // An in-memory sink never fails.
  return payload;
}

void WriteValueBody(RdbWriter& writer, const RecordView& record) {
  switch (record.kind) {
    case ValueKind::kStringInt: {
      int64_t value;
      if (ParseInt64(record.str, &value)) {
        writer.WriteIntegerString(value);
      } else {
        writer.WriteString(record.str);
      }
      return;
    }
    case ValueKind::kStringEmbstr:
    case ValueKind::kStringRaw:
    case ValueKind::kStringExternal:
      writer.WriteString(record.str);
      return;
    case ValueKind::kInlineHash:
      WriteHashListpack(writer, record.str);
      return;
    case ValueKind::kInlineSet:
      WriteSetListpack(writer, record.str);
      return;
    case ValueKind::kInlineIntset:
      // gigakv's Intset buffer is Redis's intset byte for byte on a little-endian host.
      static_assert(std::endian::native == std::endian::little);
      writer.WriteString(record.str);
      return;
    case ValueKind::kInlineZSet:
      WriteZSetListpack(writer, record.str);
      return;
    case ValueKind::kObject:
      break;
  }
  const Object& object = *record.object;
  switch (object.type()) {
    case KeyType::kString:  // Not an Object kind the store keeps; nothing sensible to write.
      writer.WriteString("");
      return;
    case KeyType::kList:
      WriteList(writer, static_cast<const List&>(object));
      return;
    case KeyType::kSet: {
      const auto& set = static_cast<const Set&>(object);
      if (set.encoding() == Set::Encoding::kIntset) {
        writer.WriteString(set.CompactBytes());
      } else if (set.encoding() == Set::Encoding::kListpack) {
        WriteSetListpack(writer, set.CompactBytes());
      } else {
        writer.WriteLength(set.Length());
        set.ForEach([&](std::string_view member) {
          writer.WriteString(member);
          (void)writer.MaybeFlush();
        });
      }
      return;
    }
    case KeyType::kZSet: {
      const auto& zset = static_cast<const ZSet&>(object);
      if (zset.is_listpack()) {
        WriteZSetListpack(writer, zset.CompactBytes());
      } else {
        writer.WriteLength(zset.size());
        // Highest first, as Redis writes its skiplist (its loader then inserts at the head).
        zset.Visit(0, zset.size(), /*reverse=*/true, [&](std::string_view member, double score) {
          writer.WriteString(member);
          writer.WriteBinaryDouble(score);
          (void)writer.MaybeFlush();
        });
      }
      return;
    }
    case KeyType::kHash: {
      const auto& hash = static_cast<const Hash&>(object);
      if (hash.is_listpack()) {
        WriteHashListpack(writer, hash.CompactBytes());
      } else {
        writer.WriteLength(hash.Length());
        hash.ForEach([&](std::string_view field, std::string_view value) {
          writer.WriteString(field);
          writer.WriteString(value);
          (void)writer.MaybeFlush();
        });
      }
      return;
    }
    case KeyType::kStream:
      WriteStream(writer, static_cast<const Stream&>(object));
      return;
  }
}

// --- Reading -----------------------------------------------------------------------------------

namespace {

LoadedValue Empty(KeyType type) {
  LoadedValue value;
  value.kind = LoadedValue::Kind::kEmpty;
  value.type = type;
  return value;
}

LoadedValue FromObject(std::unique_ptr<Object> object) {
  LoadedValue value;
  const KeyType type = object->type();
  if (object->Length() == 0 && type != KeyType::kStream) return Empty(type);
  value.kind = LoadedValue::Kind::kObject;
  value.type = type;
  value.object = std::move(object);
  return value;
}

// Reads a value's elements with the reader, reporting errors at the reader's offset, or, for a
// value read as one blob, at the blob's start.
class ValueLoader {
 public:
  ValueLoader(RdbReader& reader, const CollectionLimits& limits, uint64_t max_string_length)
      : reader_(reader), limits_(limits), max_string_length_(max_string_length) {}

  absl::StatusOr<LoadedValue> Load(uint8_t type);

 private:
  absl::StatusOr<uint64_t> Length() { return reader_.ReadLength(); }
  absl::Status String(std::string* out) { return reader_.ReadString(out, max_string_length_); }

  absl::StatusOr<LoadedValue> LoadList();
  absl::StatusOr<LoadedValue> LoadSet();
  absl::StatusOr<LoadedValue> LoadZSet(bool binary_scores);
  absl::StatusOr<LoadedValue> LoadHash();
  absl::StatusOr<LoadedValue> LoadQuicklist(bool v2);
  absl::StatusOr<LoadedValue> LoadBlob(uint8_t type);
  absl::StatusOr<LoadedValue> LoadStream(bool v2);
  absl::Status LoadStreamGroups(Stream& stream, bool v2);
  absl::Status RawId(StreamID* id);

  // Walks the pairs of a ziplist or listpack blob: fn(first, second) per pair; an odd count is
  // an error.
  template <typename Walker, typename Fn>
  absl::Status ForEachPair(Walker walker, std::string_view blob, Fn fn);

  RdbReader& reader_;
  const CollectionLimits& limits_;
  uint64_t max_string_length_;
};

absl::StatusOr<LoadedValue> ValueLoader::LoadList() {
  absl::StatusOr<uint64_t> count = Length();
  if (!count.ok()) return count.status();
  if (*count == 0) return Empty(KeyType::kList);
  auto list = std::make_unique<List>(limits_.list_max_listpack_size);
  std::string element;
  for (uint64_t i = 0; i < *count; ++i) {
    if (absl::Status status = String(&element); !status.ok()) return status;
    list->Push(ListEnd::kTail, element);
  }
  return FromObject(std::move(list));
}

absl::StatusOr<LoadedValue> ValueLoader::LoadSet() {
  absl::StatusOr<uint64_t> count = Length();
  if (!count.ok()) return count.status();
  if (*count == 0) return Empty(KeyType::kSet);
  std::string member;
  if (absl::Status status = String(&member); !status.ok()) return status;
  std::unique_ptr<Set> set =
      Set::Create(member, static_cast<size_t>(std::min(*count, kMaxSizeHint)), limits_);
  set->Add(member, limits_);
  for (uint64_t i = 1; i < *count; ++i) {
    if (absl::Status status = String(&member); !status.ok()) return status;
    if (!set->Add(member, limits_)) return reader_.Corrupt("Duplicate set members detected");
  }
  return FromObject(std::move(set));
}

absl::StatusOr<LoadedValue> ValueLoader::LoadZSet(bool binary_scores) {
  absl::StatusOr<uint64_t> count = Length();
  if (!count.ok()) return count.status();
  if (*count == 0) return Empty(KeyType::kZSet);
  auto zset = std::make_unique<ZSet>();
  if (*count > static_cast<uint64_t>(std::max<int64_t>(limits_.zset_max_listpack_entries, 0))) {
    zset->ConvertToSkiplist();
  }
  const ZAddFlags only_new{.nx = true};
  std::string member;
  for (uint64_t i = 0; i < *count; ++i) {
    if (absl::Status status = String(&member); !status.ok()) return status;
    absl::StatusOr<double> score =
        binary_scores ? reader_.ReadBinaryDouble() : reader_.ReadTextDouble();
    if (!score.ok()) return score.status();
    if (std::isnan(*score)) return reader_.Corrupt("Zset with NAN score detected");
    double ignored;
    if (zset->Add(member, *score, only_new, limits_, &ignored) != ZAddOutcome::kAdded) {
      return reader_.Corrupt("Duplicate zset fields detected");
    }
  }
  return FromObject(std::move(zset));
}

absl::StatusOr<LoadedValue> ValueLoader::LoadHash() {
  absl::StatusOr<uint64_t> count = Length();
  if (!count.ok()) return count.status();
  if (*count == 0) return Empty(KeyType::kHash);
  auto hash = std::make_unique<Hash>();
  if (*count > static_cast<uint64_t>(std::max<int64_t>(limits_.hash_max_listpack_entries, 0))) {
    // Sized for the count up front (no rehash while loading), within kMaxSizeHint.
    hash->ConvertToTableFor(static_cast<size_t>(std::min(*count, kMaxSizeHint)));
  }
  std::string field, value;
  for (uint64_t i = 0; i < *count; ++i) {
    if (absl::Status status = String(&field); !status.ok()) return status;
    if (absl::Status status = String(&value); !status.ok()) return status;
    if (!hash->Set(field, value, limits_)) return reader_.Corrupt("Duplicate hash fields detected");
  }
  return FromObject(std::move(hash));
}

absl::StatusOr<LoadedValue> ValueLoader::LoadQuicklist(bool v2) {
  absl::StatusOr<uint64_t> nodes = Length();
  if (!nodes.ok()) return nodes.status();
  if (*nodes == 0) return Empty(KeyType::kList);
  auto list = std::make_unique<List>(limits_.list_max_listpack_size);
  std::string blob, scratch;
  auto push = [&](const ListpackEntry& entry) {
    list->Push(ListEnd::kTail, entry.View(&scratch));
    return absl::OkStatus();
  };
  for (uint64_t i = 0; i < *nodes; ++i) {
    uint64_t container = kQuicklistNodePacked;
    if (v2) {
      absl::StatusOr<uint64_t> read = Length();
      if (!read.ok()) return read.status();
      container = *read;
      if (container != kQuicklistNodePacked && container != kQuicklistNodePlain) {
        return reader_.Corrupt("Quicklist integrity check failed");
      }
    }
    const uint64_t at = reader_.offset();
    if (absl::Status status = String(&blob); !status.ok()) return status;
    if (blob.empty()) return RdbReader::CorruptAt(at, "Quicklist node is empty");
    if (container == kQuicklistNodePlain) {
      list->Push(ListEnd::kTail, blob);
      continue;
    }
    // Redis skips nodes without entries silently; a list left empty is an empty key.
    if (v2) {
      if (!ForEachRedisListpackEntry(blob, push).ok()) {
        return RdbReader::CorruptAt(at, "Listpack integrity check failed");
      }
    } else if (!ForEachZiplistEntry(blob, push).ok()) {
      return RdbReader::CorruptAt(at, "Ziplist integrity check failed");
    }
  }
  return FromObject(std::move(list));
}

template <typename Walker, typename Fn>
absl::Status ValueLoader::ForEachPair(Walker walker, std::string_view blob, Fn fn) {
  ListpackEntry first;
  bool have_first = false;
  absl::Status status = walker(blob, [&](const ListpackEntry& entry) {
    if (!have_first) {
      first = entry;
      have_first = true;
      return absl::OkStatus();
    }
    have_first = false;
    return fn(first, entry);
  });
  if (!status.ok()) return status;
  if (have_first) return absl::DataLossError("odd number of entries");
  return absl::OkStatus();
}

absl::StatusOr<LoadedValue> ValueLoader::LoadBlob(uint8_t type) {
  const uint64_t at = reader_.offset();
  std::string blob;
  if (absl::Status status = String(&blob); !status.ok()) return status;
  std::string first_scratch, second_scratch;
  const absl::Status duplicate = absl::AlreadyExistsError("duplicate");

  // Pairs into a hash: a duplicate field is an error.
  auto hash = std::make_unique<Hash>();
  auto add_pair = [&](const ListpackEntry& field, const ListpackEntry& value) {
    if (!hash->Set(field.View(&first_scratch), value.View(&second_scratch), limits_)) {
      return duplicate;
    }
    return absl::OkStatus();
  };
  // Pairs into a sorted set: a score must be a number, a member new.
  auto zset = std::make_unique<ZSet>();
  auto add_scored = [&](const ListpackEntry& member, const ListpackEntry& score_entry) {
    double score;
    if (score_entry.is_int) {
      score = static_cast<double>(score_entry.int_value);
    } else if (!ParseDouble(score_entry.str, &score)) {
      return absl::DataLossError("invalid score");
    }
    if (std::isnan(score)) return absl::DataLossError("NaN score");
    double ignored;
    if (zset->Add(member.View(&first_scratch), score, ZAddFlags{.nx = true}, limits_, &ignored) !=
        ZAddOutcome::kAdded) {
      return duplicate;
    }
    return absl::OkStatus();
  };
  auto ziplist = [](std::string_view bytes,
                    absl::FunctionRef<absl::Status(const ListpackEntry&)> fn) {
    return ForEachZiplistEntry(bytes, fn);
  };
  auto listpack = [](std::string_view bytes,
                     absl::FunctionRef<absl::Status(const ListpackEntry&)> fn) {
    return ForEachRedisListpackEntry(bytes, fn);
  };

  switch (type) {
    case kTypeHashZipmap: {
      absl::Status status =
          ForEachZipmapPair(blob, [&](std::string_view field, std::string_view value) {
            return hash->Set(field, value, limits_) ? absl::OkStatus() : duplicate;
          });
      if (absl::IsAlreadyExists(status)) {
        return RdbReader::CorruptAt(at, "Hash zipmap with dup elements");
      }
      if (!status.ok()) return RdbReader::CorruptAt(at, "Zipmap integrity check failed");
      return FromObject(std::move(hash));
    }
    case kTypeListZiplist: {
      auto list = std::make_unique<List>(limits_.list_max_listpack_size);
      absl::Status status = ForEachZiplistEntry(blob, [&](const ListpackEntry& entry) {
        list->Push(ListEnd::kTail, entry.View(&first_scratch));
        return absl::OkStatus();
      });
      if (!status.ok()) return RdbReader::CorruptAt(at, "List ziplist integrity check failed");
      return FromObject(std::move(list));
    }
    case kTypeSetIntset: {
      uint32_t count, width;
      if (!ValidateIntset(blob, &count, &width).ok()) {
        return RdbReader::CorruptAt(at, "Intset integrity check failed");
      }
      if (count <= Set::MaxIntsetEntries(limits_)) {
        // Redis's intset bytes are gigakv's Intset buffer on a little-endian host.
        static_assert(std::endian::native == std::endian::little);
        return FromObject(Set::FromCompact(Set::Encoding::kIntset, blob));
      }
      std::unique_ptr<Set> set =
          Set::Create(StrCat(IntsetValueAt(blob, width, 0)),
                      static_cast<size_t>(std::min<uint64_t>(count, kMaxSizeHint)), limits_);
      for (uint32_t i = 0; i < count; ++i) {
        set->Add(StrCat(IntsetValueAt(blob, width, i)), limits_);
      }
      return FromObject(std::move(set));
    }
    case kTypeZSetZiplist:
    case kTypeZSetListpack: {
      absl::Status status = type == kTypeZSetZiplist ? ForEachPair(ziplist, blob, add_scored)
                                                     : ForEachPair(listpack, blob, add_scored);
      if (!status.ok()) {
        return RdbReader::CorruptAt(at, type == kTypeZSetZiplist
                                            ? "Zset ziplist integrity check failed"
                                            : "Zset listpack integrity check failed");
      }
      return FromObject(std::move(zset));
    }
    case kTypeHashZiplist:
    case kTypeHashListpack: {
      absl::Status status = type == kTypeHashZiplist ? ForEachPair(ziplist, blob, add_pair)
                                                     : ForEachPair(listpack, blob, add_pair);
      if (!status.ok()) {
        return RdbReader::CorruptAt(at, type == kTypeHashZiplist
                                            ? "Hash ziplist integrity check failed"
                                            : "Hash listpack integrity check failed");
      }
      return FromObject(std::move(hash));
    }
    default:
      return RdbReader::CorruptAt(at, StrCat("Unknown RDB encoding type ", static_cast<int>(type)));
  }
}

absl::Status ValueLoader::RawId(StreamID* id) {
  std::string raw;
  if (absl::Status status = reader_.ReadExact(16, &raw); !status.ok()) return status;
  *id = {};
  for (int b = 0; b < 8; ++b) {
    id->ms = (id->ms << 8) | static_cast<uint8_t>(raw[b]);
    id->seq = (id->seq << 8) | static_cast<uint8_t>(raw[8 + b]);
  }
  return absl::OkStatus();
}

// The consumer groups of a stream (grammar at WriteStream), with Redis's checks, plus one Redis
// makes only under deep sanitization: every pending entry must belong to a consumer.
absl::Status ValueLoader::LoadStreamGroups(Stream& stream, bool v2) {
  absl::StatusOr<uint64_t> groups = Length();
  if (!groups.ok()) return groups.status();
  std::string name;
  for (uint64_t g = 0; g < *groups; ++g) {
    if (absl::Status status = String(&name); !status.ok()) return status;
    absl::StatusOr<uint64_t> last_ms = Length();
    if (!last_ms.ok()) return last_ms.status();
    absl::StatusOr<uint64_t> last_seq = Length();
    if (!last_seq.ok()) return last_seq.status();
    const StreamID last_id{*last_ms, *last_seq};
    int64_t entries_read = 0;
    if (v2) {
      absl::StatusOr<uint64_t> read = Length();
      if (!read.ok()) return read.status();
      entries_read = static_cast<int64_t>(*read);
    } else {
      entries_read = stream.EstimateDistance(last_id);
    }
    StreamGroup* group = stream.CreateGroup(name, last_id, entries_read);
    if (group == nullptr) return reader_.Corrupt("Duplicated consumer group name");
    absl::StatusOr<uint64_t> pel_size = Length();
    if (!pel_size.ok()) return pel_size.status();
    for (uint64_t i = 0; i < *pel_size; ++i) {
      StreamID id;
      if (absl::Status status = RawId(&id); !status.ok()) return status;
      absl::StatusOr<int64_t> delivery_time = reader_.ReadMillis();
      if (!delivery_time.ok()) return delivery_time.status();
      absl::StatusOr<uint64_t> delivery_count = Length();
      if (!delivery_count.ok()) return delivery_count.status();
      auto nack = std::make_unique<StreamNack>();
      nack->delivery_time_ms = *delivery_time;
      nack->delivery_count = *delivery_count;
      if (!group->pel.try_emplace(id, std::move(nack)).second) {
        return reader_.Corrupt("Duplicated global PEL entry loading stream consumer group");
      }
    }
    absl::StatusOr<uint64_t> consumers = Length();
    if (!consumers.ok()) return consumers.status();
    for (uint64_t c = 0; c < *consumers; ++c) {
      if (absl::Status status = String(&name); !status.ok()) return status;
      StreamConsumer* consumer = group->CreateConsumer(name, 0);
      if (consumer == nullptr) return reader_.Corrupt("Duplicate stream consumer detected.");
      absl::StatusOr<int64_t> seen_time = reader_.ReadMillis();
      if (!seen_time.ok()) return seen_time.status();
      consumer->seen_time_ms = *seen_time;
      absl::StatusOr<uint64_t> owned = Length();
      if (!owned.ok()) return owned.status();
      for (uint64_t i = 0; i < *owned; ++i) {
        StreamID id;
        if (absl::Status status = RawId(&id); !status.ok()) return status;
        auto it = group->pel.find(id);
        if (it == group->pel.end()) {
          return reader_.Corrupt("Consumer entry not found in group global PEL");
        }
        if (it->second->consumer != nullptr ||
            !consumer->pel.emplace(id, it->second.get()).second) {
          return reader_.Corrupt("Duplicated consumer PEL entry loading a stream consumer group");
        }
        it->second->consumer = consumer;
      }
    }
    for (const auto& [id, nack] : group->pel) {
      if (nack->consumer == nullptr) return reader_.Corrupt("Stream CG PEL entry without consumer");
    }
  }
  return absl::OkStatus();
}

// Redis's rdbLoadObject for STREAM_LISTPACKS(_2) (grammar at WriteStream), with every node
// validated deeply whatever sanitize-dump-payload says: a corrupt node is an error, never a crash.
absl::StatusOr<LoadedValue> ValueLoader::LoadStream(bool v2) {
  auto stream = std::make_unique<Stream>();
  absl::StatusOr<uint64_t> nodes = Length();
  if (!nodes.ok()) return nodes.status();
  std::string key, listpack;
  for (uint64_t i = 0; i < *nodes; ++i) {
    if (absl::Status status = String(&key); !status.ok()) return status;
    if (key.size() != 16)
      return reader_.Corrupt("Stream node key entry is not the size of a stream ID");
    const uint64_t at = reader_.offset();
    if (absl::Status status = String(&listpack); !status.ok()) return status;
    absl::Status valid =
        ForEachRedisListpackEntry(listpack, [](const ListpackEntry&) { return absl::OkStatus(); });
    if (!valid.ok()) return RdbReader::CorruptAt(at, StrCat("Stream listpack: ", valid.message()));
    if (redis_listpack::First(listpack) == redis_listpack::kEnd) {
      return RdbReader::CorruptAt(at, "Empty listpack inside stream");
    }
    if (!Stream::IsValidNode(listpack)) {
      return RdbReader::CorruptAt(at, "Stream listpack integrity check failed");
    }
    StreamID master;
    for (int b = 0; b < 8; ++b) {
      master.ms = (master.ms << 8) | static_cast<uint8_t>(key[b]);
      master.seq = (master.seq << 8) | static_cast<uint8_t>(key[8 + b]);
    }
    if (!stream->AddNode(master, std::move(listpack))) {
      return RdbReader::CorruptAt(at, "Listpack re-added with existing key");
    }
    listpack.clear();
  }
  uint64_t numbers[9] = {};
  const int count = v2 ? 8 : 3;  // length, last ID; v2: first ID, max deleted ID, entries added.
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<uint64_t> number = Length();
    if (!number.ok()) return number.status();
    numbers[i] = *number;
  }
  stream->set_length(numbers[0]);
  stream->set_last_id({numbers[1], numbers[2]});
  if (v2) {
    stream->set_first_id({numbers[3], numbers[4]});
    stream->set_max_deleted_id({numbers[5], numbers[6]});
    stream->set_entries_added(numbers[7]);
  } else {
    StreamID first;
    if (stream->EdgeId(true, &first)) stream->set_first_id(first);
    stream->set_entries_added(numbers[0]);
  }
  if (numbers[0] != 0 && stream->node_count() == 0) {
    return reader_.Corrupt("Stream length inconsistent with rax entries");
  }
  if (absl::Status status = LoadStreamGroups(*stream, v2); !status.ok()) return status;
  LoadedValue value;
  value.kind = LoadedValue::Kind::kObject;
  value.type = KeyType::kStream;
  value.object = std::move(stream);
  return value;
}

absl::StatusOr<LoadedValue> ValueLoader::Load(uint8_t type) {
  switch (type) {
    case kTypeString: {
      LoadedValue value;
      value.kind = LoadedValue::Kind::kString;
      if (absl::Status status = String(&value.string); !status.ok()) return status;
      return value;
    }
    case kTypeList:
      return LoadList();
    case kTypeSet:
      return LoadSet();
    case kTypeZSet:
    case kTypeZSet2:
      return LoadZSet(type == kTypeZSet2);
    case kTypeHash:
      return LoadHash();
    case kTypeListQuicklist:
    case kTypeListQuicklist2:
      return LoadQuicklist(type == kTypeListQuicklist2);
    case kTypeHashZipmap:
    case kTypeListZiplist:
    case kTypeSetIntset:
    case kTypeZSetZiplist:
    case kTypeHashZiplist:
    case kTypeHashListpack:
    case kTypeZSetListpack:
      return LoadBlob(type);
    case kTypeModule:
    case kTypeModule2:
      return absl::UnimplementedError(StrCat("module values (RDB type ", static_cast<int>(type),
                                             ") are not supported, at offset ", reader_.offset()));
    case kTypeStreamListpacks:
    case kTypeStreamListpacks2:
      return LoadStream(type == kTypeStreamListpacks2);
    default:
      return reader_.Corrupt(StrCat("Unknown RDB encoding type ", static_cast<int>(type)));
  }
}

}  // namespace

bool IsValueType(uint8_t type) { return type <= kTypeStreamListpacks2 && type != 8; }

absl::StatusOr<LoadedValue> ReadValue(RdbReader& reader, uint8_t type,
                                      const CollectionLimits& limits, uint64_t max_string_length) {
  const uint64_t start = reader.offset();
  // The structures a value is loaded into allocate as elements arrive; an allocation that fails
  // (a large but well-formed value on a small machine) must come back as a Status, not unwind
  // through callers that promise none.
  try {
    return ValueLoader(reader, limits, max_string_length).Load(type);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  return absl::ResourceExhaustedError(
      StrCat("out of memory loading the value that begins at offset ", start, ", at offset ",
             reader.offset()));
}

}  // namespace gigakv::persistence::rdb
