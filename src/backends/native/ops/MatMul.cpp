// MatMul with numpy semantics: 1-D operands are promoted (and the added dim dropped again), batch
// dims broadcast. f32 has blocked variants that fold A's batch into rows when B is one matrix and
// pack a constant 2-D B once at creation; f64 and the integer types have the reference only.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/GemmBf16.h"
#include "backends/native/ops/common/GemmBf16Dot.h"
#include "backends/native/ops/common/MathApprox.h"
#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/SimdDispatch.h"
#include "core/SourceRelease.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status inferMatMul(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0,
                                   {ElementType::F32, ElementType::F64, ElementType::I32, ElementType::I64,
                                    ElementType::U32, ElementType::U64}));
  ASSIGN_OR_RETURN(const int64_t Bf16Weights, Ctx.N.getInt(kBf16Weights, 0));
  if (Bf16Weights) { // passes/Bf16Weights: B stands for its float32 values
    if (Ctx.Inputs[0].Type != ElementType::F32 || Ctx.Inputs[1].Type != ElementType::BF16 || Ctx.Inputs[1].Shape.getRank() != 2)
      return Ctx.error(ErrorCode::Type, "bfloat16 weights need a float32 A and a 2-D bfloat16 B, got ",
                       toString(Ctx.Inputs[0].Type), " and ", toString(Ctx.Inputs[1].Type), " ",
                       Ctx.Inputs[1].Shape.toString());
  } else {
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
  }
  const TensorShape &A = Ctx.Inputs[0].Shape, &B = Ctx.Inputs[1].Shape;
  if (A.getRank() == 0 || B.getRank() == 0)
    return Ctx.error(ErrorCode::Shape, "operands must have rank >= 1, got ", A.toString(), " and ", B.toString());
  const size_t RA = A.getRank(), RB = B.getRank();
  ASSIGN_OR_RETURN(const int64_t TransB, Ctx.N.getInt(kTransposeB, 0));
  if (TransB && RB < 2)
    return Ctx.error(ErrorCode::Shape, "a transposed B (passes/FuseTransposeMatMul) needs rank >= 2, got ", B.toString());
  const Expr KA = A[RA - 1], KB = RB == 1 ? B[0] : B[TransB ? RB - 1 : RB - 2];
  const Expr NB = RB >= 2 ? B[TransB ? RB - 2 : RB - 1] : Expr(1);
  if (KA.isConst() && KB.isConst() && KA.value() != KB.value())
    return Ctx.error(ErrorCode::Shape, "inner dimensions differ: ", A.toString(), " x ", B.toString());
  const TensorShape BatchA(std::vector<Expr>(A.begin(), A.end() - std::min<size_t>(RA, 2)));
  const TensorShape BatchB(std::vector<Expr>(B.begin(), B.end() - std::min<size_t>(RB, 2)));
  auto Batch = broadcastShapes(BatchA, BatchB);
  if (!Batch.isOk())
    return Ctx.error(ErrorCode::Shape, "batch dimensions of ", A.toString(), " and ", B.toString(),
                     " cannot broadcast");
  std::vector<Expr> Dims = Batch->dims();
  if (RA >= 2)
    Dims.push_back(A[RA - 2]);
  if (RB >= 2)
    Dims.push_back(NB);
  if (Ctx.hasInput(2)) { // a bias folded in by passes/FuseMatMulBias
    ASSIGN_OR_RETURN(const int64_t Fused, Ctx.N.getInt(kFusedBias, 0));
    if (Fused != 1)
      return Ctx.error(ErrorCode::Model, "MatMul takes 2 inputs, got 3");
    const TensorShape &Bias = Ctx.Inputs[2].Shape;
    if (Ctx.Inputs[0].Type != ElementType::F32 || Ctx.Inputs[2].Type != ElementType::F32 || RB < 2 ||
        Bias.getRank() == 0 || (Bias[Bias.getRank() - 1].isConst() && NB.isConst() && Bias[Bias.getRank() - 1].value() != NB.value()))
      return Ctx.error(ErrorCode::Shape, "fused bias ", Bias.toString(), " does not match the output's last dim");
  }
  ASSIGN_OR_RETURN(const std::vector<int64_t> Split, Ctx.N.getInts(kSplitOutputs, {}));
  if (Split.empty() && Ctx.Outputs.size() != 1)
    return Ctx.error(ErrorCode::Model, "MatMul has 1 output, got ", Ctx.Outputs.size());
  if (!Split.empty()) { // a merged MatMul (passes/FuseMatMulBias): output i takes Split[i] columns
    int64_t Total = 0;
    for (int64_t W : Split)
      Total += W > 0 ? W : 0;
    if (Split.size() != Ctx.Outputs.size() || RB < 2 || Ctx.Inputs[0].Type != ElementType::F32 ||
        (NB.isConst() && NB.value() != Total))
      return Ctx.error(ErrorCode::Shape, "split outputs ", joinInts(Split), " do not cover the output's last dim");
    for (size_t O = 0; O < Split.size(); ++O) {
      std::vector<Expr> D = Dims;
      D.back() = Expr(Split[O]);
      Ctx.Outputs[O].Type = Ctx.Inputs[0].Type;
      Ctx.Outputs[O].Shape = TensorShape(std::move(D));
    }
    return Status::ok();
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
  return Status::ok();
}

OpSchema matMulSchema() {
  OpSchema S;
  S.OpType = "MatMul";
  S.MinInputs = 2;
  S.MaxInputs = 3; // the third only as a fused bias (checked in inferMatMul)
  S.MaxOutputs = 16; // more than one only as split outputs (checked in inferMatMul)
  S.Infer = inferMatMul;
  return S;
}

/// One run's geometry: matrices [M, K] x [K, N] per batch (B stored [N, K] when TransB), with
/// element offsets of each batch.
struct MatMulPlan {
  int64_t M = 1, N = 1, K = 1;
  std::vector<int64_t> OffA, OffB; ///< per output batch, in elements
  bool BSingle = false;            ///< B is one matrix shared by every batch
};

