// Conv + residual Add (+ Relu) fusion: a ResNet basic block runs as two Conv operations with the
// unfused graph's outputs (Winograd and GEMM convolutions, the residual computed before or after
// the Conv in node order, either Add operand order), and the Add stays where folding it would be
// wrong: broadcasting, a Conv output read elsewhere, Add(y, y), a clamp already fused before it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

constexpr int64_t C = 48, H = 13, W = 11; // 3x3 48->48 at 13x11: Winograd F(2x2)

enum class Variant {
  Block,            ///< x -> conv1 -> relu -> conv2 -> Add(c2, x) -> Relu
  SwappedOperands,  ///< ... Add(x, c2) -> Relu
  ResidualAfter,    ///< the residual is a 1x1 Conv of x listed after conv2 (ResNet downsample)
  NoRelu,           ///< 1x1 conv2 -> Add (MobileNetV2 projection): GEMM kernel + residual pass
  Broadcast,        ///< Add(c2, per-channel [C, 1, 1] constant): not fused
  SharedOutput,     ///< c2 is also a graph output: not fused
  SelfAdd,          ///< Add(c2, c2): not fused
  ReluBeforeAdd,    ///< conv2 -> Relu -> Add(., x): the Relu fuses, the Add does not
};

std::string blockModel(Variant V) {
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, C, H, W});
  B.initializer("w1", {C, C, 3, 3}, wave(C * C * 9, 0.15f, 0.1f));
  B.initializer("b1", {C}, wave(C, 0.1f, 0.7f));
  const bool Pointwise = V == Variant::NoRelu;
  B.initializer("w2", {C, C, Pointwise ? 1 : 3, Pointwise ? 1 : 3}, wave(C * C * (Pointwise ? 1 : 9), 0.12f, 0.4f));
  B.initializer("b2", {C}, wave(C, 0.1f, 1.3f));
  OnnxBuilder::attrInts(B.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  B.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto *Conv2 = B.node("Conv", {"r1", "w2", "b2"}, {"c2"}, "conv2");
  if (!Pointwise)
    OnnxBuilder::attrInts(Conv2, "pads", {1, 1, 1, 1});
  std::string Skip = "x";
  if (V == Variant::ResidualAfter) {
    B.initializer("wd", {C, C, 1, 1}, wave(C * C, 0.3f, 2.0f));
    B.node("Conv", {"x", "wd"}, {"skip"}, "downsample");
    Skip = "skip";
  }
  std::string Sum = "c2";
  if (V == Variant::ReluBeforeAdd) {
    B.node("Relu", {"c2"}, {"r2"}, "relu2");
    Sum = "r2";
  }
  if (V == Variant::Broadcast) {
    B.initializer("shift", {C, 1, 1}, wave(C, 0.5f, 0.3f));
    Skip = "shift";
  }
  if (V == Variant::SelfAdd)
    Skip = "c2";
  if (V == Variant::SwappedOperands)
    B.node("Add", {Skip, Sum}, {"a"}, "add");
  else
    B.node("Add", {Sum, Skip}, {"a"}, "add");
  if (V == Variant::NoRelu) {
    B.node("Identity", {"a"}, {"y"}, "out");
  } else {
    B.node("Relu", {"a"}, {"y"}, "relu_out");
  }
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (V == Variant::SharedOutput)
    B.output("c2", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

struct RunResult {
  size_t Ops;
  std::vector<float> Y;
};

RunResult run(const std::string &Bytes, bool MemOpt, int Threads) {
  rt::Model M = loadModelBytes(Bytes, MemOpt, Threads);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>({1, C, H, W});
  const std::vector<float> XV = wave(static_cast<size_t>(C * H * W), 1.0f, 0.0f);
  std::copy(XV.begin(), XV.end(), static_cast<float *>(X.data()));
  std::vector<rt::Tensor> In{X};
  R.infer(rt::make_array(In));
  R.wait();
  rt::Tensor Y = R.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  return {M.getOperations().size(), std::vector<float>(P, P + Y.getShape().getElementCount().value())};
}

/// Ops after fusion, with the outputs checked against the unfused graph (every intermediate kept).
size_t fusedOps(Variant V, int Threads = 1) {
  const std::string Bytes = blockModel(V);
  const RunResult Fused = run(Bytes, true, Threads), Plain = run(Bytes, false, Threads);
  EXPECT_EQ(Fused.Y.size(), Plain.Y.size());
  float MaxAbs = 0;
  for (size_t I = 0; I < Fused.Y.size() && I < Plain.Y.size(); ++I) {
    EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 1e-4f * std::max(1.0f, std::fabs(Plain.Y[I]))) << I;
    MaxAbs = std::max(MaxAbs, std::fabs(Fused.Y[I]));
  }
  EXPECT_GT(MaxAbs, 0.0f);
  return Fused.Ops;
}

} // namespace

TEST(FuseConvResidual, BasicBlockRunsAsTwoConvs) {
  rt::AutoInit Init;
  EXPECT_EQ(fusedOps(Variant::Block), 2u); // conv1 (+relu1), conv2 (+add +relu_out)
  EXPECT_EQ(fusedOps(Variant::Block, 2), 2u);
  EXPECT_EQ(fusedOps(Variant::SwappedOperands), 2u);
}

