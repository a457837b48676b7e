// The XNNPACK extension's 8-bit operators (QLinearConv -> XNNPACK qs8 / qc8 / qu8 convolution,
// QLinearMatMul -> qs8 / qu8 fully connected) against the native backend, which requantizes
// exactly (double arithmetic, round half to even, as the ONNX reference). XNNPACK requantizes with
// a float32 scale and float32 products, so an output may differ by one quantization step where the
// exact value lies within float rounding of a .5 tie: the tests bound the difference by one step
// and count how often it happens. Plus what it leaves to the CPU. Own binary on the shared runtime,
// which auto-loads the extension from its folder (tests/CMakeLists.txt).
#include <Optimium/Runtime.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "backends/xnnpack/XnnpackTestUtil.h"

namespace rt = optimium::runtime;
using optimium_test::OnnxBuilder;

namespace {

constexpr int I8 = onnx::TensorProto::INT8, U8 = onnx::TensorProto::UINT8, F32 = onnx::TensorProto::FLOAT,
              I32 = onnx::TensorProto::INT32;

const auto *Env = ::testing::AddGlobalTestEnvironment(new xnnpack_test::Runtime);
using xnnpack_test::cpu;
using xnnpack_test::xnnpack;

template <typename T> std::vector<T> randomInts(size_t N, int Lo, int Hi, unsigned Seed) {
  std::mt19937 G(Seed);
  std::uniform_int_distribution<int> D(Lo, Hi);
  std::vector<T> V(N);
  for (T &X : V)
    X = static_cast<T>(D(G));
  return V;
}

struct QConvCase {
  const char *Label;
  int Type;                           ///< I8 or U8 for x, w, y
  int64_t C, OC, H, W, K, Stride, Pad, Group;
  bool PerChannel, Bias;
  int XZp, WZp, YZp;
  float XScale, WScale, YScale;
  float ActMin; ///< a fused Relu (optimium.act_min = 0) when 0, none when -inf
};

/// QLinearConv(x, ..., [bias]) -> y, constant parameters.
std::string qconv(const QConvCase &Q, unsigned Seed) {
  OnnxBuilder B;
  const bool S = Q.Type == I8;
  B.input("x", Q.Type, {1, Q.C, Q.H, Q.W});
  const size_t WN = static_cast<size_t>(Q.OC * (Q.C / Q.Group) * Q.K * Q.K);
  if (S)
    B.initializerRaw("w", I8, {Q.OC, Q.C / Q.Group, Q.K, Q.K}, randomInts<int8_t>(WN, -127, 127, Seed));
  else
    B.initializerRaw("w", U8, {Q.OC, Q.C / Q.Group, Q.K, Q.K}, randomInts<uint8_t>(WN, 0, 255, Seed));
  B.initializer("xs", {}, {Q.XScale});
  B.initializer("ys", {}, {Q.YScale});
  if (Q.PerChannel) {
    std::vector<float> WS(static_cast<size_t>(Q.OC));
    for (size_t I = 0; I < WS.size(); ++I)
      WS[I] = Q.WScale * (1.0f + 0.37f * static_cast<float>(I % 5));
    B.initializer("ws", {Q.OC}, WS);
  } else {
    B.initializer("ws", {}, {Q.WScale});
  }
  if (S) {
    B.initializerRaw("xz", I8, {}, std::vector<int8_t>{static_cast<int8_t>(Q.XZp)});
    B.initializerRaw("wz", I8, {}, std::vector<int8_t>{static_cast<int8_t>(Q.WZp)});
    B.initializerRaw("yz", I8, {}, std::vector<int8_t>{static_cast<int8_t>(Q.YZp)});
  } else {
    B.initializerRaw("xz", U8, {}, std::vector<uint8_t>{static_cast<uint8_t>(Q.XZp)});
    B.initializerRaw("wz", U8, {}, std::vector<uint8_t>{static_cast<uint8_t>(Q.WZp)});
    B.initializerRaw("yz", U8, {}, std::vector<uint8_t>{static_cast<uint8_t>(Q.YZp)});
  }
  std::vector<std::string> In{"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"};
  if (Q.Bias) {
    B.initializerRaw("b", I32, {Q.OC}, randomInts<int32_t>(static_cast<size_t>(Q.OC), -2000, 2000, Seed + 1));
    In.push_back("b");
  }
  onnx::NodeProto *N = B.node("QLinearConv", In, {"y"});
  OnnxBuilder::attrInts(N, "pads", {Q.Pad, Q.Pad, Q.Pad, Q.Pad});
  OnnxBuilder::attrInts(N, "strides", {Q.Stride, Q.Stride});
  OnnxBuilder::attrInt(N, "group", Q.Group);
  if (Q.ActMin == 0.0f) {
    auto *A = N->add_attribute();
    A->set_name("optimium.act_min");
    A->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    A->set_f(0.0f);
  }
  B.output("y");
  return B.bytes();
}

rt::Model load(const std::string &Bytes, const std::vector<rt::DeviceID> &Devices, bool Strict) {
  rt::ModelLoadOptions O;
  O.Devices = Devices;
  O.Strict = Strict;
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), O);
}

