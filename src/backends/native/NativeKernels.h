// Kernel selection of the native backend, shared by the backend entry points and the
// control-flow ops' subgraph interpreter: the best registered variant, or a float32 variant
// behind a float16/bfloat16 adapter.
#pragma once

#include <memory>

#include "backends/native/Kernel.h"

namespace optimium {
namespace runtime {
namespace detail {

/// NotImplemented naming the node when no native variant supports it.
Result<std::unique_ptr<Kernel>> createNativeKernel(const KernelCreateInfo &Info);

} // namespace detail
} // namespace runtime
} // namespace optimium
