#include "persistence/rdb/rdb_snapshot.h"

#include <chrono>
#include <new>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/escaping.h"
#include "core/types/inline_value.h"
#include "gigakv/access_stamp.h"
#include "gigakv/strings.h"
#include "persistence/rdb/rdb_format.h"
#include "persistence/rdb/rdb_values.h"

namespace gigakv::persistence::rdb {

namespace {
// The snapshot whose WriteTo runs on this thread: its captures go to the walk's own chunk.
thread_local const RdbSnapshot* t_walking = nullptr;
}  // namespace

RdbSnapshot::RdbSnapshot(Store& store, SnapshotOptions options)
    : store_(store), options_(std::move(options)) {}

RdbSnapshot::~RdbSnapshot() {
  if (begun_ && !ended_) store_.EndCapture();
}

bool RdbSnapshot::Begin() {
  if (begun_) return false;
  // Figures only (StatsLock): no shard is captured by this.
  db_counts_.assign(static_cast<size_t>(store_.databases()), DbCounts{});
  keys_at_begin_ = 0;
  for (int db = 0; db < store_.databases(); ++db) {
    db_counts_[db] = {store_.DbSize(db), store_.ExpiresCount(db)};
    keys_at_begin_ += db_counts_[db].keys;
  }
  begun_ = store_.BeginCapture(this);
  return begun_;
}

void RdbSnapshot::EncodeShard(Shard& shard, Chunk* chunk) {
  chunk->bytes.clear();
  chunk->keys = 0;
  chunk->first_db = chunk->last_db = -1;
  chunk->first_select_bytes = 0;
  // A chunk carries no checksum of its own: the file's writer computes it over every chunk.
  RdbWriter::Options chunk_options = options_.writer;
  chunk_options.checksum = false;
  RdbWriter writer(
      [chunk](std::string_view bytes) {
        chunk->bytes.append(bytes);
        return absl::OkStatus();
      },
      chunk_options, options_.flush_bytes);
  RdbFileWriter file(&writer);
  const int64_t now_ms = store_.NowMs();
  std::vector<KeyTable::Slot> slots;
  for (int db = 0; db < shard.databases(); ++db) {
    KeyTable* table = shard.FindTable(db);
    if (table == nullptr) continue;
    const uint64_t run_start = writer.bytes_written();
    writer.WriteByte(kOpSelectDb);
    writer.WriteLength(static_cast<uint64_t>(db));
    if (chunk->first_db < 0) {
      chunk->first_db = db;
      chunk->first_select_bytes = static_cast<size_t>(writer.bytes_written() - run_start);
    }
    chunk->last_db = db;
    uint64_t cursor = 0;
    do {
      slots.clear();
      cursor = table->ScanRange(cursor, 1024, &slots);
      for (KeyTable::Slot slot : slots) {
        const RecordView view = table->View(slot);
        std::optional<uint64_t> idle;
        std::optional<uint8_t> freq;
        if (options_.access_field == SnapshotOptions::AccessField::kIdle) {
          idle = static_cast<uint64_t>(IdleSeconds(view.access, now_ms));
        } else if (options_.access_field == SnapshotOptions::AccessField::kFreq) {
          freq = LfuCounter(view.access, now_ms, options_.lfu_decay_minutes);
        }
        // An in-memory sink never fails.
        file.WriteKey(view, idle, freq).IgnoreError();
        ++chunk->keys;
      }
    } while (cursor < KeyTable::kScanEnd);
  }
  writer.Flush().IgnoreError();
}

void RdbSnapshot::NotePending(size_t bytes) {
  size_t peak = peak_pending_.load(std::memory_order_relaxed);
  while (bytes > peak && !peak_pending_.compare_exchange_weak(peak, bytes)) {
  }
}

void RdbSnapshot::CaptureShard(uint32_t /*index*/, Shard& shard) noexcept {
  try {
    if (t_walking == this) {
      EncodeShard(shard, &walker_chunk_);
      return;
    }
    Chunk chunk;
    EncodeShard(shard, &chunk);
    by_clients_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex_);
    pending_bytes_ += chunk.bytes.size();
    client_chunks_.push_back(std::move(chunk));
    NotePending(pending_bytes_ + walker_chunk_.bytes.size());
  } catch (const std::bad_alloc&) {
    std::lock_guard<std::mutex> lock(mutex_);
    failed_ = true;
  } catch (const std::length_error&) {
    std::lock_guard<std::mutex> lock(mutex_);
    failed_ = true;
  }
}

