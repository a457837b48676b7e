// Residual Add + LayerNormalization fusion (passes/FuseSkipLayerNorm): LayerNormalization(x + skip)
// and LayerNormalization((x + skip) + bias) run as one com.microsoft SkipLayerNormalization with
// the outputs of the unfused graph (EnableMemoryOptimization off runs every node) over random
// shapes (odd hidden sizes, with and without beta), and nothing fuses where the math would differ.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

constexpr const char *SkipLn = "com.microsoft.SkipLayerNormalization";

struct Spec {
  std::vector<int64_t> Dims = {2, 5, 37};
  bool Bias = false;         ///< (x + skip) + bias, bias a constant [hidden]
  bool BiasFirst = false;    ///< Add(bias, x + skip)
  bool Beta = true;
  float Epsilon = 1e-5f;
  bool SetEpsilon = true;
  // Variants the pass must leave alone:
  std::vector<int64_t> SkipDims; ///< a broadcast skip
  int64_t Axis = -1;
  bool SumIsOutput = false;
  bool BiasIsInput = false; ///< the bias a graph input (not a constant)
  bool MeanOutput = false;
};

std::vector<float> randomValues(size_t N, std::mt19937 &G, float Lo, float Hi) {
  std::uniform_real_distribution<float> U(Lo, Hi);
  std::vector<float> V(N);
  for (float &X : V)
    X = U(G);
  return V;
}

std::string model(const Spec &P, std::mt19937 &G) {
  OnnxBuilder M(17);
  const auto F = onnx::TensorProto_DataType_FLOAT;
  const int64_t H = P.Dims.back();
  M.input("x", F, P.Dims);
  M.input("skip", F, P.SkipDims.empty() ? P.Dims : P.SkipDims);
  M.initializer("gamma", {H}, randomValues(static_cast<size_t>(H), G, 0.5f, 1.5f));
  M.initializer("beta", {H}, randomValues(static_cast<size_t>(H), G, -0.5f, 0.5f));
  M.node("Add", {"x", "skip"}, {"sum"});
  std::string Cur = "sum";
  if (P.Bias) {
    if (P.BiasIsInput)
      M.input("bias", F, {H});
    else
      M.initializer("bias", {H}, randomValues(static_cast<size_t>(H), G, -1.0f, 1.0f));
    M.node("Add", P.BiasFirst ? std::vector<std::string>{"bias", Cur} : std::vector<std::string>{Cur, "bias"}, {"sum2"});
    Cur = "sum2";
  }
  std::vector<std::string> Ins = {Cur, "gamma"};
  if (P.Beta)
    Ins.push_back("beta");
  std::vector<std::string> Outs = {"y"};
  if (P.MeanOutput)
    Outs.push_back("mean");
  auto *Ln = M.node("LayerNormalization", Ins, Outs);
  if (P.Axis != -1)
    OnnxBuilder::attrInt(Ln, "axis", P.Axis);
  if (P.SetEpsilon) {
    auto *A = Ln->add_attribute();
    A->set_name("epsilon");
    A->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    A->set_f(P.Epsilon);
  }
  M.output("y", F);
  if (P.SumIsOutput)
    M.output(Cur, F);
  if (P.MeanOutput)
    M.output("mean", F);
  return M.bytes();
}

struct Run {
  std::vector<std::string> Types;
  std::vector<float> Y;
};

Run runModel(const std::string &Bytes, bool MemOpt, std::mt19937 G, int Threads) {
  rt::Model M = loadModelBytes(Bytes, MemOpt, Threads);
  Run Out;
  Out.Types = opTypeList(M);
  rt::InferRequest R = M.createRequest();
  std::vector<rt::Tensor> Inputs;
  for (rt::StringRef Name : M.getInputNames()) {
    const rt::TensorInfo &Info = M.getTensorInfo(Name);
    rt::Tensor T = rt::tensor(Info.Type, Info.Shape);
    const std::vector<float> V = randomValues(Info.Shape.getElementCount().value(), G, -3.0f, 3.0f);
    std::copy(V.begin(), V.end(), static_cast<float *>(T.data()));
    Inputs.push_back(T);
  }
  R.infer(rt::make_array(Inputs));
  R.wait();
  rt::Tensor Y = R.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  Out.Y.assign(P, P + Y.getShape().getElementCount().value());
  return Out;
}

