// 1x1 Conv -> depthwise Conv fusion: the pair becomes one com.optimium.FusedPointwiseDepthwise
// with the outputs of the unfused graph, and is left alone wherever the rewrite would not be
// equivalent (a strided or padded 1x1 Conv, a second reader of the expanded tensor, an expanded
// tensor that is a graph output, a grouped Conv that is not depthwise, a runtime weight). Likewise
// depthwise Conv -> 1x1 Conv (FusedDepthwisePointwise).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "passes/Pipeline.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

enum class Variant {
  Plain,            ///< fusable: 1x1 -> Clip(0, 6) -> depthwise (stride 2) -> Relu
  ExpandStrided,    ///< the 1x1 Conv has stride 2
  ExpandPadded,     ///< the 1x1 Conv has pads
  SharedExpanded,   ///< the expanded tensor also feeds an Add
  ExpandedIsOutput, ///< the expanded tensor (no Clip) is a graph output
  NotDepthwise,     ///< the second Conv has group 2 (not one channel per group)
  RuntimeWeight,    ///< the depthwise weight is a graph input
  OneInputReader,   ///< the expanded tensor's only reader is a one-input node (Exp), no depthwise
};

constexpr int64_t K = 5, M = 14, H = 11, W = 9;

std::string model(Variant V) {
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, K, H, W});
  B.initializer("w1", {M, K, 1, 1}, wave(M * K, 0.6f));
  B.initializer("b1", {M}, wave(M, 0.3f, 1.0f));
  const int64_t Group = V == Variant::NotDepthwise ? 2 : M;
  if (V == Variant::RuntimeWeight)
    B.input("w2", onnx::TensorProto_DataType_FLOAT, {M, M / Group, 3, 3});
  else
    B.initializer("w2", {M, M / Group, 3, 3}, wave(M * (M / Group) * 9, 0.5f, 2.0f));
  B.initializer("b2", {M}, wave(M, 0.2f, 3.0f));
  B.initializer("lo", {}, {0.0f});
  B.initializer("hi", {}, {6.0f});
  onnx::NodeProto *C1 = B.node("Conv", {"x", "w1", "b1"}, {"e"}, "expand");
  if (V == Variant::ExpandStrided)
    OnnxBuilder::attrInts(C1, "strides", {2, 2});
  if (V == Variant::ExpandPadded)
    OnnxBuilder::attrInts(C1, "pads", {1, 0, 1, 0});
  // The expanded tensor as a graph output has no Clip after it (a Clip would keep it apart anyway).
  const bool ClipExpanded = V != Variant::ExpandedIsOutput;
  if (ClipExpanded)
    B.node("Clip", {"e", "lo", "hi"}, {"e6"}, "clip");
  if (V == Variant::OneInputReader) { // the pass must look at the reader's input count first
    B.node("Exp", {"e6"}, {"y"}, "exp");
    B.output("y", onnx::TensorProto_DataType_FLOAT);
    return B.bytes();
  }
  onnx::NodeProto *C2 = B.node("Conv", {ClipExpanded ? "e6" : "e", "w2", "b2"}, {"d"}, "depthwise");
  OnnxBuilder::attrInt(C2, "group", Group);
  OnnxBuilder::attrInts(C2, "pads", {1, 1, 1, 1});
  OnnxBuilder::attrInts(C2, "strides", {2, 2});
  B.node("Relu", {"d"}, {"y"}, "relu");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (V == Variant::SharedExpanded) {
    B.node("Add", {"e6", "e6"}, {"y2"}, "add");
    B.output("y2", onnx::TensorProto_DataType_FLOAT);
  }
  if (V == Variant::ExpandedIsOutput)
    B.output("e", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

struct RunResult {
  size_t Ops = 0, FusedOps = 0;
  std::vector<float> Y;
};

RunResult run(Variant V, bool MemOpt) {
  const std::string Bytes = model(V);
  rt::Model Mdl = loadModelBytes(Bytes, MemOpt);
  RunResult R;
  for (const rt::OpInfo &Op : Mdl.getOperations()) {
    ++R.Ops;
    R.FusedOps += Op.Type == "com.optimium.FusedPointwiseDepthwise";
  }
  rt::InferRequest Req = Mdl.createRequest();
  std::vector<rt::Tensor> In;
  rt::TypedTensor<float> X = rt::tensor<float>({1, K, H, W});
  const std::vector<float> XV = wave(static_cast<size_t>(K * H * W), 4.0f);
  std::copy(XV.begin(), XV.end(), static_cast<float *>(X.data()));
  In.push_back(X);
  if (V == Variant::RuntimeWeight) {
    rt::TypedTensor<float> W2 = rt::tensor<float>({M, 1, 3, 3});
    const std::vector<float> WV = wave(static_cast<size_t>(M * 9), 0.5f, 2.0f);
    std::copy(WV.begin(), WV.end(), static_cast<float *>(W2.data()));
    In.push_back(W2);
  }
  Req.infer(rt::make_array(In));
  Req.wait();
  rt::Tensor Y = Req.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  R.Y.assign(P, P + Y.getShape().getElementCount().value());
  return R;
}

} // namespace

