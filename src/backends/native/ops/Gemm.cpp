// Gemm (f32): Y = alpha * op(A) * op(B) + beta * C, with transA/transB and an optional C that
// broadcasts unidirectionally to [M, N]. Optimized variants run the blocked SGEMM of common/Gemm.h
// per ISA; a constant B (the usual fully connected weight) is packed once at creation.
#include <vector>

#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/GemmBf16.h"
#include "backends/native/ops/common/GemmBf16Dot.h"
#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/PackedWeights.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct GemmAttrs {
  bool TransA = false, TransB = false;
  float Alpha = 1.0f, Beta = 1.0f;
};

Result<GemmAttrs> parseGemmAttrs(const Node &N) {
  GemmAttrs G;
  ASSIGN_OR_RETURN(const int64_t TA, N.getInt("transA", 0));
  ASSIGN_OR_RETURN(const int64_t TB, N.getInt("transB", 0));
  for (auto KV : {std::make_pair("transA", TA), std::make_pair("transB", TB)})
    if (KV.second != 0 && KV.second != 1)
      return makeError(ErrorCode::Model, N.describe(), ": attribute '", KV.first, "' value ", KV.second,
                       " must be 0 or 1");
  G.TransA = TA == 1;
  G.TransB = TB == 1;
  ASSIGN_OR_RETURN(G.Alpha, N.getFloat("alpha", 1.0f));
  ASSIGN_OR_RETURN(G.Beta, N.getFloat("beta", 1.0f));
  return G;
}

Status inferGemm(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32}));
  ASSIGN_OR_RETURN(const int64_t Bf16Weights, Ctx.N.getInt(kBf16Weights, 0));
  if (Bf16Weights) { // passes/Bf16Weights: B stands for its float32 values
    if (Ctx.Inputs[1].Type != ElementType::BF16)
      return Ctx.error(ErrorCode::Type, "bfloat16 weights need a bfloat16 B, got ", toString(Ctx.Inputs[1].Type));
  } else {
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
  }
  if (Ctx.hasInput(2))
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
  ASSIGN_OR_RETURN(const GemmAttrs G, parseGemmAttrs(Ctx.N));
  const TensorShape &A = Ctx.Inputs[0].Shape, &B = Ctx.Inputs[1].Shape;
  if (A.getRank() != 2 || B.getRank() != 2)
    return Ctx.error(ErrorCode::Shape, "A and B must be 2-D, got ", A.toString(), " and ", B.toString());
  const Expr M = G.TransA ? A[1] : A[0], KA = G.TransA ? A[0] : A[1];
  const Expr KB = G.TransB ? B[1] : B[0], N = G.TransB ? B[0] : B[1];
  if (KA.isConst() && KB.isConst() && KA.value() != KB.value())
    return Ctx.error(ErrorCode::Shape, "inner dimensions differ: A ", A.toString(), " (transA=", G.TransA, ") and B ",
                     B.toString(), " (transB=", G.TransB, ")");
  if (Ctx.hasInput(2)) {
    const TensorShape &C = Ctx.Inputs[2].Shape;
    const Expr Target[2] = {M, N};
    bool Ok = C.getRank() <= 2;
    for (size_t I = 0; Ok && I < C.getRank(); ++I) {
      const Expr &D = C[I], &T = Target[I + 2 - C.getRank()];
      Ok = !(D.isConst() && T.isConst() && D.value() != 1 && D.value() != T.value());
    }
    if (!Ok)
      return Ctx.error(ErrorCode::Shape, "C of shape ", C.toString(), " cannot broadcast to the output ",
                       TensorShape{M, N}.toString());
  }
  Ctx.Outputs[0].Type = ElementType::F32;
  Ctx.Outputs[0].Shape = TensorShape{M, N};
  return Status::ok();
}

OpSchema gemmSchema() {
  OpSchema S;
  S.OpType = "Gemm";
  S.MinInputs = 2;
  S.MaxInputs = 3;
  S.Infer = inferGemm;
  return S;
}

/// Problem sizes of one run, checked against the output.
struct GemmDims {
  int64_t M, N, K;
};

