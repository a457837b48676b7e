// Sliding-window geometry shared by Conv, MaxPool and AveragePool: attribute parsing and
// validation (kernel_shape, strides, dilations, pads, auto_pad, ceil_mode), output sizes as Expr
// arithmetic for shape inference and as integers for kernels, and SAME_* padding at run time.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "backends/native/ops/common/OpUtil.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

struct WindowAttrs {
  std::string AutoPad = "NOTSET";
  std::vector<int64_t> Kernel, Strides, Dilations;
  std::vector<int64_t> Pads; ///< Begins of every spatial dim, then ends (ONNX order).
  bool CeilMode = false;

  size_t spatialRank() const { return Kernel.size(); }
  int64_t effectiveKernel(size_t I) const { return (Kernel[I] - 1) * Dilations[I] + 1; }
};

/// Parses the window attributes of N for Spatial spatial dims. KernelFromWeights (Conv) is used
/// when kernel_shape is absent; pooling ops require kernel_shape.
inline Result<WindowAttrs> parseWindowAttrs(const Node &N, size_t Spatial, const std::vector<int64_t> *KernelFromWeights,
                                            bool AllowCeilMode) {
  WindowAttrs W;
  const auto bad = [&](const char *Attr, const std::vector<int64_t> &V, const std::string &Why) {
    return makeError(ErrorCode::Model, N.describe(), ": attribute '", Attr, "' value ", joinInts(V), " ", Why);
  };
  ASSIGN_OR_RETURN(W.AutoPad, N.getString("auto_pad", "NOTSET"));
  if (W.AutoPad != "NOTSET" && W.AutoPad != "SAME_UPPER" && W.AutoPad != "SAME_LOWER" && W.AutoPad != "VALID")
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'auto_pad' value '", W.AutoPad,
                     "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");

  if (N.hasAttr("kernel_shape")) {
    ASSIGN_OR_RETURN(W.Kernel, N.getInts("kernel_shape", {}));
    if (KernelFromWeights && W.Kernel != *KernelFromWeights)
      return bad("kernel_shape", W.Kernel, "does not match the weight's spatial dims " + joinInts(*KernelFromWeights));
  } else if (KernelFromWeights) {
    W.Kernel = *KernelFromWeights;
  } else {
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'kernel_shape' is required");
  }
  if (W.Kernel.size() != Spatial)
    return bad("kernel_shape", W.Kernel,
               "has rank " + std::to_string(W.Kernel.size()) + " but the input has " + std::to_string(Spatial) +
                   " spatial dims");
  for (int64_t K : W.Kernel)
    if (K <= 0)
      return bad("kernel_shape", W.Kernel, "must be positive");

  ASSIGN_OR_RETURN(W.Strides, N.getInts("strides", std::vector<int64_t>(Spatial, 1)));
  ASSIGN_OR_RETURN(W.Dilations, N.getInts("dilations", std::vector<int64_t>(Spatial, 1)));
  ASSIGN_OR_RETURN(W.Pads, N.getInts("pads", std::vector<int64_t>(2 * Spatial, 0)));
  if (W.Strides.size() != Spatial)
    return bad("strides", W.Strides, "must have " + std::to_string(Spatial) + " values");
  if (W.Dilations.size() != Spatial)
    return bad("dilations", W.Dilations, "must have " + std::to_string(Spatial) + " values");
  if (W.Pads.size() != 2 * Spatial)
    return bad("pads", W.Pads, "must have " + std::to_string(2 * Spatial) + " values");
  for (int64_t S : W.Strides)
    if (S <= 0)
      return bad("strides", W.Strides, "must be positive");
  for (int64_t D : W.Dilations)
    if (D <= 0)
      return bad("dilations", W.Dilations, "must be positive");
  for (int64_t P : W.Pads)
    if (P < 0)
      return bad("pads", W.Pads, "must not be negative");
  if (W.AutoPad != "NOTSET" && N.hasAttr("pads"))
    for (int64_t P : W.Pads)
      if (P != 0)
        return makeError(ErrorCode::Model, N.describe(), ": attributes 'pads' ", joinInts(W.Pads),
                         " and 'auto_pad' ", W.AutoPad, " cannot be used together");
  if (W.AutoPad != "NOTSET")
    std::fill(W.Pads.begin(), W.Pads.end(), 0);

  int64_t Ceil = 0;
  if (AllowCeilMode) {
    ASSIGN_OR_RETURN(Ceil, N.getInt("ceil_mode", 0));
    if (Ceil != 0 && Ceil != 1)
      return makeError(ErrorCode::Model, N.describe(), ": attribute 'ceil_mode' value ", Ceil, " must be 0 or 1");
  }
  W.CeilMode = Ceil == 1;
  return W;
}

