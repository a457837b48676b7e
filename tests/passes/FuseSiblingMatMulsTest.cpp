// Sibling MatMul merging (passes/FuseMatMulBias, fuseSiblingMatMuls): MatMuls that read the same
// activations with constant weights of the same depth (attention's Q, K, V projections) run as one
// GEMM writing each projection to its own output, with the unfused graph's values; widths that
// are not tile multiples, one-row inputs, and fused Gelus keep working; mixed biases and other
// inputs are not merged.
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

std::vector<float> randomValues(size_t N, std::mt19937 &G) {
  std::uniform_real_distribution<float> U(-1.0f, 1.0f);
  std::vector<float> V(N);
  for (float &X : V)
    X = U(G);
  return V;
}

struct Proj {
  int64_t Width;
  bool Bias;
  bool OtherInput = false; ///< reads y instead of x
};

struct Run {
  std::vector<std::string> Types;
  std::vector<std::vector<float>> Outs;
};

Run runModel(const std::string &Bytes, bool MemOpt, const std::vector<int64_t> &XDims, int Threads, size_t NOut) {
  rt::Model M = loadModelBytes(Bytes, MemOpt, Threads);
  Run R;
  R.Types = opTypeList(M);
  rt::InferRequest Req = M.createRequest();
  std::mt19937 G(99);
  std::vector<rt::Tensor> In;
  for (rt::StringRef Name : M.getInputNames()) {
    const rt::TensorInfo &Info = M.getTensorInfo(Name);
    rt::Tensor T = rt::tensor(Info.Type, Info.Shape);
    const std::vector<float> V = randomValues(Info.Shape.getElementCount().value(), G);
    std::copy(V.begin(), V.end(), static_cast<float *>(T.data()));
    In.push_back(T);
  }
  Req.infer(rt::make_array(In));
  Req.wait();
  for (size_t I = 0; I < NOut; ++I) {
    rt::Tensor Y = Req.getOutput("p" + std::to_string(I));
    const float *P = static_cast<const float *>(Y.data());
    R.Outs.emplace_back(P, P + Y.getShape().getElementCount().value());
  }
  (void)XDims;
  return R;
}

/// x (and y) [XDims..., K] -> one MatMul (+ bias Add) per projection; with GeluLast the last
/// projection goes through an erf-GELU (fused into its MatMul, which then stays alone).
std::vector<std::string> check(const std::vector<int64_t> &XDims, const std::vector<Proj> &Ps, uint32_t Seed,
                               int Threads, bool GeluLast = false) {
  std::mt19937 G(Seed);
  OnnxBuilder B(20);
  const auto F = onnx::TensorProto_DataType_FLOAT;
  const int64_t K = XDims.back();
  B.input("x", F, XDims);
  bool NeedY = false;
  for (const Proj &P : Ps)
    NeedY |= P.OtherInput;
  if (NeedY)
    B.input("y", F, XDims);
  for (size_t I = 0; I < Ps.size(); ++I) {
    const std::string S = std::to_string(I);
    B.initializer("w" + S, {K, Ps[I].Width}, randomValues(static_cast<size_t>(K * Ps[I].Width), G));
    const std::string Out = "p" + S, Pre = GeluLast && I + 1 == Ps.size() ? "g" + S : Out;
    std::string Cur = Ps[I].Bias ? "m" + S : Pre;
    B.node("MatMul", {Ps[I].OtherInput ? "y" : "x", "w" + S}, {Cur});
    if (Ps[I].Bias) {
      B.initializer("b" + S, {Ps[I].Width}, randomValues(static_cast<size_t>(Ps[I].Width), G));
      B.node("Add", {"b" + S, Cur}, {Pre});
    }
    if (Pre != Out)
      B.node("Gelu", {Pre}, {Out});
    B.output(Out, F);
  }
  const std::string Bytes = B.bytes();
  const Run Fused = runModel(Bytes, true, XDims, Threads, Ps.size()), Plain = runModel(Bytes, false, XDims, Threads, Ps.size());
  for (size_t O = 0; O < Ps.size(); ++O) {
    EXPECT_EQ(Fused.Outs[O].size(), Plain.Outs[O].size()) << O;
    for (size_t I = 0; I < std::min(Fused.Outs[O].size(), Plain.Outs[O].size()); ++I)
      EXPECT_NEAR(Fused.Outs[O][I], Plain.Outs[O][I], 1e-5 * (1.0 + std::fabs(Plain.Outs[O][I]))) << O << " " << I;
  }
  return Fused.Types;
}

} // namespace

TEST(FuseSiblingMatMuls, QkvProjectionsBecomeOneGemm) {
  rt::AutoInit Init;
  for (int Threads : {1, 2, 3}) {
    const auto Types = check({2, 9, 64}, {{64, true}, {64, true}, {96, true}}, 1, Threads);
    EXPECT_EQ(Types.size(), 1u) << Threads;
  }
  // Without biases; widths that are not tile multiples (the product goes through one buffer).
  EXPECT_EQ(check({3, 5, 20}, {{13, false}, {1, false}, {23, false}}, 2, 2).size(), 1u);
  // One row: the GEMV path.
  EXPECT_EQ(check({1, 1, 40}, {{32, true}, {64, true}}, 3, 2).size(), 1u);
}

TEST(FuseSiblingMatMuls, OnlyLikeSiblingsMerge) {
  rt::AutoInit Init;
  // A bias on two of three: those two merge, the third stays (with its Add folded).
  EXPECT_EQ(check({2, 4, 16}, {{16, true}, {16, false}, {8, true}}, 4, 2).size(), 2u);
  // Another input: not a sibling.
  EXPECT_EQ(check({2, 4, 16}, {{16, true}, {16, true, true}}, 5, 2).size(), 2u);
  // A MatMul with a fused Gelu stays alone; the other two merge.
  EXPECT_EQ(check({2, 4, 16}, {{16, true}, {32, true}, {16, true}}, 6, 2, true).size(), 2u);
}
