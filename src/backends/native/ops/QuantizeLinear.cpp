// QuantizeLinear (opsets 10-25, integer targets): y = saturate(rint(x / scale) + zero_point) with a
// per-tensor or per-axis scale; x is f32, f16 or i32, y is u8 (default), i8, u16 or i16. Blocked
// quantization (block_size > 0) and float8/float4 targets are rejected with a ModelError.
#include "backends/native/ops/common/QuantCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// TensorProto data type codes of output_dtype.
ElementType fromTensorProto(int64_t Code) {
  switch (Code) {
  case 2: return ElementType::U8;
  case 3: return ElementType::I8;
  case 4: return ElementType::U16;
  case 5: return ElementType::I16;
  default: return ElementType::Undefined;
  }
}

/// Per-axis layout shared with DequantizeLinear: [Outer, AxisLen, Inner].
Result<int64_t> quantAxis(const Node &N, size_t Rank, bool PerAxis) {
  ASSIGN_OR_RETURN(const int64_t Axis, N.getInt("axis", 1));
  // The axis only matters for per-axis parameters; per-tensor ones ignore it (any rank).
  if (Rank == 0 || !PerAxis)
    return int64_t(0);
  return normalizeAxis(N, "axis", Axis, static_cast<int64_t>(Rank));
}

Status checkBlockSize(const Node &N) {
  ASSIGN_OR_RETURN(const int64_t Block, N.getInt("block_size", 0));
  if (Block != 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'block_size' value ", Block,
                     " (blocked quantization) is not supported by the native backend");
  return Status::ok();
}

/// Checks scale / zero point shapes: scalars, or 1-D with the axis' length.
Status checkQuantParams(const ShapeContext &Ctx, size_t ScaleI, size_t ZpI) {
  const TensorShape &X = Ctx.Inputs[0].Shape;
  ASSIGN_OR_RETURN(const int64_t Axis, quantAxis(Ctx.N, X.getRank(), Ctx.Inputs[ScaleI].Shape.getRank() == 1 && paramCount(Ctx, ScaleI) != 1));
  for (size_t I : {ScaleI, ZpI}) {
    if (!Ctx.hasInput(I))
      continue;
    const TensorShape &P = Ctx.Inputs[I].Shape;
    const int64_t Count = paramCount(Ctx, I);
    if (P.getRank() > 1)
      return Ctx.error(ErrorCode::Shape, "input ", I, " ", P.toString(), " must be a scalar or 1-D (per-axis)");
    if (P.getRank() == 1 && Count != 1 && X.getRank() > 0 && X[static_cast<size_t>(Axis)].isConst() && Count >= 0 &&
        Count != X[static_cast<size_t>(Axis)].value())
      return Ctx.error(ErrorCode::Shape, "input ", I, " ", P.toString(), " must have ", X[static_cast<size_t>(Axis)].value(),
                       " values (axis ", Axis, " of ", X.toString(), ")");
  }
  return Status::ok();
}

Status inferQuantize(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32, ElementType::F16, ElementType::I32}));
  RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::F32, ElementType::F16}));
  RETURN_IF_ERROR(checkBlockSize(Ctx.N));
  ASSIGN_OR_RETURN(const int64_t Dtype, Ctx.N.getInt("output_dtype", 0));
  ElementType Out = ElementType::U8;
  if (Dtype != 0) {
    Out = fromTensorProto(Dtype);
    if (Out == ElementType::Undefined)
      return Ctx.error(ErrorCode::Model, "attribute 'output_dtype' value ", Dtype,
                       " is not supported (uint8, int8, uint16, int16)");
  }
  if (Ctx.hasInput(2)) {
    const ElementType Z = Ctx.Inputs[2].Type;
    if (!isQuantType(Z))
      return Ctx.error(ErrorCode::Type, "input 2 (y_zero_point) has element type ", toString(Z),
                       ", supported: u8, i8, u16, i16");
    if (Dtype != 0 && Z != Out)
      return Ctx.error(ErrorCode::Type, "attribute 'output_dtype' ", toString(Out), " differs from y_zero_point type ",
                       toString(Z));
    Out = Z;
  }
  RETURN_IF_ERROR(checkQuantParams(Ctx, 1, 2));
  Ctx.Outputs[0].Type = Out;
  Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
  return Status::ok();
}

