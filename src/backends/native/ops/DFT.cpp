// DFT (opsets 17, 20): discrete Fourier transform along one signal axis of X [..., 1 | 2] (last
// dim: real, or real and imaginary parts). dft_length zero-pads or truncates; 'onesided' keeps
// the N/2 + 1 non-redundant bins (forward) or, with 'inverse', reads a one-sided spectrum and
// returns the real signal (last dim 1; irfft). The inverse is scaled by 1/N. The axis is an
// attribute (default 1) before opset 20, an optional input (default -2) since.
// Lengths whose prime factors are at most 11 run the mixed-radix FFT (Fft.h), rounding as the
// ONNX reference (numpy.fft) does: forward transforms in double, inverse ones in the element
// precision (float for f16/bf16/f32); other lengths run the direct O(N^2) sum in double.
#include <type_traits>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/FloatDispatch.h"
#include "backends/native/ops/common/Fft.h"
#include "backends/native/ops/common/Spectral.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct DftAttrs {
  bool Inverse = false, Onesided = false;
};

Result<DftAttrs> dftAttrs(const Node &N) {
  DftAttrs A;
  ASSIGN_OR_RETURN(const int64_t Inverse, N.getInt("inverse", 0));
  ASSIGN_OR_RETURN(const int64_t Onesided, N.getInt("onesided", 0));
  if ((Inverse != 0 && Inverse != 1) || (Onesided != 0 && Onesided != 1))
    return makeError(ErrorCode::Model, N.describe(), ": attributes 'inverse' (", Inverse, ") and 'onesided' (",
                     Onesided, ") must be 0 or 1");
  A.Inverse = Inverse == 1;
  A.Onesided = Onesided == 1;
  return A;
}

bool axisIsInput(const Node &N) { return N.OpsetVersion == 0 || N.OpsetVersion >= 20; }

/// The signal axis, normalized against the rank of X (which includes the trailing 1 | 2 dim).
Result<int64_t> dftAxis(const Node &N, int64_t Raw, size_t Rank) {
  const int64_t R = static_cast<int64_t>(Rank);
  const int64_t Axis = Raw < 0 ? Raw + R : Raw;
  if (Axis < 0 || Axis > R - 2)
    return makeError(ErrorCode::Model, N.describe(), ": axis ", Raw, " is not a signal axis of a rank-", R,
                     " input (the last dim holds the real/imaginary parts)");
  return Axis;
}

/// Length N of the transform and the bins written along the axis.
struct DftSizes {
  int64_t N = 0, OutCount = 0, OutChannels = 2;
};

Result<DftSizes> dftSizes(const Node &N, const DftAttrs &A, int64_t AxisLen, int64_t Requested /* -1 = none */) {
  DftSizes S;
  S.N = Requested >= 0 ? Requested : (A.Inverse && A.Onesided ? 2 * (AxisLen - 1) : AxisLen);
  if (S.N < 1)
    return makeError(ErrorCode::Shape, N.describe(), ": DFT length ", S.N, " is not positive (axis length ", AxisLen,
                     ")");
  S.OutCount = !A.Inverse && A.Onesided ? S.N / 2 + 1 : S.N;
  S.OutChannels = A.Inverse && A.Onesided ? 1 : 2;
  return S;
}