TEST(FuseConvResidual, ResidualComputedAfterTheConvInNodeOrder) {
  rt::AutoInit Init;
  EXPECT_EQ(fusedOps(Variant::ResidualAfter), 3u); // conv1, downsample, conv2 (+add +relu_out)
  EXPECT_EQ(fusedOps(Variant::ResidualAfter, 2), 3u);
}

TEST(FuseConvResidual, GemmConvWithoutActivation) {
  rt::AutoInit Init;
  EXPECT_EQ(fusedOps(Variant::NoRelu), 3u); // conv1, conv2 (+add), Identity
}

TEST(FuseConvResidual, LeftAloneWhereNotValid) {
  rt::AutoInit Init;
  EXPECT_EQ(fusedOps(Variant::Broadcast), 4u);     // conv1, conv2, add, relu_out
  EXPECT_EQ(fusedOps(Variant::SharedOutput), 4u);  // c2 stays readable
  EXPECT_EQ(fusedOps(Variant::SelfAdd), 4u);       // Add(c2, c2)
  EXPECT_EQ(fusedOps(Variant::ReluBeforeAdd), 4u); // conv1, conv2 (+relu2), add, relu_out
}

namespace {

/// x [1, 16, h, w] (h, w symbolic) -> Conv 3x3 pad 1 (20 channels, bias) -> Add(r) -> Relu -> y.
std::string dynamicPlaneModel() {
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, C, 0, 0}, {"", "", "h", "w"});
  B.input("r", onnx::TensorProto_DataType_FLOAT, {1, 20, 0, 0}, {"", "", "h", "w"});
  B.initializer("w", {20, C, 3, 3}, wave(20 * C * 9, 0.15f, 0.1f));
  B.initializer("b", {20}, wave(20, 0.1f, 0.7f));
  OnnxBuilder::attrInts(B.node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  B.node("Add", {"c", "r"}, {"a"}, "add");
  B.node("Relu", {"a"}, {"y"}, "relu");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

} // namespace

// Spatial dims unknown at load (PaddleOCR's detector): the Winograd kernel is created for F(4x4)
// and runs it where tileFor picks F(4x4) (30x26, 24x24), and its im2col fallback elsewhere (9x11);
// against a float64 convolution + residual + relu.
TEST(FuseConvResidual, SymbolicPlaneWinogradAndFallback) {
  rt::AutoInit Init;
  const std::string Bytes = dynamicPlaneModel();
  rt::Model M = loadModelBytes(Bytes, true, 2);
  // conv, add, relu: the residual pass wants static shapes (symbolic ones are not compared).
  EXPECT_EQ(M.getOperations().size(), 3u);
  const std::vector<float> Wv = wave(20 * C * 9, 0.15f, 0.1f), Bv = wave(20, 0.1f, 0.7f);
  for (const auto &HW : std::vector<std::pair<int64_t, int64_t>>{{30, 26}, {9, 11}, {24, 24}}) {
    const int64_t Hh = HW.first, Ww = HW.second;
    rt::InferRequest R = M.createRequest();
    rt::TypedTensor<float> X = rt::tensor<float>({1, C, Hh, Ww}), Res = rt::tensor<float>({1, 20, Hh, Ww});
    const std::vector<float> XV = wave(static_cast<size_t>(C * Hh * Ww), 1.0f, 0.0f);
    const std::vector<float> RV = wave(static_cast<size_t>(20 * Hh * Ww), 0.5f, 0.9f);
    std::copy(XV.begin(), XV.end(), static_cast<float *>(X.data()));
    std::copy(RV.begin(), RV.end(), static_cast<float *>(Res.data()));
    std::vector<rt::Tensor> In{X, Res};
    R.infer(rt::make_array(In));
    R.wait();
    rt::Tensor Y = R.getOutput("y");
    const float *P = static_cast<const float *>(Y.data());
    double MaxErr = 0;
    for (int64_t K = 0; K < 20; ++K)
      for (int64_t Oh = 0; Oh < Hh; ++Oh)
        for (int64_t Ow = 0; Ow < Ww; ++Ow) {
          double Acc = Bv[static_cast<size_t>(K)];
          for (int64_t Ci = 0; Ci < C; ++Ci)
            for (int64_t Kh = 0; Kh < 3; ++Kh)
              for (int64_t Kw = 0; Kw < 3; ++Kw) {
                const int64_t Ih = Oh + Kh - 1, Iw = Ow + Kw - 1;
                if (Ih >= 0 && Ih < Hh && Iw >= 0 && Iw < Ww)
                  Acc += static_cast<double>(XV[static_cast<size_t>((Ci * Hh + Ih) * Ww + Iw)]) *
                         Wv[static_cast<size_t>(((K * C + Ci) * 3 + Kh) * 3 + Kw)];
              }
          const size_t I = static_cast<size_t>((K * Hh + Oh) * Ww + Ow);
          Acc = std::max(0.0, Acc + RV[I]);
          MaxErr = std::max(MaxErr, std::fabs(Acc - P[I]) / std::max(1.0, std::fabs(Acc)));
        }
    EXPECT_LT(MaxErr, 1e-4) << Hh << "x" << Ww;
  }
}
