#include "core/types/stream.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/types/stream_rax.h"
#include "gigakv/numbers.h"

namespace gigakv {

// --- StreamID ------------------------------------------------------------------------------------

std::string StreamID::ToString() const { return absl::StrCat(ms, "-", seq); }

bool StreamID::Increment() {
  if (seq != UINT64_MAX) {
    ++seq;
    return true;
  }
  if (ms == UINT64_MAX) return false;
  ++ms;
  seq = 0;
  return true;
}

bool StreamID::Decrement() {
  if (seq != 0) {
    --seq;
    return true;
  }
  if (ms == 0) return false;
  --ms;
  seq = UINT64_MAX;
  return true;
}

// --- Redis's listpack ----------------------------------------------------------------------------

namespace redis_listpack {
namespace {

constexpr uint8_t kTerminator = 0xFF;

uint32_t ReadU32(const char* p) {
  uint32_t value;
  std::memcpy(&value, p, 4);
  return value;  // Little-endian hosts only (x86-64, aarch64), as the rest of gigakv.
}
void WriteU32(char* p, uint32_t value) { std::memcpy(p, &value, 4); }

// The encoding and payload of an integer, in `out` (at most 9 bytes); returns the size.
size_t EncodeInteger(int64_t v, char* out) {
  if (v >= 0 && v <= 127) {
    out[0] = static_cast<char>(v);
    return 1;
  }
  if (v >= -4096 && v <= 4095) {
    const auto u = static_cast<uint64_t>(v < 0 ? (int64_t{1} << 13) + v : v);
    out[0] = static_cast<char>((u >> 8) | 0xC0);
    out[1] = static_cast<char>(u & 0xFF);
    return 2;
  }
  auto put = [&](uint8_t tag, int bytes) {
    out[0] = static_cast<char>(tag);
    const auto u = static_cast<uint64_t>(v);
    for (int i = 0; i < bytes; ++i) out[1 + i] = static_cast<char>((u >> (8 * i)) & 0xFF);
    return static_cast<size_t>(1 + bytes);
  };
  if (v >= -32768 && v <= 32767) return put(0xF1, 2);
  if (v >= -8388608 && v <= 8388607) return put(0xF2, 3);
  if (v >= INT32_MIN && v <= INT32_MAX) return put(0xF3, 4);
  return put(0xF4, 8);
}

// The header of a string's encoding in `out`; returns its size.
size_t EncodeStringHeader(size_t length, char* out) {
  if (length < 64) {
    out[0] = static_cast<char>(0x80 | length);
    return 1;
  }
  if (length < 4096) {
    out[0] = static_cast<char>(0xE0 | (length >> 8));
    out[1] = static_cast<char>(length & 0xFF);
    return 2;
  }
  out[0] = static_cast<char>(0xF0);
  WriteU32(out + 1, static_cast<uint32_t>(length));
  return 5;
}

size_t BacklenSize(size_t length) {
  if (length <= 127) return 1;
  if (length < 16383) return 2;
  if (length < 2097151) return 3;
  if (length < 268435455) return 4;
  return 5;
}

// Appends the backlen of an entry whose encoding + payload is `length` bytes.
void AppendBacklen(std::string* lp, size_t length) {
  const size_t size = BacklenSize(length);
  char buf[5];
  for (size_t i = 0; i < size; ++i) {
    const size_t shift = 7 * (size - 1 - i);
    buf[i] = static_cast<char>(((length >> shift) & 127) | (i == 0 ? 0 : 128));
  }
  lp->append(buf, size);
}

// Size of the encoding + payload of the entry at `p`.
size_t EncodedSize(const unsigned char* p) {
  const uint8_t b = p[0];
  if (b < 0x80) return 1;
  if ((b & 0xC0) == 0x80) return 1 + (b & 0x3F);
  if ((b & 0xE0) == 0xC0) return 2;
  if ((b & 0xF0) == 0xE0) return 2 + ((static_cast<size_t>(b & 0x0F) << 8) | p[1]);
  switch (b) {
    case 0xF0:
      return 5 + ReadU32(reinterpret_cast<const char*>(p + 1));
    case 0xF1:
      return 3;
    case 0xF2:
      return 4;
    case 0xF3:
      return 5;
    default:
      return 9;  // 0xF4
  }
}

// Rewrites the header's total bytes and count (+delta).
void FixHeader(std::string* lp, int count_delta) {
  WriteU32(lp->data(), static_cast<uint32_t>(lp->size()));
  uint16_t count;
  std::memcpy(&count, lp->data() + 4, 2);
  if (count != UINT16_MAX) {
    const int updated = count + count_delta;
    count = updated >= UINT16_MAX ? UINT16_MAX : static_cast<uint16_t>(updated);
    std::memcpy(lp->data() + 4, &count, 2);
  }
}

void AppendEncoded(std::string* lp, const char* encoded, size_t size, std::string_view payload) {
  lp->pop_back();  // The terminator.
  lp->append(encoded, size);
  lp->append(payload);
  AppendBacklen(lp, size + payload.size());
  lp->push_back(static_cast<char>(kTerminator));
  FixHeader(lp, 1);
}

}  // namespace

std::string New() {
  std::string lp(kHeaderSize + 1, '\0');
  lp.back() = static_cast<char>(kTerminator);
  FixHeader(&lp, 0);
  return lp;
}

void AppendInteger(std::string* lp, int64_t value) {
  char encoded[9];
  AppendEncoded(lp, encoded, EncodeInteger(value, encoded), {});
}

void AppendString(std::string* lp, std::string_view value) {
  int64_t integer;
  if (value.size() <= 20 && ParseInt64(value, &integer)) {
    AppendInteger(lp, integer);
    return;
  }
  char header[5];
  AppendEncoded(lp, header, EncodeStringHeader(value.size(), header), value);
}

size_t EntrySize(std::string_view value) {
  char encoded[9];
  int64_t integer;
  const size_t size = value.size() <= 20 && ParseInt64(value, &integer)
                          ? EncodeInteger(integer, encoded)
                          : EncodeStringHeader(value.size(), encoded) + value.size();
  return size + BacklenSize(size);
}

size_t ReplaceInteger(std::string* lp, size_t pos, int64_t value) {
  const auto* p = reinterpret_cast<const unsigned char*>(lp->data() + pos);
  const size_t old_encoded = EncodedSize(p);
  const size_t old_size = old_encoded + BacklenSize(old_encoded);
  char encoded[9];
  const size_t size = EncodeInteger(value, encoded);
  std::string entry(encoded, size);
  {
    std::string backlen;
    AppendBacklen(&backlen, size);
    entry += backlen;
  }
  lp->replace(pos, old_size, entry);
  FixHeader(lp, 0);
  return pos;
}

uint32_t TotalBytes(std::string_view lp) { return ReadU32(lp.data()); }

size_t First(std::string_view lp) {
  return static_cast<uint8_t>(lp[kHeaderSize]) == kTerminator ? kEnd : kHeaderSize;
}

size_t Next(std::string_view lp, size_t pos) {
  const size_t encoded = EncodedSize(reinterpret_cast<const unsigned char*>(lp.data() + pos));
  const size_t next = pos + encoded + BacklenSize(encoded);
  return static_cast<uint8_t>(lp[next]) == kTerminator ? kEnd : next;
}

size_t Prev(std::string_view lp, size_t pos) {
  if (pos <= kHeaderSize) return kEnd;
  // The backlen ends right before `pos`: read it backwards.
  const auto* p = reinterpret_cast<const unsigned char*>(lp.data()) + pos - 1;
  size_t length = 0, shift = 0, bytes = 0;
  for (;;) {
    length |= static_cast<size_t>(p[0] & 127) << shift;
    ++bytes;
    if (!(p[0] & 128)) break;
    shift += 7;
    --p;
  }
  return pos - bytes - length;
}

size_t Last(std::string_view lp) {
  const size_t end = lp.size() - 1;  // The terminator.
  return end == kHeaderSize ? kEnd : Prev(lp, end);
}

ListpackEntry Get(std::string_view lp, size_t pos) {
  const auto* p = reinterpret_cast<const unsigned char*>(lp.data() + pos);
  ListpackEntry entry;
  const uint8_t b = p[0];
  auto integer = [&](int64_t v) {
    entry.is_int = true;
    entry.int_value = v;
    return entry;
  };
  auto little = [&](int bytes) {
    uint64_t u = 0;
    for (int i = 0; i < bytes; ++i) u |= static_cast<uint64_t>(p[1 + i]) << (8 * i);
    // Sign-extend from `bytes` bytes.
    const int shift = 64 - 8 * bytes;
    return static_cast<int64_t>(u << shift) >> shift;
  };
  if (b < 0x80) return integer(b);
  if ((b & 0xC0) == 0x80) {
    entry.str = std::string_view(reinterpret_cast<const char*>(p + 1), b & 0x3F);
    return entry;
  }
  if ((b & 0xE0) == 0xC0) {
    const auto u = static_cast<uint64_t>(((b & 0x1F) << 8) | p[1]);
    return integer(u >= (1u << 12) ? static_cast<int64_t>(u) - (1 << 13) : static_cast<int64_t>(u));
  }
  if ((b & 0xF0) == 0xE0) {
    const size_t length = (static_cast<size_t>(b & 0x0F) << 8) | p[1];
    entry.str = std::string_view(reinterpret_cast<const char*>(p + 2), length);
    return entry;
  }
  switch (b) {
    case 0xF0:
      entry.str = std::string_view(reinterpret_cast<const char*>(p + 5),
                                   ReadU32(reinterpret_cast<const char*>(p + 1)));
      return entry;
    case 0xF1:
      return integer(little(2));
    case 0xF2:
      return integer(little(3));
    case 0xF3:
      return integer(little(4));
    default:
      return integer(little(8));
  }
}

int64_t GetInteger(std::string_view lp, size_t pos) {
  const ListpackEntry entry = Get(lp, pos);
  if (entry.is_int) return entry.int_value;
  int64_t value = 0;
  return ParseInt64(entry.str, &value) ? value : 0;
}

}  // namespace redis_listpack

// --- Stream --------------------------------------------------------------------------------------

namespace {

namespace lp = redis_listpack;

constexpr int64_t kFlagDeleted = 1;
constexpr int64_t kFlagSameFields = 2;
// Redis's STREAM_LISTPACK_MAX_SIZE: a listpack's 32-bit size.
constexpr size_t kListpackMaxSize = (size_t{1} << 30);

// The master entry of a node: its position and fields.
struct Master {
  int64_t count = 0;
  int64_t deleted = 0;
  int64_t fields = 0;
  size_t first_field = lp::kEnd;  // Position of the first master field.
  size_t first_entry = lp::kEnd;  // Position of the first entry's flags (kEnd if none).
};

Master ReadMaster(std::string_view node) {
  Master master;
  size_t pos = lp::First(node);
  master.count = lp::GetInteger(node, pos);
  pos = lp::Next(node, pos);
  master.deleted = lp::GetInteger(node, pos);
  pos = lp::Next(node, pos);
  master.fields = lp::GetInteger(node, pos);
  pos = lp::Next(node, pos);
  master.first_field = pos;
  for (int64_t i = 0; i < master.fields; ++i) pos = lp::Next(node, pos);
  master.first_entry = lp::Next(node, pos);  // Past the 0 terminator.
  return master;
}

}  // namespace

template <typename Fn>
void Stream::ForEachNodeEntry(std::string_view node, const StreamID& master_id, Fn&& fn) {
  const Master master = ReadMaster(node);
  for (size_t pos = master.first_entry; pos != lp::kEnd;) {
    const size_t flags_pos = pos;
    const int64_t flags = lp::GetInteger(node, pos);
    pos = lp::Next(node, pos);
    const auto ms_diff = static_cast<uint64_t>(lp::GetInteger(node, pos));
    pos = lp::Next(node, pos);
    const auto seq_diff = static_cast<uint64_t>(lp::GetInteger(node, pos));
    pos = lp::Next(node, pos);
    const StreamID id{master_id.ms + ms_diff, master_id.seq + seq_diff};
    int64_t to_skip = master.fields;
    if (!(flags & kFlagSameFields)) {
      to_skip = 2 * lp::GetInteger(node, pos);
      pos = lp::Next(node, pos);
    }
    const size_t values_pos = pos;
    for (int64_t i = 0; i < to_skip; ++i) pos = lp::Next(node, pos);
    pos = lp::Next(node, pos);  // lp-count
    if (!fn(flags_pos, id, flags, values_pos, master)) return;
  }
}

size_t Stream::MemoryUsage() const {
  size_t bytes = sizeof(Stream);
  for (const auto& [id, node] : nodes_) bytes += node.capacity() + sizeof(id) + sizeof(node) + 16;
  for (const auto& [name, group] : groups_) {
    bytes += sizeof(StreamGroup) + name.capacity() + 32;
    bytes += group->pel.size() * (sizeof(StreamNack) + 2 * (sizeof(StreamID) + 16));
    for (const auto& [consumer_name, consumer] : group->consumers) {
      bytes += sizeof(StreamConsumer) + 2 * consumer_name.capacity() + 32;
    }
  }
  return bytes;
}

Object* Stream::Clone() const {
  auto* copy = new Stream();
  copy->nodes_ = nodes_;
  for (const auto& [name, group] : groups_) {
    StreamGroup* group_copy = copy->CreateGroup(name, group->last_id, group->entries_read);
    for (const auto& [consumer_name, consumer] : group->consumers) {
      group_copy->CreateConsumer(consumer_name, consumer->seen_time_ms);
    }
    for (const auto& [id, nack] : group->pel) {
      auto nack_copy = std::make_unique<StreamNack>(*nack);
      nack_copy->consumer = group_copy->FindConsumer(nack->consumer->name);
      nack_copy->consumer->pel.emplace(id, nack_copy.get());
      group_copy->pel.emplace(id, std::move(nack_copy));
    }
  }
  copy->length_ = length_;
  copy->last_id_ = last_id_;
  copy->first_id_ = first_id_;
  copy->max_deleted_id_ = max_deleted_id_;
  copy->entries_added_ = entries_added_;
  return copy;
}

void Stream::ForEachElement(absl::FunctionRef<void(std::string_view)> fn) const {
  Range(StreamID::Min(), StreamID::Max(), false,
        [&](const StreamID& id, absl::Span<const std::string_view>) {
          fn(id.ToString());
          return true;
        });
}

Stream::AppendStatus Stream::Append(absl::Span<const std::string_view> field_values,
                                    const StreamID* use_id, bool seq_given, uint64_t now_ms,
                                    const StreamNodeLimits& limits, StreamID* added) {
  StreamID id;
  if (use_id != nullptr) {
    if (seq_given) {
      id = *use_id;
    } else if (last_id_.ms == use_id->ms) {
      if (last_id_.seq == UINT64_MAX) return AppendStatus::kIdNotGreater;
      id = last_id_;
      ++id.seq;
    } else {
      id = *use_id;
    }
  } else if (now_ms > last_id_.ms) {
    id = {now_ms, 0};
  } else {
    id = last_id_;
    if (!id.Increment()) id = {0, 0};
  }
  if (id <= last_id_) return AppendStatus::kIdNotGreater;

  const size_t numfields = field_values.size() / 2;
  size_t total_length = 0;
  for (std::string_view element : field_values) total_length += element.size();
  if (total_length > kListpackMaxSize) return AppendStatus::kTooLarge;

  std::string* node = nullptr;
  StreamID master_id;
  if (!nodes_.empty()) {
    auto tail = std::prev(nodes_.end());
    node = &tail->second;
    master_id = tail->first;
    size_t max_bytes = static_cast<size_t>(limits.max_bytes);
    if (max_bytes == 0 || max_bytes > kListpackMaxSize) max_bytes = kListpackMaxSize;
    bool new_node = false;
    if (node->size() + total_length >= max_bytes) {
      new_node = true;
    } else if (limits.max_entries > 0) {
      const size_t first = lp::First(*node);
      const int64_t count =
          lp::GetInteger(*node, first) + lp::GetInteger(*node, lp::Next(*node, first));
      if (count >= limits.max_entries) new_node = true;
    }
    if (new_node) {
      node->shrink_to_fit();
      node = nullptr;
    }
  }

  int64_t flags = 0;
  if (node == nullptr) {
    master_id = id;
    std::string fresh = lp::New();
    fresh.reserve(static_cast<size_t>(
        limits.max_bytes > 0 && limits.max_bytes < 4096 ? limits.max_bytes : 4096));
    lp::AppendInteger(&fresh, 1);  // count
    lp::AppendInteger(&fresh, 0);  // deleted
    lp::AppendInteger(&fresh, static_cast<int64_t>(numfields));
    for (size_t i = 0; i < numfields; ++i) lp::AppendString(&fresh, field_values[2 * i]);
    lp::AppendInteger(&fresh, 0);  // The master entry's terminator.
    node = &nodes_.emplace(id, std::move(fresh)).first->second;
    flags |= kFlagSameFields;
  } else {
    const size_t first = lp::First(*node);
    const int64_t count = lp::GetInteger(*node, first);
    lp::ReplaceInteger(node, first, count + 1);
    const Master master = ReadMaster(*node);
    if (static_cast<size_t>(master.fields) == numfields) {
      size_t pos = master.first_field;
      std::string scratch;
      size_t i = 0;
      for (; i < numfields; ++i) {
        if (lp::Get(*node, pos).View(&scratch) != field_values[2 * i]) break;
        pos = lp::Next(*node, pos);
      }
      if (i == numfields) flags |= kFlagSameFields;
    }
  }

  lp::AppendInteger(node, flags);
  lp::AppendInteger(node, static_cast<int64_t>(id.ms - master_id.ms));
  lp::AppendInteger(node, static_cast<int64_t>(id.seq - master_id.seq));
  const bool same = (flags & kFlagSameFields) != 0;
  if (!same) lp::AppendInteger(node, static_cast<int64_t>(numfields));
  for (size_t i = 0; i < numfields; ++i) {
    if (!same) lp::AppendString(node, field_values[2 * i]);
    lp::AppendString(node, field_values[2 * i + 1]);
  }
  int64_t lp_count = static_cast<int64_t>(numfields) + 3;
  if (!same) lp_count += static_cast<int64_t>(numfields) + 1;
  lp::AppendInteger(node, lp_count);

  ++length_;
  ++entries_added_;
  last_id_ = id;
  if (length_ == 1) first_id_ = id;
  if (added != nullptr) *added = id;
  return AppendStatus::kOk;
}

void Stream::Range(
    const StreamID& start, const StreamID& end, bool reverse,
    absl::FunctionRef<bool(const StreamID&, absl::Span<const std::string_view>)> fn) const {
  if (nodes_.empty() || start > end) return;
  std::vector<std::string_view> field_values;
  std::vector<std::string> scratch;
  // Emits the entry whose flags are at `values_pos`'s owner; false to stop.
  auto emit = [&](std::string_view node, const StreamID& id, int64_t flags, size_t pos,
                  const Master& master) {
    const bool same = (flags & kFlagSameFields) != 0;
    size_t numfields = static_cast<size_t>(master.fields);
    size_t field_pos = master.first_field;
    if (!same) {
      // `pos` is past num-fields: fields and values alternate from it.
      numfields = static_cast<size_t>(lp::GetInteger(node, lp::Prev(node, pos)));
    }
    field_values.resize(2 * numfields);
    scratch.resize(2 * numfields);
    for (size_t i = 0; i < numfields; ++i) {
      if (same) {
        field_values[2 * i] = lp::Get(node, field_pos).View(&scratch[2 * i]);
        field_pos = lp::Next(node, field_pos);
      } else {
        field_values[2 * i] = lp::Get(node, pos).View(&scratch[2 * i]);
        pos = lp::Next(node, pos);
      }
      field_values[2 * i + 1] = lp::Get(node, pos).View(&scratch[2 * i + 1]);
      pos = lp::Next(node, pos);
    }
    return fn(id, field_values);
  };

  if (!reverse) {
    auto it = nodes_.upper_bound(start);
    if (it != nodes_.begin()) --it;
    for (; it != nodes_.end(); ++it) {
      if (it->first > end) return;
      bool stop = false;
      ForEachNodeEntry(
          it->second, it->first,
          [&](size_t, const StreamID& id, int64_t flags, size_t values_pos, const Master& master) {
            if (id > end) {
              stop = true;
              return false;
            }
            if ((flags & kFlagDeleted) || id < start) return true;
            if (!emit(it->second, id, flags, values_pos, master)) stop = true;
            return !stop;
          });
      if (stop) return;
    }
    return;
  }
  auto it = nodes_.upper_bound(end);
  struct Found {
    StreamID id;
    int64_t flags;
    size_t values_pos;
  };
  std::vector<Found> entries;
  while (it != nodes_.begin()) {
    --it;
    entries.clear();
    Master master;
    ForEachNodeEntry(it->second, it->first,
                     [&](size_t, const StreamID& id, int64_t flags, size_t values_pos,
                         const Master& node_master) {
                       master = node_master;
                       if (id > end) return false;
                       if (!(flags & kFlagDeleted) && id >= start) {
                         entries.push_back({id, flags, values_pos});
                       }
                       return true;
                     });
    for (auto entry = entries.rbegin(); entry != entries.rend(); ++entry) {
      if (!emit(it->second, entry->id, entry->flags, entry->values_pos, master)) return;
    }
    if (it->first < start) return;  // Earlier nodes hold only smaller IDs.
  }
}

bool Stream::Delete(const StreamID& id) {
  auto it = nodes_.upper_bound(id);
  if (it == nodes_.begin()) return false;
  --it;
  std::string& node = it->second;
  size_t flags_pos = lp::kEnd;
  int64_t found_flags = 0;
  ForEachNodeEntry(node, it->first,
                   [&](size_t pos, const StreamID& entry_id, int64_t flags, size_t, const Master&) {
                     if (entry_id < id) return true;
                     if (entry_id == id && !(flags & kFlagDeleted)) {
                       flags_pos = pos;
                       found_flags = flags;
                     }
                     return false;
                   });
  if (flags_pos == lp::kEnd) return false;
  lp::ReplaceInteger(&node, flags_pos, found_flags | kFlagDeleted);
  const size_t first = lp::First(node);
  const int64_t count = lp::GetInteger(node, first) - 1;
  if (count == 0) {
    nodes_.erase(it);
  } else {
    lp::ReplaceInteger(&node, first, count);
    const size_t deleted_pos = lp::Next(node, first);
    lp::ReplaceInteger(&node, deleted_pos, lp::GetInteger(node, deleted_pos) + 1);
  }
  --length_;
  if (length_ == 0) {
    first_id_ = {};
  } else if (id == first_id_) {
    EdgeId(true, &first_id_);
  }
  return true;
}

int64_t Stream::Trim(const StreamTrim& trim) {
  if (trim.strategy == StreamTrim::Strategy::kNone) return 0;
  const bool by_maxlen = trim.strategy == StreamTrim::Strategy::kMaxLen;
  int64_t deleted = 0;
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (by_maxlen && length_ <= trim.maxlen) break;
    std::string& node = it->second;
    const int64_t entries = lp::GetInteger(node, lp::First(node));
    if (trim.limit != 0 && deleted + entries > trim.limit) break;
    bool remove_node;
    if (by_maxlen) {
      remove_node = length_ - static_cast<uint64_t>(entries) >= trim.maxlen;
    } else {
      // The node's last entry (deleted or not), as Redis's lpGetEdgeStreamID.
      StreamID last = it->first;
      ForEachNodeEntry(node, it->first,
                       [&](size_t, const StreamID& id, int64_t, size_t, const Master&) {
                         last = id;
                         return true;
                       });
      remove_node = last < trim.minid;
    }
    if (remove_node) {
      it = nodes_.erase(it);
      length_ -= static_cast<uint64_t>(entries);
      deleted += entries;
      continue;
    }
    if (trim.approx) break;
    // Flag entries of this node one by one until the condition holds.
    std::vector<std::pair<size_t, int64_t>> to_flag;
    uint64_t length = length_;
    ForEachNodeEntry(node, it->first,
                     [&](size_t pos, const StreamID& id, int64_t flags, size_t, const Master&) {
                       const bool stop = by_maxlen ? length <= trim.maxlen : id >= trim.minid;
                       if (stop) return false;
                       if (!(flags & kFlagDeleted)) {
                         to_flag.emplace_back(pos, flags | kFlagDeleted);
                         --length;
                       }
                       return true;
                     });
    // Flags are small integers (1-byte entries) before and after: positions stay valid.
    for (const auto& [pos, flags] : to_flag) lp::ReplaceInteger(&node, pos, flags);
    const auto deleted_here = static_cast<int64_t>(to_flag.size());
    length_ = length;
    deleted += deleted_here;
    const size_t first = lp::First(node);
    lp::ReplaceInteger(&node, first, entries - deleted_here);
    const size_t marked_pos = lp::Next(node, first);
    lp::ReplaceInteger(&node, marked_pos, lp::GetInteger(node, marked_pos) + deleted_here);
    break;
  }
  if (length_ == 0) {
    first_id_ = {};
  } else if (deleted != 0) {
    EdgeId(true, &first_id_);
  }
  return deleted;
}

