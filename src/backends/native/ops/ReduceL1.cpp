// ReduceL1: sum of absolute values over the given axes. Axes come from the attribute before opset 18 and from the
// optional input 1 from opset 18; keepdims, noop_with_empty_axes. Shared code: common/Reduce.h.
#include "backends/native/ops/common/Reduce.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OPT_REGISTER_SCHEMA(ReduceL1, reduceSchema<ReduceKind::L1>("ReduceL1", ReduceNumericTypes()));
OPT_REGISTER_KERNELS(ReduceL1, reduceKernels<ReduceKind::L1>("ReduceL1", "reducel1", -3, 3, ReduceNumericTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