Result<MatMulPlan> planMatMul(const TensorView &A, const TensorView &B, const TensorView &Y, bool TransB) {
  MatMulPlan P;
  const size_t RA = A.rank(), RB = B.rank();
  if (RA == 0 || RB == 0 || (TransB && RB < 2))
    return runError("matmul", "scalar operand");
  P.M = RA >= 2 ? A.Dims[RA - 2] : 1;
  P.K = A.Dims[RA - 1];
  P.N = RB >= 2 ? B.Dims[TransB ? RB - 2 : RB - 1] : 1;
  if ((RB >= 2 ? B.Dims[TransB ? RB - 1 : RB - 2] : B.Dims[0]) != P.K)
    return runError("matmul", "inner dimensions differ: ", joinInts(A.Dims), " x ", joinInts(B.Dims));
  const std::vector<int64_t> BA(A.Dims.begin(), A.Dims.end() - std::min<size_t>(RA, 2));
  const std::vector<int64_t> BB(B.Dims.begin(), B.Dims.end() - std::min<size_t>(RB, 2));
  const size_t R = std::max(BA.size(), BB.size());
  std::vector<int64_t> Out(R), SA(R, 0), SB(R, 0);
  int64_t StrideA = P.M * P.K, StrideB = P.K * P.N;
  for (size_t I = R; I-- > 0;) {
    const int64_t DA = I + BA.size() >= R ? BA[I + BA.size() - R] : 1;
    const int64_t DB = I + BB.size() >= R ? BB[I + BB.size() - R] : 1;
    if (DA != DB && DA != 1 && DB != 1)
      return runError("matmul", "batch dims of ", joinInts(A.Dims), " and ", joinInts(B.Dims), " do not broadcast");
    Out[I] = std::max(DA, DB);
    if (DA == 0 || DB == 0)
      Out[I] = 0;
    SA[I] = DA == 1 ? 0 : StrideA;
    SB[I] = DB == 1 ? 0 : StrideB;
    StrideA *= DA;
    StrideB *= DB;
  }
  const int64_t Batches = product(Out, 0, R);
  if (static_cast<int64_t>(Y.elementCount()) != Batches * P.M * P.N)
    return runError("matmul", "output ", joinInts(Y.Dims), " does not match ", joinInts(A.Dims), " x ",
                    joinInts(B.Dims));
  P.BSingle = product(BB, 0, BB.size()) == 1;
  for (int64_t T = 0; T < Batches; ++T) {
    int64_t Rem = T, OA = 0, OB = 0;
    for (size_t I = R; I-- > 0;) {
      const int64_t Idx = Rem % Out[I];
      Rem /= Out[I];
      OA += Idx * SA[I];
      OB += Idx * SB[I];
    }
    P.OffA.push_back(OA);
    P.OffB.push_back(OB);
  }
  return P;
}

/// Y[0:N] = A[0:K] x B (K x N, row stride N) as K row updates Y += A[k] * B[k, :]: B is read once,
/// row by row and contiguously, with no packing. The one-row case (decoder steps, attention of one
/// query against a long cache) is bandwidth-bound, and packing B would read it twice.
template <typename Fma> inline void gemvRows(const float *A, const float *B, float *Y, int64_t K, int64_t N,
                                             int64_t N0, int64_t N1, Fma Row) {
  for (int64_t J = N0; J < N1; ++J)
    Y[J] = 0.0f;
  int64_t Kk = 0;
  for (; Kk + 4 <= K; Kk += 4)
    Row(A + Kk, B + Kk * N, N, Y, N0, N1);
  for (; Kk < K; ++Kk) {
    const float Ak = A[Kk];
    const float *Bk = B + Kk * N;
    for (int64_t J = N0; J < N1; ++J)
      Y[J] += Ak * Bk[J];
  }
}

/// Y[N0:N1] += A[0..3] * B[0..3 rows, N0:N1]. Inlined into each ISA's entry point below, so the
/// compiler vectorizes it for that ISA.
struct GemvRow4 {
  void operator()(const float *A, const float *B, int64_t N, float *Y, int64_t N0, int64_t N1) const {
    const float A0 = A[0], A1 = A[1], A2 = A[2], A3 = A[3];
    const float *B0 = B, *B1 = B + N, *B2 = B + 2 * N, *B3 = B + 3 * N;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC ivdep
#endif
    for (int64_t J = N0; J < N1; ++J)
      Y[J] += A0 * B0[J] + A1 * B1[J] + A2 * B2[J] + A3 * B3[J];
  }
};

// The x86 copies of the GEMV loops are compiled for their ISA; elsewhere they are plain copies
// (never picked: gemmIsaAvailable says no), so the same tables build on every architecture.
#ifdef OPT_SIMD_X86
#define OPT_GEMV_AVX512 __attribute__((target("avx512f,fma")))
#define OPT_GEMV_AVX2 __attribute__((target("avx2,fma")))
#else
#define OPT_GEMV_AVX512
#define OPT_GEMV_AVX2
#endif

OPT_GEMV_AVX512 void gemvAvx512(const float *A, const float *B, float *Y, int64_t K,
                                                        int64_t N, int64_t N0, int64_t N1) {
  gemvRows(A, B, Y, K, N, N0, N1, GemvRow4());
}

OPT_GEMV_AVX2 void gemvAvx2(const float *A, const float *B, float *Y, int64_t K, int64_t N,
                                                   int64_t N0, int64_t N1) {
  gemvRows(A, B, Y, K, N, N0, N1, GemvRow4());
}

void gemvPortable(const float *A, const float *B, float *Y, int64_t K, int64_t N, int64_t N0, int64_t N1) {
  gemvRows(A, B, Y, K, N, N0, N1, GemvRow4());
}

using GemvFn = void (*)(const float *, const float *, float *, int64_t, int64_t, int64_t, int64_t);

/// Y[N0:N1] = A[0:K] . B[n, 0:K] for B stored [N, K] (a transposed B): one dot product per row of
/// B, each read once and contiguously (attention scores of one query against a key cache).
inline void gemvTransRows(const float *A, const float *B, float *Y, int64_t K, int64_t N0, int64_t N1) {
  constexpr int64_t L = 16;
  for (int64_t J = N0; J < N1; ++J) {
    const float *Bj = B + J * K;
    float S[L] = {};
    int64_t Kk = 0;
    for (; Kk + L <= K; Kk += L)
      for (int64_t I = 0; I < L; ++I)
        S[I] += A[Kk + I] * Bj[Kk + I];
    float Sum = 0;
    for (; Kk < K; ++Kk)
      Sum += A[Kk] * Bj[Kk];
    for (int64_t I = 0; I < L; ++I)
      Sum += S[I];
    Y[J] = Sum;
  }
}

