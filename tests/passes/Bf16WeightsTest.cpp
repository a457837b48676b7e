// Weights stored as bfloat16 (passes/Bf16Weights): MatMul(x, Cast<float>(W_bf16)) (+ bias) runs as
// one MatMul over the bf16 constant (a Gemm likewise), with the outputs of the same model whose weights are the
// float32 values of W (GEMM rows and the one-row GEMV); a Cast with another reader stays, and
// nothing changes when every intermediate must stay readable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "Optimium/Runtime.h"
#include "Optimium/Runtime/Types/BFloat16.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

constexpr int64_t K = 1030, N = 70; // K over one packed block (gemmKcForWeights), N not a multiple of a panel

std::vector<uint16_t> weightBits() {
  std::vector<uint16_t> Bits;
  for (float V : wave(K * N, 0.2f, 0.1f))
    Bits.push_back(rt::bfloat16::fromFloat(V));
  return Bits;
}

/// x[Rows, K] -> MatMul(., W) -> Add(b) -> y. Bf16: W is Cast(to=FLOAT) of a bf16 initializer;
/// otherwise W is a float32 initializer with the same (bf16-exact) values. CastReader makes the
/// Cast's output a graph output too.
std::string linearModel(int64_t Rows, bool Bf16, bool CastReader = false) {
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {Rows, K});
  const std::vector<uint16_t> Bits = weightBits();
  if (Bf16) {
    B.initializerRaw("w16", onnx::TensorProto_DataType_BFLOAT16, {K, N}, Bits);
    OnnxBuilder::attrInt(B.node("Cast", {"w16"}, {"w"}, "cast"), "to", onnx::TensorProto_DataType_FLOAT);
  } else {
    std::vector<float> W;
    for (uint16_t V : Bits)
      W.push_back(rt::bfloat16::toFloat(V));
    B.initializer("w", {K, N}, W);
  }
  B.initializer("b", {N}, wave(N, 0.5f, 0.7f));
  B.node("MatMul", {"x", "w"}, {"m"}, "mm");
  B.node("Add", {"m", "b"}, {"y"}, "bias");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (CastReader)
    B.output("w", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

/// x[Rows, K] -> Gemm(x, W^T, b; transB=1, alpha 0.5) -> y, W stored [N, K] as bf16 + Cast, or
/// as the same float32 values.
std::string gemmModel(int64_t Rows, bool Bf16) {
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {Rows, K});
  const std::vector<uint16_t> Bits = weightBits(); // read as [N, K]
  if (Bf16) {
    B.initializerRaw("w16", onnx::TensorProto_DataType_BFLOAT16, {N, K}, Bits);
    OnnxBuilder::attrInt(B.node("Cast", {"w16"}, {"w"}, "cast"), "to", onnx::TensorProto_DataType_FLOAT);
  } else {
    std::vector<float> W;
    for (uint16_t V : Bits)
      W.push_back(rt::bfloat16::toFloat(V));
    B.initializer("w", {N, K}, W);
  }
  B.initializer("b", {N}, wave(N, 0.5f, 0.7f));
  auto *G = B.node("Gemm", {"x", "w", "b"}, {"y"}, "gemm");
  OnnxBuilder::attrInt(G, "transB", 1);
  auto *Alpha = G->add_attribute();
  Alpha->set_name("alpha");
  Alpha->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  Alpha->set_f(0.5f);
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

std::vector<float> run(const std::string &Bytes, int64_t Rows, bool MemOpt, std::vector<std::string> *Types) {
  rt::Model M = loadModelBytes(Bytes, MemOpt);
  *Types = opTypeList(M);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>(rt::TensorShape({Rows, K}));
  const std::vector<float> XV = wave(static_cast<size_t>(Rows * K), 1.0f, 0.4f);
  std::copy(XV.begin(), XV.end(), static_cast<float *>(X.data()));
  std::vector<rt::Tensor> In{X};
  R.infer(rt::make_array(In));
  R.wait();
  rt::Tensor Y = R.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  return std::vector<float>(P, P + Y.getShape().getElementCount().value());
}

void expectClose(const std::vector<float> &A, const std::vector<float> &B) {
  ASSERT_EQ(A.size(), B.size());
  for (size_t I = 0; I < A.size(); ++I)
    EXPECT_NEAR(A[I], B[I], 1e-4f * std::max(1.0f, std::fabs(B[I]))) << "element " << I;
}

} // namespace

TEST(Bf16Weights, CastMatMulBiasBecomesOneMatMul) {
  for (int64_t Rows : {1, 9}) { // the GEMV, and GEMM rows
    SCOPED_TRACE("rows " + std::to_string(Rows));
    std::vector<std::string> Types, RefTypes;
    const std::vector<float> Y = run(linearModel(Rows, true), Rows, true, &Types);
    const std::vector<float> Ref = run(linearModel(Rows, false), Rows, true, &RefTypes);
    EXPECT_EQ(Types, std::vector<std::string>{"MatMul"});
    EXPECT_EQ(RefTypes, std::vector<std::string>{"MatMul"});
    expectClose(Y, Ref);
  }
}

TEST(Bf16Weights, CastWithAnotherReaderStays) {
  std::vector<std::string> Types, RefTypes;
  const std::vector<float> Y = run(linearModel(4, true, /*CastReader=*/true), 4, true, &Types);
  const std::vector<float> Ref = run(linearModel(4, false), 4, true, &RefTypes);
  EXPECT_EQ(std::count(Types.begin(), Types.end(), "Cast"), 1);
  EXPECT_EQ(std::count(Types.begin(), Types.end(), "MatMul"), 1);
  expectClose(Y, Ref);
}

TEST(Bf16Weights, NotAppliedWhenIntermediatesStayReadable) {
  std::vector<std::string> Types, RefTypes;
  const std::vector<float> Y = run(linearModel(3, true), 3, /*MemOpt=*/false, &Types);
  const std::vector<float> Ref = run(linearModel(3, false), 3, true, &RefTypes);
  EXPECT_EQ(std::count(Types.begin(), Types.end(), "Cast"), 1);
  expectClose(Y, Ref);
}

TEST(Bf16Weights, GemmReadsTheBf16Constant) {
  for (int64_t Rows : {1, 6}) { // a classifier head at batch 1 (the GEMV), and GEMM rows
    SCOPED_TRACE("rows " + std::to_string(Rows));
    std::vector<std::string> Types, RefTypes;
    const std::vector<float> Y = run(gemmModel(Rows, true), Rows, true, &Types);
    const std::vector<float> Ref = run(gemmModel(Rows, false), Rows, true, &RefTypes);
    EXPECT_EQ(Types, std::vector<std::string>{"Gemm"});
    expectClose(Y, Ref);
  }
}

// The internal bf16-weights attribute on a MatMul whose B is float32 (a hand-written model) is a
// TypeError naming both types, not a read of float32 bytes as bfloat16.
TEST(Bf16Weights, TheAttributeWithFloatWeightsIsATypeError) {
  rt::AutoInit Init;
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2, K});
  B.initializer("w", {K, N}, wave(K * N, 0.2f, 0.1f));
  OnnxBuilder::attrInt(B.node("MatMul", {"x", "w"}, {"y"}, "mm"), "optimium.bf16_weights", 1);
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  try {
    rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
    FAIL() << "expected an error";
  } catch (const rt::TypeError &E) {
    EXPECT_NE(std::string(E.what()).find("node 'mm' (MatMul): bfloat16 weights need a float32 A and a 2-D bfloat16 B, got f32 and f32"),
              std::string::npos)
        << E.what();
  }
}
