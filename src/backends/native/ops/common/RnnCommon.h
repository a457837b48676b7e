// Shared implementation of the recurrent ops RNN, GRU and LSTM (opsets 7, 14, 22): attribute
// parsing (direction, hidden_size, activations with alpha/beta, clip, layout, linear_before_reset,
// input_forget), shape inference, and one time loop per (direction, batch element) that handles
// sequence_lens, initial states and LSTM peepholes. Gate orders follow ONNX: LSTM i,o,f,c;
// GRU z,r,h; RNN one gate.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

enum class RnnKind { Rnn, Gru, Lstm };

struct RnnActivation {
  std::string Name;
  float Alpha = 0, Beta = 0;
  float apply(float X) const {
    if (Name == "Sigmoid")
      return 1.0f / (1.0f + std::exp(-X));
    if (Name == "Tanh")
      return std::tanh(X);
    if (Name == "Relu")
      return std::max(0.0f, X);
    if (Name == "Affine")
      return Alpha * X + Beta;
    if (Name == "LeakyRelu")
      return X >= 0 ? X : Alpha * X;
    if (Name == "ThresholdedRelu")
      return X > Alpha ? X : 0.0f;
    if (Name == "ScaledTanh")
      return Alpha * std::tanh(Beta * X);
    if (Name == "HardSigmoid")
      return std::max(0.0f, std::min(1.0f, Alpha * X + Beta));
    if (Name == "Elu")
      return X >= 0 ? X : Alpha * (std::exp(X) - 1);
    if (Name == "Softsign")
      return X / (1 + std::fabs(X));
    if (Name == "Softplus")
      return std::log1p(std::exp(X));
    return X;
  }
};

struct RnnAttrs {
  RnnKind Kind = RnnKind::Rnn;
  int64_t Hidden = 0; ///< 0 = from R's shape
  int64_t Dirs = 1;
  bool Reverse = false; ///< direction == "reverse"
  float Clip = 0;       ///< 0 = no clipping
  bool Layout1 = false;
  bool LinearBeforeReset = false;
  bool InputForget = false;
  std::vector<RnnActivation> Acts; ///< ActsPerDir * Dirs
  size_t ActsPerDir = 1;
  int64_t gates() const { return Kind == RnnKind::Lstm ? 4 : Kind == RnnKind::Gru ? 3 : 1; }
};

