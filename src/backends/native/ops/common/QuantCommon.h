// Shared pieces of the quantized ops (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv): integer loads/stores with saturation,
// per-tensor / per-axis / blocked parameters (QuantLayout), numpy-broadcast integer matmul and a
// direct integer convolution, both accumulating in int32 like the ONNX reference.
#pragma once

#include <cfenv>
#include <cmath>
#include <limits>

#include "backends/native/ops/common/NormCommon.h"
#include "backends/native/ops/common/Pooling.h"
#include "core/CpuFeatures.h"
#include "core/LowPrecision.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Whether this CPU runs the int8 VPDPBUSD kernels (QLinearConv, MatMulIntegerToFloat): AVX-512 F,
/// BW, VL and VNNI. (passes/Pipeline's Int8Exact gate opens on these or on AVX2.)
inline bool int8VnniAvailable() {
#if defined(__x86_64__)
  static const bool Has = cpuFeatures().avx512Vnni();
  return Has;
#else
  return false;
#endif
}

/// Whether this CPU runs the exact AVX2 int8 kernels (VPMADDWD on operands widened to int16:
/// QLinearConv, MatMulIntegerToFloat), the fallback of the VNNI ones. (passes/Pipeline's Int8Exact
/// gate opens on either.)
inline bool int8Avx2Available() {
#if defined(__x86_64__)
  static const bool Has = cpuFeatures().AVX2;
  return Has;
#else
  return false;
#endif
}

inline bool isQuantType(ElementType T) {
  return T == ElementType::I8 || T == ElementType::U8 || T == ElementType::I16 || T == ElementType::U16;
}

inline void quantRange(ElementType T, int64_t &Lo, int64_t &Hi) {
  switch (T) {
  case ElementType::I8: Lo = -128, Hi = 127; break;
  case ElementType::U8: Lo = 0, Hi = 255; break;
  case ElementType::I16: Lo = -32768, Hi = 32767; break;
  case ElementType::U16: Lo = 0, Hi = 65535; break;
  case ElementType::I4: Lo = -8, Hi = 7; break;
  case ElementType::U4: Lo = 0, Hi = 15; break;
  case ElementType::I2: Lo = -2, Hi = 1; break;
  case ElementType::U2: Lo = 0, Hi = 3; break;
  default: Lo = std::numeric_limits<int32_t>::min(), Hi = std::numeric_limits<int32_t>::max(); break;
  }
}

inline int32_t loadInt(const TensorView &V, size_t I) {
  switch (V.Type) {
  case ElementType::I8: return V.data<const int8_t>()[I];
  case ElementType::U8: return V.data<const uint8_t>()[I];
  case ElementType::I16: return V.data<const int16_t>()[I];
  case ElementType::U16: return V.data<const uint16_t>()[I];
  case ElementType::I32: return V.data<const int32_t>()[I];
  case ElementType::I4: case ElementType::I2: return V.data<const int8_t>()[I];  // stored sign-extended
  case ElementType::U4: case ElementType::U2: return V.data<const uint8_t>()[I];
  default: return 0;
  }
}

/// Stores V saturated to the element type's range.
inline void storeSaturated(const TensorView &Out, size_t I, int64_t V) {
  int64_t Lo, Hi;
  quantRange(Out.Type, Lo, Hi);
  V = std::min(Hi, std::max(Lo, V));
  switch (Out.Type) {
  case ElementType::I8: Out.data<int8_t>()[I] = static_cast<int8_t>(V); break;
  case ElementType::U8: Out.data<uint8_t>()[I] = static_cast<uint8_t>(V); break;
  case ElementType::I16: Out.data<int16_t>()[I] = static_cast<int16_t>(V); break;
  case ElementType::U16: Out.data<uint16_t>()[I] = static_cast<uint16_t>(V); break;
  case ElementType::I32: Out.data<int32_t>()[I] = static_cast<int32_t>(V); break;
  case ElementType::I4: case ElementType::I2: Out.data<int8_t>()[I] = static_cast<int8_t>(V); break;
  case ElementType::U4: case ElementType::U2: Out.data<uint8_t>()[I] = static_cast<uint8_t>(V); break;
  default: break;
  }
}

/// How scale / zero point elements map onto x's elements. x is viewed as [Outer, Len, Inner]
/// around Axis; the parameters are one value (per tensor), Len values (per axis), or, blocked,
/// x's shape with ceil(Len / Block) along Axis (one value per Block consecutive positions).
struct QuantLayout {
  enum class Kind { PerTensor, PerAxis, Blocked } K = Kind::PerTensor;
  int64_t Axis = 0, Block = 0;
  int64_t Len = 1, Inner = 1, Blocks = 1;

