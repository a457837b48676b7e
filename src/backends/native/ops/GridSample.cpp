// GridSample (opsets 16-22): samples X [N, C, D1..Dk] at the normalized coordinates of grid
// [N, O1..Ok, k] (last entry = first spatial dim reversed: x, y, z), with nearest / linear / cubic
// interpolation (opset 16's bilinear / bicubic too), zeros / border / reflection padding and
// align_corners. Any k >= 1. Per output point the taps (index and weight per spatial dim) are
// found once and applied to every channel; the points are split over the pool.
#include <cmath>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

enum class GridMode { Nearest, Linear, Cubic };
enum class GridPadding { Zeros, Border, Reflection };

struct GridSampleAttrs {
  GridMode Mode = GridMode::Linear;
  GridPadding Padding = GridPadding::Zeros;
  bool AlignCorners = false;
};

Result<GridSampleAttrs> parseGridSampleAttrs(const Node &N) {
  GridSampleAttrs A;
  ASSIGN_OR_RETURN(const std::string Mode, N.getString("mode", N.OpsetVersion > 0 && N.OpsetVersion < 20 ? "bilinear" : "linear"));
  if (Mode == "nearest")
    A.Mode = GridMode::Nearest;
  else if (Mode == "linear" || Mode == "bilinear")
    A.Mode = GridMode::Linear;
  else if (Mode == "cubic" || Mode == "bicubic")
    A.Mode = GridMode::Cubic;
  else
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'mode' value '", Mode,
                     "' is not 'nearest', 'linear' or 'cubic'");
  ASSIGN_OR_RETURN(const std::string Pad, N.getString("padding_mode", "zeros"));
  if (Pad == "zeros")
    A.Padding = GridPadding::Zeros;
  else if (Pad == "border")
    A.Padding = GridPadding::Border;
  else if (Pad == "reflection")
    A.Padding = GridPadding::Reflection;
  else
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'padding_mode' value '", Pad,
                     "' is not 'zeros', 'border' or 'reflection'");
  ASSIGN_OR_RETURN(const int64_t Align, N.getInt("align_corners", 0));
  if (Align != 0 && Align != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'align_corners' value ", Align, " is not 0 or 1");
  A.AlignCorners = Align == 1;
  return A;
}

Status inferGridSample(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(FloatTypes()), "X"));
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 1, elementTypes(FloatTypes()), "grid"));
  ASSIGN_OR_RETURN(const GridSampleAttrs A, parseGridSampleAttrs(Ctx.N));
  (void)A;
  const TensorShape &X = Ctx.Inputs[0].Shape, &G = Ctx.Inputs[1].Shape;
  const size_t R = X.getRank();
  if (R < 3 || G.getRank() != R || (G[0].isConst() && X[0].isConst() && G[0].value() != X[0].value()) ||
      (G[R - 1].isConst() && G[R - 1].value() != static_cast<int64_t>(R - 2)))
    return Ctx.error(ErrorCode::Shape, "grid ", G.toString(), " is not [N, spatial..., ", R >= 2 ? R - 2 : 0,
                     "] for X ", X.toString());
  std::vector<Expr> Out = {X[0], X[1]};
  for (size_t I = 1; I + 1 < R; ++I)
    Out.push_back(G[I]);
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = TensorShape(Out);
  return Status::ok();
}

OpSchema gridSampleSchema() {
  OpSchema S;
  S.OpType = "GridSample";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = inferGridSample;
  return S;
}

double loadAny(const TensorView &V, size_t I) {
  switch (V.Type) {
  case ElementType::F64: return V.data<const double>()[I];
  case ElementType::F16: return static_cast<float>(V.data<const float16>()[I]);
  case ElementType::BF16: return static_cast<float>(V.data<const bfloat16>()[I]);
  default: return V.data<const float>()[I];
  }
}

/// Reflects X into [Lo, Hi] by bouncing off the nearer border (PyTorch's rule).
float reflect(float X, float Lo, float Hi) {
  const float Range = Hi - Lo;
  if (Range <= 0)
    return Lo;
  if (X < Lo) {
    const float D = Lo - X;
    const int64_t N = static_cast<int64_t>(D / Range);
    const float R = D - static_cast<float>(N) * Range;
    return N % 2 == 0 ? Lo + R : Hi - R;
  }
  if (X > Hi) {
    const float D = X - Hi;
    const int64_t N = static_cast<int64_t>(D / Range);
    const float R = D - static_cast<float>(N) * Range;
    return N % 2 == 0 ? Hi - R : Lo + R;
  }
  return X;
}

