// Load-time folding: PyTorch's shape subgraph (Shape -> Gather -> Unsqueeze -> Concat -> Reshape)
// disappears for a static input, and stays (computing the right values at run time) for a
// symbolic batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

/// y = Relu(Reshape(x, [x.shape[0], -1])), with the target shape computed from x in the graph.
std::string flattenByShapeModel(const std::vector<std::string> &Symbols) {
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 3, 4}, Symbols);
  B.initializerI64("zero", {}, {0});
  B.initializerI64("axes0", {1}, {0});
  B.initializerI64("minus_one", {1}, {-1});
  B.node("Shape", {"x"}, {"x_shape"}, "shape");
  B.node("Gather", {"x_shape", "zero"}, {"batch"}, "gather");
  B.node("Unsqueeze", {"batch", "axes0"}, {"batch_1d"}, "unsqueeze");
  OnnxBuilder::attrInt(B.node("Concat", {"batch_1d", "minus_one"}, {"target"}, "concat"), "axis", 0);
  B.node("Reshape", {"x", "target"}, {"flat"}, "reshape");
  B.node("Relu", {"flat"}, {"y"}, "relu");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

rt::Model load(const std::string &Bytes) {
  static std::vector<std::unique_ptr<std::string>> Keep; // the model may point into the bytes
  Keep.push_back(std::make_unique<std::string>(Bytes));
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Keep.back()->data()), Keep.back()->size());
}

std::multiset<std::string> opTypes(const rt::Model &M) {
  std::multiset<std::string> Types;
  for (const rt::OpInfo &Op : M.getOperations())
    Types.insert(Op.Type);
  return Types;
}

/// Runs the model on x = [i - 10 for i in range(batch * 12)] and checks y = relu(x) as [batch, 12].
void expectFlattenedRelu(rt::Model &M, int64_t Batch) {
  rt::Tensor X = rt::tensor(rt::ElementType::F32, {Batch, 3, 4});
  float *XD = static_cast<float *>(X.data());
  for (int64_t I = 0; I < Batch * 12; ++I)
    XD[I] = static_cast<float>(I) - 10.0f;
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
  EXPECT_FALSE(R.wait());
  rt::Tensor Y = R.getOutput("y");
  ASSERT_EQ(Y.getShape(), rt::TensorShape({Batch, 12}));
  const float *YD = static_cast<const float *>(Y.data());
  for (int64_t I = 0; I < Batch * 12; ++I)
    EXPECT_EQ(YD[I], std::max(0.0f, static_cast<float>(I) - 10.0f)) << "element " << I;
}

} // namespace

TEST(Folding, StaticShapeSubgraphIsRemovedAtLoad) {
  rt::AutoInit Init;
  rt::Model M = load(flattenByShapeModel({}));
  const std::multiset<std::string> Ops = opTypes(M);
  // Shape, Gather, Unsqueeze and Concat fold to constants; Reshape of the (non-constant) input
  // stays unless a later pass turns it into a view.
  for (const char *Folded : {"Shape", "Gather", "Unsqueeze", "Concat"})
    EXPECT_EQ(Ops.count(Folded), 0u) << Folded << " should have been folded at load";
  EXPECT_EQ(Ops.count("Relu"), 1u);
  EXPECT_LE(Ops.size(), 2u);
  EXPECT_EQ(M.getOutputTensorInfo(0).Shape, rt::TensorShape({2, 12}));
  expectFlattenedRelu(M, 2);
}

TEST(Folding, SymbolicBatchKeepsTheShapeSubgraphAndRunsAnyBatch) {
  rt::AutoInit Init;
  rt::Model M = load(flattenByShapeModel({"batch"}));
  const std::multiset<std::string> Ops = opTypes(M);
  // x's batch dim is unknown at load: Shape cannot fold, nor can anything downstream of it.
  for (const char *Kept : {"Shape", "Gather", "Unsqueeze", "Concat", "Reshape", "Relu"})
    EXPECT_EQ(Ops.count(Kept), 1u) << Kept << " should stay in a dynamic model";
  EXPECT_TRUE(M.isDynamic());
  for (int64_t Batch : {2, 5, 1})
    expectFlattenedRelu(M, Batch);
}

TEST(Folding, ShapeOfPartlySymbolicInputFoldsTheKnownDims) {
  rt::AutoInit Init;
  // Shape(x)[1:] of a [batch, 3, 4] input is constant even though the batch is not.
  OnnxBuilder B(15);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 3, 4}, {"batch"});
  auto *S = B.node("Shape", {"x"}, {"tail"}, "shape_tail");
  OnnxBuilder::attrInt(S, "start", 1);
  B.node("Relu", {"x"}, {"y"}, "relu");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  B.output("tail", onnx::TensorProto_DataType_INT64);
  rt::Model M = load(B.bytes());
  EXPECT_EQ(opTypes(M).count("Shape"), 0u);
  rt::Tensor X = rt::tensor(rt::ElementType::F32, {7, 3, 4});
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
  EXPECT_FALSE(R.wait());
  rt::Tensor Tail = R.getOutput("tail");
  ASSERT_EQ(Tail.getShape(), rt::TensorShape({2}));
  EXPECT_EQ(static_cast<const int64_t *>(Tail.data())[0], 3);
  EXPECT_EQ(static_cast<const int64_t *>(Tail.data())[1], 4);
}
