// A SiLU that follows no Conv (Sigmoid(x) and Mul(x, Sigmoid(x)), either operand order) becomes one
// Swish node with the unfused graph's outputs; a Sigmoid with another reader stays; the pass runs
// on CPUs with AVX2 + FMA.
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

/// x [2, 3, 50] -> a = Add(x, x) -> SiLU(a) -> y; SharedSigmoid: the Sigmoid's output is an output too.
std::string siluModel(bool SigmoidFirst, bool SharedSigmoid) {
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 3, 50});
  B.node("Add", {"x", "x"}, {"a"}, "add");
  B.node("Sigmoid", {"a"}, {"s"}, "sigmoid");
  B.node("Mul", SigmoidFirst ? std::vector<std::string>{"s", "a"} : std::vector<std::string>{"a", "s"}, {"y"}, "mul");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (SharedSigmoid)
    B.output("s", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

struct SiluResult {
  std::vector<std::string> Ops;
  std::vector<float> Y;
};

SiluResult runSilu(const std::string &Bytes, bool MemOpt) {
  rt::Model M = loadModelBytes(Bytes, MemOpt);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>({2, 3, 50});
  float *P = static_cast<float *>(X.data());
  for (size_t I = 0; I < 300; ++I)
    P[I] = 6.0f * std::sin(static_cast<float>(I) * 0.37f);
  std::vector<rt::Tensor> In{X};
  R.infer(rt::make_array(In));
  R.wait();
  rt::Tensor Y = R.getOutput("y");
  const float *Q = static_cast<const float *>(Y.data());
  return {opTypeList(M), std::vector<float>(Q, Q + Y.getShape().getElementCount().value())};
}

} // namespace

TEST(FuseSilu, SigmoidTimesItsInputBecomesSwish) {
  rt::AutoInit Init;
  optimium::runtime::detail::ScopedIgnorePassGates Gates;
  for (bool SigmoidFirst : {false, true}) {
    const std::string Bytes = siluModel(SigmoidFirst, false);
    const SiluResult Fused = runSilu(Bytes, true), Plain = runSilu(Bytes, false);
    EXPECT_EQ(Fused.Ops, (std::vector<std::string>{"Add", "Swish"}));
    EXPECT_EQ(Plain.Ops, (std::vector<std::string>{"Add", "Sigmoid", "Mul"}));
    ASSERT_EQ(Fused.Y.size(), Plain.Y.size());
    for (size_t I = 0; I < Fused.Y.size(); ++I)
      EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 2e-6f * std::max(1.0f, std::fabs(Plain.Y[I]))) << I;
  }
}

TEST(FuseSilu, SigmoidWithAnotherReaderStays) {
  rt::AutoInit Init;
  optimium::runtime::detail::ScopedIgnorePassGates Gates;
  EXPECT_EQ(runSilu(siluModel(false, true), true).Ops, (std::vector<std::string>{"Add", "Sigmoid", "Mul"}));
}

// With the gates on: the fusion fires where Swish has a fast kernel (AVX2 + FMA or AVX-512, e.g. an
// AMD Zen 3), and not where it has none (unit_tests_without_avx2 runs this with avx2 hidden).
TEST(FuseSilu, FiresWhereTheCpuHasAvx2Fma) {
  rt::AutoInit Init;
  const SiluResult R = runSilu(siluModel(false, false), true);
  if (optimium::runtime::detail::cpuFeatures().avx2Fma())
    EXPECT_EQ(R.Ops, (std::vector<std::string>{"Add", "Swish"}));
  else
    EXPECT_EQ(R.Ops, (std::vector<std::string>{"Add", "Sigmoid", "Mul"}));
}
