#include "gigakv/large_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL.
#endif

namespace gigakv {
namespace {

std::atomic<bool> huge_pages{false};

}  // namespace

void SetLargeBufferHugePages(bool enabled) { huge_pages.store(enabled); }

void PrefaultForWrite(void* data, size_t size) {
  if (size < kLargeBufferBytes) return;
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) & ~(page - 1);
  if (end <= begin) return;
  void* start = reinterpret_cast<void*>(begin);
  // Errors are not failures: without huge pages the population still saves the traps, and
  // without MADV_POPULATE_WRITE the pages fault in as they are used.
  if (huge_pages.load(std::memory_order_relaxed))
    (void)::madvise(start, end - begin, MADV_HUGEPAGE);
  (void)::madvise(start, end - begin, MADV_POPULATE_WRITE);
}

void ReserveLarge(std::string& s, size_t needed) {
  if (needed <= s.capacity()) return;
  // Geometric growth, as std::string's own: repeated growth stays amortized O(1) per byte.
  const size_t capacity = std::max(needed, 2 * s.capacity());
  if (needed < kLargeBufferBytes) {
    s.reserve(capacity);
    return;
  }
  std::string grown;
  grown.reserve(capacity);
  PrefaultForWrite(grown.data(), needed);  // Only what will be written now.
  grown.append(s);
  s.swap(grown);
}

std::string CopyLarge(std::string_view value) {
  std::string copy;
  ReserveLarge(copy, value.size());
  copy.append(value);
  return copy;
}

}  // namespace gigakv
