// Conv (+ Relu) -> 2x2 MaxPool fusion: MNIST's two conv/pool pairs run as two
// com.optimium.FusedConvMaxPool operations with the unfused graph's outputs (at 1 and 2 threads),
// and the pair stays apart where the fused kernel does not apply: a padded, overlapping or
// ceil-mode pool, an Indices output, a convolution output read elsewhere, a strided convolution or
// one with more output channels than the small kernel takes. A FusedConvMaxPool node written by
// hand with a bad pool attribute is a ModelError naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "passes/Pipeline.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

enum class Variant {
  Mnist,         ///< conv1 -> relu -> pool -> conv2 -> relu -> pool -> flatten -> gemm
  PaddedPool,    ///< the second pool pads: only the first pair fuses
  Pool3x3,       ///< the second pool is 3x3 stride 2
  CeilPool,      ///< the second pool rounds up
  PoolIndices,   ///< the second pool's Indices output is read
  SharedConv,    ///< the second conv's output is also a graph output
  StridedConv,   ///< the second conv has strides 2
  WideConv,      ///< the second conv has 80 output channels
};

constexpr int64_t H = 28, M2Default = 32;

std::string model(Variant V) {
  const int64_t M2 = V == Variant::WideConv ? 80 : M2Default;
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 1, H, H});
  B.initializer("w1", {16, 1, 5, 5}, wave(16 * 25, 0.3f, 0.1f));
  B.initializer("b1", {16}, wave(16, 0.1f, 0.7f));
  B.initializer("w2", {M2, 16, 5, 5}, wave(static_cast<size_t>(M2 * 16 * 25), 0.05f, 0.4f));
  B.initializer("b2", {M2}, wave(static_cast<size_t>(M2), 0.1f, 1.3f));
  OnnxBuilder::attrInts(B.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {2, 2, 2, 2});
  B.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto *P1 = B.node("MaxPool", {"r1"}, {"p1"}, "pool1");
  OnnxBuilder::attrInts(P1, "kernel_shape", {2, 2});
  OnnxBuilder::attrInts(P1, "strides", {2, 2});
  auto *C2 = B.node("Conv", {"p1", "w2", "b2"}, {"c2"}, "conv2");
  OnnxBuilder::attrInts(C2, "pads", {2, 2, 2, 2});
  if (V == Variant::StridedConv)
    OnnxBuilder::attrInts(C2, "strides", {2, 2});
  B.node("Relu", {"c2"}, {"r2"}, "relu2");
  std::vector<std::string> PoolOut{"p2"};
  if (V == Variant::PoolIndices)
    PoolOut.push_back("idx");
  auto *P2 = B.node("MaxPool", {"r2"}, PoolOut, "pool2");
  OnnxBuilder::attrInts(P2, "kernel_shape", V == Variant::Pool3x3 ? std::vector<int64_t>{3, 3} : std::vector<int64_t>{2, 2});
  OnnxBuilder::attrInts(P2, "strides", {2, 2});
  if (V == Variant::PaddedPool)
    OnnxBuilder::attrInts(P2, "pads", {1, 1, 1, 1});
  if (V == Variant::CeilPool)
    OnnxBuilder::attrInt(P2, "ceil_mode", 1);
  B.node("Flatten", {"p2"}, {"f"}, "flatten");
  B.output("f", onnx::TensorProto_DataType_FLOAT);
  if (V == Variant::PoolIndices)
    B.output("idx", onnx::TensorProto_DataType_INT64);
  if (V == Variant::SharedConv)
    B.output("r2", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

struct RunResult {
  size_t Ops = 0, Fused = 0;
  std::vector<float> Y;
};

RunResult run(const std::string &Bytes, bool MemOpt, int Threads) {
  rt::Model Mdl = loadModelBytes(Bytes, MemOpt, Threads);
  RunResult R;
  for (const rt::OpInfo &Op : Mdl.getOperations()) {
    ++R.Ops;
    R.Fused += Op.Type == "com.optimium.FusedConvMaxPool";
  }
  rt::InferRequest Req = Mdl.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>({1, 1, H, H});
  const std::vector<float> XV = wave(static_cast<size_t>(H * H), 1.0f, 0.0f);
  std::copy(XV.begin(), XV.end(), static_cast<float *>(X.data()));
  std::vector<rt::Tensor> In{X};
  Req.infer(rt::make_array(In));
  Req.wait();
  rt::Tensor Y = Req.getOutput("f");
  const float *P = static_cast<const float *>(Y.data());
  R.Y.assign(P, P + Y.getShape().getElementCount().value());
  return R;
}

/// Fused operations, with the output checked against the unfused graph (every intermediate kept):
/// the same convolution kernel and the same max, so the values agree exactly.
size_t fusedPairs(Variant V, int Threads = 1) {
  const std::string Bytes = model(V);
  const RunResult Fused = run(Bytes, true, Threads), Plain = run(Bytes, false, Threads);
  EXPECT_EQ(Plain.Fused, 0u);
  EXPECT_EQ(Fused.Y.size(), Plain.Y.size());
  float MaxAbs = 0;
  for (size_t I = 0; I < Fused.Y.size() && I < Plain.Y.size(); ++I) {
    EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 1e-5f * std::max(1.0f, std::fabs(Plain.Y[I]))) << I;
    MaxAbs = std::max(MaxAbs, std::fabs(Fused.Y[I]));
  }
  EXPECT_GT(MaxAbs, 0.0f);
  return Fused.Fused;
}

} // namespace

