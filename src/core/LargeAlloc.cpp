// Large aligned blocks (see LargeAlloc.h).
#include "core/LargeAlloc.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace optimium {
namespace runtime {
namespace detail {

namespace {
constexpr size_t kHuge = size_t{2} << 20;
}

size_t hugePageBytesOf(size_t Bytes) {
  if (Bytes < largeBlockBytes())
    return 0;
  const size_t Whole = Bytes / kHuge * kHuge;
  return Bytes - Whole >= kHuge / 2 ? Whole + kHuge : Whole;
}

void *allocateBlock(size_t Bytes, bool Zero, size_t &MappedBytes) {
  MappedBytes = 0;
#if defined(__linux__)
  if (Bytes >= largeBlockBytes()) {
    const size_t Rounded = (Bytes + kHuge - 1) / kHuge * kHuge;
    // Over-map by one huge page and trim, so the block starts on a 2 MiB boundary.
    void *Raw = mmap(nullptr, Rounded + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (Raw != MAP_FAILED) {
      const uintptr_t Start = reinterpret_cast<uintptr_t>(Raw);
      const uintptr_t Aligned = (Start + kHuge - 1) / kHuge * kHuge;
      if (Aligned > Start)
        munmap(Raw, Aligned - Start);
      const uintptr_t End = Start + Rounded + kHuge;
      if (End > Aligned + Rounded)
        munmap(reinterpret_cast<void *>(Aligned + Rounded), End - (Aligned + Rounded));
#ifdef MADV_HUGEPAGE
      // Advisory: fine if refused.
      const size_t HugeBytes = hugePageBytesOf(Bytes);
      if (HugeBytes)
        madvise(reinterpret_cast<void *>(Aligned), HugeBytes, MADV_HUGEPAGE);
#endif
      MappedBytes = Rounded;
      return reinterpret_cast<void *>(Aligned);
    }
    // Fall through to the heap.
  }
#endif
  // aligned_alloc wants a size that is a multiple of the alignment (and non-zero).
  const size_t Rounded = ((Bytes + 63) / 64) * 64 + (Bytes == 0 ? 64 : 0);
  void *P = std::aligned_alloc(64, Rounded);
  if (P && Zero)
    std::memset(P, 0, Rounded);
  return P;
}

void freeBlock(void *P, size_t MappedBytes) {
  if (!P)
    return;
#if defined(__linux__)
  if (MappedBytes) {
    munmap(P, MappedBytes);
    return;
  }
#endif
  std::free(P);
}

} // namespace detail
} // namespace runtime
} // namespace optimium
