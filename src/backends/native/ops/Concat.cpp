// Concat: joins inputs along an axis (negative allowed), any element type. Non-axis dims must
// match; a symbolic dim meeting a constant takes the constant.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/native/ops/common/Indexing.h"
#include "backends/native/ops/common/OpUtil.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// Calls Copy(Dst, Src, Bytes) for every contiguous run of bytes the concatenation moves (one per
/// input and outer index), after checking the inputs against the output.
template <typename CopyFn> Status forEachConcatCopy(const KernelContext &Ctx, int64_t Axis, const char *Name, CopyFn Copy) {
  const TensorView &Y = Ctx.Outputs[0];
  const size_t Elem = getElementSize(Y.Type);
  const size_t A = static_cast<size_t>(Axis);
  const int64_t Outer = product(Y.Dims, 0, A);
  const int64_t OutRow = product(Y.Dims, A, Y.rank()); // elements per outer index in Y
  int64_t AxisSum = 0;
  for (const TensorView &X : Ctx.Inputs) {
    if (X.rank() != Y.rank())
      return runError(Name, "input rank differs from output rank");
    AxisSum += X.Dims[A];
  }
  if (AxisSum != Y.Dims[A])
    return runError(Name, "inputs add up to ", AxisSum, " along axis ", Axis, ", output has ", Y.Dims[A]);
  int64_t Offset = 0;
  for (const TensorView &X : Ctx.Inputs) {
    const int64_t Row = product(X.Dims, A, X.rank());
    const char *Src = static_cast<const char *>(X.Data);
    char *Dst = static_cast<char *>(Y.Data);
    // The memory plan may have put this input inside the output already (ExecutionPlan.cpp):
    // its producer wrote it in place, nothing to move.
    if (Outer == 1 && Src == Dst + static_cast<size_t>(Offset) * Elem) {
      Offset += Row;
      continue;
    }
    for (int64_t O = 0; O < Outer && Row > 0; ++O)
      Copy(Dst + static_cast<size_t>(O * OutRow + Offset) * Elem, Src + static_cast<size_t>(O * Row) * Elem,
           static_cast<size_t>(Row) * Elem);
    Offset += Row;
  }
  return Status::ok();
}

Status concatRun(const KernelContext &Ctx, int64_t Axis) {
  return forEachConcatCopy(Ctx, Axis, "any_concat__ref",
                           [](char *Dst, const char *Src, size_t Bytes) { std::memcpy(Dst, Src, Bytes); });
}

Status inferConcat(ShapeContext &Ctx) {
  if (!Ctx.N.hasAttr("axis"))
    return Ctx.error(ErrorCode::Model, "attribute 'axis' is required");
  RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
  const TensorShape &First = Ctx.Inputs[0].Shape;
  const size_t Rank = First.getRank();
  if (Rank == 0)
    return Ctx.error(ErrorCode::Shape, "cannot concatenate scalars");
  ASSIGN_OR_RETURN(int64_t Axis, Ctx.N.getInt("axis", 0));
  ASSIGN_OR_RETURN(Axis, normalizeAxis(Ctx.N, "axis", Axis, static_cast<int64_t>(Rank)));
  std::vector<Expr> Dims = First.dims();
  Expr AxisDim(0);
  for (size_t I = 0; I < Ctx.Inputs.size(); ++I) {
    if (!Ctx.Inputs[I].Present)
      return Ctx.error(ErrorCode::Model, "input ", I, " is missing");
    RETURN_IF_ERROR(requireSameType(Ctx, 0, I));
    const TensorShape &S = Ctx.Inputs[I].Shape;
    if (S.getRank() != Rank)
      return Ctx.error(ErrorCode::Shape, "input ", I, " has shape ", S.toString(), " but input 0 has shape ",
                       First.toString(), " (ranks differ)");
    for (size_t D = 0; D < Rank; ++D) {
      if (static_cast<int64_t>(D) == Axis)
        continue;
      if (S[D].isConst() && Dims[D].isConst() && S[D].value() != Dims[D].value())
        return Ctx.error(ErrorCode::Shape, "input ", I, " has shape ", S.toString(), " but input 0 has shape ",
                         First.toString(), ": dim ", D, " differs outside the concat axis ", Axis);
      if (S[D].isConst())
        Dims[D] = S[D];
    }
    AxisDim = AxisDim + S[static_cast<size_t>(Axis)];
  }
  Dims[static_cast<size_t>(Axis)] = AxisDim;
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
  // Small constant inputs (PyTorch's shape computations) fold at load.
  const int64_t FoldAxis = Axis;
  return foldIfConstant(Ctx, [FoldAxis](const Node &, const std::vector<TensorView> &In,
                                         const std::vector<TensorView> &Out, const Parallel &Par) {
    return concatRun(KernelContext{In, Out, Par}, FoldAxis);
  });
}

