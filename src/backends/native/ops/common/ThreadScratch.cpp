// The per-thread scratch stack (see ThreadScratch.h).
#include "backends/native/ops/common/ThreadScratch.h"

#include <cstdlib>
#include <new>

#include "core/LargeAlloc.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

constexpr size_t kAlign = 64, kHuge = size_t{2} << 20;

/// One thread's stack: reserved on first use, unmapped when the thread ends.
struct Stack {
  char *Base = nullptr;
  size_t Reserved = 0, Top = 0, HighWater = 0;
  bool Tried = false;

  void reserve() {
    Tried = true;
#if defined(__linux__)
    const size_t Want = threadScratchReserveBytes(), Prefix = threadScratchSmallPageBytes();
    // Over-reserve by a huge page so that the stack's first Prefix bytes end on a 2 MiB boundary;
    // MAP_NORESERVE: address space only, no commit charge until touched.
    void *Raw = mmap(nullptr, Want + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (Raw == MAP_FAILED)
      return;
    const uintptr_t Start = reinterpret_cast<uintptr_t>(Raw), End = Start + Want + kHuge;
    const uintptr_t Begin = (Start + Prefix + kHuge - 1) / kHuge * kHuge - Prefix;
    if (Begin > Start)
      munmap(Raw, Begin - Start);
    if (End > Begin + Want)
      munmap(reinterpret_cast<void *>(Begin + Want), End - (Begin + Want));
    // The prefix in 4 KiB pages (also where THP is "always"), the rest in huge pages (advisory:
    // fine if refused).
#ifdef MADV_NOHUGEPAGE
    madvise(reinterpret_cast<void *>(Begin), Prefix, MADV_NOHUGEPAGE);
#endif
#ifdef MADV_HUGEPAGE
    madvise(reinterpret_cast<void *>(Begin + Prefix), Want - Prefix, MADV_HUGEPAGE);
#endif
    Base = reinterpret_cast<char *>(Begin);
    Reserved = Want;
#endif
  }

  ~Stack() {
#if defined(__linux__)
    if (Base)
      munmap(Base, Reserved);
#endif
  }
};

Stack &threadStack() {
  thread_local Stack S;
  return S;
}

} // namespace

struct ScratchFrame::Spill {
  void *P;
  size_t Mapped;
  Spill *Next;
};

ScratchFrame::ScratchFrame() : Mark(threadStack().Top) {}

ScratchFrame::~ScratchFrame() {
  threadStack().Top = Mark;
  while (Spilled) {
    Spill *Next = Spilled->Next;
    freeBlock(Spilled->P, Spilled->Mapped);
    delete Spilled;
    Spilled = Next;
  }
}

void *ScratchFrame::bytes(size_t Bytes) {
  Stack &S = threadStack();
  if (!S.Tried)
    S.reserve();
  const size_t Size = (Bytes + kAlign - 1) / kAlign * kAlign + (Bytes == 0 ? kAlign : 0);
  if (S.Base && Size <= S.Reserved - S.Top) {
    void *P = S.Base + S.Top;
    S.Top += Size;
    if (S.Top > S.HighWater)
      S.HighWater = S.Top;
    return P;
  }
  // Past the reservation (or none): a block of its own, freed with the frame.
  size_t Mapped = 0;
  void *P = allocateBlock(Size, /*Zero=*/false, Mapped);
  if (!P)
    throw std::bad_alloc();
  Spilled = new Spill{P, Mapped, Spilled};
  return P;
}

ThreadScratchStats threadScratchStats() {
  const Stack &S = threadStack();
  ThreadScratchStats R;
  R.InUse = S.Top;
  R.HighWater = S.HighWater;
  R.Reserved = S.Reserved;
  R.Base = S.Base;
  return R;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
