// Mul: elementwise multiplication with numpy broadcasting (f32, f64, integers; integers wrap
// on overflow). The broadcasting machinery is shared in common/ElementwiseBinary.h; this file only
// supplies the arithmetic.
#include "backends/native/ops/common/ElementwiseBinary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct MulOp {
  template <typename C> static C apply(C A, C B, const BinaryParams &) {
    using W = WrapType<C>;
    return static_cast<C>(static_cast<W>(A) * static_cast<W>(B));
  }
};

OPT_REGISTER_SCHEMA(Mul, binarySchema<MulOp>(arithmeticDesc("Mul", "mul", false), ArithmeticTypes()));
OPT_REGISTER_KERNELS(Mul, binaryKernels<MulOp>(arithmeticDesc("Mul", "mul", false), ArithmeticTypes()));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
