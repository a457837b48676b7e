// Fusion of a 2x2 stride-2 max pool into the convolution that feeds it (LeNet / MNIST-style CNNs:
// Conv -> Relu -> MaxPool): one com.optimium FusedConvMaxPool node computes two output rows of
// the convolution at a time into an L1 band and pools them from there, so the full-size
// convolution output is never written to memory and read back, and the pool is no op of its own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

constexpr const char *kFusedConvMaxPoolDomain = "com.optimium";
constexpr const char *kFusedConvMaxPoolOp = "FusedConvMaxPool";
/// The pool's window and strides on the fused node (2-D ints); the Conv keeps its own attributes.
constexpr const char *kFusedPoolKernel = "optimium.pool_kernel";
constexpr const char *kFusedPoolStrides = "optimium.pool_strides";

/// The convolutions Conv's direct "small" kernel takes (backends/native/ops/common/SmallConv: group
/// 1, stride 1, dilation 1, a window of two taps or more, constant weights) are further limited to
/// at most this many output channels and C * KH * KW reduction terms. The fused node runs on that
/// kernel, so the pass fuses only such convolutions.
constexpr int64_t kSmallConvMaxOutputChannels = 64;
constexpr int64_t kSmallConvMaxReduction = 4096;

/// Rewrites every float32 2-D Conv of the small kernel's shapes (above; bias and a clamp fused by
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
