// GlobalMaxPool (f32, f16): [N, C, spatial...] -> [N, C, 1, ...], the maximum over all spatial dims
// (NaN propagates, as in MaxPool).
#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema globalMaxPoolSchema() {
  OpSchema S;
  S.OpType = "GlobalMaxPool";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireFloatInput(Ctx, 0));
    const TensorShape &In = Ctx.Inputs[0].Shape;
    if (In.getRank() < 3)
      return Ctx.error(ErrorCode::Shape, "input must be [N, C, spatial...], got ", In.toString());
    std::vector<Expr> Dims{In[0], In[1]};
    Dims.resize(In.getRank(), Expr(1));
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return Status::ok();
  };
  return S;
}

Status globalMax(const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  if (X.rank() < 3 || Y.elementCount() != static_cast<size_t>(X.Dims[0] * X.Dims[1]))
    return runError("globalmaxpool", "unexpected shapes ", joinInts(X.Dims), " -> ", joinInts(Y.Dims));
  const int64_t Planes = X.Dims[0] * X.Dims[1], Size = product(X.Dims, 2, X.rank());
  forRangeMaybe(Ctx, Par, static_cast<size_t>(Planes), std::max<int64_t>(1, 16384 / std::max<int64_t>(Size, 1)),
                [&](size_t Lo, size_t Hi) {
                  for (size_t P = Lo; P < Hi; ++P) {
                    float M = -INFINITY;
                    for (int64_t I = 0; I < Size; ++I) {
                      const float V = loadFloat(X, P * static_cast<size_t>(Size) + I);
                      if (V > M || std::isnan(V))
                        M = V;
                      if (std::isnan(M))
                        break;
                    }
                    storeFloat(Y, P, M);
                  }
                });
  return Status::ok();
}

OpKernels globalMaxPoolKernels() {
  OpKernels K;
  K.OpType = "GlobalMaxPool";
  addFloatVariants(K, "globalmaxpool", [](const KernelCreateInfo &) -> Result<FloatRunFn> { return FloatRunFn(globalMax); });
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("2d", {tensorInput({2, 3, 5, 5})}),
        testCase("1d", {tensorInput({1, 4, 7})}),
        testCase("3d", {tensorInput({1, 2, 3, 4, 5})}),
        testCase("many_planes", {tensorInput({2, 64, 7, 7})}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(GlobalMaxPool, globalMaxPoolSchema());
OPT_REGISTER_KERNELS(GlobalMaxPool, globalMaxPoolKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
