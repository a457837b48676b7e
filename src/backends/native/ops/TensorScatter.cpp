// TensorScatter (opset 24): the KV-cache update. Returns past_cache with update [B, ..., S, ...]
// written along 'axis' (default -2) starting at write_indices[b] (default 0) for each batch row
// b; mode 'circular' wraps positions modulo the cache length, 'linear' requires them to fit. The
// other dims must match. Any copyable type; rows after the axis move as byte copies.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct ScatterAttrs {
  int64_t Axis = 0;
  bool Circular = false;
};

Result<ScatterAttrs> tensorScatterAttrs(const Node &N, size_t Rank) {
  ScatterAttrs A;
  ASSIGN_OR_RETURN(const std::string Mode, N.getString("mode", "linear"));
  if (Mode != "linear" && Mode != "circular")
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'mode' value '", Mode,
                     "' is not 'linear' or 'circular'");
  A.Circular = Mode == "circular";
  ASSIGN_OR_RETURN(const int64_t Raw, N.getInt("axis", -2));
  ASSIGN_OR_RETURN(A.Axis, normalizeAxis(N, "axis", Raw, static_cast<int64_t>(Rank)));
  if (A.Axis == 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'axis' value ", Raw,
                     " is the batch axis (write_indices are per batch row)");
  return A;
}

Status computeTensorScatter(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                            const Parallel &) {
  const TensorView &Past = In[0], &Upd = In[1], &Y = Out[0];
  const size_t R = Past.rank();
  ASSIGN_OR_RETURN(const ScatterAttrs A, tensorScatterAttrs(N, R));
  const size_t Ax = static_cast<size_t>(A.Axis);
  bool Fits = Upd.rank() == R && Y.Dims == Past.Dims;
  for (size_t I = 0; Fits && I < R; ++I)
    Fits = I == Ax ? Upd.Dims[I] <= Past.Dims[I] : Upd.Dims[I] == Past.Dims[I];
  if (!Fits)
    return makeError(ErrorCode::Shape, N.describe(), ": update ", joinInts(Upd.Dims), " does not fit past_cache ",
                     joinInts(Past.Dims), " along axis ", A.Axis);
  const int64_t Batch = Past.Dims[0];
  std::vector<int64_t> Write(static_cast<size_t>(Batch), 0);
  if (In.size() > 2 && In[2].Data) {
    if (In[2].elementCount() != static_cast<size_t>(Batch))
      return makeError(ErrorCode::Shape, N.describe(), ": write_indices ", joinInts(In[2].Dims), " is not [", Batch,
                       "]");
    for (int64_t B = 0; B < Batch; ++B)
      Write[static_cast<size_t>(B)] = readIndex(In[2], static_cast<size_t>(B));
  }
  const size_t Elem = getElementSize(Past.Type);
  std::memcpy(Y.Data, Past.Data, Past.elementCount() * Elem);
  const int64_t Max = Past.Dims[Ax], Seq = Upd.Dims[Ax];
  const int64_t PerBatch = product(Past.Dims, 1, Ax), Row = product(Past.Dims, Ax + 1, R);
  const size_t RowBytes = static_cast<size_t>(Row) * Elem;
  char *Dst = static_cast<char *>(Y.Data);
  const char *Src = static_cast<const char *>(Upd.Data);
  for (int64_t B = 0; B < Batch; ++B) {
    const int64_t W = Write[static_cast<size_t>(B)];
    if (W < 0 || (!A.Circular && W + Seq > Max))
      return makeError(ErrorCode::Infer, N.describe(), ": write_indices[", B, "] = ", W, " plus ", Seq,
                       " updates does not fit cache length ", Max, " (mode linear)");
    for (int64_t P = 0; P < PerBatch; ++P)
      for (int64_t S = 0; S < Seq; ++S) {
        const int64_t Pos = A.Circular ? (W + S) % Max : W + S;
        std::memcpy(Dst + static_cast<size_t>(((B * PerBatch + P) * Max + Pos) * Row) * Elem,
                    Src + static_cast<size_t>(((B * PerBatch + P) * Seq + S) * Row) * Elem, RowBytes);
      }
  }
  return Status::ok();
}

Status inferTensorScatter(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
  if (Ctx.hasInput(2))
    RETURN_IF_ERROR(requireInputType(Ctx, 2, {ElementType::I64}));
  const TensorShape &P = Ctx.Inputs[0].Shape, &U = Ctx.Inputs[1].Shape;
  const size_t R = P.getRank();
  if (R < 2 || U.getRank() != R)
    return Ctx.error(ErrorCode::Shape, "past_cache ", P.toString(), " and update ", U.toString(),
                     " must have the same rank >= 2");
  ASSIGN_OR_RETURN(const ScatterAttrs A, tensorScatterAttrs(Ctx.N, R));
  for (size_t I = 0; I < R; ++I) {
    if (!P[I].isConst() || !U[I].isConst())
      continue;
    const bool Bad = I == static_cast<size_t>(A.Axis) ? U[I].value() > P[I].value() : U[I].value() != P[I].value();
    if (Bad)
      return Ctx.error(ErrorCode::Shape, "update ", U.toString(), " does not fit past_cache ", P.toString(),
                       " along axis ", A.Axis);
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = P;
  return Status::ok();
}

OpSchema tensorScatterSchema() {
  OpSchema S;
  S.OpType = "TensorScatter";
  S.MinInputs = 2;
  S.MaxInputs = 3;
  S.Infer = inferTensorScatter;
  return S;
}

OpKernels tensorScatterKernels() {
  OpKernels K;
  K.OpType = "TensorScatter";
  K.Variants.push_back(computeVariant("any_tensorscatter__ref", 0, computeTensorScatter));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        withOpset(testCase("linear_4d", {tensorInput({2, 3, 8, 4}), tensorInput({2, 3, 2, 4}), intsInput({1, 6}, false)}),
                  24),
        withOpset(testCase("circular", {tensorInput({2, 1, 4, 5}), tensorInput({2, 1, 3, 5}), intsInput({3, 1}, false)},
                           {{"mode", attrString("circular")}}),
                  24),
        withOpset(testCase("axis_last_no_indices", {tensorInput({3, 6}, ElementType::F16), tensorInput({3, 2}, ElementType::F16)},
                           {{"axis", attrInt(-1)}}),
                  24),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(TensorScatter, tensorScatterSchema());
OPT_REGISTER_KERNELS(TensorScatter, tensorScatterKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
