// If, Loop and Scan end to end: small ONNX models built here, run under every scheduler, plus
// the load-time and run-time errors of malformed subgraphs and failing bodies.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <memory>
#include <string>
#include <vector>

#include "OnnxBuilder.h"
#include "Optimium/Runtime.h"
#include "TestUtil.h"
#include "import/onnx/OnnxImporter.h"
#include "ir/Scopes.h"

namespace rt = optimium::runtime;
using optimium_test::OnnxBuilder;

namespace {

constexpr int F32 = onnx::TensorProto_DataType_FLOAT;
constexpr int I64 = onnx::TensorProto_DataType_INT64;
constexpr int BOOL = onnx::TensorProto_DataType_BOOL;

const rt::SchedulerType AllSchedulers[] = {rt::SchedulerType::Sequential, rt::SchedulerType::Exclusive,
                                           rt::SchedulerType::Pipeline};

rt::Model load(const std::string &Bytes, rt::SchedulerType S) {
  rt::ModelLoadOptions O;
  O.Scheduler = S;
  O.ThreadCount = 2;
  static std::vector<std::unique_ptr<std::string>> Keep; // the model may point into the bytes
  Keep.push_back(std::make_unique<std::string>(Bytes));
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Keep.back()->data()), Keep.back()->size(), O);
}

rt::Tensor f32(std::vector<int64_t> Dims, std::vector<float> Values) {
  rt::Tensor T = rt::tensor(rt::ElementType::F32, rt::TensorShape(std::vector<rt::Expr>(Dims.begin(), Dims.end())));
  std::memcpy(T.data(), Values.data(), Values.size() * sizeof(float));
  return T;
}
rt::Tensor i64(std::vector<int64_t> Dims, std::vector<int64_t> Values) {
  rt::Tensor T = rt::tensor(rt::ElementType::I64, rt::TensorShape(std::vector<rt::Expr>(Dims.begin(), Dims.end())));
  std::memcpy(T.data(), Values.data(), Values.size() * sizeof(int64_t));
  return T;
}
rt::Tensor boolean(bool V) {
  rt::Tensor T = rt::tensor(rt::ElementType::Bool, rt::TensorShape(std::vector<rt::Expr>{}));
  *static_cast<uint8_t *>(T.data()) = V ? 1 : 0;
  return T;
}

std::vector<rt::Tensor> run(rt::Model &M, std::vector<rt::Tensor> Inputs) {
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(Inputs));
  R.wait();
  std::vector<rt::Tensor> Out;
  for (size_t I = 0; I < M.getOutputNames().size(); ++I)
    Out.push_back(R.getOutput(I));
  return Out;
}

std::vector<int64_t> dims(const rt::Tensor &T) {
  std::vector<int64_t> D;
  for (const rt::Expr &E : T.getShape())
    D.push_back(E.value());
  return D;
}
std::vector<float> floats(const rt::Tensor &T) {
  const float *P = static_cast<const float *>(T.data());
  return std::vector<float>(P, P + T.getElementCount());
}
std::vector<int64_t> ints(const rt::Tensor &T) {
  const int64_t *P = static_cast<const int64_t *>(T.data());
  return std::vector<int64_t>(P, P + T.getElementCount());
}

// y = cond ? x + x : concat(x, x): the branches differ in shape.
std::string ifModel(bool WithElse = true) {
  OnnxBuilder Then, Else;
  Then.node("Add", {"x", "x"}, {"then_y"});
  Then.output("then_y", F32);
  auto *C = Else.node("Concat", {"x", "x"}, {"else_y"});
  OnnxBuilder::attrInt(C, "axis", 0);
  Else.output("else_y", F32);
  OnnxBuilder B;
  B.input("cond", BOOL, {});
  B.input("x", F32, {3});
  auto *N = B.node("If", {"cond"}, {"y"}, "my_if");
  OnnxBuilder::attrGraph(N, "then_branch", Then.M.graph());
  if (WithElse)
    OnnxBuilder::attrGraph(N, "else_branch", Else.M.graph());
  B.output("y", F32);
  return B.bytes();
}

