// Tile: repeats the input repeats[i] times along each dim i (repeats: 1-D i64 input, one entry
// per dim), any element type. The reference maps every output element back with a modulo; the
// rows variant copies input rows repeatedly, in parallel.
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

template <bool Fast>
Status computeTile(const Node &, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                   const Parallel &Par) {
  const TensorView &X = In[0], &Y = Out[0];
  const size_t R = X.rank(), Elem = getElementSize(X.Type);
  if (Y.rank() != R)
    return runError("any_tile__ref", "output rank differs from input rank");
  for (size_t D = 0; D < R; ++D)
    if (X.Dims[D] == 0 ? Y.Dims[D] != 0 : Y.Dims[D] % X.Dims[D] != 0)
      return runError("any_tile__ref", "output ", joinInts(Y.Dims), " is not a tiling of ", joinInts(X.Dims));
  const size_t N = Y.elementCount();
  if (N == 0)
    return Status::ok();
  const std::vector<int64_t> XS = stridesOf(X.Dims);
  const char *Src = static_cast<const char *>(X.Data);
  char *Dst = static_cast<char *>(Y.Data);
  if (!Fast || R == 0) {
    for (size_t T = 0; T < N; ++T) {
      size_t Rem = T;
      int64_t Off = 0;
      for (size_t D = R; D-- > 0;) {
        Off += static_cast<int64_t>(Rem % static_cast<size_t>(Y.Dims[D])) % X.Dims[D] * XS[D];
        Rem /= static_cast<size_t>(Y.Dims[D]);
      }
      std::memcpy(Dst + T * Elem, Src + Off * static_cast<int64_t>(Elem), Elem);
    }
    return Status::ok();
  }
  // One output row (innermost dim) = the matching input row repeated.
  const size_t InRow = static_cast<size_t>(X.Dims[R - 1]) * Elem, OutRow = static_cast<size_t>(Y.Dims[R - 1]) * Elem;
  const size_t Rows = N / static_cast<size_t>(Y.Dims[R - 1]);
  Par.forRange(Rows, std::max<size_t>(1, 16384 / OutRow), [&](size_t Lo, size_t Hi) {
    for (size_t T = Lo; T < Hi; ++T) {
      size_t Rem = T;
      int64_t Off = 0;
      for (size_t D = R - 1; D-- > 0;) {
        Off += static_cast<int64_t>(Rem % static_cast<size_t>(Y.Dims[D])) % X.Dims[D] * XS[D];
        Rem /= static_cast<size_t>(Y.Dims[D]);
      }
      for (size_t B = 0; B < OutRow; B += InRow)
        std::memcpy(Dst + T * OutRow + B, Src + Off * static_cast<int64_t>(Elem), InRow);
    }
  });
  return Status::ok();
}

Status inferTile(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
  RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
  const TensorShape &X = Ctx.Inputs[0].Shape, &RS = Ctx.Inputs[1].Shape;
  if (RS.getRank() != 1 || (RS[0].isConst() && RS[0].value() != static_cast<int64_t>(X.getRank())))
    return Ctx.error(ErrorCode::Shape, "input 1 (repeats) must be 1-D with one entry per input dim (",
                     X.getRank(), "), got shape ", RS.toString());
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  std::vector<Expr> Dims;
  if (isConstInput(Ctx, 1)) {
    ASSIGN_OR_RETURN(const std::vector<int64_t> Rep, constInts(Ctx, 1));
    for (size_t I = 0; I < X.getRank(); ++I) {
      if (Rep[I] < 0)
        return Ctx.error(ErrorCode::Shape, "input 1 (repeats) ", joinInts(Rep), " has a negative entry");
      Dims.push_back(X[I] * Expr(static_cast<long long>(Rep[I])));
    }
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return foldIfConstant(Ctx, computeTile<false>);
  }
  for (size_t I = 0; I < X.getRank(); ++I)
    Dims.push_back(Ctx.newSymbol());
  Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
  return Status::ok();
}

OpSchema tileSchema() {
  OpSchema S;
  S.OpType = "Tile";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = inferTile;
  return S;
}

OpKernels tileKernels() {
  OpKernels K;
  K.OpType = "Tile";
  K.Variants.push_back(computeVariant("any_tile__ref", 0, computeTile<false>));
  K.Variants.push_back(computeVariant("any_tile__rows", 10, computeTile<true>));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("2d", {tensorInput({2, 3}), intsInput({2, 2})}),
        testCase("3d", {tensorInput({2, 3, 4}), intsInput({1, 3, 2})}),
        testCase("ones", {tensorInput({3, 4}), intsInput({1, 1})}),
        testCase("i64", {typedInputs({2}, ElementType::I64)[0], intsInput({5})}),
        testCase("zero_repeat", {tensorInput({2, 2}), intsInput({0, 3})}),
        testCase("u8_big", {typedInputs({4, 32}, ElementType::U8)[0], intsInput({50, 3})}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Tile, tileSchema());
OPT_REGISTER_KERNELS(Tile, tileKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
