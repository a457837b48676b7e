// ArgMin: int64 index of the smallest element along 'axis' (default 0), keepdims,
// select_last_index (opset 12+). Shared code: common/ReduceArg.h.
#include "backends/native/ops/common/ReduceArg.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OPT_REGISTER_SCHEMA(ArgMin, argSchema<false>("ArgMin"));
OPT_REGISTER_KERNELS(ArgMin, argKernels<false>("ArgMin", "argmin"));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