Result<GemmDims> gemmDims(const GemmAttrs &G, const KernelContext &Ctx) {
  const TensorView &A = Ctx.Inputs[0], &B = Ctx.Inputs[1], &Y = Ctx.Outputs[0];
  if (A.rank() != 2 || B.rank() != 2 || Y.rank() != 2)
    return runError("gemm", "A, B and Y must be 2-D");
  GemmDims D{G.TransA ? A.Dims[1] : A.Dims[0], G.TransB ? B.Dims[0] : B.Dims[1], G.TransA ? A.Dims[0] : A.Dims[1]};
  if ((G.TransB ? B.Dims[1] : B.Dims[0]) != D.K || Y.Dims[0] != D.M || Y.Dims[1] != D.N)
    return runError("gemm", "shapes ", joinInts(A.Dims), " x ", joinInts(B.Dims), " -> ", joinInts(Y.Dims),
                    " do not match");
  return D;
}

/// Value of the broadcast C at (I, J).
inline float cAt(const TensorView &C, int64_t I, int64_t J) {
  const int64_t CM = C.rank() == 2 ? C.Dims[0] : 1, CN = C.rank() >= 1 ? C.Dims[C.rank() - 1] : 1;
  return C.data<float>()[(CM == 1 ? 0 : I) * CN + (CN == 1 ? 0 : J)];
}

class GemmRefKernel : public Kernel {
public:
  explicit GemmRefKernel(GemmAttrs G) : G(G) {}
  Status run(const KernelContext &Ctx) const override {
    if (Ctx.Inputs[1].Type == ElementType::BF16) { // bfloat16 weights: B's exact float values
      std::vector<float> Wide;
      return run(KernelContext{widenBf16Input(Ctx.Inputs, 1, Wide), Ctx.Outputs, Ctx.Par});
    }
    ASSIGN_OR_RETURN(const GemmDims D, gemmDims(G, Ctx));
    const float *A = Ctx.Inputs[0].data<float>(), *B = Ctx.Inputs[1].data<float>();
    const bool HasC = Ctx.Inputs.size() > 2 && Ctx.Inputs[2].Data && G.Beta != 0.0f;
    float *Y = Ctx.Outputs[0].data<float>();
    for (int64_t I = 0; I < D.M; ++I)
      for (int64_t J = 0; J < D.N; ++J) {
        double Acc = 0;
        for (int64_t K = 0; K < D.K; ++K) {
          const float Av = G.TransA ? A[K * D.M + I] : A[I * D.K + K];
          const float Bv = G.TransB ? B[J * D.K + K] : B[K * D.N + J];
          Acc += static_cast<double>(Av) * Bv;
        }
        double V = G.Alpha * Acc;
        if (HasC)
          V += static_cast<double>(G.Beta) * cAt(Ctx.Inputs[2], I, J);
        Y[I * D.N + J] = static_cast<float>(V);
      }
    return Status::ok();
  }

private:
  GemmAttrs G;
};

class GemmBlockedKernel : public Kernel {
public:
  GemmBlockedKernel(const GemmMicroKernel &MK, GemmAttrs G, std::unique_ptr<PackedB> ConstB)
      : MK(MK), G(G), ConstB(std::move(ConstB)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const GemmDims D, gemmDims(G, Ctx));
    const TensorView &A = Ctx.Inputs[0], &B = Ctx.Inputs[1], &Y = Ctx.Outputs[0];
    const bool HasC = Ctx.Inputs.size() > 2 && Ctx.Inputs[2].Data && G.Beta != 0.0f;
    float *Out = Y.data<float>();
    if (HasC) // Y = C broadcast, then the GEMM accumulates with beta
      for (int64_t I = 0; I < D.M; ++I)
        for (int64_t J = 0; J < D.N; ++J)
          Out[I * D.N + J] = cAt(Ctx.Inputs[2], I, J);
    if (D.M == 1 && ConstB && ConstB->K == D.K && ConstB->N == D.N) {
      // One row (a classifier head at batch 1): one pass over the packed weights. A's single row
      // is contiguous whether or not it is transposed.
      std::vector<float> Row(static_cast<size_t>(D.N));
      gemvPacked(MK, A.data<float>(), *ConstB, Row.data(), Ctx.Par);
      for (int64_t J = 0; J < D.N; ++J)
        Out[J] = G.Alpha * Row[static_cast<size_t>(J)] + (HasC ? G.Beta * Out[J] : 0.0f);
      return Status::ok();
    }
    PackedB Local;
    const PackedB *PB = ConstB.get();
    if (B.Type == ElementType::BF16 && (!PB || PB->K != D.K || PB->N != D.N))
      return runError("f32_gemm", "bfloat16 weights ", joinInts(B.Dims), " differ from the packed ", PB ? PB->K : 0, " x ",
                      PB ? PB->N : 0);
    if (!PB || PB->K != D.K || PB->N != D.N) {
      packB(MK, D.K, D.N, G.TransB ? MatrixRef{B.data<float>(), 1, D.K} : MatrixRef{B.data<float>(), D.N, 1}, Local,
            Ctx.Par);
      PB = &Local;
    }
    // A is read in place when not transposed (its rows are k-contiguous), else packed for this run.
    gemmA(MK, D.M, D.K, G.TransA ? MatrixRef{A.data<float>(), 1, D.M} : MatrixRef{A.data<float>(), D.K, 1}, *PB,
          G.Alpha, HasC ? G.Beta : 0.0f, Out, D.N, Ctx.Par);
    return Status::ok();
  }

