// ReduceMin: minimum (NaN propagates; +inf / the type maximum for an empty set) over the given axes. Axes come from the attribute before opset 18 and from the
// optional input 1 from opset 18; keepdims, noop_with_empty_axes. Shared code: common/Reduce.h.
#include "backends/native/ops/common/Reduce.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OPT_REGISTER_SCHEMA(ReduceMin, reduceSchema<ReduceKind::Min>("ReduceMin", ReduceMinMaxTypes()));
OPT_REGISTER_KERNELS(ReduceMin, reduceKernels<ReduceKind::Min>("ReduceMin", "reducemin", -3, 3, ReduceMinMaxTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
