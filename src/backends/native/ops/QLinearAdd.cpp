// com.microsoft QLinearAdd (ONNX Runtime's contrib op; also what passes/FuseQuantizedElementwise
// makes of DequantizeLinear x2 -> Add -> QuantizeLinear): C = saturate(rint((float(A - A_zp) *
// A_scale + float(B - B_zp) * B_scale) / C_scale) + C_zp), u8 or s8, per-tensor parameters, A and B
// of one shape. Every step is float32 in the order the unfused ops take, so the result is
// bit-identical to DequantizeLinear -> Add -> QuantizeLinear. Internal attributes kFusedActMin /
// kFusedActMax (a Relu / Clip between the Add and the QuantizeLinear, folded by passes/FuseQdq)
// clamp C at their quantized values.
#include "backends/native/ops/common/QuantCommon.h"
#include "core/CpuFeatures.h"
#include "ir/FusedOps.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema qlinearAddSchema() {
  OpSchema S;
  S.Domain = "com.microsoft";
  S.OpType = "QLinearAdd";
  S.MinInputs = 7;
  S.MaxInputs = 8;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::U8, ElementType::I8}));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 3));
    for (size_t I : {size_t(1), size_t(4), size_t(6)})
      RETURN_IF_ERROR(requireInputType(Ctx, I, {ElementType::F32}));
    for (size_t I : {size_t(2), size_t(5), size_t(7)})
      if (Ctx.hasInput(I))
        RETURN_IF_ERROR(requireSameType(Ctx, 0, I));
    const TensorShape &A = Ctx.Inputs[0].Shape, &B = Ctx.Inputs[3].Shape;
    if (A.getRank() != B.getRank())
      return Ctx.error(ErrorCode::Shape, "inputs ", A.toString(), " and ", B.toString(),
                       " must have one shape (broadcasting is not supported)");
    for (size_t D = 0; D < A.getRank(); ++D)
      if (A[D].isConst() && B[D].isConst() && A[D].value() != B[D].value())
        return Ctx.error(ErrorCode::Shape, "inputs ", A.toString(), " and ", B.toString(),
                         " must have one shape (broadcasting is not supported)");
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = A;
    return Status::ok();
  };
  return S;
}

struct AddParams {
  float AS, BS, CS;
  int32_t AZ, BZ, CZ, Lo, Hi;
};

Result<AddParams> addParams(const Node &N, const KernelContext &C) {
  const TensorView &A = C.Inputs[0], &B = C.Inputs[3], &Y = C.Outputs[0];
  if (A.Dims != B.Dims || Y.Dims != A.Dims)
    return runError("qlinearadd", "inputs ", joinInts(A.Dims), " and ", joinInts(B.Dims), " must have one shape");
  for (size_t I : {size_t(1), size_t(2), size_t(4), size_t(5), size_t(6), size_t(7)})
    if (hasRunInput(C, I) && C.Inputs[I].elementCount() != 1)
      return runError("qlinearadd", "scales and zero points must be scalars");
  AddParams P;
  P.AS = loadFloat(C.Inputs[1], 0), P.BS = loadFloat(C.Inputs[4], 0), P.CS = loadFloat(C.Inputs[6], 0);
  P.AZ = loadZeroPoints(C, 2)[0], P.BZ = loadZeroPoints(C, 5)[0], P.CZ = loadZeroPoints(C, 7)[0];
  int64_t Lo, Hi;
  quantRange(Y.Type, Lo, Hi);
  // The fused clamp at Q(bound) = saturate(rint(bound / C_scale) + C_zp), as the removed QuantizeLinear.
  const auto Q = [&](float V) { return std::min(Hi, std::max(Lo, roundHalfEven(V / P.CS) + P.CZ)); };
  int64_t L = Lo, H = Hi;
  if (N.hasAttr(kFusedActMin)) {
    ASSIGN_OR_RETURN(const float Min, N.getFloat(kFusedActMin, -INFINITY));
    if (!std::isinf(Min) || Min > 0)
      L = std::max(L, Q(Min));
  }
  if (N.hasAttr(kFusedActMax)) {
    ASSIGN_OR_RETURN(const float Max, N.getFloat(kFusedActMax, INFINITY));
    if (!std::isinf(Max) || Max < 0)
      H = std::min(H, Q(Max));
  }
  P.Lo = static_cast<int32_t>(L), P.Hi = static_cast<int32_t>(std::max(L, H));
  return P;
}

template <typename T> void addRange(const AddParams &P, const T *A, const T *B, T *Y, size_t Lo, size_t Hi) {
  for (size_t I = Lo; I < Hi; ++I) {
    const float Sum = static_cast<float>(static_cast<int32_t>(A[I]) - P.AZ) * P.AS +
                      static_cast<float>(static_cast<int32_t>(B[I]) - P.BZ) * P.BS;
    const int64_t Q = roundHalfEven(Sum / P.CS) + P.CZ;
    Y[I] = static_cast<T>(std::min<int64_t>(P.Hi, std::max<int64_t>(P.Lo, Q)));
  }
}

