// Attention (opsets 23-25): softmax(Q K^T * scale + bias) V over 3-D ([batch, seq, heads * head])
// or 4-D ([batch, heads, seq, head]) inputs, with grouped KV heads (GQA), a bool or float mask,
// causal and sliding-window masks, a past KV cache (present outputs), per-batch nonpad KV lengths,
// softcap and the optional qk_matmul_output. f32, f16 and bf16 computed in float32; the 16-bit
// types round where ONNX's reference rounds (scaled Q/K, the QK product, softcap, bias, softmax
// steps) so both agree to an ulp or two. The fast kernel runs per (batch, q head, query block)
// on the pool: one GEMM for the block's scores, the row pipeline, one GEMM for P V.
#include <cmath>
#include <functional>
#include <limits>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/KvStream.h"
#include "backends/native/ops/common/MathApprox.h"
#include "backends/native/ops/common/NormCommon.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

enum AttentionInput { InQ, InK, InV, InMask, InPastKey, InPastValue, InNonpad };
enum AttentionOutput { OutY, OutPresentKey, OutPresentValue, OutQk };

constexpr float NegInf = -std::numeric_limits<float>::infinity();

struct AttentionAttrs {
  bool Causal = false;
  int64_t QHeads = 0, KvHeads = 0; ///< 0 = attribute not given
  int64_t Mode = 0;                ///< qk_matmul_output_mode
  bool HasScale = false;
  float Scale = 0;
  float Softcap = 0;
  int64_t SoftmaxPrecision = 0; ///< ONNX TensorProto type, 0 = the input type
  int64_t LeftWindow = -1, RightWindow = -1;
  /// A row whose keys are all masked gives NaN (as Softmax over -inf does) instead of zeros: set
  /// on the nodes passes/FuseAttention makes of op-by-op attention.
  bool MaskedRowsNaN = false;
};

Status attrError(const Node &N, const char *Attr, const std::string &Value, const char *Why) {
  return makeError(ErrorCode::Model, N.describe(), ": attribute '", Attr, "' value ", Value, " ", Why);
}

Result<AttentionAttrs> parseAttentionAttrs(const Node &N) {
  AttentionAttrs A;
  ASSIGN_OR_RETURN(const int64_t Causal, N.getInt("is_causal", 0));
  if (Causal != 0 && Causal != 1)
    return attrError(N, "is_causal", std::to_string(Causal), "is not 0 or 1");
  A.Causal = Causal == 1;
  ASSIGN_OR_RETURN(A.QHeads, N.getInt("q_num_heads", 0));
  ASSIGN_OR_RETURN(A.KvHeads, N.getInt("kv_num_heads", 0));
  if (N.hasAttr("q_num_heads") && A.QHeads <= 0)
    return attrError(N, "q_num_heads", std::to_string(A.QHeads), "must be positive");
  if (N.hasAttr("kv_num_heads") && A.KvHeads <= 0)
    return attrError(N, "kv_num_heads", std::to_string(A.KvHeads), "must be positive");
  ASSIGN_OR_RETURN(A.Mode, N.getInt("qk_matmul_output_mode", 0));
  if (A.Mode < 0 || A.Mode > 3)
    return attrError(N, "qk_matmul_output_mode", std::to_string(A.Mode), "is not in [0, 3]");
  A.HasScale = N.hasAttr("scale");
  ASSIGN_OR_RETURN(A.Scale, N.getFloat("scale", 1.0f));
  if (A.HasScale && !(A.Scale > 0 && std::isfinite(A.Scale)))
    return attrError(N, "scale", std::to_string(A.Scale), "must be positive and finite");
  ASSIGN_OR_RETURN(A.Softcap, N.getFloat("softcap", 0.0f));
  if (!(A.Softcap >= 0 && std::isfinite(A.Softcap)))
    return attrError(N, "softcap", std::to_string(A.Softcap), "must be >= 0 and finite");
  ASSIGN_OR_RETURN(A.SoftmaxPrecision, N.getInt("softmax_precision", 0));
  // FLOAT, FLOAT16, DOUBLE, BFLOAT16.
  if (N.hasAttr("softmax_precision") && A.SoftmaxPrecision != 1 && A.SoftmaxPrecision != 10 &&
      A.SoftmaxPrecision != 11 && A.SoftmaxPrecision != 16)
    return attrError(N, "softmax_precision", std::to_string(A.SoftmaxPrecision),
                     "is not a floating-point type (1, 10, 11 or 16)");
  ASSIGN_OR_RETURN(const int64_t MaskedNaN, N.getInt(kAttentionMaskedRowsNaN, 0));
  A.MaskedRowsNaN = MaskedNaN != 0;
  ASSIGN_OR_RETURN(A.LeftWindow, N.getInt("left_window_size", -1));
  ASSIGN_OR_RETURN(A.RightWindow, N.getInt("right_window_size", -1));
  if (A.LeftWindow < -1)
    return attrError(N, "left_window_size", std::to_string(A.LeftWindow), "must be -1 or >= 0");
  if (A.RightWindow < -1)
    return attrError(N, "right_window_size", std::to_string(A.RightWindow), "must be -1 or >= 0");
  return A;
}

bool dimsConflict(const Expr &A, const Expr &B) { return A.isConst() && B.isConst() && A.value() != B.value(); }

/// Heads and sizes of one node, as expressions (inference) or values (kernels).
template <typename D> struct AttentionDims {
  D Batch, QHeads, KvHeads, QLen, KvLen, PastLen, TotalLen, HeadSize, VHeadSize;
  bool ThreeD = false;
};

