// GatherND: indices [..., k] address slices of data after 'batch_dims' leading batch dims
// (opset 12); output = indices.shape[:-1] + data.shape[batch_dims + k:]. Any element type,
// i64 indices (i32 accepted), negative indices count from the end.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeGatherND(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                       const Parallel &) {
  const TensorView &X = In[0], &Idx = In[1], &Y = Out[0];
  ASSIGN_OR_RETURN(const int64_t B, N.getInt("batch_dims", 0));
  const size_t Q = Idx.rank(), Bs = static_cast<size_t>(B);
  const size_t K = static_cast<size_t>(Idx.Dims[Q - 1]);
  const size_t Elem = getElementSize(X.Type);
  const std::vector<int64_t> XS = stridesOf(X.Dims);
  const int64_t Batch = product(X.Dims, 0, Bs);
  const int64_t PerBatch = product(Idx.Dims, Bs, Q - 1); // index tuples per batch
  const int64_t Slice = product(X.Dims, Bs + K, X.rank());
  const int64_t BatchStride = product(X.Dims, Bs, X.rank());
  if (Y.elementCount() != static_cast<size_t>(Batch * PerBatch * Slice))
    return runError("any_gathernd__ref", "output ", joinInts(Y.Dims), " does not match the inputs");
  for (int64_t Bi = 0; Bi < Batch; ++Bi)
    for (int64_t T = 0; T < PerBatch; ++T) {
      int64_t Off = Bi * BatchStride;
      for (size_t J = 0; J < K; ++J) {
        const int64_t Dim = X.Dims[Bs + J];
        int64_t I = readIndex(Idx, static_cast<size_t>((Bi * PerBatch + T) * static_cast<int64_t>(K)) + J);
        if (I < -Dim || I >= Dim)
          return runError("any_gathernd__ref", "index ", I, " is out of range [", -Dim, ", ", Dim - 1, "]");
        Off += (I < 0 ? I + Dim : I) * XS[Bs + J];
      }
      std::memcpy(static_cast<char *>(Y.Data) + (Bi * PerBatch + T) * Slice * Elem,
                  static_cast<const char *>(X.Data) + Off * Elem, static_cast<size_t>(Slice) * Elem);
    }
  return Status::ok();
}

OpSchema gatherNDSchema() {
  OpSchema S;
  S.OpType = "GatherND";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    RETURN_IF_ERROR(requireIndexType(Ctx, 1));
    const TensorShape &X = Ctx.Inputs[0].Shape, &I = Ctx.Inputs[1].Shape;
    ASSIGN_OR_RETURN(const int64_t B, Ctx.N.getInt("batch_dims", 0));
    const int64_t R = static_cast<int64_t>(X.getRank()), Q = static_cast<int64_t>(I.getRank());
    if (R < 1 || Q < 1)
      return Ctx.error(ErrorCode::Shape, "data ", X.toString(), " and indices ", I.toString(), " must have rank >= 1");
    if (B < 0 || B >= std::min(R, Q))
      return Ctx.error(ErrorCode::Model, "attribute 'batch_dims' value ", B, " must be in [0, min(rank(data), rank(indices)) - 1]");
    if (!I[Q - 1].isConst())
      return Ctx.error(ErrorCode::Shape, "the last dim of indices ", I.toString(), " must be known");
    const int64_t K = I[Q - 1].value();
    if (K < 1 || K > R - B)
      return Ctx.error(ErrorCode::Shape, "the last dim of indices ", I.toString(), " must be in [1, ", R - B,
                       "] for data ", X.toString(), " and batch_dims ", B);
    std::vector<Expr> Dims(I.begin(), I.end() - 1);
    Dims.insert(Dims.end(), X.begin() + B + K, X.end());
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return foldIfConstant(Ctx, computeGatherND);
  };
  return S;
}

OpKernels gatherNDKernels() {
  OpKernels K;
  K.OpType = "GatherND";
  K.Variants.push_back(computeVariant("any_gathernd__ref", 0, computeGatherND));
  K.TestCases = [] {
    const auto idx = [](std::vector<int64_t> Dims, std::vector<double> V) {
      return valuesInput(std::move(Dims), std::move(V), ElementType::I64, false);
    };
    return std::vector<OpTestCase>{
        testCase("full_index", {tensorInput({2, 2}), idx({2, 2}, {0, 0, 1, 1})}),
        testCase("slices", {tensorInput({2, 2, 3}), idx({2, 1}, {1, 0})}),
        testCase("negative", {tensorInput({3, 4}), idx({2, 1, 2}, {-1, -1, 0, 2})}),
        testCase("batch_dims", {tensorInput({2, 2, 2}), idx({2, 1}, {1, 0})}, {{"batch_dims", attrInt(1)}}),
        testCase("i32_data", {typedInputs({3, 3}, ElementType::I32)[0], idx({2, 2}, {2, 1, 0, 2})}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(GatherND, gatherNDSchema());
OPT_REGISTER_KERNELS(GatherND, gatherNDKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