bool Stream::EdgeId(bool first, StreamID* id) const {
  bool found = false;
  Range(StreamID::Min(), StreamID::Max(), !first,
        [&](const StreamID& entry_id, absl::Span<const std::string_view>) {
          *id = entry_id;
          found = true;
          return false;
        });
  return found;
}

void Stream::ForEachNode(absl::FunctionRef<void(const StreamID&, std::string_view)> fn) const {
  for (const auto& [id, node] : nodes_) fn(id, node);
}

// --- Consumer groups -----------------------------------------------------------------------------

StreamConsumer* StreamGroup::FindConsumer(std::string_view name) {
  auto it = consumers.find(absl::string_view(name.data(), name.size()));
  return it == consumers.end() ? nullptr : it->second.get();
}

StreamConsumer* StreamGroup::CreateConsumer(std::string_view name, int64_t now_ms) {
  auto [it, inserted] = consumers.try_emplace(std::string(name));
  if (!inserted) return nullptr;
  it->second = std::make_unique<StreamConsumer>();
  it->second->name = std::string(name);
  it->second->seen_time_ms = now_ms;
  return it->second.get();
}

size_t StreamGroup::DeleteConsumer(std::string_view name) {
  auto it = consumers.find(absl::string_view(name.data(), name.size()));
  if (it == consumers.end()) return 0;
  const size_t pending = it->second->pel.size();
  for (const auto& [id, nack] : it->second->pel) pel.erase(id);
  consumers.erase(it);
  return pending;
}

