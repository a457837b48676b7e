// TensorScatter and MaxUnpool: output shapes and the load-time errors (updates that do not fit
// the cache, bad mode/axis, pooling attributes, output_shape smaller than the unpooled shape).
#include <gtest/gtest.h>

#include "backends/native/ops/OpInferTestUtil.h"

using namespace optimium_test;
using optimium::runtime::detail::ErrorCode;

namespace {

TEST(TensorScatterInference, ShapesAndErrors) {
  const ValueInfo Cache = valueInfo({2, 4, 16, 8}), Update = valueInfo({2, 4, 3, 8});
  NodeInference R = inferOp("TensorScatter", {Cache, Update, valueInfo({2}, ElementType::I64)}, {}, 1, 24);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape.toString(), "2x4x16x8");
  expectInferError(inferOp("TensorScatter", {Cache, valueInfo({2, 4, 17, 8})}, {}, 1, 24), ErrorCode::Shape,
                   {"2x4x17x8", "axis 2"});
  expectInferError(inferOp("TensorScatter", {Cache, valueInfo({2, 3, 3, 8})}, {}, 1, 24), ErrorCode::Shape,
                   {"2x3x3x8"});
  expectInferError(inferOp("TensorScatter", {Cache, Update}, {{"mode", attrString("ring")}}, 1, 24),
                   ErrorCode::Model, {"'mode'", "'ring'"});
  expectInferError(inferOp("TensorScatter", {Cache, Update}, {{"axis", attrInt(0)}}, 1, 24), ErrorCode::Model,
                   {"'axis'", "batch"});
  expectInferError(inferOp("TensorScatter", {Cache, valueInfo({2, 4, 3, 8}, ElementType::I64)}, {}, 1, 24),
                   ErrorCode::Type, {"i64"});
}

TEST(MaxUnpoolInference, ShapesAndErrors) {
  const ValueInfo X = valueInfo({1, 3, 4, 5}), I = valueInfo({1, 3, 4, 5}, ElementType::I64);
  const std::map<std::string, AttrValue> K2 = {{"kernel_shape", attrInts({2, 2})}, {"strides", attrInts({2, 2})}};
  NodeInference R = inferOp("MaxUnpool", {X, I}, K2, 1, 22);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape.toString(), "1x3x8x10");
  expectInferError(inferOp("MaxUnpool", {X, I}, {}, 1, 22), ErrorCode::Model, {"'kernel_shape' is required"});
  expectInferError(inferOp("MaxUnpool", {X, I}, {{"kernel_shape", attrInts({2})}}, 1, 22), ErrorCode::Model,
                   {"kernel_shape [2]", "2 spatial dims"});
  expectInferError(inferOp("MaxUnpool", {X, valueInfo({1, 3, 4, 5}, ElementType::I32)}, K2, 1, 22), ErrorCode::Type,
                   {"i32"});
}

} // namespace