Status inferAttention(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, InQ, {ElementType::F32, ElementType::F16, ElementType::BF16}));
  RETURN_IF_ERROR(requireSameType(Ctx, InQ, InK));
  RETURN_IF_ERROR(requireSameType(Ctx, InQ, InV));
  ASSIGN_OR_RETURN(const AttentionAttrs A, parseAttentionAttrs(Ctx.N));
  const TensorShape &Q = Ctx.Inputs[InQ].Shape, &K = Ctx.Inputs[InK].Shape, &V = Ctx.Inputs[InV].Shape;
  const size_t Rank = Q.getRank();
  if ((Rank != 3 && Rank != 4) || K.getRank() != Rank || V.getRank() != Rank)
    return Ctx.error(ErrorCode::Shape, "Q, K and V must all be 3-D or all 4-D, got Q ", Q.toString(), ", K ",
                     K.toString(), ", V ", V.toString());
  const auto mismatch = [&](const char *What) {
    return Ctx.error(ErrorCode::Shape, What, " differ: Q ", Q.toString(), ", K ", K.toString(), ", V ", V.toString());
  };
  if (dimsConflict(Q[0], K[0]) || dimsConflict(Q[0], V[0]))
    return mismatch("batch sizes");
  AttentionDims<Expr> G;
  G.Batch = Q[0];
  G.ThreeD = Rank == 3;
  if (G.ThreeD) {
    if (!A.QHeads || !A.KvHeads)
      return Ctx.error(ErrorCode::Model, "3-D inputs need the attributes 'q_num_heads' and 'kv_num_heads'");
    G.QHeads = A.QHeads;
    G.KvHeads = A.KvHeads;
    const auto divisible = [&](const Expr &Hidden, int64_t Heads, const char *Name) -> Status {
      if (Hidden.isConst() && Hidden.value() % Heads != 0)
        return Ctx.error(ErrorCode::Shape, Name, " hidden size ", Hidden.value(), " is not a multiple of ", Heads,
                         " heads");
      return Status::ok();
    };
    RETURN_IF_ERROR(divisible(Q[2], A.QHeads, "Q"));
    RETURN_IF_ERROR(divisible(K[2], A.KvHeads, "K"));
    RETURN_IF_ERROR(divisible(V[2], A.KvHeads, "V"));
    G.QLen = Q[1];
    G.KvLen = K[1];
    G.HeadSize = Q[2] / Expr(A.QHeads);
    G.VHeadSize = V[2] / Expr(A.KvHeads);
    if (dimsConflict(K[1], V[1]))
      return mismatch("K and V sequence lengths");
    if (dimsConflict(K[2] / Expr(A.KvHeads), G.HeadSize))
      return mismatch("Q and K head sizes");
  } else {
    G.QHeads = Q[1];
    G.KvHeads = K[1];
    G.QLen = Q[2];
    G.KvLen = K[2];
    G.HeadSize = Q[3];
    G.VHeadSize = V[3];
    if (dimsConflict(K[1], V[1]))
      return mismatch("K and V head counts");
    if (dimsConflict(K[2], V[2]))
      return mismatch("K and V sequence lengths");
    if (dimsConflict(Q[3], K[3]))
      return mismatch("Q and K head sizes");
    if ((A.QHeads && dimsConflict(Q[1], Expr(A.QHeads))) || (A.KvHeads && dimsConflict(K[1], Expr(A.KvHeads))))
      return Ctx.error(ErrorCode::Shape, "attributes 'q_num_heads' ", A.QHeads, " / 'kv_num_heads' ", A.KvHeads,
                       " contradict the 4-D inputs Q ", Q.toString(), ", K ", K.toString());
  }
  if (G.QHeads.isConst() && G.KvHeads.isConst() && G.QHeads.value() % G.KvHeads.value() != 0)
    return Ctx.error(ErrorCode::Shape, "q heads ", G.QHeads.value(), " are not a multiple of kv heads ",
                     G.KvHeads.value());

  const bool PastK = Ctx.hasInput(InPastKey), PastV = Ctx.hasInput(InPastValue);
  if (PastK != PastV)
    return Ctx.error(ErrorCode::Model, "past_key and past_value must be given together");
  G.PastLen = Expr(0);
  if (PastK) {
    RETURN_IF_ERROR(requireSameType(Ctx, InQ, InPastKey));
    RETURN_IF_ERROR(requireSameType(Ctx, InQ, InPastValue));
    const TensorShape &PK = Ctx.Inputs[InPastKey].Shape, &PV = Ctx.Inputs[InPastValue].Shape;
    if (PK.getRank() != 4 || PV.getRank() != 4 || dimsConflict(PK[0], G.Batch) || dimsConflict(PV[0], G.Batch) ||
        dimsConflict(PK[1], G.KvHeads) || dimsConflict(PV[1], G.KvHeads) || dimsConflict(PK[2], PV[2]) ||
        dimsConflict(PK[3], G.HeadSize) || dimsConflict(PV[3], G.VHeadSize))
      return Ctx.error(ErrorCode::Shape, "past_key ", PK.toString(), " / past_value ", PV.toString(),
                       " do not match [batch, kv heads, past, head size] of K ", K.toString(), " and V ",
                       V.toString());
    G.PastLen = PK[2];
  }
  G.TotalLen = G.PastLen + G.KvLen;
  if (Ctx.hasInput(InNonpad)) {
    if (PastK)
      return Ctx.error(ErrorCode::Model, "nonpad_kv_seqlen cannot be combined with past_key/past_value");
    RETURN_IF_ERROR(requireInputType(Ctx, InNonpad, {ElementType::I64}));
    const TensorShape &NP = Ctx.Inputs[InNonpad].Shape;
    if (NP.getRank() != 1 || dimsConflict(NP[0], G.Batch))
      return Ctx.error(ErrorCode::Shape, "nonpad_kv_seqlen ", NP.toString(), " is not [batch] for Q ", Q.toString());
  }
  if (Ctx.hasInput(InMask)) {
    const ElementType MT = Ctx.Inputs[InMask].Type;
    if (MT != ElementType::Bool && MT != Ctx.Inputs[InQ].Type)
      return Ctx.error(ErrorCode::Type, "attn_mask has element type ", toString(MT), ", expected bool or ",
                       toString(Ctx.Inputs[InQ].Type));
    const TensorShape &M = Ctx.Inputs[InMask].Shape;
    // Right-aligned against [batch, q heads, q len, total len]; a shorter last dim is padded.
    const Expr Target[4] = {G.Batch, G.QHeads, G.QLen, G.TotalLen};
    bool Ok = M.getRank() >= 1 && M.getRank() <= 4;
    for (size_t I = 0; Ok && I < M.getRank(); ++I) {
      const Expr &D = M[M.getRank() - 1 - I], &T = Target[3 - I];
      if (I == 0)
        Ok = !(D.isConst() && T.isConst() && D.value() > T.value());
      else
        Ok = !(D.isConst() && D.value() != 1 && dimsConflict(D, T));
    }
    if (!Ok)
      return Ctx.error(ErrorCode::Shape, "attn_mask ", M.toString(), " does not broadcast to ",
                       TensorShape(std::vector<Expr>(Target, Target + 4)).toString());
  }

  const ElementType T = Ctx.Inputs[InQ].Type;
  for (ValueInfo &O : Ctx.Outputs)
    O.Type = T;
  if (G.ThreeD)
    Ctx.Outputs[OutY].Shape = TensorShape{G.Batch, G.QLen, G.QHeads * G.VHeadSize};
  else
    Ctx.Outputs[OutY].Shape = TensorShape{G.Batch, G.QHeads, G.QLen, G.VHeadSize};
  if (Ctx.Outputs.size() > OutPresentKey)
    Ctx.Outputs[OutPresentKey].Shape = TensorShape{G.Batch, G.KvHeads, G.TotalLen, G.HeadSize};
  if (Ctx.Outputs.size() > OutPresentValue)
    Ctx.Outputs[OutPresentValue].Shape = TensorShape{G.Batch, G.KvHeads, G.TotalLen, G.VHeadSize};
  if (Ctx.Outputs.size() > OutQk)
    Ctx.Outputs[OutQk].Shape = TensorShape{G.Batch, G.QHeads, G.QLen, G.TotalLen};
  return Status::ok();
}

OpSchema attentionSchema() {
  OpSchema S;
  S.OpType = "Attention";
  S.MinInputs = 3;
  S.MaxInputs = 7;
  S.MinOutputs = 1;
  S.MaxOutputs = 4;
  S.Infer = inferAttention;
  return S;
}

// --- kernels ---------------------------------------------------------------------------------------

/// Rounding to the precision a value is held in: none (float32/64), float16 or bfloat16.
enum class Precision { Float, Half, BHalf };

inline float roundTo(Precision P, float X) {
  switch (P) {
  case Precision::Half: return static_cast<float>(float16(X));
  case Precision::BHalf: return static_cast<float>(bfloat16(X));
  default: return X;
  }
}

Precision precisionOf(ElementType T) {
  return T == ElementType::F16 ? Precision::Half : T == ElementType::BF16 ? Precision::BHalf : Precision::Float;
}

Precision precisionOfOnnxType(int64_t T, Precision Default) {
  switch (T) {
  case 10: return Precision::Half;
  case 16: return Precision::BHalf;
  case 1:
  case 11: return Precision::Float;
  default: return Default;
  }
}

inline float loadAs(const TensorView &V, size_t I) {
  switch (V.Type) {
  case ElementType::F16: return static_cast<float>(V.data<const float16>()[I]);
  case ElementType::BF16: return static_cast<float>(V.data<const bfloat16>()[I]);
  default: return V.data<const float>()[I];
  }
}

inline void storeAs(const TensorView &V, size_t I, float X) {
  switch (V.Type) {
  case ElementType::F16: V.data<float16>()[I] = float16(X); break;
  case ElementType::BF16: V.data<bfloat16>()[I] = bfloat16(X); break;
  default: V.data<float>()[I] = X; break;
  }
}

/// Everything a run needs, resolved from the views: sizes, layouts, and the mask's strides.
struct AttentionRun {
  AttentionDims<int64_t> G;
  int64_t Group = 1; ///< q heads per kv head
  Precision TypeP = Precision::Float, SoftmaxP = Precision::Float;
  float ScaleSqrt = 1; ///< applied to Q and to K, rounded to the input type (as the reference does)
  // Mask: present, bool, its last dim, and element strides per [batch, head, query] (0 = broadcast).
  bool HasMask = false, BoolMask = false;
  int64_t MaskLen = 0, MaskStride[3] = {0, 0, 0};
  const int64_t *Nonpad = nullptr;

