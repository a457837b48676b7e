// Transpose -> MatMul(B) fusion: attention scores Q x K^T written with an explicit last-two-axes
// Transpose run as one MatMul reading K in place, for a one-row query (the decoder-step GEMV) and a
// multi-row one (the GEMM), with the same results as the unfused graph; a Transpose whose output
// is also a graph output stays.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

constexpr int64_t H = 3, S = 29, D = 20;

/// q [1, H, Rows, D], k [1, H, S, D] -> Transpose(k, 0 1 3 2) -> MatMul(q, kT) -> y [1, H, Rows, S].
std::string scoresModel(int64_t Rows, bool TransposeIsOutput) {
  OnnxBuilder B(17);
  B.input("q", onnx::TensorProto_DataType_FLOAT, {1, H, Rows, D});
  B.input("k", onnx::TensorProto_DataType_FLOAT, {1, H, S, D});
  auto *T = B.node("Transpose", {"k"}, {"kt"}, "transpose_k");
  OnnxBuilder::attrInts(T, "perm", {0, 1, 3, 2});
  B.node("MatMul", {"q", "kt"}, {"y"}, "scores");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (TransposeIsOutput)
    B.output("kt", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

struct RunResult {
  size_t Ops;
  std::vector<float> Y;
};

RunResult run(const std::string &Bytes, int64_t Rows, bool MemOpt) {
  rt::Model M = loadModelBytes(Bytes, MemOpt);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> Q = rt::tensor<float>({1, H, Rows, D}), K = rt::tensor<float>({1, H, S, D});
  const std::vector<float> QV = wave(static_cast<size_t>(H * Rows * D), 1.0f, 0.2f);
  const std::vector<float> KV = wave(static_cast<size_t>(H * S * D), 0.8f, 1.1f);
  std::copy(QV.begin(), QV.end(), static_cast<float *>(Q.data()));
  std::copy(KV.begin(), KV.end(), static_cast<float *>(K.data()));
  std::vector<rt::Tensor> In{Q, K};
  R.infer(rt::make_array(In));
  R.wait();
  rt::Tensor Y = R.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  return {M.getOperations().size(), std::vector<float>(P, P + Y.getShape().getElementCount().value())};
}

std::vector<float> expected(int64_t Rows) {
  const std::vector<float> QV = wave(static_cast<size_t>(H * Rows * D), 1.0f, 0.2f);
  const std::vector<float> KV = wave(static_cast<size_t>(H * S * D), 0.8f, 1.1f);
  std::vector<float> Y(static_cast<size_t>(H * Rows * S));
  for (int64_t Hh = 0; Hh < H; ++Hh)
    for (int64_t I = 0; I < Rows; ++I)
      for (int64_t J = 0; J < S; ++J) {
        double Sum = 0;
        for (int64_t C = 0; C < D; ++C)
          Sum += static_cast<double>(QV[(Hh * Rows + I) * D + C]) * KV[(Hh * S + J) * D + C];
        Y[(Hh * Rows + I) * S + J] = static_cast<float>(Sum);
      }
  return Y;
}

} // namespace

TEST(FuseTransposeMatMul, KeyTransposeFoldsIntoTheScoresMatMul) {
  rt::AutoInit Init;
  for (int64_t Rows : {1, 7}) {
    const std::string Bytes = scoresModel(Rows, false);
    const RunResult Fused = run(Bytes, Rows, true), Plain = run(Bytes, Rows, false);
    EXPECT_EQ(Plain.Ops, 2u) << "rows " << Rows;
    EXPECT_EQ(Fused.Ops, 1u) << "one MatMul reading k transposed (rows " << Rows << ")";
    const std::vector<float> Want = expected(Rows);
    ASSERT_EQ(Fused.Y.size(), Want.size());
    for (size_t I = 0; I < Want.size(); ++I) {
      EXPECT_NEAR(Fused.Y[I], Want[I], 1e-4) << "rows " << Rows << " at " << I;
      EXPECT_NEAR(Plain.Y[I], Want[I], 1e-4) << "rows " << Rows << " at " << I;
    }
  }
}

TEST(FuseTransposeMatMul, ATransposeThatIsAlsoAGraphOutputStays) {
  rt::AutoInit Init;
  const RunResult R = run(scoresModel(1, true), 1, true);
  EXPECT_EQ(R.Ops, 2u);
  const std::vector<float> Want = expected(1);
  for (size_t I = 0; I < Want.size(); ++I)
    EXPECT_NEAR(R.Y[I], Want[I], 1e-4) << I;
}
