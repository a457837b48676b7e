// MelWeightMatrix (opset 17): the [dft_length / 2 + 1, num_mel_bins] matrix of triangular mel
// filters that maps a one-sided power spectrum to mel bands (audio front-ends). Band edges are
// num_mel_bins + 2 points evenly spaced on the mel scale (2595 * log10(1 + hz / 700)) between the
// edge frequencies, snapped to DFT bins as floor((dft_length + 1) * hz / sample_rate), as the ONNX
// reference does. Output type 'output_datatype' (default float). The shape depends on the input
// values: exact when they are constant, re-inferred at run time otherwise.
#include <cmath>

#include "backends/native/ops/common/ElementwiseCast.h"
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct MelParams {
  int64_t MelBins = 0, DftLength = 0, SampleRate = 0;
  double Lower = 0, Upper = 0;
};

Result<int64_t> melScalarInt(const TensorView &V, const char *What) {
  ASSIGN_OR_RETURN(const std::vector<int64_t> Vals, readInts(V, What));
  if (Vals.size() != 1)
    return makeError(ErrorCode::Shape, "MelWeightMatrix: input '", What, "' has ", Vals.size(), " values, not 1");
  return Vals[0];
}

double melScalarFloat(const TensorView &V) {
  double R = 0;
  visitNumeric(V.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    R = static_cast<double>(static_cast<typename ComputeType<T>::type>(V.data<const T>()[0]));
  });
  return R;
}

Result<MelParams> melParams(const Node &N, const std::vector<TensorView> &In) {
  MelParams P;
  ASSIGN_OR_RETURN(P.MelBins, melScalarInt(In[0], "num_mel_bins"));
  ASSIGN_OR_RETURN(P.DftLength, melScalarInt(In[1], "dft_length"));
  ASSIGN_OR_RETURN(P.SampleRate, melScalarInt(In[2], "sample_rate"));
  if (In[3].elementCount() != 1 || In[4].elementCount() != 1)
    return makeError(ErrorCode::Shape, N.describe(), ": lower_edge_hertz and upper_edge_hertz must be scalars");
  P.Lower = melScalarFloat(In[3]);
  P.Upper = melScalarFloat(In[4]);
  if (P.MelBins < 1 || P.DftLength < 1 || P.SampleRate < 1)
    return makeError(ErrorCode::Shape, N.describe(), ": num_mel_bins ", P.MelBins, ", dft_length ", P.DftLength,
                     " and sample_rate ", P.SampleRate, " must be positive");
  if (!(P.Lower >= 0 && P.Lower < P.Upper))
    return makeError(ErrorCode::Shape, N.describe(), ": edge frequencies ", P.Lower, " .. ", P.Upper,
                     " are not 0 <= lower < upper");
  return P;
}

/// Row-major [DftLength / 2 + 1, MelBins] weights.
Result<std::vector<double>> melWeights(const Node &N, const MelParams &P) {
  const int64_t Rows = P.DftLength / 2 + 1, M = P.MelBins;
  const auto toMel = [](double Hz) { return 2595.0 * std::log1p(Hz / 700.0) / std::log(10.0); };
  const double LowMel = toMel(P.Lower), HighMel = toMel(P.Upper);
  const double Step = (HighMel - LowMel) / static_cast<double>(M + 2);
  std::vector<int64_t> Edge(static_cast<size_t>(M + 2));
  for (int64_t I = 0; I < M + 2; ++I) {
    const double Hz = 700.0 * std::expm1((static_cast<double>(I) * Step + LowMel) / 2595.0 * std::log(10.0));
    Edge[static_cast<size_t>(I)] =
        static_cast<int64_t>(std::floor(static_cast<double>(P.DftLength + 1) * Hz / static_cast<double>(P.SampleRate)));
  }
  if (Edge.back() > Rows || Edge.front() < 0)
    return makeError(ErrorCode::Shape, N.describe(), ": upper_edge_hertz ", P.Upper, " maps past the last of ", Rows,
                     " DFT bins (sample_rate ", P.SampleRate, ")");
  std::vector<double> W(static_cast<size_t>(Rows * M), 0.0);
  const auto at = [&](int64_t R, int64_t C) -> double & { return W[static_cast<size_t>(R * M + C)]; };
  for (int64_t I = 0; I < M; ++I) {
    const int64_t Lo = Edge[static_cast<size_t>(I)], Mid = Edge[static_cast<size_t>(I + 1)],
                  Hi = Edge[static_cast<size_t>(I + 2)];
    if (Mid >= Rows)
      return makeError(ErrorCode::Shape, N.describe(), ": mel band ", I, " centers past the last of ", Rows,
                       " DFT bins");
    if (Mid == Lo)
      at(Mid, I) = 1.0;
    else
      for (int64_t J = Lo; J <= Mid; ++J)
        at(J, I) = static_cast<double>(J - Lo) / static_cast<double>(Mid - Lo);
    for (int64_t J = Mid; J < Hi; ++J)
      at(J, I) = static_cast<double>(Hi - J) / static_cast<double>(Hi - Mid);
  }
  return W;
}

