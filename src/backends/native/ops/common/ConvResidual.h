// Conv kernels and the residual fused by passes/FuseConvResidual: a kernel variant that does not
// add the residual itself is wrapped so that it computes the plain convolution (bias, no activation)
// and one pass then adds the residual and applies the fused activation.
#pragma once

#include "backends/native/KernelRegistry.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Whether the Conv node carries a fused residual (input 3).
bool hasConvResidual(const Node &N);
/// The residual of a run (Ctx.Inputs[3]), or nullptr.
const float *convResidualOf(const KernelContext &Ctx);

/// V made residual-aware: for a node with a residual, V sees the node without the residual and
/// without the fused activation, and its kernel is followed by Y = act(Y + residual). Nodes without a
/// residual go to V as they are.
KernelVariant withConvResidual(KernelVariant V);

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
