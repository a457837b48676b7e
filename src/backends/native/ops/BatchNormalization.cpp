// BatchNormalization (f32, f16): inference normalizes with the given running statistics. Training
// mode (training_mode=1 at opset >= 14, or extra outputs before opset 14) normalizes with the
// batch statistics and returns the updated running mean/variance, as the ONNX reference does.
// Opsets before 9 with spatial=0 take per-activation parameters of shape [C, D1, ...].
#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct BatchNormAttrs {
  float Epsilon = 1e-5f, Momentum = 0.9f;
  bool Training = false;
  bool Spatial = true;
};

size_t presentOutputs(const Node &N) {
  size_t Count = 0;
  for (int O : N.Outputs)
    Count += O >= 0;
  return Count;
}

Result<BatchNormAttrs> parseBatchNormAttrs(const Node &N) {
  BatchNormAttrs A;
  ASSIGN_OR_RETURN(A.Epsilon, N.getFloat("epsilon", 1e-5f));
  ASSIGN_OR_RETURN(A.Momentum, N.getFloat("momentum", 0.9f));
  if (N.OpsetVersion >= 14) {
    ASSIGN_OR_RETURN(const int64_t Mode, N.getInt("training_mode", 0));
    if (Mode != 0 && Mode != 1)
      return makeError(ErrorCode::Model, N.describe(), ": attribute 'training_mode' value ", Mode, " must be 0 or 1");
    A.Training = Mode == 1;
    if (!A.Training && presentOutputs(N) > 1)
      return makeError(ErrorCode::Model, N.describe(),
                       ": outputs running_mean/running_var are only produced with training_mode=1");
  } else {
    A.Training = presentOutputs(N) > 1;
  }
  if (N.OpsetVersion > 0 && N.OpsetVersion < 9) {
    ASSIGN_OR_RETURN(const int64_t Spatial, N.getInt("spatial", 1));
    if (Spatial != 0 && Spatial != 1)
      return makeError(ErrorCode::Model, N.describe(), ": attribute 'spatial' value ", Spatial, " must be 0 or 1");
    A.Spatial = Spatial == 1;
  }
  if (!(A.Epsilon >= 0))
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'epsilon' value ", A.Epsilon, " must be >= 0");
  return A;
}

Status inferBatchNorm(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireFloatInput(Ctx, 0));
  for (size_t I = 1; I < 5; ++I)
    RETURN_IF_ERROR(requireFloatInput(Ctx, I));
  ASSIGN_OR_RETURN(const BatchNormAttrs A, parseBatchNormAttrs(Ctx.N));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  if (X.getRank() < 2)
    return Ctx.error(ErrorCode::Shape, "input X must have rank >= 2 ([N, C, ...]), got ", X.toString());
  const Expr C = X[1];
  const Expr Params = A.Spatial ? C : productExpr(X, 1, X.getRank());
  static const char *Names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t I = 1; I < 5; ++I) {
    const TensorShape &P = Ctx.Inputs[I].Shape;
    const Expr Count = productExpr(P, 0, P.getRank());
    if (Count.isConst() && Params.isConst() && Count.value() != Params.value())
      return Ctx.error(ErrorCode::Shape, "input '", Names[I], "' ", P.toString(), " must have ", Params.value(),
                       " elements (one per channel of X ", X.toString(), ")");
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = X;
  for (size_t O = 1; O < Ctx.Outputs.size(); ++O) {
    Ctx.Outputs[O].Type = Ctx.Inputs[O < 3 ? 3 + O - 1 : 3].Type;
    Ctx.Outputs[O].Shape = Ctx.Inputs[3].Shape;
  }
  return Status::ok();
}

OpSchema batchNormSchema() {
  OpSchema S;
  S.OpType = "BatchNormalization";
  S.MinInputs = S.MaxInputs = 5;
  S.MinOutputs = 1;
  S.MaxOutputs = 5;
  S.Infer = inferBatchNorm;
  return S;
}

