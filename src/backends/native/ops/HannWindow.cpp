// HannWindow (opset 17): w[n] = 0.5 - 0.5 cos(2 pi n / N); shared machinery in common/Window.h.
#include "backends/native/ops/common/Window.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

const WindowCoeffs kHannWindowCoeffs{0.5, 0.5, 0.0};

OPT_REGISTER_SCHEMA(HannWindow, windowSchema("HannWindow", kHannWindowCoeffs));
OPT_REGISTER_KERNELS(HannWindow, windowKernels("HannWindow", "hannwindow", kHannWindowCoeffs));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
