// com.microsoft QLinearGlobalAveragePool (ONNX Runtime's contrib op; what its QOperator quantizer
// makes of a GlobalAveragePool): per image and channel, Y = saturate(rint((sum(X) - n * x_zp) *
// x_scale / (n * y_scale)) + y_zp) over the n spatial elements, u8 or s8, per-tensor parameters.
// channels_last = 0: X is [N, C, d1, ...] and Y [N, C, 1, ...]; 1: X is [N, d1, ..., C] and Y
// [N, 1, ..., C]. The sum is exact (int64) and the scaling double, rounding half to even.
#include "backends/native/ops/common/QuantCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema qlinearGlobalAveragePoolSchema() {
  OpSchema S;
  S.Domain = "com.microsoft";
  S.OpType = "QLinearGlobalAveragePool";
  S.MinInputs = S.MaxInputs = 5;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::U8, ElementType::I8}));
    RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::F32}));
    RETURN_IF_ERROR(requireInputType(Ctx, 3, {ElementType::F32}));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 4));
    ASSIGN_OR_RETURN(const int64_t Last, Ctx.N.getInt("channels_last", 0));
    const TensorShape &X = Ctx.Inputs[0].Shape;
    if (X.getRank() < 3)
      return Ctx.error(ErrorCode::Shape, "X must have rank 3 or more ([N, C, spatial...]), got ", X.toString());
    std::vector<Expr> Dims(X.getRank(), Expr(1));
    Dims[0] = X[0];
    const size_t Ch = Last ? X.getRank() - 1 : 1;
    Dims[Ch] = X[Ch];
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = TensorShape(Dims);
    return Status::ok();
  };
  return S;
}

Status runQLinearGlobalAveragePool(bool ChannelsLast, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  if (X.rank() < 3 || Y.rank() != X.rank())
    return runError("qlinearglobalaveragepool", "X ", joinInts(X.Dims), " and Y ", joinInts(Y.Dims),
                    " must have one rank of 3 or more");
  const size_t Ch = ChannelsLast ? X.rank() - 1 : 1;
  const int64_t N = X.Dims[0], C = X.Dims[Ch];
  int64_t Spatial = 1;
  for (size_t D = 1; D < X.rank(); ++D)
    if (D != Ch)
      Spatial *= X.Dims[D];
  if (static_cast<int64_t>(Y.elementCount()) != N * C || Y.Dims[Ch] != C)
    return runError("qlinearglobalaveragepool", "Y ", joinInts(Y.Dims), " does not hold one value per image and channel of X ",
                    joinInts(X.Dims));
  for (size_t I = 1; I <= 4; ++I)
    if (Ctx.Inputs[I].elementCount() != 1)
      return runError("qlinearglobalaveragepool", "scales and zero points must be scalars");
  if (Spatial == 0)
    return runError("qlinearglobalaveragepool", "X ", joinInts(X.Dims), " has no spatial elements to average");
  const double XS = loadFloats(Ctx.Inputs[1])[0], YS = loadFloats(Ctx.Inputs[3])[0];
  const int64_t XZ = loadZeroPoints(Ctx, 2)[0], YZ = loadZeroPoints(Ctx, 4)[0];
  const double Scale = XS / (static_cast<double>(Spatial) * YS);
  forRangeMaybe(Ctx, Par, static_cast<size_t>(N * C), 16, [&](size_t Lo, size_t Hi) {
    for (size_t E = Lo; E < Hi; ++E) {
      const int64_t Img = static_cast<int64_t>(E) / C, Chan = static_cast<int64_t>(E) % C;
      int64_t Sum = 0;
      for (int64_t P = 0; P < Spatial; ++P)
        Sum += loadInt(X, static_cast<size_t>(ChannelsLast ? (Img * Spatial + P) * C + Chan : (Img * C + Chan) * Spatial + P));
      storeSaturated(Y, E, roundHalfEven(static_cast<double>(Sum - Spatial * XZ) * Scale) + YZ);
    }
  });
  return Status::ok();
}

OpKernels qlinearGlobalAveragePoolKernels() {
  OpKernels K;
  K.Domain = "com.microsoft";
  K.OpType = "QLinearGlobalAveragePool";
  const auto Variant = [](std::string Name, int Priority, bool Par) {
    return KernelVariant{Name, Priority, nullptr, [Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                           ASSIGN_OR_RETURN(const int64_t Last, I.N.getInt("channels_last", 0));
                           const bool ChannelsLast = Last != 0;
                           return makeKernel<FunctionKernel>([ChannelsLast, Par](const KernelContext &C) {
                             return runQLinearGlobalAveragePool(ChannelsLast, C, Par);
                           });
                         }};
  };
  K.Variants.push_back(Variant("q_qlinearglobalaveragepool__ref", 0, false));
  K.Variants.push_back(Variant("q_qlinearglobalaveragepool__parallel", 10, true));
  K.TestCases = [] {
    const auto Q = [](std::vector<int64_t> D, ElementType T) {
      TestInput I = tensorInput(std::move(D), T);
      I.Low = T == ElementType::U8 ? 0 : -128, I.High = T == ElementType::U8 ? 255 : 127;
      return I;
    };
    const auto F = [](double V) { return valuesInput({}, {V}, ElementType::F32, true); };
    const auto Z = [](double V, ElementType T) { return valuesInput({}, {V}, T, true); };
    const ElementType U8 = ElementType::U8, I8 = ElementType::I8;
    AttrValue Last;
    Last.K = AttrValue::Kind::Int;
    Last.I = 1;
    return std::vector<OpTestCase>{
        testCase("s8_nchw", {Q({2, 16, 7, 7}, I8), F(0.05), Z(-4, I8), F(0.02), Z(3, I8)}),
        testCase("u8_nchw_saturates", {Q({1, 8, 5, 6}, U8), F(0.1), Z(100, U8), F(0.01), Z(128, U8)}),
        testCase("s8_channels_last", {Q({2, 4, 5, 12}, I8), F(0.03), Z(7, I8), F(0.03), Z(-2, I8)}, {{"channels_last", Last}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(QLinearGlobalAveragePool, qlinearGlobalAveragePoolSchema());
OPT_REGISTER_KERNELS(QLinearGlobalAveragePool, qlinearGlobalAveragePoolKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
