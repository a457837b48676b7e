// DFT, STFT and MelWeightMatrix: output shapes (constant lengths, opset 17 vs 20 axis) and the
// load-time errors for bad axes, lengths and types.
#include <gtest/gtest.h>

#include "backends/native/ops/OpInferTestUtil.h"
#include "ir/Graph.h"

using namespace optimium_test;
using optimium::runtime::detail::ConstData;
using optimium::runtime::detail::ErrorCode;

namespace {

ValueInfo constScalar(int64_t V) {
  ValueInfo I = valueInfo(optimium::runtime::TensorShape(), ElementType::I64);
  auto C = std::make_shared<ConstData>();
  C->Type = ElementType::I64;
  auto Store = std::make_shared<int64_t>(V);
  C->Data = Store.get();
  C->Bytes = sizeof(int64_t);
  C->KeepAlive = Store;
  I.Const = C;
  return I;
}

TEST(DftInference, ShapesAndErrors) {
  NodeInference R = inferOp("DFT", {valueInfo({2, 10, 3, 1}), constScalar(16), constScalar(1)},
                            {{"onesided", attrInt(1)}}, 1, 20);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape.toString(), "2x9x3x2");
  R = inferOp("DFT", {valueInfo({2, 6, 3, 2})}, {{"axis", attrInt(1)}, {"inverse", attrInt(1)}, {"onesided", attrInt(1)}},
              1, 17);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape.toString(), "2x10x3x1");
  expectInferError(inferOp("DFT", {valueInfo({2, 10, 1}), absent(), constScalar(2)}, {}, 1, 20), ErrorCode::Model,
                   {"axis 2", "rank-3"});
  expectInferError(inferOp("DFT", {valueInfo({2, 10, 3})}, {}, 1, 20), ErrorCode::Shape, {"1 (real) or 2"});
  expectInferError(inferOp("DFT", {valueInfo({2, 10, 1}), absent(), constScalar(1)}, {}, 1, 17), ErrorCode::Model,
                   {"opset 20"});
  expectInferError(inferOp("DFT", {valueInfo({2, 10, 1}, ElementType::I32)}, {}, 1, 20), ErrorCode::Type, {"i32"});
}

TEST(StftInference, ShapesAndErrors) {
  NodeInference R = inferOp("STFT", {valueInfo({1, 128, 1}), constScalar(8), valueInfo({16})}, {}, 1, 17);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape.toString(), "1x15x9x2");
  expectInferError(inferOp("STFT", {valueInfo({1, 128, 1}), constScalar(8), valueInfo({16}), constScalar(20)}, {}, 1, 17),
                   ErrorCode::Shape, {"window length 16", "frame_length 20"});
  expectInferError(inferOp("STFT", {valueInfo({1, 128, 1}), constScalar(0), valueInfo({16})}, {}, 1, 17),
                   ErrorCode::Shape, {"frame_step 0"});
  expectInferError(inferOp("STFT", {valueInfo({1, 8, 1}), constScalar(2), valueInfo({16})}, {}, 1, 17),
                   ErrorCode::Shape, {"frame_length 16", "signal length 8"});
}

TEST(MelWeightMatrixInference, ShapesAndErrors) {
  ValueInfo Lo = valueInfo(optimium::runtime::TensorShape()), Hi = Lo;
  NodeInference R = inferOp("MelWeightMatrix", {constScalar(8), constScalar(16), constScalar(8192), Lo, Hi}, {}, 1, 17);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_FALSE(R.Outputs[0].Shape[0].isConst()); // the edge frequencies are not constant
  expectInferError(inferOp("MelWeightMatrix", {constScalar(8), constScalar(16), constScalar(8192), Lo, Hi},
                           {{"output_datatype", attrInt(8)}}, 1, 17),
                   ErrorCode::Type, {"string"});
}

} // namespace