private:
  const GemmMicroKernel &MK;
  GemmAttrs G;
  std::unique_ptr<PackedB> ConstB; ///< B packed at creation when it is a constant
};

bool gemmTypesOk(const KernelCreateInfo &I) {
  return inputIs(I, 0, ElementType::F32) && inputIs(I, 1, ElementType::F32) &&
         (I.Inputs.size() < 3 || !I.Inputs[2].Present || inputIs(I, 2, ElementType::F32));
}

/// A float32 Gemm with constant bfloat16 weights (passes/Bf16Weights).
bool gemmBf16WeightsTypesOk(const KernelCreateInfo &I) {
  return inputIs(I, 0, ElementType::F32) && inputIs(I, 1, ElementType::BF16) && inputIsConst(I, 1) &&
         I.Inputs[1].Const->Dims.size() == 2 && (I.Inputs.size() < 3 || !I.Inputs[2].Present || inputIs(I, 2, ElementType::F32)) &&
         hasBf16Weights(I.N);
}

/// The blocked GEMM: float32 operands, or (Bf16Weights) constant bfloat16 weights packed as bf16
/// panels (common/GemmBf16.h).
KernelVariant blockedVariant(GemmIsa Isa, int Priority, bool Bf16Weights = false) {
  const GemmMicroKernel &MK = gemmMicroKernel(Isa);
  return {std::string(Bf16Weights ? "f32_gemm_bf16w__" : "f32_gemm__") + MK.Name, Priority,
          [Isa, Bf16Weights](const KernelCreateInfo &I) {
            return (Bf16Weights ? gemmBf16WeightsTypesOk(I) : gemmTypesOk(I)) && gemmIsaAvailable(Isa);
          },
          [&MK](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(const GemmAttrs G, parseGemmAttrs(I.N));
            std::unique_ptr<PackedB> ConstB;
            if (inputIs(I, 1, ElementType::BF16)) {
              const ConstData &B = *I.Inputs[1].Const;
              if (!B.Data && !B.Source)
                return runError("f32_gemm", "bfloat16 weights ", joinInts(B.Dims), " have no bytes to read");
              const int64_t K = G.TransB ? B.Dims[1] : B.Dims[0], N = G.TransB ? B.Dims[0] : B.Dims[1];
              ConstB.reset(new PackedB);
              const std::string Key =
                  packedWeightsKey(I, 1, std::string("f32_gemm_bf16w__") + MK.Name + (G.TransB ? "/t" : "/n") + "/kc" +
                                             std::to_string(GemmKC));
              if (!borrowPackedB(Key, MK, K, N, GemmKC, /*Bf16=*/true, *ConstB)) {
                packBBf16(MK, K, N, B.Data ? B.Data : B.Source, G.TransB ? 1 : N, G.TransB ? K : 1, *ConstB, nullptr,
                          GemmKC);
                storePackedB(Key, *ConstB);
              }
              markConstConsumed(I, 1);
            } else if (inputIsConst(I, 1) && I.Inputs[1].Const->Dims.size() == 2) {
              const ConstData &B = *I.Inputs[1].Const;
              const int64_t K = G.TransB ? B.Dims[1] : B.Dims[0], N = G.TransB ? B.Dims[0] : B.Dims[1];
              ConstB.reset(new PackedB);
              const std::string Key = packedWeightsKey(I, 1, std::string("f32_gemm__") + MK.Name +
                                                                 (G.TransB ? "/t" : "/n") + "/kc" + std::to_string(GemmKC));
              if (!borrowPackedB(Key, MK, K, N, GemmKC, /*Bf16=*/false, *ConstB)) {
                packB(MK, K, N, G.TransB ? MatrixRef{B.as<float>(), 1, K} : MatrixRef{B.as<float>(), N, 1}, *ConstB,
                      Parallel());
                storePackedB(Key, *ConstB);
              }
              markConstConsumed(I, 1); // B's shape is fixed: run() always takes the packed copy
            }
            return makeKernel<GemmBlockedKernel>(MK, G, std::move(ConstB));
          }};
}

