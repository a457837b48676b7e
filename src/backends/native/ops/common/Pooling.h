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

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// MaxPool / AveragePool kernel over [N, C, spatial...] f32. Reducer supplies
/// init/add/finish(Acc, ValidCount, PaddedCount). The reference walks any spatial rank one output
/// element at a time; the fast path (2-D only) splits planes over the pool with hoisted bounds.
/// The taps [K0, K1) of a window of Taps taps (dilation Dil) starting at Origin that land inside
/// [0, Size): the window's valid part along one spatial dim.
inline void validTaps(int64_t Origin, int64_t Taps, int64_t Dil, int64_t Size, int64_t &K0, int64_t &K1) {
  K0 = 0;
  K1 = Taps;
  while (K0 < Taps && Origin + K0 * Dil < 0)
    ++K0;
  while (K1 > K0 && Origin + (K1 - 1) * Dil >= Size)
    --K1;
}

template <typename Reducer> class PoolKernel : public Kernel {
public:
  PoolKernel(std::string Name, WindowAttrs W, Reducer R, bool Fast2D)
      : Name(std::move(Name)), W(std::move(W)), R(R), Fast2D(Fast2D) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    const size_t S = W.spatialRank();
    if (X.rank() != S + 2 || Y.rank() != S + 2)
      return runError(Name.c_str(), "input ", joinInts(X.Dims), " does not have ", S, " spatial dims");
    const WindowGeometry G = computeWindowGeometry(W, X.Dims);
    for (size_t I = 0; I < S; ++I)
      if (Y.Dims[I + 2] != G.Out[I])
        return runError(Name.c_str(), "output ", joinInts(Y.Dims), " does not match the window geometry");
    const int64_t Planes = X.Dims[0] * X.Dims[1];
    const int64_t InPlane = product(X.Dims, 2, X.rank()), OutPlane = product(Y.Dims, 2, Y.rank());
    const float *In = X.data<float>();
    float *Out = Y.data<float>();
    if (Fast2D && S == 2) {
      Ctx.Par.forRange(static_cast<size_t>(Planes), 1, [&](size_t Lo, size_t Hi) {
        for (size_t P = Lo; P < Hi; ++P)
          plane2D(G, In + static_cast<int64_t>(P) * InPlane, Out + static_cast<int64_t>(P) * OutPlane);
      });
      return Status::ok();
    }
    for (int64_t P = 0; P < Planes; ++P)
      planeND(G, In + P * InPlane, Out + P * OutPlane, OutPlane);
    return Status::ok();
  }

private:
  void planeND(const WindowGeometry &G, const float *In, float *Out, int64_t OutPlane) const {
    const size_t S = W.spatialRank();
    const int64_t Taps = product(W.Kernel, 0, S);
    std::vector<int64_t> O(S), K(S);
    for (int64_t OI = 0; OI < OutPlane; ++OI) {
      int64_t Rem = OI;
      for (size_t D = S; D-- > 0;) {
        O[D] = Rem % G.Out[D];
        Rem /= G.Out[D];
      }
      auto Acc = R.init();
      int64_t Valid = 0, Padded = 0;
      for (int64_t T = 0; T < Taps; ++T) {
        int64_t TR = T, Offset = 0;
        bool Inside = true, InPad = true;
        for (size_t D = S; D-- > 0;) {
          K[D] = TR % W.Kernel[D];
          TR /= W.Kernel[D];
        }
        for (size_t D = 0; D < S; ++D) {
          const int64_t Pos = O[D] * W.Strides[D] - G.PadBegin[D] + K[D] * W.Dilations[D];
          Inside &= Pos >= 0 && Pos < G.In[D];
          // Positions inside the explicit padding count for count_include_pad; ceil_mode
          // overhang beyond the end padding does not.
          InPad &= Pos >= -G.PadBegin[D] && Pos < G.In[D] + G.PadEnd[D];
          Offset = Offset * G.In[D] + Pos;
        }
        Padded += InPad;
        if (Inside) {
          Acc = R.add(Acc, In[Offset]);
          ++Valid;
        }
      }
      Out[OI] = R.finish(Acc, Valid, Padded);
    }
  }

  void plane2D(const WindowGeometry &G, const float *In, float *Out) const {
    const int64_t H = G.In[0], Wd = G.In[1], OH = G.Out[0], OW = G.Out[1];
    const int64_t SH = W.Strides[0], SW = W.Strides[1], DH = W.Dilations[0], DW = W.Dilations[1];
    const int64_t KH = W.Kernel[0], KW = W.Kernel[1];
    for (int64_t Oh = 0; Oh < OH; ++Oh) {
      const int64_t H0 = Oh * SH - G.PadBegin[0];
      // Taps of the window row range that land inside the input / inside the padding.
      int64_t KH0, KH1, PadRows = 0;
      validTaps(H0, KH, DH, H, KH0, KH1);
      for (int64_t Kh = 0; Kh < KH; ++Kh) {
        const int64_t Pos = H0 + Kh * DH;
        PadRows += Pos >= -G.PadBegin[0] && Pos < H + G.PadEnd[0];
      }
      for (int64_t Ow = 0; Ow < OW; ++Ow) {
        const int64_t W0 = Ow * SW - G.PadBegin[1];
        int64_t KW0, KW1, PadCols = 0;
        validTaps(W0, KW, DW, Wd, KW0, KW1);
        for (int64_t Kw = 0; Kw < KW; ++Kw) {
          const int64_t Pos = W0 + Kw * DW;
          PadCols += Pos >= -G.PadBegin[1] && Pos < Wd + G.PadEnd[1];
        }
        auto Acc = R.init();
        for (int64_t Kh = KH0; Kh < KH1; ++Kh) {
          const float *Row = In + (H0 + Kh * DH) * Wd + W0;
          for (int64_t Kw = KW0; Kw < KW1; ++Kw)
            Acc = R.add(Acc, Row[Kw * DW]);
        }
        const int64_t Valid = std::max<int64_t>(0, KH1 - KH0) * std::max<int64_t>(0, KW1 - KW0);
        Out[Oh * OW + Ow] = R.finish(Acc, Valid, PadRows * PadCols);
      }
    }
  }

  std::string Name;
  WindowAttrs W;
  Reducer R;
  bool Fast2D;
};