OpSchema concatSchema() {
  OpSchema S;
  S.OpType = "Concat";
  S.MinInputs = 1;
  S.MaxInputs = -1;
  S.Infer = inferConcat;
  return S;
}

class ConcatKernel : public Kernel {
public:
  explicit ConcatKernel(int64_t Axis) : Axis(Axis) {}
  Status run(const KernelContext &Ctx) const override { return concatRun(Ctx, Axis); }

private:
  int64_t Axis;
};

/// The same copies cut into pieces of at most 64 KiB and spread over the pool when the output is
/// big (a decoder's key/value cache grows by one row per step: megabytes per Concat).
class ConcatParallelKernel : public Kernel {
public:
  explicit ConcatParallelKernel(int64_t Axis) : Axis(Axis) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &Y = Ctx.Outputs[0];
    const size_t Elem = getElementSize(Y.Type);
    if (Ctx.Par.threads() <= 1 || Y.elementCount() * Elem < (size_t{256} << 10))
      return concatRun(Ctx, Axis);
    struct Piece {
      char *Dst;
      const char *Src;
      size_t Bytes;
    };
    constexpr size_t MaxPiece = size_t{64} << 10;
    std::vector<Piece> Pieces;
    RETURN_IF_ERROR(forEachConcatCopy(Ctx, Axis, "any_concat__parallel", [&](char *D, const char *S, size_t Bytes) {
      for (size_t Done = 0; Done < Bytes; Done += MaxPiece)
        Pieces.push_back({D + Done, S + Done, std::min(MaxPiece, Bytes - Done)});
    }));
    Ctx.Par.forRange(Pieces.size(), 1, [&](size_t Lo, size_t Hi) {
      for (size_t I = Lo; I < Hi; ++I)
        std::memcpy(Pieces[I].Dst, Pieces[I].Src, Pieces[I].Bytes);
    });
    return Status::ok();
  }

private:
  int64_t Axis;
};

Result<int64_t> concatAxis(const KernelCreateInfo &I) {
  ASSIGN_OR_RETURN(int64_t Axis, I.N.getInt("axis", 0));
  return normalizeAxis(I.N, "axis", Axis, static_cast<int64_t>(I.Inputs[0].Shape.getRank()));
}

OpKernels concatKernels() {
  OpKernels K;
  K.OpType = "Concat";
  K.Variants.push_back({"any_concat__ref", 0, nullptr, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(const int64_t Axis, concatAxis(I));
                          return makeKernel<ConcatKernel>(Axis);
                        }});
  K.Variants.push_back({"any_concat__parallel", 10, nullptr,
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(const int64_t Axis, concatAxis(I));
                          return makeKernel<ConcatParallelKernel>(Axis);
                        }});
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("axis0", {tensorInput({2, 3}), tensorInput({1, 3}), tensorInput({4, 3})}, {{"axis", attrInt(0)}}),
        testCase("axis1", {tensorInput({2, 3, 2}), tensorInput({2, 1, 2})}, {{"axis", attrInt(1)}}),
        testCase("negative_axis", {tensorInput({2, 3}), tensorInput({2, 5})}, {{"axis", attrInt(-1)}}),
        testCase("single", {tensorInput({4})}, {{"axis", attrInt(0)}}),
        testCase("kv_cache_large", {tensorInput({1, 4, 300, 64}), tensorInput({1, 4, 1, 64})}, {{"axis", attrInt(2)}}),
        testCase("large_rows_split", {tensorInput({2, 70000}), tensorInput({2, 3})}, {{"axis", attrInt(1)}}),
        testCase("empty_part", {tensorInput({2, 0}), tensorInput({2, 2})}, {{"axis", attrInt(1)}}),
        testCase("i64", {typedInputs({2, 2}, ElementType::I64)[0], typedInputs({2, 1}, ElementType::I64)[0]},
                 {{"axis", attrInt(1)}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Concat, concatSchema());
OPT_REGISTER_KERNELS(Concat, concatKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
