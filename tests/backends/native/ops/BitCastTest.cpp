// BitCast, SwiGLU and Det: output types and shapes, and the load-time errors.
#include <gtest/gtest.h>

#include "backends/native/ops/OpInferTestUtil.h"

using namespace optimium_test;
using optimium::runtime::detail::ErrorCode;

namespace {

TEST(BitCastInference, TypesAndErrors) {
  NodeInference R = inferOp("BitCast", {valueInfo({2, 3})}, {{"to", attrInt(6)}}, 1, 26);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Type, ElementType::I32);
  EXPECT_EQ(R.Outputs[0].Shape.toString(), "2x3");
  expectInferError(inferOp("BitCast", {valueInfo({2, 3})}, {{"to", attrInt(7)}}, 1, 26), ErrorCode::Type,
                   {"f32 (32 bits)", "i64 (64 bits)"});
  expectInferError(inferOp("BitCast", {valueInfo({2, 3})}, {}, 1, 26), ErrorCode::Model, {"'to' is required"});
}

TEST(SwiGLUInference, ShapesAndErrors) {
  NodeInference R = inferOp("SwiGLU", {valueInfo({2, 8}), valueInfo({2, 8})}, {}, 1, 28);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  expectInferError(inferOp("SwiGLU", {valueInfo({2, 8}), valueInfo({1, 8})}, {}, 1, 28), ErrorCode::Shape,
                   {"2x8", "1x8", "does not broadcast"});
  expectInferError(inferOp("SwiGLU", {valueInfo({2, 8}), valueInfo({2, 8}, ElementType::I32)}, {}, 1, 28),
                   ErrorCode::Type, {"i32"});
}

TEST(DetInference, ShapesAndErrors) {
  NodeInference R = inferOp("Det", {valueInfo({3, 4, 4})}, {}, 1, 22);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape.toString(), "3");
  expectInferError(inferOp("Det", {valueInfo({3, 4, 5})}, {}, 1, 22), ErrorCode::Shape, {"3x4x5", "square"});
  expectInferError(inferOp("Det", {valueInfo({4}, ElementType::F32)}, {}, 1, 22), ErrorCode::Shape, {"square"});
}

} // namespace