#if defined(__x86_64__)
bool avx512Available() {
  return cpuFeatures().avx512Int8();
}

/// 16 elements per step; the float steps as the scalar code (separate mul / add / div: no FMA).
template <bool Signed>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void addRangeAvx512(const AddParams &P, const uint8_t *A, const uint8_t *B,
                                                                 uint8_t *Y, size_t Lo, size_t Hi) {
  constexpr int RN = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const __m512i AZ = _mm512_set1_epi32(P.AZ), BZ = _mm512_set1_epi32(P.BZ), CZ = _mm512_set1_epi32(P.CZ);
  const __m512 AS = _mm512_set1_ps(P.AS), BS = _mm512_set1_ps(P.BS), CS = _mm512_set1_ps(P.CS);
  // Clamp before rounding at the integer bounds minus the zero point: the same as after.
  const __m512 L = _mm512_set1_ps(static_cast<float>(P.Lo - P.CZ)), H = _mm512_set1_ps(static_cast<float>(P.Hi - P.CZ));
  size_t I = Lo;
  for (; I < Hi; I += 16) {
    const __mmask16 M = Hi - I >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (Hi - I)) - 1u);
    const __m128i A8 = _mm_maskz_loadu_epi8(M, A + I), B8 = _mm_maskz_loadu_epi8(M, B + I);
    const __m512i Ai = _mm512_sub_epi32(Signed ? _mm512_cvtepi8_epi32(A8) : _mm512_cvtepu8_epi32(A8), AZ);
    const __m512i Bi = _mm512_sub_epi32(Signed ? _mm512_cvtepi8_epi32(B8) : _mm512_cvtepu8_epi32(B8), BZ);
    const __m512 Sum = _mm512_add_round_ps(_mm512_mul_round_ps(_mm512_cvtepi32_ps(Ai), AS, RN),
                                           _mm512_mul_round_ps(_mm512_cvtepi32_ps(Bi), BS, RN), RN);
    const __m512 Qf = _mm512_min_ps(_mm512_max_ps(_mm512_div_round_ps(Sum, CS, RN), L), H);
    const __m512i Q = _mm512_add_epi32(_mm512_cvt_roundps_epi32(Qf, RN), CZ);
    _mm_mask_storeu_epi8(Y + I, M, _mm512_cvtepi32_epi8(Q));
  }
}

/// The same on AVX2, 8 per step (no FMA in this target: mul / add / div round separately), the
/// rest as the scalar code.
template <bool Signed>
__attribute__((target("avx2"))) void addRangeAvx2(const AddParams &P, const uint8_t *A, const uint8_t *B, uint8_t *Y,
                                                  size_t Lo, size_t Hi) {
  const __m256i AZ = _mm256_set1_epi32(P.AZ), BZ = _mm256_set1_epi32(P.BZ), CZ = _mm256_set1_epi32(P.CZ);
  const __m256 AS = _mm256_set1_ps(P.AS), BS = _mm256_set1_ps(P.BS), CS = _mm256_set1_ps(P.CS);
  const __m256 L = _mm256_set1_ps(static_cast<float>(P.Lo - P.CZ)), H = _mm256_set1_ps(static_cast<float>(P.Hi - P.CZ));
  size_t I = Lo;
  for (; I + 8 <= Hi; I += 8) {
    const __m128i A8 = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(A + I));
    const __m128i B8 = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(B + I));
    const __m256i Ai = _mm256_sub_epi32(Signed ? _mm256_cvtepi8_epi32(A8) : _mm256_cvtepu8_epi32(A8), AZ);
    const __m256i Bi = _mm256_sub_epi32(Signed ? _mm256_cvtepi8_epi32(B8) : _mm256_cvtepu8_epi32(B8), BZ);
    const __m256 Sum = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(Ai), AS), _mm256_mul_ps(_mm256_cvtepi32_ps(Bi), BS));
    __m256 Qf = _mm256_min_ps(_mm256_max_ps(_mm256_div_ps(Sum, CS), L), H);
    Qf = _mm256_round_ps(Qf, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i Q = _mm256_add_epi32(_mm256_cvttps_epi32(Qf), CZ); // in [Lo, Hi]: the packs keep it
    const __m128i W = _mm_packs_epi32(_mm256_castsi256_si128(Q), _mm256_extracti128_si256(Q, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i *>(Y + I), Signed ? _mm_packs_epi16(W, W) : _mm_packus_epi16(W, W));
  }
  if (Signed)
    addRange(P, reinterpret_cast<const int8_t *>(A), reinterpret_cast<const int8_t *>(B), reinterpret_cast<int8_t *>(Y), I, Hi);
  else
    addRange(P, A, B, Y, I, Hi);
}
#endif