/// Runs P fused and unfused on the same inputs, compares, and returns the fused op types.
std::vector<std::string> check(const Spec &P, uint32_t Seed, int Threads = 2) {
  std::mt19937 G(Seed);
  const std::string Bytes = model(P, G);
  const Run Fused = runModel(Bytes, true, G, Threads), Plain = runModel(Bytes, false, G, Threads);
  EXPECT_EQ(std::count(Plain.Types.begin(), Plain.Types.end(), SkipLn), 0);
  EXPECT_EQ(Fused.Y.size(), Plain.Y.size());
  for (size_t I = 0; I < std::min(Fused.Y.size(), Plain.Y.size()); ++I)
    EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 2e-5 * (1.0 + std::fabs(Plain.Y[I]))) << I;
  return Fused.Types;
}

} // namespace

TEST(FuseSkipLayerNorm, ResidualAddAndBiasFold) {
  rt::AutoInit Init;
  for (bool Bias : {false, true})
    for (bool BiasFirst : {false, true}) {
      Spec P;
      P.Bias = Bias, P.BiasFirst = BiasFirst;
      const auto Types = check(P, 1);
      ASSERT_EQ(Types.size(), 1u) << Bias << BiasFirst;
      EXPECT_EQ(Types[0], SkipLn);
    }
}

TEST(FuseSkipLayerNorm, RandomShapes) {
  rt::AutoInit Init;
  std::mt19937 G(3);
  std::uniform_int_distribution<int> Rows(1, 40), Pick(0, 5);
  const int64_t Hidden[] = {1, 7, 16, 37, 64, 256, 300};
  for (int Case = 0; Case < 21; ++Case) {
    Spec P;
    const int64_t H = Hidden[Case % 7];
    P.Dims = Case % 2 ? std::vector<int64_t>{Rows(G), H} : std::vector<int64_t>{1 + Case % 3, Rows(G), H};
    P.Bias = Pick(G) < 3;
    P.Beta = Pick(G) != 0;
    P.SetEpsilon = Pick(G) != 0;
    P.Epsilon = Case % 2 ? 1e-12f : 1e-3f;
    SCOPED_TRACE("case " + std::to_string(Case) + " hidden " + std::to_string(H));
    const auto Types = check(P, 50 + Case, 1 + Case % 3);
    ASSERT_EQ(Types.size(), 1u);
    EXPECT_EQ(Types[0], SkipLn);
  }
}

TEST(FuseSkipLayerNorm, OtherMathStaysUnfused) {
  rt::AutoInit Init;
  const auto unfused = [](const Spec &P, uint32_t Seed) {
    const auto Types = check(P, Seed);
    EXPECT_EQ(std::count(Types.begin(), Types.end(), SkipLn), 0);
    EXPECT_EQ(std::count(Types.begin(), Types.end(), "LayerNormalization"), 1);
  };
  Spec Broadcast;
  Broadcast.SkipDims = {5, 37}; // the Add broadcasts skip over the batch
  unfused(Broadcast, 11);
  Spec TwoAxes;
  TwoAxes.Axis = 1; // normalizes the last two dims
  unfused(TwoAxes, 12);
  Spec Read;
  Read.SumIsOutput = true;
  unfused(Read, 13);
  Spec BiasInput;
  BiasInput.Bias = true, BiasInput.BiasIsInput = true;
  unfused(BiasInput, 14);
  Spec Mean;
  Mean.MeanOutput = true;
  unfused(Mean, 15);
}
