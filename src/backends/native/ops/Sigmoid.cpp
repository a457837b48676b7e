// Sigmoid: 1 / (1 + e^-x). The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"
#include "backends/native/ops/common/MathApprox.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct SigmoidOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return C(1) / (C(1) + std::exp(-X));
  }
};

using SigmoidTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc sigmoidDesc() {
  UnaryDesc D;
  D.OpType = "Sigmoid";
  D.Name = "sigmoid";
  D.Low = -10, D.High = 10;
  return D;
}

OpKernels sigmoidKernels() {
  OpKernels K = unaryKernels<SigmoidOp>(sigmoidDesc(), SigmoidTypes());
  K.Variants.push_back(unaryF32LoopVariant("f32_sigmoid__vec", [](const Node &) { return &approx::sigmoidF32; }));
  return K;
}

OPT_REGISTER_SCHEMA(Sigmoid, unarySchema<SigmoidOp>(sigmoidDesc(), SigmoidTypes()));
OPT_REGISTER_KERNELS(Sigmoid, sigmoidKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