inline int64_t floorDivT(int64_t A, int64_t B) {
  int64_t Q = A / B;
  if ((A % B != 0) && ((A < 0) != (B < 0)))
    --Q;
  return Q;
}
inline Expr floorDivT(const Expr &A, const Expr &B) { return A / B; }
inline int64_t minT(int64_t A, int64_t B) { return std::min(A, B); }
inline Expr minT(const Expr &A, const Expr &B) { return min(A, B); }

/// Output size of spatial dim I for input size In (int64_t for kernels, Expr for inference).
template <typename T> T windowOutputSize(const WindowAttrs &W, size_t I, const T &In) {
  const int64_t S = W.Strides[I], EffK = W.effectiveKernel(I);
  if (W.AutoPad == "SAME_UPPER" || W.AutoPad == "SAME_LOWER")
    return floorDivT(In + T(S - 1), T(S));
  const int64_t PadBegin = W.Pads[I], PadSum = W.Pads[I] + W.Pads[I + W.spatialRank()];
  const T Span = In + T(PadSum - EffK);
  if (!W.CeilMode)
    return floorDivT(Span, T(S)) + T(1);
  // ceil_mode: a window that would start inside the end padding is dropped (ONNX / PyTorch).
  return minT(floorDivT(Span + T(S - 1), T(S)) + T(1), floorDivT(In + T(PadBegin - 1), T(S)) + T(1));
}

/// Padding before spatial dim I at run time (SAME_* depends on the concrete input size).
inline int64_t windowPadBegin(const WindowAttrs &W, size_t I, int64_t In, int64_t Out) {
  if (W.AutoPad == "SAME_UPPER" || W.AutoPad == "SAME_LOWER") {
    const int64_t Total = std::max<int64_t>(0, (Out - 1) * W.Strides[I] + W.effectiveKernel(I) - In);
    return W.AutoPad == "SAME_UPPER" ? Total / 2 : Total - Total / 2;
  }
  return W.Pads[I];
}

/// Padding after spatial dim I at run time (only the explicit/SAME padding, not ceil_mode overhang).
inline int64_t windowPadEnd(const WindowAttrs &W, size_t I, int64_t In, int64_t Out) {
  if (W.AutoPad == "SAME_UPPER" || W.AutoPad == "SAME_LOWER") {
    const int64_t Total = std::max<int64_t>(0, (Out - 1) * W.Strides[I] + W.effectiveKernel(I) - In);
    return Total - windowPadBegin(W, I, In, Out);
  }
  return W.Pads[I + W.spatialRank()];
}

/// Shape inference for [N, C, spatial...] -> [N, OutC, out spatial...]; ShapeError when a
/// constant output size would not be positive.
inline Status inferWindowShape(ShapeContext &Ctx, const WindowAttrs &W, const TensorShape &In, const Expr &OutChannels,
                               TensorShape &Out) {
  std::vector<Expr> Dims{In[0], OutChannels};
  for (size_t I = 0; I < W.spatialRank(); ++I) {
    const Expr D = windowOutputSize<Expr>(W, I, In[I + 2]);
    if (D.isConst() && D.value() <= 0)
      return Ctx.error(ErrorCode::Shape, "input ", In.toString(), " is too small for kernel ", joinInts(W.Kernel),
                       " (dilations ", joinInts(W.Dilations), ", pads ", joinInts(W.Pads), "): spatial output dim ",
                       I, " would be ", D.value());
    Dims.push_back(D);
  }
  Out = TensorShape(std::move(Dims));
  return Status::ok();
}

/// Concrete geometry of one run: output sizes and leading pads per spatial dim.
struct WindowGeometry {
  std::vector<int64_t> In, Out, PadBegin, PadEnd;
};

inline WindowGeometry computeWindowGeometry(const WindowAttrs &W, const std::vector<int64_t> &InDims) {
  WindowGeometry G;
  for (size_t I = 0; I < W.spatialRank(); ++I) {
    const int64_t In = InDims[I + 2];
    const int64_t Out = windowOutputSize<int64_t>(W, I, In);
    G.In.push_back(In);
    G.Out.push_back(Out);
    G.PadBegin.push_back(windowPadBegin(W, I, In, Out));
    G.PadEnd.push_back(windowPadEnd(W, I, In, Out));
  }
  return G;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
