// SchedulerType::Auto: Pipeline only where two heavy (GEMM-class) ops of comparable size can run
// side by side; independent light ops alone (a mask's Unsqueeze beside an embedding's Gather), or a
// small heavy op beside one several times its size (SqueezeNet's expand1x1 beside expand3x3), leave
// it Sequential, where the caller runs the ops and each kernel fans out over the whole pool.
#include <gtest/gtest.h>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "exec/ModelState.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

rt::SchedulerType chosen(const std::string &Bytes, int Threads) {
  rt::ModelLoadOptions O;
  O.ThreadCount = Threads;
  auto M = rt::detail::loadModelFromBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), O);
  EXPECT_TRUE(M.isOk());
  return M.isOk() ? (*M)->EffectiveScheduler : rt::SchedulerType::Auto;
}

enum class Branches { Heavy, Light, Unequal, UnequalConv };

std::string model(Branches Kind) {
  OnnxBuilder B(17);
  const auto F = onnx::TensorProto_DataType_FLOAT;
  if (Kind == Branches::UnequalConv) { // one input, a 1x1 and a 3x3 convolution (9x the work), concatenated
    B.input("x", F, {1, 8, 6, 6});
    B.initializer("w1", {16, 8, 1, 1}, std::vector<float>(16 * 8, 0.5f));
    B.initializer("w3", {16, 8, 3, 3}, std::vector<float>(16 * 8 * 9, 0.25f));
    B.node("Conv", {"x", "w1"}, {"a"});
    auto *N = B.node("Conv", {"x", "w3"}, {"b"});
    OnnxBuilder::attrInts(N, "pads", {1, 1, 1, 1});
    auto *C = B.node("Concat", {"a", "b"}, {"z"});
    OnnxBuilder::attrInt(C, "axis", 1);
    B.output("z", F);
    return B.bytes();
  }
  const int64_t Wide = Kind == Branches::Unequal ? 64 : 8; // y x v: 8x the multiply-adds of x x w
  B.input("x", F, {4, 8});
  B.input("y", F, {4, Wide});
  B.initializer("w", {8, 8}, std::vector<float>(64, 0.5f));
  B.initializer("v", {Wide, 8}, std::vector<float>(static_cast<size_t>(Wide * 8), 0.25f));
  B.node("MatMul", {"x", "w"}, {"a"});
  if (Kind == Branches::Light) // a MatMul beside a Relu
    B.node("Relu", {"y"}, {"b"});
  else // two MatMuls of different inputs: independent GEMMs
    B.node("MatMul", {"y", "v"}, {"b"});
  B.node("Add", {"a", "b"}, {"z"});
  B.output("z", F);
  return B.bytes();
}

} // namespace

TEST(SchedulerChoice, PipelineOnlyForParallelHeavyOps) {
  rt::AutoInit Init;
  EXPECT_EQ(chosen(model(Branches::Heavy), 2), rt::SchedulerType::Pipeline);
  EXPECT_EQ(chosen(model(Branches::Light), 2), rt::SchedulerType::Sequential);
  EXPECT_EQ(chosen(model(Branches::Heavy), 1), rt::SchedulerType::Sequential);
}

TEST(SchedulerChoice, SequentialBesideADominantHeavyOp) {
  rt::AutoInit Init;
  EXPECT_EQ(chosen(model(Branches::Unequal), 2), rt::SchedulerType::Sequential);
  EXPECT_EQ(chosen(model(Branches::UnequalConv), 2), rt::SchedulerType::Sequential);
}
