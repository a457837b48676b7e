// Squeeze-excitation fusion: GlobalAveragePool -> 1x1 Conv -> act -> 1x1 Conv -> Sigmoid /
// HardSigmoid -> Mul(x, s) becomes one SqueezeExcitation node with the unfused graph's outputs
// (EfficientNet's SiLU + Sigmoid blocks, MobileNetV3's Relu + HardSigmoid ones, either Mul operand
// order), and chains whose intermediates have other readers stay as they are; the pass runs on CPUs
// with AVX2 + FMA (the kernel's AVX2 and AVX-512 variants).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "core/CpuFeatures.h"
#include "passes/Pipeline.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

enum class Style { EfficientNet, MobileNetV3 };

/// x [1, 24, 9, 9] -> SE block (C 24, R 6) -> y; ScaleFirst: Mul(s, x); PoolShared: the pooled
/// means are also a graph output (no fusion).
std::string seModel(Style S, bool ScaleFirst, bool PoolShared) {
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 24, 9, 9});
  B.initializer("w1", {6, 24, 1, 1}, wave(144, 0.4f, 0.0f, 0.61f));
  B.initializer("b1", {6}, wave(6, 0.2f, 1.0f, 0.61f));
  B.initializer("w2", {24, 6, 1, 1}, wave(144, 0.9f, 2.0f, 0.61f));
  B.initializer("b2", {24}, wave(24, 0.3f, 0.5f, 0.61f));
  B.node("GlobalAveragePool", {"x"}, {"p"}, "pool");
  B.node("Conv", {"p", "w1", "b1"}, {"c1"}, "fc1");
  if (S == Style::EfficientNet) {
    B.node("Sigmoid", {"c1"}, {"g1"}, "act_sigmoid");
    B.node("Mul", {"c1", "g1"}, {"a1"}, "act_mul");
  } else {
    B.node("Relu", {"c1"}, {"a1"}, "act_relu");
  }
  B.node("Conv", {"a1", "w2", "b2"}, {"c2"}, "fc2");
  if (S == Style::EfficientNet) {
    B.node("Sigmoid", {"c2"}, {"s"}, "scale_act");
  } else {
    auto *H = B.node("HardSigmoid", {"c2"}, {"s"}, "scale_act");
    auto *A = H->add_attribute();
    A->set_name("alpha");
    A->set_type(onnx::AttributeProto::FLOAT);
    A->set_f(1.0f / 6.0f);
  }
  B.node("Mul", ScaleFirst ? std::vector<std::string>{"s", "x"} : std::vector<std::string>{"x", "s"}, {"y"}, "scale");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (PoolShared)
    B.output("p", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

struct SeResult {
  std::vector<std::string> Ops;
  std::vector<float> Y;
};

SeResult runSe(const std::string &Bytes, bool MemOpt) {
  rt::Model M = loadModelBytes(Bytes, MemOpt);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>({1, 24, 9, 9});
  const std::vector<float> XV = wave(24 * 81, 2.0f, 0.3f, 0.61f);
  std::copy(XV.begin(), XV.end(), static_cast<float *>(X.data()));
  std::vector<rt::Tensor> In{X};
  R.infer(rt::make_array(In));
  R.wait();
  rt::Tensor Y = R.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  return {opTypeList(M), std::vector<float>(P, P + Y.getShape().getElementCount().value())};
}

} // namespace

TEST(FuseSqueezeExcitation, EfficientNetAndMobileNetV3BlocksBecomeOneNode) {
  rt::AutoInit Init;
  optimium::runtime::detail::ScopedIgnorePassGates Gates;
  for (Style S : {Style::EfficientNet, Style::MobileNetV3})
    for (bool ScaleFirst : {false, true}) {
      const std::string Bytes = seModel(S, ScaleFirst, false);
      const SeResult Fused = runSe(Bytes, true), Plain = runSe(Bytes, false);
      EXPECT_EQ(Fused.Ops, std::vector<std::string>{"com.optimium.SqueezeExcitation"});
      EXPECT_GE(Plain.Ops.size(), 6u);
      ASSERT_EQ(Fused.Y.size(), Plain.Y.size());
      double MaxAbs = 0;
      for (size_t I = 0; I < Fused.Y.size(); ++I) {
        EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 2e-6f * std::max(1.0f, std::fabs(Plain.Y[I]))) << I;
        MaxAbs = std::max(MaxAbs, static_cast<double>(std::fabs(Plain.Y[I])));
      }
      EXPECT_GT(MaxAbs, 0.1); // not all zero
    }
}

TEST(FuseSqueezeExcitation, ChainWithAnotherReaderStaysUnfused) {
  rt::AutoInit Init;
  optimium::runtime::detail::ScopedIgnorePassGates Gates;
  const std::string Bytes = seModel(Style::MobileNetV3, false, true);
  const SeResult Fused = runSe(Bytes, true), Plain = runSe(Bytes, false);
  for (const std::string &Op : Fused.Ops)
    EXPECT_NE(Op, "com.optimium.SqueezeExcitation");
  ASSERT_EQ(Fused.Y.size(), Plain.Y.size());
  for (size_t I = 0; I < Fused.Y.size(); ++I)
    EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 1e-6f) << I;
}

// With the gates on: the block fuses where the kernel has a fast variant (AVX2 + FMA or AVX-512,
// e.g. an AMD Zen 3) and agrees with the unfused graph; not where it has none
// (unit_tests_without_avx2 runs this with avx2 hidden).
TEST(FuseSqueezeExcitation, FiresWhereTheCpuHasAvx2Fma) {
  rt::AutoInit Init;
  for (Style S : {Style::EfficientNet, Style::MobileNetV3}) {
    const std::string Bytes = seModel(S, false, false);
    const SeResult Fused = runSe(Bytes, true), Plain = runSe(Bytes, false);
    const bool Fires = optimium::runtime::detail::cpuFeatures().avx2Fma();
    EXPECT_EQ(Fused.Ops == std::vector<std::string>{"com.optimium.SqueezeExcitation"}, Fires);
    ASSERT_EQ(Fused.Y.size(), Plain.Y.size());
    for (size_t I = 0; I < Fused.Y.size(); ++I)
      EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 2e-6f * std::max(1.0f, std::fabs(Plain.Y[I]))) << I;
  }
}
