// Outputs a kernel sizes while it runs (control flow: a Loop's stacked scan outputs, an If whose
// branches differ in shape). The executor passes such an output with Data == nullptr and installs
// an allocator for the calling thread while the kernel runs; the kernel asks it for the buffer
// once it knows the dims. Thread-local rather than a KernelContext member so the kernel
// interface every op includes stays as it is (a follow-up can move it into KernelContext).
#pragma once

#include <functional>
#include <vector>

#include "backends/native/Kernel.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Allocates output Index of the running kernel with Dims; returns the view to write.
using OutputAllocator = std::function<Result<TensorView>(size_t Index, const std::vector<int64_t> &Dims)>;

inline const OutputAllocator *&outputAllocatorSlot() {
  static thread_local const OutputAllocator *Current = nullptr;
  return Current;
}

/// The allocator for the kernel running on this thread, or null (every output preallocated).
inline const OutputAllocator *currentOutputAllocator() { return outputAllocatorSlot(); }

/// Installs A for the current thread for the lifetime of the object (nests).
class ScopedOutputAllocator {
public:
  explicit ScopedOutputAllocator(const OutputAllocator *A) : Prev(outputAllocatorSlot()) { outputAllocatorSlot() = A; }
  ~ScopedOutputAllocator() { outputAllocatorSlot() = Prev; }
  ScopedOutputAllocator(const ScopedOutputAllocator &) = delete;
  ScopedOutputAllocator &operator=(const ScopedOutputAllocator &) = delete;

private:
  const OutputAllocator *Prev;
};

} // namespace detail
} // namespace runtime
} // namespace optimium