TEST(FuseConvMaxPool, MnistPairsRunAsTwoOps) {
  rt::AutoInit Init;
  // Gated passes run on any host here: where the fast kernel is missing, the fused op's reference runs.
  optimium::runtime::detail::ScopedIgnorePassGates Gates;
  EXPECT_EQ(fusedPairs(Variant::Mnist, 1), 2u);
  EXPECT_EQ(fusedPairs(Variant::Mnist, 2), 2u);
  const RunResult R = run(model(Variant::Mnist), true, 1);
  EXPECT_EQ(R.Ops, 3u); // fused conv1, fused conv2, Flatten
}

TEST(FuseConvMaxPool, PairsTheKernelDoesNotTakeStayApart) {
  rt::AutoInit Init;
  // Gated passes run on any host here: where the fast kernel is missing, the fused op's reference runs.
  optimium::runtime::detail::ScopedIgnorePassGates Gates;
  for (Variant V : {Variant::PaddedPool, Variant::Pool3x3, Variant::CeilPool, Variant::PoolIndices,
                    Variant::SharedConv, Variant::StridedConv, Variant::WideConv}) {
    SCOPED_TRACE(static_cast<int>(V));
    EXPECT_EQ(fusedPairs(V), 1u); // the first pair still fuses
  }
}

TEST(FuseConvMaxPool, BadPoolAttributeIsAModelError) {
  rt::AutoInit Init;
  OnnxBuilder B(13);
  B.model().add_opset_import()->set_domain("com.optimium");
  B.model().mutable_opset_import(1)->set_version(1);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 1, 8, 8});
  B.initializer("w", {4, 1, 3, 3}, wave(36, 0.3f, 0.1f));
  auto *N = B.node("FusedConvMaxPool", {"x", "w"}, {"y"}, "fused");
  N->set_domain("com.optimium");
  OnnxBuilder::attrInts(N, "pads", {1, 1, 1, 1});
  OnnxBuilder::attrInts(N, "optimium.pool_kernel", {2});
  OnnxBuilder::attrInts(N, "optimium.pool_strides", {2, 2});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  try {
    loadModelBytes(B.bytes());
    FAIL() << "expected a ModelError";
  } catch (const rt::ModelError &E) {
    EXPECT_NE(std::string(E.what()).find("optimium.pool_kernel"), std::string::npos) << E.what();
    EXPECT_NE(std::string(E.what()).find("fused"), std::string::npos) << E.what();
  }
}

// The bias check Conv, ConvTranspose and FusedConvMaxPool share (checkChannelBias): a bias of the
// wrong length is a ShapeError naming it and the channel count, for Conv and the fused node alike.
TEST(FuseConvMaxPool, WrongBiasLengthIsAShapeError) {
  rt::AutoInit Init;
  for (const bool Fused : {false, true}) {
    SCOPED_TRACE(Fused);
    OnnxBuilder B(13);
    if (Fused) {
      B.model().add_opset_import()->set_domain("com.optimium");
      B.model().mutable_opset_import(1)->set_version(1);
    }
    B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 1, 8, 8});
    B.initializer("w", {4, 1, 3, 3}, wave(36, 0.3f, 0.1f));
    B.initializer("b", {3}, wave(3, 0.1f, 0.2f));
    auto *N = B.node(Fused ? "FusedConvMaxPool" : "Conv", {"x", "w", "b"}, {"y"}, "conv");
    if (Fused) {
      N->set_domain("com.optimium");
      OnnxBuilder::attrInts(N, "optimium.pool_kernel", {2, 2});
      OnnxBuilder::attrInts(N, "optimium.pool_strides", {2, 2});
    }
    B.output("y", onnx::TensorProto_DataType_FLOAT);
    try {
      loadModelBytes(B.bytes());
      FAIL() << "expected a ShapeError";
    } catch (const rt::ShapeError &E) {
      EXPECT_NE(std::string(E.what()).find("bias 3 must be 1-D"), std::string::npos) << E.what();
      EXPECT_NE(std::string(E.what()).find("output channel (4)"), std::string::npos) << E.what();
    }
  }
}