Status computeMelWeightMatrix(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                              const Parallel &) {
  ASSIGN_OR_RETURN(const MelParams P, melParams(N, In));
  ASSIGN_OR_RETURN(const std::vector<double> W, melWeights(N, P));
  const TensorView &Y = Out[0];
  if (Y.Dims != std::vector<int64_t>{P.DftLength / 2 + 1, P.MelBins})
    return runError("melweightmatrix", "output ", joinInts(Y.Dims), " is not [", P.DftLength / 2 + 1, ", ",
                    P.MelBins, "]");
  visitNumeric(Y.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    for (size_t I = 0; I < W.size(); ++I)
      Y.data<T>()[I] = static_cast<T>(static_cast<typename ComputeType<T>::type>(W[I]));
  });
  return Status::ok();
}

Status inferMelWeightMatrix(ShapeContext &Ctx) {
  for (size_t I = 0; I < 3; ++I)
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, I, {ElementType::I32, ElementType::I64},
                                       I == 0 ? "num_mel_bins" : I == 1 ? "dft_length" : "sample_rate"));
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 3, elementTypes(FloatTypes()), "lower_edge_hertz"));
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 4, elementTypes(FloatTypes()), "upper_edge_hertz"));
  ASSIGN_OR_RETURN(const int64_t Code, Ctx.N.getInt("output_datatype", 1));
  ASSIGN_OR_RETURN(const ElementType T, elementTypeFromOnnx(Ctx, "output_datatype", Code));
  if (T == ElementType::Bool)
    return Ctx.error(ErrorCode::Type, "attribute 'output_datatype' must be a numeric type, got bool");
  Ctx.Outputs[0].Type = T;
  Ctx.Outputs[0].Shape = TensorShape({Ctx.newSymbol(), Ctx.newSymbol()});
  bool AllConst = true;
  for (size_t I = 0; I < 5; ++I)
    AllConst &= isConstInput(Ctx, I);
  if (!AllConst)
    return Status::ok();
  std::vector<TensorView> In;
  for (size_t I = 0; I < 5; ++I)
    In.push_back(constView(*Ctx.Inputs[I].Const));
  ASSIGN_OR_RETURN(const MelParams P, melParams(Ctx.N, In));
  ASSIGN_OR_RETURN(const std::vector<double> W, melWeights(Ctx.N, P));
  Ctx.Outputs[0].Shape =
      TensorShape({Expr(static_cast<long long>(P.DftLength / 2 + 1)), Expr(static_cast<long long>(P.MelBins))});
  return foldIfConstant(Ctx, computeMelWeightMatrix);
}

OpSchema melWeightMatrixSchema() {
  OpSchema S;
  S.OpType = "MelWeightMatrix";
  S.MinInputs = S.MaxInputs = 5;
  S.Infer = inferMelWeightMatrix;
  return S;
}

OpKernels melWeightMatrixKernels() {
  OpKernels K;
  K.OpType = "MelWeightMatrix";
  K.Variants.push_back(computeVariant("any_melweightmatrix__ref", 0, computeMelWeightMatrix));
  K.TestCases = [] {
    const auto i = [](double V) { return valuesInput({}, {V}, ElementType::I64, true); };
    const auto f = [](double V) { return valuesInput({}, {V}, ElementType::F32, true); };
    return std::vector<OpTestCase>{
        withOpset(testCase("small", {i(8), i(16), i(8192), f(0), f(4096)}), 17),
        withOpset(testCase("speech_f64", {i(40), i(512), i(16000), f(20), f(7600)}, {{"output_datatype", attrInt(11)}}),
                  17),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(MelWeightMatrix, melWeightMatrixSchema());
OPT_REGISTER_KERNELS(MelWeightMatrix, melWeightMatrixKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
