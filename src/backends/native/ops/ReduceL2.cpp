// ReduceL2: square root of the sum of squares over the given axes. Axes come from the attribute before opset 18 and from the
// optional input 1 from opset 18; keepdims, noop_with_empty_axes. Shared code: common/Reduce.h.
#include "backends/native/ops/common/Reduce.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OPT_REGISTER_SCHEMA(ReduceL2, reduceSchema<ReduceKind::L2>("ReduceL2", ReduceNumericTypes()));
OPT_REGISTER_KERNELS(ReduceL2, reduceKernels<ReduceKind::L2>("ReduceL2", "reducel2", -3, 3, ReduceNumericTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
