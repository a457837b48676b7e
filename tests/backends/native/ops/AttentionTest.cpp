// Attention: output shapes of the 3-D / 4-D / GQA / KV-cache forms, the load-time errors for bad
// attributes and mismatched inputs (code, node, op and values named), and one model through the API.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "OnnxBuilder.h"
#include "Optimium/Runtime.h"
#include "backends/native/ops/OpInferTestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;
using optimium::runtime::detail::ErrorCode;

namespace {

const ElementType F32 = ElementType::F32;

TEST(AttentionInference, OutputShapes) {
  // 4-D GQA with a past cache: present is [B, kv heads, past + new, head], qk is [B, q heads, q, total].
  NodeInference R = inferOp("Attention",
                            {valueInfo({2, 8, 3, 16}), valueInfo({2, 2, 5, 16}), valueInfo({2, 2, 5, 12}), absent(),
                             valueInfo({2, 2, 7, 16}), valueInfo({2, 2, 7, 12})},
                            {}, 4);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{2, 8, 3, 12}));
  EXPECT_EQ(R.Outputs[1].Shape, (TensorShape{2, 2, 12, 16}));
  EXPECT_EQ(R.Outputs[2].Shape, (TensorShape{2, 2, 12, 12}));
  EXPECT_EQ(R.Outputs[3].Shape, (TensorShape{2, 8, 3, 12}));
  // 3-D: hidden sizes split by the head attributes; Y is [B, q, q heads * v head size].
  R = inferOp("Attention", {valueInfo({2, 4, 72}), valueInfo({2, 6, 24}), valueInfo({2, 6, 30})},
              {{"q_num_heads", attrInt(9)}, {"kv_num_heads", attrInt(3)}});
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{2, 4, 90}));
  // Symbolic batch and sequence pass through.
  const rt::Expr Batch("batch"), Seq("seq");
  R = inferOp("Attention", {valueInfo({Batch, 4, Seq, 8}), valueInfo({Batch, 4, Seq, 8}), valueInfo({Batch, 4, Seq, 8})});
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{Batch, 4, Seq, 8}));
}

TEST(AttentionInference, BadAttributesAreModelErrors) {
  const std::vector<ValueInfo> In = {valueInfo({1, 2, 3, 8}), valueInfo({1, 2, 3, 8}), valueInfo({1, 2, 3, 8})};
  expectInferError(inferOp("Attention", In, {{"qk_matmul_output_mode", attrInt(4)}}), ErrorCode::Model,
                   {"'qk_matmul_output_mode'", "4"});
  expectInferError(inferOp("Attention", In, {{"is_causal", attrInt(2)}}), ErrorCode::Model, {"'is_causal'", "2"});
  expectInferError(inferOp("Attention", In, {{"scale", attrFloat(-1.0f)}}), ErrorCode::Model, {"'scale'", "-1"});
  expectInferError(inferOp("Attention", In, {{"softcap", attrFloat(-2.0f)}}), ErrorCode::Model, {"'softcap'", "-2"});
  expectInferError(inferOp("Attention", In, {{"softmax_precision", attrInt(7)}}), ErrorCode::Model,
                   {"'softmax_precision'", "7"});
  expectInferError(inferOp("Attention", In, {{"left_window_size", attrInt(-3)}}, 1, 25), ErrorCode::Model,
                   {"'left_window_size'", "-3"});
  // 3-D inputs need both head counts.
  expectInferError(inferOp("Attention", {valueInfo({1, 3, 16}), valueInfo({1, 3, 16}), valueInfo({1, 3, 16})},
                           {{"q_num_heads", attrInt(2)}}),
                   ErrorCode::Model, {"'kv_num_heads'"});
  // past_key without past_value; nonpad_kv_seqlen with a past cache.
  expectInferError(inferOp("Attention", {In[0], In[1], In[2], absent(), valueInfo({1, 2, 4, 8})}), ErrorCode::Model,
                   {"past_key and past_value"});
  expectInferError(inferOp("Attention", {In[0], In[1], In[2], absent(), valueInfo({1, 2, 4, 8}), valueInfo({1, 2, 4, 8}),
                                         valueInfo({1}, ElementType::I64)},
                           {}, 1, 24),
                   ErrorCode::Model, {"nonpad_kv_seqlen"});
}

