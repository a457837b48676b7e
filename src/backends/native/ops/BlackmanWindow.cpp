// BlackmanWindow (opset 17): w[n] = 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N); shared machinery in common/Window.h.
#include "backends/native/ops/common/Window.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

const WindowCoeffs kBlackmanWindowCoeffs{0.42, 0.5, 0.08};

OPT_REGISTER_SCHEMA(BlackmanWindow, windowSchema("BlackmanWindow", kBlackmanWindowCoeffs));
OPT_REGISTER_KERNELS(BlackmanWindow, windowKernels("BlackmanWindow", "blackmanwindow", kBlackmanWindowCoeffs));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