#ifdef OPT_SIMD_X86
// GCC 12 flags the undefined pass-through operand inside the unpack/shuffle/extract intrinsics.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/// The AVX-512 dot products: four rows of B at a time (four independent accumulator chains; A's
/// vectors are reloaded from L1), reduced together so the horizontal sums cost ~2 instructions a row.
__attribute__((target("avx512f,fma"))) void gemvTransAvx512(const float *A, const float *B, float *Y, int64_t K,
                                                             int64_t, int64_t N0, int64_t N1) {
  const int64_t KV = K / 16 * 16;
  const __mmask16 Tail = static_cast<__mmask16>((1u << (K - KV)) - 1u);
  int64_t J = N0;
  for (; J + 4 <= N1; J += 4) {
    const float *B0 = B + J * K, *B1 = B0 + K, *B2 = B1 + K, *B3 = B2 + K;
    __m512 S0 = _mm512_setzero_ps(), S1 = S0, S2 = S0, S3 = S0;
    int64_t Kk = 0;
    for (; Kk < KV; Kk += 16) {
      const __m512 Av = _mm512_loadu_ps(A + Kk);
      S0 = _mm512_fmadd_ps(Av, _mm512_loadu_ps(B0 + Kk), S0);
      S1 = _mm512_fmadd_ps(Av, _mm512_loadu_ps(B1 + Kk), S1);
      S2 = _mm512_fmadd_ps(Av, _mm512_loadu_ps(B2 + Kk), S2);
      S3 = _mm512_fmadd_ps(Av, _mm512_loadu_ps(B3 + Kk), S3);
    }
    if (Tail) {
      const __m512 Av = _mm512_maskz_loadu_ps(Tail, A + Kk);
      S0 = _mm512_fmadd_ps(Av, _mm512_maskz_loadu_ps(Tail, B0 + Kk), S0);
      S1 = _mm512_fmadd_ps(Av, _mm512_maskz_loadu_ps(Tail, B1 + Kk), S1);
      S2 = _mm512_fmadd_ps(Av, _mm512_maskz_loadu_ps(Tail, B2 + Kk), S2);
      S3 = _mm512_fmadd_ps(Av, _mm512_maskz_loadu_ps(Tail, B3 + Kk), S3);
    }
    // Interleave and add: each 128-bit lane ends up holding partial sums of rows 0..3.
    const __m512 T01 = _mm512_add_ps(_mm512_unpacklo_ps(S0, S1), _mm512_unpackhi_ps(S0, S1));
    const __m512 T23 = _mm512_add_ps(_mm512_unpacklo_ps(S2, S3), _mm512_unpackhi_ps(S2, S3));
    const __m512 T = _mm512_add_ps(_mm512_shuffle_ps(T01, T23, 0x44), _mm512_shuffle_ps(T01, T23, 0xEE));
    const __m256 H = _mm256_add_ps(_mm512_castps512_ps256(T),
                                   _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(T), 1)));
    const __m128 Q = _mm_add_ps(_mm256_castps256_ps128(H), _mm256_extractf128_ps(H, 1));
    _mm_storeu_ps(Y + J, Q);
  }
  if (J < N1)
    gemvTransRows(A, B, Y, K, J, N1);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#else
void gemvTransAvx512(const float *A, const float *B, float *Y, int64_t K, int64_t, int64_t N0, int64_t N1) {
  gemvTransRows(A, B, Y, K, N0, N1);
}
#endif

OPT_GEMV_AVX2 void gemvTransAvx2(const float *A, const float *B, float *Y, int64_t K, int64_t,
                                                        int64_t N0, int64_t N1) {
  gemvTransRows(A, B, Y, K, N0, N1);
}

void gemvTransPortable(const float *A, const float *B, float *Y, int64_t K, int64_t, int64_t N0, int64_t N1) {
  gemvTransRows(A, B, Y, K, N0, N1);
}

GemvFn gemvTransFor(GemmIsa Isa) {
  switch (Isa) {
  case GemmIsa::Avx512: return gemvTransAvx512;
  case GemmIsa::Avx2: return gemvTransAvx2;
  default: return gemvTransPortable;
  }
}

GemvFn gemvFor(GemmIsa Isa) {
  switch (Isa) {
  case GemmIsa::Avx512: return gemvAvx512;
  case GemmIsa::Avx2: return gemvAvx2;
  default: return gemvPortable;
  }
}

/// A merged MatMul's outputs (kSplitOutputs): Run computes the whole product into one temporary
/// output, whose columns are then copied to the outputs. The blocked kernel writes the outputs
/// directly instead where its GEMM can (runSplitGemm).
template <typename RunFn> Status runThroughTemporary(const KernelContext &Ctx, RunFn Run) {
  const TensorView &First = Ctx.Outputs[0];
  int64_t Total = 0;
  for (const TensorView &O : Ctx.Outputs)
    Total += O.Dims.empty() ? 0 : O.Dims.back();
  TensorView Tmp = First;
  Tmp.Dims.back() = Total;
  const size_t Elem = getElementSize(First.Type);
  std::vector<char> Buffer(std::max<size_t>(1, Tmp.elementCount() * Elem));
  Tmp.Data = Buffer.data();
  const std::vector<TensorView> Outs = {Tmp};
  const KernelContext One{Ctx.Inputs, Outs, Ctx.Par};
  RETURN_IF_ERROR(Run(One));
  const size_t Rows = Total ? Tmp.elementCount() / static_cast<size_t>(Total) : 0;
  int64_t Col = 0;
  for (const TensorView &O : Ctx.Outputs) {
    const size_t W = static_cast<size_t>(O.Dims.back());
    for (size_t R = 0; R < Rows; ++R)
      std::memcpy(static_cast<char *>(O.Data) + R * W * Elem, Buffer.data() + (R * static_cast<size_t>(Total) + Col) * Elem,
                  W * Elem);
    Col += static_cast<int64_t>(W);
  }
  return Status::ok();
}

/// Accumulates in double for floats; integers wrap (through unsigned) as ONNX Runtime's do.
template <typename T, bool = std::is_floating_point<T>::value> struct MatMulAccOf { using type = double; };
template <typename T> struct MatMulAccOf<T, false> { using type = typename std::make_unsigned<T>::type; };
template <typename T> using MatMulAcc = typename MatMulAccOf<T>::type;