/// The bfloat16 compute mode (kComputeBf16, passes/Bf16Compute): constant float32 weights
/// converted once to bf16 pairs (common/GemmBf16Dot.h), A (not transposed) per run. A bias row C
/// with alpha = beta = 1 (a classifier head) goes into the GEMM's write-back; any other C, alpha
/// and beta are applied after the product, in float32.
class GemmBf16DotKernel : public Kernel {
public:
  GemmBf16DotKernel(GemmAttrs G, Bf16DotB B) : G(G), B(std::move(B)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const GemmDims D, gemmDims(G, Ctx));
    if (D.K != B.K || D.N != B.N)
      return runError("f32_gemm_bf16c", "shapes differ from the packed weights ", B.K, " x ", B.N);
    const TensorView *C = Ctx.Inputs.size() > 2 && Ctx.Inputs[2].Data && G.Beta != 0.0f ? &Ctx.Inputs[2] : nullptr;
    const bool RowBias = C && G.Alpha == 1.0f && G.Beta == 1.0f && C->elementCount() == static_cast<size_t>(D.N) &&
                         (C->rank() == 1 || (C->rank() == 2 && C->Dims[0] == 1));
    float *Out = Ctx.Outputs[0].data<float>();
    GemmEpilogue Ep;
    Ep.ColBias = RowBias ? C->data<float>() : nullptr;
    gemmBf16DotRowsA(D.M, D.K, Ctx.Inputs[0].data<float>(), D.K, B, Out, D.N, Ctx.Par, &Ep);
    if (!RowBias && (C || G.Alpha != 1.0f))
      for (int64_t I = 0; I < D.M; ++I)
        for (int64_t J = 0; J < D.N; ++J)
          Out[I * D.N + J] = G.Alpha * Out[I * D.N + J] + (C ? G.Beta * cAt(*C, I, J) : 0.0f);
    return Status::ok();
  }

private:
  GemmAttrs G;
  Bf16DotB B;
};

KernelVariant bf16DotVariant() {
  KernelVariant V{std::string("f32_gemm_bf16c__") + kBf16DotName, 40,
                  [](const KernelCreateInfo &I) {
                    if (!hasComputeBf16(I.N) || !bf16DotAvailable() || !gemmTypesOk(I) || !inputIsConst(I, 1) ||
                        I.Inputs[1].Const->Dims.size() != 2)
                      return false;
                    auto G = parseGemmAttrs(I.N);
                    return G.isOk() && !G->TransA;
                  },
                  [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                    ASSIGN_OR_RETURN(const GemmAttrs G, parseGemmAttrs(I.N));
                    const ConstData &W = *I.Inputs[1].Const;
                    const float *Data = static_cast<const float *>(W.Data ? W.Data : W.Source);
                    if (!Data)
                      return runError("f32_gemm_bf16c", "constant B ", joinInts(W.Dims), " has no bytes to read");
                    const int64_t K = G.TransB ? W.Dims[1] : W.Dims[0], N = G.TransB ? W.Dims[0] : W.Dims[1];
                    Bf16DotB B;
                    packBf16DotB(K, N, G.TransB ? MatrixRef{Data, 1, K} : MatrixRef{Data, N, 1}, B, bf16DotKc(K),
                                 packedWeightsKey(I, 1, std::string("f32_gemm_bf16c__") + kBf16DotName));
                    markConstConsumed(I, 1);
                    return makeKernel<GemmBf16DotKernel>(G, std::move(B));
                  }};
  return V;
}

