// Dynamically quantized MatMuls (onnxruntime.quantization.quantize_dynamic's graph): DynamicQuantizeLinear
// -> MatMulInteger -> Cast -> Mul(a_scale * b_scale) -> Add(bias) becomes DynamicQuantizeLinear ->
// com.microsoft MatMulIntegerToFloat with outputs bit-identical to the unfused ops, for one row (a
// decoder step) and many, s8 and u8 weights; a Cast with a second reader keeps the graph as it is.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "passes/Pipeline.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

constexpr int64_t K = 96, N = 70;

/// x[Rows, K] -> DQL -> MatMulInteger(xq, W, xzp, wzp) -> Cast -> Mul(., Mul(xs, ws)) -> Add(b) -> y.
std::string dynamicQuantModel(int64_t Rows, bool U8Weights, bool CastReader = false) {
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {Rows, K});
  std::vector<int8_t> W8;
  std::vector<uint8_t> WU;
  for (int64_t I = 0; I < K * N; ++I) {
    const int V = static_cast<int>(std::lround(100.0 * std::sin(0.37 * static_cast<double>(I))));
    W8.push_back(static_cast<int8_t>(V));
    WU.push_back(static_cast<uint8_t>(V + 128));
  }
  if (U8Weights) {
    B.initializerRaw("w", onnx::TensorProto_DataType_UINT8, {K, N}, WU);
    B.initializerRaw("wzp", onnx::TensorProto_DataType_UINT8, {}, std::vector<uint8_t>{131});
  } else {
    B.initializerRaw("w", onnx::TensorProto_DataType_INT8, {K, N}, W8);
    B.initializerRaw("wzp", onnx::TensorProto_DataType_INT8, {}, std::vector<int8_t>{0});
  }
  B.initializer("ws", {}, {0.0123f});
  std::vector<float> Bias;
  for (int64_t J = 0; J < N; ++J)
    Bias.push_back(0.1f * std::cos(static_cast<float>(J)));
  B.initializer("b", {N}, Bias);
  B.node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xzp"}, "dql");
  B.node("Mul", {"xs", "ws"}, {"scales"}, "scales");
  B.node("MatMulInteger", {"xq", "w", "xzp", "wzp"}, {"acc"}, "mmi");
  OnnxBuilder::attrInt(B.node("Cast", {"acc"}, {"accf"}, "cast"), "to", onnx::TensorProto_DataType_FLOAT);
  B.node("Mul", {"accf", "scales"}, {"m"}, "scale");
  B.node("Add", {"b", "m"}, {"y"}, "bias");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (CastReader)
    B.output("accf", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

std::vector<float> run(const std::string &Bytes, int64_t Rows, bool MemOpt, std::vector<std::string> *Types) {
  rt::Model M = loadModelBytes(Bytes, MemOpt);
  *Types = opTypeList(M);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>(rt::TensorShape({Rows, K}));
  float *P = static_cast<float *>(X.data());
  for (int64_t I = 0; I < Rows * K; ++I)
    P[I] = 2.0f * std::sin(0.11f * static_cast<float>(I) + 0.5f) + 0.3f;
  std::vector<rt::Tensor> In{X};
  R.infer(rt::make_array(In));
  R.wait();
  rt::Tensor Y = R.getOutput("y");
  const float *Out = static_cast<const float *>(Y.data());
  return std::vector<float>(Out, Out + Y.getShape().getElementCount().value());
}

} // namespace

TEST(FuseDynamicQuantMatMul, FusedOutputsAreBitIdentical) {
  // Gated passes run on any host here: where the fast kernel is missing, the fused op's reference runs.
  optimium::runtime::detail::ScopedIgnorePassGates Gates;
  for (bool U8 : {false, true})
    for (int64_t Rows : {1, 9}) {
      SCOPED_TRACE(std::string(U8 ? "u8" : "s8") + " weights, rows " + std::to_string(Rows));
      std::vector<std::string> Types, RefTypes;
      const std::vector<float> Y = run(dynamicQuantModel(Rows, U8), Rows, true, &Types);
      const std::vector<float> Ref = run(dynamicQuantModel(Rows, U8), Rows, /*MemOpt=*/false, &RefTypes);
      EXPECT_EQ(Types, (std::vector<std::string>{"DynamicQuantizeLinear", "com.microsoft.MatMulIntegerToFloat"}));
      EXPECT_EQ(RefTypes.size(), 6u);
      ASSERT_EQ(Y.size(), Ref.size());
      EXPECT_EQ(std::memcmp(Y.data(), Ref.data(), Y.size() * sizeof(float)), 0);
    }
}

