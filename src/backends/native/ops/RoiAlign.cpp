// RoiAlign (opsets 10, 16, 22): pools each region of interest rois[r] = (x1, y1, x2, y2) (scaled
// by spatial_scale) of image batch_indices[r] of X [N, C, H, W] to [output_height, output_width]
// bins, each the average (or max) of sampling_ratio^2 bilinear samples (adaptive ceil(roi / bins)
// per side when 0). 'half_pixel' (default since opset 16) shifts coordinates by -0.5;
// 'output_half_pixel' (opset 10's behavior) does not and makes regions at least 1 x 1. Max mode
// takes the largest weighted corner term, as the ONNX reference and ONNX Runtime do. Float types.
#include <cmath>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/FloatDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct RoiAlignAttrs {
  bool Max = false, HalfPixel = true;
  int64_t OutH = 1, OutW = 1, SamplingRatio = 0;
  float SpatialScale = 1.0f;
};

Result<RoiAlignAttrs> roiAlignAttrs(const Node &N) {
  RoiAlignAttrs A;
  ASSIGN_OR_RETURN(const std::string Mode, N.getString("mode", "avg"));
  if (Mode != "avg" && Mode != "max")
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'mode' value '", Mode, "' is not 'avg' or 'max'");
  A.Max = Mode == "max";
  const bool Old = N.OpsetVersion > 0 && N.OpsetVersion < 16;
  ASSIGN_OR_RETURN(const std::string Coord,
                   N.getString("coordinate_transformation_mode", Old ? "output_half_pixel" : "half_pixel"));
  if (Coord != "half_pixel" && Coord != "output_half_pixel")
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'coordinate_transformation_mode' value '", Coord,
                     "' is not 'half_pixel' or 'output_half_pixel'");
  A.HalfPixel = Coord == "half_pixel";
  ASSIGN_OR_RETURN(A.OutH, N.getInt("output_height", 1));
  ASSIGN_OR_RETURN(A.OutW, N.getInt("output_width", 1));
  ASSIGN_OR_RETURN(A.SamplingRatio, N.getInt("sampling_ratio", 0));
  ASSIGN_OR_RETURN(A.SpatialScale, N.getFloat("spatial_scale", 1.0f));
  if (A.OutH < 1 || A.OutW < 1 || A.SamplingRatio < 0)
    return makeError(ErrorCode::Model, N.describe(), ": output_height ", A.OutH, " and output_width ", A.OutW,
                     " must be positive, sampling_ratio ", A.SamplingRatio, " non-negative");
  return A;
}

/// One bilinear sample: four flat positions in the H x W plane and their weights.
struct Sample {
  int64_t Pos[4] = {0, 0, 0, 0};
  double W[4] = {0, 0, 0, 0};
};

Sample bilinearSample(double Y, double X, int64_t H, int64_t W) {
  Sample S;
  if (Y < -1.0 || Y > static_cast<double>(H) || X < -1.0 || X > static_cast<double>(W))
    return S; // outside: contributes zero
  Y = std::max(Y, 0.0);
  X = std::max(X, 0.0);
  int64_t Y0 = static_cast<int64_t>(Y), X0 = static_cast<int64_t>(X), Y1, X1;
  if (Y0 >= H - 1) {
    Y1 = Y0 = H - 1;
    Y = static_cast<double>(Y0);
  } else {
    Y1 = Y0 + 1;
  }
  if (X0 >= W - 1) {
    X1 = X0 = W - 1;
    X = static_cast<double>(X0);
  } else {
    X1 = X0 + 1;
  }
  const double Ly = Y - static_cast<double>(Y0), Lx = X - static_cast<double>(X0), Hy = 1 - Ly, Hx = 1 - Lx;
  S.Pos[0] = Y0 * W + X0;
  S.Pos[1] = Y0 * W + X1;
  S.Pos[2] = Y1 * W + X0;
  S.Pos[3] = Y1 * W + X1;
  S.W[0] = Hy * Hx;
  S.W[1] = Hy * Lx;
  S.W[2] = Ly * Hx;
  S.W[3] = Ly * Lx;
  return S;
}

