// Shared machinery of Resize (opsets 10-19) and Upsample (7, 9): attribute parsing, output sizes
// from scales / sizes (with axes and keep_aspect_ratio_policy), and per-axis interpolation taps
// that follow the ONNX reference (onnx/reference/ops/op_resize.py) exactly: coordinate transform,
// nearest / linear / cubic coefficients (optionally antialiased), exclude_outside, edge clamping
// and tf_crop_and_resize extrapolation. Interpolation is separable: one pass per resized axis, in
// double precision, like the reference.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

struct ResizeAttrs {
  std::string Mode = "nearest";
  std::string CoordMode = "half_pixel";
  std::string NearestMode = "round_prefer_floor"; ///< "simple": opset 10 / Upsample rule
  float CubicA = -0.75f;
  bool ExcludeOutside = false;
  float Extrapolation = 0.0f;
  bool Antialias = false;
  std::vector<int64_t> Axes; ///< empty = all
  std::string KeepAspect = "stretch";
  // Input positions (-1 = none) for this opset.
  int RoiInput = -1, ScalesInput = -1, SizesInput = -1;
  std::vector<float> AttrScales; ///< Upsample-7 'scales' attribute
};

inline bool oneOf(const std::string &V, std::initializer_list<const char *> Options) {
  for (const char *O : Options)
    if (V == O)
      return true;
  return false;
}

/// Parses Resize (IsUpsample = false) or Upsample attributes for the node's opset.
inline Result<ResizeAttrs> parseResizeAttrs(const Node &N, bool IsUpsample) {
  ResizeAttrs A;
  const int Opset = N.OpsetVersion == 0 ? 19 : N.OpsetVersion;
  const auto badStr = [&](const char *Attr, const std::string &V, const char *Allowed) {
    return makeError(ErrorCode::Model, N.describe(), ": attribute '", Attr, "' value '", V, "' is not one of ", Allowed);
  };
  ASSIGN_OR_RETURN(A.Mode, N.getString("mode", "nearest"));
  if (IsUpsample || Opset < 11) {
    if (A.Mode == "bilinear")
      A.Mode = "linear";
    if (!oneOf(A.Mode, {"nearest", "linear"}))
      return badStr("mode", A.Mode, "nearest, linear");
    A.CoordMode = "asymmetric";
    A.NearestMode = "simple";
    if (IsUpsample && Opset < 9) {
      if (!N.hasAttr("scales"))
        return makeError(ErrorCode::Model, N.describe(), ": attribute 'scales' is required");
      ASSIGN_OR_RETURN(A.AttrScales, N.getFloats("scales", {}));
    } else {
      A.ScalesInput = 1;
    }
    return A;
  }
  if (!oneOf(A.Mode, {"nearest", "linear", "cubic"}))
    return badStr("mode", A.Mode, "nearest, linear, cubic");
  A.RoiInput = 1, A.ScalesInput = 2, A.SizesInput = 3;
  ASSIGN_OR_RETURN(A.CoordMode, N.getString("coordinate_transformation_mode", "half_pixel"));
  if (Opset >= 19 ? !oneOf(A.CoordMode, {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                         "asymmetric", "tf_crop_and_resize"})
                  : !oneOf(A.CoordMode, {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                         "tf_crop_and_resize", "tf_half_pixel_for_nn"}))
    return badStr("coordinate_transformation_mode", A.CoordMode,
                  Opset >= 19 ? "half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, "
                                "tf_crop_and_resize"
                              : "half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_crop_and_resize, "
                                "tf_half_pixel_for_nn");
  ASSIGN_OR_RETURN(A.NearestMode, N.getString("nearest_mode", "round_prefer_floor"));
  if (!oneOf(A.NearestMode, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}))
    return badStr("nearest_mode", A.NearestMode, "round_prefer_floor, round_prefer_ceil, floor, ceil");
  ASSIGN_OR_RETURN(A.CubicA, N.getFloat("cubic_coeff_a", -0.75f));
  ASSIGN_OR_RETURN(const int64_t Exclude, N.getInt("exclude_outside", 0));
  A.ExcludeOutside = Exclude != 0;
  ASSIGN_OR_RETURN(A.Extrapolation, N.getFloat("extrapolation_value", 0.0f));
  if (Opset >= 18) {
    ASSIGN_OR_RETURN(const int64_t Anti, N.getInt("antialias", 0));
    A.Antialias = Anti != 0;
    if (A.Antialias && A.Mode == "nearest")
      return makeError(ErrorCode::Model, N.describe(), ": attribute 'antialias' is not supported with mode 'nearest'");
    ASSIGN_OR_RETURN(A.Axes, N.getInts("axes", {}));
    ASSIGN_OR_RETURN(A.KeepAspect, N.getString("keep_aspect_ratio_policy", "stretch"));
    if (!oneOf(A.KeepAspect, {"stretch", "not_larger", "not_smaller"}))
      return badStr("keep_aspect_ratio_policy", A.KeepAspect, "stretch, not_larger, not_smaller");
  }
  return A;
}