  /// Offset of row (b, h, s) of a head-major tensor of head size Dh: 4-D [B, H, S, Dh] or 3-D [B, S, H * Dh].
  int64_t rowOffset(int64_t B, int64_t H, int64_t Heads, int64_t S, int64_t Len, int64_t Dh) const {
    return G.ThreeD ? ((B * Len + S) * Heads + H) * Dh : ((B * Heads + H) * Len + S) * Dh;
  }
  /// Causal / window frontier of batch b: query i sits at key position i + offset.
  int64_t offset(int64_t B) const { return G.PastLen ? G.PastLen : Nonpad ? Nonpad[B] - G.QLen : 0; }
};

Result<AttentionRun> resolveRun(const AttentionAttrs &A, const KernelContext &Ctx) {
  const TensorView &Q = Ctx.Inputs[InQ], &K = Ctx.Inputs[InK], &V = Ctx.Inputs[InV];
  AttentionRun R;
  AttentionDims<int64_t> &G = R.G;
  G.ThreeD = Q.rank() == 3;
  if (Q.rank() != K.rank() || Q.rank() != V.rank() || (Q.rank() != 3 && Q.rank() != 4))
    return runError("attention", "Q ", joinInts(Q.Dims), ", K ", joinInts(K.Dims), ", V ", joinInts(V.Dims),
                    " are not all 3-D or all 4-D");
  G.Batch = Q.Dims[0];
  if (G.ThreeD) {
    G.QHeads = A.QHeads, G.KvHeads = A.KvHeads;
    G.QLen = Q.Dims[1], G.KvLen = K.Dims[1];
    G.HeadSize = Q.Dims[2] / G.QHeads, G.VHeadSize = V.Dims[2] / G.KvHeads;
  } else {
    G.QHeads = Q.Dims[1], G.KvHeads = K.Dims[1];
    G.QLen = Q.Dims[2], G.KvLen = K.Dims[2];
    G.HeadSize = Q.Dims[3], G.VHeadSize = V.Dims[3];
  }
  const bool HasPast = hasRunInput(Ctx, InPastKey) && hasRunInput(Ctx, InPastValue);
  G.PastLen = HasPast ? Ctx.Inputs[InPastKey].Dims[2] : 0;
  G.TotalLen = G.PastLen + G.KvLen;
  if (G.KvHeads <= 0 || G.QHeads % G.KvHeads != 0)
    return runError("attention", "q heads ", G.QHeads, " are not a multiple of kv heads ", G.KvHeads);
  R.Group = G.QHeads / G.KvHeads;
  const std::vector<int64_t> YDims =
      G.ThreeD ? std::vector<int64_t>{G.Batch, G.QLen, G.QHeads * G.VHeadSize}
               : std::vector<int64_t>{G.Batch, G.QHeads, G.QLen, G.VHeadSize};
  if (Ctx.Outputs[OutY].Dims != YDims)
    return runError("attention", "output Y ", joinInts(Ctx.Outputs[OutY].Dims), " is not ", joinInts(YDims));
  // The cache (shapes may be symbolic at load): [batch, kv heads, past, head size], and the present
  // outputs [batch, kv heads, past + new, head size].
  for (int Which = 0; Which < 2; ++Which) {
    const int64_t Dh = Which ? G.VHeadSize : G.HeadSize;
    const std::vector<int64_t> Past{G.Batch, G.KvHeads, G.PastLen, Dh}, Present{G.Batch, G.KvHeads, G.TotalLen, Dh};
    const size_t In = Which ? InPastValue : InPastKey, Out = Which ? OutPresentValue : OutPresentKey;
    if (HasPast && Ctx.Inputs[In].Dims != Past)
      return runError("attention", Which ? "past_value " : "past_key ", joinInts(Ctx.Inputs[In].Dims), " is not ",
                      joinInts(Past));
    if (hasRunOutput(Ctx, Out) && Ctx.Outputs[Out].Dims != Present)
      return runError("attention", Which ? "present_value " : "present_key ", joinInts(Ctx.Outputs[Out].Dims),
                      " is not ", joinInts(Present));
  }
  R.TypeP = precisionOf(Q.Type);
  R.SoftmaxP = precisionOfOnnxType(A.SoftmaxPrecision, R.TypeP);
  const double Scale = A.HasScale ? A.Scale : 1.0 / std::sqrt(static_cast<double>(G.HeadSize));
  R.ScaleSqrt = roundTo(R.TypeP, static_cast<float>(std::sqrt(Scale)));
  if (hasRunInput(Ctx, InMask)) {
    const TensorView &M = Ctx.Inputs[InMask];
    R.HasMask = true;
    R.BoolMask = M.Type == ElementType::Bool;
    R.MaskLen = M.Dims.back();
    const int64_t Target[3] = {G.Batch, G.QHeads, G.QLen};
    int64_t Stride = R.MaskLen;
    for (size_t I = 1; I < M.rank() && I < 4; ++I) {
      const int64_t D = M.Dims[M.rank() - 1 - I];
      if (D != 1 && D != Target[3 - I])
        return runError("attention", "attn_mask ", joinInts(M.Dims), " does not broadcast to queries ",
                        joinInts(std::vector<int64_t>(Target, Target + 3)));
      R.MaskStride[3 - I] = D == 1 ? 0 : Stride;
      Stride *= D;
    }
    if (R.MaskLen > G.TotalLen)
      return runError("attention", "attn_mask ", joinInts(M.Dims), " is longer than the ", G.TotalLen, " keys");
  }
  if (hasRunInput(Ctx, InNonpad)) {
    R.Nonpad = Ctx.Inputs[InNonpad].data<const int64_t>();
    for (int64_t B = 0; B < G.Batch; ++B)
      if (R.Nonpad[B] < 0 || R.Nonpad[B] > G.TotalLen)
        return runError("attention", "nonpad_kv_seqlen[", B, "] = ", R.Nonpad[B], " is outside [0, ", G.TotalLen,
                        "]");
  }
  return R;
}

/// The additive bias of query row (b, h, i) over all keys (mask, causal, window, padding).
/// Returns false when every key is masked (the row's probabilities are then all zero).
bool biasRow(const AttentionAttrs &A, const AttentionRun &R, const KernelContext &Ctx, int64_t B, int64_t H,
             int64_t I, float *Bias) {
  const int64_t T = R.G.TotalLen;
  if (R.HasMask) {
    const TensorView &M = Ctx.Inputs[InMask];
    const size_t Base = static_cast<size_t>(B * R.MaskStride[0] + H * R.MaskStride[1] + I * R.MaskStride[2]);
    for (int64_t J = 0; J < R.MaskLen; ++J)
      Bias[J] = R.BoolMask ? (M.data<const uint8_t>()[Base + J] ? 0.0f : NegInf) : loadAs(M, Base + J);
    for (int64_t J = R.MaskLen; J < T; ++J)
      Bias[J] = NegInf;
  } else {
    std::fill(Bias, Bias + T, 0.0f);
  }
  const bool Window = A.LeftWindow >= 0 || A.RightWindow >= 0;
  if (A.Causal || Window) {
    const int64_t Pos = I + R.offset(B);
    for (int64_t J = 0; J < T; ++J) {
      const int64_t Diff = Pos - J;
      const bool Allowed = (!A.Causal || Diff >= 0) && (A.LeftWindow < 0 || Diff <= A.LeftWindow) &&
                           (A.RightWindow < 0 || -Diff <= A.RightWindow);
      if (!Allowed)
        Bias[J] = NegInf;
    }
  }
  if (R.Nonpad)
    for (int64_t J = std::max<int64_t>(0, R.Nonpad[B]); J < T; ++J)
      Bias[J] = NegInf;
  for (int64_t J = 0; J < T; ++J)
    if (Bias[J] != NegInf)
      return true;
  return false;
}

