// ModelLoadOptions::Precision: the default is float32 and bit-identical to naming it; bfloat16
// compute changes a MatMul's and a Conv's results only within bfloat16's error (and, on a CPU
// without AVX512_BF16, not at all: the model runs float32); a bad value is an InvalidArgument.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "core/CpuFeatures.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

rt::Model loadBytes(const std::string &Bytes, const rt::ModelLoadOptions &O) {
  static std::vector<std::unique_ptr<std::string>> Keep; // the model points into the bytes
  Keep.push_back(std::make_unique<std::string>(Bytes));
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Keep.back()->data()), Keep.back()->size(), O);
}

std::vector<float> randomValues(size_t N, unsigned Seed) {
  std::mt19937 Rng(Seed);
  std::uniform_real_distribution<float> D(-1.0f, 1.0f);
  std::vector<float> V(N);
  for (float &X : V)
    X = D(Rng);
  return V;
}

/// a [20, 100] -> MatMul(w1 [100, 40]) + bias -> y1; x [1, 32, 12, 12] -> Conv(w2 [96, 32, 3, 3],
/// stride 2, pads 1: an im2col GEMM) -> Relu -> y2.
std::string matMulAndConv() {
  OnnxBuilder B(13);
  const int F32 = onnx::TensorProto_DataType_FLOAT;
  B.input("a", F32, {20, 100});
  B.input("x", F32, {1, 32, 12, 12});
  B.initializer("w1", {100, 40}, randomValues(4000, 1));
  B.initializer("b1", {40}, randomValues(40, 2));
  B.initializer("w2", {96, 32, 3, 3}, randomValues(96 * 288, 3));
  B.node("MatMul", {"a", "w1"}, {"p"});
  B.node("Add", {"p", "b1"}, {"y1"});
  auto *Conv = B.node("Conv", {"x", "w2"}, {"c"});
  OnnxBuilder::attrInts(Conv, "pads", {1, 1, 1, 1});
  OnnxBuilder::attrInts(Conv, "strides", {2, 2});
  B.node("Relu", {"c"}, {"y2"});
  B.output("y1", F32, {20, 40});
  B.output("y2", F32, {1, 96, 6, 6});
  return B.bytes();
}

std::vector<std::vector<float>> run(rt::ComputePrecision *P) {
  rt::ModelLoadOptions O;
  O.ThreadCount = 2;
  if (P)
    O.Precision = *P;
  rt::Model M = loadBytes(matMulAndConv(), O);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> A = rt::tensor<float>(rt::TensorShape({20, 100}));
  rt::TypedTensor<float> X = rt::tensor<float>(rt::TensorShape({1, 32, 12, 12}));
  const std::vector<float> AV = randomValues(2000, 4), XV = randomValues(32 * 144, 5);
  std::memcpy(A.data(), AV.data(), AV.size() * sizeof(float));
  std::memcpy(X.data(), XV.data(), XV.size() * sizeof(float));
  R.infer(rt::make_array(std::vector<rt::Tensor>{A, X}));
  R.wait();
  std::vector<std::vector<float>> Out;
  for (size_t I = 0; I < 2; ++I) {
    rt::TypedTensor<float> Y(R.getOutput(I));
    Out.emplace_back(Y.data(), Y.data() + Y.getElementCount());
  }
  return Out;
}

} // namespace

TEST(ComputePrecision, DefaultIsFloat32BitForBit) {
  rt::AutoInit Init;
  EXPECT_EQ(rt::ModelLoadOptions().Precision, rt::ComputePrecision::Float32);
  EXPECT_STREQ(rt::toString(rt::ComputePrecision::Float32), "float32");
  EXPECT_STREQ(rt::toString(rt::ComputePrecision::BFloat16), "bfloat16");
  rt::ComputePrecision F32 = rt::ComputePrecision::Float32;
  const auto Default = run(nullptr), Named = run(&F32);
  for (size_t O = 0; O < Default.size(); ++O) {
    ASSERT_EQ(Default[O].size(), Named[O].size());
    EXPECT_EQ(std::memcmp(Default[O].data(), Named[O].data(), Default[O].size() * sizeof(float)), 0) << "output " << O;
  }
}

TEST(ComputePrecision, BFloat16StaysWithinItsRoundingError) {
  rt::AutoInit Init;
  rt::ComputePrecision F32 = rt::ComputePrecision::Float32, Bf16 = rt::ComputePrecision::BFloat16;
  const auto Ref = run(&F32), Got = run(&Bf16);
  const bool Active = optimium::runtime::detail::cpuFeatures().AVX512BF16;
  for (size_t O = 0; O < Ref.size(); ++O) {
    ASSERT_EQ(Ref[O].size(), Got[O].size());
    double Scale = 0, MaxDiff = 0;
    for (size_t I = 0; I < Ref[O].size(); ++I) {
      Scale = std::max(Scale, std::fabs(static_cast<double>(Ref[O][I])));
      MaxDiff = std::max(MaxDiff, std::fabs(static_cast<double>(Ref[O][I]) - Got[O][I]));
    }
    // Sums of 100-288 products of values in [-1, 1], each operand rounded to 8 significant bits.
    EXPECT_LE(MaxDiff, 1e-2 * Scale) << "output " << O;
    if (Active) // the bf16 kernels ran: some element differs from float32
      EXPECT_GT(MaxDiff, 0.0) << "output " << O;
    else // no AVX512_BF16: the option is accepted and the model runs float32
      EXPECT_EQ(MaxDiff, 0.0) << "output " << O;
  }
}

TEST(ComputePrecision, AnUnknownValueIsAnInvalidArgument) {
  rt::AutoInit Init;
  rt::ModelLoadOptions O;
  O.Precision = static_cast<rt::ComputePrecision>(7);
  EXPECT_THROW(loadBytes(matMulAndConv(), O), rt::InvalidArgumentError);
}
