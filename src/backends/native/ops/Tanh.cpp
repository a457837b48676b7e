// Tanh: hyperbolic tangent. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"
#include "backends/native/ops/common/MathApprox.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct TanhOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::tanh(X);
  }
};

using TanhTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc tanhDesc() {
  UnaryDesc D;
  D.OpType = "Tanh";
  D.Name = "tanh";
  D.Low = -5, D.High = 5;
  return D;
}

OpKernels tanhKernels() {
  OpKernels K = unaryKernels<TanhOp>(tanhDesc(), TanhTypes());
  K.Variants.push_back(unaryF32LoopVariant("f32_tanh__vec", [](const Node &) { return &approx::tanhF32; }));
  return K;
}

OPT_REGISTER_SCHEMA(Tanh, unarySchema<TanhOp>(tanhDesc(), TanhTypes()));
OPT_REGISTER_KERNELS(Tanh, tanhKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
