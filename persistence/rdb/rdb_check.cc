#include "persistence/rdb/rdb_check.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <utility>

#include "absl/strings/escaping.h"
#include "gigakv/object.h"
#include "gigakv/strings.h"
#include "persistence/rdb/rdb_file.h"
#include "persistence/rdb/rdb_values.h"

namespace gigakv::persistence::rdb {
namespace {

using namespace std::string_view_literals;

// Redis servers start with 16 databases; a file using more needs the setting raised.
constexpr int kDefaultDatabases = 16;

std::string Escaped(std::string_view bytes) { return absl::CEscape(ToAbsl(bytes)); }

template <typename Field>
uint64_t Sum(const std::map<int, RdbCheckDb>& dbs, Field field) {
  uint64_t total = 0;
  for (const auto& [id, db] : dbs) total += db.*field;
  return total;
}

void CountKey(const RdbKey& key, int64_t now_ms, RdbCheckDb* db) {
  if (key.value.kind == LoadedValue::Kind::kEmpty) {
    ++db->empty_keys;  // Skipped by every loader whatever its expiry, so not an expire either.
    return;
  }
  switch (key.value.type) {
    case KeyType::kString:
      ++db->strings;
      break;
    case KeyType::kList:
      ++db->lists;
      break;
    case KeyType::kSet:
      ++db->sets;
      break;
    case KeyType::kZSet:
      ++db->zsets;
      break;
    case KeyType::kHash:
      ++db->hashes;
      break;
    case KeyType::kStream:
      ++db->streams;
      break;
  }
  if (key.expire_ms.has_value()) {
    ++db->expires;
    if (*key.expire_ms < now_ms) ++db->already_expired;
  }
}

}  // namespace

uint64_t RdbCheckReport::keys() const {
  uint64_t total = 0;
  for (const auto& [id, db] : dbs) total += db.keys();
  return total;
}
uint64_t RdbCheckReport::expires() const { return Sum(dbs, &RdbCheckDb::expires); }
uint64_t RdbCheckReport::already_expired() const { return Sum(dbs, &RdbCheckDb::already_expired); }
uint64_t RdbCheckReport::empty_keys() const { return Sum(dbs, &RdbCheckDb::empty_keys); }

RdbCheckReport CheckRdb(RdbReader& reader, const RdbCheckOptions& options) {
  RdbCheckReport report;
  RdbLoadOptions load;
  load.limits = options.limits;
  load.databases = std::numeric_limits<int>::max();  // Any database: see the header.
  load.drop_expired = false;                         // Count expired keys, never drop them.
  RdbLoadHandler handler;
  handler.on_header = [&](int version) {
    report.version = version;
    return absl::OkStatus();
  };
  handler.on_aux = [&](std::string_view key, std::string_view value) {
    report.aux.push_back(RdbCheckAux{reader.offset(), std::string(key), std::string(value)});
    return absl::OkStatus();
  };
  handler.on_select_db = [&](int id) {
    RdbCheckDb& db = report.dbs[id];
    if (db.selects++ == 0) db.first_select_offset = reader.offset();
    return absl::OkStatus();
  };
  handler.on_function = [&](std::string_view) {
    ++report.function_libraries;
    return absl::OkStatus();
  };
  handler.on_key = [&](RdbKey& key) {
    CountKey(key, options.now_ms, &report.dbs[key.db]);
    return absl::OkStatus();
  };
  absl::StatusOr<RdbLoadResult> result = LoadRdb(reader, load, handler);
  if (!result.ok()) {
    report.status = result.status();
    report.bytes = reader.offset();
    return report;
  }
  report.checksum_verified = result->checksum_verified;
  report.bytes = result->bytes;
  return report;
}

bool SplitErrorOffset(std::string_view message, uint64_t* offset, std::string* reason) {
  static constexpr std::string_view kMarker = " at offset "sv;
  // The last marker of the reason, which ends where the ` (key "...")` suffix begins: a key
  // name may contain the marker too, a reason never contains the suffix's opening.
  const size_t reason_end = std::min(message.find(" (key \""), message.size());
  const size_t at = message.substr(0, reason_end).rfind(kMarker);
  if (at == std::string_view::npos) return false;
  size_t end = at + kMarker.size();
  uint64_t value = 0;
  const size_t digits_start = end;
  while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) {
    value = value * 10 + static_cast<uint64_t>(message[end] - '0');
    ++end;
  }
  if (end == digits_start) return false;
  // "..., at offset N" loses its comma along with the offset.
  const size_t cut = at > 0 && message[at - 1] == ',' ? at - 1 : at;
  *offset = value;
  *reason = StrCat(message.substr(0, cut), message.substr(end));
  return true;
}

