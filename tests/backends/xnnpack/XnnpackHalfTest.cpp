// The XNNPACK extension's float16 operators (this libxnnpack's f16 convolution, fully connected,
// max / global average pooling, add, multiply, clamp, leaky relu, hardswish) against the native
// backend, which computes float16 nodes in float32 and rounds each output once.
//
// Tolerance, from float16 rounding: XNNPACK's f16 microkernels on x86 (F16C/FMA) convert to float32
// for each multiply-add and round the accumulator back to float16 after every step (its
// xnn_f16_gemm_minmax_ukernel_*__avx2_broadcast: vfmadd132ps, then vcvtps2ph / vcvtph2ps inside the
// K loop), emulating ARM's native fp16 arithmetic. So an output summing K products carries K
// roundings, each at most u/2 (u = 2^-11) of a partial sum bounded by S = sum |x_k w_k| (+ |bias|).
// Taken as independent, their sum has a standard deviation below sqrt(K/3) * u/2 * S; the tests
// allow (3 + sqrt(3K)) * u * S per output (6 standard deviations, plus the final roundings of both
// sides), with S computed exactly by the native backend on the float32 graph with |x| and |w|.
// The worst case K * u * S is far looser and would hide a wrong weight layout; this bound does not.
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Types/Float16.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "backends/xnnpack/XnnpackTestUtil.h"

namespace rt = optimium::runtime;
using optimium_test::OnnxBuilder;

namespace {

constexpr int F16 = onnx::TensorProto::FLOAT16, F32 = onnx::TensorProto::FLOAT;
constexpr double kU = 1.0 / 2048.0; // float16's unit roundoff 2^-11

const auto *Env = ::testing::AddGlobalTestEnvironment(new xnnpack_test::Runtime);
using xnnpack_test::cpu;
using xnnpack_test::xnnpack;

/// Float16-representable values (so the float32 graph holds exactly the float16 graph's values).
std::vector<float> halfValues(size_t N, float Lo, float Hi, unsigned Seed) {
  std::mt19937 G(Seed);
  std::uniform_real_distribution<float> D(Lo, Hi);
  std::vector<float> V(N);
  for (float &X : V)
    X = rt::float16::toFloat(rt::float16::fromFloat(D(G)));
  return V;
}

/// How a test graph is built: values of one float type; Abs (the bound graph) takes |value| of every
/// weight and leaves out the activations.
struct Spec {
  int Type = F16;
  bool Abs = false;
};

/// A weight initializer of the spec's type.
void weights(OnnxBuilder &B, const Spec &S, const std::string &Name, const std::vector<int64_t> &Dims,
             std::vector<float> V) {
  if (S.Abs)
    for (float &X : V)
      X = std::fabs(X);
  if (S.Type == F32) {
    B.initializer(Name, Dims, V);
    return;
  }
  std::vector<uint16_t> H(V.size());
  for (size_t I = 0; I < V.size(); ++I)
    H[I] = rt::float16::fromFloat(V[I]);
  B.initializerRaw(Name, F16, Dims, H);
}

struct HalfCase {
  const char *Label;
  std::vector<std::vector<int64_t>> Inputs;        ///< graph inputs x0, x1, ...
  size_t Terms;                                     ///< K: products (or terms) summed per output
  std::function<void(OnnxBuilder &, const Spec &)> Build; ///< nodes from x0.. to y
  size_t Nodes = 1;                                 ///< operations after the passes, all on XNNPack
};

std::string model(const HalfCase &C, const Spec &S) {
  OnnxBuilder B;
  for (size_t I = 0; I < C.Inputs.size(); ++I)
    B.input("x" + std::to_string(I), S.Type, C.Inputs[I]);
  C.Build(B, S);
  B.output("y");
  return B.bytes();
}

rt::Model load(const std::string &Bytes, const std::vector<rt::DeviceID> &Devices, bool Strict) {
  rt::ModelLoadOptions O;
  O.Devices = Devices;
  O.Strict = Strict;
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), O);
}

rt::Tensor tensorOf(const std::vector<float> &V, const std::vector<int64_t> &Dims, bool Half) {
  rt::Tensor T = rt::tensor(Half ? rt::ElementType::F16 : rt::ElementType::F32, rt::TensorShape::fromDims(Dims));
  for (size_t I = 0; I < V.size(); ++I) {
    if (Half)
      static_cast<uint16_t *>(T.data())[I] = rt::float16::fromFloat(V[I]);
    else
      static_cast<float *>(T.data())[I] = V[I];
  }
  return T;
}