rt::Tensor runOnce(rt::Model &M, const rt::Tensor &X) {
  rt::InferRequest R = M.createRequest();
  R.infer({X});
  R.wait();
  return R.getOutput(0).clone();
}

struct StepDiff {
  int Max = 0;
  size_t Differing = 0, Count = 0;
};
StepDiff compare8(const rt::Tensor &A, const rt::Tensor &B) {
  StepDiff D;
  EXPECT_EQ(A.getType(), B.getType());
  EXPECT_EQ(A.getElementCount(), B.getElementCount());
  const bool S = A.getType() == rt::ElementType::I8;
  D.Count = A.getElementCount();
  for (size_t I = 0; I < D.Count; ++I) {
    const int VA = S ? static_cast<const int8_t *>(A.data())[I] : static_cast<const uint8_t *>(A.data())[I];
    const int VB = S ? static_cast<const int8_t *>(B.data())[I] : static_cast<const uint8_t *>(B.data())[I];
    D.Max = std::max(D.Max, std::abs(VA - VB));
    D.Differing += VA != VB;
  }
  return D;
}

rt::Tensor input8(int Type, const std::vector<int64_t> &Dims, unsigned Seed) {
  rt::Tensor X = rt::tensor(Type == I8 ? rt::ElementType::I8 : rt::ElementType::U8, rt::TensorShape::fromDims(Dims));
  if (Type == I8) {
    const std::vector<int8_t> V = randomInts<int8_t>(X.getElementCount(), -128, 127, Seed);
    std::memcpy(X.data(), V.data(), V.size());
  } else {
    const std::vector<uint8_t> V = randomInts<uint8_t>(X.getElementCount(), 0, 255, Seed);
    std::memcpy(X.data(), V.data(), V.size());
  }
  return X;
}

} // namespace

