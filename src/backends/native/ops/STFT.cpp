// STFT (opset 17): short-time Fourier transform of signal [batch, length, 1 | 2]. Frames of
// frame_length samples start every frame_step samples (1 + (length - frame_length) / frame_step
// frames), are multiplied by 'window' (default all ones) and transformed with a DFT of
// frame_length points; 'onesided' (default 1) keeps frame_length / 2 + 1 bins. Output [batch,
// frames, bins, 2]. Float types, computed in double. frame_length defaults to the window length.
#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/FloatDispatch.h"
#include "backends/native/ops/common/Spectral.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct StftGeometry {
  int64_t Step = 0, FrameLength = 0, Frames = 0, Bins = 0;
};

Result<StftGeometry> stftGeometry(const Node &N, int64_t SignalLength, int64_t Step, int64_t FrameLength,
                                  int64_t WindowLength /* -1 = none */, bool Onesided) {
  StftGeometry G;
  G.Step = Step;
  G.FrameLength = FrameLength >= 0 ? FrameLength : WindowLength >= 0 ? WindowLength : SignalLength;
  if (Step < 1)
    return makeError(ErrorCode::Shape, N.describe(), ": frame_step ", Step, " is not positive");
  if (WindowLength >= 0 && WindowLength != G.FrameLength)
    return makeError(ErrorCode::Shape, N.describe(), ": window length ", WindowLength, " is not frame_length ",
                     G.FrameLength);
  if (G.FrameLength < 1 || G.FrameLength > SignalLength)
    return makeError(ErrorCode::Shape, N.describe(), ": frame_length ", G.FrameLength,
                     " is not in [1, signal length ", SignalLength, "]");
  G.Frames = 1 + (SignalLength - G.FrameLength) / Step;
  G.Bins = Onesided ? G.FrameLength / 2 + 1 : G.FrameLength;
  return G;
}

