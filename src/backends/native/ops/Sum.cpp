// Sum: elementwise sum of one or more inputs with multidirectional broadcasting. The machinery is shared in common/ElementwiseBinary.h.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SumOp {
  template <typename C> static C apply(C A, C B, const BinaryParams &) { return A + B; }
};

using SumTypes = TypeList<float, double, float16, bfloat16>;

OPT_REGISTER_SCHEMA(Sum, variadicSchema<SumOp>("Sum", "sum", false, SumTypes()));
OPT_REGISTER_KERNELS(Sum, variadicKernels<SumOp>("Sum", "sum", false, SumTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