Status runBatchNorm(const BatchNormAttrs &A, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  if (X.rank() < 2 || Y.Dims != X.Dims)
    return runError("batchnorm", "unexpected shapes ", joinInts(X.Dims), " -> ", joinInts(Y.Dims));
  const int64_t N = X.Dims[0], C = X.Dims[1], Inner = product(X.Dims, 2, X.rank());
  // Parameters per "channel": C, or C * Inner for spatial=0 (then each channel has Inner = 1).
  const int64_t P = A.Spatial ? C : C * Inner, PInner = A.Spatial ? Inner : 1;
  const std::vector<float> Scale = loadFloats(Ctx.Inputs[1]), Bias = loadFloats(Ctx.Inputs[2]);
  std::vector<float> Mean = loadFloats(Ctx.Inputs[3]), Var = loadFloats(Ctx.Inputs[4]);
  for (size_t I = 1; I < 5; ++I)
    if (static_cast<int64_t>(Ctx.Inputs[I].elementCount()) != P)
      return runError("batchnorm", "parameter ", I, " has ", Ctx.Inputs[I].elementCount(), " elements, expected ", P);
  if (A.Training) {
    std::vector<float> BatchMean(P), BatchVar(P);
    const double Count = static_cast<double>(N * PInner);
    for (int64_t Ch = 0; Ch < P; ++Ch) {
      double Sum = 0, Sq = 0;
      for (int64_t B = 0; B < N; ++B)
        for (int64_t I = 0; I < PInner; ++I)
          Sum += loadFloat(X, static_cast<size_t>((B * P + Ch) * PInner + I));
      const double M = Count > 0 ? Sum / Count : 0.0;
      for (int64_t B = 0; B < N; ++B)
        for (int64_t I = 0; I < PInner; ++I) {
          const double D = loadFloat(X, static_cast<size_t>((B * P + Ch) * PInner + I)) - M;
          Sq += D * D;
        }
      BatchMean[Ch] = static_cast<float>(M);
      BatchVar[Ch] = static_cast<float>(Count > 0 ? Sq / Count : 0.0);
    }
    for (size_t O = 1; O < Ctx.Outputs.size(); ++O) {
      if (!hasRunOutput(Ctx, O))
        continue;
      for (int64_t Ch = 0; Ch < P; ++Ch) {
        float V;
        if (O == 1)
          V = Mean[Ch] * A.Momentum + BatchMean[Ch] * (1 - A.Momentum);
        else if (O == 2)
          V = Var[Ch] * A.Momentum + BatchVar[Ch] * (1 - A.Momentum);
        else
          V = O == 3 ? BatchMean[Ch] : BatchVar[Ch];
        storeFloat(Ctx.Outputs[O], static_cast<size_t>(Ch), V);
      }
    }
    Mean = BatchMean;
    Var = BatchVar;
  }
  std::vector<float> Mul(P), Add(P);
  for (int64_t Ch = 0; Ch < P; ++Ch) {
    Mul[Ch] = static_cast<float>(Scale[Ch] / std::sqrt(static_cast<double>(Var[Ch]) + A.Epsilon));
    Add[Ch] = Bias[Ch] - Mean[Ch] * Mul[Ch];
  }
  const bool F32 = X.Type == ElementType::F32;
  forRangeMaybe(Ctx, Par, static_cast<size_t>(N * P), std::max<int64_t>(1, 8192 / std::max<int64_t>(PInner, 1)),
                [&](size_t Lo, size_t Hi) {
                  for (size_t Plane = Lo; Plane < Hi; ++Plane) {
                    const int64_t Ch = static_cast<int64_t>(Plane) % P;
                    const size_t Base = Plane * static_cast<size_t>(PInner);
                    if (F32) {
                      const float *In = X.data<const float>() + Base;
                      float *Out = Y.data<float>() + Base;
                      for (int64_t I = 0; I < PInner; ++I)
                        Out[I] = In[I] * Mul[Ch] + Add[Ch];
                    } else {
                      for (int64_t I = 0; I < PInner; ++I)
                        storeFloat(Y, Base + I, loadFloat(X, Base + I) * Mul[Ch] + Add[Ch]);
                    }
                  }
                });
  return Status::ok();
}

std::vector<OpTestCase> batchNormCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto Pos = [](std::vector<int64_t> D) {
    TestInput T = constInput(std::move(D));
    T.Low = 0.1, T.High = 2.0;
    return T;
  };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
  std::vector<OpTestCase> Cases = {
      testCase("nchw", {X({2, 3, 4, 5}), W({3}), W({3}), W({3}), Pos({3})}),
      testCase("epsilon", {X({1, 4, 3, 3}), W({4}), W({4}), W({4}), Pos({4})}, {{"epsilon", attrFloat(1e-2f)}}),
      testCase("2d_input", {X({5, 6}), W({6}), W({6}), W({6}), Pos({6})}),
      testCase("3d_spatial", {X({1, 2, 3, 4, 5}), W({2}), W({2}), W({2}), Pos({2})}),
      testCase("many_planes", {X({2, 64, 9, 9}), W({64}), W({64}), W({64}), Pos({64})}),
  };
  OpTestCase Train = testCase("training_mode", {X({3, 2, 4, 4}), W({2}), W({2}), W({2}), Pos({2})},
                              {{"training_mode", attrInt(1)}, {"momentum", attrFloat(0.8f)}});
  Train.NumOutputs = 3;
  Cases.push_back(Train);
  OpTestCase Spatial0 = testCase("opset7_spatial0", {X({2, 3, 2, 2}), W({3, 2, 2}), W({3, 2, 2}), W({3, 2, 2}),
                                                      Pos({3, 2, 2})},
                                 {{"spatial", attrInt(0)}});
  Spatial0.OpsetVersion = 7;
  Cases.push_back(Spatial0);
  return Cases;
}

OpKernels batchNormKernels() {
  OpKernels K;
  K.OpType = "BatchNormalization";
  addFloatVariants(K, "batchnorm", [](const KernelCreateInfo &I) -> Result<FloatRunFn> {
    ASSIGN_OR_RETURN(const BatchNormAttrs A, parseBatchNormAttrs(I.N));
    return FloatRunFn([A](const KernelContext &C, bool Par) { return runBatchNorm(A, C, Par); });
  });
  K.TestCases = batchNormCases;
  return K;
}

OPT_REGISTER_SCHEMA(BatchNormalization, batchNormSchema());
OPT_REGISTER_KERNELS(BatchNormalization, batchNormKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
