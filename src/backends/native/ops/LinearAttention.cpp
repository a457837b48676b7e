// LinearAttention (opset 27): recurrent linear attention with a [d_k, d_v] state per KV head
// (RetNet / GLA / DeltaNet / Gated DeltaNet). query [B, T, Hq * d_k], key [B, T, Hkv * d_k],
// value [B, T, Hkv * d_v], optional past_state [B, Hkv, d_k, d_v]. Per step t and KV head:
//   gated rules:  S *= exp(decay_t)        (decay [B, T, Hkv] or [B, T, Hkv * d_k], per row of S)
//   delta rules:  v_t = beta_t * (v_t - S^T k_t)   (beta [B, T, Hkv] or [B, T, 1])
//   S += k_t v_t^T;  out_t = scale * q_t^T S for each query head of the group (GQA/MQA).
// update_rule picks linear / gated / delta / gated_delta (default), which fixes whether decay
// and beta must be present. scale 0 = 1 / sqrt(d_k). chunk_size is a tuning hint (no effect).
// Computed in float; present_state has past_state's type (the query's without one).
#include <cmath>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/FloatDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct LinearAttnAttrs {
  int64_t Hq = 0, Hkv = 0;
  bool Gating = true, Delta = true;
  float Scale = 0;
};

Result<LinearAttnAttrs> linearAttnAttrs(const Node &N) {
  LinearAttnAttrs A;
  if (!N.hasAttr("q_num_heads") || !N.hasAttr("kv_num_heads"))
    return makeError(ErrorCode::Model, N.describe(), ": attributes 'q_num_heads' and 'kv_num_heads' are required");
  ASSIGN_OR_RETURN(A.Hq, N.getInt("q_num_heads", 0));
  ASSIGN_OR_RETURN(A.Hkv, N.getInt("kv_num_heads", 0));
  if (A.Hq <= 0 || A.Hkv <= 0 || A.Hq % A.Hkv != 0)
    return makeError(ErrorCode::Model, N.describe(), ": q_num_heads ", A.Hq, " is not a positive multiple of kv_num_heads ",
                     A.Hkv);
  ASSIGN_OR_RETURN(const std::string Rule, N.getString("update_rule", "gated_delta"));
  if (Rule != "linear" && Rule != "gated" && Rule != "delta" && Rule != "gated_delta")
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'update_rule' value '", Rule,
                     "' is not 'linear', 'gated', 'delta' or 'gated_delta'");
  A.Gating = Rule == "gated" || Rule == "gated_delta";
  A.Delta = Rule == "delta" || Rule == "gated_delta";
  ASSIGN_OR_RETURN(A.Scale, N.getFloat("scale", 0.0f));
  return A;
}

struct LinearAttnDims {
  int64_t B = 0, T = 0, Dk = 0, Dv = 0;
  int64_t DecayWidth = 0, BetaWidth = 0; // per-step entries of decay / beta (0 = absent)
};