/// Scores (the rounded QK product of one row, N keys) -> probabilities rounded to the input type,
/// writing qk_matmul_output (when QkRow is non-null, a float row stored later) at the requested stage.
void finishRow(const AttentionAttrs &A, const AttentionRun &R, int64_t N, float *X, const float *Bias,
               bool AnyAllowed, float *QkRow, bool FastExp) {
  const Precision TP = R.TypeP, SP = R.SoftmaxP;
  if (QkRow && A.Mode == 0)
    std::copy(X, X + N, QkRow);
  if (A.Softcap > 0) {
    const float C = roundTo(TP, A.Softcap);
    for (int64_t J = 0; J < N; ++J)
      X[J] = roundTo(TP, roundTo(TP, std::tanh(roundTo(TP, X[J] / C))) * C);
  }
  if (QkRow && A.Mode == 1)
    std::copy(X, X + N, QkRow);
  for (int64_t J = 0; J < N; ++J)
    X[J] = roundTo(TP, X[J] + Bias[J]);
  if (QkRow && A.Mode == 2)
    std::copy(X, X + N, QkRow);
  if (!AnyAllowed) {
    std::fill(X, X + N, A.MaskedRowsNaN ? std::numeric_limits<float>::quiet_NaN() : 0.0f);
  } else {
    // Softmax in the softmax precision; a row of -inf gives zeros (the reference's convention).
    float Max = NegInf;
    for (int64_t J = 0; J < N; ++J)
      Max = std::max(Max, X[J] = roundTo(SP, X[J]));
    if (Max == NegInf)
      Max = 0;
    float Sum = 0;
    if (SP == Precision::Float) {
      for (int64_t J = 0; J < N; ++J)
        X[J] -= Max;
      if (FastExp) {
        approx::expF32(X, X, static_cast<size_t>(N));
      } else {
        for (int64_t J = 0; J < N; ++J)
          X[J] = std::exp(X[J]);
      }
      for (int64_t J = 0; J < N; ++J)
        Sum += X[J];
    } else {
      for (int64_t J = 0; J < N; ++J) {
        X[J] = roundTo(SP, std::exp(roundTo(SP, X[J] - Max)));
        // NumPy sums float16 in float32; ml_dtypes' bfloat16 add rounds every partial sum.
        Sum = SP == Precision::BHalf ? roundTo(SP, Sum + X[J]) : Sum + X[J];
      }
      Sum = roundTo(SP, Sum);
    }
    if (Sum == 0)
      Sum = 1;
    for (int64_t J = 0; J < N; ++J)
      X[J] = roundTo(TP, roundTo(SP, X[J] / Sum));
  }
  if (QkRow && A.Mode == 3)
    std::copy(X, X + N, QkRow);
}

/// Copies past + new K/V of every (batch, kv head) into the present outputs when requested.
void writePresent(const AttentionRun &R, const KernelContext &Ctx, int64_t B, int64_t H) {
  const AttentionDims<int64_t> &G = R.G;
  for (int Which = 0; Which < 2; ++Which) {
    const size_t Out = Which ? OutPresentValue : OutPresentKey;
    if (!hasRunOutput(Ctx, Out))
      continue;
    const TensorView &Dst = Ctx.Outputs[Out], &New = Ctx.Inputs[Which ? InV : InK];
    const int64_t Dh = Which ? G.VHeadSize : G.HeadSize;
    const size_t Elem = getElementSize(Dst.Type);
    uint8_t *D = static_cast<uint8_t *>(Dst.Data) + static_cast<size_t>((B * G.KvHeads + H) * G.TotalLen * Dh) * Elem;
    if (G.PastLen) {
      const TensorView &Past = Ctx.Inputs[Which ? InPastValue : InPastKey];
      const size_t Bytes = static_cast<size_t>(G.PastLen * Dh) * Elem;
      std::memcpy(D, static_cast<const uint8_t *>(Past.Data) + static_cast<size_t>(B * G.KvHeads + H) * Bytes, Bytes);
      D += Bytes;
    }
    for (int64_t L = 0; L < G.KvLen; ++L)
      std::memcpy(D + static_cast<size_t>(L * Dh) * Elem,
                  static_cast<const uint8_t *>(New.Data) +
                      static_cast<size_t>(R.rowOffset(B, H, G.KvHeads, L, G.KvLen, Dh)) * Elem,
                  static_cast<size_t>(Dh) * Elem);
  }
}

/// Key/value row t of (batch b, kv head h) as floats: the past cache first, then the new rows.
void loadKvRow(const AttentionRun &R, const KernelContext &Ctx, bool Value, int64_t B, int64_t H, int64_t T,
               float *Row, bool ScaleKey = true) {
  const AttentionDims<int64_t> &G = R.G;
  const int64_t Dh = Value ? G.VHeadSize : G.HeadSize;
  const TensorView *Src;
  int64_t Off;
  if (T < G.PastLen) {
    Src = &Ctx.Inputs[Value ? InPastValue : InPastKey];
    Off = ((B * G.KvHeads + H) * G.PastLen + T) * Dh;
  } else {
    Src = &Ctx.Inputs[Value ? InV : InK];
    Off = R.rowOffset(B, H, G.KvHeads, T - G.PastLen, G.KvLen, Dh);
  }
  if (Src->Type == ElementType::F32) {
    std::memcpy(Row, Src->data<const float>() + Off, static_cast<size_t>(Dh) * sizeof(float));
    if (!Value && ScaleKey)
      for (int64_t D = 0; D < Dh; ++D)
        Row[D] *= R.ScaleSqrt;
    return;
  }
  for (int64_t D = 0; D < Dh; ++D) {
    const float X = loadAs(*Src, static_cast<size_t>(Off + D));
    Row[D] = Value ? X : roundTo(R.TypeP, X * R.ScaleSqrt);
  }
}

/// Query row (b, h, s) times Scale, rounded to the input type.
void loadQRow(const AttentionRun &R, const TensorView &Q, int64_t B, int64_t H, int64_t S, float Scale, float *Row) {
  const AttentionDims<int64_t> &G = R.G;
  const int64_t Off = R.rowOffset(B, H, G.QHeads, S, G.QLen, G.HeadSize);
  if (Q.Type == ElementType::F32) {
    const float *Src = Q.data<const float>() + Off;
    for (int64_t D = 0; D < G.HeadSize; ++D)
      Row[D] = Src[D] * Scale;
    return;
  }
  for (int64_t D = 0; D < G.HeadSize; ++D)
    Row[D] = roundTo(R.TypeP, loadAs(Q, static_cast<size_t>(Off + D)) * Scale);
}

void storeRow(const TensorView &V, int64_t Off, const float *Row, int64_t N) {
  if (V.Type == ElementType::F32) {
    std::memcpy(V.data<float>() + Off, Row, static_cast<size_t>(N) * sizeof(float));
    return;
  }
  for (int64_t J = 0; J < N; ++J)
    storeAs(V, static_cast<size_t>(Off + J), Row[J]);
}

