// RotaryEmbedding: output shape and the load-time errors for bad attributes and mismatched caches
// (values are checked by the ONNX node tests and the kernel harness).
#include <gtest/gtest.h>

#include "backends/native/ops/OpInferTestUtil.h"

using namespace optimium_test;
using optimium::runtime::detail::ErrorCode;

namespace {

const ValueInfo Pos = valueInfo({2, 3}, ElementType::I64);

TEST(RotaryEmbeddingInference, OutputShape) {
  NodeInference R = inferOp("RotaryEmbedding", {valueInfo({2, 3, 32}), valueInfo({50, 4}), valueInfo({50, 4}), Pos},
                            {{"num_heads", attrInt(4)}});
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{2, 3, 32}));
}

TEST(RotaryEmbeddingInference, BadAttributesAndShapes) {
  const ValueInfo X = valueInfo({2, 4, 3, 8}), C = valueInfo({50, 4});
  expectInferError(inferOp("RotaryEmbedding", {X, C, C, Pos}, {{"interleaved", attrInt(2)}}), ErrorCode::Model,
                   {"'interleaved'", "2"});
  expectInferError(inferOp("RotaryEmbedding", {X, C, C, Pos}, {{"rotary_embedding_dim", attrInt(3)}}),
                   ErrorCode::Model, {"'rotary_embedding_dim'", "3"});
  expectInferError(inferOp("RotaryEmbedding", {X, valueInfo({50, 2}), valueInfo({50, 2}), Pos},
                           {{"rotary_embedding_dim", attrInt(12)}}),
                   ErrorCode::Model, {"'rotary_embedding_dim'", "12", "head size 8"});
  expectInferError(inferOp("RotaryEmbedding", {valueInfo({2, 3, 32}), C, C, Pos}), ErrorCode::Model, {"'num_heads'"});
  expectInferError(inferOp("RotaryEmbedding", {X, valueInfo({50, 3}), valueInfo({50, 3}), Pos}), ErrorCode::Shape,
                   {"cos_cache", "50x3"});
  expectInferError(inferOp("RotaryEmbedding", {X, valueInfo({2, 3, 4}), valueInfo({2, 3, 4}), Pos}), ErrorCode::Shape,
                   {"cos_cache", "2x3x4"});
  expectInferError(inferOp("RotaryEmbedding", {X, C, C, valueInfo({2, 5}, ElementType::I64)}), ErrorCode::Shape,
                   {"position_ids", "2x5"});
  expectInferError(inferOp("RotaryEmbedding", {X, C, valueInfo({50, 4}, ElementType::I32), Pos}), ErrorCode::Type,
                   {"f32", "i32"});
}

} // namespace