Status computeLinearAttention(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                              const Parallel &Par) {
  ASSIGN_OR_RETURN(const LinearAttnAttrs A, linearAttnAttrs(N));
  const TensorView &Q = In[0], &K = In[1], &V = In[2];
  const auto has = [&](size_t I) { return In.size() > I && In[I].Data != nullptr; };
  if (Q.rank() != 3 || K.rank() != 3 || V.rank() != 3 || K.Dims[0] != Q.Dims[0] || V.Dims[0] != Q.Dims[0] ||
      K.Dims[1] != Q.Dims[1] || V.Dims[1] != Q.Dims[1] || Q.Dims[2] % A.Hq != 0 || V.Dims[2] % A.Hkv != 0 ||
      K.Dims[2] != Q.Dims[2] / A.Hq * A.Hkv)
    return runError("linearattention", "query ", joinInts(Q.Dims), ", key ", joinInts(K.Dims), " and value ",
                    joinInts(V.Dims), " do not fit ", A.Hq, " query and ", A.Hkv, " KV heads");
  LinearAttnDims D;
  D.B = Q.Dims[0];
  D.T = Q.Dims[1];
  D.Dk = Q.Dims[2] / A.Hq;
  D.Dv = V.Dims[2] / A.Hkv;
  if (A.Gating != has(4) || A.Delta != has(5))
    return makeError(ErrorCode::Model, N.describe(), ": the update rule ", A.Gating ? "needs" : "forbids",
                     " input 'decay' and ", A.Delta ? "needs" : "forbids", " input 'beta'");
  // decay [B, T, Hkv] or [B, T, Hkv * d_k]; beta [B, T, Hkv] or [B, T, 1].
  const auto perStep = [&](size_t I, const char *Name, int64_t W0, int64_t W1, int64_t &Width) -> Status {
    const TensorView &X = In[I];
    if (X.rank() != 3 || X.Dims[0] != D.B || X.Dims[1] != D.T || (X.Dims[2] != W0 && X.Dims[2] != W1))
      return runError("linearattention", Name, " ", joinInts(X.Dims), " is not [", D.B, ", ", D.T, ", ", W0, "] or [", D.B,
                      ", ", D.T, ", ", W1, "]");
    Width = X.Dims[2];
    return Status::ok();
  };
  if (has(4))
    RETURN_IF_ERROR(perStep(4, "decay", A.Hkv, A.Hkv * D.Dk, D.DecayWidth));
  if (has(5))
    RETURN_IF_ERROR(perStep(5, "beta", A.Hkv, 1, D.BetaWidth));
  const std::vector<int64_t> StateDims = {D.B, A.Hkv, D.Dk, D.Dv};
  if (has(3) && In[3].Dims != StateDims)
    return runError("linearattention", "past_state ", joinInts(In[3].Dims), " is not ", joinInts(StateDims));
  const int64_t Group = A.Hq / A.Hkv;
  const float Scale = A.Scale == 0.0f ? 1.0f / std::sqrt(static_cast<float>(D.Dk)) : A.Scale;
  const auto load = [](const TensorView &X, int64_t I) -> float {
    float R = 0;
    visitFloat(X.Type, [&](auto Tag) {
      using T = typename decltype(Tag)::type;
      R = static_cast<float>(static_cast<ComputeT<T>>(X.data<const T>()[I]));
    });
    return R;
  };
  const auto store = [](const TensorView &X, int64_t I, float Vl) {
    visitFloat(X.Type, [&](auto Tag) {
      using T = typename decltype(Tag)::type;
      X.data<T>()[I] = static_cast<T>(static_cast<ComputeT<T>>(Vl));
    });
  };
  Par.forRange(static_cast<size_t>(D.B * A.Hkv), 1, [&](size_t Begin, size_t End) {
    std::vector<float> S(static_cast<size_t>(D.Dk * D.Dv)), Kt(static_cast<size_t>(D.Dk)),
        Vt(static_cast<size_t>(D.Dv));
    for (size_t Item = Begin; Item < End; ++Item) {
      const int64_t Bi = static_cast<int64_t>(Item) / A.Hkv, H = static_cast<int64_t>(Item) % A.Hkv;
      const int64_t StateBase = static_cast<int64_t>(Item) * D.Dk * D.Dv;
      for (int64_t I = 0; I < D.Dk * D.Dv; ++I)
        S[static_cast<size_t>(I)] = has(3) ? load(In[3], StateBase + I) : 0.0f;
      for (int64_t Tt = 0; Tt < D.T; ++Tt) {
        const int64_t Row = Bi * D.T + Tt;
        for (int64_t I = 0; I < D.Dk; ++I)
          Kt[static_cast<size_t>(I)] = load(K, Row * A.Hkv * D.Dk + H * D.Dk + I);
        for (int64_t I = 0; I < D.Dv; ++I)
          Vt[static_cast<size_t>(I)] = load(V, Row * A.Hkv * D.Dv + H * D.Dv + I);
        if (A.Gating)
          for (int64_t I = 0; I < D.Dk; ++I) {
            const int64_t G = D.DecayWidth == A.Hkv ? Row * A.Hkv + H : Row * A.Hkv * D.Dk + H * D.Dk + I;
            const float F = std::exp(load(In[4], G));
            for (int64_t M = 0; M < D.Dv; ++M)
              S[static_cast<size_t>(I * D.Dv + M)] *= F;
          }
        if (A.Delta) {
          const float Beta = load(In[5], D.BetaWidth == 1 ? Row : Row * A.Hkv + H);
          for (int64_t M = 0; M < D.Dv; ++M) {
            float Retrieved = 0;
            for (int64_t I = 0; I < D.Dk; ++I)
              Retrieved += S[static_cast<size_t>(I * D.Dv + M)] * Kt[static_cast<size_t>(I)];
            Vt[static_cast<size_t>(M)] = Beta * (Vt[static_cast<size_t>(M)] - Retrieved);
          }
        }
        for (int64_t I = 0; I < D.Dk; ++I)
          for (int64_t M = 0; M < D.Dv; ++M)
            S[static_cast<size_t>(I * D.Dv + M)] += Kt[static_cast<size_t>(I)] * Vt[static_cast<size_t>(M)];
        for (int64_t Hq = H * Group; Hq < (H + 1) * Group; ++Hq)
          for (int64_t M = 0; M < D.Dv; ++M) {
            float Acc = 0;
            for (int64_t I = 0; I < D.Dk; ++I)
              Acc += load(Q, Row * A.Hq * D.Dk + Hq * D.Dk + I) * S[static_cast<size_t>(I * D.Dv + M)];
            store(Out[0], Row * A.Hq * D.Dv + Hq * D.Dv + M, Scale * Acc);
          }
      }
      if (Out.size() > 1 && Out[1].Data)
        for (int64_t I = 0; I < D.Dk * D.Dv; ++I)
          store(Out[1], StateBase + I, S[static_cast<size_t>(I)]);
    }
  });
  return Status::ok();
}

