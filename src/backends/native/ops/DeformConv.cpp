// DeformConv (opset 19, 22): 2-D deformable convolution. Every kernel tap (a, b) of output (i, j)
// reads X bilinearly (zero outside the image) at the regular conv position plus the learned
// offset[n, ((g * kH + a) * kW + b) * 2 + {0: dy, 1: dx}, i, j] of its offset group g, weighted by
// mask[n, (g * kH + a) * kW + b, i, j] (default 1); then the grouped convolution with W and bias B.
// Float types, accumulated in double. Only 2-D inputs (as the ONNX reference).
#include <cmath>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/FloatDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct DeformAttrs {
  std::vector<int64_t> Kernel, Dilations, Pads, Strides;
  int64_t Group = 1, OffsetGroup = 1;
};

Result<DeformAttrs> deformAttrs(const Node &N, const TensorShape &W) {
  DeformAttrs A;
  std::vector<int64_t> FromW;
  for (size_t I = 2; I < W.getRank(); ++I)
    FromW.push_back(W[I].isConst() ? W[I].value() : 0);
  ASSIGN_OR_RETURN(A.Kernel, N.getInts("kernel_shape", FromW));
  ASSIGN_OR_RETURN(A.Dilations, N.getInts("dilations", {1, 1}));
  ASSIGN_OR_RETURN(A.Strides, N.getInts("strides", {1, 1}));
  ASSIGN_OR_RETURN(A.Pads, N.getInts("pads", {0, 0, 0, 0}));
  ASSIGN_OR_RETURN(A.Group, N.getInt("group", 1));
  ASSIGN_OR_RETURN(A.OffsetGroup, N.getInt("offset_group", 1));
  if (A.Kernel.size() != 2 || A.Dilations.size() != 2 || A.Strides.size() != 2 || A.Pads.size() != 4)
    return makeError(ErrorCode::Model, N.describe(), ": kernel_shape ", joinInts(A.Kernel), ", dilations ",
                     joinInts(A.Dilations), ", strides ", joinInts(A.Strides), " and pads ", joinInts(A.Pads),
                     " are not 2-D (only 2-D deformable convolution is implemented)");
  for (size_t I = 0; I < 2; ++I)
    if (A.Kernel[I] < 1 || A.Dilations[I] < 1 || A.Strides[I] < 1 || A.Pads[I] < 0 || A.Pads[I + 2] < 0)
      return makeError(ErrorCode::Model, N.describe(), ": kernel_shape ", joinInts(A.Kernel), ", dilations ",
                       joinInts(A.Dilations), " and strides ", joinInts(A.Strides), " must be positive, pads ",
                       joinInts(A.Pads), " non-negative");
  if (A.Group < 1 || A.OffsetGroup < 1)
    return makeError(ErrorCode::Model, N.describe(), ": group ", A.Group, " and offset_group ", A.OffsetGroup,
                     " must be positive");
  return A;
}

int64_t deformOutDim(const DeformAttrs &A, size_t I, int64_t In) {
  return (In + A.Pads[I] + A.Pads[I + 2] - ((A.Kernel[I] - 1) * A.Dilations[I] + 1)) / A.Strides[I] + 1;
}

/// Bilinear read of a [H, W] plane at (Y, X) with zero outside.
template <typename T> double bilinearZero(const T *P, int64_t H, int64_t W, double Y, double X) {
  const double Fy = std::floor(Y), Fx = std::floor(X);
  const int64_t Y0 = static_cast<int64_t>(Fy), X0 = static_cast<int64_t>(Fx);
  const double Ly = Y - Fy, Lx = X - Fx;
  double V = 0;
  for (int Dy = 0; Dy < 2; ++Dy)
    for (int Dx = 0; Dx < 2; ++Dx) {
      const int64_t Yy = Y0 + Dy, Xx = X0 + Dx;
      if (Yy < 0 || Yy >= H || Xx < 0 || Xx >= W)
        continue;
      const double Wt = (Dy ? Ly : 1 - Ly) * (Dx ? Lx : 1 - Lx);
      V += Wt * static_cast<double>(static_cast<ComputeT<T>>(P[Yy * W + Xx]));
    }
  return V;
}

