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
#include "import/onnx/OnnxImporter.h"
#include "ir/InferShapes.h"
#include "passes/FusePointwiseDepthwise.h"
#include "passes/Pipeline.h"

namespace rt = optimium::runtime;
namespace dt = optimium::runtime::detail;
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

namespace {

/// MobileNetV2's expand pair on a Plane x Plane input of C channels: 1x1 (C -> 6C) + Clip(0, 6),
/// depthwise 3x3 (pads 1, Stride) + Clip(0, 6); imported with its shapes inferred.
struct ImportedPair {
  std::string Bytes;
  dt::ImportedModel M;
};

std::unique_ptr<ImportedPair> expandPair(int64_t C, int64_t Plane, int64_t Stride) {
  const int64_t E = 6 * C;
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, C, Plane, Plane});
  B.initializer("w1", {E, C, 1, 1}, wave(E * C, 0.4f));
  B.initializer("w2", {E, 1, 3, 3}, wave(E * 9, 0.5f, 2.0f));
  B.initializer("lo", {}, {0.0f});
  B.initializer("hi", {}, {6.0f});
  B.node("Conv", {"x", "w1"}, {"e"}, "expand");
  B.node("Clip", {"e", "lo", "hi"}, {"e6"}, "clip1");
  onnx::NodeProto *Dw = B.node("Conv", {"e6", "w2"}, {"d"}, "depthwise");
  OnnxBuilder::attrInt(Dw, "group", E);
  OnnxBuilder::attrInts(Dw, "pads", {1, 1, 1, 1});
  OnnxBuilder::attrInts(Dw, "strides", {Stride, Stride});
  B.node("Clip", {"d", "lo", "hi"}, {"y"}, "clip2");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  std::unique_ptr<ImportedPair> I(new ImportedPair);
  I->Bytes = B.bytes();
  auto R = dt::importOnnxBuffer(reinterpret_cast<const uint8_t *>(I->Bytes.data()), I->Bytes.size(), "", "pair");
  EXPECT_TRUE(R.isOk()) << R.status().message();
  I->M = std::move(R.value());
  EXPECT_TRUE(dt::inferGraphShapes(*I->M.G).isOk());
  return I;
}

/// How many FusedPointwiseDepthwise nodes the pipeline leaves on a CPU with features Cpu.
size_t fusedAfterPipeline(int64_t C, int64_t Plane, int64_t Stride, const dt::CpuFeatures &Cpu) {
  auto I = expandPair(C, Plane, Stride);
  dt::PipelineOptions O;
  O.Cpu = Cpu;
  dt::runPassPipeline(*I->M.G, O);
  size_t N = 0;
  for (const dt::Node &Nd : I->M.G->Nodes)
    N += Nd.OpType == dt::kFusedPointwiseDepthwiseOp;
  return N;
}

} // namespace

TEST(FusePointwiseDepthwise, Avx2TierLeavesSmallPlanesFromManyChannelsUnfused) {
  rt::AutoInit Init;
  dt::CpuFeatures Avx2, Avx512;
  Avx2.AVX = Avx2.AVX2 = Avx2.FMA = Avx2.F16C = true;
  Avx512 = Avx2;
  Avx512.AVX512F = Avx512.AVX512BW = Avx512.AVX512DQ = Avx512.AVX512VL = true;
  struct Case {
    int64_t C, Plane, Stride;
    size_t FusedOnAvx2;
  };
  // MobileNetV2's pairs (the rule's measurements, FusePointwiseDepthwise.h) and the edges of the
  // rule: 7x7 and 14x14 from 160 / 64 channels unfused; 14x14 -> 7x7 stride 2 unfused; 28x28 from
  // 32 unfused at stride 1, fused at stride 2; 56x56 fused; 31 input channels fused on a 7x7 plane.
  const Case Cases[] = {{160, 7, 1, 0},  {64, 14, 1, 0}, {96, 14, 2, 0}, {32, 28, 1, 0}, {32, 28, 2, 1},
                        {24, 56, 1, 1},  {32, 56, 1, 1}, {31, 7, 1, 1},  {32, 29, 1, 1}, {32, 15, 2, 1}};
  for (const Case &K : Cases) {
    SCOPED_TRACE(std::to_string(K.C) + " channels, " + std::to_string(K.Plane) + "x" + std::to_string(K.Plane) +
                 ", stride " + std::to_string(K.Stride));
    EXPECT_EQ(fusedAfterPipeline(K.C, K.Plane, K.Stride, Avx2), K.FusedOnAvx2);
    // Off the AVX2 tier every pair fuses (the AVX-512 kernels; a CPU without AVX2 + FMA).
    EXPECT_EQ(fusedAfterPipeline(K.C, K.Plane, K.Stride, Avx512), 1u);
    EXPECT_EQ(fusedAfterPipeline(K.C, K.Plane, K.Stride, dt::CpuFeatures()), 1u);
  }
}

TEST(FusePointwiseDepthwise, Avx2TierUnfusedPairKeepsTheOutputs) {
  // A 14x14 pair from 64 channels through the runtime: fused or not (by this CPU's tier), the same
  // outputs as with every fusion off.
  rt::AutoInit Init;
  auto I = expandPair(64, 14, 1);
  rt::Model Opt = loadModelBytes(I->Bytes, true), Plain = loadModelBytes(I->Bytes, false);
  size_t Fused = 0;
  for (const rt::OpInfo &Op : Opt.getOperations())
    Fused += Op.Type == "com.optimium.FusedPointwiseDepthwise";
  const dt::CpuFeatures &Cpu = dt::cpuFeatures();
  EXPECT_EQ(Fused, Cpu.avx2Fma() && !Cpu.avx512Fma() ? 0u : 1u);
  std::vector<float> Y[2];
  int Slot = 0;
  for (rt::Model *Mdl : {&Opt, &Plain}) {
    rt::InferRequest Req = Mdl->createRequest();
    rt::TypedTensor<float> X = rt::tensor<float>({1, 64, 14, 14});
    const std::vector<float> XV = wave(64 * 14 * 14, 2.0f);
    std::copy(XV.begin(), XV.end(), static_cast<float *>(X.data()));
    std::vector<rt::Tensor> In{X};
    Req.infer(rt::make_array(In));
    Req.wait();
    rt::Tensor T = Req.getOutput("y");
    const float *P = static_cast<const float *>(T.data());
    Y[Slot++].assign(P, P + T.getShape().getElementCount().value());
  }
  ASSERT_EQ(Y[0].size(), Y[1].size());
  for (size_t J = 0; J < Y[0].size(); ++J)
    EXPECT_NEAR(Y[0][J], Y[1][J], 1e-4f * std::max(1.0f, std::fabs(Y[1][J]))) << J;
}

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
