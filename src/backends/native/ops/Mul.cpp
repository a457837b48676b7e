// Mul: elementwise multiplication with numpy broadcasting (f32, f64, integers). The broadcasting
// machinery is shared in BinaryElementwise.h; this file only supplies the arithmetic.
#include "backends/native/ops/BinaryElementwise.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct MulOp {
  static constexpr bool IsDivision = false;
  template <typename T> static T apply(T A, T B) {
    using W = WrapType<T>;
    return static_cast<T>(static_cast<W>(A) * static_cast<W>(B));
  }
};

OPT_REGISTER_SCHEMA(Mul, binaryElementwiseSchema<MulOp>("Mul"));
OPT_REGISTER_KERNELS(Mul, binaryElementwiseKernels<MulOp>("Mul", "mul"));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
