// ArgMax: int64 index of the largest element along 'axis' (default 0), keepdims,
// select_last_index (opset 12+). Shared code: common/ReduceArg.h.
#include "backends/native/ops/common/ReduceArg.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OPT_REGISTER_SCHEMA(ArgMax, argSchema<true>("ArgMax"));
OPT_REGISTER_KERNELS(ArgMax, argKernels<true>("ArgMax", "argmax"));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
