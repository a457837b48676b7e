// Tests of the op schema registry and shape inference: broadcasting, arity and unknown-op errors,
// attribute validation (error code and message), and inference with symbolic dims.
#include <gtest/gtest.h>

#include "Optimium/Runtime/Exceptions.h"
#include "core/ErrorConversion.h"
#include "ir/OpSchema.h"

using namespace optimium::runtime;
using namespace optimium::runtime::detail;

namespace {

AttrValue ints(std::vector<int64_t> V) {
  AttrValue A;
  A.K = AttrValue::Kind::Ints;
  A.Ints = std::move(V);
  return A;
}
AttrValue intAttr(int64_t V) {
  AttrValue A;
  A.K = AttrValue::Kind::Int;
  A.I = V;
  return A;
}
AttrValue strAttr(std::string V) {
  AttrValue A;
  A.K = AttrValue::Kind::String;
  A.S = std::move(V);
  return A;
}

ValueInfo info(TensorShape S, ElementType T = ElementType::F32) {
  ValueInfo V;
  V.Present = true;
  V.Type = T;
  V.Shape = std::move(S);
  return V;
}

ValueInfo constI64(std::vector<int64_t> Values) {
  ValueInfo V = info(TensorShape{static_cast<long long>(Values.size())}, ElementType::I64);
  V.Const = ConstData::allocate(ElementType::I64, {static_cast<int64_t>(Values.size())});
  std::copy(Values.begin(), Values.end(), static_cast<int64_t *>(V.Const->mutableData()));
  return V;
}

/// Runs inference of one node; on success Out receives output 0.
struct Inference {
  Node N;
  Status S;
  std::vector<ValueInfo> Outputs;
};

Inference infer(const std::string &Op, std::vector<ValueInfo> Inputs, std::map<std::string, AttrValue> Attrs = {},
                int NumOutputs = 1, int Opset = 17) {
  Inference R;
  R.N.Name = "n1";
  R.N.OpType = Op;
  R.N.OpsetVersion = Opset;
  R.N.Attrs = std::move(Attrs);
  for (size_t I = 0; I < Inputs.size(); ++I)
    R.N.Inputs.push_back(Inputs[I].Present ? static_cast<int>(I) : -1);
  for (int I = 0; I < NumOutputs; ++I)
    R.N.Outputs.push_back(100 + I);
  ShapeContext Ctx(R.N);
  Ctx.Inputs = std::move(Inputs);
  R.S = inferNode(Ctx);
  R.Outputs = Ctx.Outputs;
  return R;
}

#define EXPECT_ERROR(Inf, Code, ...)                                                                                   \
  do {                                                                                                                 \
    EXPECT_EQ((Inf).S.code(), Code) << (Inf).S.message();                                                              \
    for (const char *Part : {__VA_ARGS__})                                                                             \
      EXPECT_NE((Inf).S.message().find(Part), std::string::npos) << "missing '" << Part << "' in: " << (Inf).S.message(); \
  } while (0)

const Expr Batch("batch");

} // namespace

TEST(Broadcast, NumpyRules) {
  EXPECT_EQ(*broadcastShapes(TensorShape{2, 3, 4}, TensorShape{4}), (TensorShape{2, 3, 4}));
  EXPECT_EQ(*broadcastShapes(TensorShape{2, 1, 4}, TensorShape{3, 1}), (TensorShape{2, 3, 4}));
  EXPECT_EQ(*broadcastShapes(TensorShape{}, TensorShape{5}), (TensorShape{5}));
  EXPECT_EQ(*broadcastShapes(TensorShape{0, 3}, TensorShape{1, 3}), (TensorShape{0, 3}));
}

