// CumSum: cumulative sum along an axis (opset 11+); shared with CumProd in common/Cumulative.h.
#include "backends/native/ops/common/Cumulative.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OPT_REGISTER_SCHEMA(CumSum, cumulativeSchema<false>());
OPT_REGISTER_KERNELS(CumSum, cumulativeKernels<false>(11));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