void cubicCoeffs(float T, float *C) {
  const float A = -0.75f;
  T = std::fabs(T);
  const float T1 = T + 1, T2 = 1 - T, T3 = 2 - T;
  C[0] = ((A * T1 - 5 * A) * T1 + 8 * A) * T1 - 4 * A;
  C[1] = ((A + 2) * T - (A + 3)) * T * T + 1;
  C[2] = ((A + 2) * T2 - (A + 3)) * T2 * T2 + 1;
  C[3] = ((A * T3 - 5 * A) * T3 + 8 * A) * T3 - 4 * A;
}

/// The taps of one spatial dim: up to 4 (index, weight); an index -1 reads zero (zeros padding).
struct DimTaps {
  int Count = 0;
  int64_t Index[4];
  float Weight[4];
};

DimTaps dimTaps(const GridSampleAttrs &A, float Norm, int64_t Size) {
  const float Lo = A.AlignCorners ? 0.0f : -0.5f, Hi = A.AlignCorners ? Size - 1.0f : Size - 0.5f;
  float X = A.AlignCorners ? (Norm + 1) / 2.0f * (Size - 1) : ((Norm + 1) * Size - 1) / 2.0f;
  if (A.Mode == GridMode::Nearest)
    X = std::nearbyint(X); // ties to even, as PyTorch
  if (X < Lo || X > Hi) {
    if (A.Padding == GridPadding::Border)
      X = std::min(std::max(X, 0.0f), Size - 1.0f);
    else if (A.Padding == GridPadding::Reflection)
      X = reflect(X, Lo, Hi);
  }
  // Index of a tap after padding: clamp (border), reflect (reflection) or -1 = zero.
  const auto pad = [&](int64_t I) -> int64_t {
    if (I >= 0 && I < Size)
      return I;
    if (A.Padding == GridPadding::Zeros)
      return -1;
    if (A.Padding == GridPadding::Border)
      return std::min<int64_t>(std::max<int64_t>(I, 0), Size - 1);
    return static_cast<int64_t>(reflect(static_cast<float>(I), Lo, Hi));
  };
  DimTaps T;
  if (A.Mode == GridMode::Nearest) {
    T.Count = 1;
    T.Index[0] = pad(static_cast<int64_t>(X));
    T.Weight[0] = 1;
    return T;
  }
  const float F = std::floor(X);
  const int64_t I0 = static_cast<int64_t>(F);
  const float Frac = X - F;
  if (A.Mode == GridMode::Linear) {
    T.Count = 2;
    T.Index[0] = pad(I0), T.Index[1] = pad(I0 + 1);
    T.Weight[0] = 1 - Frac, T.Weight[1] = Frac;
    return T;
  }
  T.Count = 4;
  cubicCoeffs(Frac, T.Weight);
  for (int K = 0; K < 4; ++K)
    T.Index[K] = pad(I0 - 1 + K);
  return T;
}

