// A counting filter of (db, key) pairs, read without a lock.
//
// The change-stream consumers that care about a few keys (WATCH, blocked clients) see the records
// of every write while they are active; the filter lets the records of other keys (nearly all of
// them) pass without touching the consumer's mutex. MayContain never misses a key that was Added
// and not Removed; keys that share a bucket give false positives, which cost the caller a look-up
// under its mutex, never a missed change.
//
// Threading: Add/Remove/MayContain may run on any thread concurrently (relaxed atomics). A
// caller that must not miss a change Adds while holding the key's shard lock, so that a write
// made under that lock afterwards sees the count.
// Memory: 16 KiB. Cost of MayContain: two 8-byte loads, three multiplies, one atomic load.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace gigakv::server {

class KeyCountingFilter {
 public:
  KeyCountingFilter() : counts_(new std::atomic<uint32_t>[kBuckets]()) {}
  KeyCountingFilter(const KeyCountingFilter&) = delete;
  KeyCountingFilter& operator=(const KeyCountingFilter&) = delete;

  void Add(int db, std::string_view key) {
    counts_[Bucket(db, key)].fetch_add(1, std::memory_order_relaxed);
  }
  // Undoes one Add of the same pair.
  void Remove(int db, std::string_view key) {
    counts_[Bucket(db, key)].fetch_sub(1, std::memory_order_relaxed);
  }
  bool MayContain(int db, std::string_view key) const {
    return counts_[Bucket(db, key)].load(std::memory_order_relaxed) != 0;
  }

 private:
  static constexpr size_t kBuckets = 4096;

  // Asked on every write while its owner is active, so the bucket comes from a few loads and
  // multiplies instead of a full hash: the length, the database and the first and last eight
  // bytes (where keys like user:1234 differ). Keys that differ only in between share a bucket.
  static size_t Bucket(int db, std::string_view key) {
    uint64_t head = 0, tail = 0;
    const size_t n = key.size();
    if (n >= 8) {
      std::memcpy(&head, key.data(), 8);
      std::memcpy(&tail, key.data() + n - 8, 8);
    } else if (n > 0) {
      std::memcpy(&head, key.data(), n);
    }
    uint64_t mixed = (head * 0x9e3779b97f4a7c15ULL) ^ (tail * 0xc2b2ae3d27d4eb4fULL) ^
                     (static_cast<uint64_t>(n) << 32) ^ static_cast<uint64_t>(db);
    mixed *= 0xff51afd7ed558ccdULL;
    return (mixed >> 40) & (kBuckets - 1);
  }

  std::unique_ptr<std::atomic<uint32_t>[]> counts_;
};

}  // namespace gigakv::server