Status inferLinearAttention(ShapeContext &Ctx) {
  ASSIGN_OR_RETURN(const LinearAttnAttrs A, linearAttnAttrs(Ctx.N));
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(FloatTypes()), "query"));
  for (size_t I = 1; I < 6; ++I)
    if (Ctx.hasInput(I) && I != 3)
      RETURN_IF_ERROR(requireSameType(Ctx, 0, I));
  if (Ctx.hasInput(3))
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 3, elementTypes(FloatTypes()), "past_state"));
  if (A.Gating != Ctx.hasInput(4) || A.Delta != Ctx.hasInput(5))
    return Ctx.error(ErrorCode::Model, "update_rule ", A.Gating ? (A.Delta ? "gated_delta" : "gated") : (A.Delta ? "delta" : "linear"),
                     A.Gating ? " needs" : " forbids", " input 'decay' and", A.Delta ? " needs" : " forbids",
                     " input 'beta'");
  const TensorShape &Q = Ctx.Inputs[0].Shape, &K = Ctx.Inputs[1].Shape, &V = Ctx.Inputs[2].Shape;
  if (Q.getRank() != 3 || K.getRank() != 3 || V.getRank() != 3)
    return Ctx.error(ErrorCode::Shape, "query ", Q.toString(), ", key ", K.toString(), " and value ", V.toString(),
                     " must be [B, T, heads * head_size]");
  if (Q[2].isConst() && Q[2].value() % A.Hq != 0)
    return Ctx.error(ErrorCode::Shape, "query ", Q.toString(), " last dim is not a multiple of q_num_heads ", A.Hq);
  if (V[2].isConst() && V[2].value() % A.Hkv != 0)
    return Ctx.error(ErrorCode::Shape, "value ", V.toString(), " last dim is not a multiple of kv_num_heads ", A.Hkv);
  if (Q[2].isConst() && K[2].isConst() && K[2].value() != Q[2].value() / A.Hq * A.Hkv)
    return Ctx.error(ErrorCode::Shape, "key ", K.toString(), " does not have kv_num_heads ", A.Hkv, " heads of query ",
                     Q.toString(), "'s head size");
  // decay [B, T, Hkv] or [B, T, Hkv * d_k]; beta [B, T, Hkv] or [B, T, 1] (dims known here).
  const auto perStep = [&](size_t I, const char *Name, int64_t W0, int64_t W1) -> Status {
    if (!Ctx.hasInput(I))
      return Status::ok();
    const TensorShape &X = Ctx.Inputs[I].Shape;
    const auto differs = [](const Expr &A, const Expr &B) { return A.isConst() && B.isConst() && A.value() != B.value(); };
    if (X.getRank() != 3 || differs(X[0], Q[0]) || differs(X[1], Q[1]) ||
        (X[2].isConst() && W1 >= 0 && X[2].value() != W0 && X[2].value() != W1))
      return Ctx.error(ErrorCode::Shape, Name, " ", X.toString(), " is not [B, T, ", W0, "] or [B, T, ",
                       W1 < 0 ? std::string("kv_num_heads * d_k") : std::to_string(W1), "] for query ", Q.toString());
    return Status::ok();
  };
  RETURN_IF_ERROR(perStep(4, "decay", A.Hkv, Q[2].isConst() ? Q[2].value() / A.Hq * A.Hkv : -1));
  RETURN_IF_ERROR(perStep(5, "beta", A.Hkv, 1));
  const Expr Dk = Q[2].isConst() ? Expr(static_cast<long long>(Q[2].value() / A.Hq)) : Ctx.newSymbol();
  const Expr Dv = V[2].isConst() ? Expr(static_cast<long long>(V[2].value() / A.Hkv)) : Ctx.newSymbol();
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = TensorShape(
      {Q[0], Q[1], V[2].isConst() ? Expr(static_cast<long long>(V[2].value() / A.Hkv * A.Hq)) : Ctx.newSymbol()});
  if (Ctx.Outputs.size() > 1) {
    Ctx.Outputs[1].Type = Ctx.hasInput(3) ? Ctx.Inputs[3].Type : Ctx.Inputs[0].Type;
    Ctx.Outputs[1].Shape = TensorShape({Q[0], Expr(static_cast<long long>(A.Hkv)), Dk, Dv});
  }
  return Status::ok();
}