TEST(Broadcast, SymbolicDims) {
  EXPECT_EQ(*broadcastShapes(TensorShape{Batch, 3}, TensorShape{Batch, 1}), (TensorShape{Batch, 3}));
  EXPECT_EQ(*broadcastShapes(TensorShape{Batch, 3}, TensorShape{3}), (TensorShape{Batch, 3}));
  EXPECT_EQ(*broadcastShapes(TensorShape{Batch}, TensorShape{7}), (TensorShape{7}));
  EXPECT_EQ(*broadcastShapes(TensorShape{1}, TensorShape{Batch}), (TensorShape{Batch}));
  const TensorShape Two = *broadcastShapes(TensorShape{Batch}, TensorShape{Expr("n")});
  EXPECT_FALSE(Two[0].isConst());
}

TEST(Broadcast, IncompatibleNamesBothShapes) {
  auto R = broadcastShapes(TensorShape{2, 3}, TensorShape{4, 3});
  ASSERT_FALSE(R.isOk());
  EXPECT_EQ(R.status().code(), ErrorCode::Shape);
  EXPECT_NE(R.status().message().find("2x3"), std::string::npos);
  EXPECT_NE(R.status().message().find("4x3"), std::string::npos);
  EXPECT_THROW(throwIfError(R.status()), ShapeError);
}

TEST(OpSchema, RegistryHasTheNativeOps) {
  EXPECT_NE(findOpSchema("", "Conv"), nullptr);
  EXPECT_NE(findOpSchema("ai.onnx", "Conv"), nullptr);
  EXPECT_EQ(findOpSchema("", "NoSuchOp"), nullptr);
  EXPECT_GE(allOpSchemas().size(), 17u);
}

TEST(OpSchema, UnsupportedOpMessage) {
  Inference R = infer("FancyOp", {info({1})});
  EXPECT_ERROR(R, ErrorCode::Model, "unsupported op 'FancyOp'", "domain 'ai.onnx'", "node 'n1'");
  EXPECT_THROW(throwIfError(R.S), ModelError);
}

TEST(OpSchema, ArityErrors) {
  Inference R = infer("Add", {info({2})});
  EXPECT_ERROR(R, ErrorCode::Model, "node 'n1' (Add)", "expected 2 inputs, got 1");
  R = infer("Relu", {info({2}), info({2})});
  EXPECT_ERROR(R, ErrorCode::Model, "node 'n1' (Relu)", "expected 1 inputs, got 2");
  R = infer("Gemm", {info({2, 2})});
  EXPECT_ERROR(R, ErrorCode::Model, "(Gemm)", "expected 2 to 3 inputs, got 1");
  R = infer("Relu", {info({2})}, {}, 2);
  EXPECT_ERROR(R, ErrorCode::Model, "expected 1 outputs, got 2");
}

TEST(OpSchema, TypeMismatchNamesBothTypes) {
  Inference R = infer("Add", {info({2}), info({2}, ElementType::I64)});
  EXPECT_ERROR(R, ErrorCode::Type, "(Add)", "f32", "i64");
  R = infer("Conv", {info({1, 1, 3, 3}), info({1, 1, 1, 1}, ElementType::F64)});
  EXPECT_ERROR(R, ErrorCode::Type, "(Conv)", "f32", "f64");
  R = infer("Relu", {info({2}, ElementType::U16)});
  EXPECT_ERROR(R, ErrorCode::Type, "u16");
}

TEST(OpSchema, BroadcastErrorNamesBothShapes) {
  Inference R = infer("Mul", {info({2, 3}), info({4, 3})});
  EXPECT_ERROR(R, ErrorCode::Shape, "(Mul)", "2x3", "4x3");
}