/// Concrete plan of one resize: output dims and per-axis scale and roi.
struct ResizePlan {
  std::vector<int64_t> Out;
  std::vector<double> Scales;
  std::vector<double> Roi; ///< 2 * rank (starts, then ends); empty when not given
};

/// Computes the plan from the input dims and the scales / sizes / roi values (any may be empty).
inline Result<ResizePlan> planResize(const Node &N, const ResizeAttrs &A, const std::vector<int64_t> &In,
                                     std::vector<double> Scales, const std::vector<int64_t> &Sizes,
                                     const std::vector<double> &Roi) {
  const size_t R = In.size();
  std::vector<int64_t> Axes;
  for (int64_t Ax : A.Axes) {
    ASSIGN_OR_RETURN(const int64_t Norm, normalizeAxis(N, "axes", Ax, static_cast<int64_t>(R)));
    Axes.push_back(Norm);
  }
  const bool HasAxes = !Axes.empty();
  if (!HasAxes)
    for (size_t I = 0; I < R; ++I)
      Axes.push_back(static_cast<int64_t>(I));
  if (!A.AttrScales.empty())
    Scales.assign(A.AttrScales.begin(), A.AttrScales.end());
  if (!Scales.empty() && !Sizes.empty())
    return makeError(ErrorCode::Model, N.describe(), ": only one of the inputs 'scales' and 'sizes' may be given");
  if (Scales.empty() && Sizes.empty())
    return makeError(ErrorCode::Model, N.describe(), ": one of the inputs 'scales' and 'sizes' must be given");
  const size_t Want = Axes.size();
  ResizePlan P;
  if (!Roi.empty()) {
    if (Roi.size() != 2 * Want)
      return makeError(ErrorCode::Shape, N.describe(), ": input 'roi' has ", Roi.size(), " values, expected ", 2 * Want);
    P.Roi.assign(2 * R, 0.0);
    for (size_t I = 0; I < R; ++I)
      P.Roi[R + I] = 1.0;
    for (size_t I = 0; I < Want; ++I) {
      P.Roi[static_cast<size_t>(Axes[I])] = Roi[I];
      P.Roi[R + static_cast<size_t>(Axes[I])] = Roi[Want + I];
    }
  }
  P.Scales.assign(R, 1.0);
  P.Out = In;
  if (!Scales.empty()) {
    if (Scales.size() != Want)
      return makeError(ErrorCode::Shape, N.describe(), ": input 'scales' has ", Scales.size(), " values, expected ", Want);
    for (size_t I = 0; I < Want; ++I) {
      if (!(Scales[I] > 0))
        return makeError(ErrorCode::Model, N.describe(), ": scale ", Scales[I], " must be positive");
      const size_t Ax = static_cast<size_t>(Axes[I]);
      P.Scales[Ax] = Scales[I];
      P.Out[Ax] = static_cast<int64_t>(std::floor(Scales[I] * static_cast<double>(In[Ax])));
    }
    return P;
  }
  if (Sizes.size() != Want)
    return makeError(ErrorCode::Shape, N.describe(), ": input 'sizes' has ", Sizes.size(), " values, expected ", Want);
  for (size_t I = 0; I < Want; ++I) {
    if (Sizes[I] < 0)
      return makeError(ErrorCode::Model, N.describe(), ": size ", Sizes[I], " must not be negative");
    const size_t Ax = static_cast<size_t>(Axes[I]);
    P.Out[Ax] = Sizes[I];
    P.Scales[Ax] = In[Ax] ? static_cast<double>(Sizes[I]) / static_cast<double>(In[Ax]) : 1.0;
  }
  if (A.KeepAspect != "stretch") {
    double S = A.KeepAspect == "not_larger" ? INFINITY : -INFINITY;
    for (int64_t Ax : Axes)
      S = A.KeepAspect == "not_larger" ? std::min(S, P.Scales[Ax]) : std::max(S, P.Scales[Ax]);
    for (int64_t Ax : Axes) {
      P.Scales[Ax] = S;
      P.Out[Ax] = static_cast<int64_t>(S * static_cast<double>(In[Ax]) + 0.5);
    }
  }
  (void)HasAxes;
  return P;
}

