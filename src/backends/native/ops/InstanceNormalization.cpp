// InstanceNormalization (f32, f16): for each image and channel, normalize over the spatial dims,
// then y = scale[c] * x_hat + B[c].
#include "backends/native/ops/common/NormStats.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status inferInstanceNorm(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireFloatInput(Ctx, 0));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  if (X.getRank() < 3)
    return Ctx.error(ErrorCode::Shape, "input must be [N, C, spatial...], got ", X.toString());
  static const char *Names[] = {"input", "scale", "B"};
  for (size_t I = 1; I < 3; ++I) {
    const TensorShape &P = Ctx.Inputs[I].Shape;
    if (P.getRank() != 1 || (P[0].isConst() && X[1].isConst() && P[0].value() != X[1].value()))
      return Ctx.error(ErrorCode::Shape, "input '", Names[I], "' ", P.toString(), " must be 1-D with ",
                       X[1].toString(), " channels");
  }
  ASSIGN_OR_RETURN(const float Eps, Ctx.N.getFloat("epsilon", 1e-5f));
  (void)Eps;
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = X;
  return Status::ok();
}

Status runInstanceNorm(float Epsilon, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  if (X.rank() < 3 || X.Dims != Y.Dims)
    return runError("instancenorm", "unexpected shapes ", joinInts(X.Dims), " -> ", joinInts(Y.Dims));
  const int64_t C = X.Dims[1], Inner = product(X.Dims, 2, X.rank());
  const std::vector<float> Scale = loadFloats(Ctx.Inputs[1]), Bias = loadFloats(Ctx.Inputs[2]);
  if (static_cast<int64_t>(Scale.size()) != C || static_cast<int64_t>(Bias.size()) != C)
    return runError("instancenorm", "scale/B must have ", C, " elements");
  normalizeBlocks(Ctx, Par, X, Y, X.Dims[0] * C, Inner, Inner, Epsilon,
                  [&](int64_t Block, int64_t, float &S, float &B) {
                    S = Scale[Block % C];
                    B = Bias[Block % C];
                  });
  return Status::ok();
}

OpKernels instanceNormKernels() {
  OpKernels K;
  K.OpType = "InstanceNormalization";
  addFloatVariants(K, "instancenorm", [](const KernelCreateInfo &I) -> Result<FloatRunFn> {
    ASSIGN_OR_RETURN(const float Eps, I.N.getFloat("epsilon", 1e-5f));
    return FloatRunFn([Eps](const KernelContext &C, bool Par) { return runInstanceNorm(Eps, C, Par); });
  });
  K.TestCases = [] {
    const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
    const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
    return std::vector<OpTestCase>{
        testCase("2d", {X({2, 3, 5, 6}), W({3}), W({3})}),
        testCase("1d", {X({1, 4, 9}), W({4}), W({4})}),
        testCase("3d_epsilon", {X({1, 2, 3, 4, 5}), W({2}), W({2})}, {{"epsilon", attrFloat(1e-2f)}}),
        testCase("many_planes", {X({2, 32, 8, 8}), W({32}), W({32})}),
    };
  };
  return K;
}

OpSchema instanceNormSchema() {
  OpSchema S;
  S.OpType = "InstanceNormalization";
  S.MinInputs = S.MaxInputs = 3;
  S.Infer = inferInstanceNorm;
  return S;
}

OPT_REGISTER_SCHEMA(InstanceNormalization, instanceNormSchema());
OPT_REGISTER_KERNELS(InstanceNormalization, instanceNormKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
