// ReduceSumSquare: sum of squares over the given axes. Axes come from the attribute before opset 18 and from the
// optional input 1 from opset 18; keepdims, noop_with_empty_axes. Shared code: common/Reduce.h.
#include "backends/native/ops/common/Reduce.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OPT_REGISTER_SCHEMA(ReduceSumSquare, reduceSchema<ReduceKind::SumSquare>("ReduceSumSquare", ReduceNumericTypes()));
OPT_REGISTER_KERNELS(ReduceSumSquare, reduceKernels<ReduceKind::SumSquare>("ReduceSumSquare", "reducesumsquare", -3, 3, ReduceNumericTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
