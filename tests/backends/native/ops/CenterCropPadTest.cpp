// CenterCropPad: the output shape from a constant or runtime 'shape', and the load-time errors for
// bad axes and a mismatched 'shape' (values are checked by the ONNX node tests and the harness).
#include <gtest/gtest.h>

#include "backends/native/ops/OpInferTestUtil.h"

using namespace optimium_test;
using optimium::runtime::detail::ErrorCode;

namespace {

TEST(CenterCropPadInference, ShapesAndErrors) {
  const ValueInfo X = valueInfo({20, 8, 3}), S2 = valueInfo({2}, ElementType::I64);
  NodeInference R = inferOp("CenterCropPad", {X, S2}, {{"axes", attrInts({0, 1})}}, 1, 18);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_FALSE(R.Outputs[0].Shape[0].isConst());
  EXPECT_EQ(R.Outputs[0].Shape[2], optimium::runtime::Expr(3));
  expectInferError(inferOp("CenterCropPad", {X, S2}, {{"axes", attrInts({0, 3})}}, 1, 18), ErrorCode::Model,
                   {"'axes'", "3"});
  expectInferError(inferOp("CenterCropPad", {X, S2}, {{"axes", attrInts({1, -2})}}, 1, 18), ErrorCode::Model,
                   {"'axes'", "repeats"});
  expectInferError(inferOp("CenterCropPad", {X, S2}, {}, 1, 18), ErrorCode::Shape, {"2 entries for 3 axes"});
  expectInferError(inferOp("CenterCropPad", {X, valueInfo({2}, ElementType::F32)}, {}, 1, 18), ErrorCode::Type,
                   {"f32"});
}

} // namespace
