// In-place Concat under the Pipeline scheduler: the branches of SqueezeNet-like fire modules are
// written inside their Concat's output by producers that may run at once on different threads.
// The plan must still keep every block apart from every other block that may be live at the same
// time (checked here from the plan's offsets and the graph's data dependencies alone), and the
// results must equal those of a plan without sharing, bit for bit, over repeated runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "exec/ModelState.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

constexpr int64_t kPlane = 14; // 14 x 14 floats x 16 channels = 12544 bytes: a 64-byte multiple

/// Three fire modules on a 1 x 16 x 14 x 14 input: squeeze 1x1 -> Relu, then expand branches
/// 1x1 -> Relu and 3x3 -> Relu joined by a channel Concat. In the second module Neg -> Sigmoid
/// sit between the squeeze and the 1x1 branch, so that a value (the Neg's output) is read by a
/// node that precedes one producer of the Concat's block but not the other; the last Concat's output is
/// flattened (a view inside the block) and also read by a side branch.
std::string fireModel() {
  OnnxBuilder B(17);
  const auto F = onnx::TensorProto_DataType_FLOAT;
  B.input("x", F, {1, 16, kPlane, kPlane});
  std::string In = "x";
  int64_t InC = 16;
  for (int K = 0; K < 3; ++K) {
    const std::string P = "m" + std::to_string(K) + "_";
    B.initializer(P + "ws", {8, InC, 1, 1}, randomFloats(static_cast<size_t>(8 * InC), 10u + K, -0.5f, 0.5f));
    B.initializer(P + "w1", {16, 8, 1, 1}, randomFloats(16 * 8, 20u + K, -0.5f, 0.5f));
    B.initializer(P + "w3", {16, 8, 3, 3}, randomFloats(16 * 8 * 9, 30u + K, -0.5f, 0.5f));
    B.node("Conv", {In, P + "ws"}, {P + "sq"}, P + "squeeze");
    B.node("Relu", {P + "sq"}, {P + "s"}, P + "squeeze_relu");
    std::string S1 = P + "s";
    if (K == 1) {
      B.node("Neg", {P + "s"}, {P + "ns"}, P + "neg");
      B.node("Sigmoid", {P + "ns"}, {P + "gs"}, P + "gate");
      S1 = P + "gs";
    }
    B.node("Conv", {S1, P + "w1"}, {P + "x1"}, P + "expand1x1");
    B.node("Relu", {P + "x1"}, {P + "e1"}, P + "expand1x1_relu");
    auto *C3 = B.node("Conv", {P + "s", P + "w3"}, {P + "x3"}, P + "expand3x3");
    OnnxBuilder::attrInts(C3, "pads", {1, 1, 1, 1});
    B.node("Relu", {P + "x3"}, {P + "e3"}, P + "expand3x3_relu");
    OnnxBuilder::attrInt(B.node("Concat", {P + "e1", P + "e3"}, {P + "c"}, P + "concat"), "axis", 1);
    In = P + "c";
    InC = 32;
  }
  OnnxBuilder::attrInt(B.node("Flatten", {In}, {"flat"}, "flatten"), "axis", 1);
  B.node("Sigmoid", {In}, {"side"}, "side");
  B.node("GlobalAveragePool", {"side"}, {"pooled"}, "pool");
  B.output("flat", F);
  B.output("pooled", F);
  return B.bytes();
}

std::shared_ptr<rt::ModelImpl> loadImpl(const std::string &Bytes, rt::SchedulerType S, int Threads) {
  rt::ModelLoadOptions O;
  O.Scheduler = S;
  O.ThreadCount = Threads;
  auto M = rt::detail::loadModelFromBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), O);
  EXPECT_TRUE(M.isOk()) << (M.isOk() ? "" : M.status().message());
  return M.isOk() ? *M : nullptr;
}

int valueNamed(const rt::ModelImpl &M, const std::string &Name) {
  for (size_t V = 0; V < M.G->Values.size(); ++V)
    if (M.G->Values[V].Name == Name)
      return static_cast<int>(V);
  ADD_FAILURE() << "no value named '" << Name << "' after the passes";
  return -1;
}

size_t valueBytes(const rt::detail::ExecutionPlan &P, int V) {
  size_t N = rt::getElementSize(P.Types[static_cast<size_t>(V)]);
  for (int64_t D : P.Dims[static_cast<size_t>(V)])
    N *= static_cast<size_t>(D);
  return N;
}

