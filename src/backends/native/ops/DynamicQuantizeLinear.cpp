// DynamicQuantizeLinear (f32 -> u8): scale and zero point from the data range (always including
// 0), then y = saturate(rint(x / scale) + zero_point), as the ONNX reference computes them.
#include "backends/native/ops/common/QuantCommon.h"
#include "backends/native/ops/common/QuantizeRange.h"
#include "core/CpuFeatures.h"

#include <cmath>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema dynamicQuantizeSchema() {
  OpSchema S;
  S.OpType = "DynamicQuantizeLinear";
  S.MinInputs = S.MaxInputs = 1;
  S.MinOutputs = S.MaxOutputs = 3;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32}));
    Ctx.Outputs[0].Type = ElementType::U8;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    Ctx.Outputs[1].Type = ElementType::F32;
    Ctx.Outputs[1].Shape = TensorShape();
    Ctx.Outputs[2].Type = ElementType::U8;
    Ctx.Outputs[2].Shape = TensorShape();
    return Status::ok();
  };
  return S;
}

/// The scale and zero point of the range [Min, Max] (which includes 0), written to the optional
/// outputs 1 and 2 too.
void quantParams(const KernelContext &Ctx, float Min, float Max, float &Scale, int64_t &Zp) {
  Scale = (Max == Min ? 1.0f : Max - Min) / 255.0f;
  Zp = roundHalfEven(std::min(255.0f, std::max(0.0f, 0.0f - Min / Scale)));
  if (hasRunOutput(Ctx, 1))
    Ctx.Outputs[1].data<float>()[0] = Scale;
  if (hasRunOutput(Ctx, 2))
    Ctx.Outputs[2].data<uint8_t>()[0] = static_cast<uint8_t>(Zp);
}

Status runDynamicQuantize(const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  const float *In = X.data<const float>();
  const size_t N = X.elementCount();
  float Max = 0, Min = 0;
  for (size_t I = 0; I < N; ++I) {
    Max = std::max(Max, In[I]);
    Min = std::min(Min, In[I]);
  }
  float Scale;
  int64_t Zp;
  quantParams(Ctx, Min, Max, Scale, Zp);
  forRangeMaybe(Ctx, Par, N, 16384, [&](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I)
      storeSaturated(Y, I, roundHalfEven(In[I] / Scale) + Zp);
  });
  return Status::ok();
}

#if defined(__x86_64__)
// GCC 12 flags the undefined pass-through operand inside the conversion intrinsics.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/// The range pass of [Lo, Hi): max/min with the running value second, so a NaN element is skipped
/// as the reference's std::max / std::min skip it.
__attribute__((target("avx512f"))) void rangeAvx512(const float *In, size_t Lo, size_t Hi, float &Min, float &Max) {
  __m512 VMax = _mm512_setzero_ps(), VMin = _mm512_setzero_ps();
  size_t I = Lo;
  for (; I + 16 <= Hi; I += 16) {
    const __m512 X = _mm512_loadu_ps(In + I);
    VMax = _mm512_max_ps(X, VMax);
    VMin = _mm512_min_ps(X, VMin);
  }
  if (I < Hi) {
    const __mmask16 K = static_cast<__mmask16>((1u << (Hi - I)) - 1u);
    const __m512 X = _mm512_maskz_loadu_ps(K, In + I); // masked lanes are 0: inside the range already
    VMax = _mm512_max_ps(X, VMax);
    VMin = _mm512_min_ps(X, VMin);
  }
  Max = _mm512_reduce_max_ps(VMax);
  Min = _mm512_reduce_min_ps(VMin);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// The vector kernels (AVX-512, AVX2): both passes vectorized and split over the pool (ranges of
/// 16K elements).
using FloatRangeFn = void (*)(const float *, size_t, size_t, float &, float &);
using QuantizeRangeFn = void (*)(const float *, uint8_t *, float, int32_t, bool, size_t, size_t);

template <FloatRangeFn RangeOf, QuantizeRangeFn Quantize> Status runDynamicQuantizeVector(const KernelContext &Ctx) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  const float *In = X.data<const float>();
  const size_t N = X.elementCount(), Chunk = 16384, Chunks = (N + Chunk - 1) / Chunk;
  std::vector<float> Mins(std::max<size_t>(Chunks, 1), 0.0f), Maxs(std::max<size_t>(Chunks, 1), 0.0f);
  Ctx.Par.forRange(Chunks, 1, [&](size_t Lo, size_t Hi) {
    for (size_t C = Lo; C < Hi; ++C)
      RangeOf(In, C * Chunk, std::min(N, (C + 1) * Chunk), Mins[C], Maxs[C]);
  });
  float Max = 0, Min = 0;
  for (size_t C = 0; C < Chunks; ++C) {
    Max = std::max(Max, Maxs[C]);
    Min = std::min(Min, Mins[C]);
  }
  float Scale;
  int64_t Zp;
  quantParams(Ctx, Min, Max, Scale, Zp);
  uint8_t *Out = Y.data<uint8_t>();
  Ctx.Par.forRange(N, Chunk, [&](size_t Lo, size_t Hi) {
    Quantize(In, Out, Scale, static_cast<int32_t>(Zp), /*Signed=*/false, Lo, Hi);
  });
  return Status::ok();
}
#endif