inline Result<RnnAttrs> parseRnnAttrs(const Node &N, RnnKind Kind) {
  RnnAttrs A;
  A.Kind = Kind;
  ASSIGN_OR_RETURN(A.Hidden, N.getInt("hidden_size", 0));
  if (N.hasAttr("hidden_size") && A.Hidden <= 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'hidden_size' value ", A.Hidden, " must be positive");
  ASSIGN_OR_RETURN(const std::string Dir, N.getString("direction", "forward"));
  if (Dir != "forward" && Dir != "reverse" && Dir != "bidirectional")
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'direction' value '", Dir,
                     "' is not one of forward, reverse, bidirectional");
  A.Dirs = Dir == "bidirectional" ? 2 : 1;
  A.Reverse = Dir == "reverse";
  ASSIGN_OR_RETURN(A.Clip, N.getFloat("clip", 0.0f));
  if (N.hasAttr("clip") && !(A.Clip > 0))
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'clip' value ", A.Clip, " must be positive");
  ASSIGN_OR_RETURN(const int64_t Layout, N.getInt("layout", 0));
  if (Layout != 0 && Layout != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'layout' value ", Layout, " must be 0 or 1");
  A.Layout1 = Layout == 1;
  ASSIGN_OR_RETURN(const int64_t Lbr, N.getInt("linear_before_reset", 0));
  A.LinearBeforeReset = Lbr != 0;
  ASSIGN_OR_RETURN(const int64_t Forget, N.getInt("input_forget", 0));
  A.InputForget = Forget != 0;
  std::vector<std::string> Defaults;
  if (Kind == RnnKind::Rnn)
    Defaults = {"Tanh"};
  else if (Kind == RnnKind::Gru)
    Defaults = {"Sigmoid", "Tanh"};
  else
    Defaults = {"Sigmoid", "Tanh", "Tanh"};
  A.ActsPerDir = Defaults.size();
  std::vector<std::string> Names;
  if (N.hasAttr("activations")) {
    const AttrValue &V = N.Attrs.at("activations");
    Names = V.Strings;
    if (V.K == AttrValue::Kind::String)
      Names = {V.S};
  }
  if (Names.empty())
    for (int64_t D = 0; D < A.Dirs; ++D)
      Names.insert(Names.end(), Defaults.begin(), Defaults.end());
  if (Names.size() == A.ActsPerDir && A.Dirs == 2) // one set given: both directions use it
    {
    const std::vector<std::string> Copy = Names;
    Names.insert(Names.end(), Copy.begin(), Copy.end());
  }
  if (Names.size() != A.ActsPerDir * static_cast<size_t>(A.Dirs))
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'activations' has ", Names.size(), " values, expected ",
                     A.ActsPerDir * static_cast<size_t>(A.Dirs));
  ASSIGN_OR_RETURN(const std::vector<float> Alphas, N.getFloats("activation_alpha", {}));
  ASSIGN_OR_RETURN(const std::vector<float> Betas, N.getFloats("activation_beta", {}));
  size_t AI = 0, BI = 0;
  for (const std::string &Raw : Names) {
    std::string Name = Raw;
    // Case-insensitive names, as some exporters write them in lower case.
    static const char *Known[] = {"Sigmoid", "Tanh", "Relu", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh",
                                  "HardSigmoid", "Elu", "Softsign", "Softplus"};
    bool Found = false;
    for (const char *K : Known) {
      std::string L1 = K, L2 = Name;
      for (char &C : L1)
        C = static_cast<char>(std::tolower(C));
      for (char &C : L2)
        C = static_cast<char>(std::tolower(C));
      if (L1 == L2) {
        Name = K;
        Found = true;
      }
    }
    if (!Found)
      return makeError(ErrorCode::Model, N.describe(), ": attribute 'activations' value '", Raw, "' is not supported");
    RnnActivation Act;
    Act.Name = Name;
    const bool UsesAlpha = Name == "Affine" || Name == "LeakyRelu" || Name == "ThresholdedRelu" || Name == "ScaledTanh" ||
                           Name == "HardSigmoid" || Name == "Elu";
    const bool UsesBeta = Name == "Affine" || Name == "ScaledTanh" || Name == "HardSigmoid";
    float DA = 1.0f, DB = 0.0f;
    if (Name == "LeakyRelu")
      DA = 0.01f;
    else if (Name == "HardSigmoid")
      DA = 0.2f, DB = 0.5f;
    else if (Name == "ScaledTanh")
      DB = 1.0f;
    Act.Alpha = UsesAlpha && AI < Alphas.size() ? Alphas[AI++] : DA;
    Act.Beta = UsesBeta && BI < Betas.size() ? Betas[BI++] : DB;
    A.Acts.push_back(Act);
  }
  return A;
}