template <typename T> class MatMulRefKernel : public Kernel {
public:
  MatMulRefKernel(bool TransB, bool Gelu) : TransB(TransB), Gelu(Gelu) {}
  Status run(const KernelContext &Ctx) const override {
    if (Ctx.Inputs.size() > 1 && Ctx.Inputs[1].Type == ElementType::BF16 && Ctx.Inputs[0].Type == ElementType::F32) {
      // bfloat16 weights (passes/Bf16Weights): the float32 product of B's exact float values.
      std::vector<float> Wide;
      return run(KernelContext{widenBf16Input(Ctx.Inputs, 1, Wide), Ctx.Outputs, Ctx.Par});
    }
    if (Ctx.Outputs.size() > 1)
      return runThroughTemporary(Ctx, [this](const KernelContext &C) { return runOne(C); });
    return runOne(Ctx);
  }

private:
  Status runOne(const KernelContext &Ctx) const {
    using Acc = MatMulAcc<T>;
    ASSIGN_OR_RETURN(const MatMulPlan P, planMatMul(Ctx.Inputs[0], Ctx.Inputs[1], Ctx.Outputs[0], TransB));
    const T *A = Ctx.Inputs[0].data<T>(), *B = Ctx.Inputs[1].data<T>();
    T *Y = Ctx.Outputs[0].data<T>();
    const T *Bias = inputDataOrNull<T>(Ctx, 2);
    for (size_t Batch = 0; Batch < P.OffA.size(); ++Batch) {
      const T *Ab = A + P.OffA[Batch], *Bb = B + P.OffB[Batch];
      T *Yb = Y + static_cast<int64_t>(Batch) * P.M * P.N;
      for (int64_t I = 0; I < P.M; ++I)
        for (int64_t J = 0; J < P.N; ++J) {
          Acc Sum = Bias ? static_cast<Acc>(Bias[J]) : Acc(0);
          for (int64_t K = 0; K < P.K; ++K)
            Sum += static_cast<Acc>(static_cast<Acc>(Ab[I * P.K + K]) *
                                    static_cast<Acc>(TransB ? Bb[J * P.K + K] : Bb[K * P.N + J]));
          Yb[I * P.N + J] = static_cast<T>(Sum);
          if (Gelu) { // a fused Gelu (passes/FuseMatMulBias), float only
            const double X = static_cast<double>(Yb[I * P.N + J]);
            Yb[I * P.N + J] = static_cast<T>(0.5 * X * (1.0 + std::erf(X * 0.70710678118654752)));
          }
        }
    }
    return Status::ok();
  }

  bool TransB, Gelu;
};

Result<bool> transposedB(const KernelCreateInfo &I) {
  ASSIGN_OR_RETURN(const int64_t T, I.N.getInt(kTransposeB, 0));
  return T != 0;
}

Result<bool> fusedGelu(const KernelCreateInfo &I) {
  ASSIGN_OR_RETURN(const int64_t G, I.N.getInt(kFusedGelu, 0));
  return G != 0;
}

/// A float32 A with constant bfloat16 weights (passes/Bf16Weights).
bool bf16WeightsTypesOk(const KernelCreateInfo &I) {
  return inputIs(I, 0, ElementType::F32) && inputIs(I, 1, ElementType::BF16) && inputIsConst(I, 1) && hasBf16Weights(I.N);
}

template <typename T> KernelVariant matMulRefVariant(const std::string &Name, bool Bf16Weights = false) {
  const ElementType ET = ElementTypeOf<T>::value;
  return {Name, 0,
          [ET, Bf16Weights](const KernelCreateInfo &I) {
            return Bf16Weights ? bf16WeightsTypesOk(I) : inputIs(I, 0, ET) && inputIs(I, 1, ET);
          },
          [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(const bool TransB, transposedB(I));
            ASSIGN_OR_RETURN(const bool Gelu, fusedGelu(I));
            return makeKernel<MatMulRefKernel<T>>(TransB, Gelu);
          }};
}

class MatMulBlockedKernel : public Kernel {
public:
  MatMulBlockedKernel(const GemmMicroKernel &MK, std::unique_ptr<PackedB> ConstB, bool TransB, bool Gelu)
      : MK(MK), ConstB(std::move(ConstB)), TransB(TransB), Gelu(Gelu) {}

  Status run(const KernelContext &Ctx) const override {
    if (Ctx.Outputs.size() > 1) {
      bool Done = false;
      RETURN_IF_ERROR(runSplitGemm(Ctx, Done));
      if (Done)
        return Status::ok();
      return runThroughTemporary(Ctx, [this](const KernelContext &C) { return runOne(C); });
    }
    return runOne(Ctx);
  }

private:
  /// A merged MatMul whose product is one GEMM over consecutive rows of A with the packed weights
  /// and whose outputs start at tile boundaries: the GEMM writes every output directly.
  Status runSplitGemm(const KernelContext &Ctx, bool &Done) const {
    const TensorView &AV = Ctx.Inputs[0];
    if (!ConstB || AV.rank() < 2 || AV.Type != ElementType::F32)
      return Status::ok();
    const int64_t K = AV.Dims.back(), Rows = static_cast<int64_t>(AV.elementCount()) / std::max<int64_t>(K, 1);
    std::vector<int64_t> Begin = {0};
    std::vector<float *> C;
    std::vector<int64_t> Ldc;
    for (const TensorView &O : Ctx.Outputs) {
      const int64_t W = O.Dims.empty() ? 0 : O.Dims.back();
      if (Begin.back() % MK.NR != 0 || static_cast<int64_t>(O.elementCount()) != Rows * W)
        return Status::ok();
      C.push_back(O.data<float>());
      Ldc.push_back(W);
      Begin.push_back(Begin.back() + W);
    }
    // Row-major A whose batches are consecutive rows (the outputs' batch dims are A's).
    if (K == 0 || Rows < 2 || ConstB->K != K || ConstB->N != Begin.back() || Ctx.Outputs[0].Dims.size() != AV.Dims.size())
      return Status::ok();
    for (size_t D = 0; D + 1 < AV.Dims.size(); ++D)
      if (Ctx.Outputs[0].Dims[D] != AV.Dims[D])
        return Status::ok();
    GemmColumnSplit Split;
    Split.Parts = C.size(), Split.Begin = Begin.data(), Split.C = C.data(), Split.Ldc = Ldc.data();
    GemmEpilogue Ep;
    Ep.ColBias = inputDataOrNull(Ctx, 2);
    Ep.Gelu = Gelu;
    Ep.Split = &Split;
    gemmRowsA(MK, Rows, K, AV.data<float>(), K, *ConstB, 1.0f, 0.0f, nullptr, 0, Ctx.Par, &Ep);
    Done = true;
    return Status::ok();
  }