TEST(XnnpackQuant, QLinearConvMatchesNativeWithinOneStep) {
  const rt::DeviceID Xnn = xnnpack();
  ASSERT_EQ(Xnn.getPlatform(), rt::PlatformKind::XNNPack) << "the XNNPACK extension is not loaded";
  const float NoAct = -INFINITY;
  const QConvCase Cases[] = {
      // label, type, C, OC, H, W, K, stride, pad, group, per-channel, bias, x/w/y zero points, scales, act
      {"qs8 3x3", I8, 8, 16, 12, 12, 3, 1, 1, 1, false, true, -5, 0, 3, 0.05f, 0.004f, 0.09f, NoAct},
      {"qs8 3x3 relu", I8, 16, 24, 9, 11, 3, 1, 1, 1, false, true, 7, 0, -20, 0.03f, 0.005f, 0.06f, 0.0f},
      {"qc8 stride 2 groups 2", I8, 8, 16, 13, 13, 3, 2, 1, 2, true, true, 0, 0, -128, 0.02f, 0.003f, 0.04f, 0.0f},
      {"qc8 1x1", I8, 32, 64, 7, 7, 1, 1, 0, 1, true, false, 1, 0, 2, 0.05f, 0.002f, 0.07f, NoAct},
      {"qc8 depthwise", I8, 16, 16, 10, 10, 3, 1, 1, 16, true, true, -3, 0, 0, 0.04f, 0.01f, 0.05f, 0.0f},
      {"qu8 3x3", U8, 8, 12, 10, 10, 3, 1, 1, 1, false, true, 128, 120, 100, 0.05f, 0.004f, 0.09f, NoAct},
      {"qu8 5x5 stride 2 relu", U8, 4, 8, 17, 17, 5, 2, 2, 1, false, true, 30, 128, 10, 0.02f, 0.006f, 0.05f, 0.0f},
  };
  unsigned Seed = 10;
  size_t Differing = 0, Total = 0;
  for (const QConvCase &Q : Cases) {
    SCOPED_TRACE(Q.Label);
    const std::string Bytes = qconv(Q, ++Seed);
    rt::Model OnXnn = load(Bytes, {Xnn}, /*Strict=*/true), OnCpu = load(Bytes, {cpu()}, true);
    ASSERT_EQ(OnXnn.getOperations().size(), 1u);
    EXPECT_EQ(OnXnn.getOperations()[0].Device, Xnn);
    for (int Run = 0; Run < 2; ++Run) {
      const rt::Tensor X = input8(Q.Type, {1, Q.C, Q.H, Q.W}, ++Seed);
      const StepDiff D = compare8(runOnce(OnXnn, X), runOnce(OnCpu, X));
      EXPECT_LE(D.Max, 1) << D.Differing << " of " << D.Count << " outputs differ";
      Differing += D.Differing;
      Total += D.Count;
    }
  }
  // One-step differences come only from float32 rounding at ties: rare.
  std::printf("QLinearConv on XNNPack vs native (exact): %zu of %zu outputs one step apart\n", Differing, Total);
  EXPECT_LE(Differing * 100, Total) << "more than 1% of the outputs differ by a step";
}

TEST(XnnpackQuant, QLinearMatMulMatchesNativeWithinOneStep) {
  const rt::DeviceID Xnn = xnnpack();
  ASSERT_EQ(Xnn.getPlatform(), rt::PlatformKind::XNNPack);
  size_t Differing = 0, Total = 0;
  for (int Type : {I8, U8}) {
    SCOPED_TRACE(Type == I8 ? "qs8" : "qu8");
    const int64_t M = 5, K = 48, N = 20;
    OnnxBuilder B;
    B.input("a", Type, {M, K});
    if (Type == I8) {
      B.initializerRaw("b", I8, {K, N}, randomInts<int8_t>(K * N, -127, 127, 3));
      B.initializerRaw("az", I8, {}, std::vector<int8_t>{-4});
      B.initializerRaw("bz", I8, {}, std::vector<int8_t>{0});
      B.initializerRaw("yz", I8, {}, std::vector<int8_t>{6});
    } else {
      B.initializerRaw("b", U8, {K, N}, randomInts<uint8_t>(K * N, 0, 255, 3));
      B.initializerRaw("az", U8, {}, std::vector<uint8_t>{128});
      B.initializerRaw("bz", U8, {}, std::vector<uint8_t>{131});
      B.initializerRaw("yz", U8, {}, std::vector<uint8_t>{120});
    }
    B.initializer("as", {}, {0.04f});
    B.initializer("bs", {}, {0.003f});
    B.initializer("ys", {}, {0.08f});
    B.node("QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"});
    B.output("y");
    const std::string Bytes = B.bytes(); // loadModel borrows the bytes: they must outlive the models
    rt::Model OnXnn = load(Bytes, {Xnn}, true), OnCpu = load(Bytes, {cpu()}, true);
    EXPECT_EQ(OnXnn.getOperations()[0].Device, Xnn);
    for (unsigned Seed = 1; Seed <= 3; ++Seed) {
      const rt::Tensor X = input8(Type, {M, K}, Seed);
      const rt::Tensor TA = runOnce(OnXnn, X), TB = runOnce(OnCpu, X);
      const StepDiff D = compare8(TA, TB);
      EXPECT_LE(D.Max, 1);
      Differing += D.Differing;
      Total += D.Count;
    }
  }
  std::printf("QLinearMatMul on XNNPack vs native (exact): %zu of %zu outputs one step apart\n", Differing, Total);
  EXPECT_LE(Differing * 100, Total);
}

