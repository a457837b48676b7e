// What a model file declares (value_info, graph output types, input dims) is a hint: models that
// ONNX Runtime loads with a warning load here too, and run with what the ops compute. Each case is
// a graph shape seen in a real exporter's output (tf2onnx's -1 dims, a stale Reshape value_info,
// untyped values in If branches).
#include <gtest/gtest.h>

#include "OnnxBuilder.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

rt::Tensor runOne(rt::Model &M, const std::vector<rt::Tensor> &Inputs, size_t Output = 0) {
  rt::InferRequest R = M.createRequest();
  R.infer(rt::ArrayRef<rt::Tensor>(Inputs));
  R.wait();
  return R.getOutput(Output).clone();
}

rt::Tensor floats(const std::vector<int64_t> &Dims, float Start = 0.0f) {
  std::vector<rt::Expr> Shape(Dims.begin(), Dims.end());
  rt::Tensor T = rt::tensor(rt::ElementType::F32, rt::TensorShape(Shape));
  float *P = static_cast<float *>(T.data());
  for (size_t I = 0; I < T.getElementCount(); ++I)
    P[I] = Start + static_cast<float>(I);
  return T;
}

void declareShape(onnx::ValueInfoProto *VI, const std::string &Name, int ElemType, const std::vector<int64_t> &Dims) {
  VI->set_name(Name);
  auto *TT = VI->mutable_type()->mutable_tensor_type();
  TT->set_elem_type(ElemType);
  auto *S = TT->mutable_shape();
  for (int64_t D : Dims)
    S->add_dim()->set_dim_value(D);
}

} // namespace

// tf2onnx writes an unknown batch as dim_value -1: ONNX Runtime reads it as unknown.
TEST(DeclaredHints, NegativeDimValueIsAnUnknownDim) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {-1, 3});
  B.node("Relu", {"x"}, {"y"});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  // The output too, the way tf2onnx declares it.
  declareShape(B.model().mutable_graph()->mutable_output(0), "y", onnx::TensorProto_DataType_FLOAT, {-1, 3});
  rt::Model M = loadModelBytes(B.bytes());
  EXPECT_FALSE(M.getInputTensorInfo(0).Shape[0].isConst());
  for (int64_t Batch : {1, 5}) {
    rt::Tensor Y = runOne(M, {floats({Batch, 3}, -2.0f)});
    ASSERT_EQ(Y.getShape(), rt::TensorShape({rt::Expr(Batch), rt::Expr(3)}));
    EXPECT_EQ(static_cast<const float *>(Y.data())[0], 0.0f);
    EXPECT_EQ(static_cast<const float *>(Y.data())[3 * Batch - 1], static_cast<float>(3 * Batch - 3));
  }
}

// A Reshape whose value_info (and graph output) declare a shape the op does not produce: ORT
// warns and uses the real shape.
TEST(DeclaredHints, StaleReshapeValueInfoYieldsToTheOp) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 6});
  B.initializerI64("shape", {2}, {3, 4});
  B.node("Reshape", {"x", "shape"}, {"r"});
  B.node("Neg", {"r"}, {"y"});
  declareShape(B.model().mutable_graph()->add_value_info(), "r", onnx::TensorProto_DataType_FLOAT, {4, 3});
  B.output("y", onnx::TensorProto_DataType_FLOAT, {6, 2}, /*WithShape=*/true);
  rt::Model M = loadModelBytes(B.bytes());
  EXPECT_EQ(M.getOutputTensorInfo(0).Shape, rt::TensorShape({rt::Expr(3), rt::Expr(4)}));
  rt::Tensor Y = runOne(M, {floats({2, 6})});
  ASSERT_EQ(Y.getShape(), rt::TensorShape({rt::Expr(3), rt::Expr(4)}));
  EXPECT_EQ(static_cast<const float *>(Y.data())[11], -11.0f);
}

// A value_info that declares the wrong element type: the op's type wins (a warning, not a TypeError).
TEST(DeclaredHints, WrongDeclaredTypeYieldsToTheOp) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {4});
  B.node("Shape", {"x"}, {"s"});
  B.node("Identity", {"s"}, {"y"});
  declareShape(B.model().mutable_graph()->add_value_info(), "s", onnx::TensorProto_DataType_FLOAT, {1});
  B.output("y", onnx::TensorProto_DataType_INT32);
  rt::Model M = loadModelBytes(B.bytes());
  rt::Tensor Y = runOne(M, {floats({4})});
  ASSERT_EQ(Y.getType(), rt::ElementType::I64);
  EXPECT_EQ(static_cast<const int64_t *>(Y.data())[0], 4);
}