Status computeDeformConv(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                         const Parallel &Par) {
  const TensorView &X = In[0], &Wt = In[1], &Off = In[2], &Y = Out[0];
  const bool HasBias = In.size() > 3 && In[3].Data, HasMask = In.size() > 4 && In[4].Data;
  if (X.rank() != 4 || Wt.rank() != 4)
    return runError("deformconv", "X ", joinInts(X.Dims), " and W ", joinInts(Wt.Dims), " are not 4-D");
  ASSIGN_OR_RETURN(const DeformAttrs A, deformAttrs(N, TensorShape::fromDims(Wt.Dims)));
  const int64_t Nb = X.Dims[0], C = X.Dims[1], H = X.Dims[2], W = X.Dims[3], OC = Wt.Dims[0], Cg = Wt.Dims[1];
  const int64_t KH = A.Kernel[0], KW = A.Kernel[1], OH = deformOutDim(A, 0, H), OW = deformOutDim(A, 1, W);
  const int64_t Taps = KH * KW, CPerOffsetGroup = C / A.OffsetGroup, OCPerGroup = OC / A.Group;
  if (Y.Dims != std::vector<int64_t>{Nb, OC, OH, OW} ||
      Off.Dims != std::vector<int64_t>{Nb, A.OffsetGroup * Taps * 2, OH, OW} ||
      (HasMask && In[4].Dims != std::vector<int64_t>{Nb, A.OffsetGroup * Taps, OH, OW}))
    return runError("deformconv", "output ", joinInts(Y.Dims), ", offset ", joinInts(Off.Dims),
                    " or mask do not fit [", Nb, ", ", OC, ", ", OH, ", ", OW, "]");
  visitFloat(X.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    const auto val = [](const TensorView &V, int64_t I) {
      return static_cast<double>(static_cast<ComputeT<T>>(V.data<const T>()[I]));
    };
    Par.forRange(static_cast<size_t>(Nb * OC), 1, [&](size_t Begin, size_t End) {
      for (size_t Item = Begin; Item < End; ++Item) {
        const int64_t B = static_cast<int64_t>(Item) / OC, O = static_cast<int64_t>(Item) % OC, G = O / OCPerGroup;
        for (int64_t I = 0; I < OH; ++I)
          for (int64_t J = 0; J < OW; ++J) {
            double Acc = HasBias ? val(In[3], O) : 0.0;
            for (int64_t Ci = 0; Ci < Cg; ++Ci) {
              const int64_t Ch = G * Cg + Ci, Og = Ch / CPerOffsetGroup;
              const T *Plane = X.data<const T>() + (B * C + Ch) * H * W;
              for (int64_t Ka = 0; Ka < KH; ++Ka)
                for (int64_t Kb = 0; Kb < KW; ++Kb) {
                  const int64_t Tap = (Og * KH + Ka) * KW + Kb;
                  const double Dy = val(Off, ((B * A.OffsetGroup * Taps * 2 + Tap * 2) * OH + I) * OW + J);
                  const double Dx = val(Off, ((B * A.OffsetGroup * Taps * 2 + Tap * 2 + 1) * OH + I) * OW + J);
                  const double Sy = static_cast<double>(I * A.Strides[0] - A.Pads[0] + Ka * A.Dilations[0]) + Dy;
                  const double Sx = static_cast<double>(J * A.Strides[1] - A.Pads[1] + Kb * A.Dilations[1]) + Dx;
                  double V = bilinearZero(Plane, H, W, Sy, Sx);
                  if (HasMask)
                    V *= val(In[4], ((B * A.OffsetGroup * Taps + Tap) * OH + I) * OW + J);
                  Acc += V * val(Wt, ((O * Cg + Ci) * KH + Ka) * KW + Kb);
                }
            }
            Y.data<T>()[((B * OC + O) * OH + I) * OW + J] = static_cast<T>(static_cast<ComputeT<T>>(Acc));
          }
      }
    });
  });
  return Status::ok();
}