/// Input positions: X W R B sequence_lens initial_h [initial_c P].
inline Status inferRnn(ShapeContext &Ctx, RnnKind Kind) {
  RETURN_IF_ERROR(requireFloatInput(Ctx, 0));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
  for (size_t I : {size_t(3), size_t(5), size_t(6), size_t(7)})
    if (I < Ctx.Inputs.size())
      RETURN_IF_ERROR(requireSameTypeIfPresent(Ctx, I));
  if (Ctx.hasInput(4))
    RETURN_IF_ERROR(requireInputType(Ctx, 4, {ElementType::I32}));
  ASSIGN_OR_RETURN(const RnnAttrs A, parseRnnAttrs(Ctx.N, Kind));
  const TensorShape &X = Ctx.Inputs[0].Shape, &W = Ctx.Inputs[1].Shape, &R = Ctx.Inputs[2].Shape;
  if (X.getRank() != 3 || W.getRank() != 3 || R.getRank() != 3)
    return Ctx.error(ErrorCode::Shape, "X ", X.toString(), ", W ", W.toString(), " and R ", R.toString(), " must be 3-D");
  const Expr Seq = A.Layout1 ? X[1] : X[0], Batch = A.Layout1 ? X[0] : X[1];
  const Expr H = A.Hidden ? Expr(A.Hidden) : R[2];
  const int64_t G = A.gates();
  if (W[0].isConst() && W[0].value() != A.Dirs)
    return Ctx.error(ErrorCode::Shape, "W ", W.toString(), " must have ", A.Dirs, " directions (dim 0)");
  if (H.isConst() && W[1].isConst() && W[1].value() != G * H.value())
    return Ctx.error(ErrorCode::Shape, "W ", W.toString(), " must have ", G, " x hidden_size ", H.value(), " rows");
  if (H.isConst() && R[1].isConst() && R[2].isConst() && (R[1].value() != G * H.value() || R[2].value() != H.value()))
    return Ctx.error(ErrorCode::Shape, "R ", R.toString(), " must be [", A.Dirs, ", ", G * H.value(), ", ", H.value(), "]");
  if (X[2].isConst() && W[2].isConst() && X[2].value() != W[2].value())
    return Ctx.error(ErrorCode::Shape, "X ", X.toString(), " and W ", W.toString(), " differ in input size");
  const ElementType T = Ctx.Inputs[0].Type;
  const Expr D(A.Dirs);
  if (Ctx.Outputs.size() > 0) {
    Ctx.Outputs[0].Type = T;
    Ctx.Outputs[0].Shape = A.Layout1 ? TensorShape({Batch, Seq, D, H}) : TensorShape({Seq, D, Batch, H});
  }
  for (size_t O = 1; O < Ctx.Outputs.size(); ++O) {
    Ctx.Outputs[O].Type = T;
    Ctx.Outputs[O].Shape = A.Layout1 ? TensorShape({Batch, D, H}) : TensorShape({D, Batch, H});
  }
  return Status::ok();
}

inline OpSchema rnnSchema(const char *OpType, RnnKind Kind) {
  OpSchema S;
  S.OpType = OpType;
  S.MinInputs = 3;
  S.MaxInputs = Kind == RnnKind::Lstm ? 8 : 6;
  S.MinOutputs = 0;
  S.MaxOutputs = Kind == RnnKind::Lstm ? 3 : 2;
  S.Infer = [Kind](ShapeContext &Ctx) { return inferRnn(Ctx, Kind); };
  return S;
}

