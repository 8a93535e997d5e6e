#include "gigakv/large_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace gigakv {

void PrefaultForWrite(void* data, size_t size) {
  if (size < kLargeBufferBytes) return;
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) & ~(page - 1);
  if (end <= begin) return;
  void* start = reinterpret_cast<void*>(begin);
  // Errors are not failures: without huge pages the population still saves the traps, and
  // without MADV_POPULATE_WRITE (EINVAL before Linux 5.14) the pages fault in as they are used.
  (void)::madvise(start, end - begin, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
  (void)::madvise(start, end - begin, MADV_POPULATE_WRITE);
#endif
}

void ReserveLarge(std::string& s, size_t capacity) {
  if (capacity <= s.capacity()) return;
  if (capacity < kLargeBufferBytes) {
    s.reserve(capacity);
    return;
  }
  std::string grown;
  grown.reserve(capacity);
  PrefaultForWrite(grown.data(), grown.capacity());
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
