// CumProd: cumulative product along an axis (opset 26); shared with CumSum in common/Cumulative.h.
#include "backends/native/ops/common/Cumulative.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OPT_REGISTER_SCHEMA(CumProd, cumulativeSchema<true>());
OPT_REGISTER_KERNELS(CumProd, cumulativeKernels<true>(26));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
