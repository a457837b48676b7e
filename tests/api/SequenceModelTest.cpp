// Models that use ONNX sequence/optional values: built inside the graph and run through the public
// API (every scheduler), bad positions and element types, and sequence graph inputs/outputs
// through the internal entry point (exec/ContainerIO.h) with clear errors from the public API.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "exec/ContainerIO.h"

namespace rt = optimium::runtime;
namespace rtd = optimium::runtime::detail;
using namespace optimium_test;

namespace {

rt::Model loadBytes(const std::string &Bytes, const rt::ModelLoadOptions &O = {}) {
  static std::vector<std::unique_ptr<std::string>> Keep; // the model may point into the bytes
  Keep.push_back(std::make_unique<std::string>(Bytes));
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Keep.back()->data()), Keep.back()->size(), O);
}

/// x [4, 3] -> SplitToSequence (rows) -> SequenceErase(0) -> SequenceAt(-1), SequenceLength,
/// ConcatFromSequence(axis 1): rows 1..3 side by side.
std::string splitEraseConcatModel() {
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {4, 3});
  B.initializerI64("zero", {}, {0});
  B.initializerI64("minus_one", {}, {-1});
  OnnxBuilder::attrInt(B.node("SplitToSequence", {"x"}, {"rows"}, "split"), "axis", 0);
  B.node("SequenceErase", {"rows", "zero"}, {"tail"}, "erase");
  B.node("SequenceAt", {"tail", "minus_one"}, {"last"}, "at");
  B.node("SequenceLength", {"tail"}, {"length"}, "length");
  OnnxBuilder::attrInt(B.node("ConcatFromSequence", {"tail"}, {"joined"}, "concat"), "axis", 1);
  B.output("last");
  B.output("length");
  B.output("joined");
  return B.bytes();
}

rt::Tensor iota(std::vector<int64_t> Dims) {
  rt::TypedTensor<float> T = rt::tensor<float>(rt::TensorShape::fromDims(Dims));
  for (size_t I = 0; I < T.getElementCount(); ++I)
    static_cast<float *>(T.data())[I] = static_cast<float>(I);
  return T;
}

std::vector<float> floats(const rt::Tensor &T) {
  const float *P = static_cast<const float *>(T.data());
  return std::vector<float>(P, P + T.getElementCount());
}

void setSequenceType(onnx::ValueInfoProto *VI, const std::string &Name, int ElemType) {
  VI->set_name(Name);
  VI->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(ElemType);
}

} // namespace

class SequenceModel : public ::testing::TestWithParam<rt::SchedulerType> {};

TEST_P(SequenceModel, BuildsAndConsumesASequenceInsideTheGraph) {
  rt::ModelLoadOptions O;
  O.ThreadCount = 2;
  O.Scheduler = GetParam();
  rt::Model M = loadBytes(splitEraseConcatModel(), O);
  ASSERT_EQ(M.getInputNames().size(), 1u);
  rt::InferRequest R = M.createRequest();
  for (int Run = 0; Run < 3; ++Run) { // plans and containers are reused across runs
    R.infer({iota({4, 3})});
    R.wait();
    EXPECT_EQ(floats(R.getOutput("last")), (std::vector<float>{9, 10, 11}));
    EXPECT_EQ(*static_cast<const int64_t *>(R.getOutput("length").data()), 3);
    const rt::Tensor J = R.getOutput("joined");
    EXPECT_EQ(J.getShape(), rt::TensorShape::fromDims({1, 9}));
    EXPECT_EQ(floats(J), (std::vector<float>{3, 4, 5, 6, 7, 8, 9, 10, 11}));
  }
}

