// Unique: the output shapes with a runtime or a constant X, and the load-time errors.
#include <gtest/gtest.h>

#include "backends/native/ops/OpInferTestUtil.h"

using namespace optimium_test;
using optimium::runtime::detail::ErrorCode;

namespace {

TEST(UniqueInference, ShapesAndErrors) {
  NodeInference R = inferOp("Unique", {valueInfo({2, 5, 3})}, {{"axis", attrInt(-2)}}, 4, 11);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape[0], optimium::runtime::Expr(2));
  EXPECT_FALSE(R.Outputs[0].Shape[1].isConst());
  EXPECT_EQ(R.Outputs[2].Shape[0], optimium::runtime::Expr(5)); // inverse_indices: one per slice
  EXPECT_EQ(R.Outputs[3].Type, ElementType::I64);
  R = inferOp("Unique", {valueInfo({4, 6})}, {}, 3, 11);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape.getRank(), 1u);
  EXPECT_EQ(R.Outputs[2].Shape[0], optimium::runtime::Expr(24));
  expectInferError(inferOp("Unique", {valueInfo({2, 5})}, {{"axis", attrInt(2)}}, 1, 11), ErrorCode::Model,
                   {"'axis'", "2"});
  expectInferError(inferOp("Unique", {valueInfo({2, 5})}, {{"sorted", attrInt(3)}}, 1, 11), ErrorCode::Model,
                   {"'sorted'", "3"});
  expectInferError(inferOp("Unique", {valueInfo({2}, ElementType::String)}, {}, 1, 11), ErrorCode::Type, {"string"});
}

} // namespace