// Loop(M, "", v0): v <- v + w (w an outer initializer); scan output (v + w)^2.
std::string tripCountLoop() {
  OnnxBuilder Body;
  Body.input("i", I64, {});
  Body.input("c", BOOL, {});
  Body.untypedShapeInput("v", F32);
  Body.node("Identity", {"c"}, {"c_out"});
  Body.node("Add", {"v", "w"}, {"v_out"});
  Body.node("Mul", {"v_out", "v_out"}, {"sq"});
  Body.output("c_out", BOOL);
  Body.output("v_out", F32);
  Body.output("sq", F32);
  OnnxBuilder B;
  B.input("M", I64, {});
  B.input("v0", F32, {2});
  B.initializer("w", {2}, {1.0f, 0.5f});
  auto *N = B.node("Loop", {"M", "", "v0"}, {"v_final", "squares"}, "trip_loop");
  OnnxBuilder::attrGraph(N, "body", Body.M.graph());
  B.output("v_final", F32);
  B.output("squares", F32);
  return B.bytes();
}

} // namespace

TEST(ControlFlow, IfRunsEitherBranchWithDifferentShapes) {
  for (rt::SchedulerType S : AllSchedulers) {
    SCOPED_TRACE(rt::toString(S));
    rt::Model M = load(ifModel(), S);
    std::vector<rt::Tensor> T = run(M, {boolean(true), f32({3}, {1, 2, 3})});
    EXPECT_EQ(dims(T[0]), (std::vector<int64_t>{3}));
    EXPECT_EQ(floats(T[0]), (std::vector<float>{2, 4, 6}));
    std::vector<rt::Tensor> E = run(M, {boolean(false), f32({3}, {1, 2, 3})});
    EXPECT_EQ(dims(E[0]), (std::vector<int64_t>{6}));
    EXPECT_EQ(floats(E[0]), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  }
}

TEST(ControlFlow, IfWithMissingBranchFailsWhenSelected) {
  for (rt::SchedulerType S : AllSchedulers) {
    SCOPED_TRACE(rt::toString(S));
    rt::Model M = load(ifModel(/*WithElse=*/false), S);
    EXPECT_EQ(floats(run(M, {boolean(true), f32({3}, {1, 2, 3})})[0]), (std::vector<float>{2, 4, 6}));
    try {
      run(M, {boolean(false), f32({3}, {1, 2, 3})});
      FAIL() << "expected InferError";
    } catch (const rt::InferError &E) {
      const std::string Msg = E.what();
      EXPECT_NE(Msg.find("my_if"), std::string::npos) << Msg;
      EXPECT_NE(Msg.find("else_branch"), std::string::npos) << Msg;
    }
  }
}

TEST(ControlFlow, LoopWithTripCountCarriesStateAndStacksScanOutputs) {
  for (rt::SchedulerType S : AllSchedulers) {
    SCOPED_TRACE(rt::toString(S));
    rt::Model M = load(tripCountLoop(), S);
    std::vector<rt::Tensor> T = run(M, {i64({}, {3}), f32({2}, {0, 1})});
    EXPECT_EQ(floats(T[0]), (std::vector<float>{3, 2.5f}));
    EXPECT_EQ(dims(T[1]), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(floats(T[1]), (std::vector<float>{1, 2.25f, 4, 4, 9, 6.25f}));
    // Zero iterations: the initial values and empty scan outputs.
    std::vector<rt::Tensor> Z = run(M, {i64({}, {0}), f32({2}, {7, 8})});
    EXPECT_EQ(floats(Z[0]), (std::vector<float>{7, 8}));
    EXPECT_EQ(dims(Z[1]), (std::vector<int64_t>{0, 2}));
  }
}

TEST(ControlFlow, LoopEndsOnConditionAlone) {
  // x <- 2x while 2x < 100; scan output: iter_num.
  OnnxBuilder Body;
  Body.input("i", I64, {});
  Body.input("c", BOOL, {});
  Body.input("x", F32, {1});
  Body.node("Mul", {"x", "two"}, {"x_out"});
  Body.node("Less", {"x_out", "limit"}, {"c_out"});
  Body.node("Identity", {"i"}, {"i_out"});
  Body.output("c_out", BOOL);
  Body.output("x_out", F32);
  Body.output("i_out", I64);
  OnnxBuilder B;
  B.input("cond", BOOL, {});
  B.input("x0", F32, {1});
  B.initializer("two", {1}, {2.0f});
  B.initializer("limit", {1}, {100.0f});
  auto *N = B.node("Loop", {"", "cond", "x0"}, {"x_final", "iters"}, "cond_loop");
  OnnxBuilder::attrGraph(N, "body", Body.M.graph());
  B.output("x_final", F32);
  B.output("iters", I64);
  const std::string Bytes = B.bytes();
  for (rt::SchedulerType S : AllSchedulers) {
    SCOPED_TRACE(rt::toString(S));
    rt::Model M = load(Bytes, S);
    std::vector<rt::Tensor> T = run(M, {boolean(true), f32({1}, {1})});
    EXPECT_EQ(floats(T[0]), (std::vector<float>{128}));
    EXPECT_EQ(ints(T[1]), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
    std::vector<rt::Tensor> Z = run(M, {boolean(false), f32({1}, {1})});
    EXPECT_EQ(floats(Z[0]), (std::vector<float>{1}));
    EXPECT_EQ(dims(Z[1]), (std::vector<int64_t>{0}));
  }
}

TEST(ControlFlow, ScanHonorsAxesAndDirections) {
  // Running sum over the columns of x [2, 3] from the last column; outputs stacked along axis 1,
  // reversed.
  OnnxBuilder Body;
  Body.input("s", F32, {2});
  Body.input("col", F32, {2});
  Body.node("Add", {"s", "col"}, {"s_out"});
  Body.node("Identity", {"s_out"}, {"y"});
  Body.output("s_out", F32);
  Body.output("y", F32);
  OnnxBuilder B(11);
  B.input("s0", F32, {2});
  B.input("x", F32, {2, 3});
  auto *N = B.node("Scan", {"s0", "x"}, {"s_final", "ys"}, "my_scan");
  OnnxBuilder::attrGraph(N, "body", Body.M.graph());
  OnnxBuilder::attrInt(N, "num_scan_inputs", 1);
  OnnxBuilder::attrInts(N, "scan_input_axes", {1});
  OnnxBuilder::attrInts(N, "scan_input_directions", {1});
  OnnxBuilder::attrInts(N, "scan_output_axes", {1});
  OnnxBuilder::attrInts(N, "scan_output_directions", {1});
  B.output("s_final", F32);
  B.output("ys", F32);
  const std::string Bytes = B.bytes();
  for (rt::SchedulerType S : AllSchedulers) {
    SCOPED_TRACE(rt::toString(S));
    rt::Model M = load(Bytes, S);
    std::vector<rt::Tensor> T = run(M, {f32({2}, {0, 100}), f32({2, 3}, {1, 2, 3, 4, 5, 6})});
    EXPECT_EQ(floats(T[0]), (std::vector<float>{6, 115}));
    // Iterations see columns 2, 1, 0: sums {3,106}, {5,111}, {6,115}, written at positions 2, 1, 0.
    EXPECT_EQ(dims(T[1]), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(floats(T[1]), (std::vector<float>{6, 5, 3, 115, 111, 106}));
  }
}

TEST(ControlFlow, NestedIfInLoopReadsOuterWeights) {
  // Loop 3 times: v <- (i < 1) ? v + w1 : v * w2, with w1, w2 initializers of the main graph
  // (two scopes out) and k of the main graph.
  OnnxBuilder Then, Else;
  Then.node("Add", {"v", "w1"}, {"t"});
  Then.output("t", F32);
  Else.node("Mul", {"v", "w2"}, {"e"});
  Else.output("e", F32);
  OnnxBuilder Body;
  Body.input("i", I64, {});
  Body.input("c", BOOL, {});
  Body.input("v", F32, {2});
  Body.node("Less", {"i", "k"}, {"first"});
  auto *If = Body.node("If", {"first"}, {"v_out"}, "inner_if");
  OnnxBuilder::attrGraph(If, "then_branch", Then.M.graph());
  OnnxBuilder::attrGraph(If, "else_branch", Else.M.graph());
  Body.node("Identity", {"c"}, {"c_out"});
  Body.output("c_out", BOOL);
  Body.output("v_out", F32);
  OnnxBuilder B;
  B.input("v0", F32, {2});
  B.initializer("w1", {2}, {10, 20});
  B.initializer("w2", {2}, {2, 3});
  B.initializerI64("k", {}, {1});
  B.initializerI64("M", {}, {3});
  auto *N = B.node("Loop", {"M", "", "v0"}, {"v_final"}, "outer_loop");
  OnnxBuilder::attrGraph(N, "body", Body.M.graph());
  B.output("v_final", F32);
  const std::string Bytes = B.bytes();
  for (rt::SchedulerType S : AllSchedulers) {
    SCOPED_TRACE(rt::toString(S));
    rt::Model M = load(Bytes, S);
    std::vector<rt::Tensor> T = run(M, {f32({2}, {1, 1})});
    EXPECT_EQ(floats(T[0]), (std::vector<float>{44, 189}));
  }
}

TEST(ControlFlow, OuterScopeReadsBecomeTrailingNodeInputs) {
  // w1/w2 are read two scopes down (inside the If inside the Loop body), k one scope down: all
  // three become inputs of the Loop; v (the body's input), w1 and w2 inputs of the If in the body.
  OnnxBuilder Then, Else;
  Then.node("Add", {"v", "w1"}, {"t"});
  Then.output("t", F32);
  Else.node("Mul", {"v", "w2"}, {"e"});
  Else.output("e", F32);
  OnnxBuilder Body;
  Body.input("i", I64, {});
  Body.input("c", BOOL, {});
  Body.input("v", F32, {2});
  Body.node("Less", {"i", "k"}, {"first"});
  auto *If = Body.node("If", {"first"}, {"v_out"}, "inner_if");
  OnnxBuilder::attrGraph(If, "then_branch", Then.M.graph());
  OnnxBuilder::attrGraph(If, "else_branch", Else.M.graph());
  Body.node("Identity", {"c"}, {"c_out"});
  Body.output("c_out", BOOL);
  Body.output("v_out", F32);
  OnnxBuilder B;
  B.input("v0", F32, {2});
  B.initializer("w1", {2}, {10, 20});
  B.initializer("w2", {2}, {2, 3});
  B.initializerI64("k", {}, {1});
  B.initializerI64("M", {}, {3});
  auto *N = B.node("Loop", {"M", "", "v0"}, {"v_final"}, "outer_loop");
  OnnxBuilder::attrGraph(N, "body", Body.M.graph());
  B.output("v_final", F32);
  const std::string Bytes = B.bytes();
  namespace d = optimium::runtime::detail;
  auto R = d::importOnnxBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), "", "test");
  ASSERT_TRUE(R.isOk()) << R.status().message();
  const d::Graph &G = *R->G;
  ASSERT_EQ(G.Nodes.size(), 1u);
  const d::Node &Loop = G.Nodes[0];
  EXPECT_EQ(d::capturedNames(Loop), (std::vector<std::string>{"k", "w1", "w2"}));
  std::vector<std::string> Inputs;
  for (int In : Loop.Inputs)
    Inputs.push_back(In >= 0 ? G.Values[In].Name : "");
  EXPECT_EQ(Inputs, (std::vector<std::string>{"M", "", "v0", "k", "w1", "w2"}));
  const d::Graph &BodyG = *Loop.Attrs.at("body").G;
  EXPECT_EQ(d::outerScopeNames(BodyG), (std::vector<std::string>{"k", "w1", "w2"}));
  const d::Node &InnerIf = BodyG.Nodes[1];
  ASSERT_EQ(InnerIf.OpType, "If");
  std::vector<std::string> IfInputs;
  for (int In : InnerIf.Inputs)
    IfInputs.push_back(BodyG.Values[In].Name);
  EXPECT_EQ(IfInputs, (std::vector<std::string>{"first", "v", "w1", "w2"}));
}

TEST(ControlFlow, Opset8ScanRunsPerBatchElement) {
  // Opset 8: [batch, sequence, ...] inputs, no sequence_lens; running sum per batch element.
  OnnxBuilder Body;
  Body.input("s", F32, {2});
  Body.input("x", F32, {2});
  Body.node("Add", {"s", "x"}, {"s_out"});
  Body.node("Identity", {"s_out"}, {"y"});
  Body.output("s_out", F32);
  Body.output("y", F32);
  OnnxBuilder B(8);
  B.input("s0", F32, {2, 2});
  B.input("x", F32, {2, 3, 2});
  auto *N = B.node("Scan", {"", "s0", "x"}, {"s_final", "ys"}, "scan8");
  OnnxBuilder::attrGraph(N, "body", Body.M.graph());
  OnnxBuilder::attrInt(N, "num_scan_inputs", 1);
  B.output("s_final", F32);
  B.output("ys", F32);
  const std::string Bytes = B.bytes();
  for (rt::SchedulerType S : AllSchedulers) {
    SCOPED_TRACE(rt::toString(S));
    rt::Model M = load(Bytes, S);
    std::vector<rt::Tensor> T =
        run(M, {f32({2, 2}, {0, 0, 100, 100}), f32({2, 3, 2}, {1, 2, 3, 4, 5, 6, 1, 1, 1, 1, 1, 1})});
    EXPECT_EQ(floats(T[0]), (std::vector<float>{9, 12, 103, 103}));
    EXPECT_EQ(dims(T[1]), (std::vector<int64_t>{2, 3, 2}));
    EXPECT_EQ(floats(T[1]), (std::vector<float>{1, 2, 4, 6, 9, 12, 101, 101, 102, 102, 103, 103}));
  }
}

TEST(ControlFlowErrors, BodyWithWrongInputCountIsModelErrorAtLoad) {
  OnnxBuilder Body;
  Body.input("i", I64, {});
  Body.input("v", F32, {2}); // cond is missing
  Body.node("Identity", {"v"}, {"v_out"});
  Body.node("Constant", {}, {"c_out"});
  Body.output("c_out", BOOL);
  Body.output("v_out", F32);
  OnnxBuilder B;
  B.input("v0", F32, {2});
  B.initializerI64("M", {}, {2});
  auto *N = B.node("Loop", {"M", "", "v0"}, {"v_final"}, "bad_loop");
  OnnxBuilder::attrGraph(N, "body", Body.M.graph());
  B.output("v_final", F32);
  try {
    load(B.bytes(), rt::SchedulerType::Sequential);
    FAIL() << "expected ModelError";
  } catch (const rt::ModelError &E) {
    const std::string Msg = E.what();
    EXPECT_NE(Msg.find("bad_loop"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("Loop"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("inputs"), std::string::npos) << Msg;
  }
}

TEST(ControlFlowErrors, BranchWithWrongOutputCountIsModelErrorAtLoad) {
  OnnxBuilder Then;
  Then.node("Identity", {"x"}, {"a"});
  Then.node("Identity", {"x"}, {"b"});
  Then.output("a", F32);
  Then.output("b", F32);
  OnnxBuilder B;
  B.input("cond", BOOL, {});
  B.input("x", F32, {3});
  auto *N = B.node("If", {"cond"}, {"y"}, "two_out_if");
  OnnxBuilder::attrGraph(N, "then_branch", Then.M.graph());
  B.output("y", F32);
  try {
    load(B.bytes(), rt::SchedulerType::Sequential);
    FAIL() << "expected ModelError";
  } catch (const rt::ModelError &E) {
    const std::string Msg = E.what();
    EXPECT_NE(Msg.find("two_out_if"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("If"), std::string::npos) << Msg;
  }
}

TEST(ControlFlowErrors, SubgraphReadingAnUndefinedNameIsModelErrorAtLoad) {
  OnnxBuilder Then;
  Then.node("Add", {"x", "nowhere"}, {"t"});
  Then.output("t", F32);
  OnnxBuilder B;
  B.input("cond", BOOL, {});
  B.input("x", F32, {3});
  auto *N = B.node("If", {"cond"}, {"y"}, "dangling_if");
  OnnxBuilder::attrGraph(N, "then_branch", Then.M.graph());
  OnnxBuilder::attrGraph(N, "else_branch", Then.M.graph());
  B.output("y", F32);
  try {
    load(B.bytes(), rt::SchedulerType::Sequential);
    FAIL() << "expected ModelError";
  } catch (const rt::ModelError &E) {
    const std::string Msg = E.what();
    EXPECT_NE(Msg.find("dangling_if"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("If"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("nowhere"), std::string::npos) << Msg;
  }
}

TEST(ControlFlowErrors, FailureInsideBodyNamesOuterAndInnerNode) {
  // The body reshapes v [2] to the shape given as input: [3] cannot hold 2 elements.
  OnnxBuilder Body;
  Body.input("i", I64, {});
  Body.input("c", BOOL, {});
  Body.input("v", F32, {2});
  Body.node("Reshape", {"v", "shape"}, {"r"}, "inner_reshape");
  Body.node("Identity", {"c"}, {"c_out"});
  Body.node("Identity", {"v"}, {"v_out"});
  Body.output("c_out", BOOL);
  Body.output("v_out", F32);
  Body.output("r", F32);
  OnnxBuilder B;
  B.input("v0", F32, {2});
  B.input("shape", I64, {1});
  B.initializerI64("M", {}, {2});
  auto *N = B.node("Loop", {"M", "", "v0"}, {"v_final", "rs"}, "failing_loop");
  OnnxBuilder::attrGraph(N, "body", Body.M.graph());
  B.output("v_final", F32);
  B.output("rs", F32);
  const std::string Bytes = B.bytes();
  for (rt::SchedulerType S : AllSchedulers) {
    SCOPED_TRACE(rt::toString(S));
    rt::Model M = load(Bytes, S);
    std::vector<rt::Tensor> Ok = run(M, {f32({2}, {1, 2}), i64({1}, {2})});
    EXPECT_EQ(dims(Ok[1]), (std::vector<int64_t>{2, 2}));
    try {
      run(M, {f32({2}, {1, 2}), i64({1}, {3})});
      FAIL() << "expected an error";
    } catch (const rt::Exception &E) {
      const std::string Msg = E.what();
      EXPECT_NE(Msg.find("failing_loop"), std::string::npos) << Msg;
      EXPECT_NE(Msg.find("inner_reshape"), std::string::npos) << Msg;
    }
  }
}

TEST(ControlFlow, ScriptedTorchLoopMatchesPyTorch) {
  // torch.jit.script + torch.onnx.export (tests/models/make_scripted_loop.py): a Loop whose trip
  // count is an input, with an If inside whose branches read the module's weights.
  const std::string Dir = optimium_test::dataPath("tests/models/scripted_loop");
  for (rt::SchedulerType S : AllSchedulers) {
    SCOPED_TRACE(rt::toString(S));
    rt::ModelLoadOptions O;
    O.Scheduler = S;
    O.ThreadCount = 2;
    rt::Model M = rt::loadModel(Dir, O);
    std::vector<rt::Tensor> Inputs;
    for (size_t I = 0; I < M.getInputNames().size(); ++I)
      Inputs.push_back(optimium_test::readNpy(Dir + "/input_" + std::to_string(I) + ".npy"));
    std::vector<rt::Tensor> Out = run(M, Inputs);
    ASSERT_EQ(Out.size(), 1u);
    rt::Tensor Want = optimium_test::readNpy(Dir + "/output_0.npy");
    EXPECT_EQ(dims(Out[0]), dims(Want));
    EXPECT_LE(optimium_test::maxAbsDiff(Out[0], Want), 1e-5);
  }
}

TEST(ControlFlow, ConcurrentRequestsShareTheKernels) {
  // One model, several requests at once: the control-flow kernels and their subgraph kernels are
  // created once and must not be mutated by run().
  rt::Model M = load(tripCountLoop(), rt::SchedulerType::Pipeline);
  constexpr int Threads = 4;
  std::vector<std::vector<float>> Finals(Threads), Squares(Threads);
  std::vector<std::thread> Pool;
  for (int T = 0; T < Threads; ++T)
    Pool.emplace_back([&, T] {
      for (int Rep = 0; Rep < 5; ++Rep) {
        std::vector<rt::Tensor> Out = run(M, {i64({}, {T + 1}), f32({2}, {0, 1})});
        Finals[T] = floats(Out[0]);
        Squares[T] = floats(Out[1]);
      }
    });
  for (std::thread &T : Pool)
    T.join();
  for (int T = 0; T < Threads; ++T) {
    const float N = static_cast<float>(T + 1);
    EXPECT_EQ(Finals[T], (std::vector<float>{N, 1 + 0.5f * N})) << T;
    EXPECT_EQ(Squares[T].size(), static_cast<size_t>(2 * (T + 1))) << T;
  }
}
