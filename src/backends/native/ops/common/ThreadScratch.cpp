// The per-thread scratch stack (see ThreadScratch.h).
#include "backends/native/ops/common/ThreadScratch.h"

#include <algorithm>
#include <new>
#include <vector>

#include "core/LargeAlloc.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

constexpr size_t kAlign = 64;

/// One block of a thread's stack (core/LargeAlloc.h: from 2 MiB up mapped with huge pages).
struct Segment {
  char *Base = nullptr;
  size_t Size = 0, Mapped = 0;
};

/// One thread's stack: segments allocated on demand and kept (freed when the thread ends).
/// Segments [0, Cur] hold live frames' blocks; the ones after Cur are free, kept for reuse.
struct Stack {
  std::vector<Segment> Segs;
  size_t Cur = 0, Top = 0;   ///< the next block starts at Segs[Cur].Base + Top
  size_t Used = 0, HighWater = 0;

  /// Makes Segs[Index] at least Bytes long: a free segment too small for them is replaced.
  void provide(size_t Index, size_t Bytes) {
    if (Index < Segs.size() && Segs[Index].Size >= Bytes)
      return;
    // The first segment in 4 KiB pages (small models' whole stack: MobileNetV2 ~125 KB per
    // thread); later ones at least a huge page each, doubling, so a stack that grows during the
    // first inference is a few blocks.
    size_t Size = std::max(Bytes, threadScratchSmallPageBytes());
    if (Index > 0) {
      const size_t Huge = largeBlockBytes(); // one huge page: the smallest block LargeAlloc maps
      Size = std::max({Bytes, Huge, 2 * Segs[Index - 1].Size});
      Size = (Size + Huge - 1) / Huge * Huge;
    }
    Segment S;
    S.Base = static_cast<char *>(allocateBlock(Size, /*Zero=*/false, S.Mapped));
    if (!S.Base)
      throw std::bad_alloc();
    S.Size = Size;
    if (Index < Segs.size()) {
      freeBlock(Segs[Index].Base, Segs[Index].Mapped);
      Segs[Index] = S;
    } else {
      Segs.push_back(S);
    }
  }

  ~Stack() {
    for (const Segment &S : Segs)
      freeBlock(S.Base, S.Mapped);
  }
};

Stack &threadStack() {
  thread_local Stack S;
  return S;
}

} // namespace

ScratchFrame::ScratchFrame() {
  const Stack &S = threadStack();
  Cur = S.Cur, Top = S.Top, Used = S.Used;
}

ScratchFrame::~ScratchFrame() {
  Stack &S = threadStack();
  S.Cur = Cur, S.Top = Top, S.Used = Used;
}

void *ScratchFrame::bytes(size_t Bytes) {
  Stack &S = threadStack();
  const size_t Size = (Bytes + kAlign - 1) / kAlign * kAlign + (Bytes == 0 ? kAlign : 0);
  if (S.Segs.empty()) {
    S.provide(0, Size);
    S.Cur = 0, S.Top = 0;
  } else if (Size > S.Segs[S.Cur].Size - S.Top) { // the rest of this segment is skipped
    S.provide(S.Cur + 1, Size);
    ++S.Cur, S.Top = 0;
  }
  void *P = S.Segs[S.Cur].Base + S.Top;
  S.Top += Size, S.Used += Size;
  S.HighWater = std::max(S.HighWater, S.Used);
  return P;
}

ThreadScratchStats threadScratchStats() {
  const Stack &S = threadStack();
  ThreadScratchStats R;
  R.InUse = S.Used;
  R.HighWater = S.HighWater;
  for (const Segment &G : S.Segs)
    R.Reserved += G.Size;
  R.Segments = S.Segs.size();
  R.Base = S.Segs.empty() ? nullptr : S.Segs[0].Base;
  return R;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
