// GatherElements: out[i][j][k] = data[idx[i][j][k]][j][k] (for axis 0), the output has the
// indices' shape; any element type, i32/i64 indices, negative indices count from the end.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeGatherElements(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                             const Parallel &) {
  const TensorView &X = In[0], &Idx = In[1], &Y = Out[0];
  ASSIGN_OR_RETURN(int64_t Axis, N.getInt("axis", 0));
  ASSIGN_OR_RETURN(Axis, normalizeAxis(N, "axis", Axis, static_cast<int64_t>(X.rank())));
  const size_t R = X.rank(), Elem = getElementSize(X.Type);
  const std::vector<int64_t> XS = stridesOf(X.Dims);
  const int64_t Dim = X.Dims[static_cast<size_t>(Axis)];
  const size_t Count = Idx.elementCount();
  std::vector<int64_t> Pos(R, 0);
  for (size_t T = 0; T < Count; ++T) {
    int64_t I = readIndex(Idx, T);
    if (I < -Dim || I >= Dim)
      return runError("any_gatherelements__ref", "index ", I, " is out of range [", -Dim, ", ", Dim - 1, "]");
    if (I < 0)
      I += Dim;
    int64_t Off = 0;
    for (size_t D = 0; D < R; ++D)
      Off += (static_cast<int64_t>(D) == Axis ? I : Pos[D]) * XS[D];
    std::memcpy(static_cast<char *>(Y.Data) + T * Elem, static_cast<const char *>(X.Data) + Off * Elem, Elem);
    for (size_t D = R; D-- > 0;) // next position in the indices' shape
      if (++Pos[D] < Idx.Dims[D])
        break;
      else
        Pos[D] = 0;
  }
  return Status::ok();
}

OpSchema gatherElementsSchema() {
  OpSchema S;
  S.OpType = "GatherElements";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    RETURN_IF_ERROR(requireIndexType(Ctx, 1));
    const TensorShape &X = Ctx.Inputs[0].Shape, &I = Ctx.Inputs[1].Shape;
    if (X.getRank() == 0 || X.getRank() != I.getRank())
      return Ctx.error(ErrorCode::Shape, "data ", X.toString(), " and indices ", I.toString(),
                       " must have the same rank >= 1");
    ASSIGN_OR_RETURN(int64_t Axis, Ctx.N.getInt("axis", 0));
    ASSIGN_OR_RETURN(Axis, normalizeAxis(Ctx.N, "axis", Axis, static_cast<int64_t>(X.getRank())));
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = I;
    return foldIfConstant(Ctx, computeGatherElements);
  };
  return S;
}

OpKernels gatherElementsKernels() {
  OpKernels K;
  K.OpType = "GatherElements";
  K.Variants.push_back(computeVariant("any_gatherelements__ref", 0, computeGatherElements));
  K.TestCases = [] {
    const auto idx = [](std::vector<int64_t> Dims, std::vector<double> V, ElementType T = ElementType::I64) {
      return valuesInput(std::move(Dims), std::move(V), T, false);
    };
    return std::vector<OpTestCase>{
        testCase("axis0", {tensorInput({3, 3}), idx({2, 3}, {1, 2, 0, 2, 0, -1})}),
        testCase("axis1", {tensorInput({2, 2}), idx({2, 2}, {0, 0, 1, 0})}, {{"axis", attrInt(1)}}),
        testCase("neg_axis_3d", {tensorInput({2, 3, 4}), idx({2, 3, 2}, {0, 3, 1, 2, -1, 0, 2, 2, 1, 1, 0, 3})},
                 {{"axis", attrInt(-1)}}),
        testCase("i32_idx", {typedInputs({4, 2}, ElementType::I64)[0], idx({1, 2}, {3, 1}, ElementType::I32)}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(GatherElements, gatherElementsSchema());
OPT_REGISTER_KERNELS(GatherElements, gatherElementsKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
