// SchedulerType::Auto: Pipeline only where two heavy (GEMM-class) ops can run side by side;
// independent light ops alone (a mask's Unsqueeze beside an embedding's Gather) leave it
// Sequential, where the caller runs the ops and each kernel fans out over the whole pool.
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

std::string model(bool HeavyBranches) {
  OnnxBuilder B(17);
  const auto F = onnx::TensorProto_DataType_FLOAT;
  B.input("x", F, {4, 8});
  B.input("y", F, {4, 8});
  B.initializer("w", {8, 8}, std::vector<float>(64, 0.5f));
  B.initializer("v", {8, 8}, std::vector<float>(64, 0.25f));
  if (HeavyBranches) { // two MatMuls of different inputs: independent GEMMs
    B.node("MatMul", {"x", "w"}, {"a"});
    B.node("MatMul", {"y", "v"}, {"b"});
  } else { // a MatMul beside a Relu
    B.node("MatMul", {"x", "w"}, {"a"});
    B.node("Relu", {"y"}, {"b"});
  }
  B.node("Add", {"a", "b"}, {"z"});
  B.output("z", F);
  return B.bytes();
}

} // namespace

TEST(SchedulerChoice, PipelineOnlyForParallelHeavyOps) {
  rt::AutoInit Init;
  EXPECT_EQ(chosen(model(true), 2), rt::SchedulerType::Pipeline);
  EXPECT_EQ(chosen(model(false), 2), rt::SchedulerType::Sequential);
  EXPECT_EQ(chosen(model(true), 1), rt::SchedulerType::Sequential);
}
