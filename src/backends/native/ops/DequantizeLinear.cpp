// DequantizeLinear (opsets 10-25): y = (x - zero_point) * scale with x of i8, u8, i16, u16, i32,
// i4, u4, i2, u2, a float8 type or float4e2m1 (float codes decoded exactly first); scale and zero
// point per tensor, per axis or blocked ('block_size', as QuantizeLinear). y has the scale's type
// (f32, or f16 from opset 19) unless 'output_dtype' (opset 23+) names f32 or f16.
#include "backends/native/ops/common/QuantCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status inferDequantize(ShapeContext &Ctx) {
  const ElementType XT = Ctx.Inputs[0].Type;
  if (!isQuantizedType(XT) && XT != ElementType::I32)
    return Ctx.error(ErrorCode::Type, "input 0 (x) has element type ", toString(XT),
                     ", supported: i8, u8, i16, u16, i32, i4, u4, i2, u2, f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz, "
                     "f4e2m1");
  RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::F32, ElementType::F16}));
  if (Ctx.hasInput(2))
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
  ASSIGN_OR_RETURN(const int64_t Dtype, Ctx.N.getInt("output_dtype", 0));
  ElementType Out = Ctx.Inputs[1].Type;
  if (Dtype == 1)
    Out = ElementType::F32;
  else if (Dtype == 10)
    Out = ElementType::F16;
  else if (Dtype != 0)
    return Ctx.error(ErrorCode::Model, "attribute 'output_dtype' value ", Dtype,
                     " is not supported by the native backend (1: float, 10: float16)");
  RETURN_IF_ERROR(checkQuantLayout(Ctx, 1, 2));
  Ctx.Outputs[0].Type = Out;
  Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
  return Status::ok();
}

Status runDequantize(const Node &N, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  const std::vector<float> Scale = loadFloats(Ctx.Inputs[1]);
  const bool HasZp = hasRunInput(Ctx, 2);
  ASSIGN_OR_RETURN(const QuantLayout L,
                   makeQuantLayout(N, X.Dims, Ctx.Inputs[1].Dims, HasZp ? &Ctx.Inputs[2].Dims : nullptr));
  const auto At = [&L](const auto &Params, size_t I) { return Params[Params.size() == 1 ? 0 : L.paramIndex(I)]; };
  if (lowp::isLowPrecisionFloat(X.Type)) {
    std::vector<float> Zp{0.0f};
    if (HasZp && Ctx.Inputs[2].elementCount()) {
      Zp.resize(Ctx.Inputs[2].elementCount());
      for (size_t E = 0; E < Zp.size(); ++E)
        Zp[E] = static_cast<float>(lowp::lowPrecisionToDouble(X.Type, Ctx.Inputs[2].data<const uint8_t>()[E]));
    }
    forRangeMaybe(Ctx, Par, X.elementCount(), 16384, [&](size_t Lo, size_t Hi) {
      const uint8_t *In = X.data<const uint8_t>();
      for (size_t I = Lo; I < Hi; ++I)
        storeFloat(Y, I, (static_cast<float>(lowp::lowPrecisionToDouble(X.Type, In[I])) - At(Zp, I)) * At(Scale, I));
    });
    return Status::ok();
  }
  const std::vector<int32_t> Zp = loadZeroPoints(Ctx, 2);
  forRangeMaybe(Ctx, Par, X.elementCount(), 16384, [&](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I) {
      const int64_t D = static_cast<int64_t>(loadInt(X, I)) - At(Zp, I);
      storeFloat(Y, I, static_cast<float>(D) * At(Scale, I));
    }
  });
  return Status::ok();
}

OpKernels dequantizeKernels() {
  OpKernels K;
  K.OpType = "DequantizeLinear";
  for (bool Par : {false, true}) {
    const std::string Name = Par ? "q_dequantizelinear__parallel" : "q_dequantizelinear__ref";
    K.Variants.push_back({Name, Par ? 10 : 0, nullptr, [Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                            const Node N = I.N;
                            return makeKernel<FunctionKernel>([N, Par](const KernelContext &C) { return runDequantize(N, C, Par); });
                          }});
  }
  K.TestCases = [] {
    const auto Q = [](std::vector<int64_t> D, ElementType T, double Lo, double Hi) {
      TestInput I = tensorInput(std::move(D), T);
      I.Low = Lo, I.High = Hi;
      return I;
    };
    const auto F = [](std::vector<int64_t> D, std::vector<double> V) { return valuesInput(D, V, ElementType::F32, true); };
    const auto Z = [](std::vector<int64_t> D, std::vector<double> V, ElementType T) { return valuesInput(D, V, T, true); };
    return std::vector<OpTestCase>{
        testCase("u8", {Q({2, 3, 4}, ElementType::U8, 0, 255), F({}, {0.2}), Z({}, {128}, ElementType::U8)}),
        testCase("i8_no_zp", {Q({20}, ElementType::I8, -128, 127), F({}, {0.05})}),
        testCase("i32", {Q({3, 5}, ElementType::I32, -100000, 100000), F({}, {0.001})}),
        testCase("per_axis", {Q({2, 3, 4}, ElementType::U8, 0, 255), F({3}, {0.1, 0.2, 0.5}), Z({3}, {0, 10, 250}, ElementType::U8)}),
        testCase("per_axis_0", {Q({3, 4}, ElementType::I8, -128, 127), F({3}, {0.1, 0.2, 0.5}), Z({3}, {0, -10, 5}, ElementType::I8)},
                 {{"axis", attrInt(0)}}),
        testCase("large", {Q({64, 300}, ElementType::U8, 0, 255), F({}, {0.2}), Z({}, {3}, ElementType::U8)}),
        testCase("i4", {Q({30}, ElementType::I4, -8, 7), F({}, {0.5}), Z({}, {-2}, ElementType::I4)}),
        testCase("u2_per_axis", {Q({3, 5}, ElementType::U2, 0, 3), F({3}, {1, 2, 3}), Z({3}, {0, 1, 3}, ElementType::U2)},
                 {{"axis", attrInt(0)}}),
        testCase("e4m3fn", {Q({40}, ElementType::F8E4M3FN, -448, 448), F({}, {0.5})}),
        testCase("e5m2_zero_point", {Q({40}, ElementType::F8E5M2, -1e4, 1e4), F({}, {2}), Z({}, {0}, ElementType::F8E5M2)}),
        testCase("f4e2m1", {Q({16}, ElementType::F4E2M1, -6, 6), F({}, {3})}),
        testCase("blocked", {Q({2, 7}, ElementType::I8, -128, 127), F({2, 3}, {0.5, 1, 2, 4, 0.25, 3}),
                             Z({2, 3}, {0, 1, -1, 2, 3, -3}, ElementType::I8)},
                 {{"axis", attrInt(1)}, {"block_size", attrInt(3)}}),
    };
  };
  return K;
}

OpSchema dequantizeSchema() {
  OpSchema S;
  S.OpType = "DequantizeLinear";
  S.MinInputs = 2;
  S.MaxInputs = 3;
  S.Infer = inferDequantize;
  return S;
}

OPT_REGISTER_SCHEMA(DequantizeLinear, dequantizeSchema());
OPT_REGISTER_KERNELS(DequantizeLinear, dequantizeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
