// Per-thread scratch for kernels: one stack of memory per thread, shared by every kernel that runs
// on it, instead of a thread_local buffer per kernel site. A kernel takes what it needs in a
// ScratchFrame and gives it back when the frame ends; frames nest (a Winograd task's tile buffers,
// then the GEMM's panel inside it). Why: each site's own buffer was allocated and faulted in 4 KiB
// at a time during the first inference (ResNet-50: ~2700 of its ~4000 page faults, most of its
// first-vs-steady gap), and every site kept its own high-water mark resident. The stack's blocks
// are kept for the thread's life, so the next inference faults nothing in; past a first block in
// 4 KiB pages they are huge-page blocks (core/LargeAlloc.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Scratch taken on the calling thread's stack, released (LIFO) when the frame is destroyed.
/// Pointers may be handed to other threads while the frame lives (a parallelFor's workers write
/// through them); a frame must be destroyed on the thread that created it, before any frame
/// created on that thread before it.
class ScratchFrame {
public:
  ScratchFrame();
  ~ScratchFrame();
  ScratchFrame(const ScratchFrame &) = delete;
  ScratchFrame &operator=(const ScratchFrame &) = delete;

  /// Bytes of storage, 64-byte aligned, contents unspecified; throws std::bad_alloc when the
  /// stack cannot grow.
  void *bytes(size_t Bytes);
  /// N elements of T (a trivial type), 64-byte aligned, contents unspecified.
  template <class T> T *take(size_t N) { return static_cast<T *>(bytes(N * sizeof(T))); }

private:
  size_t Cur, Top, Used; // the thread's stack position when the frame began
};

/// This thread's stack: bytes taken by live frames, the most ever taken at once, the bytes of its
/// blocks and how many there are, and the first block (null before the first take).
struct ThreadScratchStats {
  size_t InUse = 0, HighWater = 0, Reserved = 0, Segments = 0;
  const void *Base = nullptr;
};
ThreadScratchStats threadScratchStats();

/// The stack's first block, in 4 KiB pages (a small model's whole stack: MobileNetV2 ~125 KB per
/// thread, where a huge page would add to its peak RSS). Later blocks are at least 2 MiB, huge
/// pages where THP is available, each at least twice the one before (ResNet-50: ~2 MB per thread).
constexpr size_t threadScratchSmallPageBytes() { return size_t{512} << 10; }

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
