// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: output shapes, hand-computed values, the
// load-time errors for bad attributes / shapes / types, and the run-time error of a target class
// out of range.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "OnnxBuilder.h"
#include "Optimium/Runtime.h"
#include "backends/native/ops/OpInferTestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;
using optimium::runtime::detail::ErrorCode;

namespace {

const char *const LossOps[] = {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"};

TEST(LossInference, OutputShapes) {
  for (const char *Op : LossOps) {
    SCOPED_TRACE(Op);
    const ValueInfo X = valueInfo({3, 5, 2, 7}), T = valueInfo({3, 2, 7}, ElementType::I64);
    NodeInference R = inferOp(Op, {X, T}, {{"reduction", attrString("none")}});
    ASSERT_TRUE(R.S.isOk()) << R.S.message();
    EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{3, 2, 7}));
    R = inferOp(Op, {X, T, valueInfo({5})});
    ASSERT_TRUE(R.S.isOk()) << R.S.message();
    EXPECT_EQ(R.Outputs[0].Shape, TensorShape());
  }
  NodeInference R = inferOp("SoftmaxCrossEntropyLoss", {valueInfo({3, 5}), valueInfo({3}, ElementType::I32)}, {}, 2);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[1].Shape, (TensorShape{3, 5}));
}

TEST(LossInference, BadInputsAreNamedErrors) {
  for (const char *Op : LossOps) {
    SCOPED_TRACE(Op);
    const ValueInfo X = valueInfo({3, 5, 2}), T = valueInfo({3, 2}, ElementType::I64);
    expectInferError(inferOp(Op, {X, T}, {{"reduction", attrString("avg")}}), ErrorCode::Model,
                     {"'reduction'", "'avg'"});
    expectInferError(inferOp(Op, {X, valueInfo({3, 5}, ElementType::I64)}), ErrorCode::Shape,
                     {"target", "3x5", "3x5x2"});
    expectInferError(inferOp(Op, {X, valueInfo({3}, ElementType::I64)}), ErrorCode::Shape, {"target", "3x5x2"});
    expectInferError(inferOp(Op, {X, T, valueInfo({4})}), ErrorCode::Shape, {"weight", "4", "3x5x2"});
    expectInferError(inferOp(Op, {X, valueInfo({3, 2})}), ErrorCode::Type, {"f32", "i64"});
    expectInferError(inferOp(Op, {valueInfo({3}), valueInfo({}, ElementType::I64)}), ErrorCode::Shape, {"rank >= 2"});
    expectInferError(inferOp(Op, {X, T, valueInfo({5}, ElementType::F64)}), ErrorCode::Type, {"f32", "f64"});
  }
  expectInferError(inferOp("NegativeLogLikelihoodLoss", {valueInfo({3, 5}), valueInfo({3}, ElementType::I64)}, {}, 2),
                   ErrorCode::Model, {"expected 1 outputs, got 2"});
}

/// Runs a one-node loss model on x [2, 3] and the given targets; returns the scalar loss.
float runLoss(const char *Op, const char *Reduction, std::vector<int64_t> Targets, int64_t Ignore = -100) {
  OnnxBuilder B(Op[0] == 'N' ? 22 : 13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 3});
  B.input("t", onnx::TensorProto_DataType_INT64, {2});
  auto *N = B.node(Op, {"x", "t"}, {"loss"}, "loss_node");
  auto *A = N->add_attribute();
  A->set_name("reduction");
  A->set_type(onnx::AttributeProto_AttributeType_STRING);
  A->set_s(Reduction);
  if (Ignore != -100)
    OnnxBuilder::attrInt(N, "ignore_index", Ignore);
  B.output("loss", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  rt::Model M = rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
  const float X[6] = {0.1f, 0.2f, 0.7f, 1.0f, 2.0f, 3.0f};
  std::vector<rt::Tensor> In = {rt::tensor(rt::ElementType::F32, M.getTensorInfo("x").Shape),
                                rt::tensor(rt::ElementType::I64, M.getTensorInfo("t").Shape)};
  std::memcpy(In[0].data(), X, sizeof(X));
  std::memcpy(In[1].data(), Targets.data(), 2 * sizeof(int64_t));
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(In));
  R.wait();
  return *static_cast<const float *>(R.getOutput("loss").data());
}

TEST(LossModel, HandComputedValues) {
  // NLL: -(x[0][2] + x[1][0]) / 2; the ignored second target leaves -x[0][2] / 1.
  EXPECT_NEAR(runLoss("NegativeLogLikelihoodLoss", "mean", {2, 0}), -(0.7 + 1.0) / 2, 1e-6);
  EXPECT_NEAR(runLoss("NegativeLogLikelihoodLoss", "sum", {2, 0}, 0), -0.7, 1e-6);
  // SCE: -log softmax, row 1 = [1, 2, 3] at class 2: log(e + e^2 + e^3) - 3.
  const double Row1 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
  const double Row0 = std::log(std::exp(0.1) + std::exp(0.2) + std::exp(0.7)) - 0.1;
  EXPECT_NEAR(runLoss("SoftmaxCrossEntropyLoss", "sum", {0, 2}), Row0 + Row1, 1e-5);
}

TEST(LossModel, TargetOutOfRangeIsAnInferError) {
  for (const char *Op : LossOps) {
    try {
      runLoss(Op, "mean", {1, 7});
      ADD_FAILURE() << Op << ": no InferError";
    } catch (const rt::InferError &E) {
      EXPECT_NE(std::string(E.what()).find("target value 7"), std::string::npos) << E.what();
      EXPECT_NE(std::string(E.what()).find("[0, 3)"), std::string::npos) << E.what();
    }
  }
}

} // namespace
