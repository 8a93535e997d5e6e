// Large buffers: memory for big string values and I/O buffers (kLargeBufferBytes and more),
// mapped before their first write instead of one page fault at a time.
//
// Why: a fresh anonymous page is mapped on its first touch, one fault per 4 KiB page. Where a
// fault is expensive (virtual machines with shadow page tables, as the 2-core test host) that
// dominates every big command: filling a fresh 100 MiB buffer takes 260 ms there against 4 ms
// for the same writes to mapped memory, so a 512 MB SETRANGE or a 100 MB SET/GET spent most of
// its time in faults (and every other client on the thread waited). Asking for transparent huge
// pages and filling the page tables in one call (madvise MADV_HUGEPAGE, then
// MADV_POPULATE_WRITE, Linux 5.14) maps the same 100 MiB in 9 ms (populating alone: 137 ms). On
// bare metal the gain is smaller but still positive (no per-page trap).
//
// Contract: best effort. Contents are never changed; a kernel without the advice, or a range
// the kernel refuses, leaves the memory to fault in as usual. Buffers below kLargeBufferBytes
// are left alone (huge pages would waste memory on them). Thread-safe (no shared state).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gigakv {

inline constexpr size_t kLargeBufferBytes = size_t{2} << 20;

// Maps the whole pages inside [data, data + size) for writing, ahead of use. O(size) in the
// kernel, once; no-op below kLargeBufferBytes.
void PrefaultForWrite(void* data, size_t size);

// Whether PrefaultForWrite also asks for transparent huge pages (MADV_HUGEPAGE). Off by default:
// the advice stays on the memory after free(), so it is only safe where large buffers are always
// their own mappings, unmapped on free (the server fixes glibc's M_MMAP_THRESHOLD for that).
void SetLargeBufferHugePages(bool enabled);

// Makes `s` hold at least `needed` bytes (as s.reserve, growing geometrically like std::string);
// for a large buffer the first `needed` bytes of the new allocation are prefaulted before the old
// contents are copied in.
void ReserveLarge(std::string& s, size_t needed);

// A copy of `value` in a buffer prefaulted when large.
std::string CopyLarge(std::string_view value);

}  // namespace gigakv
