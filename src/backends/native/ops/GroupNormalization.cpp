// GroupNormalization (opset 18 and 21; f32, f16): channels are split into num_groups groups, each
// (image, group) block is normalized over its channels and spatial dims. Opset 18 takes scale and
// bias per group, opset 21 per channel.
#include "backends/native/ops/common/NormStats.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct GroupNormAttrs {
  int64_t Groups = 0;
  float Epsilon = 1e-5f;
  bool PerChannel = true; ///< opset >= 21
};

Result<GroupNormAttrs> parseGroupNormAttrs(const Node &N) {
  GroupNormAttrs A;
  if (!N.hasAttr("num_groups"))
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'num_groups' is required");
  ASSIGN_OR_RETURN(A.Groups, N.getInt("num_groups", 0));
  if (A.Groups <= 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'num_groups' value ", A.Groups, " must be positive");
  ASSIGN_OR_RETURN(A.Epsilon, N.getFloat("epsilon", 1e-5f));
  ASSIGN_OR_RETURN(const int64_t Stash, N.getInt("stash_type", 1));
  if (Stash != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'stash_type' value ", Stash,
                     " is not supported (only 1 = float32)");
  A.PerChannel = N.OpsetVersion == 0 || N.OpsetVersion >= 21;
  return A;
}

Status inferGroupNorm(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireFloatInput(Ctx, 0));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
  ASSIGN_OR_RETURN(const GroupNormAttrs A, parseGroupNormAttrs(Ctx.N));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  if (X.getRank() < 2)
    return Ctx.error(ErrorCode::Shape, "input X must be [N, C, ...], got ", X.toString());
  if (X[1].isConst() && X[1].value() % A.Groups != 0)
    return Ctx.error(ErrorCode::Model, "attribute 'num_groups' value ", A.Groups, " does not divide the channels ",
                     X[1].value());
  const Expr Want = A.PerChannel ? X[1] : Expr(A.Groups);
  static const char *Names[] = {"X", "scale", "bias"};
  for (size_t I = 1; I < 3; ++I) {
    const TensorShape &P = Ctx.Inputs[I].Shape;
    if (P.getRank() != 1 || (P[0].isConst() && Want.isConst() && P[0].value() != Want.value()))
      return Ctx.error(ErrorCode::Shape, "input '", Names[I], "' ", P.toString(), " must be 1-D with ",
                       Want.toString(), A.PerChannel ? " values (one per channel)" : " values (one per group)");
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = X;
  return Status::ok();
}

Status runGroupNorm(const GroupNormAttrs &A, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  if (X.rank() < 2 || X.Dims != Y.Dims || X.Dims[1] % A.Groups != 0)
    return runError("groupnorm", "unexpected shapes ", joinInts(X.Dims), " -> ", joinInts(Y.Dims));
  const int64_t C = X.Dims[1], Inner = product(X.Dims, 2, X.rank()), ChPerGroup = C / A.Groups;
  const std::vector<float> Scale = loadFloats(Ctx.Inputs[1]), Bias = loadFloats(Ctx.Inputs[2]);
  const size_t Want = static_cast<size_t>(A.PerChannel ? C : A.Groups);
  if (Scale.size() != Want || Bias.size() != Want)
    return runError("groupnorm", "scale/bias must have ", Want, " elements");
  normalizeBlocks(Ctx, Par, X, Y, X.Dims[0] * A.Groups, ChPerGroup * Inner, Inner, A.Epsilon,
                  [&](int64_t Block, int64_t ChInBlock, float &S, float &B) {
                    const int64_t G = Block % A.Groups;
                    const size_t P = static_cast<size_t>(A.PerChannel ? G * ChPerGroup + ChInBlock : G);
                    S = Scale[P];
                    B = Bias[P];
                  });
  return Status::ok();
}

OpKernels groupNormKernels() {
  OpKernels K;
  K.OpType = "GroupNormalization";
  addFloatVariants(K, "groupnorm", [](const KernelCreateInfo &I) -> Result<FloatRunFn> {
    ASSIGN_OR_RETURN(const GroupNormAttrs A, parseGroupNormAttrs(I.N));
    return FloatRunFn([A](const KernelContext &C, bool Par) { return runGroupNorm(A, C, Par); });
  });
  K.TestCases = [] {
    const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
    const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
    std::vector<OpTestCase> Cases = {
        testCase("opset21_per_channel", {X({2, 6, 4, 4}), W({6}), W({6})}, {{"num_groups", attrInt(3)}}),
        testCase("opset21_epsilon_1d", {X({1, 4, 7}), W({4}), W({4})},
                 {{"num_groups", attrInt(2)}, {"epsilon", attrFloat(1e-2f)}}),
        testCase("one_group", {X({2, 4, 3, 3}), W({4}), W({4})}, {{"num_groups", attrInt(1)}}),
        testCase("many_groups", {X({2, 32, 6, 6}), W({32}), W({32})}, {{"num_groups", attrInt(8)}}),
    };
    for (OpTestCase &C : Cases)
      C.OpsetVersion = 21;
    OpTestCase Old = testCase("opset18_per_group", {X({2, 6, 3, 3}), W({3}), W({3})}, {{"num_groups", attrInt(3)}});
    Old.OpsetVersion = 18;
    Cases.push_back(Old);
    return Cases;
  };
  return K;
}

OpSchema groupNormSchema() {
  OpSchema S;
  S.OpType = "GroupNormalization";
  S.MinInputs = S.MaxInputs = 3;
  S.Infer = inferGroupNorm;
  return S;
}

OPT_REGISTER_SCHEMA(GroupNormalization, groupNormSchema());
OPT_REGISTER_KERNELS(GroupNormalization, groupNormKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
