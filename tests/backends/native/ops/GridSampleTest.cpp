// GridSample: output shapes and the load-time errors for bad attributes and mismatched grids (values
// are checked by the ONNX node tests and the kernel harness).
#include <gtest/gtest.h>

#include "backends/native/ops/OpInferTestUtil.h"

using namespace optimium_test;
using optimium::runtime::detail::ErrorCode;

namespace {

TEST(GridSampleInference, OutputShape) {
  NodeInference R = inferOp("GridSample", {valueInfo({2, 3, 8, 8}), valueInfo({2, 5, 6, 2})}, {}, 1, 22);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{2, 3, 5, 6}));
  R = inferOp("GridSample", {valueInfo({1, 2, 4, 4, 4}), valueInfo({1, 3, 2, 5, 3})}, {}, 1, 22);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{1, 2, 3, 2, 5}));
}

TEST(GridSampleInference, BadAttributesAndShapes) {
  const ValueInfo X = valueInfo({1, 1, 4, 4}), G = valueInfo({1, 2, 2, 2});
  expectInferError(inferOp("GridSample", {X, G}, {{"mode", attrString("area")}}, 1, 22), ErrorCode::Model,
                   {"'mode'", "'area'"});
  expectInferError(inferOp("GridSample", {X, G}, {{"padding_mode", attrString("wrap")}}, 1, 22), ErrorCode::Model,
                   {"'padding_mode'", "'wrap'"});
  expectInferError(inferOp("GridSample", {X, G}, {{"align_corners", attrInt(3)}}, 1, 22), ErrorCode::Model,
                   {"'align_corners'", "3"});
  expectInferError(inferOp("GridSample", {X, valueInfo({1, 2, 2, 3})}, {}, 1, 22), ErrorCode::Shape,
                   {"grid", "1x2x2x3", "1x1x4x4"});
  expectInferError(inferOp("GridSample", {X, valueInfo({2, 2, 2, 2})}, {}, 1, 22), ErrorCode::Shape, {"2x2x2x2"});
  expectInferError(inferOp("GridSample", {X, valueInfo({1, 2, 2, 2}, ElementType::I64)}, {}, 1, 22), ErrorCode::Type,
                   {"grid", "i64"});
}

} // namespace
