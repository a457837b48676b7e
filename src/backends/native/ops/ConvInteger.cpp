// ConvInteger (u8/i8 -> i32): Conv of (x - x_zero_point) and (w - w_zero_point) accumulated in
// int32; w_zero_point is a scalar or one value per output channel. Conv's window attributes.
#include "backends/native/ops/common/QuantCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema convIntegerSchema() {
  OpSchema S;
  S.OpType = "ConvInteger";
  S.MinInputs = 2;
  S.MaxInputs = 4;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::U8, ElementType::I8}));
    RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::U8, ElementType::I8}));
    if (Ctx.hasInput(2))
      RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
    if (Ctx.hasInput(3))
      RETURN_IF_ERROR(requireSameType(Ctx, 1, 3));
    int64_t Group = 1;
    ASSIGN_OR_RETURN(const WindowAttrs W, parseIntConvAttrs(Ctx.N, Ctx.Inputs[0].Shape, Ctx.Inputs[1].Shape, Group));
    Ctx.Outputs[0].Type = ElementType::I32;
    return inferWindowShape(Ctx, W, Ctx.Inputs[0].Shape, Ctx.Inputs[1].Shape[0], Ctx.Outputs[0].Shape);
  };
  return S;
}

OpKernels convIntegerKernels() {
  OpKernels K;
  K.OpType = "ConvInteger";
  for (bool Par : {false, true}) {
    const std::string Name = Par ? "i32_convinteger__parallel" : "i32_convinteger__ref";
    K.Variants.push_back({Name, Par ? 10 : 0, nullptr, [Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                            int64_t Group = 1;
                            ASSIGN_OR_RETURN(WindowAttrs W, parseIntConvAttrs(I.N, I.Inputs[0].Shape, I.Inputs[1].Shape, Group));
                            return makeKernel<FunctionKernel>([W, Group, Par](const KernelContext &C) {
                              const std::vector<int32_t> XZ = loadZeroPoints(C, 2);
                              int32_t *Out = C.Outputs[0].data<int32_t>();
                              return intConv("convinteger", C, W, Group, C.Inputs[0], C.Inputs[1], XZ[0], loadZeroPoints(C, 3),
                                             C.Outputs[0], Par, [Out](size_t I, int32_t Acc, int64_t) { Out[I] = Acc; });
                            });
                          }});
  }
  K.TestCases = [] {
    const auto Q = [](std::vector<int64_t> D, ElementType T, bool Const = false) {
      TestInput I = tensorInput(std::move(D), T);
      I.Low = T == ElementType::U8 ? 0 : -128, I.High = T == ElementType::U8 ? 255 : 127;
      I.Constant = Const;
      return I;
    };
    const auto Z = [](std::vector<int64_t> D, std::vector<double> V, ElementType T) { return valuesInput(D, V, T, true); };
    const ElementType U8 = ElementType::U8, I8 = ElementType::I8;
    return std::vector<OpTestCase>{
        testCase("basic_zp", {Q({1, 1, 3, 3}, U8), Q({1, 1, 2, 2}, U8, true), Z({}, {1}, U8)}),
        testCase("pads", {Q({1, 1, 3, 3}, U8), Q({1, 1, 2, 2}, U8, true), Z({}, {1}, U8)}, {{"pads", attrInts({1, 1, 1, 1})}}),
        testCase("per_channel_w_zp", {Q({2, 3, 5, 5}, U8), Q({4, 3, 3, 3}, I8, true), Z({}, {128}, U8), Z({4}, {0, 1, -1, 2}, I8)},
                 {{"strides", attrInts({2, 2})}}),
        testCase("group", {Q({1, 4, 5, 5}, I8), Q({4, 2, 3, 3}, I8, true)}, {{"group", attrInt(2)}, {"auto_pad", attrString("SAME_UPPER")}}),
        testCase("1d", {Q({1, 2, 9}, U8), Q({3, 2, 3}, U8, true)}, {{"dilations", attrInts({2})}}),
    };
  };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(ConvInteger, convIntegerSchema());
OPT_REGISTER_KERNELS(ConvInteger, convIntegerKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