/// Interpolation taps of one axis: Taps entries per output position.
struct AxisTaps {
  int64_t Taps = 1;
  std::vector<int64_t> Index;
  std::vector<double> Weight;
  std::vector<bool> Extrapolated;
};

inline std::vector<double> cubicCoeffs(double R, double A) {
  return {((A * (R + 1) - 5 * A) * (R + 1) + 8 * A) * (R + 1) - 4 * A, ((A + 2) * R - (A + 3)) * R * R + 1,
          ((A + 2) * (1 - R) - (A + 3)) * (1 - R) * (1 - R) + 1,
          ((A * ((1 - R) + 1) - 5 * A) * ((1 - R) + 1) + 8 * A) * ((1 - R) + 1) - 4 * A};
}

inline std::vector<double> cubicCoeffsAntialias(double R, double Scale, double A) {
  Scale = std::min(Scale, 1.0);
  const auto Coeff = [A](double X) {
    X = std::fabs(X);
    const double X2 = X * X, X3 = X * X2;
    if (X <= 1)
      return (A + 2) * X3 - (A + 3) * X2 + 1;
    if (X < 2)
      return A * X3 - 5 * A * X2 + 8 * A * X - 4 * A;
    return 0.0;
  };
  const int64_t Start = static_cast<int64_t>(std::floor(-2 / Scale) + 1), End = 2 - Start;
  std::vector<double> C;
  double Sum = 0;
  for (int64_t I = Start; I < End; ++I) {
    C.push_back(Coeff(Scale * (static_cast<double>(I) - R)));
    Sum += C.back();
  }
  for (double &V : C)
    V /= Sum;
  return C;
}

inline std::vector<double> linearCoeffsAntialias(double R, double Scale) {
  Scale = std::min(Scale, 1.0);
  const int64_t Start = static_cast<int64_t>(std::floor(-1 / Scale) + 1), Footprint = 2 - 2 * Start;
  std::vector<double> C;
  double Sum = 0;
  for (int64_t I = Start; I < Start + Footprint; ++I) {
    C.push_back(std::min(1.0, std::max(0.0, 1 - std::fabs((static_cast<double>(I) - R) * Scale))));
    Sum += C.back();
  }
  for (double &V : C)
    V /= Sum;
  return C;
}