std::vector<float> floatsOf(const rt::Tensor &T) {
  std::vector<float> V(T.getElementCount());
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = T.getType() == rt::ElementType::F16 ? rt::float16::toFloat(static_cast<const uint16_t *>(T.data())[I])
                                               : static_cast<const float *>(T.data())[I];
  return V;
}

std::vector<float> run(rt::Model &M, const std::vector<rt::Tensor> &In) {
  rt::InferRequest R = M.createRequest();
  R.infer(In);
  R.wait();
  return floatsOf(R.getOutput(0));
}

/// Runs C on XNNPack in float16, on the native CPU in float16, and the bound graph; checks the
/// placement and the tolerance. Returns the largest |xnnpack - native| / (u * S) seen.
double checkCase(const HalfCase &C, unsigned Seed) {
  SCOPED_TRACE(C.Label);
  const rt::DeviceID Xnn = xnnpack();
  const std::string Half = model(C, {F16, false}), Bound = model(C, {F32, true});
  rt::Model OnXnn = load(Half, {Xnn}, /*Strict=*/true), OnCpu = load(Half, {cpu()}, true),
            AbsCpu = load(Bound, {cpu()}, true);
  EXPECT_EQ(OnXnn.getOperations().size(), C.Nodes);
  for (const rt::OpInfo &Op : OnXnn.getOperations())
    EXPECT_EQ(Op.Device, Xnn) << Op.Type << " '" << Op.Name << "'";
  std::vector<rt::Tensor> HalfIn, AbsIn;
  for (size_t I = 0; I < C.Inputs.size(); ++I) {
    size_t N = 1;
    for (int64_t D : C.Inputs[I])
      N *= static_cast<size_t>(D);
    std::vector<float> V = halfValues(N, -2.0f, 2.0f, Seed + static_cast<unsigned>(I));
    HalfIn.push_back(tensorOf(V, C.Inputs[I], true));
    for (float &X : V)
      X = std::fabs(X);
    AbsIn.push_back(tensorOf(V, C.Inputs[I], false));
  }
  const std::vector<float> X = run(OnXnn, HalfIn), N = run(OnCpu, HalfIn), S = run(AbsCpu, AbsIn);
  EXPECT_EQ(X.size(), N.size());
  EXPECT_EQ(S.size(), N.size());
  const double Allowed = 3.0 + std::sqrt(3.0 * static_cast<double>(C.Terms));
  double Worst = 0.0;
  size_t Bad = 0;
  for (size_t I = 0; I < X.size() && I < S.size(); ++I) {
    const double Err = std::fabs(static_cast<double>(X[I]) - N[I]), Scale = kU * std::max<double>(S[I], 1e-6);
    if (!(Err <= Allowed * Scale) && Bad++ < 5)
      ADD_FAILURE() << "output " << I << ": xnnpack " << X[I] << ", native " << N[I] << ", |diff| " << Err
                    << " > (3 + sqrt(3K)) u S = " << Allowed * Scale << " (K " << C.Terms << ", S " << S[I] << ")";
    Worst = std::max(Worst, Err / Scale);
  }
  EXPECT_EQ(Bad, 0u) << "of " << X.size() << " outputs";
  std::printf("%-34s K %4zu: max |xnnpack - native| = %.2f u S (allowed %.1f u S)\n", C.Label, C.Terms, Worst, Allowed);
  return Worst;
}

