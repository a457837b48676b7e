// Max: elementwise maximum of one or more inputs with multidirectional broadcasting (NaN propagates). The machinery is shared in common/ElementwiseBinary.h.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {


using MaxTypes = TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

OPT_REGISTER_SCHEMA(Max, variadicSchema<MaxOp>("Max", "max", false, MaxTypes()));
OPT_REGISTER_KERNELS(Max, variadicKernels<MaxOp>("Max", "max", false, MaxTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
