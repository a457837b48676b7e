// LpPool (f32, opsets 11-22): the p-norm (sum |x|^p)^(1/p) of each window, on the shared pooling
// geometry and kernel (common/Pooling.h: kernel_shape, strides, pads, auto_pad, dilations,
// ceil_mode). Padding positions contribute zero.
#include <cmath>

#include "backends/native/ops/common/Pooling.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct LpReducer {
  float P = 2;
  float init() const { return 0.0f; }
  float add(float Acc, float V) const {
    const float A = std::fabs(V);
    return Acc + (P == 2 ? A * A : P == 1 ? A : std::pow(A, P));
  }
  float finish(float Acc, int64_t, int64_t) const {
    return P == 2 ? std::sqrt(Acc) : P == 1 ? Acc : std::pow(Acc, 1.0f / P);
  }
};

Result<LpReducer> parseLpReducer(const Node &N) {
  ASSIGN_OR_RETURN(const int64_t P, N.getInt("p", 2));
  if (P < 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'p' value ", P, " must be >= 1");
  LpReducer R;
  R.P = static_cast<float>(P);
  return R;
}

OpSchema lpPoolSchema() {
  OpSchema S;
  S.OpType = "LpPool";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(const LpReducer R, parseLpReducer(Ctx.N));
    (void)R;
    return inferPool(Ctx, /*AllowCeilMode=*/true);
  };
  return S;
}

KernelVariant lpPoolVariant(const std::string &Name, int Priority, bool Fast2D) {
  const auto Supports = [Fast2D](const KernelCreateInfo &I) {
    return inputIs(I, 0, ElementType::F32) && (!Fast2D || I.Inputs[0].Shape.getRank() == 4);
  };
  return {Name, Priority, Supports, [Name, Fast2D](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(const LpReducer R, parseLpReducer(I.N));
            ASSIGN_OR_RETURN(WindowAttrs W, parseWindowAttrs(I.N, I.Inputs[0].Shape.getRank() - 2, nullptr, true));
            return makeKernel<PoolKernel<LpReducer>>(Name, std::move(W), R, Fast2D);
          }};
}

OpKernels lpPoolKernels() {
  OpKernels K;
  K.OpType = "LpPool";
  K.Variants.push_back(lpPoolVariant("f32_lppool__ref", 0, false));
  K.Variants.push_back(lpPoolVariant("f32_lppool__2d", 10, true));
  K.TestCases = [] {
    std::vector<OpTestCase> Cases = poolingCases();
    const size_t N = Cases.size();
    for (size_t I = 0; I < N; ++I) {
      Cases[I].Attrs["p"] = attrInt(I % 3 == 0 ? 2 : I % 3 == 1 ? 3 : 1);
      Cases[I].Tolerance = 1e-4;
    }
    return Cases;
  };
  return K;
}

OPT_REGISTER_SCHEMA(LpPool, lpPoolSchema());
OPT_REGISTER_KERNELS(LpPool, lpPoolKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
