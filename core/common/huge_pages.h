#pragma once
// Transparent huge pages for the few big arrays of a large program (the
// instructions, the thunks). Filling them page fault by page fault cost more
// than parsing and lowering themselves (pipeline_bench, 100k instructions:
// parse 695 -> 271 ms, lower 536 -> 282 ms with 2 MiB pages on the dev VM).
// Call it after reserve() and before the first write: only memory not yet
// touched gets huge pages. A hint: a no-op off Linux, for small ranges, or
// where THP is disabled.

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace sl {

inline void advise_huge_pages(const void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  if (data == nullptr || bytes < 2 * kHugePage) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

// reserve() then advise_huge_pages() over the new capacity.
template <typename Vector>
void reserve_huge(Vector& vector, size_t count) {
  vector.reserve(count);
  advise_huge_pages(vector.data(), vector.capacity() * sizeof(typename Vector::value_type));
}

}  // namespace sl
