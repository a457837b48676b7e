// com.microsoft QGemm (ONNX Runtime's contrib op; what its QOperator quantizer makes of a Gemm):
// acc = sum_k (A - a_zp)(B - b_zp[n]) + C (int32 bias, scale alpha * a_scale * b_scale), then
// Y = saturate(rint(acc * alpha * a_scale * b_scale[n] / y_scale) + y_zp) in u8/i8, or, without
// y_scale, Y = acc * alpha * a_scale * b_scale[n] in float32. A and B are u8 or i8 (any mix),
// transA / transB as Gemm; b_scale and b_zero_point are scalars or one per column N.
#include "backends/native/ops/common/QuantCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct QGemmAttrs {
  bool TransA = false, TransB = false;
  float Alpha = 1.0f;
};

Result<QGemmAttrs> parseQGemmAttrs(const Node &N) {
  QGemmAttrs G;
  ASSIGN_OR_RETURN(const int64_t TA, N.getInt("transA", 0));
  ASSIGN_OR_RETURN(const int64_t TB, N.getInt("transB", 0));
  ASSIGN_OR_RETURN(G.Alpha, N.getFloat("alpha", 1.0f));
  G.TransA = TA != 0, G.TransB = TB != 0;
  return G;
}

OpSchema qgemmSchema() {
  OpSchema S;
  S.Domain = "com.microsoft";
  S.OpType = "QGemm";
  S.MinInputs = 6;
  S.MaxInputs = 9;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::U8, ElementType::I8}));
    RETURN_IF_ERROR(requireInputType(Ctx, 3, {ElementType::U8, ElementType::I8}));
    RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::F32}));
    RETURN_IF_ERROR(requireInputType(Ctx, 4, {ElementType::F32}));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
    RETURN_IF_ERROR(requireSameType(Ctx, 3, 5));
    if (Ctx.hasInput(6))
      RETURN_IF_ERROR(requireInputType(Ctx, 6, {ElementType::I32}));
    const bool Quantized = Ctx.hasInput(7);
    if (Quantized) {
      RETURN_IF_ERROR(requireInputType(Ctx, 7, {ElementType::F32}));
      if (!Ctx.hasInput(8))
        return Ctx.error(ErrorCode::Type, "y_scale without y_zero_point (the output type comes from it)");
      RETURN_IF_ERROR(requireInputType(Ctx, 8, {ElementType::U8, ElementType::I8}));
    } else if (Ctx.hasInput(8)) {
      return Ctx.error(ErrorCode::Type, "y_zero_point without y_scale");
    }
    ASSIGN_OR_RETURN(const QGemmAttrs G, parseQGemmAttrs(Ctx.N));
    const TensorShape &A = Ctx.Inputs[0].Shape, &B = Ctx.Inputs[3].Shape;
    if (A.getRank() != 2 || B.getRank() != 2)
      return Ctx.error(ErrorCode::Shape, "A and B must be 2-D, got ", A.toString(), " and ", B.toString());
    const Expr M = G.TransA ? A[1] : A[0], KA = G.TransA ? A[0] : A[1];
    const Expr KB = G.TransB ? B[1] : B[0], N = G.TransB ? B[0] : B[1];
    if (KA.isConst() && KB.isConst() && KA.value() != KB.value())
      return Ctx.error(ErrorCode::Shape, "inner dimensions differ: A ", A.toString(), " (transA=", G.TransA, ") and B ",
                       B.toString(), " (transB=", G.TransB, ")");
    if (Ctx.hasInput(6) && Ctx.Inputs[6].Shape.getRank() > 2)
      return Ctx.error(ErrorCode::Shape, "C of shape ", Ctx.Inputs[6].Shape.toString(), " is not a scalar, [N] or [M, N]");
    Ctx.Outputs[0].Type = Quantized ? Ctx.Inputs[8].Type : ElementType::F32;
    Ctx.Outputs[0].Shape = TensorShape{M, N};
    return Status::ok();
  };
  return S;
}

