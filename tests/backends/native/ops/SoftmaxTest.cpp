// Softmax on half types rounds every step of its ONNX function body (Sub, Exp, ReduceSum, Div) to
// the element type, bit-exact with the ONNX reference (numpy float16); computing in float and
// rounding once differs from it on 6 of these 24 elements.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "OnnxBuilder.h"
#include "Optimium/Runtime.h"
#include "Optimium/Runtime/Types/BFloat16.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

/// Softmax (opset 13, last axis) of a [Rows, Cols] half tensor given as raw 16-bit patterns.
std::vector<uint16_t> runSoftmax(int ElemType, rt::ElementType Type, int64_t Rows, int64_t Cols,
                                 const std::vector<uint16_t> &X) {
  OnnxBuilder B(13);
  B.input("x", ElemType, {Rows, Cols});
  B.node("Softmax", {"x"}, {"y"});
  B.output("y", ElemType);
  const std::string Bytes = B.bytes();
  rt::Model M = rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
  std::vector<rt::Tensor> In = {rt::tensor(Type, M.getTensorInfo("x").Shape)};
  std::memcpy(In[0].data(), X.data(), X.size() * sizeof(uint16_t));
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(In));
  R.wait();
  const rt::Tensor Y = R.getOutput("y");
  const uint16_t *P = static_cast<const uint16_t *>(Y.data());
  return std::vector<uint16_t>(P, P + Y.getElementCount());
}

// Rows of test_attention_4d_causal_fp16_expanded's softmax input (causal -inf mask); expected
// from onnx.reference.ReferenceEvaluator (Softmax-13, float16).
TEST(SoftmaxHalf, Float16MatchesReferenceBitForBit) {
  const std::vector<uint16_t> X = {0x3913, 0x365f, 0xfc00, 0xfc00, 0xfc00, 0xfc00, 0x3b50, 0x390b,
                                   0x3c7f, 0xfc00, 0xfc00, 0xfc00, 0x3903, 0x373c, 0x39c0, 0x3b2b,
                                   0xfc00, 0xfc00, 0x37fd, 0x3a1e, 0x39b1, 0x3a32, 0xfc00, 0xfc00};
  const std::vector<uint16_t> Expected = {0x3879, 0x3710, 0, 0, 0,      0,      0x355b, 0x3408,
                                          0x369b, 0,      0, 0, 0x338a, 0x3255, 0x3422, 0x34ef,
                                          0,      0,      0x3297, 0x344c, 0x3413, 0x3457, 0, 0};
  const std::vector<uint16_t> Y = runSoftmax(onnx::TensorProto_DataType_FLOAT16, rt::ElementType::F16, 4, 6, X);
  ASSERT_EQ(Y.size(), Expected.size());
  for (size_t I = 0; I < Y.size(); ++I)
    EXPECT_EQ(Y[I], Expected[I]) << "element " << I;
}

TEST(SoftmaxHalf, BFloat16RoundsEachStep) {
  using rt::bfloat16;
  const int64_t Rows = 3, Cols = 9;
  std::vector<uint16_t> X(static_cast<size_t>(Rows * Cols));
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = bfloat16(static_cast<float>(static_cast<int>((I * 37) % 23) - 11) / 3.0f).Bits;
  const std::vector<uint16_t> Y = runSoftmax(onnx::TensorProto_DataType_BFLOAT16, rt::ElementType::BF16, Rows, Cols, X);
  const auto value = [](uint16_t Bits) { return static_cast<float>(bfloat16::fromBits(Bits)); };
  for (int64_t R = 0; R < Rows; ++R) {
    float Max = -INFINITY, Sum = 0;
    std::vector<float> E(static_cast<size_t>(Cols));
    for (int64_t C = 0; C < Cols; ++C)
      Max = std::max(Max, value(X[static_cast<size_t>(R * Cols + C)]));
    for (int64_t C = 0; C < Cols; ++C) {
      const float Shifted = bfloat16(value(X[static_cast<size_t>(R * Cols + C)]) - Max);
      E[static_cast<size_t>(C)] = bfloat16(std::exp(Shifted));
      Sum += E[static_cast<size_t>(C)];
    }
    const float Total = bfloat16(Sum);
    for (int64_t C = 0; C < Cols; ++C)
      EXPECT_EQ(Y[static_cast<size_t>(R * Cols + C)], bfloat16(E[static_cast<size_t>(C)] / Total).Bits) << R << " " << C;
  }
}

} // namespace
