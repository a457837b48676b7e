// The end of a ConvNeXt block: Transpose (channels back to axis 1) -> Mul (layer scale [C, 1, 1])
// -> Add (residual) runs as one TransposeScaleAdd op with the unfused graph's results; other
// perms, scales that do not broadcast per channel, and intermediates read elsewhere stay unfused;
// the pass runs on CPUs with AVX2 + FMA (its fast kernel's).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "core/CpuFeatures.h"
#include "passes/Pipeline.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

struct Variant {
  std::vector<int64_t> Dims;      ///< the channels-last input
  std::vector<int64_t> Perm;      ///< the Transpose's
  std::vector<int64_t> ScaleDims; ///< the Mul's constant
  bool MulAlsoOutput = false;     ///< the Mul's output is a graph output too
  bool ScaleFirst = true;         ///< Mul(scale, t) rather than Mul(t, scale)
};

std::vector<int64_t> outDims(const Variant &V) {
  std::vector<int64_t> D;
  for (int64_t P : V.Perm)
    D.push_back(V.Dims[static_cast<size_t>(P)]);
  return D;
}

size_t count(const std::vector<int64_t> &D) {
  size_t N = 1;
  for (int64_t X : D)
    N *= static_cast<size_t>(X);
  return N;
}

std::string model(const Variant &V) {
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, V.Dims);
  B.input("r", onnx::TensorProto_DataType_FLOAT, outDims(V));
  B.initializer("scale", V.ScaleDims, wave(count(V.ScaleDims), 0.5f, 1.0f, 0.37f, 0.1f));
  OnnxBuilder::attrInts(B.node("Transpose", {"x"}, {"t"}, "back"), "perm", V.Perm);
  B.node("Mul", V.ScaleFirst ? std::vector<std::string>{"scale", "t"} : std::vector<std::string>{"t", "scale"}, {"m"},
         "mul");
  B.node("Add", {"m", "r"}, {"a"}, "add");
  B.node("Relu", {"a"}, {"y"}, "relu");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (V.MulAlsoOutput)
    B.output("m", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

rt::Tensor filled(const std::vector<int64_t> &Dims, float Phase) {
  rt::TypedTensor<float> X = rt::tensor<float>(rt::TensorShape(std::vector<rt::Expr>(Dims.begin(), Dims.end())));
  const std::vector<float> V = wave(X.getElementCount(), 3.0f, Phase, 0.37f, 0.1f * Phase);
  std::copy(V.begin(), V.end(), static_cast<float *>(X.data()));
  return X;
}

std::vector<float> run(const std::string &Bytes, bool MemOpt, const Variant &V, std::vector<std::string> *Types) {
  rt::Model M = loadModelBytes(Bytes, MemOpt);
  if (Types)
    *Types = opTypeList(M);
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(std::vector<rt::Tensor>{filled(V.Dims, 0.5f), filled(outDims(V), 1.5f)}));
  R.wait();
  rt::Tensor Y = R.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  return std::vector<float>(P, P + Y.getElementCount());
}

void expectFused(const Variant &V, bool Fused) {
  const std::string Bytes = model(V);
  std::vector<std::string> FusedTypes, PlainTypes;
  const std::vector<float> A = run(Bytes, true, V, &FusedTypes), B = run(Bytes, false, V, &PlainTypes);
  EXPECT_EQ(PlainTypes, (std::vector<std::string>{"Transpose", "Mul", "Add", "Relu"}));
  if (Fused)
    EXPECT_EQ(FusedTypes, (std::vector<std::string>{"com.optimium.TransposeScaleAdd", "Relu"}));
  else
    EXPECT_EQ(FusedTypes, PlainTypes);
  ASSERT_EQ(A.size(), B.size());
  for (size_t I = 0; I < A.size(); ++I)
    ASSERT_NEAR(A[I], B[I], 1e-5f * (1.0f + std::fabs(B[I]))) << I;
}

} // namespace

TEST(FuseTransposeScaleAdd, ConvNeXtBlockEnd) {
  rt::AutoInit Init;
  optimium::runtime::detail::ScopedIgnorePassGates Gates;
  expectFused({{1, 9, 10, 96}, {0, 3, 1, 2}, {96, 1, 1}}, true);
  Variant Odd{{2, 5, 3, 13}, {0, 3, 1, 2}, {1, 13, 1, 1}}; // batch 2, odd channels, [1, C, 1, 1], Mul(t, s)
  Odd.ScaleFirst = false;
  expectFused(Odd, true);
  expectFused({{2, 33, 12}, {0, 2, 1}, {12, 1}}, true); // a 1-D signal
}

TEST(FuseTransposeScaleAdd, OtherShapesStayAsTheyAre) {
  rt::AutoInit Init;
  optimium::runtime::detail::ScopedIgnorePassGates Gates;
  // Not the channels-first perm, a scale over the last axis, a scalar scale, the Mul's output read
  // elsewhere.
  expectFused({{1, 4, 6, 8}, {0, 3, 2, 1}, {8, 1, 1}}, false);
  expectFused({{1, 4, 6, 8}, {0, 3, 1, 2}, {6}}, false);
  expectFused({{1, 4, 6, 8}, {0, 3, 1, 2}, {1}}, false);
  Variant Read{{1, 4, 6, 8}, {0, 3, 1, 2}, {8, 1, 1}};
  Read.MulAlsoOutput = true;
  expectFused(Read, false);
}

// With the gates on: the fusion fires where its AVX2 kernel runs (unit_tests_without_avx2 runs this
// with avx2 hidden).
TEST(FuseTransposeScaleAdd, FiresWhereTheCpuHasAvx2Fma) {
  rt::AutoInit Init;
  const Variant V{{1, 4, 6, 8}, {0, 3, 1, 2}, {8, 1, 1}};
  std::vector<std::string> Types;
  run(model(V), true, V, &Types);
  if (optimium::runtime::detail::cpuFeatures().avx2Fma())
    EXPECT_EQ(Types, (std::vector<std::string>{"com.optimium.TransposeScaleAdd", "Relu"}));
  else
    EXPECT_EQ(Types, (std::vector<std::string>{"Transpose", "Mul", "Add", "Relu"}));
}