TEST(XnnpackQuant, WhatXnnpackCannotTakeStaysOnTheCpu) {
  const rt::DeviceID Xnn = xnnpack();
  ASSERT_EQ(Xnn.getPlatform(), rt::PlatformKind::XNNPack);
  const float NoAct = -INFINITY;
  const QConvCase Left[] = {
      // int8 weights with a zero point: XNNPACK's int8 operators take symmetric weights only.
      {"int8 w_zp 3", I8, 8, 8, 6, 6, 3, 1, 1, 1, false, true, 0, 3, 0, 0.05f, 0.004f, 0.09f, NoAct},
      // uint8 with a scale per channel: XNNPACK's qu8 takes one scale.
      {"uint8 per-channel", U8, 8, 8, 6, 6, 3, 1, 1, 1, true, true, 128, 128, 128, 0.05f, 0.004f, 0.09f, NoAct},
      // A requantization scale of 256 or more, which XNNPACK refuses.
      {"scale >= 256", I8, 4, 4, 6, 6, 3, 1, 1, 1, false, false, 0, 0, 0, 2.0f, 2.0f, 0.01f, NoAct},
  };
  for (const QConvCase &Q : Left) {
    SCOPED_TRACE(Q.Label);
    const std::string Bytes = qconv(Q, 77);
    rt::Model M = load(Bytes, {Xnn, cpu()}, false);
    EXPECT_EQ(M.getOperations()[0].Device, cpu());
    rt::Model Native = load(Bytes, {cpu()}, true);
    const rt::Tensor X = input8(Q.Type, {1, Q.C, Q.H, Q.W}, 5);
    EXPECT_EQ(compare8(runOnce(M, X), runOnce(Native, X)).Max, 0);
  }
  // Mixed uint8 activations x int8 weights (ONNX Runtime's default U8S8): no XNNPACK operator.
  OnnxBuilder B;
  B.input("a", U8, {2, 8});
  B.initializerRaw("b", I8, {8, 4}, randomInts<int8_t>(32, -127, 127, 4));
  B.initializer("as", {}, {0.1f});
  B.initializerRaw("az", U8, {}, std::vector<uint8_t>{128});
  B.initializer("bs", {}, {0.1f});
  B.initializerRaw("bz", I8, {}, std::vector<int8_t>{0});
  B.initializer("ys", {}, {0.1f});
  B.initializerRaw("yz", U8, {}, std::vector<uint8_t>{128});
  B.node("QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"});
  B.output("y");
  const std::string Bytes = B.bytes();
  rt::Model M = load(Bytes, {Xnn, cpu()}, false);
  EXPECT_EQ(M.getOperations()[0].Device, cpu());
  // Strict with XNNPack alone: a clear error naming the op.
  try {
    load(Bytes, {Xnn}, true);
    ADD_FAILURE() << "a Strict load placed a node XNNPack does not take";
  } catch (const rt::Exception &E) {
    EXPECT_NE(std::string(E.what()).find("QLinearMatMul"), std::string::npos) << E.what();
  }
}
