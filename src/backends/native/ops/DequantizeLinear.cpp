// DequantizeLinear (opsets 10-25, integer inputs): y = (x - zero_point) * scale, per tensor or per
// axis; x is i8, u8, i16, u16 or i32, y has the scale's type (f32, or f16 from opset 19). Blocked
// dequantization (block_size > 0) is rejected with a ModelError.
#include "backends/native/ops/common/QuantCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Result<int64_t> dequantAxis(const Node &N, size_t Rank, bool PerAxis) {
  ASSIGN_OR_RETURN(const int64_t Axis, N.getInt("axis", 1));
  // The axis only matters for per-axis parameters; per-tensor ones ignore it (any rank).
  if (Rank == 0 || !PerAxis)
    return int64_t(0);
  return normalizeAxis(N, "axis", Axis, static_cast<int64_t>(Rank));
}

Status inferDequantize(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::I8, ElementType::U8, ElementType::I16, ElementType::U16,
                                            ElementType::I32}));
  RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::F32, ElementType::F16}));
  if (Ctx.hasInput(2))
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
  ASSIGN_OR_RETURN(const int64_t Block, Ctx.N.getInt("block_size", 0));
  if (Block != 0)
    return Ctx.error(ErrorCode::Model, "attribute 'block_size' value ", Block,
                     " (blocked dequantization) is not supported by the native backend");
  const TensorShape &X = Ctx.Inputs[0].Shape;
  ASSIGN_OR_RETURN(const int64_t Axis, dequantAxis(Ctx.N, X.getRank(), Ctx.Inputs[1].Shape.getRank() == 1 && paramCount(Ctx, 1) != 1));
  for (size_t I : {size_t(1), size_t(2)}) {
    if (!Ctx.hasInput(I))
      continue;
    const TensorShape &P = Ctx.Inputs[I].Shape;
    const int64_t Count = paramCount(Ctx, I);
    if (P.getRank() > 1)
      return Ctx.error(ErrorCode::Shape, "input ", I, " ", P.toString(), " must be a scalar or 1-D (per-axis)");
    if (P.getRank() == 1 && Count != 1 && Count >= 0 && X.getRank() > 0 && X[static_cast<size_t>(Axis)].isConst() &&
        Count != X[static_cast<size_t>(Axis)].value())
      return Ctx.error(ErrorCode::Shape, "input ", I, " ", P.toString(), " must have ",
                       X[static_cast<size_t>(Axis)].value(), " values (axis ", Axis, " of ", X.toString(), ")");
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[1].Type;
  Ctx.Outputs[0].Shape = X;
  return Status::ok();
}

Status runDequantize(const Node &N, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  const std::vector<float> Scale = loadFloats(Ctx.Inputs[1]);
  const std::vector<int32_t> Zp = loadZeroPoints(Ctx, 2);
  ASSIGN_OR_RETURN(const int64_t Axis, dequantAxis(N, X.rank(), Scale.size() > 1 || Zp.size() > 1));
  const int64_t Len = X.rank() ? X.Dims[static_cast<size_t>(Axis)] : 1;
  const int64_t Inner = X.rank() ? product(X.Dims, static_cast<size_t>(Axis) + 1, X.rank()) : 1;
  if ((Scale.size() != 1 && static_cast<int64_t>(Scale.size()) != Len) ||
      (Zp.size() != 1 && static_cast<int64_t>(Zp.size()) != Len))
    return runError("dequantizelinear", "scale/zero point must be scalars or have ", Len, " values");
  forRangeMaybe(Ctx, Par, X.elementCount(), 16384, [&](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I) {
      const size_t C = static_cast<size_t>((static_cast<int64_t>(I) / Inner) % std::max<int64_t>(Len, 1));
      const int64_t D = static_cast<int64_t>(loadInt(X, I)) - Zp[Zp.size() == 1 ? 0 : C];
      storeFloat(Y, I, static_cast<float>(D) * Scale[Scale.size() == 1 ? 0 : C]);
    }
  });
  return Status::ok();
}

OpKernels dequantizeKernels() {
  OpKernels K;
  K.OpType = "DequantizeLinear";
  for (bool Par : {false, true}) {
    const std::string Name = Par ? "q_dequantizelinear__parallel" : "q_dequantizelinear__ref";
    K.Variants.push_back({Name, Par ? 10 : 0, nullptr, [Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                            const Node N = I.N;
                            return makeKernel<FunctionKernel>([N, Par](const KernelContext &C) { return runDequantize(N, C, Par); });
                          }});
  }
  K.TestCases = [] {
    const auto Q = [](std::vector<int64_t> D, ElementType T, double Lo, double Hi) {
      TestInput I = tensorInput(std::move(D), T);
      I.Low = Lo, I.High = Hi;
      return I;
    };
    const auto F = [](std::vector<int64_t> D, std::vector<double> V) { return valuesInput(D, V, ElementType::F32, true); };
    const auto Z = [](std::vector<int64_t> D, std::vector<double> V, ElementType T) { return valuesInput(D, V, T, true); };
    return std::vector<OpTestCase>{
        testCase("u8", {Q({2, 3, 4}, ElementType::U8, 0, 255), F({}, {0.2}), Z({}, {128}, ElementType::U8)}),
        testCase("i8_no_zp", {Q({20}, ElementType::I8, -128, 127), F({}, {0.05})}),
        testCase("i32", {Q({3, 5}, ElementType::I32, -100000, 100000), F({}, {0.001})}),
        testCase("per_axis", {Q({2, 3, 4}, ElementType::U8, 0, 255), F({3}, {0.1, 0.2, 0.5}), Z({3}, {0, 10, 250}, ElementType::U8)}),
        testCase("per_axis_0", {Q({3, 4}, ElementType::I8, -128, 127), F({3}, {0.1, 0.2, 0.5}), Z({3}, {0, -10, 5}, ElementType::I8)},
                 {{"axis", attrInt(0)}}),
        testCase("large", {Q({64, 300}, ElementType::U8, 0, 255), F({}, {0.2}), Z({}, {3}, ElementType::U8)}),
    };
  };
  return K;
}

OpSchema dequantizeSchema() {
  OpSchema S;
  S.OpType = "DequantizeLinear";
  S.MinInputs = 2;
  S.MaxInputs = 3;
  S.Infer = inferDequantize;
  return S;
}

OPT_REGISTER_SCHEMA(DequantizeLinear, dequantizeSchema());
OPT_REGISTER_KERNELS(DequantizeLinear, dequantizeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