std::string FormatRdbCheckReport(const RdbCheckReport& report, std::string_view path) {
  std::string out;
  auto line = [&out](uint64_t offset, std::string_view text) {
    StrAppend(&out, "[offset ", offset, "] ", text, "\n");
  };
  auto info = [&out](std::string_view text) { StrAppend(&out, "[info] ", text, "\n"); };

  line(0, StrCat("Checking RDB file ", path));
  if (report.version != 0) line(9, StrCat("RDB version ", report.version));
  // AUX fields and first selections in file order: both lists are sorted by offset.
  auto aux = report.aux.begin();
  std::vector<std::pair<uint64_t, int>> selects;
  for (const auto& [id, db] : report.dbs) {
    if (db.selects > 0) selects.emplace_back(db.first_select_offset, id);
  }
  std::sort(selects.begin(), selects.end());
  auto select = selects.begin();
  while (aux != report.aux.end() || select != selects.end()) {
    if (select == selects.end() || (aux != report.aux.end() && aux->offset < select->first)) {
      line(aux->offset, StrCat("AUX FIELD ", Escaped(aux->key), " = '", Escaped(aux->value), "'"));
      ++aux;
    } else {
      line(select->first, StrCat("Selecting DB ID ", select->second));
      ++select;
    }
  }

  if (!report.status.ok()) {
    const std::string_view message = FromAbsl(report.status.message());
    uint64_t offset = report.bytes;
    std::string reason(message);
    SplitErrorOffset(message, &offset, &reason);
    out += "--- RDB ERROR DETECTED ---\n";
    line(offset, reason);
    info(StrCat(report.keys() + report.empty_keys(), " keys read"));
    info(StrCat(report.expires(), " expires"));
    info(StrCat(report.already_expired(), " already expired"));
    return out;
  }

  if (report.version < 5) {
    line(report.bytes,
         StrCat("RDB version ", report.version, " has no checksum: no check performed."));
  } else if (report.checksum_verified) {
    line(report.bytes, "Checksum OK");
  } else {
    line(report.bytes, "RDB file was saved with checksum disabled: no check performed.");
  }
  line(report.bytes, "\\o/ RDB looks OK! \\o/");
  int highest_db = -1;
  for (const auto& [id, db] : report.dbs) {
    highest_db = id;
    std::string text =
        StrCat("DB ", id, ": ", db.keys(), " keys (string ", db.strings, ", list ", db.lists,
               ", set ", db.sets, ", zset ", db.zsets, ", hash ", db.hashes, ", stream ",
               db.streams, "), ", db.expires, " expires, ", db.already_expired, " already expired");
    if (db.empty_keys > 0) StrAppend(&text, ", ", db.empty_keys, " empty keys skipped");
    info(text);
  }
  info(StrCat(report.keys() + report.empty_keys(), " keys read"));
  info(StrCat(report.expires(), " expires"));
  info(StrCat(report.already_expired(), " already expired"));
  info(StrCat(report.empty_keys(), " empty keys skipped"));
  if (highest_db >= kDefaultDatabases) {
    info(StrCat("the file uses DB ID ", highest_db, ": a server needs 'databases ", highest_db + 1,
                "' or more to load it"));
  }
  if (report.function_libraries > 0) {
    info(StrCat(report.function_libraries,
                " function libraries, not checked (gigakv-server does not load functions)"));
  }
  return out;
}

}  // namespace gigakv::persistence::rdb