OpSchema linearAttentionSchema() {
  OpSchema S;
  S.OpType = "LinearAttention";
  S.MinInputs = 3;
  S.MaxInputs = 6;
  S.MinOutputs = 1;
  S.MaxOutputs = 2;
  S.Infer = inferLinearAttention;
  return S;
}

OpKernels linearAttentionKernels() {
  OpKernels K;
  K.OpType = "LinearAttention";
  K.Variants.push_back(computeVariant("any_linearattention__ref", 0, computeLinearAttention));
  K.TestCases = [] {
    const auto heads = [](int64_t Hq, int64_t Hkv, const char *Rule) {
      return std::map<std::string, AttrValue>{
          {"q_num_heads", attrInt(Hq)}, {"kv_num_heads", attrInt(Hkv)}, {"update_rule", attrString(Rule)}};
    };
    TestInput Decay = tensorInput({2, 3, 2 * 4}), Beta = tensorInput({2, 3, 2});
    Decay.Low = -0.3;
    Decay.High = 0;
    Beta.Low = 0;
    Beta.High = 1;
    return std::vector<OpTestCase>{
        withOutputs(withOpset(testCase("linear", {tensorInput({2, 3, 8}), tensorInput({2, 3, 8}), tensorInput({2, 3, 6})},
                                       heads(2, 2, "linear")),
                              27),
                    2),
        withOutputs(withOpset(testCase("gated_delta_gqa_past",
                                       {tensorInput({2, 3, 16}), tensorInput({2, 3, 8}), tensorInput({2, 3, 10}),
                                        tensorInput({2, 2, 4, 5}), Decay, Beta},
                                       heads(4, 2, "gated_delta")),
                              27),
                    2),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(LinearAttention, linearAttentionSchema());
OPT_REGISTER_KERNELS(LinearAttention, linearAttentionKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