Status computeDft(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                  const Parallel &Par) {
  const TensorView &X = In[0], &Y = Out[0];
  ASSIGN_OR_RETURN(const DftAttrs A, dftAttrs(N));
  const size_t R = X.rank();
  if (R < 2 || (X.Dims[R - 1] != 1 && X.Dims[R - 1] != 2))
    return runError("dft", "input ", joinInts(X.Dims), " does not end in a dim of 1 or 2");
  int64_t RawAxis = 1;
  if (axisIsInput(N)) {
    RawAxis = -2;
    if (In.size() > 2 && In[2].Data) {
      ASSIGN_OR_RETURN(const std::vector<int64_t> V, readInts(In[2], "axis"));
      RawAxis = V.at(0);
    }
  } else {
    ASSIGN_OR_RETURN(RawAxis, N.getInt("axis", 1));
  }
  ASSIGN_OR_RETURN(const int64_t Axis, dftAxis(N, RawAxis, R));
  int64_t Requested = -1;
  if (In.size() > 1 && In[1].Data) {
    ASSIGN_OR_RETURN(const std::vector<int64_t> V, readInts(In[1], "dft_length"));
    Requested = V.at(0);
  }
  const size_t Ax = static_cast<size_t>(Axis);
  const int64_t L = X.Dims[Ax], C = X.Dims[R - 1];
  ASSIGN_OR_RETURN(const DftSizes S, dftSizes(N, A, L, Requested));
  std::vector<int64_t> OutDims = X.Dims;
  OutDims[Ax] = S.OutCount;
  OutDims[R - 1] = S.OutChannels;
  if (Y.Dims != OutDims)
    return runError("dft", "output ", joinInts(Y.Dims), " is not ", joinInts(OutDims));
  const int64_t Outer = product(X.Dims, 0, Ax), Inner = product(X.Dims, Ax + 1, R - 1);
  const bool RealInput = C == 1;
  visitFloat(X.Type, [&](auto Tag) {
    using E = typename decltype(Tag)::type;
    const E *Src = X.data<const E>();
    E *Dst = Y.data<E>();
    const auto load = [&](int64_t O, int64_t I, int64_t K, int64_t Ch) {
      return static_cast<ComputeT<E>>(Src[((O * L + K) * Inner + I) * C + Ch]);
    };
    const auto store = [&](int64_t O, int64_t I, int64_t K, double Re, double Im) {
      E *P = Dst + ((O * S.OutCount + K) * Inner + I) * S.OutChannels;
      P[0] = static_cast<E>(static_cast<ComputeT<E>>(Re));
      if (S.OutChannels == 2)
        P[1] = static_cast<E>(static_cast<ComputeT<E>>(Im));
    };
    // Line (signal) k < S.N of the transform input: zero-padded, or for irfft the Hermitian
    // spectrum rebuilt from its one-sided half (bins 0 and N/2 real: their imaginary parts do not
    // reach a real signal).
    const auto input = [&](int64_t O, int64_t I, int64_t K, double &Re, double &Im) {
      if (A.Inverse && A.Onesided) {
        const int64_t From = K <= S.N / 2 ? K : S.N - K;
        const bool Inside = From < L, SelfConjugate = From == 0 || 2 * From == S.N;
        Re = Inside ? static_cast<double>(load(O, I, From, 0)) : 0.0;
        const double Imag = Inside && C == 2 && !SelfConjugate ? static_cast<double>(load(O, I, From, 1)) : 0.0;
        Im = K <= S.N / 2 ? Imag : -Imag;
        return;
      }
      const bool Inside = K < L;
      Re = Inside ? static_cast<double>(load(O, I, K, 0)) : 0.0;
      Im = Inside && C == 2 ? static_cast<double>(load(O, I, K, 1)) : 0.0;
    };
    // A real signal's spectrum has real bins 0 and N/2; a real-input transform (what numpy's rfft
    // runs) produces them exactly, so the one-sided output of a real input does too.
    const auto exactlyReal = [&](int64_t K) {
      return RealInput && !A.Inverse && A.Onesided && (K == 0 || 2 * K == S.N);
    };
    // The FFT in precision F: a plan shared by the lines, scratch per chunk of lines.
    const auto runFft = [&](auto PrecisionTag) {
      using F = typename decltype(PrecisionTag)::type;
      const FftPlan<F> Plan(S.N);
      const F Scale = A.Inverse ? F(1) / static_cast<F>(S.N) : F(1);
      Par.forRange(static_cast<size_t>(Outer * Inner), 1, [&](size_t Begin, size_t End) {
        std::vector<FftComplex<F>> Buf(static_cast<size_t>(S.N)), Work(static_cast<size_t>(S.N));
        for (size_t Line = Begin; Line < End; ++Line) {
          const int64_t O = static_cast<int64_t>(Line) / Inner, I = static_cast<int64_t>(Line) % Inner;
          for (int64_t K = 0; K < S.N; ++K) {
            double Re, Im;
            input(O, I, K, Re, Im);
            Buf[static_cast<size_t>(K)] = {static_cast<F>(Re), static_cast<F>(Im)};
          }
          Plan.transform(Buf.data(), Work.data(), A.Inverse, Scale);
          for (int64_t K = 0; K < S.OutCount; ++K) {
            const FftComplex<F> V = Buf[static_cast<size_t>(K)];
            store(O, I, K, V.Re, exactlyReal(K) ? 0.0 : V.Im);
          }
        }
      });
    };
    if (FftPlan<double>::supports(S.N)) {
      // The precision of the ONNX reference (numpy >= 2): its forward fft/rfft run the complex128
      // loop whatever the input (the unit scale is a Python int, which resolves to float64), its
      // ifft/irfft the input's (the 1/N scale is an array scalar of the input's real type).
      if (A.Inverse && !std::is_same<ComputeT<E>, double>::value)
        runFft(TypeTag<float>());
      else
        runFft(TypeTag<double>());
      return;
    }
    const TwiddleTable T = makeTwiddles(S.N);
    Par.forRange(static_cast<size_t>(Outer * Inner), 1, [&](size_t Begin, size_t End) {
      std::vector<double> Re(static_cast<size_t>(S.N)), Im(static_cast<size_t>(S.N)), ORe(static_cast<size_t>(S.N)),
          OIm(static_cast<size_t>(S.N));
      for (size_t Line = Begin; Line < End; ++Line) {
        const int64_t O = static_cast<int64_t>(Line) / Inner, I = static_cast<int64_t>(Line) % Inner;
        const int64_t Count = A.Inverse && A.Onesided ? S.N : std::min(L, S.N);
        for (int64_t K = 0; K < Count; ++K)
          input(O, I, K, Re[static_cast<size_t>(K)], Im[static_cast<size_t>(K)]);
        directDft(T, Re.data(), Im.data(), Count, S.OutCount, A.Inverse, ORe.data(), OIm.data());
        const double Scale = A.Inverse ? 1.0 / static_cast<double>(S.N) : 1.0;
        for (int64_t K = 0; K < S.OutCount; ++K)
          store(O, I, K, ORe[static_cast<size_t>(K)] * Scale,
                exactlyReal(K) ? 0.0 : OIm[static_cast<size_t>(K)] * Scale);
      }
    });
  });
  return Status::ok();
}