Status runQuantize(const Node &N, const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  const std::vector<float> Scale = loadFloats(Ctx.Inputs[1]);
  const std::vector<int32_t> Zp = loadZeroPoints(Ctx, 2);
  ASSIGN_OR_RETURN(const int64_t Axis, quantAxis(N, X.rank(), Scale.size() > 1 || Zp.size() > 1));
  const int64_t Len = X.rank() ? X.Dims[static_cast<size_t>(Axis)] : 1;
  const int64_t Inner = X.rank() ? product(X.Dims, static_cast<size_t>(Axis) + 1, X.rank()) : 1;
  if ((Scale.size() != 1 && static_cast<int64_t>(Scale.size()) != Len) ||
      (Zp.size() != 1 && static_cast<int64_t>(Zp.size()) != Len))
    return runError("quantizelinear", "scale/zero point must be scalars or have ", Len, " values");
  forRangeMaybe(Ctx, Par, X.elementCount(), 16384, [&](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I) {
      const size_t C = static_cast<size_t>((static_cast<int64_t>(I) / Inner) % std::max<int64_t>(Len, 1));
      const float S = Scale[Scale.size() == 1 ? 0 : C];
      const float V = X.Type == ElementType::I32 ? static_cast<float>(X.data<const int32_t>()[I]) : loadFloat(X, I);
      storeSaturated(Y, I, roundHalfEven(V / S) + Zp[Zp.size() == 1 ? 0 : C]);
    }
  });
  return Status::ok();
}

OpKernels quantizeKernels() {
  OpKernels K;
  K.OpType = "QuantizeLinear";
  for (bool Par : {false, true}) {
    const std::string Name = Par ? "q_quantizelinear__parallel" : "q_quantizelinear__ref";
    K.Variants.push_back({Name, Par ? 10 : 0, nullptr, [Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                            RETURN_IF_ERROR(checkBlockSize(I.N));
                            const Node N = I.N;
                            return makeKernel<FunctionKernel>([N, Par](const KernelContext &C) { return runQuantize(N, C, Par); });
                          }});
  }
  K.TestCases = [] {
    const auto X = [](std::vector<int64_t> D) {
      TestInput T = tensorInput(std::move(D));
      T.Low = -30, T.High = 30;
      return T;
    };
    const auto F = [](std::vector<int64_t> D, std::vector<double> V) { return valuesInput(D, V, ElementType::F32, true); };
    const auto Z = [](std::vector<int64_t> D, std::vector<double> V, ElementType T) { return valuesInput(D, V, T, true); };
    return std::vector<OpTestCase>{
        testCase("u8_scalar", {X({2, 3, 4}), F({}, {0.2}), Z({}, {128}, ElementType::U8)}),
        testCase("i8_scalar", {X({2, 3, 4}), F({}, {0.25}), Z({}, {-3}, ElementType::I8)}),
        testCase("no_zero_point", {X({17}), F({}, {0.3})}),
        testCase("per_axis", {X({2, 3, 4}), F({3}, {0.1, 0.2, 0.5}), Z({3}, {0, 10, 250}, ElementType::U8)}),
        testCase("per_axis_last", {X({2, 3, 4}), F({4}, {0.1, 0.2, 0.5, 1}), Z({4}, {0, -10, 5, 100}, ElementType::I8)},
                 {{"axis", attrInt(-1)}}),
        testCase("i16", {X({50}), F({}, {0.001}), Z({}, {7}, ElementType::I16)}),
        testCase("large", {X({64, 300}), F({}, {0.2}), Z({}, {128}, ElementType::U8)}),
    };
  };
  return K;
}

OpSchema quantizeSchema() {
  OpSchema S;
  S.OpType = "QuantizeLinear";
  S.MinInputs = 2;
  S.MaxInputs = 3;
  S.Infer = inferQuantize;
  return S;
}

OPT_REGISTER_SCHEMA(QuantizeLinear, quantizeSchema());
OPT_REGISTER_KERNELS(QuantizeLinear, quantizeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
