// The pass table (passes/Pipeline): its ordering rules, the CPU gates, the intermediates switch,
// and "heavy" as an op-schema property. Runs on any host: the gates are checked with made-up
// feature sets, not the host's.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "import/onnx/OnnxImporter.h"
#include "ir/FusedOps.h"
#include "ir/InferShapes.h"
#include "ir/OpSchema.h"
#include "passes/Pipeline.h"

namespace rt = optimium::runtime;
namespace dt = optimium::runtime::detail;
using namespace optimium_test;

namespace {

std::map<std::string, size_t> positions() {
  std::map<std::string, size_t> Pos;
  const auto &T = dt::passPipeline();
  for (size_t I = 0; I < T.size(); ++I)
    Pos[T[I].Name] = I;
  return Pos;
}

std::set<std::string> ranNames(const std::vector<dt::PassRun> &Runs) {
  std::set<std::string> S;
  for (const dt::PassRun &R : Runs)
    S.insert(R.Name);
  return S;
}

dt::CpuFeatures avx512Vnni() {
  dt::CpuFeatures F;
  F.AVX = F.AVX2 = F.FMA = F.AVX512F = F.AVX512BW = F.AVX512DQ = F.AVX512VL = F.AVX512VNNI = true;
  return F;
}

dt::CpuFeatures avx512Bf16() {
  dt::CpuFeatures F = avx512Vnni();
  F.AVX512BF16 = true;
  return F;
}

/// x -> Conv(3x3) -> Relu -> MaxPool(2x2, stride 2) -> y: fusable by FuseConvActivation (always)
/// and FuseConvMaxPool (AVX-512 gate). Holds the bytes its constants may point into.
struct Imported {
  std::string Bytes;
  dt::ImportedModel M;
  dt::Graph &graph() { return *M.G; }
};

std::unique_ptr<Imported> convReluPool() {
  OnnxBuilder B(13);
  const int F32 = onnx::TensorProto_DataType_FLOAT;
  B.input("x", F32, {1, 2, 8, 8});
  B.initializer("w", {4, 2, 3, 3}, std::vector<float>(72, 0.1f));
  OnnxBuilder::attrInts(B.node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  B.node("Relu", {"c"}, {"r"});
  auto *Pool = B.node("MaxPool", {"r"}, {"y"});
  OnnxBuilder::attrInts(Pool, "kernel_shape", {2, 2});
  OnnxBuilder::attrInts(Pool, "strides", {2, 2});
  B.output("y", F32, {1, 4, 4, 4});
  std::unique_ptr<Imported> I(new Imported);
  I->Bytes = B.bytes();
  auto R = dt::importOnnxBuffer(reinterpret_cast<const uint8_t *>(I->Bytes.data()), I->Bytes.size(), "", "pipeline");
  EXPECT_TRUE(R.isOk()) << R.status().message();
  I->M = std::move(R.value());
  EXPECT_TRUE(dt::inferGraphShapes(I->graph()).isOk());
  return I;
}

std::vector<std::string> opTypes(const dt::Graph &G) {
  std::vector<std::string> T;
  for (const dt::Node &N : G.Nodes)
    T.push_back(N.OpType);
  return T;
}

} // namespace

TEST(PassPipeline, OrderingRulesHold) {
  const auto Pos = positions();
  ASSERT_EQ(Pos.size(), dt::passPipeline().size()) << "pass names are unique";
  EXPECT_EQ(Pos.at("RemoveFoldedNodes"), 0u);
  EXPECT_LT(Pos.at("FuseTransposeScaleAdd"), Pos.at("FuseConvResidual"));
  EXPECT_LT(Pos.at("FuseLayerNormChannels"), Pos.at("FuseLayerNormChannelsLast"));
  EXPECT_LT(Pos.at("FuseConvResidual"), Pos.at("FuseConvActivation"));
  EXPECT_LT(Pos.at("FuseConvActivation"), Pos.at("FusePointwiseDepthwise"));
  EXPECT_LT(Pos.at("FusePointwiseDepthwise"), Pos.at("FuseDepthwisePointwise"));
  EXPECT_LT(Pos.at("FuseConvActivation"), Pos.at("FusePointwiseDepthwiseAvx2"));
  EXPECT_LT(Pos.at("FusePointwiseDepthwiseAvx2"), Pos.at("FuseDepthwisePointwise"));
  EXPECT_LT(Pos.at("FuseConvActivation"), Pos.at("FuseConvMaxPool"));
  EXPECT_LT(Pos.at("FuseConvActivation"), Pos.at("FuseSqueezeExcitation"));
  EXPECT_LT(Pos.at("FuseConvActivation"), Pos.at("FuseSilu"));
  EXPECT_LT(Pos.at("FuseQuantizedConv"), Pos.at("FoldConstantDequantize"));
  EXPECT_LT(Pos.at("UseBf16Weights"), Pos.at("FuseMatMulBias"));
  EXPECT_LT(Pos.at("FuseGelu"), Pos.at("FuseMatMulGelu"));
  EXPECT_LT(Pos.at("FuseMatMulBias"), Pos.at("FuseSiblingMatMuls"));
  EXPECT_EQ(Pos.at("FuseTransposeMatMul"), Pos.size() - 2) << "the last fusion";
  EXPECT_EQ(Pos.at("UseBf16Compute"), Pos.size() - 1) << "marks what the fusions left";
  for (const dt::PassInfo &P : dt::passPipeline()) {
    EXPECT_NE(P.Run, nullptr) << P.Name;
    EXPECT_GT(std::string(P.Order).size(), 0u) << P.Name << " says why it sits where it sits";
  }
}

TEST(PassPipeline, GatesFollowTheCpuFeatures) {
  const dt::CpuFeatures None, Full = avx512Vnni();
  dt::CpuFeatures NoVnni = Full;
  NoVnni.AVX512VNNI = false;
  EXPECT_TRUE(dt::passGateOpen(dt::PassGate::Always, None));
  EXPECT_FALSE(dt::passGateOpen(dt::PassGate::Avx512Fma, None));
  EXPECT_FALSE(dt::passGateOpen(dt::PassGate::Int8Exact, None));
  EXPECT_TRUE(dt::passGateOpen(dt::PassGate::Avx512Fma, NoVnni));
  EXPECT_TRUE(dt::passGateOpen(dt::PassGate::Int8Exact, Full));
  // The int8 fusions run on any CPU with an exact integer kernel: AVX-512 VNNI, or AVX2 (an AMD Zen 3
  // has AVX2, FMA and F16C only); AVX without AVX2 has none.
  EXPECT_TRUE(dt::passGateOpen(dt::PassGate::Int8Exact, NoVnni));
  dt::CpuFeatures Avx2Only;
  Avx2Only.AVX = Avx2Only.AVX2 = Avx2Only.FMA = Avx2Only.F16C = true;
  EXPECT_TRUE(dt::passGateOpen(dt::PassGate::Int8Exact, Avx2Only));
  EXPECT_FALSE(dt::passGateOpen(dt::PassGate::Avx512Fma, Avx2Only));
  dt::CpuFeatures AvxOnly = Avx2Only;
  AvxOnly.AVX2 = false;
  EXPECT_FALSE(dt::passGateOpen(dt::PassGate::Int8Exact, AvxOnly));
  // Avx2Fma: AVX2 and FMA, or more (SiLU, squeeze-excitation: AVX2 and AVX-512 kernels).
  EXPECT_TRUE(dt::passGateOpen(dt::PassGate::Avx2Fma, Avx2Only));
  EXPECT_TRUE(dt::passGateOpen(dt::PassGate::Avx2Fma, Full));
  EXPECT_FALSE(dt::passGateOpen(dt::PassGate::Avx2Fma, AvxOnly));
  EXPECT_FALSE(dt::passGateOpen(dt::PassGate::Avx2Fma, None));
  dt::CpuFeatures Avx2NoFma = Avx2Only;
  Avx2NoFma.FMA = false;
  EXPECT_FALSE(dt::passGateOpen(dt::PassGate::Avx2Fma, Avx2NoFma));
  // The AVX2 tier (AVX2 + FMA without AVX-512) and its complement: exactly one of the two is open.
  EXPECT_TRUE(dt::passGateOpen(dt::PassGate::Avx2Tier, Avx2Only));
  EXPECT_FALSE(dt::passGateOpen(dt::PassGate::Avx2Tier, Full));
  EXPECT_FALSE(dt::passGateOpen(dt::PassGate::Avx2Tier, Avx2NoFma));
  EXPECT_FALSE(dt::passGateOpen(dt::PassGate::Avx2Tier, None));
  for (const dt::CpuFeatures &F : {None, Full, NoVnni, Avx2Only, AvxOnly, Avx2NoFma})
    EXPECT_NE(dt::passGateOpen(dt::PassGate::Avx2Tier, F), dt::passGateOpen(dt::PassGate::NotAvx2Tier, F));
  EXPECT_FALSE(dt::passGateOpen(dt::PassGate::Avx512Bf16, Full));
  EXPECT_TRUE(dt::passGateOpen(dt::PassGate::Avx512Bf16, avx512Bf16()));
}

TEST(PassPipeline, RunsWhatTheGatesAndOptionsAllow) {
  rt::AutoInit Init;
  {
    // A CPU without AVX-512: the pool is not fused into the Conv, the Relu is.
    auto G = convReluPool();
    dt::PipelineOptions O;
    const auto Ran = ranNames(dt::runPassPipeline(G->graph(), O));
    EXPECT_EQ(Ran.count("FuseConvActivation"), 1u);
    EXPECT_EQ(Ran.count("FuseConvMaxPool"), 0u);
    EXPECT_EQ(Ran.count("FuseQuantizedConv"), 0u);
    EXPECT_EQ(opTypes(G->graph()), (std::vector<std::string>{"Conv", "MaxPool"}));
  }
  {
    // AVX2 + FMA only (AMD Zen 3): the SiLU and squeeze-excitation fusions run, the AVX-512 ones
    // do not; with AVX but no AVX2, neither.
    dt::CpuFeatures Avx2Only;
    Avx2Only.AVX = Avx2Only.AVX2 = Avx2Only.FMA = Avx2Only.F16C = true;
    auto G = convReluPool();
    dt::PipelineOptions O;
    O.Cpu = Avx2Only;
    const auto Ran = ranNames(dt::runPassPipeline(G->graph(), O));
    EXPECT_EQ(Ran.count("FuseSilu"), 1u);
    // The expand-pair fusion's AVX2 row in place of the general one.
    EXPECT_EQ(Ran.count("FusePointwiseDepthwiseAvx2"), 1u);
    EXPECT_EQ(Ran.count("FusePointwiseDepthwise"), 0u);
    EXPECT_EQ(Ran.count("FuseSqueezeExcitation"), 1u);
    EXPECT_EQ(Ran.count("FuseConvMaxPool"), 0u);
    dt::CpuFeatures AvxOnly = Avx2Only;
    AvxOnly.AVX2 = false;
    auto G2 = convReluPool();
    O.Cpu = AvxOnly;
    const auto Ran2 = ranNames(dt::runPassPipeline(G2->graph(), O));
    EXPECT_EQ(Ran2.count("FuseSilu"), 0u);
    EXPECT_EQ(Ran2.count("FuseSqueezeExcitation"), 0u);
  }
  {
    // AVX-512 + VNNI: every pass but the opt-in bf16 one and the AVX2 tier's row runs, and the
    // pool joins the Conv.
    auto G = convReluPool();
    dt::PipelineOptions O;
    O.Cpu = avx512Vnni();
    const auto Runs = dt::runPassPipeline(G->graph(), O);
    EXPECT_EQ(Runs.size(), dt::passPipeline().size() - 2);
    EXPECT_EQ(ranNames(Runs).count("UseBf16Compute"), 0u);
    EXPECT_EQ(ranNames(Runs).count("FusePointwiseDepthwiseAvx2"), 0u);
    EXPECT_EQ(ranNames(Runs).count("FusePointwiseDepthwise"), 1u);
    EXPECT_EQ(opTypes(G->graph()), (std::vector<std::string>{dt::kFusedConvMaxPoolOp}));
  }
  {
    // IgnoreGates: the same on a CPU without the features (with the bf16 option: every pass).
    auto G = convReluPool();
    dt::PipelineOptions O;
    O.IgnoreGates = true;
    O.Bf16Compute = true;
    EXPECT_EQ(dt::runPassPipeline(G->graph(), O).size(), dt::passPipeline().size());
    EXPECT_EQ(opTypes(G->graph()), (std::vector<std::string>{dt::kFusedConvMaxPoolOp}));
  }
  {
    // Every intermediate wanted: no fusion, only the non-fusing passes.
    auto G = convReluPool();
    dt::PipelineOptions O;
    O.KeepIntermediates = true;
    O.Cpu = avx512Vnni();
    for (const dt::PassRun &R : dt::runPassPipeline(G->graph(), O))
      EXPECT_EQ(std::string(R.Name), "RemoveFoldedNodes");
    EXPECT_EQ(opTypes(G->graph()), (std::vector<std::string>{"Conv", "Relu", "MaxPool"}));
  }
  {
    // The bf16 compute option with every intermediate kept: nothing fuses, the Conv is marked.
    auto G = convReluPool();
    dt::PipelineOptions O;
    O.KeepIntermediates = true;
    O.Bf16Compute = true;
    O.Cpu = avx512Bf16();
    EXPECT_EQ(ranNames(dt::runPassPipeline(G->graph(), O)), (std::set<std::string>{"RemoveFoldedNodes", "UseBf16Compute"}));
    EXPECT_TRUE(dt::hasComputeBf16(G->graph().Nodes[0]));
    EXPECT_FALSE(dt::hasComputeBf16(G->graph().Nodes[1])) << "Relu";
  }
  {
    // The option on a CPU without AVX512_BF16: nothing marked (the model runs float32).
    auto G = convReluPool();
    dt::PipelineOptions O;
    O.Bf16Compute = true;
    O.Cpu = avx512Vnni();
    EXPECT_EQ(ranNames(dt::runPassPipeline(G->graph(), O)).count("UseBf16Compute"), 0u);
  }
}

TEST(PassPipeline, HeavyIsAnOpSchemaProperty) {
  rt::AutoInit Init;
  for (const char *Op : {"Conv", "MatMul", "Gemm", "LSTM", "Loop", "Attention"}) {
    const dt::OpSchema *S = dt::findOpSchema("", Op);
    ASSERT_NE(S, nullptr) << Op;
    EXPECT_TRUE(S->Heavy) << Op;
  }
  // The fused ops the scheduler sees after the passes are heavy too.
  for (const char *Op : {dt::kFusedConvMaxPoolOp, dt::kFusedPointwiseDepthwiseOp, dt::kFusedDepthwisePointwiseOp}) {
    const dt::OpSchema *S = dt::findOpSchema(dt::kFusedConvMaxPoolDomain, Op);
    ASSERT_NE(S, nullptr) << Op;
    EXPECT_TRUE(S->Heavy) << Op;
  }
  for (const char *Op : {"Relu", "Add", "Reshape", "Softmax"}) {
    const dt::OpSchema *S = dt::findOpSchema("", Op);
    ASSERT_NE(S, nullptr) << Op;
    EXPECT_FALSE(S->Heavy) << Op;
  }
}
