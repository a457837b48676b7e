// QuantizeLinear (opsets 10-25): y = saturate(rint(x / scale) + zero_point) for integer targets
// (u8 default, i8, u16, i16, i4, u4, i2, u2: clamped to the type's range), y = cast(x / scale +
// zero_point) for float8 targets (attribute 'saturate': clamp, or inf/NaN per type) and float4e2m1
// (always clamps); see core/LowPrecision.h for the float rounding. Scale and zero point are per
// tensor, per axis ('axis'), or blocked ('block_size' > 0: x's shape with ceil(x[axis] / block_size)
// along the axis). x is f32, f16 or i32; the output type comes from the zero point or 'output_dtype'.
#include "backends/native/ops/common/QuantCommon.h"

#include <cmath>
#include "backends/native/ops/common/QuantizeRange.h"
#include "core/CpuFeatures.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// TensorProto data type code of output_dtype -> a type QuantizeLinear produces; Undefined otherwise.
ElementType fromTensorProto(int64_t Code) {
  switch (Code) {
  case 2: return ElementType::U8;
  case 3: return ElementType::I8;
  case 4: return ElementType::U16;
  case 5: return ElementType::I16;
  default: break;
  }
  const ElementType T = lowp::fromOnnxDataType(Code);
  return isQuantizedType(T) ? T : ElementType::Undefined;
}

Result<bool> saturateAttr(const Node &N) {
  ASSIGN_OR_RETURN(const int64_t Saturate, N.getInt("saturate", 1));
  if (Saturate != 0 && Saturate != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'saturate' must be 0 or 1, got ", Saturate);
  return Saturate != 0;
}

Status inferQuantize(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32, ElementType::F16, ElementType::I32}));
  RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::F32, ElementType::F16}));
  RETURN_IF_ERROR(saturateAttr(Ctx.N).status());
  ASSIGN_OR_RETURN(const int64_t Dtype, Ctx.N.getInt("output_dtype", 0));
  ElementType Out = ElementType::U8;
  if (Dtype != 0) {
    Out = fromTensorProto(Dtype);
    if (Out == ElementType::Undefined)
      return Ctx.error(ErrorCode::Model, "attribute 'output_dtype' value ", Dtype,
                       " is not supported (uint8, int8, uint16, int16, int4, uint4, int2, uint2, float8e4m3fn, "
                       "float8e4m3fnuz, float8e5m2, float8e5m2fnuz, float4e2m1)");
  }
  if (Ctx.hasInput(2)) {
    const ElementType Z = Ctx.Inputs[2].Type;
    if (!isQuantizedType(Z))
      return Ctx.error(ErrorCode::Type, "input 2 (y_zero_point) has element type ", toString(Z),
                       ", supported: u8, i8, u16, i16, i4, u4, i2, u2, f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz, f4e2m1");
    if (Dtype != 0 && Z != Out)
      return Ctx.error(ErrorCode::Type, "attribute 'output_dtype' ", toString(Out), " differs from y_zero_point type ",
                       toString(Z));
    Out = Z;
  }
  RETURN_IF_ERROR(checkQuantLayout(Ctx, 1, 2));
  Ctx.Outputs[0].Type = Out;
  Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
  return Status::ok();
}

Status runQuantize(const Node &N, const KernelContext &Ctx, bool Par, bool Saturate) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  const std::vector<float> Scale = loadFloats(Ctx.Inputs[1]);
  const bool HasZp = hasRunInput(Ctx, 2);
  ASSIGN_OR_RETURN(const QuantLayout L,
                   makeQuantLayout(N, X.Dims, Ctx.Inputs[1].Dims, HasZp ? &Ctx.Inputs[2].Dims : nullptr));
  const auto At = [&L](const auto &Params, size_t I) { return Params[Params.size() == 1 ? 0 : L.paramIndex(I)]; };
  const auto Load = [&X](size_t I) {
    return X.Type == ElementType::I32 ? static_cast<float>(X.data<const int32_t>()[I]) : loadFloat(X, I);
  };
  if (lowp::isLowPrecisionFloat(Y.Type)) {
    // Float targets: the zero point is a value of the target type (normally 0), added before rounding.
    std::vector<float> Zp{0.0f};
    if (HasZp) {
      Zp.resize(Ctx.Inputs[2].elementCount());
      for (size_t E = 0; E < Zp.size(); ++E)
        Zp[E] = static_cast<float>(lowp::lowPrecisionToDouble(Y.Type, Ctx.Inputs[2].data<const uint8_t>()[E]));
      if (Zp.empty())
        Zp.push_back(0.0f);
    }
    forRangeMaybe(Ctx, Par, X.elementCount(), 16384, [&](size_t Lo, size_t Hi) {
      uint8_t *Out = Y.data<uint8_t>();
      for (size_t I = Lo; I < Hi; ++I)
        Out[I] = lowp::doubleToLowPrecision(Y.Type, Load(I) / At(Scale, I) + At(Zp, I), Saturate);
    });
    return Status::ok();
  }
  const std::vector<int32_t> Zp = loadZeroPoints(Ctx, 2);
  forRangeMaybe(Ctx, Par, X.elementCount(), 16384, [&](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I)
      storeSaturated(Y, I, roundHalfEven(Load(I) / At(Scale, I)) + At(Zp, I));
  });
  return Status::ok();
}