  Status runOne(const KernelContext &Ctx) const {
    const TensorView &AV = Ctx.Inputs[0], &BV = Ctx.Inputs[1];
    ASSIGN_OR_RETURN(const MatMulPlan P, planMatMul(AV, BV, Ctx.Outputs[0], TransB));
    if (BV.Type == ElementType::BF16 && (!ConstB || !P.BSingle || ConstB->K != P.K || ConstB->N != P.N))
      return runError("f32_matmul", "bfloat16 weights ", joinInts(BV.Dims), " differ from the packed ", ConstB ? ConstB->K : 0,
                      " x ", ConstB ? ConstB->N : 0);
    const float *A = AV.data<float>(), *B = BV.data<float>();
    // B as the GEMM reads it: [K, N] row-major, or the same memory read transposed.
    const auto BRef = [&](const float *Base) {
      return TransB ? MatrixRef{Base, 1, P.K} : MatrixRef{Base, P.N, 1};
    };
    float *Y = Ctx.Outputs[0].data<float>();
    if (P.OffA.empty() || P.M == 0 || P.N == 0)
      return Status::ok();
    // A fused bias (passes/FuseMatMulBias) goes into the GEMM's write-back; the GEMV paths add it
    // to the row they just produced.
    const float *Bias = inputDataOrNull(Ctx, 2);
    GemmEpilogue Ep;
    Ep.ColBias = Bias;
    Ep.Gelu = Gelu;
    const GemmEpilogue *EpP = Bias || Gelu ? &Ep : nullptr;
    // The GEMV and batched-B paths add the bias and apply a fused Gelu to each row they produce.
    const auto addBias = [Bias, this](float *Row, int64_t N0, int64_t N1) {
      if (Bias)
        for (int64_t J = N0; J < N1; ++J)
          Row[J] += Bias[J];
      if (Gelu && N1 > N0)
        approx::geluErfF32(Row + N0, Row + N0, static_cast<size_t>(N1 - N0));
    };
    if (P.M == 1 && !ConstB) {
      // One row per batch: stream B row by row (no packing). Work splits over batches and over
      // 64-column slices of N (cache-line aligned, so threads never share a line of Y).
      const GemvFn Fn = TransB ? gemvTransFor(MK.Isa) : gemvFor(MK.Isa);
      const int64_t Slice = 64, Slices = (P.N + Slice - 1) / Slice;
      const size_t Tasks = P.OffA.size() * static_cast<size_t>(Slices);
      const size_t Grain = std::max<size_t>(1, static_cast<size_t>(16384 / std::max<int64_t>(1, P.K * Slice)));
      Ctx.Par.forRange(Tasks, Grain, [&](size_t Begin, size_t End) {
        for (size_t I = Begin; I < End; ++I) {
          const size_t T = I / static_cast<size_t>(Slices);
          const int64_t N0 = static_cast<int64_t>(I % static_cast<size_t>(Slices)) * Slice;
          Fn(A + P.OffA[T], B + P.OffB[T], Y + static_cast<int64_t>(T) * P.N, P.K, P.N, N0,
             std::min(P.N, N0 + Slice));
          addBias(Y + static_cast<int64_t>(T) * P.N, N0, std::min(P.N, N0 + Slice));
        }
      });
      return Status::ok();
    }
    if (P.BSingle) {
      // Every batch multiplies the same B: A's batches are consecutive rows of one tall matrix
      // when A is not broadcast itself (offsets step by M*K).
      bool Consecutive = true;
      for (size_t T = 0; T < P.OffA.size(); ++T)
        Consecutive &= P.OffA[T] == static_cast<int64_t>(T) * P.M * P.K;
      PackedB Local;
      const PackedB *PB = ConstB.get();
      if (!PB || PB->K != P.K || PB->N != P.N) {
        packB(MK, P.K, P.N, BRef(B), Local, Ctx.Par);
        PB = &Local;
      }
      if (Consecutive && P.M * static_cast<int64_t>(P.OffA.size()) == 1) {
        gemvPacked(MK, A, *PB, Y, Ctx.Par);
        addBias(Y, 0, P.N);
        return Status::ok();
      }
      // A's rows are read in place by the microkernel: no per-run packing of the activations.
      if (Consecutive) {
        const int64_t Rows = P.M * static_cast<int64_t>(P.OffA.size());
        gemmRowsA(MK, Rows, P.K, A, P.K, *PB, 1.0f, 0.0f, Y, P.N, Ctx.Par, EpP);
        return Status::ok();
      }
      for (size_t T = 0; T < P.OffA.size(); ++T)
        gemmRowsA(MK, P.M, P.K, A + P.OffA[T], P.K, *PB, 1.0f, 0.0f, Y + static_cast<int64_t>(T) * P.M * P.N, P.N,
                  Ctx.Par, EpP);
      return Status::ok();
    }
    for (size_t T = 0; T < P.OffA.size(); ++T) {
      float *Yt = Y + static_cast<int64_t>(T) * P.M * P.N;
      sgemm(MK, P.M, P.N, P.K, 1.0f, MatrixRef{A + P.OffA[T], P.K, 1}, BRef(B + P.OffB[T]), 0.0f, Yt, P.N, Ctx.Par);
      for (int64_t I = 0; I < P.M; ++I)
        addBias(Yt + I * P.N, 0, P.N);
    }
    return Status::ok();
  }

  const GemmMicroKernel &MK;
  std::unique_ptr<PackedB> ConstB;
  bool TransB, Gelu;
};