OpKernels dynamicQuantizeKernels() {
  OpKernels K;
  K.OpType = "DynamicQuantizeLinear";
  const auto F32 = [](const KernelCreateInfo &I) { return inputIs(I, 0, ElementType::F32); };
  K.Variants.push_back({"f32_dynamicquantizelinear__ref", 0, F32, [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>([](const KernelContext &C) { return runDynamicQuantize(C, false); });
                        }});
  K.Variants.push_back({"f32_dynamicquantizelinear__parallel", 10, F32, [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>([](const KernelContext &C) { return runDynamicQuantize(C, true); });
                        }});
#if defined(__x86_64__)
  K.Variants.push_back({"f32_dynamicquantizelinear__avx512", 30,
                        [F32](const KernelCreateInfo &I) {
                          return F32(I) && cpuFeatures().avx512Int8();
                        },
                        [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>(runDynamicQuantizeVector<rangeAvx512, quantizeRangeAvx512>);
                        }});
  K.Variants.push_back({"f32_dynamicquantizelinear__avx2", 20,
                        [F32](const KernelCreateInfo &I) { return F32(I) && cpuFeatures().AVX2; },
                        [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>(runDynamicQuantizeVector<floatRangeAvx2, quantizeRangeAvx2>);
                        }});
#endif
  K.TestCases = [] {
    TestInput Pos = tensorInput({3, 4});
    Pos.Low = 0.5, Pos.High = 9;
    TestInput Neg = tensorInput({2, 8});
    Neg.Low = -9, Neg.High = -0.5;
    // Values on the rounding boundaries (x / scale an exact .5) and a NaN (ignored by the range,
    // quantized to the zero point).
    TestInput Ties = valuesInput({7}, {-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 1.5}, ElementType::F32, false);
    TestInput WithNan = valuesInput({5}, {-2.0, std::nan(""), 0.25, 4.0, -0.75}, ElementType::F32, false);
    std::vector<OpTestCase> C = {testCase("mixed", {tensorInput({4, 5})}), testCase("positive", {Pos}),
                                 testCase("negative", {Neg}), testCase("zeros", {valuesInput({6}, {0}, ElementType::F32, false)}),
                                 testCase("large", {tensorInput({64, 300})}), testCase("ties", {Ties}),
                                 testCase("nan", {WithNan}), testCase("many_chunks", {tensorInput({3, 20000})}),
                                 // ties and NaNs inside the vector loops (8 and 16 lanes), and a tail
                                 testCase("ties_nan_vectors", {valuesInput({37}, {-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 1.5, std::nan(""), -0.25}, ElementType::F32, false)})};
    for (OpTestCase &T : C)
      T.NumOutputs = 3;
    return C;
  };
  return K;
}

OPT_REGISTER_SCHEMA(DynamicQuantizeLinear, dynamicQuantizeSchema());
OPT_REGISTER_KERNELS(DynamicQuantizeLinear, dynamicQuantizeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