TEST(OpSchema, ConvAttributeValidation) {
  const ValueInfo X = info({1, 4, 8, 8}), W = info({6, 2, 3, 3});
  Inference R = infer("Conv", {X, W}, {{"group", intAttr(2)}, {"strides", ints({-1, 1})}});
  EXPECT_ERROR(R, ErrorCode::Model, "node 'n1' (Conv)", "'strides'", "-1");
  R = infer("Conv", {X, W}, {{"group", intAttr(2)}, {"kernel_shape", ints({3})}});
  EXPECT_ERROR(R, ErrorCode::Model, "'kernel_shape'", "[3]");
  R = infer("Conv", {X, W}, {{"group", intAttr(3)}});
  EXPECT_ERROR(R, ErrorCode::Model, "'group'", "3", "does not divide");
  R = infer("Conv", {X, W}, {{"group", intAttr(2)}, {"pads", ints({1, 1})}});
  EXPECT_ERROR(R, ErrorCode::Model, "'pads'");
  R = infer("Conv", {X, W}, {{"group", intAttr(2)}, {"auto_pad", strAttr("SAME")}});
  EXPECT_ERROR(R, ErrorCode::Model, "'auto_pad'", "SAME");
  R = infer("Conv", {X, info({6, 3, 3, 3})});
  EXPECT_ERROR(R, ErrorCode::Shape, "1x4x8x8", "6x3x3x3");
  R = infer("Conv", {info({1, 4, 2, 2}), info({6, 4, 3, 3})});
  EXPECT_ERROR(R, ErrorCode::Shape, "too small");
  R = infer("Conv", {X, W}, {{"group", intAttr(2)}, {"strides", strAttr("2")}});
  EXPECT_ERROR(R, ErrorCode::Model, "'strides'", "must be ints");
}

TEST(OpSchema, ConvShapes) {
  Inference R = infer("Conv", {info({1, 3, 224, 224}), info({64, 3, 7, 7}), info({64})},
                      {{"strides", ints({2, 2})}, {"pads", ints({3, 3, 3, 3})}});
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{1, 64, 112, 112}));
  EXPECT_EQ(R.Outputs[0].Type, ElementType::F32);
  R = infer("Conv", {info({1, 3, 10, 11}), info({8, 3, 3, 3})},
            {{"strides", ints({2, 2})}, {"auto_pad", strAttr("SAME_UPPER")}});
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{1, 8, 5, 6}));
}

TEST(OpSchema, SymbolicConv) {
  // Symbolic batch passes through; a symbolic height becomes Expr arithmetic.
  const Expr H("h");
  Inference R = infer("Conv", {info({Batch, 3, H, 32}), info({16, 3, 3, 3})},
                      {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}});
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  const TensorShape &Y = R.Outputs[0].Shape;
  EXPECT_EQ(Y[0], Batch);
  EXPECT_EQ(Y[1].value(), 16);
  EXPECT_EQ(Y[3].value(), 16);
  EXPECT_EQ(Y[2].resolve({{"h", 32}}).value(), 16);
  EXPECT_EQ(Y[2].resolve({{"h", 33}}).value(), 17);
  EXPECT_EQ(Y[2], (H - 1) / 2 + 1);
}

TEST(OpSchema, PoolingShapes) {
  Inference R = infer("MaxPool", {info({1, 1, 4, 4})},
                      {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"ceil_mode", intAttr(1)}});
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{1, 1, 2, 2}));
  // The optional Indices output: int64, the shape of the pooled output.
  R = infer("MaxPool", {info({1, 1, 4, 4})}, {{"kernel_shape", ints({2, 2})}}, 2);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[1].Type, ElementType::I64);
  EXPECT_EQ(R.Outputs[1].Shape, (TensorShape{1, 1, 3, 3}));
  R = infer("AveragePool", {info({1, 1, 4, 4})});
  EXPECT_ERROR(R, ErrorCode::Model, "'kernel_shape'", "required");
  R = infer("AveragePool", {info({1, 1, 4, 4})}, {{"kernel_shape", ints({2, 2})}, {"count_include_pad", intAttr(2)}});
  EXPECT_ERROR(R, ErrorCode::Model, "'count_include_pad'");
  R = infer("GlobalAveragePool", {info({Batch, 8, 7, 7})});
  ASSERT_TRUE(R.S.isOk());
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{Batch, 8, 1, 1}));
}