Status computeRoiAlign(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                       const Parallel &Par) {
  const TensorView &X = In[0], &Rois = In[1], &Idx = In[2], &Y = Out[0];
  ASSIGN_OR_RETURN(const RoiAlignAttrs A, roiAlignAttrs(N));
  if (X.rank() != 4 || Rois.rank() != 2 || Rois.Dims[1] != 4 || Idx.rank() != 1 || Idx.Dims[0] != Rois.Dims[0])
    return runError("roialign", "X ", joinInts(X.Dims), ", rois ", joinInts(Rois.Dims), " and batch_indices ",
                    joinInts(Idx.Dims), " are not [N, C, H, W], [R, 4] and [R]");
  const int64_t R = Rois.Dims[0], C = X.Dims[1], H = X.Dims[2], W = X.Dims[3];
  if (Y.Dims != std::vector<int64_t>{R, C, A.OutH, A.OutW})
    return runError("roialign", "output ", joinInts(Y.Dims), " is not [", R, ", ", C, ", ", A.OutH, ", ", A.OutW, "]");
  for (int64_t I = 0; I < R; ++I) {
    const int64_t B = readIndex(Idx, static_cast<size_t>(I));
    if (B < 0 || B >= X.Dims[0])
      return makeError(ErrorCode::Infer, N.describe(), ": batch_indices[", I, "] = ", B, " is outside [0, ", X.Dims[0],
                       ")");
  }
  visitFloat(X.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    const T *Data = X.data<const T>();
    Par.forRange(static_cast<size_t>(R), 1, [&](size_t Begin, size_t End) {
      std::vector<Sample> Samples;
      for (size_t Roi = Begin; Roi < End; ++Roi) {
        const T *Box = Rois.data<const T>() + Roi * 4;
        const double Offset = A.HalfPixel ? 0.5 : 0.0, Scale = static_cast<double>(A.SpatialScale);
        const auto coord = [&](int I) { return static_cast<double>(static_cast<ComputeT<T>>(Box[I])) * Scale - Offset; };
        const double X1 = coord(0), Y1 = coord(1);
        double RoiW = coord(2) - X1, RoiH = coord(3) - Y1;
        if (!A.HalfPixel) {
          RoiW = std::max(RoiW, 1.0);
          RoiH = std::max(RoiH, 1.0);
        }
        const double BinH = RoiH / static_cast<double>(A.OutH), BinW = RoiW / static_cast<double>(A.OutW);
        const int64_t GridH = A.SamplingRatio > 0 ? A.SamplingRatio : static_cast<int64_t>(std::ceil(RoiH / A.OutH));
        const int64_t GridW = A.SamplingRatio > 0 ? A.SamplingRatio : static_cast<int64_t>(std::ceil(RoiW / A.OutW));
        const double Count = static_cast<double>(std::max<int64_t>(GridH * GridW, 1));
        Samples.clear();
        for (int64_t Ph = 0; Ph < A.OutH; ++Ph)
          for (int64_t Pw = 0; Pw < A.OutW; ++Pw)
            for (int64_t Iy = 0; Iy < GridH; ++Iy) {
              const double Yy = Y1 + Ph * BinH + (Iy + 0.5) * BinH / static_cast<double>(GridH);
              for (int64_t Ix = 0; Ix < GridW; ++Ix)
                Samples.push_back(
                    bilinearSample(Yy, X1 + Pw * BinW + (Ix + 0.5) * BinW / static_cast<double>(GridW), H, W));
            }
        const int64_t B = readIndex(Idx, Roi);
        for (int64_t Ch = 0; Ch < C; ++Ch) {
          const T *Plane = Data + (B * C + Ch) * H * W;
          const auto at = [&](int64_t P) { return static_cast<double>(static_cast<ComputeT<T>>(Plane[P])); };
          T *Dst = Y.data<T>() + ((static_cast<int64_t>(Roi) * C + Ch) * A.OutH) * A.OutW;
          size_t SI = 0;
          for (int64_t Bin = 0; Bin < A.OutH * A.OutW; ++Bin) {
            double V = 0;
            bool First = true;
            for (int64_t G = 0; G < GridH * GridW; ++G, ++SI) {
              const Sample &S = Samples[SI];
              if (A.Max) {
                double M = S.W[0] * at(S.Pos[0]);
                for (int K = 1; K < 4; ++K)
                  M = std::max(M, S.W[K] * at(S.Pos[K]));
                V = First ? M : std::max(V, M);
                First = false;
              } else {
                for (int K = 0; K < 4; ++K)
                  V += S.W[K] * at(S.Pos[K]);
              }
            }
            Dst[Bin] = static_cast<T>(static_cast<ComputeT<T>>(A.Max ? V : V / Count));
          }
        }
      }
    });
  });
  return Status::ok();
}

