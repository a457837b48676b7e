// HammingWindow (opset 17): w[n] = 25/46 - 21/46 cos(2 pi n / N); shared machinery in common/Window.h.
#include "backends/native/ops/common/Window.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

const WindowCoeffs kHammingWindowCoeffs{25.0 / 46.0, 1.0 - 25.0 / 46.0, 0.0};

OPT_REGISTER_SCHEMA(HammingWindow, windowSchema("HammingWindow", kHammingWindowCoeffs));
OPT_REGISTER_KERNELS(HammingWindow, windowKernels("HammingWindow", "hammingwindow", kHammingWindowCoeffs));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
