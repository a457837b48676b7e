// LayerNorm over NCHW channels: Transpose -> LayerNormalization -> Transpose (ConvNeXt's
// LayerNorm2d as PyTorch exports it) runs as one LayerNormChannels op with the unfused graph's
// results; without the Transpose back (another perm, the LayerNorm's output read elsewhere) the
// first Transpose and the LayerNorm become a channels-last LayerNormChannels on AVX2 CPUs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "core/CpuFeatures.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

struct Variant {
  std::vector<int64_t> Dims;              ///< input, channels at axis 1
  std::vector<int64_t> ToLast, Back;      ///< the two perms
  bool LnAlsoOutput = false;              ///< the LayerNorm's output is a graph output too
  bool TransposeAlsoOutput = false;       ///< the first Transpose's output is a graph output too
  bool WithBias = true;
};

std::string model(const Variant &V) {
  const int64_t C = V.Dims[1];
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, V.Dims);
  B.initializer("scale", {C}, wave(static_cast<size_t>(C), 0.5f, 1.0f, 0.37f, 0.1f));
  B.initializer("bias", {C}, wave(static_cast<size_t>(C), 0.2f, 2.0f, 0.37f, 0.2f));
  OnnxBuilder::attrInts(B.node("Transpose", {"x"}, {"t"}, "to_last"), "perm", V.ToLast);
  auto *Ln = B.node("LayerNormalization", V.WithBias ? std::vector<std::string>{"t", "scale", "bias"}
                                                      : std::vector<std::string>{"t", "scale"},
                    {"n"}, "ln");
  OnnxBuilder::attrInt(Ln, "axis", -1);
  auto *A = Ln->add_attribute();
  A->set_name("epsilon");
  A->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  A->set_f(1e-6f);
  OnnxBuilder::attrInts(B.node("Transpose", {"n"}, {"b"}, "back"), "perm", V.Back);
  B.node("Relu", {"b"}, {"y"}, "relu");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (V.LnAlsoOutput)
    B.output("n", onnx::TensorProto_DataType_FLOAT);
  if (V.TransposeAlsoOutput)
    B.output("t", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

std::vector<float> run(const std::string &Bytes, bool MemOpt, const std::vector<int64_t> &Dims,
                       std::vector<std::string> *Types) {
  rt::Model M = loadModelBytes(Bytes, MemOpt);
  if (Types)
    *Types = opTypeList(M);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>(rt::TensorShape(std::vector<rt::Expr>(Dims.begin(), Dims.end())));
  const std::vector<float> XV = wave(X.getElementCount(), 3.0f, 0.5f, 0.37f, 0.05f);
  std::copy(XV.begin(), XV.end(), static_cast<float *>(X.data()));
  R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
  R.wait();
  rt::Tensor Y = R.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  return std::vector<float>(P, P + Y.getElementCount());
}

/// Fused: the whole chain becomes LayerNormChannels; Last: only the first Transpose and the
/// LayerNormalization do (channels_last, where the CPU has AVX2 + FMA), the second Transpose stays.
enum class Expect { Fused, Last, Unfused };

void expectFused(const Variant &V, Expect E) {
  const std::string Bytes = model(V);
  std::vector<std::string> FusedTypes, PlainTypes;
  const std::vector<float> A = run(Bytes, true, V.Dims, &FusedTypes), B = run(Bytes, false, V.Dims, &PlainTypes);
  EXPECT_EQ(PlainTypes, (std::vector<std::string>{"Transpose", "LayerNormalization", "Transpose", "Relu"}));
  if (E == Expect::Fused)
    EXPECT_EQ(FusedTypes, (std::vector<std::string>{"com.optimium.LayerNormChannels", "Relu"}));
  else if (E == Expect::Last && optimium::runtime::detail::cpuFeatures().avx2Fma())
    EXPECT_EQ(FusedTypes, (std::vector<std::string>{"com.optimium.LayerNormChannels", "Transpose", "Relu"}));
  else
    EXPECT_EQ(FusedTypes, PlainTypes);
  ASSERT_EQ(A.size(), B.size());
  for (size_t I = 0; I < A.size(); ++I)
    ASSERT_NEAR(A[I], B[I], 2e-5f * (1.0f + std::fabs(B[I]))) << I;
}

} // namespace

TEST(FuseLayerNormChannels, Nchw) {
  rt::AutoInit Init;
  expectFused({{1, 96, 9, 10}, {0, 2, 3, 1}, {0, 3, 1, 2}}, Expect::Fused);
  expectFused({{2, 5, 3, 70}, {0, 2, 3, 1}, {0, 3, 1, 2}}, Expect::Fused); // batch 2, odd channels, partial tiles
  Variant NoBias{{1, 16, 4, 4}, {0, 2, 3, 1}, {0, 3, 1, 2}};
  NoBias.WithBias = false;
  expectFused(NoBias, Expect::Fused);
}

TEST(FuseLayerNormChannels, ChannelsOfA1DSignal) {
  rt::AutoInit Init;
  expectFused({{2, 12, 33}, {0, 2, 1}, {0, 2, 1}}, Expect::Fused);
}

TEST(FuseLayerNormChannels, OtherShapesStayAsTheyAre) {
  rt::AutoInit Init;
  // Not the inverse perm (the result is not NCHW) or the LayerNorm's output read elsewhere: the
  // LayerNorm still runs channels last, the second Transpose on its result; the first Transpose's
  // output read elsewhere: nothing fuses.
  expectFused({{1, 8, 4, 6}, {0, 2, 3, 1}, {0, 3, 2, 1}}, Expect::Last);
  Variant Read{{1, 8, 4, 6}, {0, 2, 3, 1}, {0, 3, 1, 2}};
  Read.LnAlsoOutput = true;
  expectFused(Read, Expect::Last);
  Variant First{{1, 8, 4, 6}, {0, 2, 3, 1}, {0, 3, 1, 2}};
  First.TransposeAlsoOutput = true;
  expectFused(First, Expect::Unfused);
}
