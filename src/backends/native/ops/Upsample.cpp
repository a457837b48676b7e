// Upsample (opsets 7 and 9; deprecated since 10) for f32 and f16: nearest or linear with the
// asymmetric coordinate rule; scales come from the attribute (opset 7) or the second input (9).
#include "backends/native/ops/common/ResizeCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpKernels upsampleRegistration() {
  OpKernels K = resizeKernels(true);
  K.TestCases = [] {
    const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
    OpTestCase V9 = testCase("opset9_nearest", {X({1, 1, 2, 2}), f32Values({4}, {1, 1, 2, 3})});
    V9.OpsetVersion = 9;
    OpTestCase V9L = testCase("opset9_linear", {X({1, 2, 3, 3}), f32Values({4}, {1, 1, 2, 2})},
                              {{"mode", attrString("linear")}});
    V9L.OpsetVersion = 9;
    OpTestCase V7 = testCase("opset7_attr_scales", {X({1, 1, 2, 3})},
                             {{"scales", attrFloats({1, 1, 2, 2})}, {"mode", attrString("nearest")}});
    V7.OpsetVersion = 7;
    return std::vector<OpTestCase>{V9, V9L, V7};
  };
  return K;
}

OPT_REGISTER_SCHEMA(Upsample, resizeSchema(true));
OPT_REGISTER_KERNELS(Upsample, upsampleRegistration());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