  size_t paramIndex(size_t I) const {
    if (K == Kind::PerTensor)
      return 0;
    const int64_t E = static_cast<int64_t>(I);
    const int64_t A = (E / Inner) % Len;
    if (K == Kind::PerAxis)
      return static_cast<size_t>(A);
    const int64_t Outer = E / (Inner * Len), In = E % Inner;
    return static_cast<size_t>((Outer * Blocks + A / Block) * Inner + In);
  }
};

/// The layout of scale (and zero point: same shape) for x, from 'axis' and 'block_size'. A
/// ModelError naming the node and the values for a bad block_size (negative, or not matching the
/// scale's shape: ceil(x[axis] / block_size) must equal scale[axis]) or mismatched shapes.
inline Result<QuantLayout> makeQuantLayout(const Node &N, const std::vector<int64_t> &X,
                                           const std::vector<int64_t> &Scale, const std::vector<int64_t> *Zp) {
  QuantLayout L;
  if (Zp && *Zp != Scale && !(product(*Zp, 0, Zp->size()) == 1 && product(Scale, 0, Scale.size()) == 1))
    return makeError(ErrorCode::Shape, N.describe(), ": zero point shape ", joinInts(*Zp),
                     " differs from the scale shape ", joinInts(Scale));
  ASSIGN_OR_RETURN(const int64_t Block, N.getInt("block_size", 0));
  ASSIGN_OR_RETURN(const int64_t AxisAttr, N.getInt("axis", 1));
  const int64_t Rank = static_cast<int64_t>(X.size());
  if (Block < 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'block_size' value ", Block,
                     " must be positive (blocked quantization) or 0");
  const int64_t Count = product(Scale, 0, Scale.size());
  if (Count == 1 && Scale.size() <= 1)
    return L; // per tensor: any axis, any rank (one value, as the ONNX reference)
  if (Rank == 0)
    return makeError(ErrorCode::Shape, N.describe(), ": a scalar input needs a scalar scale, got ", joinInts(Scale));
  const int64_t Axis = AxisAttr < 0 ? AxisAttr + Rank : AxisAttr;
  if (Axis < 0 || Axis >= Rank)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'axis' value ", AxisAttr, " is out of range for rank ",
                     Rank);
  L.Axis = Axis;
  L.Len = X[static_cast<size_t>(Axis)];
  L.Inner = product(X, static_cast<size_t>(Axis) + 1, X.size());
  if (Block == 0) {
    if (Scale.size() > 1)
      return makeError(ErrorCode::Model, N.describe(), ": scale ", joinInts(Scale), " has rank ", Scale.size(),
                       " (blocked quantization) but attribute 'block_size' is 0; it must be positive");
    if (Scale.size() != 1 || Scale[0] != L.Len)
      return makeError(ErrorCode::Shape, N.describe(), ": scale ", joinInts(Scale),
                       " must be a scalar or 1-D with ", L.Len, " values (axis ", Axis, " of ", joinInts(X),
                       "); set 'block_size' for blocked quantization");
    L.K = QuantLayout::Kind::PerAxis;
    return L;
  }
  const int64_t Blocks = (L.Len + Block - 1) / Block;
  bool Ok = Scale.size() == X.size();
  for (size_t D = 0; Ok && D < X.size(); ++D)
    Ok = Scale[D] == (static_cast<int64_t>(D) == Axis ? Blocks : X[D]);
  if (!Ok)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'block_size' value ", Block, " on axis ", Axis,
                     " of input ", joinInts(X), " needs a scale of shape ",
                     [&] {
                       std::vector<int64_t> Want = X;
                       Want[static_cast<size_t>(Axis)] = Blocks;
                       return joinInts(Want);
                     }(),
                     " (ceil(", L.Len, " / ", Block, ") = ", Blocks, " blocks), got ", joinInts(Scale));
  L.K = QuantLayout::Kind::Blocked;
  L.Block = Block;
  L.Blocks = Blocks;
  return L;
}

/// Shape-inference check of the layout (inputs 0, ScaleI, ZpI) when every shape is known.
inline Status checkQuantLayout(const ShapeContext &Ctx, size_t ScaleI, size_t ZpI) {
  const auto Known = [&](size_t I) { return !Ctx.Inputs[I].Shape.isDynamic(); };
  if (!Known(0) || !Known(ScaleI) || (Ctx.hasInput(ZpI) && !Known(ZpI)))
    return Status::ok();
  std::vector<int64_t> Zp;
  if (Ctx.hasInput(ZpI))
    Zp = Ctx.Inputs[ZpI].Shape.getDims();
  return makeQuantLayout(Ctx.N, Ctx.Inputs[0].Shape.getDims(), Ctx.Inputs[ScaleI].Shape.getDims(),
                         Ctx.hasInput(ZpI) ? &Zp : nullptr)
      .status();
}