absl::Status RdbSnapshot::WriteTo(const RdbSink& sink) {
  if (!begun_ || ended_) return absl::FailedPreconditionError("snapshot not begun");
  RdbWriter writer(sink, options_.writer, options_.flush_bytes);
  RdbFileWriter file(&writer);
  file.Begin(options_.info, functions_);
  int selected_db = -1;
  for (int db = 0; db < store_.databases(); ++db) {
    const DbCounts& counts = db_counts_[static_cast<size_t>(db)];
    if (counts.keys == 0) continue;
    file.SelectDb(db, counts.keys, counts.expires);
    selected_db = db;
  }
  absl::Status status;
  auto write_chunk = [&](const Chunk& chunk) {
    if (chunk.first_db < 0) return;
    std::string_view bytes = chunk.bytes;
    if (chunk.first_db == selected_db) bytes.remove_prefix(chunk.first_select_bytes);
    selected_db = chunk.last_db;
    writer.WriteRaw(bytes);
    keys_.fetch_add(chunk.keys, std::memory_order_relaxed);
    const int64_t delay_us = options_.key_delay_us ? options_.key_delay_us() : 0;
    if (delay_us > 0 && chunk.keys > 0) {
      std::this_thread::sleep_for(
          std::chrono::microseconds(delay_us * static_cast<int64_t>(chunk.keys)));
    }
    status = writer.MaybeFlush();
    bytes_.store(writer.bytes_written(), std::memory_order_relaxed);
  };
  std::deque<Chunk> taken;
  auto drain_client_chunks = [&]() -> bool {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (failed_) return false;
      taken.swap(client_chunks_);
      pending_bytes_ = 0;
    }
    while (!taken.empty() && status.ok()) {
      write_chunk(taken.front());
      taken.pop_front();
    }
    taken.clear();
    return true;
  };
  t_walking = this;
  bool out_of_memory = false;
  const uint32_t shards = store_.shard_count();
  for (uint32_t i = 0; i < shards && status.ok(); ++i) {
    if (cancelled_.load(std::memory_order_relaxed)) break;
    walker_chunk_.bytes.clear();
    walker_chunk_.keys = 0;
    store_.CaptureShardNow(i);  // Encodes into walker_chunk_ unless a client already did.
    if (!walker_chunk_.bytes.empty()) {
      NotePending(walker_chunk_.bytes.size());
      write_chunk(walker_chunk_);
    }
    if (!drain_client_chunks()) {
      out_of_memory = true;
      break;
    }
    shards_done_.store(i + 1, std::memory_order_relaxed);
  }
  t_walking = nullptr;
  // Later captures (none should remain unless cancelled) are dropped with the capture's end.
  store_.EndCapture();
  ended_ = true;
  if (status.ok() && !drain_client_chunks()) out_of_memory = true;
  std::string().swap(walker_chunk_.bytes);
  if (out_of_memory) {
    return absl::ResourceExhaustedError("out of memory encoding the snapshot");
  }
  if (!status.ok()) return status;
  if (cancelled_.load(std::memory_order_relaxed)) return absl::CancelledError("snapshot aborted");
  status = file.Finish();
  bytes_.store(writer.bytes_written(), std::memory_order_relaxed);
  return status;
}

