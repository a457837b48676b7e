// ReduceLogSumExp: log of the sum of exponentials (computed with the maximum shifted out) over the given axes. Axes come from the attribute before opset 18 and from the
// optional input 1 from opset 18; keepdims, noop_with_empty_axes. Shared code: common/Reduce.h.
#include "backends/native/ops/common/Reduce.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OPT_REGISTER_SCHEMA(ReduceLogSumExp, reduceSchema<ReduceKind::LogSumExp>("ReduceLogSumExp", ReduceNumericTypes()));
OPT_REGISTER_KERNELS(ReduceLogSumExp, reduceKernels<ReduceKind::LogSumExp>("ReduceLogSumExp", "reducelogsumexp", -3, 3, ReduceNumericTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
