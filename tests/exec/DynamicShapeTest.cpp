// Dynamic input shapes: symbols bind across inputs at infer() and in Model::inferShape, plans are
// built once per input-shape signature and reused by later runs and other requests.
#include <gtest/gtest.h>

#include <string>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "exec/ModelState.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

/// y = a + b, z = Concat(y, b) on axis 0, with a and b both [N, 3].
rt::Model twoSymbolicInputs() {
  static std::string Bytes;
  OnnxBuilder B;
  B.input("a", onnx::TensorProto_DataType_FLOAT, {0, 3}, {"N"});
  B.input("b", onnx::TensorProto_DataType_FLOAT, {0, 3}, {"N"});
  B.node("Add", {"a", "b"}, {"y"}, "add");
  OnnxBuilder::attrInt(B.node("Concat", {"y", "b"}, {"z"}, "concat"), "axis", 0);
  B.output("z", onnx::TensorProto_DataType_FLOAT);
  Bytes = B.bytes();
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
}

rt::Tensor rows(int64_t N, float V) {
  rt::TypedTensor<float> T = rt::tensor<float>(rt::TensorShape::fromDims({N, 3}));
  T.fill(V);
  return T;
}

size_t planBuilds(const rt::Model &M) {
  std::lock_guard<std::mutex> Lock(M.impl()->PlanMutex);
  return M.impl()->PlanBuilds;
}

} // namespace

TEST(DynamicShape, PlansAreBuiltOncePerShapeSignatureAndReused) {
  rt::AutoInit Init;
  rt::Model M = twoSymbolicInputs();
  ASSERT_TRUE(M.isDynamic());
  rt::InferRequest R = M.createRequest();
  const size_t Before = planBuilds(M);
  for (int64_t N : {2, 5, 2, 5, 2}) {
    std::vector<rt::Tensor> In = {rows(N, 1.0f), rows(N, 2.0f)};
    R.infer(rt::make_array(In));
    R.wait();
    rt::Tensor Z = R.getOutput("z");
    ASSERT_EQ(Z.getShape(), rt::TensorShape::fromDims({2 * N, 3}));
    const float *P = static_cast<const float *>(Z.data());
    EXPECT_FLOAT_EQ(P[0], 3.0f);
    EXPECT_FLOAT_EQ(P[N * 3], 2.0f);
  }
  EXPECT_EQ(planBuilds(M) - Before, 2u); // N = 2 and N = 5
  rt::InferRequest R2 = M.createRequest();
  std::vector<rt::Tensor> In = {rows(5, 1.0f), rows(5, 1.0f)};
  R2.infer(rt::make_array(In));
  R2.wait();
  EXPECT_EQ(planBuilds(M) - Before, 2u); // a second request reuses the cached plan
}

TEST(DynamicShape, InputsBindingOneSymbolDifferentlyIsAShapeErrorNamingBoth) {
  rt::AutoInit Init;
  rt::Model M = twoSymbolicInputs();
  rt::InferRequest R = M.createRequest();
  std::vector<rt::Tensor> In = {rows(2, 1.0f), rows(3, 1.0f)};
  try {
    R.infer(rt::make_array(In));
    FAIL() << "no ShapeError";
  } catch (const rt::ShapeError &E) {
    const std::string Msg = E.what();
    EXPECT_NE(Msg.find("'b'"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("'a'"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("symbol 'N' = 3"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("set 'N' = 2"), std::string::npos) << Msg;
  }
  EXPECT_EQ(R.getStatus(), rt::InferStatus::Ready); // nothing started
  std::vector<rt::Tensor> Good = {rows(3, 1.0f), rows(3, 1.0f)};
  R.infer(rt::make_array(Good));
  R.wait();
  EXPECT_EQ(R.getStatus(), rt::InferStatus::Ready);
}

TEST(DynamicShape, InferShapeIsSymbolicAndChecksSymbols) {
  rt::AutoInit Init;
  rt::Model M = twoSymbolicInputs();
  const size_t Before = planBuilds(M);
  // Symbolic inputs give a symbolic result, computed from the graph without running it.
  rt::TensorShape Sym = M.inferShape("z", {{"a", rt::TensorShape({rt::Expr("N"), 3})},
                                          {"b", rt::TensorShape({rt::Expr("N"), 3})}});
  ASSERT_EQ(Sym.getRank(), 2u);
  EXPECT_TRUE(Sym.isDynamic());
  EXPECT_EQ(Sym.resolve({{"N", 4}}), rt::TensorShape({8, 3}));
  // Concrete inputs, by name and by position.
  EXPECT_EQ(M.inferShape("z", {{"a", rt::TensorShape({7, 3})}, {"b", rt::TensorShape({7, 3})}}),
            rt::TensorShape({14, 3}));
  std::vector<rt::TensorShape> Shapes = {rt::TensorShape({4, 3}), rt::TensorShape({4, 3})};
  EXPECT_EQ(M.inferShape("y", rt::make_array(Shapes)), rt::TensorShape({4, 3}));
  EXPECT_EQ(planBuilds(M), Before); // nothing ran
  // Bad input.
  EXPECT_THROW(M.inferShape("z", {{"a", rt::TensorShape({2, 3})}, {"b", rt::TensorShape({3, 3})}}), rt::ShapeError);
  EXPECT_THROW(M.inferShape("z", {{"a", rt::TensorShape({2, 4})}, {"b", rt::TensorShape({2, 4})}}), rt::ShapeError);
  EXPECT_THROW(M.inferShape("z", {{"a", rt::TensorShape({2, 3})}}), rt::InvalidArgumentError);
  EXPECT_THROW(M.inferShape("nope", rt::make_array(Shapes)), rt::InvalidArgumentError);
}
