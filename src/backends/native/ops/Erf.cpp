// Erf: the Gauss error function (every numeric type since opset 9; integers round toward zero). The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"
#include "backends/native/ops/common/MathApprox.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct ErfOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return erfValue(X);
  }
};

using ErfTypes = TypeList<float, double, float16, bfloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

UnaryDesc erfDesc() {
  UnaryDesc D;
  D.OpType = "Erf";
  D.Name = "erf";
  return D;
}

OpKernels erfKernels() {
  OpKernels K = unaryKernels<ErfOp>(erfDesc(), ErfTypes());
  K.Variants.push_back(unaryF32LoopVariant("f32_erf__vec", [](const Node &) { return &approx::erfF32; }));
  return K;
}

OPT_REGISTER_SCHEMA(Erf, unarySchema<ErfOp>(erfDesc(), ErfTypes()));
OPT_REGISTER_KERNELS(Erf, erfKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