/// Loop (M = 3) carrying a sequence that starts empty: each iteration appends x * i; the final
/// sequence is stacked into a tensor, so the graph's inputs and outputs are tensors.
TEST_P(SequenceModel, LoopCarriesASequence) {
  OnnxBuilder Body(17);
  Body.input("i", onnx::TensorProto_DataType_INT64, {});
  Body.input("c", onnx::TensorProto_DataType_BOOL, {});
  setSequenceType(Body.M.mutable_graph()->add_input(), "acc", onnx::TensorProto_DataType_FLOAT);
  Body.node("Identity", {"c"}, {"c_out"});
  OnnxBuilder::attrInt(Body.node("Cast", {"i"}, {"i_f"}), "to", onnx::TensorProto_DataType_FLOAT);
  Body.node("Mul", {"x", "i_f"}, {"scaled"});
  Body.node("SequenceInsert", {"acc", "scaled"}, {"acc_out"});
  Body.output("c_out");
  setSequenceType(Body.M.mutable_graph()->add_output(), "acc_out", onnx::TensorProto_DataType_FLOAT);

  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2});
  B.initializerI64("trips", {}, {3});
  B.node("SequenceEmpty", {}, {"empty"});
  OnnxBuilder::attrGraph(B.node("Loop", {"trips", "", "empty"}, {"seq"}, "loop"), "body", Body.M.graph());
  auto *Stack = B.node("ConcatFromSequence", {"seq"}, {"stacked"}, "stack");
  OnnxBuilder::attrInt(Stack, "axis", 0);
  OnnxBuilder::attrInt(Stack, "new_axis", 1);
  B.output("stacked");
  rt::ModelLoadOptions O;
  O.ThreadCount = 2;
  O.Scheduler = GetParam();
  rt::Model M = loadBytes(B.bytes(), O);
  rt::InferRequest R = M.createRequest();
  R.infer({iota({2})});
  R.wait();
  const rt::Tensor Y = R.getOutput("stacked");
  EXPECT_EQ(Y.getShape(), rt::TensorShape::fromDims({3, 2}));
  EXPECT_EQ(floats(Y), (std::vector<float>{0, 0, 0, 1, 0, 2}));
}

INSTANTIATE_TEST_SUITE_P(Schedulers, SequenceModel,
                         ::testing::Values(rt::SchedulerType::Exclusive, rt::SchedulerType::Sequential,
                                           rt::SchedulerType::Pipeline));

TEST(SequenceModelErrors, PositionOutOfRangeIsAnInferErrorNamingNodePositionAndLength) {
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 3});
  B.input("pos", onnx::TensorProto_DataType_INT64, {});
  OnnxBuilder::attrInt(B.node("SplitToSequence", {"x"}, {"rows"}, "split"), "axis", 0);
  B.node("SequenceAt", {"rows", "pos"}, {"row"}, "pick");
  B.output("row");
  rt::Model M = loadBytes(B.bytes());
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<int64_t> Pos = rt::tensor<int64_t>(rt::TensorShape::fromDims({}));
  static_cast<int64_t *>(Pos.data())[0] = 5;
  R.infer({iota({2, 3}), Pos});
  try {
    R.wait();
    FAIL() << "expected an InferError";
  } catch (const rt::InferError &E) {
    const std::string Msg = E.what();
    EXPECT_NE(Msg.find("'pick'"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("position 5"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("length 2"), std::string::npos) << Msg;
  }
  // The request recovers: a valid position runs.
  static_cast<int64_t *>(Pos.data())[0] = -2;
  R.infer({iota({2, 3}), Pos});
  R.wait();
  EXPECT_EQ(floats(R.getOutput("row")), (std::vector<float>{0, 1, 2}));
}

TEST(SequenceModelErrors, EraseAndInsertPositionsOutOfRangeAreInferErrors) {
  struct Case {
    const char *Op;
    int64_t Position;
  };
  // Two elements: Erase accepts -2..1, Insert -2..2.
  for (const Case &C : {Case{"SequenceErase", 2}, Case{"SequenceErase", -3}, Case{"SequenceInsert", 3},
                        Case{"SequenceInsert", -3}}) {
    SCOPED_TRACE(std::string(C.Op) + " at " + std::to_string(C.Position));
    OnnxBuilder B(17);
    B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 3});
    B.input("pos", onnx::TensorProto_DataType_INT64, {1});
    OnnxBuilder::attrInt(B.node("SplitToSequence", {"x"}, {"rows"}, "split"), "axis", 0);
    if (std::string(C.Op) == "SequenceErase")
      B.node("SequenceErase", {"rows", "pos"}, {"edited"}, "edit");
    else
      B.node("SequenceInsert", {"rows", "x", "pos"}, {"edited"}, "edit");
    B.node("SequenceLength", {"edited"}, {"n"});
    B.output("n");
    rt::Model M = loadBytes(B.bytes());
    rt::InferRequest R = M.createRequest();
    rt::TypedTensor<int64_t> Pos = rt::tensor<int64_t>(rt::TensorShape::fromDims({1}));
    static_cast<int64_t *>(Pos.data())[0] = C.Position;
    R.infer({iota({2, 3}), Pos});
    try {
      R.wait();
      FAIL() << "expected an InferError";
    } catch (const rt::InferError &E) {
      const std::string Msg = E.what();
      EXPECT_NE(Msg.find("'edit'"), std::string::npos) << Msg;
      EXPECT_NE(Msg.find("position " + std::to_string(C.Position)), std::string::npos) << Msg;
      EXPECT_NE(Msg.find("length 2"), std::string::npos) << Msg;
    }
  }
}