/// Conv x0 -> y (+ a fused activation or residual when asked) with random weights and bias.
HalfCase convCase(const char *Label, int64_t C, int64_t OC, int64_t H, int64_t K, int64_t Stride, int64_t Group,
                  const char *Act, bool Residual) {
  HalfCase Out;
  Out.Label = Label;
  Out.Inputs = {{1, C, H, H}};
  const int64_t Pad = K / 2, OH = (H + 2 * Pad - K) / Stride + 1;
  if (Residual)
    Out.Inputs.push_back({1, OC, OH, OH});
  Out.Terms = static_cast<size_t>(C / Group * K * K + 1 + (Residual ? 1 : 0));
  // FuseConvActivation folds a Relu / Clip into a float16 Conv (XNNPACK's f16 convolution then
  // clamps its output: the fused path); the residual Add stays a node of its own (FuseConvResidual
  // takes float32 Convs only), and so does an activation after it.
  const bool ClampAct = Act && (std::string(Act) == "Relu" || std::string(Act) == "Clip");
  Out.Nodes = 1 + (Residual ? 1 : 0) + (Act && (Residual || !ClampAct) ? 1 : 0);
  const std::string A = Act ? Act : "";
  Out.Build = [=](OnnxBuilder &B, const Spec &S) {
    const float Range = 1.0f / std::sqrt(static_cast<float>(C / Group * K * K));
    weights(B, S, "w", {OC, C / Group, K, K}, halfValues(static_cast<size_t>(OC * C / Group * K * K), -Range, Range, 7));
    weights(B, S, "b", {OC}, halfValues(static_cast<size_t>(OC), -0.5f, 0.5f, 8));
    onnx::NodeProto *N = B.node("Conv", {"x0", "w", "b"}, {Residual || !A.empty() ? "c" : "y"});
    OnnxBuilder::attrInts(N, "pads", {Pad, Pad, Pad, Pad});
    OnnxBuilder::attrInts(N, "strides", {Stride, Stride});
    OnnxBuilder::attrInt(N, "group", Group);
    std::string Last = "c";
    if (Residual) {
      B.node("Add", {"c", "x1"}, {A.empty() ? "y" : "r"});
      Last = "r";
    }
    if (A.empty())
      return;
    if (S.Abs) { // the bound graph leaves the activation out (1-Lipschitz: it does not grow errors)
      B.node("Identity", {Last}, {"y"});
      return;
    }
    if (A == "Clip") {
      weights(B, S, "lo", {}, {0.0f});
      weights(B, S, "hi", {}, {6.0f});
      B.node("Clip", {Last, "lo", "hi"}, {"y"});
    } else {
      B.node(A, {Last}, {"y"});
    }
  };
  return Out;
}

} // namespace

TEST(XnnpackHalf, ConvolutionsMatchNativeWithinFp16Rounding) {
  ASSERT_EQ(xnnpack().getPlatform(), rt::PlatformKind::XNNPack) << "the XNNPACK extension is not loaded";
  const HalfCase Cases[] = {
      convCase("conv 3x3", 8, 16, 12, 3, 1, 1, nullptr, false),
      convCase("conv 3x3 deep (K 577)", 64, 24, 8, 3, 1, 1, nullptr, false),
      convCase("conv 3x3 stride 2 groups 2 + Relu", 8, 16, 13, 3, 2, 2, "Relu", false),
      convCase("depthwise 3x3 + Clip(0, 6)", 32, 32, 10, 3, 1, 32, "Clip", false),
      convCase("pointwise 1x1 + residual Add", 32, 24, 7, 1, 1, 1, nullptr, true),
  };
  double Worst = 0.0;
  for (size_t I = 0; I < sizeof(Cases) / sizeof(Cases[0]); ++I)
    Worst = std::max(Worst, checkCase(Cases[I], 100 + static_cast<unsigned>(I)));
  // Errors do grow with K as fp16 accumulation implies: a conv with K in the hundreds is well
  // above one rounding, so the comparison does see XNNPACK's float16 arithmetic.
  EXPECT_GT(Worst, 1.0);
}

TEST(XnnpackHalf, GemmMatMulPoolsAndElementwiseMatchNative) {
  ASSERT_EQ(xnnpack().getPlatform(), rt::PlatformKind::XNNPack);
  std::vector<HalfCase> Cases;
  Cases.push_back({"Gemm transB + bias", {{3, 96}}, 97, [](OnnxBuilder &B, const Spec &S) {
                     weights(B, S, "w", {40, 96}, halfValues(40 * 96, -0.1f, 0.1f, 3));
                     weights(B, S, "b", {40}, halfValues(40, -1.0f, 1.0f, 4));
                     OnnxBuilder::attrInt(B.node("Gemm", {"x0", "w", "b"}, {"y"}), "transB", 1);
                   }});
  Cases.push_back({"MatMul [K, N]", {{2, 5, 64}}, 64, [](OnnxBuilder &B, const Spec &S) {
                     weights(B, S, "w", {64, 24}, halfValues(64 * 24, -0.2f, 0.2f, 5));
                     B.node("MatMul", {"x0", "w"}, {"y"});
                   }});
  Cases.push_back({"MaxPool 3x3 stride 2 pad 1", {{1, 16, 11, 11}}, 1, [](OnnxBuilder &B, const Spec &) {
                     onnx::NodeProto *N = B.node("MaxPool", {"x0"}, {"y"});
                     OnnxBuilder::attrInts(N, "kernel_shape", {3, 3});
                     OnnxBuilder::attrInts(N, "strides", {2, 2});
                     OnnxBuilder::attrInts(N, "pads", {1, 1, 1, 1});
                   }});
  Cases.push_back({"GlobalAveragePool 7x7", {{2, 24, 7, 7}}, 49, [](OnnxBuilder &B, const Spec &) {
                     B.node("GlobalAveragePool", {"x0"}, {"y"});
                   }});
  Cases.push_back({"Add broadcast", {{2, 8, 5, 5}, {1, 8, 1, 1}}, 1,
                   [](OnnxBuilder &B, const Spec &) { B.node("Add", {"x0", "x1"}, {"y"}); }});
  Cases.push_back({"Mul by a constant", {{3, 40}}, 1, [](OnnxBuilder &B, const Spec &S) {
                     weights(B, S, "k", {40}, halfValues(40, -3.0f, 3.0f, 6));
                     B.node("Mul", {"x0", "k"}, {"y"});
                   }});
  Cases.push_back({"Relu", {{4, 33}}, 1, [](OnnxBuilder &B, const Spec &) { B.node("Relu", {"x0"}, {"y"}); }});
  Cases.push_back({"LeakyRelu 0.1", {{4, 33}}, 1, [](OnnxBuilder &B, const Spec &) {
                     onnx::NodeProto *N = B.node("LeakyRelu", {"x0"}, {"y"});
                     auto *A = N->add_attribute();
                     A->set_name("alpha");
                     A->set_type(onnx::AttributeProto_AttributeType_FLOAT);
                     A->set_f(0.1f);
                   }});
  Cases.push_back({"HardSwish", {{4, 33}}, 1, [](OnnxBuilder &B, const Spec &) {
                     B.node("HardSwish", {"x0"}, {"y"});
                   }});
  unsigned Seed = 200;
  for (const HalfCase &C : Cases)
    checkCase(C, Seed += 10);
}