TEST(FusePointwiseDepthwise, PairBecomesOneNodeWithTheSameOutputs) {
  rt::AutoInit Init;
  const RunResult Fused = run(Variant::Plain, true), Plain = run(Variant::Plain, false);
  EXPECT_EQ(Fused.FusedOps, 1u);
  EXPECT_EQ(Fused.Ops, 1u); // the Clip into the 1x1 Conv, the Relu into the depthwise one, then the pair
  EXPECT_EQ(Plain.FusedOps, 0u);
  EXPECT_EQ(Plain.Ops, 4u);
  ASSERT_EQ(Fused.Y.size(), Plain.Y.size());
  size_t Zeros = 0;
  for (size_t I = 0; I < Fused.Y.size(); ++I) {
    EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 1e-4f * std::max(1.0f, std::fabs(Plain.Y[I]))) << I;
    Zeros += Plain.Y[I] == 0.0f;
  }
  EXPECT_GT(Zeros, 0u); // the Relu is exercised
  EXPECT_LT(Zeros, Plain.Y.size());
}

TEST(FusePointwiseDepthwise, LeavesInvalidPairsAlone) {
  rt::AutoInit Init;
  for (Variant V : {Variant::ExpandStrided, Variant::ExpandPadded, Variant::SharedExpanded, Variant::ExpandedIsOutput,
                    Variant::NotDepthwise, Variant::RuntimeWeight, Variant::OneInputReader}) {
    SCOPED_TRACE(static_cast<int>(V));
    const RunResult Fused = run(V, true), Plain = run(V, false);
    EXPECT_EQ(Fused.FusedOps, 0u);
    ASSERT_EQ(Fused.Y.size(), Plain.Y.size());
    for (size_t I = 0; I < Fused.Y.size(); ++I)
      EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 1e-4f * std::max(1.0f, std::fabs(Plain.Y[I]))) << I;
  }
}

// --- depthwise Conv -> 1x1 Conv (FusedDepthwisePointwise) ------------------------------------------

namespace {

enum class Separable {
  Plain,           ///< fusable: depthwise 3x3 (pads 1) -> Clip(0, 6) -> 1x1 -> y
  DepthwiseStride, ///< the depthwise Conv has stride 2 (its output plane is not its input plane)
  DepthwisePads0,  ///< no pads: a smaller output plane
  SharedOutput,    ///< the depthwise output also feeds an Add
  PointwiseStride, ///< the 1x1 Conv has stride 2
  WithExpand,      ///< 1x1 -> depthwise -> 1x1: the first pair fuses, the depthwise Conv is taken
};

constexpr int64_t SC = 6, SM = 9, SH = 10, SW = 13;

std::string separableModel(Separable V) {
  OnnxBuilder B(13);
  const int64_t In = V == Separable::WithExpand ? 4 : SC;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, In, SH, SW});
  B.initializer("wd", {SC, 1, 3, 3}, wave(SC * 9, 0.5f, 2.0f));
  B.initializer("bd", {SC}, wave(SC, 0.2f, 3.0f));
  B.initializer("wp", {SM, SC, 1, 1}, wave(SM * SC, 0.6f));
  B.initializer("bp", {SM}, wave(SM, 0.3f, 1.0f));
  B.initializer("lo", {}, {0.0f});
  B.initializer("hi", {}, {6.0f});
  std::string X = "x";
  if (V == Separable::WithExpand) {
    B.initializer("we", {SC, In, 1, 1}, wave(SC * In, 0.7f, 0.5f));
    B.node("Conv", {"x", "we"}, {"e"}, "expand");
    X = "e";
  }
  onnx::NodeProto *D = B.node("Conv", {X, "wd", "bd"}, {"d"}, "depthwise");
  OnnxBuilder::attrInt(D, "group", SC);
  if (V != Separable::DepthwisePads0)
    OnnxBuilder::attrInts(D, "pads", {1, 1, 1, 1});
  if (V == Separable::DepthwiseStride)
    OnnxBuilder::attrInts(D, "strides", {2, 2});
  B.node("Clip", {"d", "lo", "hi"}, {"d6"}, "clip");
  onnx::NodeProto *P = B.node("Conv", {"d6", "wp", "bp"}, {"y"}, "project");
  if (V == Separable::PointwiseStride)
    OnnxBuilder::attrInts(P, "strides", {2, 2});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (V == Separable::SharedOutput) {
    B.node("Add", {"d6", "d6"}, {"y2"}, "add");
    B.output("y2", onnx::TensorProto_DataType_FLOAT);
  }
  return B.bytes();
}