Status inferDeformConv(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(FloatTypes()), "X"));
  for (size_t I = 1; I < 5; ++I)
    if (Ctx.hasInput(I))
      RETURN_IF_ERROR(requireSameType(Ctx, 0, I));
  const TensorShape &X = Ctx.Inputs[0].Shape, &W = Ctx.Inputs[1].Shape, &Off = Ctx.Inputs[2].Shape;
  if (X.getRank() != 4 || W.getRank() != 4 || Off.getRank() != 4)
    return Ctx.error(ErrorCode::Shape, "X ", X.toString(), ", W ", W.toString(), " and offset ", Off.toString(),
                     " must be 4-D (only 2-D deformable convolution is implemented)");
  ASSIGN_OR_RETURN(const DeformAttrs A, deformAttrs(Ctx.N, W));
  if (X[1].isConst() && W[1].isConst() && W[0].isConst() &&
      (X[1].value() != W[1].value() * A.Group || W[0].value() % A.Group != 0 || X[1].value() % A.OffsetGroup != 0))
    return Ctx.error(ErrorCode::Shape, "X ", X.toString(), " and W ", W.toString(), " do not fit group ", A.Group,
                     " and offset_group ", A.OffsetGroup);
  const int64_t Taps = A.Kernel[0] * A.Kernel[1];
  if (Off[1].isConst() && Off[1].value() != A.OffsetGroup * Taps * 2)
    return Ctx.error(ErrorCode::Shape, "offset ", Off.toString(), " does not have offset_group * kH * kW * 2 = ",
                     A.OffsetGroup * Taps * 2, " channels");
  std::vector<Expr> Out = {X[0], W[0], Ctx.newSymbol(), Ctx.newSymbol()};
  for (size_t I = 0; I < 2; ++I)
    if (X[I + 2].isConst()) {
      const int64_t D = deformOutDim(A, I, X[I + 2].value());
      if (D < 1)
        return Ctx.error(ErrorCode::Shape, "kernel ", joinInts(A.Kernel), " does not fit padded input ", X.toString());
      Out[I + 2] = Expr(static_cast<long long>(D));
    }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = TensorShape(Out);
  return Status::ok();
}

OpSchema deformConvSchema() {
  OpSchema S;
  S.OpType = "DeformConv";
  S.MinInputs = 3;
  S.MaxInputs = 5;
  S.Infer = inferDeformConv;
  return S;
}

OpKernels deformConvKernels() {
  OpKernels K;
  K.OpType = "DeformConv";
  K.Variants.push_back(computeVariant("any_deformconv__ref", 0, computeDeformConv));
  K.TestCases = [] {
    TestInput Off = tensorInput({1, 2 * 4 * 2, 4, 4});
    Off.Low = -2;
    Off.High = 2;
    TestInput Mask = tensorInput({1, 2 * 4, 4, 4});
    Mask.Low = 0;
    return std::vector<OpTestCase>{
        withOpset(testCase("padded", {tensorInput({1, 2, 3, 3}), tensorInput({3, 2, 2, 2}), Off},
                           {{"pads", attrInts({1, 1, 1, 1})}, {"offset_group", attrInt(2)}}),
                  22),
        withOpset(testCase("groups_mask_bias", {tensorInput({1, 4, 5, 5}), tensorInput({4, 2, 2, 2}), Off,
                                                tensorInput({4}), Mask},
                           {{"group", attrInt(2)}, {"offset_group", attrInt(2)}}),
                  22),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(DeformConv, deformConvSchema());
OPT_REGISTER_KERNELS(DeformConv, deformConvKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