/// Taps of output positions [0, Out) of an axis of size In.
inline AxisTaps axisTaps(const ResizeAttrs &A, int64_t In, int64_t Out, double Scale, double Roi0, double Roi1,
                         bool HasRoi) {
  AxisTaps T;
  const double OutW = Scale * static_cast<double>(In), InD = static_cast<double>(In);
  const bool Nearest = A.Mode == "nearest";
  T.Taps = Nearest ? 1 : 0;
  T.Extrapolated.assign(static_cast<size_t>(Out), false);
  for (int64_t O = 0; O < Out; ++O) {
    const double Y = static_cast<double>(O);
    double X;
    const std::string &M = A.CoordMode;
    if (M == "align_corners")
      X = OutW == 1 ? 0.0 : Y * (InD - 1) / (OutW - 1);
    else if (M == "asymmetric")
      X = Y / Scale;
    else if (M == "tf_crop_and_resize") {
      const double R0 = HasRoi ? Roi0 : 0.0, R1 = HasRoi ? Roi1 : 1.0;
      X = OutW == 1 ? (R1 - R0) * (InD - 1) / 2 : Y * (R1 - R0) * (InD - 1) / (OutW - 1);
      X += R0 * (InD - 1);
      T.Extrapolated[static_cast<size_t>(O)] = X < 0 || X > InD - 1;
    } else if (M == "pytorch_half_pixel")
      X = OutW == 1 ? -0.5 : (Y + 0.5) / Scale - 0.5;
    else if (M == "half_pixel_symmetric") {
      const double Adjust = static_cast<double>(Out) / OutW, Center = InD / 2, Offset = Center * (1 - Adjust);
      X = Offset + (Y + 0.5) / Scale - 0.5;
    } else if (M == "tf_half_pixel_for_nn")
      X = (Y + 0.5) / Scale;
    else // half_pixel
      X = (Y + 0.5) / Scale - 0.5;
    const double XInt = std::floor(X);
    const bool IsInt = X == XInt;
    const double Ratio = IsInt ? 1.0 : X - XInt;
    if (Nearest) {
      int64_t Idx;
      if (A.NearestMode == "simple") {
        Idx = Scale < 1 ? static_cast<int64_t>(std::ceil(X)) : static_cast<int64_t>(XInt);
      } else {
        // Taps [XInt - 1, XInt] for an integer X (ratio 1 picks XInt), else [XInt, XInt + 1].
        bool Upper;
        if (IsInt)
          Upper = true;
        else if (A.NearestMode == "round_prefer_floor")
          Upper = Ratio > 0.5;
        else if (A.NearestMode == "round_prefer_ceil")
          Upper = Ratio >= 0.5;
        else if (A.NearestMode == "floor")
          Upper = false;
        else
          Upper = true;
        const int64_t Start = static_cast<int64_t>(XInt) + (IsInt ? -1 : 0);
        Idx = Start + (Upper ? 1 : 0);
      }
      T.Index.push_back(std::min<int64_t>(In - 1, std::max<int64_t>(0, Idx)));
      T.Weight.push_back(1.0);
      continue;
    }
    std::vector<double> C;
    if (A.Mode == "linear")
      C = A.Antialias ? linearCoeffsAntialias(Ratio, Scale) : std::vector<double>{1 - Ratio, Ratio};
    else
      C = A.Antialias ? cubicCoeffsAntialias(Ratio, Scale, A.CubicA) : cubicCoeffs(Ratio, A.CubicA);
    const int64_t N = static_cast<int64_t>(C.size());
    T.Taps = N;
    const int64_t Start = static_cast<int64_t>(XInt) + (IsInt ? -(N / 2) : -(N / 2) + 1);
    if (A.ExcludeOutside) {
      double Sum = 0;
      for (int64_t K = 0; K < N; ++K) {
        if (Start + K < 0 || Start + K >= In)
          C[static_cast<size_t>(K)] = 0;
        Sum += C[static_cast<size_t>(K)];
      }
      if (Sum == 0)
        Sum = 1;
      for (double &V : C)
        V /= Sum;
    }
    for (int64_t K = 0; K < N; ++K) {
      T.Index.push_back(std::min<int64_t>(In - 1, std::max<int64_t>(0, Start + K)));
      T.Weight.push_back(C[static_cast<size_t>(K)]);
    }
  }
  return T;
}

