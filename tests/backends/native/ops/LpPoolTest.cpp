// LpPool: output shape and the load-time errors for bad attributes (the window attributes share
// MaxPool's validation; values are checked by the ONNX node tests and the kernel harness).
#include <gtest/gtest.h>

#include "backends/native/ops/OpInferTestUtil.h"

using namespace optimium_test;
using optimium::runtime::detail::ErrorCode;

namespace {

TEST(LpPoolInference, ShapeAndBadAttributes) {
  const ValueInfo X = valueInfo({1, 3, 32, 32});
  NodeInference R = inferOp("LpPool", {X}, {{"kernel_shape", attrInts({2, 2})}, {"strides", attrInts({2, 2})}}, 1, 22);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{1, 3, 16, 16}));
  expectInferError(inferOp("LpPool", {X}, {{"kernel_shape", attrInts({2, 2})}, {"p", attrInt(0)}}, 1, 22),
                   ErrorCode::Model, {"'p'", "0"});
  expectInferError(inferOp("LpPool", {X}, {}, 1, 22), ErrorCode::Model, {"'kernel_shape'"});
  expectInferError(inferOp("LpPool", {X}, {{"kernel_shape", attrInts({2})}}, 1, 22), ErrorCode::Model,
                   {"'kernel_shape'", "[2]"});
  expectInferError(inferOp("LpPool", {valueInfo({3, 32})}, {{"kernel_shape", attrInts({2})}}, 1, 22), ErrorCode::Shape,
                   {"3x32"});
}

} // namespace
