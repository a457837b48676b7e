// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims and
// zeroes the rest, k from the optional scalar input; any numeric or bool type.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeTrilu(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                    const Parallel &Par) {
  const TensorView &X = In[0], &Y = Out[0];
  ASSIGN_OR_RETURN(const int64_t Upper, N.getInt("upper", 1));
  int64_t K = 0;
  if (In.size() > 1 && In[1].Data) {
    ASSIGN_OR_RETURN(const std::vector<int64_t> KV, readInts(In[1], "k"));
    if (KV.size() != 1)
      return runError("any_trilu__ref", "k must be a scalar");
    K = KV[0];
  }
  const size_t R = X.rank(), Elem = getElementSize(X.Type);
  const int64_t Rows = X.Dims[R - 2], Cols = X.Dims[R - 1];
  const size_t Mats = static_cast<size_t>(product(X.Dims, 0, R - 2));
  Par.forRange(Mats * static_cast<size_t>(Rows), 64, [&](size_t Lo, size_t Hi) {
    for (size_t T = Lo; T < Hi; ++T) {
      const int64_t I = static_cast<int64_t>(T % static_cast<size_t>(Rows));
      const char *Src = static_cast<const char *>(X.Data) + T * static_cast<size_t>(Cols) * Elem;
      char *Dst = static_cast<char *>(Y.Data) + T * static_cast<size_t>(Cols) * Elem;
      for (int64_t J = 0; J < Cols; ++J) {
        const bool Keep = Upper ? J - I >= K : J - I <= K;
        if (Keep)
          copyElement(Dst + J * Elem, Src + J * Elem, Elem);
        else
          std::memset(Dst + J * Elem, 0, Elem);
      }
    }
  });
  return Status::ok();
}

OpSchema triluSchema() {
  OpSchema S;
  S.OpType = "Trilu";
  S.MinInputs = 1;
  S.MaxInputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireNumericType(Ctx, 0));
    if (Ctx.Inputs[0].Shape.getRank() < 2)
      return Ctx.error(ErrorCode::Shape, "input 0 must have rank >= 2, got ", Ctx.Inputs[0].Shape.toString());
    if (Ctx.hasInput(1)) {
      RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
      const Expr C = Ctx.Inputs[1].Shape.getElementCount();
      if (C.isConst() && C.value() != 1)
        return Ctx.error(ErrorCode::Shape, "input 1 (k) must be a scalar, got ", Ctx.Inputs[1].Shape.toString());
    }
    ASSIGN_OR_RETURN(const int64_t Upper, Ctx.N.getInt("upper", 1));
    if (Upper != 0 && Upper != 1)
      return Ctx.error(ErrorCode::Model, "attribute 'upper' value ", Upper, " must be 0 or 1");
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return foldIfConstant(Ctx, computeTrilu);
  };
  return S;
}

OpKernels triluKernels() {
  OpKernels K;
  K.OpType = "Trilu";
  K.Variants.push_back(computeVariant("any_trilu__ref", 0, computeTrilu));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("triu", {tensorInput({4, 5})}),
        testCase("tril", {tensorInput({4, 5})}, {{"upper", attrInt(0)}}),
        testCase("triu_k_neg", {tensorInput({3, 4, 5}), scalarInput(-1, ElementType::I64)}),
        testCase("tril_k_pos", {tensorInput({2, 4, 5}), scalarInput(2, ElementType::I64)}, {{"upper", attrInt(0)}}),
        testCase("k_out_of_range", {tensorInput({3, 3}), scalarInput(10, ElementType::I64)}),
        testCase("i64", typedInputs({5, 5}, ElementType::I64), {{"upper", attrInt(0)}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Trilu, triluSchema());
OPT_REGISTER_KERNELS(Trilu, triluKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
