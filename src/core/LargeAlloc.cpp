// Large aligned blocks (see LargeAlloc.h).
#include "core/LargeAlloc.h"
#include "core/HugeMap.h"

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
    if (void *Block = mapHugeAligned(Rounded, /*Writable=*/true)) {
#ifdef MADV_HUGEPAGE
      // Advisory: fine if refused.
      const size_t HugeBytes = hugePageBytesOf(Bytes);
      if (HugeBytes)
        madvise(Block, HugeBytes, MADV_HUGEPAGE);
#endif
      MappedBytes = Rounded;
      return Block;
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