enum class AddSimd { None, Avx512, Avx2 };

Status runQLinearAdd(const Node &N, const KernelContext &C, bool Par, AddSimd Simd) {
  ASSIGN_OR_RETURN(const AddParams P, addParams(N, C));
  const TensorView &A = C.Inputs[0], &B = C.Inputs[3], &Y = C.Outputs[0];
  const bool Signed = A.Type == ElementType::I8;
  forRangeMaybe(C, Par, A.elementCount(), 16384, [&](size_t Lo, size_t Hi) {
#if defined(__x86_64__)
    if (Simd != AddSimd::None) {
      const uint8_t *Ad = A.data<const uint8_t>(), *Bd = B.data<const uint8_t>();
      uint8_t *Yd = Y.data<uint8_t>();
      if (Simd == AddSimd::Avx512)
        (Signed ? addRangeAvx512<true> : addRangeAvx512<false>)(P, Ad, Bd, Yd, Lo, Hi);
      else
        (Signed ? addRangeAvx2<true> : addRangeAvx2<false>)(P, Ad, Bd, Yd, Lo, Hi);
      return;
    }
#endif
    if (Signed)
      addRange(P, A.data<const int8_t>(), B.data<const int8_t>(), Y.data<int8_t>(), Lo, Hi);
    else
      addRange(P, A.data<const uint8_t>(), B.data<const uint8_t>(), Y.data<uint8_t>(), Lo, Hi);
  });
  return Status::ok();
}

OpKernels qlinearAddKernels() {
  OpKernels K;
  K.Domain = "com.microsoft";
  K.OpType = "QLinearAdd";
  const auto Variant = [](std::string Name, int Priority, bool Par, AddSimd Simd,
                          std::function<bool(const KernelCreateInfo &)> Supports) {
    return KernelVariant{Name, Priority, Supports, [Par, Simd](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                           const Node N = I.N;
                           return makeKernel<FunctionKernel>(
                               [N, Par, Simd](const KernelContext &C) { return runQLinearAdd(N, C, Par, Simd); });
                         }};
  };
  K.Variants.push_back(Variant("q_qlinearadd__ref", 0, false, AddSimd::None, nullptr));
  K.Variants.push_back(Variant("q_qlinearadd__parallel", 10, true, AddSimd::None, nullptr));
#if defined(__x86_64__)
  K.Variants.push_back(Variant("q_qlinearadd__avx512", 30, true, AddSimd::Avx512, [](const KernelCreateInfo &) { return avx512Available(); }));
  K.Variants.push_back(Variant("q_qlinearadd__avx2", 20, true, AddSimd::Avx2, [](const KernelCreateInfo &) { return cpuFeatures().AVX2; }));
#endif
  K.TestCases = [] {
    const auto Q = [](std::vector<int64_t> D, ElementType T) {
      TestInput I = tensorInput(std::move(D), T);
      I.Low = T == ElementType::U8 ? 0 : -128, I.High = T == ElementType::U8 ? 255 : 127;
      return I;
    };
    const auto F = [](double V) { return valuesInput({}, {V}, ElementType::F32, true); };
    const auto Z = [](double V, ElementType T) { return valuesInput({}, {V}, T, true); };
    const ElementType U8 = ElementType::U8, I8 = ElementType::I8;
    const auto Act = [](float V) {
      AttrValue A;
      A.K = AttrValue::Kind::Float;
      A.F = V;
      return A;
    };
    return std::vector<OpTestCase>{
        testCase("u8_residual", {Q({1, 8, 7, 9}, U8), F(0.031), Z(0, U8), Q({1, 8, 7, 9}, U8), F(0.047), Z(3, U8), F(0.052),
                                 Z(0, U8)}),
        testCase("u8_zero_points_saturate", {Q({2, 3, 33}, U8), F(0.1), Z(128, U8), Q({2, 3, 33}, U8), F(0.2), Z(100, U8),
                                             F(0.05), Z(120, U8)}),
        testCase("s8", {Q({300}, I8), F(0.02), Z(-3, I8), Q({300}, I8), F(0.01), Z(5, I8), F(0.025), Z(-1, I8)}),
        testCase("u8_fused_relu", {Q({2, 5, 19}, U8), F(0.04), Z(130, U8), Q({2, 5, 19}, U8), F(0.03), Z(120, U8), F(0.02),
                                   Z(60, U8)},
                 {{kFusedActMin, Act(0.0f)}}),
        testCase("s8_fused_clip", {Q({77}, I8), F(0.05), Z(0, I8), Q({77}, I8), F(0.05), Z(2, I8), F(0.04), Z(-20, I8)},
                 {{kFusedActMin, Act(0.0f)}, {kFusedActMax, Act(3.0f)}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(QLinearAdd, qlinearAddSchema());
OPT_REGISTER_KERNELS(QLinearAdd, qlinearAddKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