absl::StatusOr<RdbLoadResult> LoadRdbIntoStore(RdbReader& reader, const StoreLoadOptions& options,
                                               Store& store) {
  RdbLoadHandler handler;
  uint64_t keys = 0;
  uint64_t next_progress = options.progress_every_bytes;
  std::string inline_bytes;
  handler.on_aux = options.on_aux;
  handler.on_function = options.on_function;
  uint64_t reserved = 0;
  handler.on_resize_db = [&](int db, uint64_t db_keys, uint64_t) -> absl::Status {
    // Per shard, what an even spread gives, plus 1/8 for the unevenness of a hash spread.
    const uint64_t allowed =
        options.max_reserved_keys > reserved ? options.max_reserved_keys - reserved : 0;
    db_keys = std::min(db_keys, allowed);
    if (db < 0 || db >= store.databases() || db_keys < 1024) return absl::OkStatus();
    reserved += db_keys;
    const uint64_t per_shard = db_keys / store.shard_count() + db_keys / store.shard_count() / 8;
    for (uint32_t i = 0; i < store.shard_count(); ++i) {
      Shard& shard = store.shard(i);
      Store::ShardLock lock(store, shard);
      shard.Table(db).Reserve(per_shard);
    }
    return absl::OkStatus();
  };
  handler.on_key = [&](RdbKey& key) -> absl::Status {
    if (key.value.kind == LoadedValue::Kind::kEmpty) return absl::OkStatus();  // Skipped.
    // A kept key whose expiry is 0 or before (an AOF preamble, a replica's load) must stay
    // expired: 0 means "no expiry" in a record.
    int64_t expire_ms = key.expire_ms.value_or(0);
    if (key.expire_ms.has_value() && expire_ms <= 0) expire_ms = 1;
    uint16_t stamp = NewAccessStamp(options.access_mode, options.coarse_now_ms);
    if (options.access_mode == AccessMode::kLru && key.idle_seconds.has_value()) {
      const int64_t idle_ms = static_cast<int64_t>(std::min<uint64_t>(*key.idle_seconds, 1u << 30));
      stamp = LruAccessStamp(options.coarse_now_ms - idle_ms * 1000);
    } else if (options.access_mode == AccessMode::kLfu && key.freq.has_value()) {
      stamp = static_cast<uint16_t>((stamp & 0xff00) | *key.freq);
    }
    ValueSpec spec;
    std::unique_ptr<Object> object;
    if (key.value.kind == LoadedValue::Kind::kString) {
      MakeStringSpec(key.value.string, /*force_raw=*/false, &spec);
    } else {
      object = std::move(key.value.object);
      ValueKind kind;
      std::string_view bytes;
      if (InlineFormOf(*object, &kind, &bytes)) {
        spec.kind = kind;
        spec.bytes = bytes;  // Copied by Put; the object is freed after.
      } else {
        spec.kind = ValueKind::kObject;
        spec.object = object.get();
      }
    }
    const uint64_t hash = store.Hash(key.key);
    const bool inserted = store.WithShardOf(key.key, [&](Shard& shard) {
      KeyTable& table = shard.Table(key.db);
      const KeyTable::Slot slot = table.Find(key.key, hash);
      if (slot != KeyTable::kNoSlot && !options.replace_existing) return false;
      table.PutAt(slot, key.key, hash, spec, expire_ms, stamp);
      return true;
    });
    if (!inserted) {
      if (spec.kind == ValueKind::kStringExternal) delete spec.external;
      const std::string shown = absl::CEscape(ToAbsl(std::string_view(key.key).substr(0, 64)));
      return RdbReader::CorruptAt(
          key.offset, StrCat("Duplicate key \"", shown, key.key.size() > 64 ? "\"..." : "\"",
                             " found in DB ", key.db));
    }
    if (spec.kind == ValueKind::kObject) object.release();  // The table owns it now.
    ++keys;
    if (options.key_delay_us > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(options.key_delay_us));
    }
    if (options.on_progress && reader.offset() >= next_progress) {
      next_progress = reader.offset() + options.progress_every_bytes;
      options.on_progress(reader.offset(), keys);
    }
    return absl::OkStatus();
  };
  return LoadRdb(reader, options.load, handler);
}

}  // namespace gigakv::persistence::rdb