// Values in an If branch with a TypeProto that sets nothing (seen in a converted speech model), and
// a value_info of a kind this runtime does not read: both are dropped, the branch runs.
TEST(DeclaredHints, UntypedValuesInsideAnIfBranch) {
  OnnxBuilder Then, Else;
  Then.node("Relu", {"x"}, {"t1"});
  Then.node("Neg", {"t1"}, {"t_out"});
  Then.model().mutable_graph()->add_value_info()->set_name("t1");
  Then.model().mutable_graph()->mutable_value_info(0)->mutable_type(); // a type with no kind set
  auto *MapVI = Then.model().mutable_graph()->add_value_info();
  MapVI->set_name("t_out");
  MapVI->mutable_type()->mutable_map_type()->set_key_type(onnx::TensorProto_DataType_INT64);
  auto *ThenOut = Then.model().mutable_graph()->add_output();
  ThenOut->set_name("t_out");
  ThenOut->mutable_type(); // untyped subgraph output
  Else.node("Identity", {"x"}, {"e_out"});
  Else.output("e_out");

  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 3});
  B.input("c", onnx::TensorProto_DataType_BOOL, {});
  auto *If = B.node("If", {"c"}, {"y"});
  OnnxBuilder::attrGraph(If, "then_branch", Then.model().graph());
  OnnxBuilder::attrGraph(If, "else_branch", Else.model().graph());
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  rt::Model M = loadModelBytes(B.bytes());
  rt::Tensor C = rt::tensor(rt::ElementType::Bool, rt::TensorShape(std::vector<rt::Expr>{}));
  *static_cast<bool *>(C.data()) = true;
  rt::Tensor Y = runOne(M, {floats({2, 3}, -1.0f), C});
  ASSERT_EQ(Y.getShape(), rt::TensorShape({rt::Expr(2), rt::Expr(3)}));
  EXPECT_EQ(static_cast<const float *>(Y.data())[0], 0.0f);  // -relu(-1)
  EXPECT_EQ(static_cast<const float *>(Y.data())[5], -4.0f); // -relu(4)
  *static_cast<bool *>(C.data()) = false;
  Y = runOne(M, {floats({2, 3}, -1.0f), C});
  EXPECT_EQ(static_cast<const float *>(Y.data())[0], -1.0f);
}

// PaddlePaddle's exporter names both image dims "?": a placeholder, not one shared dimension
// (ONNX Runtime runs 320x480 images through such models).
TEST(DeclaredHints, PlaceholderDimParamsAreDistinctDims) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 2, 0, 0}, {"", "", "?", "?"});
  B.node("Relu", {"x"}, {"y"});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  rt::Model M = loadModelBytes(B.bytes());
  const rt::TensorShape &S = M.getInputTensorInfo(0).Shape;
  EXPECT_FALSE(S[2] == S[3]);
  rt::Tensor Y = runOne(M, {floats({1, 2, 3, 5}, -4.0f)});
  ASSERT_EQ(Y.getShape(), rt::TensorShape({rt::Expr(1), rt::Expr(2), rt::Expr(3), rt::Expr(5)}));
  EXPECT_EQ(static_cast<const float *>(Y.data())[29], 25.0f);
}

// silero-vad's shape: an If returns rank 3 (Squeeze) or rank 4 (Identity), and a 1-D Conv reads
// it. At load the rank is unknown; the Conv infers with a rank-3 guess and the request sizes it at
// run time (ONNX Runtime runs it; a rank-4 guess made it a ShapeError at load).
TEST(DeclaredHints, IfBranchesOfDifferentRanksFeedARankSpecificOp) {
  OnnxBuilder Then, Else;
  Then.initializerI64("axes", {1}, {0});
  Then.node("Squeeze", {"x", "axes"}, {"t_out"});
  Then.output("t_out", onnx::TensorProto_DataType_FLOAT);
  Else.node("Identity", {"x"}, {"e_out"});
  Else.output("e_out", onnx::TensorProto_DataType_FLOAT);

  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 1, 1, 6});
  B.input("c", onnx::TensorProto_DataType_BOOL, {});
  B.initializer("w", {2, 1, 3}, {1, 1, 1, 0, 1, -1});
  auto *If = B.node("If", {"c"}, {"squeezed"});
  OnnxBuilder::attrGraph(If, "then_branch", Then.model().graph());
  OnnxBuilder::attrGraph(If, "else_branch", Else.model().graph());
  B.node("Conv", {"squeezed", "w"}, {"y"});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  for (bool MemOpt : {true, false}) {
    rt::Model M = loadModelBytes(B.bytes(), MemOpt);
    rt::Tensor C = rt::tensor(rt::ElementType::Bool, rt::TensorShape(std::vector<rt::Expr>{}));
    *static_cast<bool *>(C.data()) = true;
    rt::Tensor Y = runOne(M, {floats({1, 1, 1, 6}), C}); // x = 0 1 2 3 4 5
    ASSERT_EQ(Y.getShape(), rt::TensorShape({rt::Expr(1), rt::Expr(2), rt::Expr(4)}));
    const float *P = static_cast<const float *>(Y.data());
    EXPECT_EQ(P[0], 3.0f);  // 0 + 1 + 2
    EXPECT_EQ(P[3], 12.0f); // 3 + 4 + 5
    EXPECT_EQ(P[4], -1.0f); // 1 - 2
    // The other branch gives the Conv a rank-4 input: a clear error while running, no crash.
    *static_cast<bool *>(C.data()) = false;
    EXPECT_THROW(runOne(M, {floats({1, 1, 1, 6}), C}), rt::Exception);
  }
}
