// Col2Im and AffineGrid: output shapes from constant shape inputs, and the load-time errors for
// blocks that do not match the image, bad attributes and mismatched theta.
#include <gtest/gtest.h>

#include "backends/native/ops/OpInferTestUtil.h"
#include "ir/Graph.h"

using namespace optimium_test;
using optimium::runtime::detail::ConstData;
using optimium::runtime::detail::ErrorCode;

namespace {

ValueInfo constI64(std::vector<int64_t> V) {
  ValueInfo I = valueInfo({static_cast<int64_t>(V.size())}, ElementType::I64);
  auto C = std::make_shared<ConstData>();
  C->Type = ElementType::I64;
  C->Dims = {static_cast<int64_t>(V.size())};
  auto Store = std::make_shared<std::vector<int64_t>>(std::move(V));
  C->Data = Store->data();
  C->Bytes = Store->size() * sizeof(int64_t);
  C->KeepAlive = Store;
  I.Const = C;
  return I;
}

TEST(Col2ImInference, ShapesAndErrors) {
  NodeInference R = inferOp("Col2Im", {valueInfo({1, 9, 4}), constI64({5, 5}), constI64({3, 3})},
                            {{"strides", attrInts({2, 2})}}, 1, 18);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape.toString(), "1x1x5x5");
  expectInferError(inferOp("Col2Im", {valueInfo({1, 9, 5}), constI64({5, 5}), constI64({3, 3})},
                           {{"strides", attrInts({2, 2})}}, 1, 18),
                   ErrorCode::Shape, {"input dim 2 (5)", "= 4"});
  expectInferError(inferOp("Col2Im", {valueInfo({1, 8, 4}), constI64({5, 5}), constI64({3, 3})},
                           {{"strides", attrInts({2, 2})}}, 1, 18),
                   ErrorCode::Shape, {"input dim 1 (8)", "block size 9"});
  expectInferError(inferOp("Col2Im", {valueInfo({1, 9, 4}), constI64({5, 5}), constI64({3, 3})},
                           {{"strides", attrInts({0, 2})}}, 1, 18),
                   ErrorCode::Model, {"strides [0, 2]"});
  expectInferError(inferOp("Col2Im", {valueInfo({1, 9, 4}), constI64({5, 5}), constI64({3})}, {}, 1, 18),
                   ErrorCode::Shape, {"block_shape [3]"});
}

TEST(AffineGridInference, ShapesAndErrors) {
  NodeInference R = inferOp("AffineGrid", {valueInfo({2, 3, 4}), constI64({2, 1, 4, 5, 6})}, {}, 1, 20);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape.toString(), "2x4x5x6x3");
  expectInferError(inferOp("AffineGrid", {valueInfo({2, 2, 3}), constI64({2, 1, 4, 5, 6})}, {}, 1, 20),
                   ErrorCode::Shape, {"2x2x3", "[N, 3, 4]"});
  expectInferError(inferOp("AffineGrid", {valueInfo({2, 2, 3}), constI64({3, 1, 4, 5})}, {}, 1, 20),
                   ErrorCode::Shape, {"another batch"});
  expectInferError(
      inferOp("AffineGrid", {valueInfo({2, 2, 3}), constI64({2, 1, 4, 5})}, {{"align_corners", attrInt(2)}}, 1, 20),
      ErrorCode::Model, {"'align_corners'", "2"});
}

} // namespace