#if defined(__x86_64__)
/// The vector variants' case: float32 input, u8/s8 output, per-tensor scale and zero point.
bool quantizeVectorCase(const KernelCreateInfo &I) {
  if (!inputIs(I, 0, ElementType::F32) || I.Outputs.empty() ||
      (I.Outputs[0].Type != ElementType::U8 && I.Outputs[0].Type != ElementType::I8))
    return false;
  for (size_t K : {size_t(1), size_t(2)}) {
    if (K >= I.Inputs.size() || !I.Inputs[K].Present)
      continue;
    const Expr N = productExpr(I.Inputs[K].Shape, 0, I.Inputs[K].Shape.getRank());
    if (!N.isConst() || N.value() != 1)
      return false;
  }
  return true;
}

bool quantizeAvx512Supports(const KernelCreateInfo &I) { return cpuFeatures().avx512Int8() && quantizeVectorCase(I); }
bool quantizeAvx2Supports(const KernelCreateInfo &I) { return cpuFeatures().AVX2 && quantizeVectorCase(I); }

using QuantizeRangeFn = void (*)(const float *, uint8_t *, float, int32_t, bool, size_t, size_t);

template <QuantizeRangeFn Range> Status runQuantizeVector(const KernelContext &Ctx) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  const float Scale = loadFloat(Ctx.Inputs[1], 0);
  const int32_t Zp = loadZeroPoints(Ctx, 2)[0];
  const float *In = X.data<const float>();
  uint8_t *Out = Y.data<uint8_t>();
  Ctx.Par.forRange(X.elementCount(), 16384, [&](size_t Lo, size_t Hi) {
    Range(In, Out, Scale, Zp, Y.Type == ElementType::I8, Lo, Hi);
  });
  return Status::ok();
}
#endif