TEST(XnnpackHalf, WhatThisXnnpackHasNoFloat16OperatorForStaysOnTheCpu) {
  const rt::DeviceID Xnn = xnnpack();
  ASSERT_EQ(Xnn.getPlatform(), rt::PlatformKind::XNNPack);
  // No f16 sigmoid, softmax, average pooling, subtract in libxnnpack 0.0~git20220216.
  for (const char *Op : {"Sigmoid", "Softmax", "AveragePool", "Sub"}) {
    SCOPED_TRACE(Op);
    OnnxBuilder B;
    B.input("x0", F16, {1, 4, 6, 6});
    const bool Two = std::strcmp(Op, "Sub") == 0;
    if (Two)
      B.input("x1", F16, {1, 4, 6, 6});
    onnx::NodeProto *N = B.node(Op, Two ? std::vector<std::string>{"x0", "x1"} : std::vector<std::string>{"x0"}, {"y"});
    if (std::strcmp(Op, "AveragePool") == 0)
      OnnxBuilder::attrInts(N, "kernel_shape", {2, 2});
    B.output("y");
    const std::string Bytes = B.bytes();
    rt::Model M = load(Bytes, {Xnn, cpu()}, false);
    ASSERT_EQ(M.getOperations().size(), 1u);
    EXPECT_EQ(M.getOperations()[0].Device, cpu());
    rt::Model Native = load(Bytes, {cpu()}, true);
    std::vector<rt::Tensor> In;
    for (int I = 0; I < (Two ? 2 : 1); ++I)
      In.push_back(tensorOf(halfValues(144, -2.0f, 2.0f, 9 + I), {1, 4, 6, 6}, true));
    EXPECT_EQ(run(M, In), run(Native, In));
    // Strict with XNNPack alone: a clear error naming the op.
    try {
      load(Bytes, {Xnn}, true);
      ADD_FAILURE() << "a Strict load placed a float16 " << Op << " on XNNPack";
    } catch (const rt::Exception &E) {
      EXPECT_NE(std::string(E.what()).find(Op), std::string::npos) << E.what();
    }
  }
}

TEST(XnnpackHalf, WrongShapeAtRunTimeIsAClearError) {
  // Claimed with static shapes; the executor checks the input shape before the kernel runs.
  const rt::DeviceID Xnn = xnnpack();
  ASSERT_EQ(Xnn.getPlatform(), rt::PlatformKind::XNNPack);
  const HalfCase C = convCase("conv", 4, 4, 6, 3, 1, 1, nullptr, false);
  const std::string Bytes = model(C, {F16, false});
  rt::Model M = load(Bytes, {Xnn}, true);
  rt::InferRequest R = M.createRequest();
  EXPECT_THROW(
      {
        R.infer({tensorOf(halfValues(4 * 7 * 7, -1, 1, 3), {1, 4, 7, 7}, true)});
        R.wait();
      },
      rt::Exception);
}
