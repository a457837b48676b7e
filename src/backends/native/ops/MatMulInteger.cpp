// MatMulInteger (u8/i8 x u8/i8 -> i32): numpy matmul of (A - a_zero_point) and (B - b_zero_point)
// accumulated in int32; zero points are scalars or per row of A / per column of B.
#include "backends/native/ops/common/QuantCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema matMulIntegerSchema() {
  OpSchema S;
  S.OpType = "MatMulInteger";
  S.MinInputs = 2;
  S.MaxInputs = 4;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::U8, ElementType::I8}));
    RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::U8, ElementType::I8}));
    if (Ctx.hasInput(2))
      RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
    if (Ctx.hasInput(3))
      RETURN_IF_ERROR(requireSameType(Ctx, 1, 3));
    Ctx.Outputs[0].Type = ElementType::I32;
    return inferMatMulShape(Ctx, 0, 1, Ctx.Outputs[0].Shape);
  };
  return S;
}

Status runMatMulInteger(const KernelContext &Ctx, bool Par) {
  const TensorView &Y = Ctx.Outputs[0];
  int32_t *Out = Y.data<int32_t>();
  return intMatMul("matmulinteger", Ctx, Ctx.Inputs[0], Ctx.Inputs[1], loadZeroPoints(Ctx, 2), loadZeroPoints(Ctx, 3), Y,
                   Par, [Out](size_t I, int32_t Acc, int64_t, int64_t) { Out[I] = Acc; });
}

OpKernels matMulIntegerKernels() {
  OpKernels K;
  K.OpType = "MatMulInteger";
  K.Variants.push_back({"i32_matmulinteger__ref", 0, nullptr, [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>([](const KernelContext &C) { return runMatMulInteger(C, false); });
                        }});
  K.Variants.push_back({"i32_matmulinteger__parallel", 10, nullptr, [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>([](const KernelContext &C) { return runMatMulInteger(C, true); });
                        }});
  K.TestCases = [] {
    const auto Q = [](std::vector<int64_t> D, ElementType T) {
      TestInput I = tensorInput(std::move(D), T);
      I.Low = T == ElementType::U8 ? 0 : -128, I.High = T == ElementType::U8 ? 255 : 127;
      return I;
    };
    const auto Z = [](std::vector<int64_t> D, std::vector<double> V, ElementType T) { return valuesInput(D, V, T, true); };
    const ElementType U8 = ElementType::U8, I8 = ElementType::I8;
    return std::vector<OpTestCase>{
        testCase("u8u8_zp", {Q({4, 3}, U8), Q({3, 2}, U8), Z({}, {12}, U8), Z({}, {0}, U8)}),
        testCase("u8i8_no_zp", {Q({5, 7}, U8), Q({7, 3}, I8)}),
        testCase("per_row_col_zp", {Q({4, 6}, U8), Q({6, 5}, U8), Z({4}, {1, 2, 3, 4}, U8), Z({5}, {5, 6, 7, 8, 9}, U8)}),
        testCase("batched_broadcast", {Q({2, 3, 4, 8}, I8), Q({8, 5}, I8), Z({}, {-3}, I8), omittedInput()}),
        testCase("1d", {Q({8}, U8), Q({8, 3}, U8)}),
        testCase("large", {Q({64, 128}, U8), Q({128, 96}, I8), Z({}, {128}, U8)}),
    };
  };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(MatMulInteger, matMulIntegerSchema());
OPT_REGISTER_KERNELS(MatMulInteger, matMulIntegerKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
