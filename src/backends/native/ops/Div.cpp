// Div: elementwise division with numpy broadcasting (f32, f64, integers). Integer division
// truncates toward zero (as ONNX Runtime does); division by zero is an error, not a trap.
#include "backends/native/ops/BinaryElementwise.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct DivOp {
  static constexpr bool IsDivision = true;
  template <typename T> static T apply(T A, T B) {
    if (std::is_signed<T>::value && std::is_integral<T>::value && B == static_cast<T>(-1)) {
      // INT_MIN / -1 traps on x86; negation through unsigned wraps instead.
      using W = WrapType<T>;
      return static_cast<T>(W(0) - static_cast<W>(A));
    }
    return A / B;
  }
};

OPT_REGISTER_SCHEMA(Div, binaryElementwiseSchema<DivOp>("Div"));
OPT_REGISTER_KERNELS(Div, binaryElementwiseKernels<DivOp>("Div", "div"));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