StreamNack* StreamGroup::Deliver(const StreamID& id, StreamConsumer* consumer, int64_t now_ms) {
  auto [it, inserted] = pel.try_emplace(id);
  if (inserted) {
    it->second = std::make_unique<StreamNack>();
  } else {
    it->second->consumer->pel.erase(id);
  }
  StreamNack* nack = it->second.get();
  nack->consumer = consumer;
  nack->delivery_time_ms = now_ms;
  nack->delivery_count = 1;
  consumer->pel[id] = nack;
  return nack;
}

void StreamGroup::Transfer(StreamNack* nack, const StreamID& id, StreamConsumer* consumer) {
  if (nack->consumer == consumer) return;
  nack->consumer->pel.erase(id);
  nack->consumer = consumer;
  consumer->pel[id] = nack;
}

bool StreamGroup::Acknowledge(const StreamID& id) {
  auto it = pel.find(id);
  if (it == pel.end()) return false;
  it->second->consumer->pel.erase(id);
  pel.erase(it);
  return true;
}

StreamGroup* Stream::FindGroup(std::string_view name) {
  auto it = groups_.find(absl::string_view(name.data(), name.size()));
  return it == groups_.end() ? nullptr : it->second.get();
}

const StreamGroup* Stream::FindGroup(std::string_view name) const {
  auto it = groups_.find(absl::string_view(name.data(), name.size()));
  return it == groups_.end() ? nullptr : it->second.get();
}

