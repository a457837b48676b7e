// QLinearConv (u8/i8): integer Conv in int32 (zero points subtracted, optional int32 bias), then
// y = saturate(rint(acc * x_scale * w_scale[m] / y_scale) + y_zero_point). w_scale and
// w_zero_point are scalars or per output channel.
#include "backends/native/ops/common/QuantCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema qlinearConvSchema() {
  OpSchema S;
  S.OpType = "QLinearConv";
  S.MinInputs = 8;
  S.MaxInputs = 9;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::U8, ElementType::I8}));
    RETURN_IF_ERROR(requireInputType(Ctx, 3, {ElementType::U8, ElementType::I8}));
    for (size_t I : {size_t(1), size_t(4), size_t(6)})
      RETURN_IF_ERROR(requireInputType(Ctx, I, {ElementType::F32}));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
    RETURN_IF_ERROR(requireSameType(Ctx, 3, 5));
    RETURN_IF_ERROR(requireInputType(Ctx, 7, {ElementType::U8, ElementType::I8}));
    if (Ctx.hasInput(8))
      RETURN_IF_ERROR(requireInputType(Ctx, 8, {ElementType::I32}));
    int64_t Group = 1;
    ASSIGN_OR_RETURN(const WindowAttrs W, parseIntConvAttrs(Ctx.N, Ctx.Inputs[0].Shape, Ctx.Inputs[3].Shape, Group));
    Ctx.Outputs[0].Type = Ctx.Inputs[7].Type;
    return inferWindowShape(Ctx, W, Ctx.Inputs[0].Shape, Ctx.Inputs[3].Shape[0], Ctx.Outputs[0].Shape);
  };
  return S;
}

Status runQLinearConv(const WindowAttrs &W, int64_t Group, const KernelContext &C, bool Par) {
  const float XS = loadFloat(C.Inputs[1], 0), YS = loadFloat(C.Inputs[6], 0);
  const std::vector<float> WS = loadFloats(C.Inputs[4]);
  const int32_t XZ = loadZeroPoints(C, 2)[0], YZ = loadZeroPoints(C, 7)[0];
  std::vector<int32_t> Bias;
  if (hasRunInput(C, 8))
    Bias.assign(C.Inputs[8].data<const int32_t>(), C.Inputs[8].data<const int32_t>() + C.Inputs[8].elementCount());
  const TensorView &Y = C.Outputs[0];
  if (WS.empty())
    return runError("qlinearconv", "empty w_scale");
  return intConv("qlinearconv", C, W, Group, C.Inputs[0], C.Inputs[3], XZ, loadZeroPoints(C, 5), Y, Par,
                 [&](size_t I, int32_t Acc, int64_t M) {
                   if (!Bias.empty())
                     Acc += Bias[static_cast<size_t>(M)];
                   const float Mul = XS * WS[WS.size() == 1 ? 0 : static_cast<size_t>(M)] / YS;
                   storeSaturated(Y, I, roundHalfEven(static_cast<double>(Acc) * Mul + YZ));
                 });
}

OpKernels qlinearConvKernels() {
  OpKernels K;
  K.OpType = "QLinearConv";
  for (bool Par : {false, true}) {
    const std::string Name = Par ? "q_qlinearconv__parallel" : "q_qlinearconv__ref";
    K.Variants.push_back({Name, Par ? 10 : 0, nullptr, [Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                            int64_t Group = 1;
                            ASSIGN_OR_RETURN(WindowAttrs W, parseIntConvAttrs(I.N, I.Inputs[0].Shape, I.Inputs[3].Shape, Group));
                            return makeKernel<FunctionKernel>(
                                [W, Group, Par](const KernelContext &C) { return runQLinearConv(W, Group, C, Par); });
                          }});
  }
  K.TestCases = [] {
    const auto Q = [](std::vector<int64_t> D, ElementType T, bool Const = false) {
      TestInput I = tensorInput(std::move(D), T);
      I.Low = T == ElementType::U8 ? 0 : -128, I.High = T == ElementType::U8 ? 255 : 127;
      I.Constant = Const;
      return I;
    };
    const auto F = [](std::vector<int64_t> D, std::vector<double> V) { return valuesInput(D, V, ElementType::F32, true); };
    const auto Z = [](std::vector<int64_t> D, std::vector<double> V, ElementType T) { return valuesInput(D, V, T, true); };
    const ElementType U8 = ElementType::U8, I8 = ElementType::I8;
    TestInput Bias = tensorInput({4}, ElementType::I32);
    Bias.Low = -1000, Bias.High = 1000;
    return std::vector<OpTestCase>{
        testCase("u8", {Q({1, 1, 7, 7}, U8), F({}, {0.0039}), Z({}, {0}, U8), Q({1, 1, 1, 1}, U8, true), F({}, {0.0079}),
                        Z({}, {0}, U8), F({}, {0.0079}), Z({}, {0}, U8)}),
        testCase("pads_bias_per_channel",
                 {Q({2, 3, 6, 6}, U8), F({}, {0.01}), Z({}, {120}, U8), Q({4, 3, 3, 3}, I8, true), F({4}, {0.01, 0.02, 0.005, 0.03}),
                  Z({4}, {0, 0, 0, 0}, I8), F({}, {0.5}), Z({}, {128}, U8), Bias},
                 {{"pads", attrInts({1, 1, 1, 1})}, {"strides", attrInts({2, 1})}}),
        testCase("i8_group", {Q({1, 4, 5, 5}, I8), F({}, {0.02}), Z({}, {-2}, I8), Q({4, 2, 3, 3}, I8, true), F({}, {0.01}),
                              Z({}, {0}, I8), F({}, {0.3}), Z({}, {5}, I8)},
                 {{"group", attrInt(2)}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(QLinearConv, qlinearConvSchema());
OPT_REGISTER_KERNELS(QLinearConv, qlinearConvKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