bool isAncestor(const rt::ModelImpl &M, int Maybe, int Of) {
  return (M.Ancestors[static_cast<size_t>(Of)][static_cast<size_t>(Maybe) / 64] >> (Maybe % 64)) & 1u;
}

/// Checks a Pipeline plan from its offsets alone: values whose bytes overlap either alias by
/// construction (a view of its input, a Concat input inside the output: joined into one group
/// here, and then the inputs of one Concat must not overlap each other), or every node that
/// touches one group is an ancestor of every producer of the other group, in one direction (and
/// the first group holds no graph output).
void expectPipelinePlanIsSafe(const rt::ModelImpl &M, const rt::detail::ExecutionPlan &P) {
  const auto &G = *M.G;
  const size_t NV = G.Values.size();
  std::vector<int> Group(NV);
  std::iota(Group.begin(), Group.end(), 0);
  const auto find = [&Group](int V) {
    while (Group[static_cast<size_t>(V)] != V)
      V = Group[static_cast<size_t>(V)];
    return V;
  };
  const auto inside = [&](int In, int Out) {
    const int64_t A = P.Offsets[static_cast<size_t>(In)], B = P.Offsets[static_cast<size_t>(Out)];
    return A >= 0 && B >= 0 && A >= B && A + static_cast<int64_t>(valueBytes(P, In)) <= B + static_cast<int64_t>(valueBytes(P, Out));
  };
  for (const auto &N : G.Nodes) {
    if (N.Outputs.size() != 1 || N.Outputs[0] < 0 ||
        (N.OpType != "Concat" && N.OpType != "Reshape" && N.OpType != "Flatten"))
      continue;
    std::vector<int> Joined;
    for (int In : N.Inputs)
      if (In >= 0 && inside(In, N.Outputs[0]) &&
          (N.OpType != "Concat" || std::find(Joined.begin(), Joined.end(), In) == Joined.end())) {
        for (int Other : Joined) { // inputs one Concat writes side by side never overlap
          const int64_t A = P.Offsets[static_cast<size_t>(In)], B = P.Offsets[static_cast<size_t>(Other)];
          EXPECT_TRUE(A + static_cast<int64_t>(valueBytes(P, In)) <= B || B + static_cast<int64_t>(valueBytes(P, Other)) <= A)
              << G.Values[static_cast<size_t>(In)].Name << " overlaps " << G.Values[static_cast<size_t>(Other)].Name;
        }
        Joined.push_back(In);
        Group[static_cast<size_t>(find(In))] = find(N.Outputs[0]);
      }
  }
  std::vector<std::vector<int>> Touch(NV), Writers(NV);
  std::vector<char> ToTheEnd(NV, 0); // a group holding a graph output is read after the run
  for (size_t V = 0; V < NV; ++V) {
    const auto &Val = G.Values[V];
    if (P.Offsets[V] < 0)
      continue;
    const size_t R = static_cast<size_t>(find(static_cast<int>(V)));
    ToTheEnd[R] |= Val.IsGraphOutput;
    if (Val.Producer >= 0) {
      Writers[R].push_back(Val.Producer);
      Touch[R].push_back(Val.Producer);
    }
    Touch[R].insert(Touch[R].end(), Val.Consumers.begin(), Val.Consumers.end());
  }
  const auto before = [&](size_t A, size_t B) {
    if (ToTheEnd[A] || Writers[B].empty() || Touch[A].empty())
      return false;
    for (int T : Touch[A])
      for (int W : Writers[B])
        if (T == W || !isAncestor(M, T, W))
          return false;
    return true;
  };
  for (size_t V = 0; V < NV; ++V)
    for (size_t W = V + 1; W < NV; ++W) {
      if (P.Offsets[V] < 0 || P.Offsets[W] < 0)
        continue;
      const size_t GV = static_cast<size_t>(find(static_cast<int>(V))), GW = static_cast<size_t>(find(static_cast<int>(W)));
      if (GV == GW)
        continue;
      const int64_t A = P.Offsets[V], B = P.Offsets[W];
      if (A + static_cast<int64_t>(valueBytes(P, static_cast<int>(V))) <= B ||
          B + static_cast<int64_t>(valueBytes(P, static_cast<int>(W))) <= A)
        continue;
      EXPECT_TRUE(before(GV, GW) || before(GW, GV))
          << G.Values[V].Name << " and " << G.Values[W].Name << " share bytes but may be live at once";
    }
}