template <typename T> Status runGridSample(const GridSampleAttrs &A, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Grid = Ctx.Inputs[1], &Y = Ctx.Outputs[0];
  const size_t R = X.rank(), K = R - 2;
  if (R < 3 || Grid.rank() != R || Grid.Dims[0] != X.Dims[0] || Grid.Dims[R - 1] != static_cast<int64_t>(K))
    return runError("gridsample", "grid ", joinInts(Grid.Dims), " does not match X ", joinInts(X.Dims));
  const int64_t N = X.Dims[0], C = X.Dims[1], InSize = product(X.Dims, 2, R);
  const int64_t Points = product(Grid.Dims, 1, R - 1);
  const T *In = X.data<const T>();
  T *Out = Y.data<T>();
  using CT = ComputeT<T>;
  forRangeMaybe(Ctx, Par, static_cast<size_t>(N * Points), std::max<int64_t>(1, 256 / std::max<int64_t>(1, C)),
                [&](size_t Lo, size_t Hi) {
                  std::vector<DimTaps> Taps(K);
                  std::vector<int> Odo(K);
                  for (size_t NP = Lo; NP < Hi; ++NP) {
                    const int64_t Nn = static_cast<int64_t>(NP) / Points, P = static_cast<int64_t>(NP) % Points;
                    // grid[n, p, j] holds the coordinate of spatial dim K - 1 - j.
                    for (size_t D = 0; D < K; ++D)
                      Taps[D] = dimTaps(A, static_cast<float>(loadAny(Grid, static_cast<size_t>(NP * K + (K - 1 - D)))),
                                        X.Dims[2 + D]);
                    for (int64_t Ch = 0; Ch < C; ++Ch) {
                      const T *Plane = In + (Nn * C + Ch) * InSize;
                      CT Sum = 0;
                      std::fill(Odo.begin(), Odo.end(), 0);
                      // Every combination of taps: the product of their weights times the element.
                      for (;;) {
                        CT W = 1;
                        int64_t Off = 0;
                        bool Zero = false;
                        for (size_t D = 0; D < K; ++D) {
                          const int64_t I = Taps[D].Index[Odo[D]];
                          Zero |= I < 0;
                          Off = Off * X.Dims[2 + D] + I;
                          W *= Taps[D].Weight[Odo[D]];
                        }
                        if (!Zero)
                          Sum += W * static_cast<CT>(Plane[Off]);
                        size_t D = K;
                        while (D > 0 && ++Odo[D - 1] == Taps[D - 1].Count)
                          Odo[--D] = 0;
                        if (D == 0)
                          break;
                      }
                      Out[(Nn * C + Ch) * Points + P] = static_cast<T>(Sum);
                    }
                  }
                });
  return Status::ok();
}

template <typename T> void addGridSampleVariants(OpKernels &K) {
  const ElementType ET = ElementTypeOf<T>::value;
  for (bool Par : {false, true}) {
    K.Variants.push_back({std::string(toString(ET)) + "_gridsample__" + (Par ? "parallel" : "ref"), Par ? 10 : 0,
                          [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); },
                          [Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                            ASSIGN_OR_RETURN(const GridSampleAttrs A, parseGridSampleAttrs(I.N));
                            return makeKernel<FunctionKernel>(
                                [A, Par](const KernelContext &C) { return runGridSample<T>(A, C, Par); });
                          }});
  }
}

std::vector<OpTestCase> gridSampleCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto G = [](std::vector<int64_t> D) {
    TestInput I = tensorInput(std::move(D));
    I.Low = -1.3, I.High = 1.3; // some points outside, to exercise the padding modes
    return I;
  };
  std::vector<OpTestCase> C;
  for (const char *Mode : {"nearest", "linear", "cubic"})
    for (const char *Pad : {"zeros", "border", "reflection"})
      for (int64_t Align : {0, 1})
        C.push_back(withOpset(testCase(std::string(Mode) + "_" + Pad + (Align ? "_align" : ""),
                                       {X({2, 3, 5, 4}), G({2, 6, 7, 2})},
                                       {{"mode", attrString(Mode)}, {"padding_mode", attrString(Pad)},
                                        {"align_corners", attrInt(Align)}}),
                              22));
  C.push_back(withOpset(testCase("volumetric_linear", {X({1, 2, 3, 4, 5}), G({1, 3, 2, 4, 3})}), 22));
  C.push_back(withOpset(testCase("opset16_bicubic", {X({1, 1, 4, 4}), G({1, 3, 3, 2})},
                                 {{"mode", attrString("bicubic")}}),
                        16));
  C.push_back(withOpset(testCase("f64", {tensorInput({1, 2, 3, 3}, ElementType::F64), G({1, 4, 4, 2})}), 22));
  C.push_back(withOpset(testCase("f16", {tensorInput({1, 2, 3, 3}, ElementType::F16), G({1, 4, 4, 2})}), 22));
  C.push_back(withOpset(testCase("bf16", {tensorInput({1, 2, 3, 3}, ElementType::BF16), G({1, 4, 4, 2})}), 22));
  return C;
}

OpKernels gridSampleKernels() {
  OpKernels K;
  K.OpType = "GridSample";
  addGridSampleVariants<float>(K);
  addGridSampleVariants<double>(K);
  addGridSampleVariants<float16>(K);
  addGridSampleVariants<bfloat16>(K);
  K.TestCases = gridSampleCases;
  return K;
}

OPT_REGISTER_SCHEMA(GridSample, gridSampleSchema());
OPT_REGISTER_KERNELS(GridSample, gridSampleKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
