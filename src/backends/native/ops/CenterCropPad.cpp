// CenterCropPad (opset 18): crops or zero-pads each of 'axes' (default all) to the target length
// in the 'shape' input, centered (the extra element of an odd difference goes to the end). Any
// copyable element type; rows of the innermost dim move as byte copies. The output shape depends
// on 'shape': exact when it is constant, else fresh symbols until the executor re-infers.
#include <cstring>

#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Result<std::vector<int64_t>> cropAxes(const Node &N, size_t Rank, size_t Count) {
  std::vector<int64_t> Axes;
  if (N.hasAttr("axes")) {
    ASSIGN_OR_RETURN(const std::vector<int64_t> Raw, N.getInts("axes", {}));
    for (int64_t A : Raw) {
      ASSIGN_OR_RETURN(const int64_t Ax, normalizeAxis(N, "axes", A, static_cast<int64_t>(Rank)));
      if (std::find(Axes.begin(), Axes.end(), Ax) != Axes.end())
        return makeError(ErrorCode::Model, N.describe(), ": attribute 'axes' value ", joinInts(Raw),
                         " repeats axis ", Ax);
      Axes.push_back(Ax);
    }
  } else {
    for (size_t I = 0; I < Rank; ++I)
      Axes.push_back(static_cast<int64_t>(I));
  }
  if (Count != Axes.size())
    return makeError(ErrorCode::Shape, N.describe(), ": input 'shape' has ", Count, " entries for ", Axes.size(),
                     " axes");
  return Axes;
}

Status computeCenterCropPad(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                            const Parallel &) {
  const TensorView &X = In[0], &S = In[1], &Y = Out[0];
  const size_t R = X.rank();
  ASSIGN_OR_RETURN(const std::vector<int64_t> Axes, cropAxes(N, R, S.elementCount()));
  std::vector<int64_t> OutDims = X.Dims, Shift(R, 0); // input index = output index + Shift
  for (size_t I = 0; I < Axes.size(); ++I) {
    const int64_t Target = S.data<const int64_t>()[I], Dim = X.Dims[static_cast<size_t>(Axes[I])];
    if (Target < 0)
      return runError("centercroppad", "shape[", I, "] = ", Target, " is negative");
    OutDims[static_cast<size_t>(Axes[I])] = Target;
    Shift[static_cast<size_t>(Axes[I])] = Target < Dim ? (Dim - Target) / 2 : -((Target - Dim) / 2);
  }
  if (Y.Dims != OutDims)
    return runError("centercroppad", "output ", joinInts(Y.Dims), " is not ", joinInts(OutDims));
  const size_t Elem = getElementSize(X.Type);
  const uint8_t *Src = static_cast<const uint8_t *>(X.Data);
  uint8_t *Dst = static_cast<uint8_t *>(Y.Data);
  if (Y.elementCount() == 0)
    return Status::ok();
  std::memset(Dst, 0, Y.elementCount() * Elem);
  if (R == 0 || X.elementCount() == 0) {
    if (R == 0)
      std::memcpy(Dst, Src, Elem);
    return Status::ok();
  }
  // Walk the output rows (all dims but the last); copy the overlapping part of each.
  const std::vector<int64_t> InStrides = stridesOf(X.Dims);
  const int64_t Last = OutDims[R - 1], InLast = X.Dims[R - 1], Sh = Shift[R - 1];
  const int64_t C0 = std::max<int64_t>(0, -Sh), C1 = std::min(Last, InLast - Sh);
  const int64_t Rows = product(OutDims, 0, R - 1);
  std::vector<int64_t> Pos(R - 1, 0);
  for (int64_t Row = 0; Row < Rows; ++Row) {
    int64_t Off = 0;
    bool Inside = C1 > C0;
    for (size_t D = 0; D + 1 < R && Inside; ++D) {
      const int64_t P = Pos[D] + Shift[D];
      Inside = P >= 0 && P < X.Dims[D];
      Off += P * InStrides[D];
    }
    if (Inside)
      std::memcpy(Dst + static_cast<size_t>(Row * Last + C0) * Elem, Src + static_cast<size_t>(Off + C0 + Sh) * Elem,
                  static_cast<size_t>(C1 - C0) * Elem);
    for (size_t D = R - 1; D-- > 0;)
      if (++Pos[D] < OutDims[D])
        break;
      else
        Pos[D] = 0;
  }
  return Status::ok();
}

OpSchema centerCropPadSchema() {
  OpSchema S;
  S.OpType = "CenterCropPad";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
    const TensorShape &X = Ctx.Inputs[0].Shape, &Sh = Ctx.Inputs[1].Shape;
    if (Sh.getRank() != 1)
      return Ctx.error(ErrorCode::Shape, "input 'shape' ", Sh.toString(), " is not 1-D");
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    std::vector<Expr> Out(X.begin(), X.end());
    if (Sh[0].isConst()) {
      ASSIGN_OR_RETURN(const std::vector<int64_t> Axes,
                       cropAxes(Ctx.N, X.getRank(), static_cast<size_t>(Sh[0].value())));
      for (size_t I = 0; I < Axes.size(); ++I) {
        Expr &D = Out[static_cast<size_t>(Axes[I])];
        if (isConstInput(Ctx, 1)) {
          const int64_t T = Ctx.Inputs[1].Const->as<int64_t>()[I];
          if (T < 0)
            return Ctx.error(ErrorCode::Shape, "shape[", I, "] = ", T, " is negative");
          D = Expr(T);
        } else {
          D = Ctx.newSymbol();
        }
      }
    } else {
      for (Expr &D : Out)
        D = Ctx.newSymbol();
    }
    Ctx.Outputs[0].Shape = TensorShape(Out);
    return Status::ok();
  };
  return S;
}

OpKernels centerCropPadKernels() {
  OpKernels K;
  K.OpType = "CenterCropPad";
  K.Variants.push_back(computeVariant("any_centercroppad__ref", 0, computeCenterCropPad));
  K.TestCases = [] {
    const auto shape = [](std::vector<double> V) {
      const int64_t N = static_cast<int64_t>(V.size());
      return valuesInput({N}, std::move(V), ElementType::I64, true);
    };
    return std::vector<OpTestCase>{
        withOpset(testCase("crop_and_pad", {tensorInput({9, 8, 3}), shape({4, 11, 3})}), 18),
        withOpset(testCase("axes_odd", {tensorInput({3, 7, 6}), shape({4, 9})}, {{"axes", attrInts({-2, -1})}}), 18),
        withOpset(testCase("i64", {tensorInput({5, 5}, ElementType::I64), shape({2, 8})}), 18),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(CenterCropPad, centerCropPadSchema());
OPT_REGISTER_KERNELS(CenterCropPad, centerCropPadKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