std::vector<std::vector<float>> runOnce(rt::InferRequest &R, const rt::Tensor &X) {
  R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
  EXPECT_FALSE(R.wait());
  std::vector<std::vector<float>> Out;
  for (size_t I = 0; I < 2; ++I) {
    const rt::Tensor T = R.getOutput(I);
    const float *D = static_cast<const float *>(T.data());
    Out.emplace_back(D, D + T.getElementCount());
  }
  return Out;
}

} // namespace

TEST(PipelineConcat, FireModuleBranchesAreWrittenInsideTheConcat) {
  rt::AutoInit Init;
  const std::string Bytes = fireModel();
  for (rt::SchedulerType S : {rt::SchedulerType::Pipeline, rt::SchedulerType::Sequential}) {
    auto M = loadImpl(Bytes, S, 2);
    ASSERT_TRUE(M);
    ASSERT_EQ(M->EffectiveScheduler, S);
    auto Plan = rt::detail::getExecutionPlan(*M, {{1, 16, kPlane, kPlane}});
    ASSERT_TRUE(Plan.isOk()) << Plan.status().message();
    const rt::detail::ExecutionPlan &P = **Plan;
    for (int K = 0; K < 3; ++K) {
      const std::string Pre = "m" + std::to_string(K) + "_";
      const int E1 = valueNamed(*M, Pre + "e1"), E3 = valueNamed(*M, Pre + "e3"), C = valueNamed(*M, Pre + "c");
      ASSERT_TRUE(E1 >= 0 && E3 >= 0 && C >= 0);
      ASSERT_GE(P.Offsets[static_cast<size_t>(C)], 0);
      EXPECT_EQ(P.Offsets[static_cast<size_t>(E1)], P.Offsets[static_cast<size_t>(C)]) << Pre << "e1, scheduler " << int(S);
      EXPECT_EQ(P.Offsets[static_cast<size_t>(E3)],
                P.Offsets[static_cast<size_t>(C)] + static_cast<int64_t>(valueBytes(P, E1)))
          << Pre << "e3, scheduler " << int(S);
    }
    if (S == rt::SchedulerType::Pipeline)
      expectPipelinePlanIsSafe(*M, P);
  }
}

TEST(PipelineConcat, InPlaceResultsEqualAPlanWithoutSharingBitForBit) {
  // The same scheduler and thread count with memory optimization off (every value its own bytes)
  // is the reference, so kernels split their work the same way; Sequential at 1 thread is
  // compared too. Repeated runs: a race between the branches would show as a difference.
  rt::AutoInit Init;
  const std::string Bytes = fireModel();
  rt::TypedTensor<float> X = rt::tensor<float>({1, 16, kPlane, kPlane});
  const std::vector<float> XV = randomFloats(X.getElementCount(), 7u, -0.5f, 0.5f);
  std::copy(XV.begin(), XV.end(), &X[0]);
  const auto load = [&Bytes](rt::SchedulerType S, int Threads, bool MemOpt) {
    rt::ModelLoadOptions O;
    O.Scheduler = S;
    O.ThreadCount = Threads;
    O.EnableMemoryOptimization = MemOpt;
    return rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), O);
  };
  rt::Model Seq = load(rt::SchedulerType::Sequential, 1, true);
  rt::InferRequest SeqR = Seq.createRequest();
  const auto SeqOut = runOnce(SeqR, X);
  for (int Threads : {2, 3}) {
    rt::Model Ref = load(rt::SchedulerType::Pipeline, Threads, false);
    rt::InferRequest RefR = Ref.createRequest();
    const auto RefOut = runOnce(RefR, X);
    rt::Model Pipe = load(rt::SchedulerType::Pipeline, Threads, true);
    rt::InferRequest PipeR = Pipe.createRequest();
    for (int Run = 0; Run < 30; ++Run) {
      const auto Out = runOnce(PipeR, X);
      for (size_t I = 0; I < Out.size(); ++I) {
        ASSERT_EQ(Out[I].size(), RefOut[I].size());
        ASSERT_EQ(std::memcmp(Out[I].data(), RefOut[I].data(), Out[I].size() * sizeof(float)), 0)
            << "output " << I << ", run " << Run << ", " << Threads << " threads";
        if (Run == 0) { // Sequential at 1 thread: the same up to summation order
          for (size_t J = 0; J < Out[I].size(); ++J)
            ASSERT_NEAR(Out[I][J], SeqOut[I][J], 1e-4f * (1.0f + std::fabs(SeqOut[I][J]))) << "output " << I << " at " << J;
        }
      }
    }
  }
}