TEST(AttentionInference, MismatchedInputsAreShapeOrTypeErrors) {
  const ValueInfo Q = valueInfo({1, 2, 3, 8}), K = valueInfo({1, 2, 5, 8}), V = valueInfo({1, 2, 5, 8});
  expectInferError(inferOp("Attention", {Q, valueInfo({1, 2, 5, 4}), V}), ErrorCode::Shape,
                   {"head sizes", "1x2x3x8", "1x2x5x4"});
  expectInferError(inferOp("Attention", {valueInfo({1, 3, 3, 8}), K, V}), ErrorCode::Shape, {"not a multiple", "3", "2"});
  expectInferError(inferOp("Attention", {Q, K, valueInfo({1, 2, 4, 8})}), ErrorCode::Shape, {"sequence lengths"});
  expectInferError(inferOp("Attention", {Q, valueInfo({1, 5, 16}), V}), ErrorCode::Shape, {"3-D or all 4-D"});
  expectInferError(inferOp("Attention", {valueInfo({1, 3, 20}), valueInfo({1, 3, 24}), valueInfo({1, 3, 24})},
                           {{"q_num_heads", attrInt(3)}, {"kv_num_heads", attrInt(3)}}),
                   ErrorCode::Shape, {"20", "not a multiple of 3"});
  expectInferError(inferOp("Attention", {Q, K, V, valueInfo({3, 6})}), ErrorCode::Shape, {"attn_mask", "3x6"});
  expectInferError(inferOp("Attention", {Q, K, V, valueInfo({4, 5})}), ErrorCode::Shape, {"attn_mask", "4x5"});
  expectInferError(inferOp("Attention", {Q, K, V, valueInfo({3, 5}, ElementType::I32)}), ErrorCode::Type,
                   {"attn_mask", "i32"});
  expectInferError(inferOp("Attention", {Q, valueInfo({1, 2, 5, 8}, ElementType::I64), V}), ErrorCode::Type,
                   {"f32", "i64"});
  expectInferError(inferOp("Attention", {Q, K, V, absent(), valueInfo({1, 2, 4, 6}), valueInfo({1, 2, 4, 8})}),
                   ErrorCode::Shape, {"past_key", "1x2x4x6"});
}

/// Q = K = one-hot rows, V = position: with a large scale each query attends to its own key.
TEST(AttentionModel, LoadsRunsAndRejectsBadAttributes) {
  auto build = [](int64_t Mode) {
    OnnxBuilder B(23);
    B.input("q", onnx::TensorProto_DataType_FLOAT, {1, 1, 3, 4});
    B.input("k", onnx::TensorProto_DataType_FLOAT, {1, 1, 3, 4});
    B.input("v", onnx::TensorProto_DataType_FLOAT, {1, 1, 3, 1});
    auto *N = B.node("Attention", {"q", "k", "v"}, {"y"}, "attn");
    OnnxBuilder::attrInt(N, "qk_matmul_output_mode", Mode);
    auto *S = N->add_attribute();
    S->set_name("scale");
    S->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    S->set_f(100.0f);
    B.output("y", onnx::TensorProto_DataType_FLOAT);
    return B.bytes();
  };
  const std::string Good = build(0);
  rt::Model M = rt::loadModel(reinterpret_cast<const uint8_t *>(Good.data()), Good.size());
  const float OneHot[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  const float Pos[3] = {10, 20, 30};
  std::vector<rt::Tensor> In;
  for (const char *Name : {"q", "k", "v"}) {
    In.push_back(rt::tensor(rt::ElementType::F32, M.getTensorInfo(Name).Shape));
    std::memcpy(In.back().data(), Name[0] == 'v' ? Pos : OneHot, In.back().getElementCount() * sizeof(float));
  }
  rt::InferRequest Req = M.createRequest();
  Req.infer(rt::make_array(In));
  Req.wait();
  const rt::Tensor Y = Req.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  for (int I = 0; I < 3; ++I)
    EXPECT_NEAR(P[I], Pos[I], 1e-3) << I;

  const std::string Bad = build(5);
  try {
    rt::loadModel(reinterpret_cast<const uint8_t *>(Bad.data()), Bad.size());
    ADD_FAILURE() << "no ModelError";
  } catch (const rt::ModelError &E) {
    EXPECT_NE(std::string(E.what()).find("'attn'"), std::string::npos) << E.what();
    EXPECT_NE(std::string(E.what()).find("qk_matmul_output_mode"), std::string::npos) << E.what();
  }
}

} // namespace

// LinearAttention's per-step inputs must cover every batch and step (the fuzzer's model had a decay
// of 2 steps for a 4-step query, read past its end): a ShapeError at load naming the input, and the
// same check at run time for dims only known then.
TEST(LinearAttentionInference, DecayAndBetaMustCoverEveryStep) {
  const std::vector<ValueInfo> QKV = {valueInfo({2, 4, 64}), valueInfo({2, 4, 32}), valueInfo({2, 4, 32}), absent()};
  const std::map<std::string, AttrValue> Heads = {{"q_num_heads", attrInt(8)}, {"kv_num_heads", attrInt(4)}};
  auto In = QKV;
  In.push_back(valueInfo({2, 2, 32})); // decay: 2 steps
  In.push_back(valueInfo({2, 4, 4}));
  expectInferError(inferOp("LinearAttention", In, Heads, 2, 27), ErrorCode::Shape, {"decay", "2x2x32"});
  In[4] = valueInfo({2, 4, 5}); // neither kv heads (4) nor kv heads * d_k (32)
  expectInferError(inferOp("LinearAttention", In, Heads, 2, 27), ErrorCode::Shape, {"decay", "2x4x5"});
  In[4] = valueInfo({2, 4, 32});
  In[5] = valueInfo({2, 4, 3});
  expectInferError(inferOp("LinearAttention", In, Heads, 2, 27), ErrorCode::Shape, {"beta", "2x4x3"});
  In[5] = valueInfo({2, 4, 1});
  EXPECT_TRUE(inferOp("LinearAttention", In, Heads, 2, 27).S.isOk());
}