/// Runs the op. Tasks are (direction, batch element) pairs: each runs its whole sequence.
inline Status runRnn(const RnnAttrs &A, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &W = Ctx.Inputs[1], &R = Ctx.Inputs[2];
  if (X.rank() != 3 || W.rank() != 3 || R.rank() != 3)
    return runError("rnn", "X, W and R must be 3-D");
  const int64_t Seq = A.Layout1 ? X.Dims[1] : X.Dims[0], Batch = A.Layout1 ? X.Dims[0] : X.Dims[1];
  const int64_t In = X.Dims[2], H = R.Dims[2], G = A.gates(), Dirs = A.Dirs;
  if (W.Dims[0] != Dirs || W.Dims[1] != G * H || W.Dims[2] != In || R.Dims[1] != G * H)
    return runError("rnn", "W ", joinInts(W.Dims), " / R ", joinInts(R.Dims), " do not match");
  const std::vector<float> Wv = loadFloats(W), Rv = loadFloats(R);
  const std::vector<float> Bv = hasRunInput(Ctx, 3) ? loadFloats(Ctx.Inputs[3]) : std::vector<float>(Dirs * 2 * G * H, 0.f);
  std::vector<int64_t> Lens(static_cast<size_t>(Batch), Seq);
  if (hasRunInput(Ctx, 4))
    for (int64_t B = 0; B < Batch; ++B)
      Lens[B] = std::min<int64_t>(Seq, std::max<int64_t>(0, Ctx.Inputs[4].data<const int32_t>()[B]));
  const std::vector<float> H0 = hasRunInput(Ctx, 5) ? loadFloats(Ctx.Inputs[5]) : std::vector<float>();
  const std::vector<float> C0 = A.Kind == RnnKind::Lstm && hasRunInput(Ctx, 6) ? loadFloats(Ctx.Inputs[6]) : std::vector<float>();
  const std::vector<float> P = A.Kind == RnnKind::Lstm && hasRunInput(Ctx, 7) ? loadFloats(Ctx.Inputs[7]) : std::vector<float>();
  if (Bv.size() != static_cast<size_t>(Dirs * 2 * G * H))
    return runError("rnn", "B must have ", Dirs * 2 * G * H, " values");
  const bool HasY = hasRunOutput(Ctx, 0), HasYh = hasRunOutput(Ctx, 1), HasYc = hasRunOutput(Ctx, 2);
  // State index of (direction, batch, hidden) in initial_h / Y_h: layout 0 [D, B, H], 1 [B, D, H].
  const auto stateIndex = [&](int64_t D, int64_t B, int64_t J) {
    return static_cast<size_t>(A.Layout1 ? (B * Dirs + D) * H + J : (D * Batch + B) * H + J);
  };
  const auto yIndex = [&](int64_t T, int64_t D, int64_t B, int64_t J) {
    return static_cast<size_t>(A.Layout1 ? ((B * Seq + T) * Dirs + D) * H + J : ((T * Dirs + D) * Batch + B) * H + J);
  };
  const auto xIndex = [&](int64_t T, int64_t B) {
    return static_cast<size_t>(A.Layout1 ? (B * Seq + T) * In : (T * Batch + B) * In);
  };
  if (HasY) // steps past a sequence's length stay zero
    for (size_t I = 0; I < Ctx.Outputs[0].elementCount(); ++I)
      storeFloat(Ctx.Outputs[0], I, 0.0f);
  forRangeMaybe(Ctx, Par, static_cast<size_t>(Dirs * Batch), 1, [&](size_t Lo, size_t Hi) {
    std::vector<float> Ht(H), Ct(H), Gates(G * H), Xt(In), Tmp(H);
    for (size_t Task = Lo; Task < Hi; ++Task) {
      const int64_t D = static_cast<int64_t>(Task) / Batch, B = static_cast<int64_t>(Task) % Batch;
      const bool Rev = A.Reverse || D == 1;
      const float *Wd = Wv.data() + D * G * H * In, *Rd = Rv.data() + D * G * H * H;
      const float *Wb = Bv.data() + D * 2 * G * H, *Rb = Wb + G * H;
      const float *Pd = P.empty() ? nullptr : P.data() + D * 3 * H;
      const RnnActivation *F = &A.Acts[static_cast<size_t>(D) * A.ActsPerDir];
      for (int64_t J = 0; J < H; ++J) {
        Ht[J] = H0.empty() ? 0.0f : H0[stateIndex(D, B, J)];
        Ct[J] = C0.empty() ? 0.0f : C0[stateIndex(D, B, J)];
      }
      const int64_t Len = Lens[static_cast<size_t>(B)];
      for (int64_t Step = 0; Step < Len; ++Step) {
        const int64_t T = Rev ? Len - 1 - Step : Step;
        for (int64_t K = 0; K < In; ++K)
          Xt[K] = loadFloat(X, xIndex(T, B) + K);
        // Gates = W x + Wb (+ R h + Rb, except GRU's h gate which needs the reset gate first).
        for (int64_t Row = 0; Row < G * H; ++Row) {
          float S = Wb[Row];
          const float *Wr = Wd + Row * In;
          for (int64_t K = 0; K < In; ++K)
            S += Wr[K] * Xt[K];
          const bool GruH = A.Kind == RnnKind::Gru && Row >= 2 * H;
          if (!GruH) {
            const float *Rr = Rd + Row * H;
            float SR = Rb[Row];
            for (int64_t K = 0; K < H; ++K)
              SR += Rr[K] * Ht[K];
            S += SR;
          }
          Gates[Row] = S;
        }
        const auto clip = [&](float V) { return A.Clip > 0 ? std::min(A.Clip, std::max(-A.Clip, V)) : V; };
        if (A.Kind == RnnKind::Rnn) {
          for (int64_t J = 0; J < H; ++J)
            Ht[J] = F[0].apply(clip(Gates[J]));
        } else if (A.Kind == RnnKind::Gru) {
          std::vector<float> Z(H), Rg(H);
          for (int64_t J = 0; J < H; ++J) {
            Z[J] = F[0].apply(clip(Gates[J]));
            Rg[J] = F[0].apply(clip(Gates[H + J]));
          }
          for (int64_t J = 0; J < H; ++J) {
            const float *Rr = Rd + (2 * H + J) * H;
            float S = 0;
            if (A.LinearBeforeReset) {
              for (int64_t K = 0; K < H; ++K)
                S += Rr[K] * Ht[K];
              S = Rg[J] * (S + Rb[2 * H + J]);
            } else {
              for (int64_t K = 0; K < H; ++K)
                S += Rr[K] * (Rg[K] * Ht[K]);
              S += Rb[2 * H + J];
            }
            Tmp[J] = F[1].apply(clip(Gates[2 * H + J] + S));
          }
          for (int64_t J = 0; J < H; ++J)
            Ht[J] = (1 - Z[J]) * Tmp[J] + Z[J] * Ht[J];
        } else {
          for (int64_t J = 0; J < H; ++J) {
            float I = Gates[J], O = Gates[H + J], Fg = Gates[2 * H + J], C = Gates[3 * H + J];
            if (Pd) {
              I += Pd[J] * Ct[J];
              Fg += Pd[2 * H + J] * Ct[J];
            }
            I = F[0].apply(clip(I));
            Fg = A.InputForget ? 1 - I : F[0].apply(clip(Fg));
            C = F[1].apply(clip(C));
            Ct[J] = Fg * Ct[J] + I * C;
            if (Pd)
              O += Pd[H + J] * Ct[J];
            O = F[0].apply(clip(O));
            Ht[J] = O * F[2].apply(Ct[J]);
          }
        }
        if (HasY)
          for (int64_t J = 0; J < H; ++J)
            storeFloat(Ctx.Outputs[0], yIndex(T, D, B, J), Ht[J]);
      }
      for (int64_t J = 0; J < H; ++J) {
        if (HasYh)
          storeFloat(Ctx.Outputs[1], stateIndex(D, B, J), Ht[J]);
        if (HasYc)
          storeFloat(Ctx.Outputs[2], stateIndex(D, B, J), Ct[J]);
      }
    }
  });
  return Status::ok();
}

