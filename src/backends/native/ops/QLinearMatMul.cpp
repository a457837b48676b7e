// QLinearMatMul (opsets 10, 21; u8/i8): int32 matmul of the zero-point-corrected operands, then
// y = saturate(rint(acc * a_scale * b_scale / y_scale) + y_zero_point). Scales and zero points are
// scalars or per row (a) / per column (b, y).
#include "backends/native/ops/common/QuantCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema qlinearMatMulSchema() {
  OpSchema S;
  S.OpType = "QLinearMatMul";
  S.MinInputs = S.MaxInputs = 8;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::U8, ElementType::I8}));
    RETURN_IF_ERROR(requireInputType(Ctx, 3, {ElementType::U8, ElementType::I8}));
    for (size_t I : {size_t(1), size_t(4), size_t(6)})
      RETURN_IF_ERROR(requireInputType(Ctx, I, {ElementType::F32, ElementType::F16}));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
    RETURN_IF_ERROR(requireSameType(Ctx, 3, 5));
    RETURN_IF_ERROR(requireInputType(Ctx, 7, {ElementType::U8, ElementType::I8}));
    Ctx.Outputs[0].Type = Ctx.Inputs[7].Type;
    return inferMatMulShape(Ctx, 0, 3, Ctx.Outputs[0].Shape);
  };
  return S;
}

Status runQLinearMatMul(const KernelContext &Ctx, bool Par) {
  const TensorView &Y = Ctx.Outputs[0];
  const std::vector<float> AS = loadFloats(Ctx.Inputs[1]), BS = loadFloats(Ctx.Inputs[4]), YS = loadFloats(Ctx.Inputs[6]);
  const std::vector<int32_t> YZ = loadZeroPoints(Ctx, 7);
  if (AS.empty() || BS.empty() || YS.empty())
    return runError("qlinearmatmul", "empty scale");
  return intMatMul("qlinearmatmul", Ctx, Ctx.Inputs[0], Ctx.Inputs[3], loadZeroPoints(Ctx, 2), loadZeroPoints(Ctx, 5), Y,
                   Par, [&](size_t I, int32_t Acc, int64_t M, int64_t N) {
                     const float A = AS[AS.size() == 1 ? 0 : static_cast<size_t>(M)];
                     const float B = BS[BS.size() == 1 ? 0 : static_cast<size_t>(N)];
                     const float S = YS[YS.size() == 1 ? 0 : static_cast<size_t>(N)];
                     const int32_t Z = YZ[YZ.size() == 1 ? 0 : static_cast<size_t>(N)];
                     const float Mul = A * B / S;
                     storeSaturated(Y, I, roundHalfEven(static_cast<double>(Acc) * Mul + Z));
                   });
}

OpKernels qlinearMatMulKernels() {
  OpKernels K;
  K.OpType = "QLinearMatMul";
  K.Variants.push_back({"q_qlinearmatmul__ref", 0, nullptr, [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>([](const KernelContext &C) { return runQLinearMatMul(C, false); });
                        }});
  K.Variants.push_back({"q_qlinearmatmul__parallel", 10, nullptr, [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>([](const KernelContext &C) { return runQLinearMatMul(C, true); });
                        }});
  K.TestCases = [] {
    const auto Q = [](std::vector<int64_t> D, ElementType T) {
      TestInput I = tensorInput(std::move(D), T);
      I.Low = T == ElementType::U8 ? 0 : -128, I.High = T == ElementType::U8 ? 255 : 127;
      return I;
    };
    const auto F = [](std::vector<int64_t> D, std::vector<double> V) { return valuesInput(D, V, ElementType::F32, true); };
    const auto Z = [](std::vector<int64_t> D, std::vector<double> V, ElementType T) { return valuesInput(D, V, T, true); };
    const ElementType U8 = ElementType::U8, I8 = ElementType::I8;
    return std::vector<OpTestCase>{
        testCase("u8", {Q({2, 4}, U8), F({}, {0.0066}), Z({}, {113}, U8), Q({4, 3}, U8), F({}, {0.00705}), Z({}, {114}, U8),
                        F({}, {0.0107}), Z({}, {118}, U8)}),
        testCase("i8", {Q({3, 5}, I8), F({}, {0.01}), Z({}, {-3}, I8), Q({5, 4}, I8), F({}, {0.02}), Z({}, {2}, I8),
                        F({}, {0.05}), Z({}, {-1}, I8)}),
        testCase("batched", {Q({2, 3, 6}, U8), F({}, {0.01}), Z({}, {100}, U8), Q({2, 6, 4}, U8), F({}, {0.02}), Z({}, {120}, U8),
                             F({}, {0.4}), Z({}, {128}, U8)}),
        testCase("per_column", {Q({3, 6}, U8), F({}, {0.01}), Z({}, {100}, U8), Q({6, 4}, I8), F({4}, {0.01, 0.02, 0.03, 0.04}),
                                Z({4}, {0, 1, 2, 3}, I8), F({}, {0.3}), Z({}, {128}, U8)}),
        testCase("large", {Q({32, 64}, U8), F({}, {0.01}), Z({}, {100}, U8), Q({64, 48}, U8), F({}, {0.02}), Z({}, {120}, U8),
                           F({}, {2.0}), Z({}, {128}, U8)}),
    };
  };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(QLinearMatMul, qlinearMatMulSchema());
OPT_REGISTER_KERNELS(QLinearMatMul, qlinearMatMulKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
