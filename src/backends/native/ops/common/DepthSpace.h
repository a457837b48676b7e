// DepthToSpace / SpaceToDepth as strided views of an NCHW input (a reshape + transpose that the
// output walks directly).
#pragma once

#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// The 6-D view the output of DepthToSpace (Crd: CRD mode, else DCR) reads the input through.
inline StridedView depthToSpaceView(const std::vector<int64_t> &X, int64_t B, bool Crd) {
  const int64_t N = X[0], C = X[1], H = X[2], W = X[3], C2 = C / (B * B);
  const int64_t SN = C * H * W, SC = H * W, SH = W;
  StridedView V;
  V.Dims = {N, C2, H, B, W, B}; // (n, c', h, bh, w, bw) = output [n, c', h*B + bh, w*B + bw]
  if (Crd)
    V.Strides = {SN, B * B * SC, SH, B * SC, 1, SC};
  else
    V.Strides = {SN, SC, SH, B * C2 * SC, 1, C2 * SC};
  return V;
}

/// The 6-D view the output of SpaceToDepth (Crd: CRD mode, else DCR) reads the input through.
inline StridedView spaceToDepthView(const std::vector<int64_t> &X, int64_t B, bool Crd) {
  const int64_t N = X[0], C = X[1], H = X[2], W = X[3];
  const int64_t SN = C * H * W, SC = H * W, SH = W;
  StridedView V;
  if (Crd) {
    V.Dims = {N, C, B, B, H / B, W / B}; // output [n, c*B*B + bh*B + bw, h', w']
    V.Strides = {SN, SC, SH, 1, B * SH, B};
  } else {
    V.Dims = {N, B, B, C, H / B, W / B}; // output [n, (bh*B + bw)*C + c, h', w']
    V.Strides = {SN, SH, 1, SC, B * SH, B};
  }
  return V;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
