// Conv + Relu/Clip fusion: the activation disappears into the Conv (fewer operations, same outputs
// as the unfused graph), and is left alone when its bounds are not constant, when the Conv's
// output has other readers, or when every intermediate must stay readable.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

std::vector<float> ramp(size_t N, float Scale) {
  std::vector<float> V(N);
  for (size_t I = 0; I < N; ++I)
    V[I] = Scale * std::sin(static_cast<float>(I) * 0.37f);
  return V;
}

/// x -> Conv -> Relu -> Conv -> Clip(0, 0.3) -> y; plus, with Shared, a second reader of the
/// first Conv's output (an Add into y2).
std::string convActModel(bool Shared, bool DynamicClipBound) {
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 3, 8, 8});
  if (DynamicClipBound)
    B.input("hi", onnx::TensorProto_DataType_FLOAT, {});
  B.initializer("w1", {4, 3, 3, 3}, ramp(108, 0.4f));
  B.initializer("b1", {4}, {0.1f, -0.2f, 0.05f, 0.0f});
  B.initializer("w2", {2, 4, 1, 1}, ramp(8, 0.7f));
  B.initializer("lo", {}, {0.0f});
  if (!DynamicClipBound)
    B.initializer("hi", {}, {0.3f});
  OnnxBuilder::attrInts(B.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  B.node("Relu", {"c1"}, {"r1"}, "relu1");
  B.node("Conv", {"r1", "w2"}, {"c2"}, "conv2");
  B.node("Clip", {"c2", "lo", "hi"}, {"y"}, "clip2");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (Shared) {
    B.node("Add", {"c1", "c1"}, {"y2"}, "add");
    B.output("y2", onnx::TensorProto_DataType_FLOAT);
  }
  return B.bytes();
}

struct RunResult {
  size_t Ops;
  std::vector<float> Y;
};

RunResult runModel(const std::string &Bytes, bool MemOpt, bool DynamicClipBound = false) {
  rt::Model M = loadModelBytes(Bytes, MemOpt);
  rt::InferRequest R = M.createRequest();
  std::vector<rt::Tensor> In;
  rt::TypedTensor<float> X = rt::tensor<float>({1, 3, 8, 8});
  const std::vector<float> XV = ramp(192, 1.0f);
  std::copy(XV.begin(), XV.end(), static_cast<float *>(X.data()));
  In.push_back(X);
  if (DynamicClipBound) {
    rt::TypedTensor<float> Hi = rt::tensor<float>(rt::TensorShape{});
    Hi.fill(0.3f);
    In.push_back(Hi);
  }
  R.infer(rt::make_array(In));
  R.wait();
  rt::Tensor Y = R.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  return {M.getOperations().size(), std::vector<float>(P, P + Y.getShape().getElementCount().value())};
}

} // namespace

TEST(FuseConvActivation, ReluAndConstantClipFoldIntoTheirConvs) {
  rt::AutoInit Init;
  const std::string Bytes = convActModel(false, false);
  const RunResult Fused = runModel(Bytes, true), Plain = runModel(Bytes, false);
  EXPECT_EQ(Fused.Ops, 2u); // conv1 (+relu1), conv2 (+clip2)
  EXPECT_EQ(Plain.Ops, 4u); // every intermediate readable: nothing fused
  ASSERT_EQ(Fused.Y.size(), Plain.Y.size());
  float MaxV = 0;
  for (size_t I = 0; I < Fused.Y.size(); ++I) {
    EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 1e-5f) << I;
    EXPECT_GE(Fused.Y[I], 0.0f);
    EXPECT_LE(Fused.Y[I], 0.3f);
    MaxV = std::max(MaxV, Fused.Y[I]);
  }
  EXPECT_GT(MaxV, 0.0f); // the clamp is exercised, not everything zero
}

TEST(FuseConvActivation, LeavesSharedOutputsAndRuntimeBoundsAlone) {
  rt::AutoInit Init;
  // conv1's output also feeds an Add: Relu stays; Clip(conv2) still fuses.
  EXPECT_EQ(runModel(convActModel(true, false), true).Ops, 4u);
  // Clip's upper bound is a graph input: not a constant, not fused; Relu still fuses.
  const std::string Dyn = convActModel(false, true);
  const RunResult Fused = runModel(Dyn, true, true), Plain = runModel(Dyn, false, true);
  EXPECT_EQ(Fused.Ops, 3u);
  for (size_t I = 0; I < Fused.Y.size(); ++I)
    EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 1e-5f);
}