TEST(OpSchema, SymbolicReshape) {
  // [batch, 3, 4] -> [0, -1]: -1 is 12, recovered by cancelling the symbolic factor.
  Inference R = infer("Reshape", {info({Batch, 3, 4}), constI64({0, -1})});
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{Batch, 12}));
  R = infer("Reshape", {info({Batch, 3, 4}), constI64({-1, 6})});
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{Batch * 2, 6}));
  // An unknown shape input of length 3 gives three fresh symbols.
  R = infer("Reshape", {info({Batch, 12}), info({3}, ElementType::I64)});
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  ASSERT_EQ(R.Outputs[0].Shape.getRank(), 3u);
  for (const Expr &D : R.Outputs[0].Shape)
    EXPECT_EQ(D.symbol().rfind("unk__", 0), 0u);
  EXPECT_NE(R.Outputs[0].Shape[0], R.Outputs[0].Shape[1]);
}

TEST(OpSchema, ReshapeErrors) {
  Inference R = infer("Reshape", {info({2, 3}), constI64({4, 2})});
  EXPECT_ERROR(R, ErrorCode::Shape, "(Reshape)", "2x3", "[4, 2]");
  R = infer("Reshape", {info({2, 3}), constI64({-1, -1})});
  EXPECT_ERROR(R, ErrorCode::Shape, "more than one -1");
  R = infer("Reshape", {info({2, 3}), constI64({4, -1})});
  EXPECT_ERROR(R, ErrorCode::Shape, "cannot reshape");
  R = infer("Reshape", {info({0, 3}), constI64({3, 0})}, {{"allowzero", intAttr(1)}});
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{3, 0}));
}

TEST(OpSchema, OtherShapes) {
  Inference R = infer("Flatten", {info({Batch, 3, 4, 5})}, {{"axis", intAttr(-2)}});
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{Batch * 3, 20}));
  R = infer("Flatten", {info({2, 3})}, {{"axis", intAttr(3)}});
  EXPECT_ERROR(R, ErrorCode::Model, "'axis'", "3");
  R = infer("Transpose", {info({Batch, 3, 4})});
  ASSERT_TRUE(R.S.isOk());
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{4, 3, Batch}));
  R = infer("Transpose", {info({2, 3})}, {{"perm", ints({0, 0})}});
  EXPECT_ERROR(R, ErrorCode::Model, "'perm'", "[0, 0]");
  R = infer("Concat", {info({Batch, 3}), info({Batch, 5})}, {{"axis", intAttr(-1)}});
  ASSERT_TRUE(R.S.isOk());
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{Batch, 8}));
  R = infer("Concat", {info({2, 3}), info({4, 5})}, {{"axis", intAttr(1)}});
  EXPECT_ERROR(R, ErrorCode::Shape, "2x3", "4x5");
  R = infer("Gemm", {info({Batch, 20}), info({10, 20}), info({10})}, {{"transB", intAttr(1)}});
  ASSERT_TRUE(R.S.isOk());
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{Batch, 10}));
  R = infer("Gemm", {info({4, 20}), info({21, 10})});
  EXPECT_ERROR(R, ErrorCode::Shape, "4x20", "21x10");
  R = infer("Gemm", {info({4, 20}), info({20, 10}), info({3, 10})});
  EXPECT_ERROR(R, ErrorCode::Shape, "3x10", "4x10");
  R = infer("MatMul", {info({Batch, 1, 4, 6}), info({3, 6, 5})});
  ASSERT_TRUE(R.S.isOk());
  EXPECT_EQ(R.Outputs[0].Shape, (TensorShape{Batch, 3, 4, 5}));
  R = infer("MatMul", {info({6}), info({6})});
  ASSERT_TRUE(R.S.isOk());
  EXPECT_EQ(R.Outputs[0].Shape, TensorShape{});
  R = infer("MatMul", {info({2, 6}), info({5, 3})});
  EXPECT_ERROR(R, ErrorCode::Shape, "2x6", "5x3");
  R = infer("Softmax", {info({2, 3})}, {{"axis", intAttr(2)}});
  EXPECT_ERROR(R, ErrorCode::Model, "'axis'", "2");
}
