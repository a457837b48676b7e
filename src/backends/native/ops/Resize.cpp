// Resize (opsets 10, 11, 13, 18, 19) for f32 and f16: nearest (every
// nearest_mode), linear and cubic (cubic_coeff_a, exclude_outside, antialias), every
// coordinate_transformation_mode, roi for tf_crop_and_resize, axes and keep_aspect_ratio_policy.
// Output sizes depend on the scales / sizes inputs: known constants give concrete dims, otherwise
// fresh symbols until the executor re-runs inference with the values.
#include "backends/native/ops/common/ResizeCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

std::vector<OpTestCase> resizeCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const TestInput NoRoi = omittedInput(), NoScales = omittedInput();
  const auto S = [](std::vector<double> V) { const int64_t N = static_cast<int64_t>(V.size());
    return f32Values({N}, std::move(V)); };
  const auto Sz = [](std::vector<double> V) { const int64_t N = static_cast<int64_t>(V.size());
    return i64Values({N}, std::move(V)); };
  const auto str = [](const char *V) { return attrString(V); };
  std::vector<OpTestCase> C = {
      testCase("nearest_up_scales", {X({1, 2, 3, 4}), NoRoi, S({1, 1, 2, 3})}),
      testCase("nearest_down_scales", {X({1, 1, 4, 6}), NoRoi, S({1, 1, 0.6, 0.6})}),
      testCase("nearest_ceil_align", {X({1, 1, 4, 4}), NoRoi, NoScales, Sz({1, 1, 8, 7})},
               {{"nearest_mode", str("ceil")}, {"coordinate_transformation_mode", str("align_corners")}}),
      testCase("nearest_floor_asym", {X({1, 1, 4, 4}), NoRoi, NoScales, Sz({1, 1, 7, 8})},
               {{"nearest_mode", str("floor")}, {"coordinate_transformation_mode", str("asymmetric")}}),
      testCase("nearest_prefer_ceil", {X({1, 1, 4, 4}), NoRoi, NoScales, Sz({1, 1, 8, 8})},
               {{"nearest_mode", str("round_prefer_ceil")}}),
      testCase("linear_half_pixel", {X({2, 3, 4, 5}), NoRoi, S({1, 1, 1.5, 2})}, {{"mode", str("linear")}}),
      testCase("linear_down_align", {X({1, 1, 4, 6}), NoRoi, S({1, 1, 0.6, 0.6})},
               {{"mode", str("linear")}, {"coordinate_transformation_mode", str("align_corners")}}),
      testCase("linear_pytorch", {X({1, 2, 5, 5}), NoRoi, NoScales, Sz({1, 2, 3, 1})},
               {{"mode", str("linear")}, {"coordinate_transformation_mode", str("pytorch_half_pixel")}}),
      testCase("cubic", {X({1, 1, 4, 4}), NoRoi, S({1, 1, 2, 2})}, {{"mode", str("cubic")}}),
      testCase("cubic_exclude_outside_a", {X({1, 1, 4, 4}), NoRoi, S({1, 1, 0.8, 1.6})},
               {{"mode", str("cubic")}, {"exclude_outside", attrInt(1)}, {"cubic_coeff_a", attrFloat(-0.5f)}}),
      testCase("cubic_asymmetric", {X({1, 1, 4, 4}), NoRoi, S({1, 1, 2, 2})},
               {{"mode", str("cubic")}, {"coordinate_transformation_mode", str("asymmetric")}}),
      testCase("crop_and_resize_extrapolation",
               {X({1, 1, 4, 4}), f32Values({8}, {0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7}), NoScales, Sz({1, 1, 3, 3})},
               {{"mode", str("linear")}, {"coordinate_transformation_mode", str("tf_crop_and_resize")},
                {"extrapolation_value", attrFloat(10.f)}}),
      testCase("linear_antialias", {X({1, 1, 8, 8}), NoRoi, S({1, 1, 0.6, 0.6})},
               {{"mode", str("linear")}, {"antialias", attrInt(1)}}),
      testCase("cubic_antialias", {X({1, 1, 8, 8}), NoRoi, S({1, 1, 0.6, 0.6})},
               {{"mode", str("cubic")}, {"antialias", attrInt(1)}}),
      testCase("axes_sizes_not_larger", {X({1, 1, 4, 4}), NoRoi, NoScales, Sz({7, 8})},
               {{"axes", attrInts({2, 3})}, {"keep_aspect_ratio_policy", str("not_larger")}}),
      testCase("axes_scales", {X({1, 2, 4, 4}), NoRoi, S({2, 3})}, {{"axes", attrInts({3, 1})}, {"mode", str("linear")}}),
      testCase("half_pixel_symmetric", {X({1, 1, 4, 5}), NoRoi, S({1, 1, 1.7, 0.7})},
               {{"mode", str("linear")}, {"coordinate_transformation_mode", str("half_pixel_symmetric")}}),
      testCase("large", {X({2, 8, 16, 16}), NoRoi, S({1, 1, 2, 2})}, {{"mode", str("linear")}}),
  };
  for (OpTestCase &T : C)
    T.OpsetVersion = 19;
  OpTestCase V10 = testCase("opset10_nearest", {X({1, 1, 3, 4}), S({1, 1, 2, 1.5})});
  V10.OpsetVersion = 10;
  C.push_back(V10);
  OpTestCase V11 = testCase("opset11_linear_sizes", {X({1, 1, 3, 4}), f32Values({0}, {}), f32Values({0}, {}), Sz({1, 1, 5, 2})},
                            {{"mode", str("linear")}, {"coordinate_transformation_mode", str("tf_half_pixel_for_nn")}});
  V11.OpsetVersion = 11;
  C.push_back(V11);
  return C;
}

OpKernels resizeRegistration() {
  OpKernels K = resizeKernels(false);
  K.TestCases = resizeCases;
  return K;
}

OPT_REGISTER_SCHEMA(Resize, resizeSchema(false));
OPT_REGISTER_KERNELS(Resize, resizeRegistration());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