StreamGroup* Stream::CreateGroup(std::string_view name, const StreamID& last_id,
                                 int64_t entries_read) {
  auto [it, inserted] = groups_.try_emplace(std::string(name));
  if (!inserted) return nullptr;
  it->second = std::make_unique<StreamGroup>();
  it->second->last_id = last_id;
  it->second->entries_read = entries_read;
  return it->second.get();
}

bool Stream::DestroyGroup(std::string_view name) {
  auto it = groups_.find(absl::string_view(name.data(), name.size()));
  if (it == groups_.end()) return false;
  groups_.erase(it);
  return true;
}

bool Stream::RangeHasTombstones(const StreamID& start, const StreamID& end) const {
  if (length_ == 0 || max_deleted_id_ == StreamID::Min()) return false;
  if (first_id_ > max_deleted_id_) return false;
  return start <= max_deleted_id_ && max_deleted_id_ <= end;
}

int64_t Stream::EstimateDistance(const StreamID& id) const {
  if (entries_added_ == 0) return 0;
  const auto added = static_cast<int64_t>(entries_added_);
  if (length_ == 0 && id <= last_id_) return added;
  if (id == last_id_) return added;
  if (id > last_id_) return StreamGroup::kInvalidEntriesRead;
  if (max_deleted_id_ == StreamID::Min() || max_deleted_id_ < first_id_) {
    if (id < first_id_) return added - static_cast<int64_t>(length_);
    if (id == first_id_) return added - static_cast<int64_t>(length_) + 1;
  }
  return StreamGroup::kInvalidEntriesRead;
}