/// Shape inference shared by MaxPool and AveragePool.
inline Status inferPool(ShapeContext &Ctx, bool AllowCeilMode) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32}));
  const TensorShape &In = Ctx.Inputs[0].Shape;
  if (In.getRank() < 3)
    return Ctx.error(ErrorCode::Shape, "input must be [N, C, spatial...], got ", In.toString());
  ASSIGN_OR_RETURN(const WindowAttrs W, parseWindowAttrs(Ctx.N, In.getRank() - 2, nullptr, AllowCeilMode));
  Ctx.Outputs[0].Type = ElementType::F32;
  return inferWindowShape(Ctx, W, In, In[1], Ctx.Outputs[0].Shape);
}

/// Window cases both pooling ops run (2-D, plus 1-D and 3-D for the reference path).
/// Count values in [-1, 1) (a fixed sequence) with a NaN at every Every-th element, the first at
/// Every / 2: an input for window kernels' NaN propagation tests.
inline std::vector<double> nanSprinkled(size_t Count, size_t Every) {
  std::vector<double> V(Count);
  for (size_t I = 0; I < Count; ++I)
    V[I] = (I % Every == Every / 2) ? static_cast<double>(NAN) : static_cast<double>((I * 7919u) % 2000u) / 1000.0 - 1.0;
  return V;
}

inline std::vector<OpTestCase> poolingCases() {
  const auto ints = [](std::vector<int64_t> V) { return attrInts(std::move(V)); };
  return {
      testCase("k2s2", {tensorInput({1, 2, 6, 6})}, {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}}),
      testCase("k3s1_pads", {tensorInput({2, 3, 5, 6})}, {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("asym_pads_strides", {tensorInput({1, 2, 7, 8})},
               {{"kernel_shape", ints({3, 2})}, {"strides", ints({2, 3})}, {"pads", ints({0, 1, 2, 0})}}),
      testCase("ceil_mode", {tensorInput({1, 1, 6, 7})},
               {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"ceil_mode", attrInt(1)}}),
      testCase("ceil_mode_pads", {tensorInput({1, 2, 5, 5})},
               {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})},
                {"ceil_mode", attrInt(1)}}),
      testCase("dilations", {tensorInput({1, 2, 7, 7})}, {{"kernel_shape", ints({2, 3})}, {"dilations", ints({2, 2})}}),
      testCase("same_upper", {tensorInput({1, 2, 5, 6})},
               {{"kernel_shape", ints({3, 2})}, {"strides", ints({2, 2})}, {"auto_pad", attrString("SAME_UPPER")}}),
      testCase("same_lower", {tensorInput({1, 2, 5, 6})},
               {{"kernel_shape", ints({2, 3})}, {"auto_pad", attrString("SAME_LOWER")}}),
      testCase("valid", {tensorInput({1, 2, 5, 6})}, {{"kernel_shape", ints({2, 2})}, {"auto_pad", attrString("VALID")}}),
      testCase("many_planes", {tensorInput({2, 32, 12, 12})}, {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}}),
      testCase("1d", {tensorInput({1, 3, 9})}, {{"kernel_shape", ints({3})}, {"strides", ints({2})}, {"pads", ints({1, 1})}}),
      testCase("3d", {tensorInput({1, 2, 4, 5, 6})},
               {{"kernel_shape", ints({2, 2, 3})}, {"strides", ints({1, 2, 2})}, {"pads", ints({0, 1, 1, 1, 0, 1})}}),
  };
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