OpKernels quantizeKernels() {
  OpKernels K;
  K.OpType = "QuantizeLinear";
  for (bool Par : {false, true}) {
    const std::string Name = Par ? "q_quantizelinear__parallel" : "q_quantizelinear__ref";
    K.Variants.push_back({Name, Par ? 10 : 0, nullptr, [Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                            ASSIGN_OR_RETURN(const bool Saturate, saturateAttr(I.N));
                            const Node N = I.N;
                            return makeKernel<FunctionKernel>(
                                [N, Par, Saturate](const KernelContext &C) { return runQuantize(N, C, Par, Saturate); });
                          }});
  }
#if defined(__x86_64__)
  K.Variants.push_back({"f32_quantizelinear__avx512", 30, quantizeAvx512Supports,
                        [](const KernelCreateInfo &) -> Result<std::unique_ptr<Kernel>> {
                          return makeKernel<FunctionKernel>(runQuantizeVector<quantizeRangeAvx512>);
                        }});
  K.Variants.push_back({"f32_quantizelinear__avx2", 20, quantizeAvx2Supports,
                        [](const KernelCreateInfo &) -> Result<std::unique_ptr<Kernel>> {
                          return makeKernel<FunctionKernel>(runQuantizeVector<quantizeRangeAvx2>);
                        }});
#endif
  K.TestCases = [] {
    const auto X = [](std::vector<int64_t> D, double Lo = -30, double Hi = 30) {
      TestInput T = tensorInput(std::move(D));
      T.Low = Lo, T.High = Hi;
      return T;
    };
    const auto F = [](std::vector<int64_t> D, std::vector<double> V) { return valuesInput(D, V, ElementType::F32, true); };
    const auto Z = [](std::vector<int64_t> D, std::vector<double> V, ElementType T) { return valuesInput(D, V, T, true); };
    const auto Code = [](int64_t C) { return std::map<std::string, AttrValue>{{"output_dtype", attrInt(C)}}; };
    return std::vector<OpTestCase>{
        testCase("u8_scalar", {X({2, 3, 4}), F({}, {0.2}), Z({}, {128}, ElementType::U8)}),
        testCase("i8_scalar", {X({2, 3, 4}), F({}, {0.25}), Z({}, {-3}, ElementType::I8)}),
        testCase("no_zero_point", {X({17}), F({}, {0.3})}),
        testCase("per_axis", {X({2, 3, 4}), F({3}, {0.1, 0.2, 0.5}), Z({3}, {0, 10, 250}, ElementType::U8)}),
        testCase("per_axis_last", {X({2, 3, 4}), F({4}, {0.1, 0.2, 0.5, 1}), Z({4}, {0, -10, 5, 100}, ElementType::I8)},
                 {{"axis", attrInt(-1)}}),
        testCase("i16", {X({50}), F({}, {0.001}), Z({}, {7}, ElementType::I16)}),
        testCase("large", {X({64, 300}), F({}, {0.2}), Z({}, {128}, ElementType::U8)}),
        testCase("i8_large_saturates", {X({3, 1001}, -100, 100), F({}, {0.3}), Z({}, {7}, ElementType::I8)}),
        // Exact halves (x / scale = k + 0.5) round to even.
        testCase("u8_halves", {valuesInput({8}, {0.5, 1.5, 2.5, 3.5, -0.5, 254.5, 127.5, 100.5}, ElementType::F32, false), F({}, {1.0}),
                               Z({}, {0}, ElementType::U8)}),
        // Halves, NaN (-> the zero point) and out-of-range values across vector lanes and a tail.
        testCase("i8_halves_nan_vectors",
                 {valuesInput({21}, {0.5, 1.5, std::nan(""), -2.5, 300.0, -300.0, 2.5, -0.5, 126.5, -128.5}, ElementType::F32, false),
                  F({}, {1.0}), Z({}, {-3}, ElementType::I8)}),
        testCase("i4_clamps", {X({40}), F({}, {2.0}), Z({}, {1}, ElementType::I4)}),
        testCase("u4_per_axis", {X({3, 8}), F({3}, {1, 2, 4}), Z({3}, {0, 8, 15}, ElementType::U4)}, {{"axis", attrInt(0)}}),
        testCase("i2", {X({20}, -4, 4), F({}, {1.5}), Z({}, {-1}, ElementType::I2)}),
        testCase("u2_output_dtype", {X({20}, -4, 8), F({}, {1.5})}, Code(25)),
        testCase("e4m3fn_saturate", {X({4, 25}, -1000, 1000), F({}, {0.5}), Z({}, {0}, ElementType::F8E4M3FN)}),
        testCase("e4m3fn_no_saturate", {X({4, 25}, -1000, 1000), F({}, {0.5}), Z({}, {0}, ElementType::F8E4M3FN)},
                 {{"saturate", attrInt(0)}}),
        testCase("e5m2fnuz", {X({4, 25}, -1e5, 1e5), F({}, {0.5})}, Code(20)),
        testCase("f4e2m1_per_axis", {X({3, 10}, -20, 20), F({3}, {1, 0.5, 4}), Z({3}, {0, 0, 0}, ElementType::F4E2M1)},
                 {{"axis", attrInt(0)}}),
        testCase("blocked_axis1", {X({3, 10}), F({3, 4}, {0.5, 1, 2, 4, 0.25, 3, 1.5, 0.1, 8, 2, 1, 0.75}),
                                   Z({3, 4}, {0, 1, -1, 2, 3, -3, 0, 0, 1, 1, -8, 7}, ElementType::I4)},
                 {{"axis", attrInt(1)}, {"block_size", attrInt(3)}}),
        testCase("blocked_axis0_u8", {X({4, 2, 3}), F({2, 2, 3}, {0.5, 1, 2, 4, 0.25, 3, 1.5, 0.1, 8, 2, 1, 0.75})},
                 {{"axis", attrInt(0)}, {"block_size", attrInt(2)}}),
    };
  };
  return K;
}

OpSchema quantizeSchema() {
  OpSchema S;
  S.OpType = "QuantizeLinear";
  S.MinInputs = 2;
  S.MaxInputs = 3;
  S.Infer = inferQuantize;
  return S;
}

OPT_REGISTER_SCHEMA(QuantizeLinear, quantizeSchema());
OPT_REGISTER_KERNELS(QuantizeLinear, quantizeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
