// DepthToSpace / SpaceToDepth as strided views of an NCHW input (a reshape + transpose that the
// output walks directly), and the schema and kernel variants the two ops share; each op's file
// keeps its harness cases and registration.
#pragma once

#include <functional>
#include <string>

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

/// Which of the two ops: DepthToSpace moves channels into spatial tiles, SpaceToDepth the reverse.
enum class DepthSpaceOp { DepthToSpace, SpaceToDepth };

inline const char *depthSpaceOpType(DepthSpaceOp Op) {
  return Op == DepthSpaceOp::DepthToSpace ? "DepthToSpace" : "SpaceToDepth";
}
inline std::string depthSpaceVariant(DepthSpaceOp Op, bool Fast) {
  return std::string(Op == DepthSpaceOp::DepthToSpace ? "any_depthtospace" : "any_spacetodepth") +
         (Fast ? "__strided" : "__ref");
}

/// The reference copies one element at a time through the strided view; the strided variant
/// copies rows in parallel.
template <DepthSpaceOp Op, bool Fast>
Status computeDepthSpace(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                         const Parallel &Par) {
  const TensorView &X = In[0], &Y = Out[0];
  ASSIGN_OR_RETURN(const int64_t B, N.getInt("blocksize", 0));
  ASSIGN_OR_RETURN(const std::string Mode, N.getString("mode", "DCR"));
  const StridedView V = Op == DepthSpaceOp::DepthToSpace ? depthToSpaceView(X.Dims, B, Mode == "CRD")
                                                         : spaceToDepthView(X.Dims, B, Mode == "CRD");
  if (static_cast<size_t>(product(V.Dims, 0, V.Dims.size())) != Y.elementCount())
    return runError(depthSpaceVariant(Op, false).c_str(), "output ", joinInts(Y.Dims), " does not match input ",
                    joinInts(X.Dims));
  if (Y.elementCount() == 0)
    return Status::ok();
  if (Fast)
    stridedCopyFast(X.Data, Y.Data, getElementSize(X.Type), V, Par);
  else
    stridedCopyRef(X.Data, Y.Data, getElementSize(X.Type), V);
  return Status::ok();
}

template <DepthSpaceOp Op> OpSchema depthSpaceSchema() {
  OpSchema S;
  S.OpType = depthSpaceOpType(Op);
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    const TensorShape &X = Ctx.Inputs[0].Shape;
    if (X.getRank() != 4)
      return Ctx.error(ErrorCode::Shape, "input 0 must be 4-D (NCHW), got ", X.toString());
    if (!Ctx.N.hasAttr("blocksize"))
      return Ctx.error(ErrorCode::Model, "attribute 'blocksize' is required");
    ASSIGN_OR_RETURN(const int64_t B, Ctx.N.getInt("blocksize", 0));
    if (B < 1)
      return Ctx.error(ErrorCode::Model, "attribute 'blocksize' value ", B, " must be >= 1");
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    ASSIGN_OR_RETURN(const std::string Mode, Ctx.N.getString("mode", "DCR"));
    if (Mode != "DCR" && Mode != "CRD")
      return Ctx.error(ErrorCode::Model, "attribute 'mode' value '", Mode, "' must be DCR or CRD");
    const Expr BE(static_cast<long long>(B));
    if (Op == DepthSpaceOp::DepthToSpace) {
      if (X[1].isConst() && X[1].value() % (B * B) != 0)
        return Ctx.error(ErrorCode::Shape, "channels of ", X.toString(), " are not divisible by blocksize^2 = ", B * B);
      Ctx.Outputs[0].Shape = TensorShape({X[0], X[1] / (BE * BE), X[2] * BE, X[3] * BE});
    } else {
      if ((X[2].isConst() && X[2].value() % B != 0) || (X[3].isConst() && X[3].value() % B != 0))
        return Ctx.error(ErrorCode::Shape, "height and width of ", X.toString(), " are not divisible by blocksize ", B);
      Ctx.Outputs[0].Shape = TensorShape({X[0], X[1] * BE * BE, X[2] / BE, X[3] / BE});
    }
    return foldIfConstant(Ctx, computeDepthSpace<Op, false>);
  };
  return S;
}

/// The reference and strided variants; Cases are the op's own harness cases.
template <DepthSpaceOp Op> OpKernels depthSpaceKernels(std::function<std::vector<OpTestCase>()> Cases) {
  OpKernels K;
  K.OpType = depthSpaceOpType(Op);
  K.Variants.push_back(computeVariant(depthSpaceVariant(Op, false), 0, computeDepthSpace<Op, false>));
  K.Variants.push_back(computeVariant(depthSpaceVariant(Op, true), 10, computeDepthSpace<Op, true>));
  K.TestCases = std::move(Cases);
  return K;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
