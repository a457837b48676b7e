// RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim (default: all) features of
// each head by the angles of cos_cache / sin_cache, picked by position_ids [B, S] from caches
// [max position, R/2], or read directly from caches [B, S, R/2]. 4-D input [B, H, S, D] or 3-D
// [B, S, H * D] with num_heads; halves (x[i], x[i + R/2]) or interleaved pairs (x[2i], x[2i+1]).
// f32, f16, bf16 computed in float32; rows split over the pool.
#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct RotaryAttrs {
  bool Interleaved = false;
  int64_t RotaryDim = 0; ///< 0 = the head size
  int64_t NumHeads = 0;  ///< 0 = not given
};

Result<RotaryAttrs> parseRotaryAttrs(const Node &N) {
  RotaryAttrs A;
  ASSIGN_OR_RETURN(const int64_t Interleaved, N.getInt("interleaved", 0));
  if (Interleaved != 0 && Interleaved != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'interleaved' value ", Interleaved, " is not 0 or 1");
  A.Interleaved = Interleaved == 1;
  ASSIGN_OR_RETURN(A.RotaryDim, N.getInt("rotary_embedding_dim", 0));
  if (A.RotaryDim < 0 || A.RotaryDim % 2 != 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'rotary_embedding_dim' value ", A.RotaryDim,
                     " is not a non-negative even number");
  ASSIGN_OR_RETURN(A.NumHeads, N.getInt("num_heads", 0));
  if (A.NumHeads < 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'num_heads' value ", A.NumHeads, " is negative");
  return A;
}

bool dimsDiffer(const Expr &A, const Expr &B) { return A.isConst() && B.isConst() && A.value() != B.value(); }

Status inferRotary(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32, ElementType::F16, ElementType::BF16}));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
  ASSIGN_OR_RETURN(const RotaryAttrs A, parseRotaryAttrs(Ctx.N));
  const TensorShape &X = Ctx.Inputs[0].Shape, &Cos = Ctx.Inputs[1].Shape, &Sin = Ctx.Inputs[2].Shape;
  if (X.getRank() != 3 && X.getRank() != 4)
    return Ctx.error(ErrorCode::Shape, "input ", X.toString(), " is not 3-D [B, S, hidden] or 4-D [B, H, S, D]");
  Expr Head, Batch = X[0], Seq = X.getRank() == 4 ? X[2] : X[1];
  if (X.getRank() == 3) {
    if (!A.NumHeads)
      return Ctx.error(ErrorCode::Model, "a 3-D input needs the attribute 'num_heads'");
    if (X[2].isConst() && X[2].value() % A.NumHeads != 0)
      return Ctx.error(ErrorCode::Shape, "hidden size ", X[2].value(), " is not a multiple of num_heads ", A.NumHeads);
    Head = X[2] / Expr(A.NumHeads);
  } else {
    Head = X[3];
  }
  if (Head.isConst() && A.RotaryDim > Head.value())
    return Ctx.error(ErrorCode::Model, "attribute 'rotary_embedding_dim' value ", A.RotaryDim,
                     " exceeds the head size ", Head.value());
  if (Head.isConst() && !A.RotaryDim && Head.value() % 2 != 0)
    return Ctx.error(ErrorCode::Shape, "head size ", Head.value(), " is odd");
  const Expr Half = A.RotaryDim ? Expr(A.RotaryDim / 2) : Head / Expr(2);
  const bool Pos = Ctx.hasInput(3);
  const size_t CacheRank = Pos ? 2 : 3;
  const auto cacheOk = [&](const TensorShape &S) {
    if (S.getRank() != CacheRank || dimsDiffer(S[CacheRank - 1], Half))
      return false;
    return Pos || (!dimsDiffer(S[0], Batch) && !dimsDiffer(S[1], Seq));
  };
  if (!cacheOk(Cos) || !cacheOk(Sin) || Cos != Sin)
    return Ctx.error(ErrorCode::Shape, "cos_cache ", Cos.toString(), " / sin_cache ", Sin.toString(), " are not ",
                     Pos ? "[max position, " : "[batch, seq, ", Half.toString(), "] for input ", X.toString());
  if (Pos) {
    RETURN_IF_ERROR(requireInputType(Ctx, 3, {ElementType::I64}));
    const TensorShape &P = Ctx.Inputs[3].Shape;
    if (P.getRank() != 2 || dimsDiffer(P[0], Batch) || dimsDiffer(P[1], Seq))
      return Ctx.error(ErrorCode::Shape, "position_ids ", P.toString(), " is not [batch, seq] for input ", X.toString());
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = X;
  return Status::ok();
}

OpSchema rotarySchema() {
  OpSchema S;
  S.OpType = "RotaryEmbedding";
  S.MinInputs = 3;
  S.MaxInputs = 4;
  S.Infer = inferRotary;
  return S;
}