/// The reference: one query row at a time, dot products straight from the inputs.
Status runAttentionRef(const AttentionAttrs &A, const KernelContext &Ctx) {
  ASSIGN_OR_RETURN(const AttentionRun R, resolveRun(A, Ctx));
  const AttentionDims<int64_t> &G = R.G;
  const int64_t T = G.TotalLen;
  const bool WantQk = hasRunOutput(Ctx, OutQk);
  std::vector<float> QRow(G.HeadSize), KRow(G.HeadSize), VRow(G.VHeadSize), X(T), Bias(T), Qk(T), Y(G.VHeadSize);
  for (int64_t B = 0; B < G.Batch; ++B)
    for (int64_t H = 0; H < G.KvHeads; ++H)
      writePresent(R, Ctx, B, H);
  for (int64_t B = 0; B < G.Batch; ++B)
    for (int64_t H = 0; H < G.QHeads; ++H)
      for (int64_t I = 0; I < G.QLen; ++I) {
        loadQRow(R, Ctx.Inputs[InQ], B, H, I, R.ScaleSqrt, QRow.data());
        for (int64_t J = 0; J < T; ++J) {
          loadKvRow(R, Ctx, false, B, H / R.Group, J, KRow.data());
          float Dot = 0;
          for (int64_t D = 0; D < G.HeadSize; ++D)
            Dot += QRow[D] * KRow[D];
          X[J] = roundTo(R.TypeP, Dot);
        }
        const bool Any = biasRow(A, R, Ctx, B, H, I, Bias.data());
        finishRow(A, R, T, X.data(), Bias.data(), Any, WantQk ? Qk.data() : nullptr, false);
        std::fill(Y.begin(), Y.end(), 0.0f);
        for (int64_t J = 0; J < T; ++J) {
          loadKvRow(R, Ctx, true, B, H / R.Group, J, VRow.data());
          for (int64_t D = 0; D < G.VHeadSize; ++D)
            Y[D] += X[J] * VRow[D];
        }
        for (float &V : Y)
          V = roundTo(R.TypeP, V);
        storeRow(Ctx.Outputs[OutY], R.rowOffset(B, H, G.QHeads, I, G.QLen, G.VHeadSize), Y.data(), G.VHeadSize);
        if (WantQk)
          storeRow(Ctx.Outputs[OutQk], ((B * G.QHeads + H) * G.QLen + I) * T, Qk.data(), T);
      }
  return Status::ok();
}

/// Where the fast kernel reads the keys / values of (batch, kv head): float32 inputs in place (the
/// new K/V without a cache, or the present outputs with one), else float panels gathered per run.
struct KvSource {
  const float *Base = nullptr;
  int64_t RowStride = 0;
  std::function<int64_t(int64_t B, int64_t H)> HeadOffset;
  const float *head(int64_t B, int64_t H) const { return Base + HeadOffset(B, H); }
};

/// Whether runAttentionF32 handles this run: float32 without a cache, present / qk outputs,
/// softcap or a reduced softmax precision (an encoder's self-attention).
bool plainF32Run(const AttentionAttrs &A, const AttentionRun &R, const KernelContext &Ctx) {
  const bool F32 = Ctx.Inputs[InQ].Type == ElementType::F32 && Ctx.Inputs[InK].Type == ElementType::F32 &&
                   Ctx.Inputs[InV].Type == ElementType::F32;
  return F32 && R.SoftmaxP == Precision::Float && !R.G.PastLen && !hasRunInput(Ctx, InPastKey) &&
         !hasRunOutput(Ctx, OutPresentKey) && !hasRunOutput(Ctx, OutPresentValue) && !hasRunOutput(Ctx, OutQk) &&
         A.Softcap == 0 && R.G.QLen > 1;
}

/// Float32 attention without a cache, per (batch, q head, block of queries), everything read and
/// written in place: S = scale * Q K^T (+ the bias row in the GEMM's write-back when it is the same
/// for every query: a key-padding mask) into a block-sized buffer that stays in cache, the softmax
/// of each row, Y = P V straight into the output's rows. K^T and V of the head are packed once per
/// task. Blocks are the heads' whole query range unless the pool needs more tasks than heads.
Status runAttentionF32(const AttentionAttrs &A, const AttentionRun &R, const GemmMicroKernel &MK,
                       const KernelContext &Ctx) {
  const AttentionDims<int64_t> &G = R.G;
  const int64_t T = G.TotalLen, D = G.HeadSize, Dv = G.VHeadSize;
  const float *Q = Ctx.Inputs[InQ].data<const float>(), *K = Ctx.Inputs[InK].data<const float>(),
              *V = Ctx.Inputs[InV].data<const float>();
  float *Y = Ctx.Outputs[OutY].data<float>();
  const int64_t Qs = G.ThreeD ? G.QHeads * D : D, Ks = G.ThreeD ? G.KvHeads * D : D,
                Vs = G.ThreeD ? G.KvHeads * Dv : Dv, Ys = G.ThreeD ? G.QHeads * Dv : Dv;
  const float Scale = A.HasScale ? A.Scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
  const bool Window = A.LeftWindow >= 0 || A.RightWindow >= 0;
  // The bias of a row does not depend on the query: one row per task, added by the GEMM.
  const bool RowInvariant = !A.Causal && !Window && (!R.HasMask || R.MaskStride[2] == 0);
  const bool AnyBias = R.HasMask || R.Nonpad || A.Causal || Window;
  const float MaskedFill = A.MaskedRowsNaN ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
  if (G.Batch * G.QHeads * G.QLen == 0)
    return Status::ok();
  if (T == 0) { // no keys: every probability row is empty
    for (int64_t B = 0; B < G.Batch; ++B)
      for (int64_t H = 0; H < G.QHeads; ++H)
        for (int64_t I = 0; I < G.QLen; ++I)
          std::fill_n(Y + R.rowOffset(B, H, G.QHeads, I, G.QLen, Dv), Dv, 0.0f);
    return Status::ok();
  }
  // Query blocks: whole heads, split further only to give every thread two tasks, and capped so
  // a block's scores (Rows x T floats) stay within 512 KiB.
  const int64_t Heads = G.Batch * G.QHeads, Threads = std::max(1, Ctx.Par.threads());
  int64_t Blocks = Heads >= 2 * Threads ? 1 : (2 * Threads + Heads - 1) / Heads;
  Blocks = std::max(Blocks, (G.QLen * T + 131071) / 131072);
  Blocks = std::max<int64_t>(1, std::min(Blocks, (G.QLen + MK.MR - 1) / MK.MR));
  const int64_t QBlock = ((G.QLen + Blocks - 1) / Blocks + MK.MR - 1) / MK.MR * MK.MR;
  Blocks = (G.QLen + QBlock - 1) / QBlock;
  const int64_t Tpad = (T + 15) / 16 * 16;
  Ctx.Par.forRange(static_cast<size_t>(Heads * Blocks), 1, [&](size_t Lo, size_t Hi) {
    const Parallel Serial;
    PackedB KT, VP;
    AlignedFloats Scores(static_cast<size_t>(QBlock * Tpad)), Bias(static_cast<size_t>(Tpad));
    for (size_t Task = Lo; Task < Hi; ++Task) {
      const int64_t Blk = static_cast<int64_t>(Task) % Blocks, BH = static_cast<int64_t>(Task) / Blocks;
      const int64_t B = BH / G.QHeads, H = BH % G.QHeads, Hk = H / R.Group;
      const int64_t I0 = Blk * QBlock, Rows = std::min(QBlock, G.QLen - I0);
      float *Yb = Y + R.rowOffset(B, H, G.QHeads, I0, G.QLen, Dv);
      // Keys past the block's causal frontier have probability 0 in every row: not computed.
      int64_t N = T;
      if (A.Causal)
        N = std::max<int64_t>(0, std::min(T, I0 + Rows + R.offset(B)));
      bool Any = N > 0;
      if (RowInvariant && AnyBias && Any)
        Any = biasRow(A, R, Ctx, B, H, I0, Bias.data());
      if (!Any) {
        for (int64_t I = 0; I < Rows; ++I)
          std::fill_n(Yb + I * Ys, Dv, MaskedFill);
        continue;
      }
      const float *Kh = K + R.rowOffset(B, Hk, G.KvHeads, 0, G.KvLen, D);
      const float *Vh = V + R.rowOffset(B, Hk, G.KvHeads, 0, G.KvLen, Dv);
      packB(MK, D, N, MatrixRef{Kh, 1, Ks}, KT, Serial);
      packB(MK, N, Dv, MatrixRef{Vh, Vs, 1}, VP, Serial);
      GemmEpilogue Ep;
      Ep.ColBias = Bias.data();
      float *S = Scores.data();
      gemmRowsA(MK, Rows, D, Q + R.rowOffset(B, H, G.QHeads, I0, G.QLen, D), Qs, KT, Scale, 0.0f, S, Tpad, Serial,
                RowInvariant && AnyBias ? &Ep : nullptr);
      for (int64_t I = 0; I < Rows; ++I) {
        float *X = S + I * Tpad;
        if (!RowInvariant) {
          if (!biasRow(A, R, Ctx, B, H, I0 + I, Bias.data())) {
            std::fill_n(X, N, MaskedFill); // every key masked: zeros (as the reference), or NaN
            continue;
          }
          for (int64_t J = 0; J < N; ++J)
            X[J] += Bias.data()[J];
        }
        approx::softmaxF32(X, X, static_cast<size_t>(N));
      }
      gemmRowsA(MK, Rows, N, S, Tpad, VP, 1.0f, 0.0f, Yb, Ys, Serial);
    }
  });
  return Status::ok();
}

