// Conv + activation fusion (Relu/Clip, SiLU, Sigmoid, HardSwish, HardSigmoid): the activation
// disappears into the Conv (fewer operations, same outputs as the unfused graph; float16 Convs take
// clamps only, bit for bit), and is left alone when its bounds are not constant, when the Conv's output has other readers, or when every
// intermediate must stay readable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "Optimium/Runtime/Types/Float16.h"
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

namespace {

void attrFloat(onnx::NodeProto *N, const std::string &Name, float V) {
  auto *A = N->add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::FLOAT);
  A->set_f(V);
}

void attrString(onnx::NodeProto *N, const std::string &Name, const std::string &V) {
  auto *A = N->add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::STRING);
  A->set_s(V);
}

/// x -> Conv (3x3) -> SiLU written as Sigmoid + Mul (MulSigmoidFirst: Mul(sigmoid, c1)) -> Conv
/// (1x1) -> HardSwish -> Conv (1x1) -> HardSigmoid(alpha 0.3, beta 0.4) -> Conv (1x1) -> Sigmoid -> y.
/// SigmoidShared: the first Sigmoid's output is also a graph output (the SiLU must stay unfused).
std::string convActivationsModel(bool MulSigmoidFirst, bool SigmoidShared) {
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 3, 8, 8});
  B.initializer("w1", {8, 3, 3, 3}, ramp(216, 0.5f));
  B.initializer("b1", {8}, ramp(8, 0.3f));
  B.initializer("w2", {6, 8, 1, 1}, ramp(48, 0.8f));
  B.initializer("w3", {5, 6, 1, 1}, ramp(30, 1.2f));
  B.initializer("w4", {4, 5, 1, 1}, ramp(20, 1.5f));
  OnnxBuilder::attrInts(B.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  B.node("Sigmoid", {"c1"}, {"s1"}, "sigmoid1");
  B.node("Mul", MulSigmoidFirst ? std::vector<std::string>{"s1", "c1"} : std::vector<std::string>{"c1", "s1"}, {"m1"},
         "mul1");
  B.node("Conv", {"m1", "w2"}, {"c2"}, "conv2");
  B.node("HardSwish", {"c2"}, {"h2"}, "hardswish2");
  B.node("Conv", {"h2", "w3"}, {"c3"}, "conv3");
  auto *HS = B.node("HardSigmoid", {"c3"}, {"h3"}, "hardsigmoid3");
  attrFloat(HS, "alpha", 0.3f);
  attrFloat(HS, "beta", 0.4f);
  B.node("Conv", {"h3", "w4"}, {"c4"}, "conv4");
  B.node("Sigmoid", {"c4"}, {"y"}, "sigmoid4");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (SigmoidShared)
    B.output("s1", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

void expectClose(const RunResult &A, const RunResult &B, float Tol) {
  ASSERT_EQ(A.Y.size(), B.Y.size());
  for (size_t I = 0; I < A.Y.size(); ++I)
    EXPECT_NEAR(A.Y[I], B.Y[I], Tol) << I;
}

} // namespace

TEST(FuseConvActivation, SiluHardSwishHardSigmoidAndSigmoidFoldIntoTheirConvs) {
  rt::AutoInit Init;
  for (bool SigmoidFirst : {false, true}) {
    const std::string Bytes = convActivationsModel(SigmoidFirst, false);
    const RunResult Fused = runModel(Bytes, true), Plain = runModel(Bytes, false);
    EXPECT_EQ(Fused.Ops, 4u) << SigmoidFirst; // four Convs, every activation inside one
    EXPECT_EQ(Plain.Ops, 9u);
    expectClose(Fused, Plain, 2e-6f);
    float Lo = 1, Hi = 0;
    for (float V : Fused.Y)
      Lo = std::min(Lo, V), Hi = std::max(Hi, V);
    EXPECT_LT(Lo, 0.45f); // the sigmoid's outputs spread: the activations are exercised
    EXPECT_GT(Hi, 0.55f);
  }
}

TEST(FuseConvActivation, SiluWhoseSigmoidHasAnotherReaderStaysUnfused) {
  rt::AutoInit Init;
  const std::string Bytes = convActivationsModel(false, true);
  const RunResult Fused = runModel(Bytes, true), Plain = runModel(Bytes, false);
  EXPECT_EQ(Fused.Ops, 6u); // conv1, sigmoid1, mul1 stay; the other three activations fold
  expectClose(Fused, Plain, 2e-6f);
}

TEST(FuseConvActivation, UnknownFusedActivationIsAClearModelError) {
  rt::AutoInit Init;
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 3, 8, 8});
  B.initializer("w1", {4, 3, 3, 3}, ramp(108, 0.4f));
  auto *C = B.node("Conv", {"x", "w1"}, {"y"}, "conv1");
  attrString(C, "optimium.act", "gelu");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  try {
    loadModelBytes(B.bytes(), true);
    FAIL() << "expected a ModelError";
  } catch (const rt::ModelError &E) {
    EXPECT_NE(std::string(E.what()).find("unknown activation 'gelu'"), std::string::npos) << E.what();
  }
}