OpKernels gemmKernels() {
  OpKernels K;
  K.OpType = "Gemm";
  K.Variants.push_back({"f32_gemm__ref", 0, gemmTypesOk, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(const GemmAttrs G, parseGemmAttrs(I.N));
                          return makeKernel<GemmRefKernel>(G);
                        }});
  K.Variants.push_back(blockedVariant(GemmIsa::Portable, 10));
  K.Variants.push_back(blockedVariant(GemmIsa::Avx2, 20));
  K.Variants.push_back(blockedVariant(GemmIsa::Avx512, 30));
  K.Variants.push_back({"f32_gemm_bf16w__ref", 0, gemmBf16WeightsTypesOk,
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(const GemmAttrs G, parseGemmAttrs(I.N));
                          return makeKernel<GemmRefKernel>(G);
                        }});
  K.Variants.push_back(blockedVariant(GemmIsa::Portable, 10, /*Bf16Weights=*/true));
  K.Variants.push_back(blockedVariant(GemmIsa::Avx2, 20, /*Bf16Weights=*/true));
  K.Variants.push_back(blockedVariant(GemmIsa::Avx512, 30, /*Bf16Weights=*/true));
  K.Variants.push_back(bf16DotVariant());
  K.TestCases = [] {
    const auto T = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
    const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
    const auto W16 = [](std::vector<int64_t> D) { return constInput(std::move(D), ElementType::BF16); };
    const std::pair<const std::string, AttrValue> Bf16 = {kBf16Weights, attrInt(1)};
    const std::pair<const std::string, AttrValue> Bf16c = {kComputeBf16, attrInt(1)};
    return std::vector<OpTestCase>{
        testCase("plain", {T({5, 7}), T({7, 9})}),
        testCase("const_b_bias", {T({3, 20}), W({20, 10}), W({10})}),
        testCase("transA", {T({7, 5}), T({7, 9})}, {{"transA", attrInt(1)}}),
        testCase("transB", {T({5, 7}), W({9, 7})}, {{"transB", attrInt(1)}}),
        testCase("transA_transB", {T({7, 5}), T({9, 7}), T({5, 9})}, {{"transA", attrInt(1)}, {"transB", attrInt(1)}}),
        testCase("alpha_beta", {T({4, 6}), T({6, 3}), T({4, 3})}, {{"alpha", attrFloat(0.5f)}, {"beta", attrFloat(-2.0f)}}),
        testCase("beta_zero", {T({4, 6}), T({6, 3}), T({4, 3})}, {{"beta", attrFloat(0.0f)}}),
        testCase("c_scalar", {T({4, 6}), T({6, 3}), T({})}),
        testCase("c_row", {T({4, 6}), T({6, 3}), T({1, 3})}),
        testCase("c_column", {T({4, 6}), T({6, 3}), T({4, 1})}),
        testCase("fc_batch1", {T({1, 300}), W({300, 70}), W({70})}, {}, 1e-4),
        testCase("fc_batch1_transB_alpha", {T({1, 300}), W({90, 300}), W({1, 90})},
                 {{"transB", attrInt(1)}, {"alpha", attrFloat(0.5f)}, {"beta", attrFloat(2.0f)}}, 1e-4),
        testCase("fc_batch1_transA", {T({40, 1}), W({40, 33})}, {{"transA", attrInt(1)}}, 1e-4),
        // The GEMV over packed weights: K = 577 (three K blocks, the last not a multiple of the
        // 4-k unroll), N = 203 (a partial last panel), with a bias row and alpha / beta; K = 3 (below
        // the unroll).
        testCase("fc_batch1_odd_k_n", {T({1, 577}), W({577, 203}), W({1, 203})},
                 {{"alpha", attrFloat(0.5f)}, {"beta", attrFloat(2.0f)}}, 1e-4),
        testCase("fc_batch1_k3", {T({1, 3}), W({3, 37}), W({37})}, {}, 1e-5),
        testCase("large", {T({67, 300}), W({70, 300}), W({70})}, {{"transB", attrInt(1)}}, 1e-4),
        testCase("deep_k", {T({13, 600}), T({600, 45})}, {}, 1e-4),
        testCase("k_zero", {T({3, 0}), T({0, 4}), T({4})}),
        // bfloat16 weights (passes/Bf16Weights): a classifier head at batch 1 (the GEMV) and GEMM rows.
        testCase("bf16w_fc_batch1_transB", {T({1, 300}), W16({90, 300}), W({90})}, {Bf16, {"transB", attrInt(1)}}, 1e-4),
        testCase("bf16w_rows_alpha_beta", {T({13, 70}), W16({70, 45}), W({1, 45})},
                 {Bf16, {"alpha", attrFloat(0.5f)}, {"beta", attrFloat(2.0f)}}, 1e-4),
        // bf16 compute (passes/Bf16Compute): a classifier head (bias row into the write-back),
        // transB, alpha / beta / a full C after the product, no C.
        testCase("bf16c_fc_transB", {T({3, 300}), W({90, 300}), W({90})}, {Bf16c, {"transB", attrInt(1)}}),
        testCase("bf16c_alpha_beta", {T({13, 70}), W({70, 45}), T({13, 45})},
                 {Bf16c, {"alpha", attrFloat(0.5f)}, {"beta", attrFloat(2.0f)}}),
        testCase("bf16c_no_c", {T({1, 33}), W({33, 40})}, {Bf16c}),
    };
  };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(Gemm, gemmSchema());
OPT_REGISTER_KERNELS(Gemm, gemmKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