/// Element types QuantizeLinear produces and DequantizeLinear reads (besides i32 for the latter).
inline bool isQuantizedType(ElementType T) {
  return isQuantType(T) || lowp::isSubByteInt(T) || T == ElementType::F8E4M3FN || T == ElementType::F8E4M3FNUZ ||
         T == ElementType::F8E5M2 || T == ElementType::F8E5M2FNUZ || T == ElementType::F4E2M1;
}

/// Round half to even (numpy rint), saturating to int64 first.
inline int64_t roundHalfEven(double V) {
  if (std::isnan(V))
    return 0;
  V = std::min(9.0e18, std::max(-9.0e18, V));
  return static_cast<int64_t>(std::nearbyint(V));
}

/// Values of an optional integer tensor (zero points), or {0} when absent.
inline std::vector<int32_t> loadZeroPoints(const KernelContext &Ctx, size_t I) {
  if (!hasRunInput(Ctx, I))
    return {0};
  const TensorView &V = Ctx.Inputs[I];
  std::vector<int32_t> Out(V.elementCount());
  for (size_t E = 0; E < Out.size(); ++E)
    Out[E] = loadInt(V, E);
  return Out.empty() ? std::vector<int32_t>{0} : Out;
}

/// Element count of a parameter known at inference, or -1.
inline int64_t paramCount(const ShapeContext &Ctx, size_t I) {
  if (!Ctx.hasInput(I))
    return 1;
  const Expr N = productExpr(Ctx.Inputs[I].Shape, 0, Ctx.Inputs[I].Shape.getRank());
  return N.isConst() ? N.value() : -1;
}

/// numpy matmul output shape of A x B (1-D operands promoted and dropped again).
inline Status inferMatMulShape(ShapeContext &Ctx, size_t IA, size_t IB, TensorShape &Out) {
  const TensorShape &A = Ctx.Inputs[IA].Shape, &B = Ctx.Inputs[IB].Shape;
  if (A.getRank() == 0 || B.getRank() == 0)
    return Ctx.error(ErrorCode::Shape, "operands must have rank >= 1, got ", A.toString(), " and ", B.toString());
  const size_t RA = A.getRank(), RB = B.getRank();
  const Expr KA = A[RA - 1], KB = RB == 1 ? B[0] : B[RB - 2];
  if (KA.isConst() && KB.isConst() && KA.value() != KB.value())
    return Ctx.error(ErrorCode::Shape, "inner dimensions differ: ", A.toString(), " x ", B.toString());
  const TensorShape BatchA(std::vector<Expr>(A.begin(), A.end() - std::min<size_t>(RA, 2)));
  const TensorShape BatchB(std::vector<Expr>(B.begin(), B.end() - std::min<size_t>(RB, 2)));
  auto Batch = broadcastShapes(BatchA, BatchB);
  if (!Batch.isOk())
    return Ctx.error(ErrorCode::Shape, "batch dimensions of ", A.toString(), " and ", B.toString(), " cannot broadcast");
  std::vector<Expr> Dims = Batch->dims();
  if (RA >= 2)
    Dims.push_back(A[RA - 2]);
  if (RB >= 2)
    Dims.push_back(B[RB - 1]);
  Out = TensorShape(std::move(Dims));
  return Status::ok();
}