inline void addRnnVariants(OpKernels &K, const std::string &Op, RnnKind Kind) {
  addFloatVariants(K, Op, [Kind](const KernelCreateInfo &I) -> Result<FloatRunFn> {
    ASSIGN_OR_RETURN(const RnnAttrs A, parseRnnAttrs(I.N, Kind));
    return FloatRunFn([A](const KernelContext &C, bool Par) { return runRnn(A, C, Par); });
  });
}

/// Harness cases for one kind: Gates = gates per direction.
inline std::vector<OpTestCase> rnnCases(RnnKind Kind) {
  const int64_t G = Kind == RnnKind::Lstm ? 4 : Kind == RnnKind::Gru ? 3 : 1;
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
  const auto Lens = [](std::vector<double> V) {
    const int64_t N = static_cast<int64_t>(V.size());
    return valuesInput({N}, std::move(V), ElementType::I32, false);
  };
  const int64_t H = 4, In = 3, Seq = 5, Bt = 2;
  std::vector<OpTestCase> C;
  const auto add = [&](std::string Label, std::vector<TestInput> Ins, std::map<std::string, AttrValue> Attrs, int Outs,
                       int Opset = 14) {
    OpTestCase T = testCase(std::move(Label), std::move(Ins), std::move(Attrs), 1e-4);
    T.NumOutputs = Outs;
    T.OpsetVersion = Opset;
    C.push_back(T);
  };
  const AttrValue Hs = attrInt(H);
  add("forward_defaults", {X({Seq, Bt, In}), W({1, G * H, In}), W({1, G * H, H})}, {{"hidden_size", Hs}}, 2);
  add("bias_initial_h", {X({Seq, Bt, In}), W({1, G * H, In}), W({1, G * H, H}), W({1, 2 * G * H}), omittedInput(),
                         X({1, Bt, H})},
      {{"hidden_size", Hs}}, 2);
  add("reverse_seq_lens", {X({Seq, 3, In}), W({1, G * H, In}), W({1, G * H, H}), W({1, 2 * G * H}), Lens({5, 2, 3})},
      {{"hidden_size", Hs}, {"direction", attrString("reverse")}}, 2);
  add("bidirectional", {X({Seq, Bt, In}), W({2, G * H, In}), W({2, G * H, H}), W({2, 2 * G * H})},
      {{"hidden_size", Hs}, {"direction", attrString("bidirectional")}}, 2);
  add("layout1", {X({Bt, Seq, In}), W({1, G * H, In}), W({1, G * H, H}), W({1, 2 * G * H}), omittedInput(), X({Bt, 1, H})},
      {{"hidden_size", Hs}, {"layout", attrInt(1)}}, 2);
  add("clip_y_only", {X({Seq, Bt, In}), W({1, G * H, In}), W({1, G * H, H})}, {{"hidden_size", Hs}, {"clip", attrFloat(0.3f)}}, 1,
      7);
  std::vector<std::string> Acts = Kind == RnnKind::Rnn   ? std::vector<std::string>{"Relu"}
                                  : Kind == RnnKind::Gru ? std::vector<std::string>{"HardSigmoid", "LeakyRelu"}
                                                         : std::vector<std::string>{"HardSigmoid", "Tanh", "Softsign"};
  add("activations", {X({Seq, Bt, In}), W({1, G * H, In}), W({1, G * H, H})},
      {{"hidden_size", Hs}, {"activations", attrStrings(Acts)}, {"activation_alpha", attrFloats({0.3f, 0.05f})}}, 2);
  if (Kind == RnnKind::Gru)
    add("linear_before_reset", {X({Seq, Bt, In}), W({1, G * H, In}), W({1, G * H, H}), W({1, 2 * G * H})},
        {{"hidden_size", Hs}, {"linear_before_reset", attrInt(1)}}, 2);
  if (Kind == RnnKind::Lstm) {
    add("peepholes_initial_c", {X({Seq, Bt, In}), W({1, G * H, In}), W({1, G * H, H}), W({1, 2 * G * H}), Lens({4, 5}),
                                X({1, Bt, H}), X({1, Bt, H}), W({1, 3 * H})},
        {{"hidden_size", Hs}}, 3);
    add("bidirectional_peepholes", {X({Seq, Bt, In}), W({2, G * H, In}), W({2, G * H, H}), W({2, 2 * G * H}), omittedInput(),
                                    X({2, Bt, H}), X({2, Bt, H}), W({2, 3 * H})},
        {{"hidden_size", Hs}, {"direction", attrString("bidirectional")}}, 3);
    add("input_forget", {X({Seq, Bt, In}), W({1, G * H, In}), W({1, G * H, H})},
        {{"hidden_size", Hs}, {"input_forget", attrInt(1)}}, 3);
  }
  return C;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