Result<bool> stftOnesided(const Node &N) {
  ASSIGN_OR_RETURN(const int64_t O, N.getInt("onesided", 1));
  if (O != 0 && O != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'onesided' value ", O, " is not 0 or 1");
  return O == 1;
}

Result<int64_t> scalarInt(const TensorView &V, const char *What) {
  ASSIGN_OR_RETURN(const std::vector<int64_t> Vals, readInts(V, What));
  if (Vals.size() != 1)
    return makeError(ErrorCode::Shape, "STFT: input '", What, "' has ", Vals.size(), " values, not 1");
  return Vals[0];
}

Status computeStft(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                   const Parallel &Par) {
  const TensorView &X = In[0], &Y = Out[0];
  const bool HasWindow = In.size() > 2 && In[2].Data, HasLength = In.size() > 3 && In[3].Data;
  if (X.rank() != 3 || (X.Dims[2] != 1 && X.Dims[2] != 2))
    return runError("stft", "signal ", joinInts(X.Dims), " is not [batch, length, 1 | 2]");
  ASSIGN_OR_RETURN(const int64_t Step, scalarInt(In[1], "frame_step"));
  int64_t FrameLength = -1;
  if (HasLength) {
    ASSIGN_OR_RETURN(FrameLength, scalarInt(In[3], "frame_length"));
  }
  ASSIGN_OR_RETURN(const bool Onesided, stftOnesided(N));
  ASSIGN_OR_RETURN(const StftGeometry G, stftGeometry(N, X.Dims[1], Step, FrameLength,
                                                      HasWindow ? In[2].Dims.at(0) : -1, Onesided));
  const std::vector<int64_t> OutDims = {X.Dims[0], G.Frames, G.Bins, 2};
  if (Y.Dims != OutDims)
    return runError("stft", "output ", joinInts(Y.Dims), " is not ", joinInts(OutDims));
  const int64_t C = X.Dims[2], L = X.Dims[1];
  const TwiddleTable T = makeTwiddles(G.FrameLength);
  visitFloat(X.Type, [&](auto Tag) {
    using E = typename decltype(Tag)::type;
    std::vector<double> Window(static_cast<size_t>(G.FrameLength), 1.0);
    if (HasWindow)
      for (int64_t I = 0; I < G.FrameLength; ++I)
        Window[static_cast<size_t>(I)] = static_cast<double>(static_cast<ComputeT<E>>(In[2].data<const E>()[I]));
    const E *Src = X.data<const E>();
    E *Dst = Y.data<E>();
    Par.forRange(static_cast<size_t>(X.Dims[0] * G.Frames), 1, [&](size_t Begin, size_t End) {
      const size_t FL = static_cast<size_t>(G.FrameLength);
      std::vector<double> Re(FL), Im(FL), ORe(FL), OIm(FL);
      for (size_t Frame = Begin; Frame < End; ++Frame) {
        const int64_t B = static_cast<int64_t>(Frame) / G.Frames, F = static_cast<int64_t>(Frame) % G.Frames;
        for (int64_t I = 0; I < G.FrameLength; ++I) {
          const E *P = Src + (B * L + F * G.Step + I) * C;
          Re[static_cast<size_t>(I)] = static_cast<double>(static_cast<ComputeT<E>>(P[0])) * Window[static_cast<size_t>(I)];
          Im[static_cast<size_t>(I)] =
              C == 2 ? static_cast<double>(static_cast<ComputeT<E>>(P[1])) * Window[static_cast<size_t>(I)] : 0.0;
        }
        directDft(T, Re.data(), Im.data(), G.FrameLength, G.Bins, false, ORe.data(), OIm.data());
        E *Row = Dst + static_cast<int64_t>(Frame) * G.Bins * 2;
        for (int64_t K = 0; K < G.Bins; ++K) {
          Row[2 * K] = static_cast<E>(static_cast<ComputeT<E>>(ORe[static_cast<size_t>(K)]));
          Row[2 * K + 1] = static_cast<E>(static_cast<ComputeT<E>>(OIm[static_cast<size_t>(K)]));
        }
      }
    });
  });
  return Status::ok();
}

Status inferStft(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(FloatTypes()), "signal"));
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 1, {ElementType::I32, ElementType::I64}, "frame_step"));
  if (Ctx.hasInput(2))
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
  if (Ctx.hasInput(3))
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 3, {ElementType::I32, ElementType::I64}, "frame_length"));
  ASSIGN_OR_RETURN(const bool Onesided, stftOnesided(Ctx.N));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  if (X.getRank() != 3 || (X[2].isConst() && X[2].value() != 1 && X[2].value() != 2))
    return Ctx.error(ErrorCode::Shape, "signal ", X.toString(), " is not [batch, length, 1 | 2]");
  if (Ctx.hasInput(2) && Ctx.Inputs[2].Shape.getRank() != 1)
    return Ctx.error(ErrorCode::Shape, "window ", Ctx.Inputs[2].Shape.toString(), " is not 1-D");
  std::vector<Expr> Out = {X[0], Ctx.newSymbol(), Ctx.newSymbol(), Expr(2)};
  const bool WindowKnown = !Ctx.hasInput(2) || Ctx.Inputs[2].Shape[0].isConst();
  const bool LengthKnown = !Ctx.hasInput(3) || isConstInput(Ctx, 3);
  if (isConstInput(Ctx, 1) && WindowKnown && LengthKnown && X[1].isConst()) {
    ASSIGN_OR_RETURN(const std::vector<int64_t> Step, constInts(Ctx, 1));
    int64_t FrameLength = -1;
    if (Ctx.hasInput(3)) {
      ASSIGN_OR_RETURN(const std::vector<int64_t> V, constInts(Ctx, 3));
      FrameLength = V.at(0);
    }
    ASSIGN_OR_RETURN(const StftGeometry G,
                     stftGeometry(Ctx.N, X[1].value(), Step.at(0), FrameLength,
                                  Ctx.hasInput(2) ? Ctx.Inputs[2].Shape[0].value() : -1, Onesided));
    Out[1] = Expr(static_cast<long long>(G.Frames));
    Out[2] = Expr(static_cast<long long>(G.Bins));
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = TensorShape(Out);
  return Status::ok();
}

OpSchema stftSchema() {
  OpSchema S;
  S.OpType = "STFT";
  S.MinInputs = 2;
  S.MaxInputs = 4;
  S.Infer = inferStft;
  return S;
}

OpKernels stftKernels() {
  OpKernels K;
  K.OpType = "STFT";
  K.Variants.push_back(computeVariant("any_stft__ref", 0, computeStft));
  K.TestCases = [] {
    const auto scalar = [](int64_t V) { return valuesInput({}, {static_cast<double>(V)}, ElementType::I64, true); };
    return std::vector<OpTestCase>{
        withOpset(testCase("length_only", {tensorInput({2, 40, 1}), scalar(6), omittedInput(), scalar(12)}), 17),
        withOpset(testCase("window", {tensorInput({1, 33, 1}), scalar(4), constInput({10})}), 17),
        withOpset(testCase("complex_twosided", {tensorInput({1, 20, 2}), scalar(5), constInput({8}), scalar(8)},
                           {{"onesided", attrInt(0)}}),
                  17),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(STFT, stftSchema());
OPT_REGISTER_KERNELS(STFT, stftKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
