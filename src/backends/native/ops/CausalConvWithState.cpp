// CausalConvWithState (opset 27): the depthwise causal 1-D convolution of Mamba / linear-attention
// blocks with a carried state. input [B, C, L], weight [C, 1, K], optional bias [C] and
// past_state [B, C, K - 1] (default zeros) that is prepended to the input; output [B, C, L] =
// bias + sum_j weight[c, 0, j] * padded[b, c, t + j], optionally followed by SiLU ('silu' or its
// alias 'swish'); present_state = the last K - 1 padded samples (the next call's past_state).
// Float types, accumulated in float (double for f64).
#include <cmath>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/FloatDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Result<bool> causalConvSilu(const Node &N) {
  ASSIGN_OR_RETURN(const std::string A, N.getString("activation", "none"));
  if (A != "none" && A != "silu" && A != "swish")
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'activation' value '", A,
                     "' is not 'none', 'silu' or 'swish'");
  return A != "none";
}

Status computeCausalConvWithState(const Node &N, const std::vector<TensorView> &In,
                                  const std::vector<TensorView> &Out, const Parallel &Par) {
  const TensorView &X = In[0], &W = In[1];
  const bool HasBias = In.size() > 2 && In[2].Data, HasPast = In.size() > 3 && In[3].Data;
  ASSIGN_OR_RETURN(const bool Silu, causalConvSilu(N));
  if (X.rank() != 3 || W.rank() != 3 || W.Dims[0] != X.Dims[1] || W.Dims[1] != 1 || W.Dims[2] < 1)
    return runError("causalconvwithstate", "input ", joinInts(X.Dims), " and weight ", joinInts(W.Dims),
                    " are not [B, C, L] and [C, 1, K]");
  const int64_t B = X.Dims[0], C = X.Dims[1], L = X.Dims[2], K = W.Dims[2], S = K - 1;
  const std::vector<int64_t> StateDims = {B, C, S};
  if (HasPast && In[3].Dims != StateDims)
    return runError("causalconvwithstate", "past_state ", joinInts(In[3].Dims), " is not ", joinInts(StateDims));
  if (Out[0].Dims != X.Dims || (Out.size() > 1 && Out[1].Data && Out[1].Dims != StateDims))
    return runError("causalconvwithstate", "outputs do not match input ", joinInts(X.Dims));
  visitFloat(X.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    using A = ComputeT<T>;
    Par.forRange(static_cast<size_t>(B * C), 1, [&](size_t Begin, size_t End) {
      std::vector<A> Padded(static_cast<size_t>(S + L));
      for (size_t Row = Begin; Row < End; ++Row) {
        const int64_t Ch = static_cast<int64_t>(Row) % C;
        for (int64_t I = 0; I < S; ++I)
          Padded[static_cast<size_t>(I)] = HasPast ? static_cast<A>(In[3].data<const T>()[static_cast<int64_t>(Row) * S + I]) : A(0);
        for (int64_t I = 0; I < L; ++I)
          Padded[static_cast<size_t>(S + I)] = static_cast<A>(X.data<const T>()[static_cast<int64_t>(Row) * L + I]);
        const T *Wr = W.data<const T>() + Ch * K;
        const A Bias = HasBias ? static_cast<A>(In[2].data<const T>()[Ch]) : A(0);
        T *Y = Out[0].data<T>() + static_cast<int64_t>(Row) * L;
        for (int64_t Tt = 0; Tt < L; ++Tt) {
          A Acc = Bias;
          for (int64_t J = 0; J < K; ++J)
            Acc += static_cast<A>(Wr[J]) * Padded[static_cast<size_t>(Tt + J)];
          if (Silu) { // the reference rounds the convolution to the input type first
            const A V = static_cast<A>(static_cast<T>(Acc));
            Acc = V / (A(1) + std::exp(-V));
          }
          Y[Tt] = static_cast<T>(Acc);
        }
        if (Out.size() > 1 && Out[1].Data)
          for (int64_t I = 0; I < S; ++I)
            Out[1].data<T>()[static_cast<int64_t>(Row) * S + I] = static_cast<T>(Padded[static_cast<size_t>(L + I)]);
      }
    });
  });
  return Status::ok();
}

