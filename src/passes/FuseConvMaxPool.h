// Fusion of a 2x2 stride-2 max pool into the convolution that feeds it (LeNet / MNIST-style CNNs:
// Conv -> Relu -> MaxPool): one com.optimium FusedConvMaxPool node computes two output rows of
// the convolution at a time into an L1 band and pools them from there, so the full-size
// convolution output is never written to memory and read back, and the pool is no op of its own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ir/FusedOps.h"
#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Rewrites every float32 2-D Conv of the small kernel's shapes (kSmallConvMax* in ir/FusedOps.h; bias and a clamp fused by
/// fuseConvActivation allowed, no fused residual) whose only reader is a MaxPool with a 2x2
/// window, strides 2, no padding, no dilation, rounding down and no Indices output, into one
/// FusedConvMaxPool node in the Conv's place: the Conv's inputs and attributes plus
/// kFusedPoolKernel / kFusedPoolStrides, writing the MaxPool's output. Run it after
/// fuseConvActivation, and only where the small kernel runs (AVX-512): elsewhere only the fused
/// node's reference kernel would. Returns the number fused.
size_t fuseConvMaxPool(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