/// Runs the separable resize of X into Y (f32 / f16 views) following Plan.
inline Status runResize(const ResizeAttrs &A, const ResizePlan &P, const TensorView &X, const TensorView &Y,
                        const KernelContext &Ctx, bool Par) {
  const size_t R = X.rank();
  if (Y.Dims != P.Out)
    return runError("resize", "output ", joinInts(Y.Dims), " differs from the planned ", joinInts(P.Out));
  std::vector<int64_t> Dims = X.Dims;
  std::vector<double> Cur(X.elementCount());
  for (size_t I = 0; I < Cur.size(); ++I)
    Cur[I] = loadFloat(X, I);
  for (size_t Ax = 0; Ax < R; ++Ax) {
    const bool RoiTrivial = P.Roi.empty() || (std::fabs(P.Roi[Ax]) < 1e-9 && std::fabs(P.Roi[Ax + R] - 1.0) < 1e-9);
    if (std::fabs(P.Scales[Ax] - 1.0) <= 1e-9 && P.Out[Ax] == Dims[Ax] && RoiTrivial)
      continue;
    const int64_t In = Dims[Ax], Out = P.Out[Ax];
    const AxisTaps T = axisTaps(A, In, Out, P.Scales[Ax], P.Roi.empty() ? 0 : P.Roi[Ax],
                                P.Roi.empty() ? 1 : P.Roi[Ax + R], !P.Roi.empty());
    const int64_t Outer = product(Dims, 0, Ax), Inner = product(Dims, Ax + 1, R);
    std::vector<double> Next(static_cast<size_t>(Outer * Out * Inner));
    if (In == 0 && Out > 0)
      return runError("resize", "cannot resize an empty axis to ", Out);
    forRangeMaybe(Ctx, Par, static_cast<size_t>(Outer * Out), std::max<int64_t>(1, 4096 / std::max<int64_t>(Inner, 1)),
                  [&](size_t Lo, size_t Hi) {
                    for (size_t L = Lo; L < Hi; ++L) {
                      const int64_t Ob = static_cast<int64_t>(L) / Out, O = static_cast<int64_t>(L) % Out;
                      double *Dst = Next.data() + (Ob * Out + O) * Inner;
                      if (T.Extrapolated[static_cast<size_t>(O)]) {
                        for (int64_t I = 0; I < Inner; ++I)
                          Dst[I] = A.Extrapolation;
                        continue;
                      }
                      for (int64_t I = 0; I < Inner; ++I)
                        Dst[I] = 0;
                      for (int64_t K = 0; K < T.Taps; ++K) {
                        const double W = T.Weight[static_cast<size_t>(O * T.Taps + K)];
                        const double *Src = Cur.data() + (Ob * In + T.Index[static_cast<size_t>(O * T.Taps + K)]) * Inner;
                        if (T.Taps == 1) {
                          for (int64_t I = 0; I < Inner; ++I)
                            Dst[I] = Src[I];
                        } else {
                          for (int64_t I = 0; I < Inner; ++I)
                            Dst[I] += W * Src[I];
                        }
                      }
                    }
                  });
    Cur.swap(Next);
    Dims[Ax] = Out;
  }
  forRangeMaybe(Ctx, Par, Cur.size(), 16384, [&](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I)
      storeFloat(Y, I, static_cast<float>(Cur[I]));
  });
  return Status::ok();
}

/// Reads a float / int tensor view as doubles (scales, roi).
inline std::vector<double> viewToDoubles(const TensorView &V) {
  std::vector<double> Out(V.Data ? V.elementCount() : 0);
  for (size_t I = 0; I < Out.size(); ++I) {
    switch (V.Type) {
    case ElementType::F16: Out[I] = static_cast<float>(V.data<const float16>()[I]); break;
    case ElementType::F64: Out[I] = V.data<const double>()[I]; break;
    default: Out[I] = V.data<const float>()[I]; break;
    }
  }
  return Out;
}

/// Constant values of optional input I (empty when omitted or an empty tensor); Known = false when
/// the input is present but its value is not known yet.
inline std::vector<double> constDoubles(const ShapeContext &Ctx, int I, bool &Known) {
  if (I < 0 || !Ctx.hasInput(static_cast<size_t>(I)))
    return {};
  const ValueInfo &V = Ctx.Inputs[static_cast<size_t>(I)];
  if (!V.Const) {
    // An input whose shape says it is empty carries no values either way.
    if (V.Shape.getRank() == 1 && V.Shape[0].isConst() && V.Shape[0].value() == 0)
      return {};
    Known = false;
    return {};
  }
  auto R = V.Const->toDoubleVector();
  if (!R.isOk()) {
    Known = false;
    return {};
  }
  return *R;
}