Status inferCausalConvWithState(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(FloatTypes()), "input"));
  for (size_t I = 1; I < 4; ++I)
    if (Ctx.hasInput(I))
      RETURN_IF_ERROR(requireSameType(Ctx, 0, I));
  ASSIGN_OR_RETURN(const bool Silu, causalConvSilu(Ctx.N));
  (void)Silu;
  const TensorShape &X = Ctx.Inputs[0].Shape, &W = Ctx.Inputs[1].Shape;
  const auto differ = [](const Expr &A, const Expr &B) { return A.isConst() && B.isConst() && A.value() != B.value(); };
  if (X.getRank() != 3 || W.getRank() != 3 || differ(W[0], X[1]) || (W[1].isConst() && W[1].value() != 1) ||
      (W[2].isConst() && W[2].value() < 1))
    return Ctx.error(ErrorCode::Shape, "input ", X.toString(), " and weight ", W.toString(),
                     " are not [B, C, L] and [C, 1, K]");
  const Expr S = W[2].isConst() ? Expr(static_cast<long long>(W[2].value() - 1)) : Ctx.newSymbol();
  if (Ctx.hasInput(2)) {
    const TensorShape &Bi = Ctx.Inputs[2].Shape;
    if (Bi.getRank() != 1 || differ(Bi[0], X[1]))
      return Ctx.error(ErrorCode::Shape, "bias ", Bi.toString(), " is not [C] for input ", X.toString());
  }
  if (Ctx.hasInput(3)) {
    const TensorShape &P = Ctx.Inputs[3].Shape;
    if (P.getRank() != 3 || differ(P[0], X[0]) || differ(P[1], X[1]) || differ(P[2], S))
      return Ctx.error(ErrorCode::Shape, "past_state ", P.toString(), " is not [B, C, K - 1] for input ",
                       X.toString(), " and weight ", W.toString());
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = X;
  if (Ctx.Outputs.size() > 1) {
    Ctx.Outputs[1].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[1].Shape = TensorShape({X[0], X[1], S});
  }
  return Status::ok();
}

OpSchema causalConvWithStateSchema() {
  OpSchema S;
  S.OpType = "CausalConvWithState";
  S.MinInputs = 2;
  S.MaxInputs = 4;
  S.MinOutputs = 1;
  S.MaxOutputs = 2;
  S.Infer = inferCausalConvWithState;
  return S;
}

OpKernels causalConvWithStateKernels() {
  OpKernels K;
  K.OpType = "CausalConvWithState";
  K.Variants.push_back(computeVariant("any_causalconvwithstate__ref", 0, computeCausalConvWithState));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        withOutputs(withOpset(testCase("plain", {tensorInput({2, 4, 8}), tensorInput({4, 1, 4})}), 27), 2),
        withOutputs(withOpset(testCase("bias_past_silu",
                                       {tensorInput({2, 3, 5}), tensorInput({3, 1, 3}), tensorInput({3}),
                                        tensorInput({2, 3, 2})},
                                       {{"activation", attrString("silu")}}),
                              27),
                    2),
        withOutputs(withOpset(testCase("decode_step_f16", {tensorInput({1, 6, 1}, ElementType::F16),
                                                           tensorInput({6, 1, 4}, ElementType::F16), omittedInput(),
                                                           tensorInput({1, 6, 3}, ElementType::F16)},
                                       {}, 1e-2),
                              27),
                    2),
        withOpset(testCase("kernel_one", {tensorInput({1, 2, 4}), tensorInput({2, 1, 1})}), 27),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(CausalConvWithState, causalConvWithStateSchema());
OPT_REGISTER_KERNELS(CausalConvWithState, causalConvWithStateKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
