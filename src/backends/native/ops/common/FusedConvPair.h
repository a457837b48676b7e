// What the two fused 1x1 + depthwise convolution ops (FusedPointwiseDepthwise: 1x1 then
// depthwise; FusedDepthwisePointwise: depthwise then 1x1; both made by passes/
// FusePointwiseDepthwise) share: the clamps fused after each convolution, the checks of the two
// weights against the input, and the depthwise window.
#pragma once

#include <cmath>
#include <vector>

#include "backends/native/ops/common/FusedActivation.h"
#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/Pooling.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// The activation fused after one of the convolutions (common/FusedActivation.h).
using FusedClamp = FusedAct;

/// The clamp stored in the node's attributes MinKey / MaxKey (off when neither is present).
inline Result<FusedClamp> fusedClampOf(const Node &N, const char *MinKey, const char *MaxKey) {
  return fusedActOf(N, FusedActKeys{MinKey, MaxKey, nullptr, nullptr, nullptr});
}

/// Checks the pair's weights against input X (all 4-D; Wp a 1x1 weight, Wd a depthwise weight
/// [channels, 1, KH, KW] with group = channels) and returns the depthwise window. PointwiseFirst:
/// Wp reads X's channels and Wd has Wp's output channels; otherwise Wd has X's channels and Wp
/// reads them.
inline Result<WindowAttrs> fusedPairWindow(const Node &N, const TensorShape &X, const TensorShape &Wp,
                                           const TensorShape &Wd, bool PointwiseFirst) {
  if (X.getRank() != 4 || Wp.getRank() != 4 || Wd.getRank() != 4)
    return makeError(ErrorCode::Shape, N.describe(), ": input ", X.toString(), ", weights ", Wp.toString(), " and ",
                     Wd.toString(), " must all be 4-D");
  const auto Fits = [](const Expr &A, const Expr &B) { return !A.isConst() || !B.isConst() || A.value() == B.value(); };
  const bool Channels = PointwiseFirst ? Fits(Wp[1], X[1]) && Fits(Wp[0], Wd[0]) : Fits(Wd[0], X[1]) && Fits(Wp[1], X[1]);
  if (!Channels || (Wd[1].isConst() && Wd[1].value() != 1) || (Wp[2].isConst() && Wp[2].value() != 1) ||
      (Wp[3].isConst() && Wp[3].value() != 1))
    return makeError(ErrorCode::Shape, N.describe(), ": input ", X.toString(), " does not fit the 1x1 weight ",
                     Wp.toString(), " and the depthwise weight ", Wd.toString());
  auto Group = N.getInt("group", 1);
  if (!Group.isOk() || (Wd[0].isConst() && *Group != Wd[0].value()))
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'group' must equal the channels ", Wd[0].toString());
  std::vector<int64_t> Kernel;
  const bool KnownKernel = Wd[2].isConst() && Wd[3].isConst();
  if (KnownKernel)
    Kernel = {Wd[2].value(), Wd[3].value()};
  return parseWindowAttrs(N, 2, KnownKernel ? &Kernel : nullptr, /*AllowCeilMode=*/false);
}

/// The float32 type checks of a pair node: X, both weights and the optional biases (inputs 3, 4).
inline Status checkFusedPairTypes(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32}));
  for (size_t I : {size_t(1), size_t(2)})
    RETURN_IF_ERROR(requireSameType(Ctx, 0, I));
  for (size_t I : {size_t(3), size_t(4)})
    if (Ctx.hasInput(I))
      RETURN_IF_ERROR(requireSameType(Ctx, 0, I));
  return Status::ok();
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
