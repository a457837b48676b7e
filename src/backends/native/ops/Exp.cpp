// Exp: e^x. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"
#include "backends/native/ops/common/MathApprox.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct ExpOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::exp(X);
  }
};

using ExpTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc expDesc() {
  UnaryDesc D;
  D.OpType = "Exp";
  D.Name = "exp";
  D.Low = -5, D.High = 5;
  return D;
}

OpKernels expKernels() {
  OpKernels K = unaryKernels<ExpOp>(expDesc(), ExpTypes());
  K.Variants.push_back(unaryF32LoopVariant("f32_exp__vec", [](const Node &) { return &approx::expF32; }));
  return K;
}

OPT_REGISTER_SCHEMA(Exp, unarySchema<ExpOp>(expDesc(), ExpTypes()));
OPT_REGISTER_KERNELS(Exp, expKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