template <typename T> Status runRotary(const RotaryAttrs &A, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &CosV = Ctx.Inputs[1], &SinV = Ctx.Inputs[2], &Y = Ctx.Outputs[0];
  const bool FourD = X.rank() == 4;
  const int64_t B = X.Dims[0], H = FourD ? X.Dims[1] : A.NumHeads, S = FourD ? X.Dims[2] : X.Dims[1];
  const int64_t D = FourD ? X.Dims[3] : X.Dims[2] / H;
  const int64_t R = A.RotaryDim ? A.RotaryDim : D, Half = R / 2;
  const bool Pos = hasRunInput(Ctx, 3);
  const int64_t MaxPos = Pos ? CosV.Dims[0] : 0;
  if (Pos)
    for (size_t I = 0; I < static_cast<size_t>(B * S); ++I) {
      const int64_t P = Ctx.Inputs[3].data<const int64_t>()[I];
      if (P < 0 || P >= MaxPos)
        return runError("rotary_embedding", "position_ids[", I, "] = ", P, " is outside the caches' [0, ", MaxPos, ")");
    }
  const T *In = X.data<const T>(), *Cos = CosV.data<const T>(), *Sin = SinV.data<const T>();
  T *Out = Y.data<T>();
  forRangeMaybe(Ctx, Par, static_cast<size_t>(B * S * H), std::max<int64_t>(1, 2048 / std::max<int64_t>(1, D)),
                [&](size_t Lo, size_t Hi) {
                  for (size_t Row = Lo; Row < Hi; ++Row) {
                    // Row = (b, s, h); element offset of the head's features in either layout.
                    const int64_t Bb = static_cast<int64_t>(Row) / (S * H), Ss = static_cast<int64_t>(Row) / H % S,
                                  Hh = static_cast<int64_t>(Row) % H;
                    const int64_t Off = FourD ? ((Bb * H + Hh) * S + Ss) * D : ((Bb * S + Ss) * H + Hh) * D;
                    const int64_t CacheRow = Pos ? Ctx.Inputs[3].data<const int64_t>()[Bb * S + Ss] : Bb * S + Ss;
                    const T *C = Cos + CacheRow * Half, *Sn = Sin + CacheRow * Half;
                    const T *Xr = In + Off;
                    T *Yr = Out + Off;
                    for (int64_t I = 0; I < Half; ++I) {
                      const int64_t I1 = A.Interleaved ? 2 * I : I, I2 = A.Interleaved ? 2 * I + 1 : I + Half;
                      const float X1 = static_cast<float>(Xr[I1]), X2 = static_cast<float>(Xr[I2]);
                      const float Cf = static_cast<float>(C[I]), Sf = static_cast<float>(Sn[I]);
                      Yr[I1] = static_cast<T>(Cf * X1 - Sf * X2);
                      Yr[I2] = static_cast<T>(Sf * X1 + Cf * X2);
                    }
                    for (int64_t I = R; I < D; ++I)
                      Yr[I] = Xr[I];
                  }
                });
  return Status::ok();
}

template <typename T> void addRotaryVariants(OpKernels &K) {
  const ElementType ET = ElementTypeOf<T>::value;
  for (bool Par : {false, true})
    K.Variants.push_back({std::string(toString(ET)) + "_rotary_embedding__" + (Par ? "parallel" : "ref"), Par ? 10 : 0,
                          [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); },
                          [Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                            ASSIGN_OR_RETURN(const RotaryAttrs A, parseRotaryAttrs(I.N));
                            return makeKernel<FunctionKernel>(
                                [A, Par](const KernelContext &C) { return runRotary<T>(A, C, Par); });
                          }});
}

std::vector<OpTestCase> rotaryCases() {
  const auto X = [](std::vector<int64_t> D, ElementType T = ElementType::F32) { return tensorInput(std::move(D), T); };
  const auto pos = [](std::vector<int64_t> D) {
    return valuesInput(std::move(D), {0, 3, 7, 1, 9, 2, 5}, ElementType::I64, false);
  };
  const auto I = [](int64_t V) { return attrInt(V); };
  return {
      withOpset(testCase("4d_positions", {X({2, 4, 3, 8}), X({10, 4}), X({10, 4}), pos({2, 3})}), 23),
      withOpset(testCase("3d_interleaved_partial", {X({2, 3, 24}), X({10, 2}), X({10, 2}), pos({2, 3})},
                         {{"num_heads", I(3)}, {"interleaved", I(1)}, {"rotary_embedding_dim", I(4)}}),
                23),
      withOpset(testCase("no_positions", {X({2, 2, 5, 6}), X({2, 5, 3}), X({2, 5, 3})}), 23),
      withOpset(testCase("many_rows", {X({2, 8, 64, 32}), X({2, 64, 16}), X({2, 64, 16})}, {{"interleaved", I(1)}}),
                23),
      withOpset(testCase("f16", {X({1, 2, 3, 4}, ElementType::F16), X({1, 3, 2}, ElementType::F16),
                                 X({1, 3, 2}, ElementType::F16)}),
                23),
      withOpset(testCase("bf16", {X({1, 2, 3, 4}, ElementType::BF16), X({1, 3, 2}, ElementType::BF16),
                                  X({1, 3, 2}, ElementType::BF16)}),
                23),
  };
}

OpKernels rotaryKernels() {
  OpKernels K;
  K.OpType = "RotaryEmbedding";
  addRotaryVariants<float>(K);
  addRotaryVariants<float16>(K);
  addRotaryVariants<bfloat16>(K);
  K.TestCases = rotaryCases;
  return K;
}

OPT_REGISTER_SCHEMA(RotaryEmbedding, rotarySchema());
OPT_REGISTER_KERNELS(RotaryEmbedding, rotaryKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