/// The blocked GEMM MatMul: float32 operands, or (Bf16Weights) float32 A with constant bfloat16
/// weights, packed as bf16 panels (common/GemmBf16.h).
KernelVariant blockedVariant(GemmIsa Isa, int Priority, bool Bf16Weights = false) {
  const GemmMicroKernel &MK = gemmMicroKernel(Isa);
  return {std::string(Bf16Weights ? "f32_matmul_bf16w__" : "f32_matmul__") + MK.Name, Priority,
          [Isa, Bf16Weights](const KernelCreateInfo &I) {
            const bool Types = Bf16Weights ? bf16WeightsTypesOk(I)
                                           : inputIs(I, 0, ElementType::F32) && inputIs(I, 1, ElementType::F32);
            return Types && gemmIsaAvailable(Isa);
          },
          [&MK](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(const bool TransB, transposedB(I));
            std::unique_ptr<PackedB> ConstB;
            if (inputIs(I, 1, ElementType::BF16)) {
              // bfloat16 weights (passes/Bf16Weights): packed as bf16 panels, never widened.
              ConstData &B = *I.Inputs[1].Const;
              if (B.Dims.size() != 2 || (!B.Data && !B.Source))
                return runError("f32_matmul", "bfloat16 weights ", joinInts(B.Dims), " are not a readable matrix");
              const int64_t K = TransB ? B.Dims[1] : B.Dims[0], N = TransB ? B.Dims[0] : B.Dims[1];
              const bool InFile = !B.Data;
              const void *Bits = InFile ? B.Source : B.Data;
              std::function<void(int64_t, int64_t)> Release;
              if (InFile && !TransB)
                Release = [Bits, N](int64_t K0, int64_t K1) {
                  releaseSourceRange(static_cast<const uint16_t *>(Bits) + K0 * N,
                                     static_cast<size_t>((K1 - K0) * N) * sizeof(uint16_t));
                };
              ConstB.reset(new PackedB);
              const std::string Key = packedWeightsKey(I, 1, std::string("f32_matmul_bf16w__") + MK.Name +
                                                                 (TransB ? "/t" : "/n") + "/kc" + std::to_string(gemmKcForWeights(K, MK.Isa)));
              if (!borrowPackedB(Key, MK, K, N, gemmKcForWeights(K, MK.Isa), /*Bf16=*/true, *ConstB)) {
                packBBf16(MK, K, N, Bits, TransB ? 1 : N, TransB ? K : 1, *ConstB, Release, gemmKcForWeights(K, MK.Isa));
                storePackedB(Key, *ConstB);
              }
              markConstConsumed(I, 1);
            } else if (inputIsConst(I, 1)) {
              ConstData &B = *I.Inputs[1].Const;
              // A 1-D B is a K x 1 matrix; a batched B whose batch dims are all 1 is one matrix.
              const size_t R = B.Dims.size();
              const bool Packable = R >= (TransB ? 2u : 1u) && product(B.Dims, 0, R >= 2 ? R - 2 : 0) == 1;
              // B left in the model file by the importer (no aligned copy): packed straight from the
              // file's bytes, which packB copies row by row with memcpy (any alignment).
              const bool InFile = !B.Data && B.Source;
              if (InFile && (!Packable || TransB))
                return runError("f32_matmul", "constant B ", joinInts(B.Dims), " has no aligned copy to read");
              if (Packable) {
                const int64_t Rows = R >= 2 ? B.Dims[R - 2] : B.Dims[0], Cols = R >= 2 ? B.Dims[R - 1] : 1;
                const int64_t K = TransB ? Cols : Rows, N = TransB ? Rows : Cols;
                const float *BData = static_cast<const float *>(InFile ? B.Source : B.Data);
                // From the file, rows leave the resident set as soon as they are packed.
                std::function<void(int64_t, int64_t)> Release;
                if (InFile)
                  Release = [BData, N](int64_t K0, int64_t K1) {
                    releaseSourceRange(BData + K0 * N, static_cast<size_t>((K1 - K0) * N) * sizeof(float));
                  };
                ConstB.reset(new PackedB);
                const std::string Key = packedWeightsKey(I, 1, std::string("f32_matmul__") + MK.Name + (TransB ? "/t" : "/n") +
                                                                   "/kc" + std::to_string(gemmKcForWeights(K, MK.Isa)));
                if (!borrowPackedB(Key, MK, K, N, gemmKcForWeights(K, MK.Isa), /*Bf16=*/false, *ConstB)) {
                  packB(MK, K, N, TransB ? MatrixRef{BData, 1, K} : MatrixRef{BData, N, 1}, *ConstB, Parallel(), Release,
                        gemmKcForWeights(K, MK.Isa));
                  storePackedB(Key, *ConstB);
                }
                markConstConsumed(I, 1); // B's shape is fixed: run() always takes the packed copy
              }
            }
            ASSIGN_OR_RETURN(const bool Gelu, fusedGelu(I));
            return makeKernel<MatMulBlockedKernel>(MK, std::move(ConstB), TransB, Gelu);
          }};
}

/// The bfloat16 compute mode (kComputeBf16, passes/Bf16Compute): the constant float32 weights are
/// converted once to bf16 pairs (common/GemmBf16Dot.h), the activations per run; float32
/// accumulation and epilogue (fused bias, Gelu, split outputs).
class MatMulBf16DotKernel : public Kernel {
public:
  MatMulBf16DotKernel(Bf16DotB B, bool TransB, bool Gelu) : B(std::move(B)), TransB(TransB), Gelu(Gelu) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &AV = Ctx.Inputs[0];
    const int64_t K = AV.Dims.empty() ? 0 : AV.Dims.back();
    if (K != B.K)
      return runError(kName, "A ", joinInts(AV.Dims), " does not match the packed weights ", B.K, " x ", B.N);
    const int64_t Rows = K ? static_cast<int64_t>(AV.elementCount()) / K : 0;
    GemmEpilogue Ep;
    Ep.ColBias = inputDataOrNull(Ctx, 2);
    Ep.Gelu = Gelu;
    if (Ctx.Outputs.size() > 1) { // a merged MatMul: each output takes its columns (kSplitOutputs)
      std::vector<int64_t> Begin = {0}, Ldc;
      std::vector<float *> C;
      for (const TensorView &O : Ctx.Outputs) {
        const int64_t W = O.Dims.empty() ? 0 : O.Dims.back();
        if (static_cast<int64_t>(O.elementCount()) != Rows * W)
          return runError(kName, "output ", joinInts(O.Dims), " does not match A ", joinInts(AV.Dims));
        C.push_back(O.data<float>());
        Ldc.push_back(W);
        Begin.push_back(Begin.back() + W);
      }
      if (Begin.back() != B.N)
        return runError(kName, "split outputs cover ", Begin.back(), " of ", B.N, " columns");
      bool Aligned = true; // a tile never straddles two outputs
      for (int64_t Bd : Begin)
        Aligned &= Bd % kBf16DotNR == 0 || Bd == B.N;
      if (!Aligned) // products into one temporary, then copied to the outputs
        return runThroughTemporary(Ctx, [&](const KernelContext &One) {
          gemmBf16DotRowsA(Rows, K, AV.data<float>(), K, B, One.Outputs[0].data<float>(), B.N, One.Par, &Ep);
          return Status::ok();
        });
      GemmColumnSplit Split;
      Split.Parts = C.size(), Split.Begin = Begin.data(), Split.C = C.data(), Split.Ldc = Ldc.data();
      Ep.Split = &Split;
      gemmBf16DotRowsA(Rows, K, AV.data<float>(), K, B, nullptr, 0, Ctx.Par, &Ep);
      return Status::ok();
    }
    const TensorView &Y = Ctx.Outputs[0];
    if (static_cast<int64_t>(Y.elementCount()) != Rows * B.N)
      return runError(kName, "output ", joinInts(Y.Dims), " does not match A ", joinInts(AV.Dims), " x ", B.K, " x ", B.N);
    gemmBf16DotRowsA(Rows, K, AV.data<float>(), K, B, Y.data<float>(), B.N, Ctx.Par, &Ep);
    return Status::ok();
  }

  static constexpr const char *kName = "f32_matmul_bf16c";