/// Whether runAttentionDecode handles this run: float32 with a past cache and both present
/// outputs (a decoder step), a few query rows per kv head, and no mask, window, softcap or qk output.
bool decodeStreamRun(const AttentionAttrs &A, const AttentionRun &R, const KernelContext &Ctx) {
  const AttentionDims<int64_t> &G = R.G;
  for (size_t I : {InQ, InK, InV, InPastKey, InPastValue})
    if (!hasRunInput(Ctx, I) || Ctx.Inputs[I].Type != ElementType::F32)
      return false;
  return hasRunOutput(Ctx, OutPresentKey) && hasRunOutput(Ctx, OutPresentValue) && !hasRunOutput(Ctx, OutQk) &&
         !R.HasMask && !R.Nonpad && (!A.Causal || G.QLen == 1) && A.LeftWindow < 0 && A.RightWindow < 0 &&
         A.Softcap == 0 && R.SoftmaxP == Precision::Float && R.TypeP == Precision::Float && G.TotalLen > 0 &&
         R.Group * G.QLen <= 16;
}

/// A decoder step, per (batch, kv head): each past and new key row is read once, written to
/// present_key and multiplied with every query row of the head's q heads in the same pass; then the
/// softmax; then each value row, written to present_value and accumulated into the outputs. The
/// present copies bypass the caches (streaming stores) from 256 KiB up: the next step reads them
/// from memory anyway. Replaces the Concat + MatMul pairs of op-by-op attention, which read
/// every cache row twice.
Status runAttentionDecode(const AttentionRun &R, const KernelContext &Ctx, bool Avx512) {
  const AttentionDims<int64_t> &G = R.G;
  const int64_t T = G.TotalLen, P = G.PastLen, D = G.HeadSize, Dv = G.VHeadSize, NQ = R.Group * G.QLen;
  const float QScale = R.ScaleSqrt * R.ScaleSqrt;
  const float *PastK = Ctx.Inputs[InPastKey].data<const float>(), *PastV = Ctx.Inputs[InPastValue].data<const float>();
  const float *NewK = Ctx.Inputs[InK].data<const float>(), *NewV = Ctx.Inputs[InV].data<const float>();
  float *PresK = Ctx.Outputs[OutPresentKey].data<float>(), *PresV = Ctx.Outputs[OutPresentValue].data<float>();
  const auto aligned = [](const float *X) { return reinterpret_cast<uintptr_t>(X) % 64 == 0; };
  const size_t PresentBytes = static_cast<size_t>(G.Batch * G.KvHeads * T * (D + Dv)) * sizeof(float);
  // Streaming stores from 256 KiB of cache up (GPT past128's 528 KB: Attention min 92-111 ->
  // 75-109 us per layer against ordinary stores, which read each line for ownership first).
  const bool Stream = PresentBytes >= (size_t{256} << 10) && aligned(PresK) && aligned(PresV);
  const int64_t KStride = G.ThreeD ? G.KvHeads * D : D, VStride = G.ThreeD ? G.KvHeads * Dv : Dv;
  Ctx.Par.forRange(static_cast<size_t>(G.Batch * G.KvHeads), 1, [&](size_t Lo, size_t Hi) {
    AlignedFloats Qb(static_cast<size_t>(NQ * D)), Scores(static_cast<size_t>(NQ * T)),
        Acc(static_cast<size_t>(NQ * Dv));
    for (size_t BH = Lo; BH < Hi; ++BH) {
      const int64_t B = static_cast<int64_t>(BH) / G.KvHeads, Hk = static_cast<int64_t>(BH) % G.KvHeads;
      // Query row r = g * QLen + s: q head Hk * Group + g, query s.
      for (int64_t Gi = 0; Gi < R.Group; ++Gi)
        for (int64_t S = 0; S < G.QLen; ++S)
          loadQRow(R, Ctx.Inputs[InQ], B, Hk * R.Group + Gi, S, QScale, Qb.data() + (Gi * G.QLen + S) * D);
      float *Kd = PresK + static_cast<int64_t>(BH) * T * D, *Vd = PresV + static_cast<int64_t>(BH) * T * Dv;
      kvCopyDot({PastK + static_cast<int64_t>(BH) * P * D, P, D}, Kd, D, Qb.data(), NQ, Scores.data(), T, Stream,
                Avx512);
      kvCopyDot({NewK + R.rowOffset(B, Hk, G.KvHeads, 0, G.KvLen, D), G.KvLen, KStride}, Kd + P * D, D, Qb.data(), NQ,
                Scores.data() + P, T, Stream, Avx512);
      for (int64_t I = 0; I < NQ; ++I)
        approx::softmaxF32(Scores.data() + I * T, Scores.data() + I * T, static_cast<size_t>(T));
      std::fill(Acc.data(), Acc.data() + NQ * Dv, 0.0f);
      kvCopyAxpy({PastV + static_cast<int64_t>(BH) * P * Dv, P, Dv}, Vd, Dv, Scores.data(), NQ, T, Acc.data(), Stream,
                 Avx512);
      kvCopyAxpy({NewV + R.rowOffset(B, Hk, G.KvHeads, 0, G.KvLen, Dv), G.KvLen, VStride}, Vd + P * Dv, Dv,
                 Scores.data() + P, NQ, T, Acc.data(), Stream, Avx512);
      for (int64_t Gi = 0; Gi < R.Group; ++Gi)
        for (int64_t S = 0; S < G.QLen; ++S)
          storeRow(Ctx.Outputs[OutY], R.rowOffset(B, Hk * R.Group + Gi, G.QHeads, S, G.QLen, Dv),
                   Acc.data() + (Gi * G.QLen + S) * Dv, Dv);
    }
    if (Stream)
      kvStreamFence();
  });
  return Status::ok();
}