/// Integer matmul with zero points: Acc[b, m, n] = sum_k (A - azp[m]) * (B - bzp[n]) in int32.
/// AZp has 1 or M values (per row), BZp 1 or N (per column). Calls Emit(OutIndex, Acc, M, N).
template <typename EmitFn>
Status intMatMul(const char *Name, const KernelContext &Ctx, const TensorView &A, const TensorView &B,
                 const std::vector<int32_t> &AZp, const std::vector<int32_t> &BZp, const TensorView &Y, bool Par,
                 EmitFn Emit) {
  std::vector<int64_t> DA = A.Dims, DB = B.Dims;
  if (DA.empty() || DB.empty())
    return runError(Name, "scalar operand");
  if (DA.size() == 1)
    DA.insert(DA.begin(), 1);
  if (DB.size() == 1)
    DB.push_back(1);
  const int64_t M = DA[DA.size() - 2], K = DA.back(), N = DB.back();
  if (DB[DB.size() - 2] != K)
    return runError(Name, "inner dimensions differ: ", joinInts(A.Dims), " x ", joinInts(B.Dims));
  if ((AZp.size() != 1 && static_cast<int64_t>(AZp.size()) != M) ||
      (BZp.size() != 1 && static_cast<int64_t>(BZp.size()) != N))
    return runError(Name, "zero points must be scalars or per row (A) / per column (B)");
  const size_t BR = std::max(DA.size(), DB.size()) - 2;
  std::vector<int64_t> Batch(BR, 1), SA(BR, 0), SB(BR, 0);
  for (size_t I = 0; I < BR; ++I) {
    const int64_t OA = static_cast<int64_t>(I) - static_cast<int64_t>(BR - (DA.size() - 2));
    const int64_t OB = static_cast<int64_t>(I) - static_cast<int64_t>(BR - (DB.size() - 2));
    const int64_t DimA = OA >= 0 ? DA[static_cast<size_t>(OA)] : 1, DimB = OB >= 0 ? DB[static_cast<size_t>(OB)] : 1;
    Batch[I] = std::max(DimA, DimB);
    if (DimA != Batch[I] && DimA != 1)
      return runError(Name, "batch dims do not broadcast");
    if (DimB != Batch[I] && DimB != 1)
      return runError(Name, "batch dims do not broadcast");
  }
  // Row-major strides over the batch dims of each operand (0 where broadcast).
  int64_t StA = M * K, StB = K * N;
  for (size_t I = BR; I-- > 0;) {
    const int64_t OA = static_cast<int64_t>(I) - static_cast<int64_t>(BR - (DA.size() - 2));
    const int64_t OB = static_cast<int64_t>(I) - static_cast<int64_t>(BR - (DB.size() - 2));
    const int64_t DimA = OA >= 0 ? DA[static_cast<size_t>(OA)] : 1, DimB = OB >= 0 ? DB[static_cast<size_t>(OB)] : 1;
    SA[I] = DimA == 1 ? 0 : StA;
    SB[I] = DimB == 1 ? 0 : StB;
    StA *= DimA;
    StB *= DimB;
  }
  const int64_t Batches = product(Batch, 0, BR);
  if (static_cast<int64_t>(Y.elementCount()) != Batches * M * N)
    return runError(Name, "output ", joinInts(Y.Dims), " does not match ", joinInts(A.Dims), " x ", joinInts(B.Dims));
  forRangeMaybe(Ctx, Par, static_cast<size_t>(Batches * M), std::max<int64_t>(1, 4096 / std::max<int64_t>(N * K, 1)),
                [&](size_t Lo, size_t Hi) {
                  std::vector<int32_t> Row(static_cast<size_t>(K)), Acc(static_cast<size_t>(N));
                  for (size_t R = Lo; R < Hi; ++R) {
                    const int64_t Bt = static_cast<int64_t>(R) / M, Mi = static_cast<int64_t>(R) % M;
                    int64_t OffA = 0, OffB = 0, Rem = Bt;
                    for (size_t I = BR; I-- > 0;) {
                      const int64_t Pos = Rem % Batch[I];
                      Rem /= Batch[I];
                      OffA += Pos * SA[I];
                      OffB += Pos * SB[I];
                    }
                    const int32_t Za = AZp[AZp.size() == 1 ? 0 : static_cast<size_t>(Mi)];
                    for (int64_t Kk = 0; Kk < K; ++Kk)
                      Row[Kk] = loadInt(A, static_cast<size_t>(OffA + Mi * K + Kk)) - Za;
                    std::fill(Acc.begin(), Acc.end(), 0);
                    for (int64_t Kk = 0; Kk < K; ++Kk) {
                      const int32_t Av = Row[Kk];
                      if (Av == 0)
                        continue;
                      const size_t BRow = static_cast<size_t>(OffB + Kk * N);
                      for (int64_t Nn = 0; Nn < N; ++Nn)
                        Acc[Nn] += Av * (loadInt(B, BRow + Nn) - BZp[BZp.size() == 1 ? 0 : static_cast<size_t>(Nn)]);
                    }
                    for (int64_t Nn = 0; Nn < N; ++Nn)
                      Emit(static_cast<size_t>(R * N + Nn), Acc[Nn], Mi, Nn);
                  }
                });
  return Status::ok();
}

