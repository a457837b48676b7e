// DynamicQuantizeLinear (f32 -> u8): scale and zero point from the data range (always including
// 0), then y = saturate(rint(x / scale) + zero_point), as the ONNX reference computes them.
#include "backends/native/ops/common/QuantCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema dynamicQuantizeSchema() {
  OpSchema S;
  S.OpType = "DynamicQuantizeLinear";
  S.MinInputs = S.MaxInputs = 1;
  S.MinOutputs = S.MaxOutputs = 3;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32}));
    Ctx.Outputs[0].Type = ElementType::U8;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    Ctx.Outputs[1].Type = ElementType::F32;
    Ctx.Outputs[1].Shape = TensorShape();
    Ctx.Outputs[2].Type = ElementType::U8;
    Ctx.Outputs[2].Shape = TensorShape();
    return Status::ok();
  };
  return S;
}

Status runDynamicQuantize(const KernelContext &Ctx, bool Par) {
  const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
  const float *In = X.data<const float>();
  const size_t N = X.elementCount();
  float Max = 0, Min = 0;
  for (size_t I = 0; I < N; ++I) {
    Max = std::max(Max, In[I]);
    Min = std::min(Min, In[I]);
  }
  const float Scale = (Max == Min ? 1.0f : Max - Min) / 255.0f;
  const float Zp0 = std::min(255.0f, std::max(0.0f, 0.0f - Min / Scale));
  const int64_t Zp = roundHalfEven(Zp0);
  forRangeMaybe(Ctx, Par, N, 16384, [&](size_t Lo, size_t Hi) {
    for (size_t I = Lo; I < Hi; ++I)
      storeSaturated(Y, I, roundHalfEven(In[I] / Scale) + Zp);
  });
  if (hasRunOutput(Ctx, 1))
    Ctx.Outputs[1].data<float>()[0] = Scale;
  if (hasRunOutput(Ctx, 2))
    Ctx.Outputs[2].data<uint8_t>()[0] = static_cast<uint8_t>(Zp);
  return Status::ok();
}

OpKernels dynamicQuantizeKernels() {
  OpKernels K;
  K.OpType = "DynamicQuantizeLinear";
  const auto F32 = [](const KernelCreateInfo &I) { return inputIs(I, 0, ElementType::F32); };
  K.Variants.push_back({"f32_dynamicquantizelinear__ref", 0, F32, [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>([](const KernelContext &C) { return runDynamicQuantize(C, false); });
                        }});
  K.Variants.push_back({"f32_dynamicquantizelinear__parallel", 10, F32, [](const KernelCreateInfo &) {
                          return makeKernel<FunctionKernel>([](const KernelContext &C) { return runDynamicQuantize(C, true); });
                        }});
  K.TestCases = [] {
    TestInput Pos = tensorInput({3, 4});
    Pos.Low = 0.5, Pos.High = 9;
    TestInput Neg = tensorInput({2, 8});
    Neg.Low = -9, Neg.High = -0.5;
    std::vector<OpTestCase> C = {testCase("mixed", {tensorInput({4, 5})}), testCase("positive", {Pos}),
                                 testCase("negative", {Neg}), testCase("zeros", {valuesInput({6}, {0}, ElementType::F32, false)}),
                                 testCase("large", {tensorInput({64, 300})})};
    for (OpTestCase &T : C)
      T.NumOutputs = 3;
    return C;
  };
  return K;
}

OPT_REGISTER_SCHEMA(DynamicQuantizeLinear, dynamicQuantizeSchema());
OPT_REGISTER_KERNELS(DynamicQuantizeLinear, dynamicQuantizeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