/// The fast kernel, per (batch, q head, block of queries): scores = Q K^T with the blocked GEMM (a
/// dot-product loop for a single query row, the decode case), the row pipeline, Y = P V. Float32
/// K/V are read in place and Q carries the whole scale; the 16-bit types go through float panels
/// of K * sqrt(scale) rounded as the reference rounds. A causal block stops at its last visible key.
Status runAttentionFast(const AttentionAttrs &A, const GemmMicroKernel &MK, const KernelContext &Ctx) {
  ASSIGN_OR_RETURN(const AttentionRun R, resolveRun(A, Ctx));
  if (plainF32Run(A, R, Ctx))
    return runAttentionF32(A, R, MK, Ctx);
  if (decodeStreamRun(A, R, Ctx))
    return runAttentionDecode(R, Ctx, MK.Isa == GemmIsa::Avx512);
  const AttentionDims<int64_t> &G = R.G;
  const int64_t T = G.TotalLen, D = G.HeadSize, Dv = G.VHeadSize;
  const size_t KvHeadsAll = static_cast<size_t>(G.Batch * G.KvHeads);
  const bool F32 = Ctx.Inputs[InQ].Type == ElementType::F32;
  const bool Presents = hasRunOutput(Ctx, OutPresentKey) && hasRunOutput(Ctx, OutPresentValue);
  const float QScale = F32 ? R.ScaleSqrt * R.ScaleSqrt : R.ScaleSqrt;
  KvSource KSrc, VSrc;
  AlignedFloats KPanel, VPanel;
  if (F32 && !G.PastLen) {
    const int64_t Heads = G.KvHeads, L = G.KvLen;
    const AttentionRun *RP = &R;
    KSrc = {Ctx.Inputs[InK].data<const float>(), G.ThreeD ? Heads * D : D,
            [RP, Heads, L, D](int64_t B, int64_t H) { return RP->rowOffset(B, H, Heads, 0, L, D); }};
    VSrc = {Ctx.Inputs[InV].data<const float>(), G.ThreeD ? Heads * Dv : Dv,
            [RP, Heads, L, Dv](int64_t B, int64_t H) { return RP->rowOffset(B, H, Heads, 0, L, Dv); }};
  } else {
    const bool InPresent = F32 && Presents;
    if (!InPresent) {
      KPanel.resize(KvHeadsAll * static_cast<size_t>(T * D) + 1);
      VPanel.resize(KvHeadsAll * static_cast<size_t>(T * Dv) + 1);
    }
    const int64_t Heads = G.KvHeads;
    KSrc = {InPresent ? Ctx.Outputs[OutPresentKey].data<const float>() : KPanel.data(), D,
            [Heads, T, D](int64_t B, int64_t H) { return (B * Heads + H) * T * D; }};
    VSrc = {InPresent ? Ctx.Outputs[OutPresentValue].data<const float>() : VPanel.data(), Dv,
            [Heads, T, Dv](int64_t B, int64_t H) { return (B * Heads + H) * T * Dv; }};
  }
  Ctx.Par.forRange(KvHeadsAll, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, T * (D + Dv))),
                   [&](size_t Lo, size_t Hi) {
                     for (size_t BH = Lo; BH < Hi; ++BH) {
                       const int64_t B = static_cast<int64_t>(BH) / G.KvHeads, H = static_cast<int64_t>(BH) % G.KvHeads;
                       writePresent(R, Ctx, B, H);
                       if (!KPanel.size())
                         continue;
                       float *K = KPanel.data() + BH * static_cast<size_t>(T * D);
                       float *V = VPanel.data() + BH * static_cast<size_t>(T * Dv);
                       for (int64_t J = 0; J < T; ++J) {
                         loadKvRow(R, Ctx, false, B, H, J, K + J * D, !F32);
                         loadKvRow(R, Ctx, true, B, H, J, V + J * Dv);
                       }
                     }
                   });

  constexpr int64_t QBlock = 64;
  const int64_t Blocks = (G.QLen + QBlock - 1) / QBlock;
  const size_t Tasks = static_cast<size_t>(G.Batch * G.QHeads * Blocks);
  const int64_t WorkPerTask = std::min(QBlock, G.QLen) * T * (D + Dv);
  const bool WantQk = hasRunOutput(Ctx, OutQk);
  Ctx.Par.forRange(Tasks, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, WorkPerTask)), [&](size_t Lo, size_t Hi) {
    const Parallel Serial;
    std::vector<float> Qb(static_cast<size_t>(QBlock * D)), Scores(static_cast<size_t>(QBlock * T)),
        Bias(static_cast<size_t>(T)), Qk(static_cast<size_t>(WantQk ? T : 0)), Yb(static_cast<size_t>(QBlock * Dv));
    for (size_t Task = Lo; Task < Hi; ++Task) {
      const int64_t Blk = static_cast<int64_t>(Task) % Blocks, BH = static_cast<int64_t>(Task) / Blocks;
      const int64_t B = BH / G.QHeads, H = BH % G.QHeads;
      const int64_t I0 = Blk * QBlock, Rows = std::min(QBlock, G.QLen - I0);
      const float *K = KSrc.head(B, H / R.Group), *V = VSrc.head(B, H / R.Group);
      const int64_t Ks = KSrc.RowStride, Vs = VSrc.RowStride;
      // Keys past the block's causal frontier get probability 0 in every row: skip them (unless
      // qk_matmul_output wants their scores).
      int64_t N = T;
      if (A.Causal && !WantQk)
        N = std::max<int64_t>(0, std::min(T, I0 + Rows + R.offset(B)));
      for (int64_t I = 0; I < Rows; ++I)
        loadQRow(R, Ctx.Inputs[InQ], B, H, I0 + I, QScale, Qb.data() + I * D);
      if (Rows == 1) {
        for (int64_t J = 0; J < N; ++J) {
          const float *KRow = K + J * Ks;
          float Dot = 0;
          for (int64_t E = 0; E < D; ++E)
            Dot += Qb[E] * KRow[E];
          Scores[J] = Dot;
        }
      } else if (N > 0) {
        sgemm(MK, Rows, N, D, 1.0f, MatrixRef{Qb.data(), D, 1}, MatrixRef{K, 1, Ks}, 0.0f, Scores.data(), T, Serial);
      }
      for (int64_t I = 0; I < Rows; ++I) {
        float *X = Scores.data() + I * T;
        if (R.TypeP != Precision::Float)
          for (int64_t J = 0; J < N; ++J)
            X[J] = roundTo(R.TypeP, X[J]);
        const bool Any = biasRow(A, R, Ctx, B, H, I0 + I, Bias.data());
        finishRow(A, R, N, X, Bias.data(), Any, WantQk ? Qk.data() : nullptr, true);
        if (WantQk)
          storeRow(Ctx.Outputs[OutQk], ((B * G.QHeads + H) * G.QLen + I0 + I) * T, Qk.data(), T);
      }
      if (Rows == 1 || N == 0) {
        std::fill(Yb.begin(), Yb.begin() + Rows * Dv, 0.0f);
        for (int64_t J = 0; J < N; ++J) {
          const float P = Scores[J];
          const float *VRow = V + J * Vs;
          if (P != 0)
            for (int64_t E = 0; E < Dv; ++E)
              Yb[E] += P * VRow[E];
        }
      } else {
        sgemm(MK, Rows, Dv, N, 1.0f, MatrixRef{Scores.data(), T, 1}, MatrixRef{V, Vs, 1}, 0.0f, Yb.data(), Dv, Serial);
      }
      for (int64_t I = 0; I < Rows; ++I) {
        float *Y = Yb.data() + I * Dv;
        if (R.TypeP != Precision::Float)
          for (int64_t E = 0; E < Dv; ++E)
            Y[E] = roundTo(R.TypeP, Y[E]);
        storeRow(Ctx.Outputs[OutY], R.rowOffset(B, H, G.QHeads, I0 + I, G.QLen, Dv), Y, Dv);
      }
    }
  });
  return Status::ok();
}

bool attentionTypesOk(const KernelCreateInfo &I) {
  return inputIs(I, InQ, ElementType::F32) || inputIs(I, InQ, ElementType::F16) || inputIs(I, InQ, ElementType::BF16);
}

KernelVariant attentionFastVariant(GemmIsa Isa, int Priority) {
  const GemmMicroKernel &MK = gemmMicroKernel(Isa);
  return {std::string("attention__") + MK.Name, Priority,
          [Isa](const KernelCreateInfo &I) { return attentionTypesOk(I) && gemmIsaAvailable(Isa); },
          [&MK](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(const AttentionAttrs A, parseAttentionAttrs(I.N));
            return makeKernel<FunctionKernel>([A, &MK](const KernelContext &C) { return runAttentionFast(A, MK, C); });
          }};
}