std::optional<int64_t> Stream::GroupLag(const StreamGroup& group) const {
  if (entries_added_ == 0) return 0;
  const auto added = static_cast<int64_t>(entries_added_);
  if (group.entries_read != StreamGroup::kInvalidEntriesRead &&
      !RangeHasTombstones(group.last_id, StreamID::Max())) {
    return added - group.entries_read;
  }
  const int64_t entries_read = EstimateDistance(group.last_id);
  if (entries_read == StreamGroup::kInvalidEntriesRead) return std::nullopt;
  return added - entries_read;
}

void Stream::DeliverNew(
    StreamGroup& group, StreamConsumer* consumer, size_t count, bool noack, int64_t now_ms,
    absl::FunctionRef<void(const StreamID&, absl::Span<const std::string_view>)> fn) {
  StreamID start = group.last_id;
  if (!start.Increment()) return;
  size_t delivered = 0;
  // Copies first: the callback replies while group state changes (no stream mutation).
  Range(start, StreamID::Max(), false,
        [&](const StreamID& id, absl::Span<const std::string_view> field_values) {
          if (id > group.last_id) {
            if (group.entries_read != StreamGroup::kInvalidEntriesRead &&
                !RangeHasTombstones(id, StreamID::Max())) {
              ++group.entries_read;
            } else if (entries_added_ != 0) {
              group.entries_read = EstimateDistance(id);
            }
            group.last_id = id;
          }
          fn(id, field_values);
          if (!noack) group.Deliver(id, consumer, now_ms);
          ++delivered;
          return count == 0 || delivered < count;
        });
}