Status runQGemm(const QGemmAttrs &G, const KernelContext &Ctx, bool Par) {
  const TensorView &A = Ctx.Inputs[0], &B = Ctx.Inputs[3], &Y = Ctx.Outputs[0];
  if (A.rank() != 2 || B.rank() != 2 || Y.rank() != 2)
    return runError("qgemm", "A, B and Y must be 2-D");
  const int64_t M = G.TransA ? A.Dims[1] : A.Dims[0], K = G.TransA ? A.Dims[0] : A.Dims[1];
  const int64_t N = G.TransB ? B.Dims[0] : B.Dims[1];
  if ((G.TransB ? B.Dims[1] : B.Dims[0]) != K || Y.Dims[0] != M || Y.Dims[1] != N)
    return runError("qgemm", "shapes ", joinInts(A.Dims), " x ", joinInts(B.Dims), " -> ", joinInts(Y.Dims),
                    " do not match");
  const std::vector<float> AS = loadFloats(Ctx.Inputs[1]), BS = loadFloats(Ctx.Inputs[4]);
  const std::vector<int32_t> AZ = loadZeroPoints(Ctx, 2), BZ = loadZeroPoints(Ctx, 5);
  if (AS.size() != 1 || AZ.size() != 1)
    return runError("qgemm", "a_scale and a_zero_point must be scalars");
  if ((BS.size() != 1 && BS.size() != static_cast<size_t>(N)) || (BZ.size() != 1 && BZ.size() != static_cast<size_t>(N)))
    return runError("qgemm", "b_scale and b_zero_point must be scalars or have N = ", N, " elements, got ", BS.size(),
                    " and ", BZ.size());
  const bool HasC = hasRunInput(Ctx, 6);
  const TensorView *C = HasC ? &Ctx.Inputs[6] : nullptr;
  int64_t CM = 1, CN = 1;
  if (C) {
    CM = C->rank() == 2 ? C->Dims[0] : 1, CN = C->rank() >= 1 ? C->Dims[C->rank() - 1] : 1;
    if ((CM != 1 && CM != M) || (CN != 1 && CN != N))
      return runError("qgemm", "C of shape ", joinInts(C->Dims), " does not broadcast to [", M, ", ", N, "]");
  }
  const bool Quantized = Y.Type != ElementType::F32;
  float YS = 1.0f;
  int32_t YZ = 0;
  if (Quantized) {
    const std::vector<float> V = loadFloats(Ctx.Inputs[7]);
    const std::vector<int32_t> Z = loadZeroPoints(Ctx, 8);
    if (V.size() != 1 || Z.size() != 1)
      return runError("qgemm", "y_scale and y_zero_point must be scalars");
    YS = V[0], YZ = Z[0];
  }
  const auto At = [&](int64_t I, int64_t Kx) { return loadInt(A, static_cast<size_t>(G.TransA ? Kx * M + I : I * K + Kx)); };
  const auto Bt = [&](int64_t Kx, int64_t J) { return loadInt(B, static_cast<size_t>(G.TransB ? J * K + Kx : Kx * N + J)); };
  forRangeMaybe(Ctx, Par, static_cast<size_t>(M * N), 256, [&](size_t Lo, size_t Hi) {
    for (size_t E = Lo; E < Hi; ++E) {
      const int64_t I = static_cast<int64_t>(E) / N, J = static_cast<int64_t>(E) % N;
      const int32_t Bz = BZ[BZ.size() == 1 ? 0 : static_cast<size_t>(J)];
      int32_t Acc = 0;
      for (int64_t Kx = 0; Kx < K; ++Kx)
        Acc += (At(I, Kx) - AZ[0]) * (Bt(Kx, J) - Bz);
      if (C)
        Acc += C->data<const int32_t>()[(CM == 1 ? 0 : I) * CN + (CN == 1 ? 0 : J)];
      // The float32 multiplier, as QLinearMatMul (and ONNX Runtime's requantization) take it.
      const float Scale = G.Alpha * AS[0] * BS[BS.size() == 1 ? 0 : static_cast<size_t>(J)];
      if (Quantized)
        storeSaturated(Y, E, roundHalfEven(static_cast<double>(Acc) * (Scale / YS)) + YZ);
      else
        Y.data<float>()[E] = static_cast<float>(static_cast<double>(Acc) * Scale);
    }
  });
  return Status::ok();
}

OpKernels qgemmKernels() {
  OpKernels K;
  K.Domain = "com.microsoft";
  K.OpType = "QGemm";
  const auto Variant = [](std::string Name, int Priority, bool Par) {
    return KernelVariant{Name, Priority, nullptr, [Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                           ASSIGN_OR_RETURN(const QGemmAttrs G, parseQGemmAttrs(I.N));
                           return makeKernel<FunctionKernel>([G, Par](const KernelContext &C) { return runQGemm(G, C, Par); });
                         }};
  };
  K.Variants.push_back(Variant("q_qgemm__ref", 0, false));
  K.Variants.push_back(Variant("q_qgemm__parallel", 10, true));
  K.TestCases = [] {
    const auto Q = [](std::vector<int64_t> D, ElementType T) {
      TestInput I = tensorInput(std::move(D), T);
      I.Low = T == ElementType::U8 ? 0 : -128, I.High = T == ElementType::U8 ? 255 : 127;
      return I;
    };
    const auto Bias = [](std::vector<int64_t> D) {
      TestInput I = tensorInput(std::move(D), ElementType::I32);
      I.Low = -3000, I.High = 3000;
      return I;
    };
    const auto F = [](std::vector<int64_t> D, std::vector<double> V) { return valuesInput(D, V, ElementType::F32, true); };
    const auto Z = [](std::vector<int64_t> D, std::vector<double> V, ElementType T) { return valuesInput(D, V, T, true); };
    const ElementType U8 = ElementType::U8, I8 = ElementType::I8;
    AttrValue TransB;
    TransB.K = AttrValue::Kind::Int;
    TransB.I = 1;
    return std::vector<OpTestCase>{
        testCase("s8s8_transB_per_column", {Q({2, 40}, I8), F({}, {0.02}), Z({}, {-3}, I8), Q({24, 40}, I8),
                                            F({24}, std::vector<double>(24, 0.004)), Z({24}, std::vector<double>(24, 0), I8),
                                            Bias({24}), F({}, {0.09}), Z({}, {5}, I8)},
                 {{"transB", TransB}}),
        testCase("u8s8_float_output", {Q({3, 16}, U8), F({}, {0.05}), Z({}, {128}, U8), Q({16, 8}, I8), F({}, {0.01}),
                                       Z({}, {0}, I8), Bias({8})}),
        testCase("u8u8_no_bias", {Q({4, 12}, U8), F({}, {0.03}), Z({}, {120}, U8), Q({12, 6}, U8), F({}, {0.02}),
                                  Z({}, {130}, U8), omittedInput(), F({}, {0.2}), Z({}, {100}, U8)}),
    };
  };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(QGemm, qgemmSchema());
OPT_REGISTER_KERNELS(QGemm, qgemmKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