Status inferDft(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(FloatTypes()), "input"));
  if (Ctx.hasInput(1))
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 1, {ElementType::I32, ElementType::I64}, "dft_length"));
  if (Ctx.hasInput(2)) {
    if (!axisIsInput(Ctx.N))
      return Ctx.error(ErrorCode::Model, "input 'axis' exists from opset 20 on (this node is opset ",
                       Ctx.N.OpsetVersion, ")");
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 2, {ElementType::I64}, "axis"));
  }
  ASSIGN_OR_RETURN(const DftAttrs A, dftAttrs(Ctx.N));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  const size_t R = X.getRank();
  if (R < 2 || (X[R - 1].isConst() && X[R - 1].value() != 1 && X[R - 1].value() != 2))
    return Ctx.error(ErrorCode::Shape, "input ", X.toString(), " does not end in a dim of 1 (real) or 2 (complex)");
  std::vector<Expr> Out(X.begin(), X.end());
  Out[R - 1] = Expr(A.Inverse && A.Onesided ? 1 : 2);
  // The axis: attribute, constant input, or unknown until run time.
  bool AxisKnown = true;
  int64_t RawAxis = -2;
  if (!axisIsInput(Ctx.N)) {
    ASSIGN_OR_RETURN(RawAxis, Ctx.N.getInt("axis", 1));
  } else if (Ctx.hasInput(2)) {
    AxisKnown = isConstInput(Ctx, 2);
    if (AxisKnown) {
      ASSIGN_OR_RETURN(const std::vector<int64_t> V, constInts(Ctx, 2));
      if (V.size() != 1)
        return Ctx.error(ErrorCode::Shape, "input 'axis' has ", V.size(), " values, not 1");
      RawAxis = V[0];
    }
  }
  if (!AxisKnown) {
    for (size_t I = 0; I + 1 < R; ++I)
      Out[I] = Ctx.newSymbol();
  } else {
    ASSIGN_OR_RETURN(const int64_t Axis, dftAxis(Ctx.N, RawAxis, R));
    const size_t Ax = static_cast<size_t>(Axis);
    Out[Ax] = Ctx.newSymbol();
    int64_t Requested = -1;
    bool LengthKnown = X[Ax].isConst();
    if (Ctx.hasInput(1)) {
      LengthKnown = isConstInput(Ctx, 1);
      if (LengthKnown) {
        ASSIGN_OR_RETURN(const std::vector<int64_t> V, constInts(Ctx, 1));
        if (V.size() != 1)
          return Ctx.error(ErrorCode::Shape, "input 'dft_length' has ", V.size(), " values, not 1");
        Requested = V[0];
      }
    }
    if (LengthKnown) {
      ASSIGN_OR_RETURN(const DftSizes S, dftSizes(Ctx.N, A, X[Ax].isConst() ? X[Ax].value() : 0, Requested));
      Out[Ax] = Expr(static_cast<long long>(S.OutCount));
    }
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = TensorShape(Out);
  return Status::ok();
}

OpSchema dftSchema() {
  OpSchema S;
  S.OpType = "DFT";
  S.MinInputs = 1;
  S.MaxInputs = 3;
  S.Infer = inferDft;
  return S;
}

OpKernels dftKernels() {
  OpKernels K;
  K.OpType = "DFT";
  K.Variants.push_back(computeVariant("any_dft__ref", 0, computeDft));
  K.TestCases = [] {
    const auto axis = [](int64_t A) { return valuesInput({}, {static_cast<double>(A)}, ElementType::I64, true); };
    const auto len = [](int64_t N) { return valuesInput({}, {static_cast<double>(N)}, ElementType::I64, true); };
    return std::vector<OpTestCase>{
        withOpset(testCase("real_axis1", {tensorInput({2, 12, 3, 1}), omittedInput(), axis(1)}), 20),
        withOpset(testCase("complex_default_axis", {tensorInput({3, 7, 2})}), 20),
        withOpset(testCase("rfft_padded", {tensorInput({2, 6, 1}), len(9), axis(-2)}, {{"onesided", attrInt(1)}}), 20),
        withOpset(testCase("inverse_truncated_f64", {tensorInput({4, 5, 2}, ElementType::F64), len(4), axis(1)},
                           {{"inverse", attrInt(1)}}),
                  20),
        withOpset(testCase("irfft", {tensorInput({2, 5, 2}), omittedInput(), axis(1)},
                           {{"inverse", attrInt(1)}, {"onesided", attrInt(1)}}),
                  20),
        withOpset(testCase("opset17_axis_attr", {tensorInput({1, 4, 6, 1})}, {{"axis", attrInt(2)}}), 17),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(DFT, dftSchema());
OPT_REGISTER_KERNELS(DFT, dftKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