TEST(SequenceModelErrors, InsertingTheWrongElementTypeIsATypeErrorAtLoad) {
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2});
  B.input("i", onnx::TensorProto_DataType_INT64, {2});
  B.node("SequenceConstruct", {"x"}, {"seq"}, "make");
  B.node("SequenceInsert", {"seq", "i"}, {"seq2"}, "insert");
  B.node("SequenceLength", {"seq2"}, {"n"});
  B.output("n");
  try {
    loadBytes(B.bytes());
    FAIL() << "expected a TypeError";
  } catch (const rt::TypeError &E) {
    EXPECT_NE(std::string(E.what()).find("'insert'"), std::string::npos) << E.what();
  }
}

TEST(SequenceModelErrors, ATensorOpGivenASequenceIsATypeErrorAtLoad) {
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2});
  B.node("SequenceConstruct", {"x"}, {"seq"});
  B.node("Relu", {"seq"}, {"y"}, "relu");
  B.output("y");
  EXPECT_THROW(loadBytes(B.bytes()), rt::TypeError);
}

TEST(SequenceGraphValues, PublicApiRefusesThemAndTheInternalEntryPointRunsThem) {
  OnnxBuilder B(17);
  setSequenceType(B.M.mutable_graph()->add_input(), "seq", onnx::TensorProto_DataType_FLOAT);
  B.input("t", onnx::TensorProto_DataType_FLOAT, {2});
  B.initializerI64("front", {}, {0});
  B.node("SequenceInsert", {"seq", "t", "front"}, {"out"});
  setSequenceType(B.M.mutable_graph()->add_output(), "out", onnx::TensorProto_DataType_FLOAT);
  rt::Model M = loadBytes(B.bytes());
  rt::InferRequest R = M.createRequest();
  EXPECT_THROW(R.infer(std::vector<rt::Tensor>{rt::Tensor(), iota({2})}), rt::InvalidArgumentError);

  rtd::HostContainer In;
  In.Kind = rtd::ValueKind::Sequence;
  In.Type = rt::ElementType::F32;
  In.Tensors = {iota({3}), iota({1, 1})};
  rtd::inferWithContainers(R, {{"t", iota({2})}}, {{"seq", In}});
  R.wait();
  EXPECT_THROW(R.getOutput("out"), rt::InvalidArgumentError);
  const rtd::HostContainer Out = rtd::getContainerOutput(R, "out");
  ASSERT_EQ(Out.Tensors.size(), 3u);
  EXPECT_EQ(floats(Out.Tensors[0]), (std::vector<float>{0, 1}));
  EXPECT_EQ(floats(Out.Tensors[1]), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(Out.Tensors[2].getShape(), rt::TensorShape::fromDims({1, 1}));

  rtd::HostContainer Wrong = In;
  Wrong.Tensors = {rt::tensor<int64_t>(rt::TensorShape::fromDims({2}))};
  Wrong.Type = rt::ElementType::I64;
  EXPECT_THROW(rtd::inferWithContainers(R, {{"t", iota({2})}}, {{"seq", Wrong}}), rt::TypeError);
}