size_t Stream::RaxNodeCount() const {
  std::vector<RaxKey> keys;
  keys.reserve(nodes_.size());
  for (const auto& [id, node] : nodes_) {
    RaxKey key;
    for (int i = 0; i < 8; ++i) {
      key[i] = static_cast<uint8_t>(id.ms >> (56 - 8 * i));
      key[8 + i] = static_cast<uint8_t>(id.seq >> (56 - 8 * i));
    }
    keys.push_back(key);
  }
  return gigakv::RaxNodeCount(keys);
}

bool Stream::AddNode(const StreamID& master, std::string listpack) {
  return nodes_.try_emplace(master, std::move(listpack)).second;
}

bool Stream::IsValidNode(std::string_view node) {
  size_t pos = lp::First(node);
  // Reads the integer at `pos` and moves on; false at the end or for a non-integer.
  auto integer = [&](int64_t* value) {
    if (pos == lp::kEnd) return false;
    const ListpackEntry entry = lp::Get(node, pos);
    if (entry.is_int) {
      *value = entry.int_value;
    } else if (!ParseInt64(entry.str, value)) {
      return false;
    }
    pos = lp::Next(node, pos);
    return true;
  };
  auto skip = [&](int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      if (pos == lp::kEnd) return false;
      pos = lp::Next(node, pos);
    }
    return true;
  };
  int64_t count = 0, deleted = 0, master_fields = 0, zero = 0;
  if (!integer(&count) || !integer(&deleted) || !integer(&master_fields) || count < 0 ||
      deleted < 0 || master_fields < 0 || !skip(master_fields) || !integer(&zero) || zero != 0) {
    return false;
  }
  for (int64_t entries = count + deleted; entries > 0; --entries) {
    int64_t flags = 0, ms_diff = 0, seq_diff = 0, fields = master_fields, lp_count = 0;
    int64_t extra = 3;
    if (!integer(&flags) || !integer(&ms_diff) || !integer(&seq_diff)) return false;
    if (!(flags & kFlagSameFields)) {
      if (!integer(&fields) || fields < 0 || !skip(fields)) return false;
      extra += fields + 1;
    }
    if (!skip(fields) || !integer(&lp_count) || lp_count != fields + extra) return false;
  }
  return pos == lp::kEnd;
}

}  // namespace gigakv
