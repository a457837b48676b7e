// Per-thread scratch for kernels: one stack of memory per thread, shared by every kernel that runs
// on it, instead of a thread_local buffer per kernel site. A kernel takes what it needs in a
// ScratchFrame and gives it back when the frame ends; frames nest (a Winograd task's tile buffers,
// then the GEMM's panel inside it). Why: each site's own buffer was allocated and faulted in 4 KiB
// at a time during the first inference (ResNet-50: ~2700 of its ~4000 page faults, most of its
// first-vs-steady gap), and every site kept its own high-water mark resident. The stack is one
// address range reserved once per thread (no physical memory until touched), transparent huge
// pages requested past a small prefix, so it never moves and its pages stay resident for the next
// inference.
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

  /// Bytes of storage, 64-byte aligned, contents unspecified; throws std::bad_alloc when neither
  /// the stack nor the heap has it.
  void *bytes(size_t Bytes);
  /// N elements of T (a trivial type), 64-byte aligned, contents unspecified.
  template <class T> T *take(size_t N) { return static_cast<T *>(bytes(N * sizeof(T))); }

private:
  size_t Mark;
  struct Spill; // blocks past the stack's reservation, freed with the frame
  Spill *Spilled = nullptr;
};

/// This thread's stack: bytes in use now, its high-water mark, and the reservation (0 until the
/// first frame takes something; 0 too where the reservation failed and frames use the heap).
struct ThreadScratchStats {
  size_t InUse = 0, HighWater = 0, Reserved = 0;
  const void *Base = nullptr;
};
ThreadScratchStats threadScratchStats();

/// The address range reserved per thread.
constexpr size_t threadScratchReserveBytes() { return size_t{256} << 20; }
/// The stack's first bytes, in 4 KiB pages; past them it is in 2 MiB huge pages (where THP is
/// available). Small models' stacks stay inside the prefix (MobileNetV2: ~125 KB per thread), so a
/// huge page would add to their peak RSS; larger ones (ResNet-50: ~2 MB per thread) fault 128
/// small pages and then one huge page per 2 MiB instead of 512 small ones.
constexpr size_t threadScratchSmallPageBytes() { return size_t{512} << 10; }

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
