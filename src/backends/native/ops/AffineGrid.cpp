// AffineGrid (opset 20): the sampling grid of an affine transform, the companion of GridSample.
// theta [N, 2, 3] (2-D) or [N, 3, 4] (3-D); size = [N, C, H, W] or [N, C, D, H, W] (i64). Each
// output point is theta[n] applied to the normalized base coordinates (x, y[, z], 1) of its
// pixel (-1..1 over pixel centers, or over corner pixels with align_corners). Float types.
#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/FloatDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// The normalized base coordinate of pixel I of a dim of Size pixels.
double baseCoordinate(int64_t I, int64_t Size, bool AlignCorners) {
  if (AlignCorners)
    return Size > 1 ? -1.0 + 2.0 * static_cast<double>(I) / static_cast<double>(Size - 1) : -1.0;
  return -1.0 + (2.0 * static_cast<double>(I) + 1.0) / static_cast<double>(Size);
}

Result<bool> alignCorners(const Node &N) {
  ASSIGN_OR_RETURN(const int64_t A, N.getInt("align_corners", 0));
  if (A != 0 && A != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'align_corners' value ", A, " is not 0 or 1");
  return A == 1;
}

Status computeAffineGrid(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                         const Parallel &) {
  const TensorView &Theta = In[0], &Y = Out[0];
  ASSIGN_OR_RETURN(const std::vector<int64_t> Size, readInts(In[1], "size"));
  ASSIGN_OR_RETURN(const bool Align, alignCorners(N));
  const size_t K = Size.size() - 2; // spatial dims: 2 or 3
  if ((K != 2 && K != 3) || Theta.Dims != std::vector<int64_t>{Size[0], static_cast<int64_t>(K), static_cast<int64_t>(K + 1)})
    return runError("affinegrid", "theta ", joinInts(Theta.Dims), " does not fit size ", joinInts(Size));
  std::vector<int64_t> OutDims = {Size[0]};
  OutDims.insert(OutDims.end(), Size.begin() + 2, Size.end());
  OutDims.push_back(static_cast<int64_t>(K));
  if (Y.Dims != OutDims)
    return runError("affinegrid", "output ", joinInts(Y.Dims), " is not ", joinInts(OutDims));
  // Spatial dims are (H, W) or (D, H, W); the base point is (x = W coordinate, y, z, 1).
  const int64_t D = K == 3 ? Size[2] : 1, H = Size[K], W = Size[K + 1];
  visitFloat(Theta.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    const T *Th = Theta.data<const T>();
    T *Dst = Y.data<T>();
    for (int64_t Nn = 0; Nn < Size[0]; ++Nn) {
      double M[3][4];
      for (size_t R = 0; R < K; ++R)
        for (size_t C = 0; C <= K; ++C)
          M[R][C] = static_cast<double>(static_cast<ComputeT<T>>(Th[(static_cast<size_t>(Nn) * K + R) * (K + 1) + C]));
      for (int64_t Z = 0; Z < D; ++Z)
        for (int64_t Yy = 0; Yy < H; ++Yy)
          for (int64_t X = 0; X < W; ++X) {
            const double P[4] = {baseCoordinate(X, W, Align), baseCoordinate(Yy, H, Align),
                                 K == 3 ? baseCoordinate(Z, D, Align) : 1.0, 1.0};
            for (size_t R = 0; R < K; ++R) {
              double V = 0;
              for (size_t C = 0; C < K; ++C)
                V += M[R][C] * P[C];
              V += M[R][K]; // the homogeneous 1
              *Dst++ = static_cast<T>(static_cast<ComputeT<T>>(V));
            }
          }
    }
  });
  return Status::ok();
}

Status inferAffineGrid(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(FloatTypes()), "theta"));
  RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
  ASSIGN_OR_RETURN(const bool Align, alignCorners(Ctx.N));
  (void)Align;
  const TensorShape &Theta = Ctx.Inputs[0].Shape, &S = Ctx.Inputs[1].Shape;
  if (Theta.getRank() != 3 || S.getRank() != 1 || !S[0].isConst() || (S[0].value() != 4 && S[0].value() != 5))
    return Ctx.error(ErrorCode::Shape, "theta ", Theta.toString(), " and size ", S.toString(),
                     " are not [N, 2, 3] with [4] or [N, 3, 4] with [5]");
  const int64_t K = S[0].value() - 2;
  if ((Theta[1].isConst() && Theta[1].value() != K) || (Theta[2].isConst() && Theta[2].value() != K + 1))
    return Ctx.error(ErrorCode::Shape, "theta ", Theta.toString(), " is not [N, ", K, ", ", K + 1, "] for size ",
                     S.toString());
  std::vector<Expr> Out = {Theta[0]};
  for (int64_t I = 0; I < K; ++I)
    Out.push_back(Ctx.newSymbol());
  Out.push_back(Expr(static_cast<long long>(K)));
  if (isConstInput(Ctx, 1)) {
    ASSIGN_OR_RETURN(const std::vector<int64_t> Size, constInts(Ctx, 1));
    for (int64_t I = 0; I < K; ++I) {
      if (Size[static_cast<size_t>(2 + I)] < 1)
        return Ctx.error(ErrorCode::Shape, "size ", joinInts(Size), " has a non-positive spatial dim");
      Out[static_cast<size_t>(1 + I)] = Expr(static_cast<long long>(Size[static_cast<size_t>(2 + I)]));
    }
    if (Theta[0].isConst() && Theta[0].value() != Size[0])
      return Ctx.error(ErrorCode::Shape, "theta ", Theta.toString(), " has another batch than size ", joinInts(Size));
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = TensorShape(Out);
  return Status::ok();
}

OpSchema affineGridSchema() {
  OpSchema S;
  S.OpType = "AffineGrid";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = inferAffineGrid;
  return S;
}

OpKernels affineGridKernels() {
  OpKernels K;
  K.OpType = "AffineGrid";
  K.Variants.push_back(computeVariant("any_affinegrid__ref", 0, computeAffineGrid));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        withOpset(testCase("2d", {tensorInput({2, 2, 3}), intsInput({2, 3, 5, 6})}), 20),
        withOpset(testCase("2d_align_one_pixel", {tensorInput({1, 2, 3}), intsInput({1, 1, 1, 4})},
                           {{"align_corners", attrInt(1)}}),
                  20),
        withOpset(testCase("3d_align_f64", {tensorInput({2, 3, 4}, ElementType::F64), intsInput({2, 1, 3, 4, 5})},
                           {{"align_corners", attrInt(1)}}),
                  20),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(AffineGrid, affineGridSchema());
OPT_REGISTER_KERNELS(AffineGrid, affineGridKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