/// Direct integer convolution (any spatial rank) in int32: X - xzp, W - wzp[m] (1 or M values).
/// Calls Emit(OutIndex, Acc, M).
template <typename EmitFn>
Status intConv(const char *Name, const KernelContext &Ctx, const WindowAttrs &W, int64_t Group, const TensorView &X,
               const TensorView &Wt, int32_t XZp, const std::vector<int32_t> &WZp, const TensorView &Y, bool Par,
               EmitFn Emit) {
  const size_t S = W.spatialRank();
  if (X.rank() != S + 2 || Wt.rank() != S + 2 || Y.rank() != S + 2)
    return runError(Name, "rank mismatch");
  const WindowGeometry G = computeWindowGeometry(W, X.Dims);
  const int64_t N = X.Dims[0], C = X.Dims[1], M = Wt.Dims[0], Cg = Wt.Dims[1], Mg = M / Group;
  if (C != Cg * Group || M % Group != 0 || Y.Dims[1] != M)
    return runError(Name, "input ", joinInts(X.Dims), " and weight ", joinInts(Wt.Dims), " do not match group ", Group);
  if (WZp.size() != 1 && static_cast<int64_t>(WZp.size()) != M)
    return runError(Name, "weight zero point must be a scalar or per output channel");
  for (size_t I = 0; I < S; ++I)
    if (Y.Dims[I + 2] != G.Out[I])
      return runError(Name, "output ", joinInts(Y.Dims), " does not match the window geometry");
  const int64_t InPlane = product(X.Dims, 2, X.rank()), OutPlane = product(Y.Dims, 2, Y.rank());
  const int64_t Taps = product(W.Kernel, 0, S);
  forRangeMaybe(Ctx, Par, static_cast<size_t>(N * M), 1, [&](size_t Lo, size_t Hi) {
    std::vector<int64_t> O(S), K(S);
    for (size_t P = Lo; P < Hi; ++P) {
      const int64_t Img = static_cast<int64_t>(P) / M, Mo = static_cast<int64_t>(P) % M, Gr = Mo / Mg;
      const int32_t Zw = WZp[WZp.size() == 1 ? 0 : static_cast<size_t>(Mo)];
      for (int64_t OI = 0; OI < OutPlane; ++OI) {
        int64_t Rem = OI;
        for (size_t D = S; D-- > 0;) {
          O[D] = Rem % G.Out[D];
          Rem /= G.Out[D];
        }
        int32_t Acc = 0;
        for (int64_t T = 0; T < Taps; ++T) {
          int64_t TR = T, Off = 0;
          bool Inside = true;
          for (size_t D = S; D-- > 0;) {
            K[D] = TR % W.Kernel[D];
            TR /= W.Kernel[D];
          }
          for (size_t D = 0; D < S; ++D) {
            const int64_t Pos = O[D] * W.Strides[D] - G.PadBegin[D] + K[D] * W.Dilations[D];
            Inside &= Pos >= 0 && Pos < G.In[D];
            Off = Off * G.In[D] + Pos;
          }
          if (!Inside) // padding holds the zero point: contributes (xzp - xzp) = 0
            continue;
          for (int64_t Ci = 0; Ci < Cg; ++Ci) {
            const int32_t Xv = loadInt(X, static_cast<size_t>((Img * C + Gr * Cg + Ci) * InPlane + Off)) - XZp;
            const int32_t Wv = loadInt(Wt, static_cast<size_t>((Mo * Cg + Ci) * Taps + T)) - Zw;
            Acc += Xv * Wv;
          }
        }
        Emit(static_cast<size_t>((Img * M + Mo) * OutPlane + OI), Acc, Mo);
      }
    }
  });
  return Status::ok();
}

/// Parses Conv-style window attributes for an integer conv of X [N, C, ...] and W [M, C/g, ...].
inline Result<WindowAttrs> parseIntConvAttrs(const Node &N, const TensorShape &X, const TensorShape &Wt, int64_t &Group) {
  if (X.getRank() < 3 || Wt.getRank() != X.getRank())
    return makeError(ErrorCode::Shape, N.describe(), ": input ", X.toString(), " and weight ", Wt.toString(),
                     " must be [N, C, spatial...] and [M, C/group, kernel...]");
  ASSIGN_OR_RETURN(Group, N.getInt("group", 1));
  if (Group <= 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'group' value ", Group, " must be positive");
  if (X[1].isConst() && Wt[1].isConst() && X[1].value() != Wt[1].value() * Group)
    return makeError(ErrorCode::Shape, N.describe(), ": input ", X.toString(), " with group ", Group,
                     " does not match the weight ", Wt.toString());
  std::vector<int64_t> Kernel;
  bool Known = true;
  for (size_t I = 2; I < Wt.getRank(); ++I) {
    if (!Wt[I].isConst())
      Known = false;
    else
      Kernel.push_back(Wt[I].value());
  }
  return parseWindowAttrs(N, X.getRank() - 2, Known ? &Kernel : nullptr, false);
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