inline Status inferResizeLike(ShapeContext &Ctx, bool IsUpsample) {
  RETURN_IF_ERROR(requireFloatInput(Ctx, 0));
  ASSIGN_OR_RETURN(const ResizeAttrs A, parseResizeAttrs(Ctx.N, IsUpsample));
  if (A.ScalesInput >= 0 && Ctx.hasInput(static_cast<size_t>(A.ScalesInput)))
    RETURN_IF_ERROR(requireInputType(Ctx, static_cast<size_t>(A.ScalesInput), {ElementType::F32}));
  if (A.SizesInput >= 0 && Ctx.hasInput(static_cast<size_t>(A.SizesInput)))
    RETURN_IF_ERROR(requireInputType(Ctx, static_cast<size_t>(A.SizesInput), {ElementType::I64}));
  if (A.RoiInput >= 0 && Ctx.hasInput(static_cast<size_t>(A.RoiInput)))
    RETURN_IF_ERROR(requireInputType(Ctx, static_cast<size_t>(A.RoiInput), {ElementType::F32, ElementType::F16, ElementType::F64}));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  bool Known = true;
  const std::vector<double> Scales = constDoubles(Ctx, A.ScalesInput, Known);
  const std::vector<double> SizesD = constDoubles(Ctx, A.SizesInput, Known);
  const std::vector<double> Roi = constDoubles(Ctx, A.RoiInput, Known);
  std::vector<int64_t> Sizes(SizesD.begin(), SizesD.end());
  if (!Known || X.isDynamic()) {
    // Dims not resized keep their expression; resized ones get fresh symbols.
    std::vector<Expr> Dims;
    for (size_t I = 0; I < X.getRank(); ++I) {
      bool Unit = false;
      if (Known && A.Axes.empty() && Scales.size() == X.getRank())
        Unit = Scales[I] == 1.0;
      Dims.push_back(Unit ? X[I] : Ctx.newSymbol());
    }
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return Status::ok();
  }
  auto P = planResize(Ctx.N, A, X.getDims(), Scales, Sizes, A.CoordMode == "tf_crop_and_resize" ? Roi : std::vector<double>());
  if (!P.isOk())
    return P.status();
  Ctx.Outputs[0].Shape = TensorShape::fromDims(P->Out);
  return Status::ok();
}

inline Status runResizeKernel(const ResizeAttrs &A, const Node &N, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0];
  const auto input = [&](int I) -> const TensorView * {
    return I >= 0 && hasRunInput(Ctx, static_cast<size_t>(I)) ? &Ctx.Inputs[static_cast<size_t>(I)] : nullptr;
  };
  std::vector<double> Scales, Roi;
  std::vector<int64_t> Sizes;
  if (const TensorView *S = input(A.ScalesInput))
    Scales = viewToDoubles(*S);
  if (const TensorView *S = input(A.SizesInput))
    Sizes.assign(S->data<const int64_t>(), S->data<const int64_t>() + S->elementCount());
  if (const TensorView *S = input(A.RoiInput))
    if (A.CoordMode == "tf_crop_and_resize")
      Roi = viewToDoubles(*S);
  ASSIGN_OR_RETURN(const ResizePlan P, planResize(N, A, X.Dims, Scales, Sizes, Roi));
  return runResize(A, P, X, Ctx.Outputs[0], Ctx, Par);
}

inline OpSchema resizeSchema(bool IsUpsample) {
  OpSchema S;
  S.OpType = IsUpsample ? "Upsample" : "Resize";
  S.MinInputs = 1;
  S.MaxInputs = IsUpsample ? 2 : 4;
  S.Infer = [IsUpsample](ShapeContext &Ctx) { return inferResizeLike(Ctx, IsUpsample); };
  return S;
}

inline OpKernels resizeKernels(bool IsUpsample) {
  OpKernels K;
  K.OpType = IsUpsample ? "Upsample" : "Resize";
  addFloatVariants(K, IsUpsample ? "upsample" : "resize", [IsUpsample](const KernelCreateInfo &I) -> Result<FloatRunFn> {
    ASSIGN_OR_RETURN(const ResizeAttrs A, parseResizeAttrs(I.N, IsUpsample));
    const Node N = I.N;
    return FloatRunFn([A, N](const KernelContext &C, bool Par) { return runResizeKernel(A, N, C, Par); });
  });
  return K;
}

inline TestInput f32Values(std::vector<int64_t> Dims, std::vector<double> V) {
  return valuesInput(std::move(Dims), std::move(V), ElementType::F32, true);
}
inline TestInput i64Values(std::vector<int64_t> Dims, std::vector<double> V) {
  return valuesInput(std::move(Dims), std::move(V), ElementType::I64, true);
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
