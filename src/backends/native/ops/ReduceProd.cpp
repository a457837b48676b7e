// ReduceProd: product of the elements over the given axes. Axes come from the attribute before opset 18 and from the
// optional input 1 from opset 18; keepdims, noop_with_empty_axes. Shared code: common/Reduce.h.
#include "backends/native/ops/common/Reduce.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OPT_REGISTER_SCHEMA(ReduceProd, reduceSchema<ReduceKind::Prod>("ReduceProd", ReduceNumericTypes()));
OPT_REGISTER_KERNELS(ReduceProd, reduceKernels<ReduceKind::Prod>("ReduceProd", "reduceprod", 0.5, 1.5, ReduceNumericTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