TEST(FuseDynamicQuantMatMul, CastWithAnotherReaderIsLeftAlone) {
  std::vector<std::string> Types;
  run(dynamicQuantModel(3, false, /*CastReader=*/true), 3, true, &Types);
  EXPECT_EQ(std::count(Types.begin(), Types.end(), "MatMulInteger"), 1);
  EXPECT_EQ(std::count(Types.begin(), Types.end(), "com.microsoft.MatMulIntegerToFloat"), 0);
}

// A MatMulIntegerToFloat written in the model (ONNX Runtime's contrib op) with a b_scale of the wrong
// length is a clear error naming the input, never a crash or a read past the scales.
TEST(FuseDynamicQuantMatMul, BadScaleLengthIsAClearError) {
  rt::AutoInit Init;
  OnnxBuilder B(17);
  B.model().add_opset_import()->set_domain("com.microsoft");
  B.model().mutable_opset_import(B.model().opset_import_size() - 1)->set_version(1);
  B.input("a", onnx::TensorProto_DataType_UINT8, {2, 8});
  std::vector<int8_t> W(8 * 5, 3);
  B.initializerRaw("w", onnx::TensorProto_DataType_INT8, {8, 5}, W);
  B.initializer("as", {}, {0.5f});
  B.initializer("bs", {3}, {0.1f, 0.2f, 0.3f}); // 3 values for 5 columns
  B.node("MatMulIntegerToFloat", {"a", "w", "as", "bs"}, {"y"}, "mitf")->set_domain("com.microsoft");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  rt::Model M = loadModelBytes(Bytes);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<uint8_t> A = rt::tensor<uint8_t>(rt::TensorShape({2, 8}));
  std::fill(static_cast<uint8_t *>(A.data()), static_cast<uint8_t *>(A.data()) + 16, 7);
  std::vector<rt::Tensor> In{A};
  try {
    R.infer(rt::make_array(In));
    R.wait();
    FAIL() << "expected an error";
  } catch (const rt::Exception &E) {
    EXPECT_NE(std::string(E.what()).find("b_scale must have 1 or 5 values, got 3"), std::string::npos) << E.what();
  }
}

// A b_zero_point of the wrong length (3 for 5 columns) is a clear error naming it, from the packed
// kernels (VNNI, AVX2: at load, where they pack B) or the reference (at the run).
TEST(FuseDynamicQuantMatMul, BadZeroPointLengthIsAClearError) {
  rt::AutoInit Init;
  OnnxBuilder B(17);
  B.model().add_opset_import()->set_domain("com.microsoft");
  B.model().mutable_opset_import(B.model().opset_import_size() - 1)->set_version(1);
  B.input("a", onnx::TensorProto_DataType_UINT8, {2, 8});
  std::vector<int8_t> W(8 * 5, 3);
  B.initializerRaw("w", onnx::TensorProto_DataType_INT8, {8, 5}, W);
  B.initializer("as", {}, {0.5f});
  B.initializer("bs", {}, {0.1f});
  B.initializerRaw<uint8_t>("az", onnx::TensorProto_DataType_UINT8, {}, {3});
  B.initializerRaw<int8_t>("bz", onnx::TensorProto_DataType_INT8, {3}, {1, 2, 3}); // 3 values for 5 columns
  B.node("MatMulIntegerToFloat", {"a", "w", "as", "bs", "az", "bz"}, {"y"}, "mitf")->set_domain("com.microsoft");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  try {
    rt::Model M = loadModelBytes(Bytes);
    rt::InferRequest R = M.createRequest();
    rt::TypedTensor<uint8_t> A = rt::tensor<uint8_t>(rt::TensorShape({2, 8}));
    std::fill(static_cast<uint8_t *>(A.data()), static_cast<uint8_t *>(A.data()) + 16, 7);
    std::vector<rt::Tensor> In{A};
    R.infer(rt::make_array(In));
    R.wait();
    FAIL() << "expected an error";
  } catch (const rt::Exception &E) {
    const std::string Msg = E.what();
    EXPECT_TRUE(Msg.find("b_zero_point must have 1 or 5 values, got 3") != std::string::npos ||
                Msg.find("zero points must be scalars or per row (A) / per column (B)") != std::string::npos)
        << Msg;
  }
}
