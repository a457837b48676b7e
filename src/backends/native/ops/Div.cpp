// Div: elementwise division with numpy broadcasting (f32, f64, integers). Integer division
// truncates toward zero (as ONNX Runtime does); division by zero is an error, not a trap. The
// broadcasting machinery is shared in common/ElementwiseBinary.h.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct DivOp {
  template <typename C> static C apply(C A, C B, const BinaryParams &) {
    if (std::is_signed<C>::value && std::is_integral<C>::value && B == static_cast<C>(-1)) {
      // INT_MIN / -1 traps on x86; negation through unsigned wraps instead.
      using W = WrapType<C>;
      return static_cast<C>(W(0) - static_cast<W>(A));
    }
    return A / B;
  }
};

OPT_REGISTER_SCHEMA(Div, binarySchema<DivOp>(arithmeticDesc("Div", "div", true), ArithmeticTypes()));
OPT_REGISTER_KERNELS(Div, binaryKernels<DivOp>(arithmeticDesc("Div", "div", true), ArithmeticTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
