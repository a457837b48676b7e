// ReduceSum: sum of the elements over the given axes. Axes come from the attribute before opset 13 and from the
// optional input 1 from opset 13; keepdims, noop_with_empty_axes. Shared code: common/Reduce.h.
#include "backends/native/ops/common/Reduce.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OPT_REGISTER_SCHEMA(ReduceSum, reduceSchema<ReduceKind::Sum>("ReduceSum", ReduceNumericTypes()));
OPT_REGISTER_KERNELS(ReduceSum, reduceKernels<ReduceKind::Sum>("ReduceSum", "reducesum", -3, 3, ReduceNumericTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
