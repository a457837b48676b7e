// QDQ rewrites (passes/FuseQdq): on hosts with AVX-512 VNNI or AVX2 a QDQ-quantized Conv / Add / MaxPool chain runs
// as QLinearConv / com.microsoft QLinearAdd / MaxPool on u8, with the op-by-op float path's outputs
// (fusions off) up to one quantization step; a DequantizeLinear of a constant becomes a constant; and
// nothing is rewritten where the rewrite would not be exact (a second reader of the Conv's float
// output, a weight that is not a constant).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "core/CpuFeatures.h"
#include "passes/Pipeline.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

constexpr float kOutScale = 0.05f; // the last QuantizeLinear's scale: one step of y

/// x (float) -> Q -> DQ -> Conv(DQ(w s8 per channel), DQ(b int32)) -> Relu -> Q -> DQ -> MaxPool
/// -> Q -> DQ -> Add(., DQ(Q(x2))) -> Relu -> Q -> DQ -> y; plus y x DQ(constant) -> MatMul -> y2
/// (not fused, its DequantizeLinear folds). Options: a second reader of the Conv's float output
/// (SharedConv), a weight that is a graph input instead of a constant (DynamicWeight).
std::string qdqModel(bool SharedConv, bool DynamicWeight) {
  OnnxBuilder B(13);
  const int F32 = onnx::TensorProto_DataType_FLOAT, U8 = onnx::TensorProto_DataType_UINT8,
            I8 = onnx::TensorProto_DataType_INT8, I32 = onnx::TensorProto_DataType_INT32;
  B.input("x", F32, {1, 5, 12, 12});
  B.input("x2", F32, {1, 8, 6, 6});
  B.initializer("xs", {}, {0.02f});
  B.initializerRaw<uint8_t>("xz", U8, {}, {128});
  std::vector<int8_t> W(8 * 5 * 3 * 3);
  for (size_t I = 0; I < W.size(); ++I)
    W[I] = static_cast<int8_t>(static_cast<int>((I * 37) % 255) - 127);
  if (DynamicWeight)
    B.input("w", I8, {8, 5, 3, 3});
  else
    B.initializerRaw("w", I8, {8, 5, 3, 3}, W);
  std::vector<float> WS(8);
  for (size_t I = 0; I < WS.size(); ++I)
    WS[I] = 0.001f * static_cast<float>(1 + I);
  B.initializer("ws", {8}, WS);
  B.initializerRaw<int8_t>("wz", I8, {8}, std::vector<int8_t>(8, 0));
  std::vector<float> BS(8);
  std::vector<int32_t> Bias(8);
  for (size_t I = 0; I < BS.size(); ++I) {
    BS[I] = 0.02f * WS[I];
    Bias[I] = static_cast<int32_t>(I * 131) - 400;
  }
  B.initializerRaw("b", I32, {8}, Bias);
  B.initializer("bs", {8}, BS);
  B.initializer("cs", {}, {0.04f});
  B.initializerRaw<uint8_t>("cz", U8, {}, {0});
  B.initializer("x2s", {}, {0.03f});
  B.initializerRaw<uint8_t>("x2z", U8, {}, {100});
  B.initializer("ys", {}, {kOutScale});
  B.initializerRaw<uint8_t>("yz", U8, {}, {10});
  B.initializerRaw<int8_t>("m", I8, {6, 3}, {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -16, 17, -18});
  B.initializer("ms", {}, {0.5f});
  B.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  B.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
  OnnxBuilder::attrInt(B.node("DequantizeLinear", {"w", "ws", "wz"}, {"wd"}), "axis", 0);
  OnnxBuilder::attrInt(B.node("DequantizeLinear", {"b", "bs"}, {"bd"}), "axis", 0);
  OnnxBuilder::attrInts(B.node("Conv", {"xd", "wd", "bd"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  B.node("Relu", {"c"}, {"r"});
  B.node("QuantizeLinear", {"r", "cs", "cz"}, {"cq"});
  B.node("DequantizeLinear", {"cq", "cs", "cz"}, {"cd"});
  auto *Pool = B.node("MaxPool", {"cd"}, {"p"}, "pool");
  OnnxBuilder::attrInts(Pool, "kernel_shape", {3, 3});
  OnnxBuilder::attrInts(Pool, "strides", {2, 2});
  OnnxBuilder::attrInts(Pool, "pads", {1, 1, 1, 1});
  B.node("QuantizeLinear", {"p", "cs", "cz"}, {"pq"});
  B.node("DequantizeLinear", {"pq", "cs", "cz"}, {"pd"});
  B.node("QuantizeLinear", {"x2", "x2s", "x2z"}, {"x2q"});
  B.node("DequantizeLinear", {"x2q", "x2s", "x2z"}, {"x2d"});
  B.node("Add", {"pd", "x2d"}, {"a"}, "add");
  B.node("Relu", {"a"}, {"ar0"});
  B.node("QuantizeLinear", {"ar0", "ys", "yz"}, {"aq"});
  B.node("DequantizeLinear", {"aq", "ys", "yz"}, {"y"});
  B.output("y", F32);
  B.node("DequantizeLinear", {"m", "ms"}, {"md"});
  B.node("Flatten", {"y"}, {"af"});
  B.initializerI64("shape", {2}, {48, 6});
  B.node("Reshape", {"af", "shape"}, {"ar"});
  B.node("MatMul", {"ar", "md"}, {"y2"});
  B.output("y2", F32);
  if (SharedConv) {
    B.node("Sigmoid", {"c"}, {"y3"});
    B.output("y3", F32);
  }
  return B.bytes();
}

std::multiset<std::string> opTypes(const rt::Model &M) {
  std::multiset<std::string> Types;
  for (const rt::OpInfo &Op : M.getOperations())
    Types.insert(Op.Type);
  return Types;
}

std::vector<rt::Tensor> inputs(bool DynamicWeight) {
  std::vector<rt::Tensor> In;
  rt::Tensor X = rt::tensor(rt::ElementType::F32, {1, 5, 12, 12}), X2 = rt::tensor(rt::ElementType::F32, {1, 8, 6, 6});
  for (size_t I = 0; I < 720; ++I)
    static_cast<float *>(X.data())[I] = 2.5f * std::sin(0.31f * static_cast<float>(I));
  for (size_t I = 0; I < 288; ++I)
    static_cast<float *>(X2.data())[I] = 3.0f * std::cos(0.17f * static_cast<float>(I));
  In.push_back(X);
  In.push_back(X2);
  if (DynamicWeight) {
    rt::Tensor W = rt::tensor(rt::ElementType::I8, {8, 5, 3, 3});
    for (size_t I = 0; I < 360; ++I)
      static_cast<int8_t *>(W.data())[I] = static_cast<int8_t>(static_cast<int>((I * 37) % 255) - 127);
    In.insert(In.begin() + 2, W);
  }
  return In;
}

std::vector<float> run(rt::Model &M, bool DynamicWeight, const char *Output) {
  rt::InferRequest R = M.createRequest();
  std::vector<rt::Tensor> In = inputs(DynamicWeight);
  R.infer(rt::make_array(In));
  R.wait();
  rt::Tensor Y = R.getOutput(Output);
  const float *P = static_cast<const float *>(Y.data());
  return std::vector<float>(P, P + Y.getShape().getElementCount().value());
}

} // namespace

TEST(FuseQdq, ConvAddMaxPoolRunOnIntegersAndMatchTheFloatPath) {
  // Gated passes run on any host here: where the fast kernel is missing, the fused op's reference runs.
  optimium::runtime::detail::ScopedIgnorePassGates Gates;
  rt::AutoInit Init;
  const std::string Bytes = qdqModel(false, false);
  rt::Model Fused = loadModelBytes(Bytes, true), Plain = loadModelBytes(Bytes, false);
  const auto Types = opTypes(Fused);
  EXPECT_EQ(Types.count("QLinearConv"), 1u);
  EXPECT_EQ(Types.count("com.microsoft.QLinearAdd"), 1u);
  EXPECT_EQ(Types.count("MaxPool"), 1u);
  EXPECT_EQ(Types.count("Conv"), 0u);
  EXPECT_EQ(Types.count("Add"), 0u);
  EXPECT_EQ(Types.count("Relu"), 0u);
  // Left: Q(x), Q(x2), DQ(y) and the MatMul's constant DequantizeLinear folded away.
  EXPECT_EQ(Types.count("QuantizeLinear"), 2u);
  EXPECT_EQ(Types.count("DequantizeLinear"), 1u);
  const std::vector<float> A = run(Fused, false, "y"), B = run(Plain, false, "y");
  ASSERT_EQ(A.size(), B.size());
  size_t Differ = 0;
  for (size_t I = 0; I < A.size(); ++I) {
    EXPECT_LE(std::fabs(A[I] - B[I]), kOutScale * 1.001f) << "element " << I; // at most one step
    Differ += A[I] != B[I];
  }
  EXPECT_LE(Differ, A.size() / 20) << "more than 5% of the outputs a step apart";
  const std::vector<float> A2 = run(Fused, false, "y2"), B2 = run(Plain, false, "y2");
  ASSERT_EQ(A2.size(), B2.size());
  for (size_t I = 0; I < A2.size(); ++I)
    EXPECT_NEAR(A2[I], B2[I], 0.2f) << "element " << I; // y2 = a (within a step of y) x small ints
}

// With the CPU gates in force (no ScopedIgnorePassGates): the int8 fusions run where an exact
// integer kernel does (AVX-512 VNNI, or AVX2: an AMD Zen 3), and the QDQ graph runs op by op in float
// where none does (ctest unit_tests_without_avx2 runs this with OPTIMIUM_RT_CPU_DISABLE=avx2). The
// outputs are the float path's within one step either way.
TEST(FuseQdq, Int8FusionsRunWhereAnExactIntegerKernelDoes) {
  rt::AutoInit Init;
  const optimium::runtime::detail::CpuFeatures &Cpu = optimium::runtime::detail::cpuFeatures();
  const bool Int8 = Cpu.avx512Vnni() || Cpu.AVX2;
  const std::string Bytes = qdqModel(false, false);
  rt::Model Fused = loadModelBytes(Bytes, true), Plain = loadModelBytes(Bytes, false);
  const auto Types = opTypes(Fused);
  EXPECT_EQ(Types.count("QLinearConv"), Int8 ? 1u : 0u) << Cpu.toString();
  EXPECT_EQ(Types.count("com.microsoft.QLinearAdd"), Int8 ? 1u : 0u) << Cpu.toString();
  EXPECT_EQ(Types.count("Conv"), Int8 ? 0u : 1u) << Cpu.toString();
  const std::vector<float> A = run(Fused, false, "y"), B = run(Plain, false, "y");
  ASSERT_EQ(A.size(), B.size());
  for (size_t I = 0; I < A.size(); ++I)
    EXPECT_LE(std::fabs(A[I] - B[I]), kOutScale * 1.001f) << "element " << I;
}

TEST(FuseQdq, ConvWithASecondFloatReaderOrAVariableWeightStaysFloat) {
  // Gated passes run on any host here: where the fast kernel is missing, the fused op's reference runs.
  optimium::runtime::detail::ScopedIgnorePassGates Gates;
  rt::AutoInit Init;
  for (bool Dynamic : {false, true}) {
    const std::string Bytes = qdqModel(!Dynamic, Dynamic);
    rt::Model Fused = loadModelBytes(Bytes, true), Plain = loadModelBytes(Bytes, false);
    const auto Types = opTypes(Fused);
    EXPECT_EQ(Types.count("QLinearConv"), 0u) << "dynamic weight " << Dynamic;
    EXPECT_EQ(Types.count("Conv"), 1u) << "dynamic weight " << Dynamic;
    // The rest still fuses, and the outputs are those of the float path.
    EXPECT_EQ(Types.count("com.microsoft.QLinearAdd"), 1u);
    const std::vector<float> A = run(Fused, Dynamic, "y"), B = run(Plain, Dynamic, "y");
    ASSERT_EQ(A.size(), B.size());
    for (size_t I = 0; I < A.size(); ++I)
      EXPECT_EQ(A[I], B[I]) << "element " << I << ", dynamic weight " << Dynamic;
  }
}

namespace {

/// x -> Q -> DQ -> Conv(DQ(w)) -> Q -> DQ -> y with w [8, 8 / Group, 3, 3] of type WType and zero
/// point WZp.
std::string convOnlyModel(int64_t Group, int WType, int WZp) {
  OnnxBuilder B(13);
  const int F32 = onnx::TensorProto_DataType_FLOAT, U8 = onnx::TensorProto_DataType_UINT8;
  B.input("x", F32, {1, 8, 6, 6});
  B.initializer("xs", {}, {0.02f});
  B.initializerRaw<uint8_t>("xz", U8, {}, {128});
  const int64_t Cg = 8 / Group;
  std::vector<uint8_t> W(static_cast<size_t>(8 * Cg * 9));
  for (size_t I = 0; I < W.size(); ++I)
    W[I] = static_cast<uint8_t>((I * 53) % 256);
  B.initializerRaw("w", WType, {8, Cg, 3, 3}, W);
  B.initializer("ws", {}, {0.003f});
  B.initializerRaw<uint8_t>("wz", WType, {}, {static_cast<uint8_t>(WZp)});
  B.initializer("ys", {}, {0.1f});
  B.initializerRaw<uint8_t>("yz", U8, {}, {0});
  B.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  B.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
  B.node("DequantizeLinear", {"w", "ws", "wz"}, {"wd"});
  auto *C = B.node("Conv", {"xd", "wd"}, {"c"}, "conv");
  OnnxBuilder::attrInts(C, "pads", {1, 1, 1, 1});
  OnnxBuilder::attrInt(C, "group", Group);
  B.node("QuantizeLinear", {"c", "ys", "yz"}, {"cq"});
  B.node("DequantizeLinear", {"cq", "ys", "yz"}, {"y"});
  B.output("y", F32);
  return B.bytes();
}

} // namespace

// Where the integer kernel would be the scalar reference or waste most of each VPDPBUSD lane (u8
// weights with a zero point other than 128 (the AVX2 kernel takes them, the VNNI one does not),
// depthwise: 1-3 of the 4 channels a step reads), the Conv stays float.
TEST(FuseQdq, OnlyConvolutionsTheIntegerKernelsRunWellAreRewritten) {
  // Gated passes run on any host here: where the fast kernel is missing, the fused op's reference runs.
  optimium::runtime::detail::ScopedIgnorePassGates Gates;
  rt::AutoInit Init;
  const int I8 = onnx::TensorProto_DataType_INT8, U8 = onnx::TensorProto_DataType_UINT8;
  struct Case {
    int64_t Group;
    int WType, WZp;
    bool Fused;
  } Cases[] = {{1, I8, 0, true}, {1, U8, 128, true}, {2, I8, 0, false /* 4 outputs per group */},
               {1, U8, 3, false}, {8, I8, 0, false /* depthwise */}, {1, I8, 1, false}};
  for (const Case &C : Cases) {
    const std::string Bytes = convOnlyModel(C.Group, C.WType, C.WZp); // not copied by loadModel: kept alive
    const rt::Model M = loadModelBytes(Bytes, true);
    const auto Types = opTypes(M);
    EXPECT_EQ(Types.count("QLinearConv"), C.Fused ? 1u : 0u)
        << "group " << C.Group << ", weight type " << C.WType << ", zero point " << C.WZp;
    EXPECT_EQ(Types.count("Conv"), C.Fused ? 0u : 1u);
  }
}
