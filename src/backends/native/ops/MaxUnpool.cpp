// MaxUnpool (opsets 9, 11, 22): the partial inverse of MaxPool. Each value of X [N, C, D...] is
// written to the flat position given by Indices (MaxPool's second output, flat over the whole
// unpooled tensor) of a zero tensor of the pooling-inverse shape (in - 1) * stride + kernel -
// pads; with 'output_shape' that tensor sits in the leading corner of a larger zero output (as
// the ONNX reference does). Any copyable type; indices i64.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct UnpoolAttrs {
  std::vector<int64_t> Kernel, Strides, Pads;
};

Result<UnpoolAttrs> unpoolAttrs(const Node &N, size_t Spatial) {
  UnpoolAttrs A;
  if (!N.hasAttr("kernel_shape"))
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'kernel_shape' is required");
  ASSIGN_OR_RETURN(A.Kernel, N.getInts("kernel_shape", {}));
  ASSIGN_OR_RETURN(A.Strides, N.getInts("strides", std::vector<int64_t>(A.Kernel.size(), 1)));
  ASSIGN_OR_RETURN(A.Pads, N.getInts("pads", std::vector<int64_t>(2 * A.Kernel.size(), 0)));
  if (A.Kernel.size() != Spatial || A.Strides.size() != Spatial || A.Pads.size() != 2 * Spatial)
    return makeError(ErrorCode::Model, N.describe(), ": kernel_shape ", joinInts(A.Kernel), ", strides ",
                     joinInts(A.Strides), " and pads ", joinInts(A.Pads), " do not fit ", Spatial, " spatial dims");
  for (size_t I = 0; I < Spatial; ++I)
    if (A.Kernel[I] < 1 || A.Strides[I] < 1 || A.Pads[I] < 0 || A.Pads[I + Spatial] < 0)
      return makeError(ErrorCode::Model, N.describe(), ": kernel_shape ", joinInts(A.Kernel), " and strides ",
                       joinInts(A.Strides), " must be positive, pads ", joinInts(A.Pads), " non-negative");
  return A;
}

/// Unpooled extent of one spatial dim.
int64_t unpooledDim(const UnpoolAttrs &A, size_t I, int64_t In) {
  const size_t K = A.Kernel.size();
  return (In - 1) * A.Strides[I] - (A.Pads[I] + A.Pads[I + K]) + A.Kernel[I];
}

Status computeMaxUnpool(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                        const Parallel &) {
  const TensorView &X = In[0], &Ind = In[1], &Y = Out[0];
  const size_t R = X.rank();
  if (R < 3 || Ind.Dims != X.Dims)
    return runError("maxunpool", "X ", joinInts(X.Dims), " and indices ", joinInts(Ind.Dims), " differ or are not [N, C, D...]");
  ASSIGN_OR_RETURN(const UnpoolAttrs A, unpoolAttrs(N, R - 2));
  std::vector<int64_t> Unpooled = {X.Dims[0], X.Dims[1]};
  for (size_t I = 0; I + 2 < R; ++I)
    Unpooled.push_back(unpooledDim(A, I, X.Dims[I + 2]));
  for (size_t I = 0; I < R; ++I)
    if (Y.rank() != R || Y.Dims[I] < Unpooled[I])
      return runError("maxunpool", "output ", joinInts(Y.Dims), " is smaller than the unpooled shape ",
                      joinInts(Unpooled));
  const size_t Elem = getElementSize(X.Type);
  std::memset(Y.Data, 0, Y.elementCount() * Elem);
  const int64_t Total = product(Unpooled, 0, R);
  const std::vector<int64_t> OutStrides = stridesOf(Y.Dims);
  const char *Src = static_cast<const char *>(X.Data);
  char *Dst = static_cast<char *>(Y.Data);
  for (size_t E = 0; E < X.elementCount(); ++E) {
    const int64_t Flat = readIndex(Ind, E);
    if (Flat < 0 || Flat >= Total)
      return makeError(ErrorCode::Infer, N.describe(), ": index ", Flat, " at position ", E,
                       " is outside the unpooled tensor ", joinInts(Unpooled));
    int64_t Off = 0, Rest = Flat;
    for (size_t D = R; D-- > 0;) {
      Off += (Rest % Unpooled[D]) * OutStrides[D];
      Rest /= Unpooled[D];
    }
    copyElement(Dst + static_cast<size_t>(Off) * Elem, Src + E * Elem, Elem);
  }
  return Status::ok();
}