private:
  Bf16DotB B;
  bool TransB, Gelu;
};

/// bf16 compute (kComputeBf16): float32 A of rank >= 2 (its batches are consecutive rows) times a
/// constant 2-D float32 B.
KernelVariant bf16DotVariant() {
  KernelVariant V{std::string("f32_matmul_bf16c__") + kBf16DotName, 40,
          [](const KernelCreateInfo &I) {
            return hasComputeBf16(I.N) && bf16DotAvailable() && inputIs(I, 0, ElementType::F32) &&
                   inputIs(I, 1, ElementType::F32) && inputIsConst(I, 1) && I.Inputs[1].Const->Dims.size() == 2 &&
                   I.Inputs[0].Shape.getRank() >= 2;
          },
          [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(const bool TransB, transposedB(I));
            ASSIGN_OR_RETURN(const bool Gelu, fusedGelu(I));
            const ConstData &W = *I.Inputs[1].Const;
            const float *Data = static_cast<const float *>(W.Data ? W.Data : W.Source);
            if (!Data)
              return runError(MatMulBf16DotKernel::kName, "constant B ", joinInts(W.Dims), " has no bytes to read");
            const int64_t K = TransB ? W.Dims[1] : W.Dims[0], N = TransB ? W.Dims[0] : W.Dims[1];
            Bf16DotB B;
            packBf16DotB(K, N, TransB ? MatrixRef{Data, 1, K} : MatrixRef{Data, N, 1}, B, bf16DotKc(K),
                         packedWeightsKey(I, 1, std::string("f32_matmul_bf16c__") + kBf16DotName));
            markConstConsumed(I, 1);
            return makeKernel<MatMulBf16DotKernel>(std::move(B), TransB, Gelu);
          }};
  return V;
}

