// DepthToSpace: moves blocks of channels into blocksize x blocksize spatial tiles (DCR or CRD
// order), any element type, NCHW. The reference copies one element at a time through the strided
// view; the strided variant copies rows in parallel.
#include "backends/native/ops/common/DepthSpace.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

template <bool Fast>
Status computeDepthToSpace(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                        const Parallel &Par) {
  const TensorView &X = In[0], &Y = Out[0];
  ASSIGN_OR_RETURN(const int64_t B, N.getInt("blocksize", 0));
  ASSIGN_OR_RETURN(const std::string Mode, N.getString("mode", "DCR"));
  const StridedView V = depthToSpaceView(X.Dims, B, Mode == "CRD");
  if (static_cast<size_t>(product(V.Dims, 0, V.Dims.size())) != Y.elementCount())
    return runError("any_depthtospace__ref", "output ", joinInts(Y.Dims), " does not match input ", joinInts(X.Dims));
  if (Y.elementCount() == 0)
    return Status::ok();
  if (Fast)
    stridedCopyFast(X.Data, Y.Data, getElementSize(X.Type), V, Par);
  else
    stridedCopyRef(X.Data, Y.Data, getElementSize(X.Type), V);
  return Status::ok();
}

OpSchema depthtospaceSchema() {
  OpSchema S;
  S.OpType = "DepthToSpace";
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
    if (X[1].isConst() && X[1].value() % (B * B) != 0)
      return Ctx.error(ErrorCode::Shape, "channels of ", X.toString(), " are not divisible by blocksize^2 = ", B * B);
    const Expr BE(static_cast<long long>(B));
    Ctx.Outputs[0].Shape = TensorShape({X[0], X[1] / (BE * BE), X[2] * BE, X[3] * BE});
    return foldIfConstant(Ctx, computeDepthToSpace<false>);
  };
  return S;
}

OpKernels depthtospaceKernels() {
  OpKernels K;
  K.OpType = "DepthToSpace";
  K.Variants.push_back(computeVariant("any_depthtospace__ref", 0, computeDepthToSpace<false>));
  K.Variants.push_back(computeVariant("any_depthtospace__strided", 10, computeDepthToSpace<true>));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("dcr", {tensorInput({1, 8, 2, 3})}, {{"blocksize", attrInt(2)}}),
        testCase("crd", {tensorInput({2, 8, 3, 2})}, {{"blocksize", attrInt(2)}, {"mode", attrString("CRD")}}),
        testCase("b3_u8", {typedInputs({1, 18, 2, 2}, ElementType::U8)[0]}, {{"blocksize", attrInt(3)}}),
        testCase("big", {tensorInput({2, 64, 16, 16})}, {{"blocksize", attrInt(4)}, {"mode", attrString("CRD")}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(DepthToSpace, depthtospaceSchema());
OPT_REGISTER_KERNELS(DepthToSpace, depthtospaceKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