namespace {

std::vector<uint16_t> halfRamp(size_t N, float Scale) {
  std::vector<uint16_t> H(N);
  const std::vector<float> V = ramp(N, Scale);
  for (size_t I = 0; I < N; ++I)
    H[I] = rt::float16::fromFloat(V[I]);
  return H;
}

/// float16 x -> Conv -> Relu -> Conv -> Clip -> Conv -> HardSwish -> y. Clip's bounds: float16
/// constants 0 and 0.5 (opset 13), or (opset 10) attributes 0.1 and 0.5, where 0.1 is not a
/// float16 value.
std::string halfConvModel(bool AttributeClip) {
  constexpr int F16 = onnx::TensorProto_DataType_FLOAT16;
  OnnxBuilder B(AttributeClip ? 10 : 13);
  B.input("x", F16, {1, 3, 8, 8});
  B.initializerRaw("w1", F16, {4, 3, 3, 3}, halfRamp(108, 0.4f));
  B.initializerRaw("b1", F16, {4}, halfRamp(4, 0.2f));
  B.initializerRaw("w2", F16, {4, 4, 1, 1}, halfRamp(16, 0.7f));
  B.initializerRaw("w3", F16, {2, 4, 1, 1}, halfRamp(8, 2.0f));
  OnnxBuilder::attrInts(B.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  B.node("Relu", {"c1"}, {"r1"}, "relu1");
  B.node("Conv", {"r1", "w2"}, {"c2"}, "conv2");
  if (AttributeClip) {
    onnx::NodeProto *C = B.node("Clip", {"c2"}, {"k2"}, "clip2");
    attrFloat(C, "min", 0.1f);
    attrFloat(C, "max", 0.5f);
  } else {
    B.initializerRaw("lo", F16, {}, std::vector<uint16_t>{rt::float16::fromFloat(0.0f)});
    B.initializerRaw("hi", F16, {}, std::vector<uint16_t>{rt::float16::fromFloat(0.5f)});
    B.node("Clip", {"c2", "lo", "hi"}, {"k2"}, "clip2");
  }
  B.node("Conv", {"k2", "w3"}, {"c3"}, "conv3");
  B.node("HardSwish", {"c3"}, {"y"}, "hardswish3");
  B.output("y", F16);
  return B.bytes();
}

struct HalfResult {
  size_t Ops;
  std::vector<uint16_t> Y;
};

HalfResult runHalf(const std::string &Bytes, bool MemOpt) {
  rt::Model M = loadModelBytes(Bytes, MemOpt);
  rt::Tensor X = rt::tensor(rt::ElementType::F16, rt::TensorShape{1, 3, 8, 8});
  const std::vector<uint16_t> XV = halfRamp(192, 1.5f);
  std::copy(XV.begin(), XV.end(), static_cast<uint16_t *>(X.data()));
  rt::InferRequest R = M.createRequest();
  R.infer(std::vector<rt::Tensor>{X});
  R.wait();
  rt::Tensor Y = R.getOutput("y");
  const uint16_t *P = static_cast<const uint16_t *>(Y.data());
  return {M.getOperations().size(), std::vector<uint16_t>(P, P + Y.getElementCount())};
}

} // namespace

TEST(FuseConvActivation, Float16ConvsTakeExactClampsBitForBit) {
  rt::AutoInit Init;
  const std::string Bytes = halfConvModel(false);
  const HalfResult Fused = runHalf(Bytes, true), Plain = runHalf(Bytes, false);
  // Relu and the float16-constant Clip fold; HardSwish stays (it would lose the rounding between).
  EXPECT_EQ(Fused.Ops, 4u);
  EXPECT_EQ(Plain.Ops, 6u);
  ASSERT_EQ(Fused.Y, Plain.Y); // clamp(round16(y)) == round16(clamp(y)): identical bits
  size_t Positive = 0;
  for (uint16_t H : Fused.Y)
    Positive += rt::float16::toFloat(H) > 0.0f;
  EXPECT_GT(Positive, 0u);
}

TEST(FuseConvActivation, Float16ClampWithABoundFloat16CannotHoldStaysUnfused) {
  rt::AutoInit Init;
  const std::string Bytes = halfConvModel(true);
  const HalfResult Fused = runHalf(Bytes, true), Plain = runHalf(Bytes, false);
  EXPECT_EQ(Fused.Ops, 5u); // Relu folds; Clip(min 0.1) stays: 0.1 is not a float16 value
  ASSERT_EQ(Fused.Y, Plain.Y);
}