struct SeparableResult {
  size_t Ops = 0, Separable = 0, PointwiseDepthwise = 0;
  std::vector<float> Y;
};

SeparableResult runSeparable(Separable V, bool MemOpt) {
  const std::string Bytes = separableModel(V);
  rt::Model Mdl = loadModelBytes(Bytes, MemOpt);
  SeparableResult R;
  for (const rt::OpInfo &Op : Mdl.getOperations()) {
    ++R.Ops;
    R.Separable += Op.Type == "com.optimium.FusedDepthwisePointwise";
    R.PointwiseDepthwise += Op.Type == "com.optimium.FusedPointwiseDepthwise";
  }
  rt::InferRequest Req = Mdl.createRequest();
  const int64_t In = V == Separable::WithExpand ? 4 : SC;
  rt::TypedTensor<float> X = rt::tensor<float>({1, In, SH, SW});
  const std::vector<float> XV = wave(static_cast<size_t>(In * SH * SW), 4.0f);
  std::copy(XV.begin(), XV.end(), static_cast<float *>(X.data()));
  std::vector<rt::Tensor> Inputs{X};
  Req.infer(rt::make_array(Inputs));
  Req.wait();
  rt::Tensor Y = Req.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  R.Y.assign(P, P + Y.getShape().getElementCount().value());
  return R;
}

void expectSameOutputs(const SeparableResult &A, const SeparableResult &B) {
  ASSERT_EQ(A.Y.size(), B.Y.size());
  for (size_t I = 0; I < A.Y.size(); ++I)
    EXPECT_NEAR(A.Y[I], B.Y[I], 1e-4f * std::max(1.0f, std::fabs(B.Y[I]))) << I;
}

} // namespace

TEST(FuseDepthwisePointwise, SeparablePairBecomesOneNodeWithTheSameOutputs) {
  rt::AutoInit Init;
  // Gated to AVX-512 hosts in the loader; run on any host here (the fused op's reference runs
  // where its strip kernel does not).
  optimium::runtime::detail::ScopedIgnorePassGates Gates;
  const SeparableResult Fused = runSeparable(Separable::Plain, true), Plain = runSeparable(Separable::Plain, false);
  EXPECT_EQ(Plain.Separable, 0u);
  EXPECT_EQ(Plain.Ops, 3u);
  EXPECT_EQ(Fused.Separable, 1u);
  EXPECT_EQ(Fused.Ops, 1u);
  expectSameOutputs(Fused, Plain);
}

TEST(FuseDepthwisePointwise, LeavesInvalidPairsAlone) {
  rt::AutoInit Init;
  for (Separable V : {Separable::DepthwiseStride, Separable::DepthwisePads0, Separable::SharedOutput,
                      Separable::PointwiseStride}) {
    SCOPED_TRACE(static_cast<int>(V));
    const SeparableResult Fused = runSeparable(V, true), Plain = runSeparable(V, false);
    EXPECT_EQ(Fused.Separable, 0u);
    expectSameOutputs(Fused, Plain);
  }
  // A depthwise Conv already fused with its expanding 1x1 Conv stays there.
  const SeparableResult Fused = runSeparable(Separable::WithExpand, true),
                        Plain = runSeparable(Separable::WithExpand, false);
  EXPECT_EQ(Fused.PointwiseDepthwise, 1u);
  EXPECT_EQ(Fused.Separable, 0u);
  EXPECT_EQ(Fused.Ops, 2u);
  expectSameOutputs(Fused, Plain);
}