std::vector<OpTestCase> attentionCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto Attr = [](int64_t V) { return attrInt(V); };
  const auto bools = [](std::vector<int64_t> D, std::vector<double> V) {
    return valuesInput(std::move(D), std::move(V), ElementType::Bool, false);
  };
  // 0, large negative and -inf entries, the first key of every row open.
  const auto keyPadding = [](int64_t Rows, int64_t Keys) {
    std::vector<double> V(static_cast<size_t>(Rows * Keys), 0.0);
    for (size_t I = 0; I < V.size(); ++I)
      if (I % static_cast<size_t>(Keys) != 0)
        V[I] = I % 5 == 1 ? -std::numeric_limits<double>::infinity() : I % 5 == 3 ? -10000.0 : 0.25 * (I % 3);
    return V;
  };
  const auto nonpad = [](std::vector<double> V) {
    const int64_t N = static_cast<int64_t>(V.size());
    return valuesInput({N}, std::move(V), ElementType::I64, false);
  };
  std::vector<OpTestCase> C = {
      withOpset(testCase("4d", {X({2, 3, 4, 8}), X({2, 3, 6, 8}), X({2, 3, 6, 8})}), 23),
      withOpset(testCase("3d_gqa_causal", {X({2, 5, 24}), X({2, 7, 8}), X({2, 7, 6})},
                         {{"q_num_heads", Attr(3)}, {"kv_num_heads", Attr(1)}, {"is_causal", Attr(1)}}),
                23),
      withOpset(testCase("float_mask_softcap_scale", {X({1, 2, 3, 4}), X({1, 2, 5, 4}), X({1, 2, 5, 3}), X({3, 5})},
                         {{"softcap", attrFloat(1.5f)}, {"scale", attrFloat(0.3f)}}),
                23),
      withOpset(testCase("bool_mask_padded", {X({2, 2, 3, 4}), X({2, 2, 5, 4}), X({2, 2, 5, 4}),
                                              bools({2, 1, 3, 4}, {1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1})}),
                23),
      withOpset(testCase("past_window", {X({1, 4, 3, 8}), X({1, 2, 2, 8}), X({1, 2, 2, 8}), omittedInput(),
                                         X({1, 2, 5, 8}), X({1, 2, 5, 8})},
                         {{"is_causal", Attr(1)}, {"left_window_size", Attr(3)}}),
                25),
      withOpset(testCase("nonpad_decode", {X({2, 4, 1, 8}), X({2, 2, 9, 8}), X({2, 2, 9, 8}), omittedInput(),
                                           omittedInput(), omittedInput(), nonpad({5, 9})},
                         {{"is_causal", Attr(1)}}),
                24),
      // The float32 fast path: 3-D heads read in place, a key-padding mask added in the GEMM's
      // write-back (-inf and large negative entries), odd head sizes, Dv != D.
      withOpset(testCase("f32_3d_key_padding_mask",
                         {X({2, 37, 52}), X({2, 29, 52}), X({2, 29, 28}),
                          valuesInput({2, 1, 1, 29}, keyPadding(2, 29), ElementType::F32, false)},
                         {{"q_num_heads", Attr(4)}, {"kv_num_heads", Attr(4)}, {"scale", attrFloat(0.3f)}}),
                23),
      // BERT's layout at odd sizes: K^T packed by 8 x 8 transposes with a k tail (head 20) and a
      // column tail (45 keys: panels of 16, 16, 13), softmax rows of 16 + 16 + 8 + 5 lanes.
      withOpset(testCase("f32_3d_odd_keys_head20",
                         {X({2, 45, 60}), X({2, 45, 60}), X({2, 45, 60}),
                          valuesInput({2, 1, 1, 45}, keyPadding(2, 45), ElementType::F32, false)},
                         {{"q_num_heads", Attr(3)}, {"kv_num_heads", Attr(3)}}),
                23),
      // A per-query mask shorter than the keys (the rest are masked), GQA.
      withOpset(testCase("f32_mask_per_query_short", {X({1, 4, 20, 8}), X({1, 2, 25, 8}), X({1, 2, 25, 6}), X({20, 22})}),
                23),
      // Every key of batch 1 masked: zero rows; with the fused graph's flag, NaN rows.
      withOpset(testCase("f32_all_masked_rows", {X({2, 2, 6, 4}), X({2, 2, 5, 4}), X({2, 2, 5, 4}),
                                                 bools({2, 1, 1, 5}, {1, 0, 1, 1, 0, 0, 0, 0, 0, 0})}),
                23),
      withOpset(testCase("f32_all_masked_rows_nan",
                         {X({2, 2, 6, 4}), X({2, 2, 5, 4}), X({2, 2, 5, 4}),
                          bools({2, 1, 1, 5}, {1, 0, 1, 1, 0, 0, 0, 0, 0, 0})},
                         {{kAttentionMaskedRowsNaN, Attr(1)}}),
                23),
      withOpset(testCase("f32_gqa_long", {X({1, 4, 70, 16}), X({1, 2, 70, 16}), X({1, 2, 70, 16})}), 23),
      // Long enough for several query blocks and full GEMM tiles.
      withOpset(testCase("prefill_blocks", {X({1, 2, 130, 16}), X({1, 2, 130, 16}), X({1, 2, 130, 16})},
                         {{"is_causal", Attr(1)}}),
                23),
  };
  for (int64_t Mode = 0; Mode < 4; ++Mode) {
    OpTestCase Q = withOpset(testCase("qk_mode" + std::to_string(Mode),
                                      {X({2, 2, 3, 4}), X({2, 2, 4, 4}), X({2, 2, 4, 4}), X({2, 1, 3, 6}),
                                       X({2, 2, 2, 4}), X({2, 2, 2, 4})},
                                      {{"qk_matmul_output_mode", Attr(Mode)}, {"softcap", attrFloat(2.0f)}}),
                             23);
    Q.NumOutputs = 4;
    C.push_back(Q);
  }
  // Decoder steps (the streaming path): past + new rows copied to the present outputs while used;
  // GQA with two queries per step over 3-D heads, odd head sizes, and one past large enough for
  // the streaming stores (with is_causal, which one query at the end of the cache does not change).
  for (OpTestCase D : {withOpset(testCase("decode_3d_gqa_two_queries",
                                          {X({1, 2, 64}), X({1, 2, 32}), X({1, 2, 40}), omittedInput(),
                                           X({1, 2, 7, 16}), X({1, 2, 7, 20})},
                                          {{"q_num_heads", Attr(4)}, {"kv_num_heads", Attr(2)}}),
                                 23),
                       withOpset(testCase("decode_odd_head", {X({2, 3, 1, 13}), X({2, 3, 1, 13}), X({2, 3, 1, 13}),
                                                              omittedInput(), X({2, 3, 5, 13}), X({2, 3, 5, 13})}),
                                 23),
                       withOpset(testCase("decode_stream_causal",
                                          {X({1, 4, 1, 64}), X({1, 4, 1, 64}), X({1, 4, 1, 64}), omittedInput(),
                                           X({1, 4, 600, 64}), X({1, 4, 600, 64})},
                                          {{"is_causal", Attr(1)}}),
                                 23)}) {
    D.NumOutputs = 3;
    C.push_back(D);
  }
  OpTestCase Half = withOpset(testCase("f16_gqa_past", {tensorInput({1, 4, 3, 8}, ElementType::F16),
                                                       tensorInput({1, 2, 3, 8}, ElementType::F16),
                                                       tensorInput({1, 2, 3, 8}, ElementType::F16),
                                                       tensorInput({3, 5}, ElementType::F16),
                                                       tensorInput({1, 2, 2, 8}, ElementType::F16),
                                                       tensorInput({1, 2, 2, 8}, ElementType::F16)}),
                              23);
  Half.NumOutputs = 3;
  C.push_back(Half);
  C.push_back(withOpset(testCase("bf16_causal", {tensorInput({1, 2, 4, 8}, ElementType::BF16),
                                                 tensorInput({1, 2, 4, 8}, ElementType::BF16),
                                                 tensorInput({1, 2, 4, 8}, ElementType::BF16)},
                                 {{"is_causal", Attr(1)}}),
                        23));
  return C;
}

OpKernels attentionKernels() {
  OpKernels K;
  K.OpType = "Attention";
  K.Variants.push_back({"attention__ref", 0, attentionTypesOk, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(const AttentionAttrs A, parseAttentionAttrs(I.N));
                          return makeKernel<FunctionKernel>([A](const KernelContext &C) { return runAttentionRef(A, C); });
                        }});
  K.Variants.push_back(attentionFastVariant(GemmIsa::Portable, 10));
  K.Variants.push_back(attentionFastVariant(GemmIsa::Avx2, 20));
  K.Variants.push_back(attentionFastVariant(GemmIsa::Avx512, 30));
  K.TestCases = attentionCases;
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(Attention, attentionSchema());
OPT_REGISTER_KERNELS(Attention, attentionKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