Status inferRoiAlign(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(FloatTypes()), "X"));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
  RETURN_IF_ERROR(requireInputType(Ctx, 2, {ElementType::I64}));
  ASSIGN_OR_RETURN(const RoiAlignAttrs A, roiAlignAttrs(Ctx.N));
  const TensorShape &X = Ctx.Inputs[0].Shape, &Rois = Ctx.Inputs[1].Shape, &Idx = Ctx.Inputs[2].Shape;
  if (X.getRank() != 4 || Rois.getRank() != 2 || (Rois[1].isConst() && Rois[1].value() != 4) || Idx.getRank() != 1 ||
      (Rois[0].isConst() && Idx[0].isConst() && Rois[0].value() != Idx[0].value()))
    return Ctx.error(ErrorCode::Shape, "X ", X.toString(), ", rois ", Rois.toString(), " and batch_indices ",
                     Idx.toString(), " are not [N, C, H, W], [R, 4] and [R]");
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape =
      TensorShape({Rois[0], X[1], Expr(static_cast<long long>(A.OutH)), Expr(static_cast<long long>(A.OutW))});
  return Status::ok();
}

OpSchema roiAlignSchema() {
  OpSchema S;
  S.OpType = "RoiAlign";
  S.MinInputs = S.MaxInputs = 3;
  S.Infer = inferRoiAlign;
  return S;
}

OpKernels roiAlignKernels() {
  OpKernels K;
  K.OpType = "RoiAlign";
  K.Variants.push_back(computeVariant("any_roialign__ref", 0, computeRoiAlign));
  K.TestCases = [] {
    TestInput Rois = valuesInput({3, 4}, {0, 0, 9, 9, 0, 5, 4, 9, 5.5, 5.2, 9.4, 9.8}, ElementType::F32, false);
    const TestInput Idx = valuesInput({3}, {0, 1, 0}, ElementType::I64, false);
    return std::vector<OpTestCase>{
        withOpset(testCase("avg_half_pixel", {tensorInput({2, 3, 10, 10}), Rois, Idx},
                           {{"output_height", attrInt(5)}, {"output_width", attrInt(4)}, {"sampling_ratio", attrInt(2)}}),
                  22),
        withOpset(testCase("max_adaptive_scaled", {tensorInput({2, 2, 6, 7}), Rois, Idx},
                           {{"mode", attrString("max")}, {"spatial_scale", attrFloat(0.5f)}, {"output_height", attrInt(3)},
                            {"output_width", attrInt(3)}}),
                  22),
        withOpset(testCase("output_half_pixel", {tensorInput({2, 1, 10, 10}), Rois, Idx},
                           {{"output_height", attrInt(2)}, {"output_width", attrInt(2)}}),
                  10),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(RoiAlign, roiAlignSchema());
OPT_REGISTER_KERNELS(RoiAlign, roiAlignKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