OpKernels matMulKernels() {
  OpKernels K;
  K.OpType = "MatMul";
  K.Variants.push_back(matMulRefVariant<float>("f32_matmul__ref"));
  K.Variants.push_back(matMulRefVariant<float>("f32_matmul_bf16w__ref", /*Bf16Weights=*/true));
  K.Variants.push_back(matMulRefVariant<double>("f64_matmul__ref"));
  K.Variants.push_back(matMulRefVariant<int32_t>("i32_matmul__ref"));
  K.Variants.push_back(matMulRefVariant<int64_t>("i64_matmul__ref"));
  K.Variants.push_back(matMulRefVariant<uint32_t>("u32_matmul__ref"));
  K.Variants.push_back(matMulRefVariant<uint64_t>("u64_matmul__ref"));
  K.Variants.push_back(blockedVariant(GemmIsa::Portable, 10));
  K.Variants.push_back(blockedVariant(GemmIsa::Avx2, 20));
  K.Variants.push_back(blockedVariant(GemmIsa::Avx512, 30));
  K.Variants.push_back(blockedVariant(GemmIsa::Portable, 10, /*Bf16Weights=*/true));
  K.Variants.push_back(blockedVariant(GemmIsa::Avx2, 20, /*Bf16Weights=*/true));
  K.Variants.push_back(blockedVariant(GemmIsa::Avx512, 30, /*Bf16Weights=*/true));
  K.Variants.push_back(bf16DotVariant());
  K.TestCases = [] {
    const auto T = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
    const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
    const auto W16 = [](std::vector<int64_t> D) { return constInput(std::move(D), ElementType::BF16); };
    const auto splitCase = [](std::string Label, std::vector<TestInput> In, std::map<std::string, AttrValue> Attrs,
                              std::vector<int64_t> Widths) {
      Attrs[kSplitOutputs] = attrInts(Widths);
      OpTestCase C = testCase(std::move(Label), std::move(In), std::move(Attrs), 1e-4);
      C.NumOutputs = static_cast<int>(Widths.size());
      return C;
    };
    return std::vector<OpTestCase>{
        testCase("2d", {T({5, 7}), T({7, 9})}),
        testCase("2d_const_b", {T({33, 70}), W({70, 40})}),
        testCase("vec_mat", {T({7}), T({7, 9})}),
        testCase("mat_vec", {T({5, 7}), T({7})}),
        testCase("vec_vec", {T({7}), T({7})}),
        testCase("batched_same", {T({3, 4, 6}), T({3, 6, 5})}),
        testCase("batched_b_shared", {T({2, 3, 4, 6}), W({6, 5})}),
        testCase("batched_a_broadcast", {T({4, 6}), T({3, 6, 5})}),
        testCase("batched_bidirectional", {T({2, 1, 4, 6}), T({3, 6, 5})}),
        testCase("batch_of_vec", {T({3, 6}), T({2, 3, 6, 4})}),
        testCase("b_broadcast_ones", {T({2, 3, 4, 6}), T({1, 1, 6, 5})}),
        testCase("large", {T({2, 70, 300}), W({300, 90})}, {}, 1e-4),
        // constant weights deeper than one K block (gemmKcForWeights: 1030 -> two blocks of 515 on AVX2, five of 206 elsewhere)
        testCase("deep_const_b", {T({2, 11, 1030}), W({1030, 40}), W({40})}, {{kFusedBias, attrInt(1)}, {kFusedGelu, attrInt(1)}},
                 1e-4),
        testCase("deep_const_b_gemv", {T({1, 1030}), W({1030, 40})}, {}, 1e-4),
        testCase("k_zero", {T({3, 0}), T({0, 4})}),
        testCase("gemv_const_b", {T({1, 1, 130}), W({130, 200})}, {}, 1e-4),
        testCase("fused_bias", {T({2, 7, 40}), W({40, 37}), W({37})}, {{kFusedBias, attrInt(1)}}, 1e-4),
        testCase("fused_bias_gemv", {T({1, 1, 40}), W({40, 70}), W({70})}, {{kFusedBias, attrInt(1)}}, 1e-4),
        testCase("fused_bias_gemv_raw", {T({1, 33}), T({33, 50}), W({50})}, {{kFusedBias, attrInt(1)}}, 1e-4),
        testCase("fused_bias_batched_b", {T({2, 3, 9}), T({2, 9, 20}), W({20})}, {{kFusedBias, attrInt(1)}}, 1e-4),
        testCase("gemv_attention", {T({1, 8, 1, 64}), T({1, 8, 64, 301})}, {}, 1e-4),
        testCase("gemv_batched_rows", {T({2, 3, 1, 7}), T({2, 3, 7, 70})}),
        testCase("gemv_odd_k", {T({1, 5}), T({5, 3})}),
        testCase("gemv_const_b_bias_gelu_odd", {T({1, 1, 577}), W({577, 203}), W({203})},
                 {{kFusedBias, attrInt(1)}, {kFusedGelu, attrInt(1)}}, 1e-4),
        testCase("trans_b_gemv_attention", {T({1, 8, 1, 64}), T({1, 8, 301, 64})}, {{kTransposeB, attrInt(1)}}, 1e-4),
        testCase("trans_b_gemv_odd_k", {T({2, 1, 19}), T({2, 33, 19})}, {{kTransposeB, attrInt(1)}}, 1e-4),
        testCase("trans_b_batched", {T({2, 3, 5, 24}), T({2, 3, 17, 24})}, {{kTransposeB, attrInt(1)}}, 1e-4),
        testCase("trans_b_shared", {T({3, 7, 40}), T({37, 40})}, {{kTransposeB, attrInt(1)}}, 1e-4),
        testCase("trans_b_const", {T({3, 7, 40}), W({37, 40})}, {{kTransposeB, attrInt(1)}}, 1e-4),
        testCase("trans_b_fused_bias", {T({2, 7, 40}), T({37, 40}), W({37})},
                 {{kTransposeB, attrInt(1)}, {kFusedBias, attrInt(1)}}, 1e-4),
        testCase("fused_gelu", {T({2, 13, 40}), W({40, 37}), W({37})}, {{kFusedBias, attrInt(1)}, {kFusedGelu, attrInt(1)}},
                 1e-4),
        testCase("fused_gelu_no_bias", {T({3, 70}), W({70, 33})}, {{kFusedGelu, attrInt(1)}}, 1e-4),
        testCase("fused_gelu_gemv", {T({1, 1, 40}), W({40, 70}), W({70})}, {{kFusedBias, attrInt(1)}, {kFusedGelu, attrInt(1)}},
                 1e-4),
        testCase("fused_gelu_batched_b", {T({2, 3, 9}), T({2, 9, 20})}, {{kFusedGelu, attrInt(1)}}, 1e-4),
        splitCase("split_outputs", {T({2, 7, 40}), W({40, 96}), W({96})}, {{kFusedBias, attrInt(1)}}, {32, 64}),
        splitCase("split_outputs_odd", {T({3, 5, 20}), W({20, 37})}, {}, {13, 1, 23}),
        splitCase("split_outputs_one_row", {T({1, 20}), W({20, 64})}, {}, {32, 32}),
        testCase("f64_batched", {tensorInput({2, 3, 4}, ElementType::F64), tensorInput({4, 5}, ElementType::F64)}),
        testCase("i64", {tensorInput({3, 4}, ElementType::I64), tensorInput({4, 2}, ElementType::I64)}),
        // bfloat16 weights (passes/Bf16Weights): GEMV and GEMM over bf16 panels, odd N and K, K
        // over one block (1030: two or five blocks), a transposed B, the fused epilogues.
        testCase("bf16w_gemv", {T({1, 1, 130}), W16({130, 200})}, {{kBf16Weights, attrInt(1)}}, 1e-4),
        testCase("bf16w_gemv_deep", {T({1, 1030}), W16({1030, 45})}, {{kBf16Weights, attrInt(1)}}, 1e-4),
        testCase("bf16w_gemm", {T({2, 13, 70}), W16({70, 33})}, {{kBf16Weights, attrInt(1)}}, 1e-4),
        testCase("bf16w_gemm_deep", {T({29, 1030}), W16({1030, 70})}, {{kBf16Weights, attrInt(1)}}, 1e-4),
        testCase("bf16w_trans_b", {T({5, 40}), W16({37, 40})}, {{kBf16Weights, attrInt(1)}, {kTransposeB, attrInt(1)}},
                 1e-4),
        testCase("bf16w_trans_b_gemv", {T({1, 40}), W16({37, 40})}, {{kBf16Weights, attrInt(1)}, {kTransposeB, attrInt(1)}},
                 1e-4),
        testCase("bf16w_bias_gelu", {T({6, 40}), W16({40, 70}), W({70})},
                 {{kBf16Weights, attrInt(1)}, {kFusedBias, attrInt(1)}, {kFusedGelu, attrInt(1)}}, 1e-4),
        testCase("bf16w_bias_gemv", {T({1, 40}), W16({40, 70}), W({70})}, {{kBf16Weights, attrInt(1)}, {kFusedBias, attrInt(1)}},
                 1e-4),
        // bf16 compute (passes/Bf16Compute): odd K (a zero-padded pair), K over one block (600 ->
        // two of 300), edge tiles in both directions, a transposed B, the epilogues, split outputs
        // on and off tile boundaries, one row.
        testCase("bf16c_gemm", {T({2, 13, 70}), W({70, 33})}, {{kComputeBf16, attrInt(1)}}),
        testCase("bf16c_odd_k", {T({5, 37}), W({37, 40})}, {{kComputeBf16, attrInt(1)}}),
        testCase("bf16c_deep", {T({29, 600}), W({600, 70})}, {{kComputeBf16, attrInt(1)}}),
        testCase("bf16c_tall", {T({3, 50, 64}), W({64, 100})}, {{kComputeBf16, attrInt(1)}}),
        testCase("bf16c_one_row", {T({1, 40}), W({40, 70})}, {{kComputeBf16, attrInt(1)}}),
        testCase("bf16c_trans_b", {T({5, 40}), W({37, 40})}, {{kComputeBf16, attrInt(1)}, {kTransposeB, attrInt(1)}}),
        testCase("bf16c_bias_gelu", {T({6, 40}), W({40, 70}), W({70})},
                 {{kComputeBf16, attrInt(1)}, {kFusedBias, attrInt(1)}, {kFusedGelu, attrInt(1)}}),
        splitCase("bf16c_split", {T({2, 7, 40}), W({40, 96}), W({96})},
                  {{kComputeBf16, attrInt(1)}, {kFusedBias, attrInt(1)}}, {32, 64}),
        splitCase("bf16c_split_odd", {T({3, 5, 20}), W({20, 37})}, {{kComputeBf16, attrInt(1)}}, {13, 1, 23}),
    };
  };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(MatMul, matMulSchema());
OPT_REGISTER_KERNELS(MatMul, matMulKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