Status inferMaxUnpool(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
  RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
  const TensorShape &X = Ctx.Inputs[0].Shape;
  const size_t R = X.getRank();
  if (R < 3 || Ctx.Inputs[1].Shape.getRank() != R)
    return Ctx.error(ErrorCode::Shape, "X ", X.toString(), " and indices ", Ctx.Inputs[1].Shape.toString(),
                     " must both be [N, C, D...]");
  ASSIGN_OR_RETURN(const UnpoolAttrs A, unpoolAttrs(Ctx.N, R - 2));
  std::vector<Expr> Out(X.begin(), X.end());
  for (size_t I = 0; I + 2 < R; ++I)
    Out[I + 2] = X[I + 2].isConst() ? Expr(static_cast<long long>(unpooledDim(A, I, X[I + 2].value())))
                                    : Ctx.newSymbol();
  if (Ctx.hasInput(2)) {
    RETURN_IF_ERROR(requireInputType(Ctx, 2, {ElementType::I64}));
    if (isConstInput(Ctx, 2)) {
      ASSIGN_OR_RETURN(const std::vector<int64_t> Shape, constInts(Ctx, 2));
      if (Shape.size() != R)
        return Ctx.error(ErrorCode::Shape, "output_shape ", joinInts(Shape), " does not have rank ", R);
      for (size_t I = 0; I < R; ++I) {
        if (Out[I].isConst() && Shape[I] < Out[I].value())
          return Ctx.error(ErrorCode::Shape, "output_shape ", joinInts(Shape), " is smaller than the unpooled shape ",
                           TensorShape(Out).toString());
        Out[I] = Expr(static_cast<long long>(Shape[I]));
      }
    } else {
      for (Expr &D : Out)
        D = Ctx.newSymbol();
    }
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = TensorShape(Out);
  return Status::ok();
}

OpSchema maxUnpoolSchema() {
  OpSchema S;
  S.OpType = "MaxUnpool";
  S.MinInputs = 2;
  S.MaxInputs = 3;
  S.Infer = inferMaxUnpool;
  return S;
}

OpKernels maxUnpoolKernels() {
  OpKernels K;
  K.OpType = "MaxUnpool";
  K.Variants.push_back(computeVariant("any_maxunpool__ref", 0, computeMaxUnpool));
  K.TestCases = [] {
    const auto ind = [](std::vector<int64_t> Dims, std::vector<double> V) {
      return valuesInput(std::move(Dims), std::move(V), ElementType::I64, false);
    };
    const std::map<std::string, AttrValue> K2 = {{"kernel_shape", attrInts({2, 2})}, {"strides", attrInts({2, 2})}};
    return std::vector<OpTestCase>{
        testCase("2d", {tensorInput({1, 2, 2, 2}), ind({1, 2, 2, 2}, {5, 7, 13, 15, 16, 19, 25, 30})}, K2),
        testCase("2d_output_shape",
                 {tensorInput({1, 1, 2, 2}), ind({1, 1, 2, 2}, {5, 7, 13, 15}), intsInput({1, 1, 5, 5})}, K2),
        testCase("1d_i32_padded", {tensorInput({2, 1, 3}, ElementType::I32), ind({2, 1, 3}, {0, 2, 3, 5, 6, 9})},
                 {{"kernel_shape", attrInts({3})}, {"strides", attrInts({2})}, {"pads", attrInts({1, 0})}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(MaxUnpool, maxUnpoolSchema());
OPT_REGISTER_KERNELS(MaxUnpool, maxUnpoolKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
