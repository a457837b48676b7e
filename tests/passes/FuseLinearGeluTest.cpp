// MatMul + bias and GELU fusion (erf form; the tanh form as one Gelu at the end): a Linear -> GELU -> Linear block (as PyTorch exports it op by
// op) runs as MatMul(+bias+Gelu), MatMul(+bias) with the same outputs as the unfused graph, and
// nothing is fused when every intermediate must stay readable or an intermediate has other readers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

std::vector<float> sineSamples(size_t N, float Scale) {
  std::vector<float> V(N);
  for (size_t I = 0; I < N; ++I)
    V[I] = Scale * std::sin(static_cast<float>(I) * 0.61f + 0.3f);
  return V;
}

/// x[2, 5, 16] -> MatMul(w1 16x24) -> Add(b1) -> GELU chain -> MatMul(w2 24x8) -> Add(b2) -> y.
/// HalfFirst writes GELU as (x * 0.5) * (1 + erf(x / sqrt 2)); Extra makes the Erf's output a
/// graph output too (a second reader inside the GELU chain). ViaIdentity routes the biases and
/// the GELU's constants through Identity nodes, as PyTorch exports initializers it deduplicated.
std::string linearGeluModel(bool HalfFirst, bool Extra, bool ViaIdentity = false) {
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 5, 16});
  B.initializer("w1", {16, 24}, sineSamples(16 * 24, 0.3f));
  B.initializer("b1", {24}, sineSamples(24, 0.2f));
  B.initializer("w2", {24, 8}, sineSamples(24 * 8, 0.25f));
  B.initializer("b2", {8}, sineSamples(8, 0.1f));
  B.initializer("sqrt2", {}, {1.4142135f});
  B.initializer("one", {}, {1.0f});
  B.initializer("half", {}, {0.5f});
  std::string B1 = "b1", B2 = "b2", Sqrt2 = "sqrt2";
  if (ViaIdentity) {
    for (std::string *Name : {&B1, &B2, &Sqrt2}) {
      B.node("Identity", {*Name}, {*Name + "_shared"}, "identity_" + *Name);
      *Name += "_shared";
    }
  }
  B.node("MatMul", {"x", "w1"}, {"m1"}, "mm1");
  B.node("Add", {B1, "m1"}, {"h"}, "bias1"); // bias first, as torch exports it
  B.node("Div", {"h", Sqrt2}, {"d"}, "div");
  B.node("Erf", {"d"}, {"e"}, "erf");
  B.node("Add", {"e", "one"}, {"a"}, "add1");
  if (HalfFirst) {
    B.node("Mul", {"h", "half"}, {"hh"}, "halfx");
    B.node("Mul", {"hh", "a"}, {"g"}, "mulg");
  } else {
    B.node("Mul", {"h", "a"}, {"ha"}, "mulx");
    B.node("Mul", {"ha", "half"}, {"g"}, "mulhalf");
  }
  B.node("MatMul", {"g", "w2"}, {"m2"}, "mm2");
  B.node("Add", {"m2", B2}, {"y"}, "bias2");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (Extra)
    B.output("e", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

struct RunResult {
  size_t Ops;
  std::vector<float> Y;
};

/// Runs the model on x = sineSamples(elements of Shape, XScale); Types (optional) gets its op types.
RunResult runModel(const std::string &Bytes, bool MemOpt, std::vector<std::string> *Types = nullptr,
                   std::vector<rt::Expr> Shape = {2, 5, 16}, float XScale = 1.5f) {
  rt::Model M = loadModelBytes(Bytes, MemOpt);
  if (Types)
    *Types = opTypeList(M);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>(rt::TensorShape(std::move(Shape)));
  const std::vector<float> XV = sineSamples(static_cast<size_t>(X.getShape().getElementCount().value()), XScale);
  std::copy(XV.begin(), XV.end(), static_cast<float *>(X.data()));
  std::vector<rt::Tensor> In{X};
  R.infer(rt::make_array(In));
  R.wait();
  rt::Tensor Y = R.getOutput("y");
  const float *P = static_cast<const float *>(Y.data());
  return {M.getOperations().size(), std::vector<float>(P, P + Y.getShape().getElementCount().value())};
}

/// The same block computed directly in double.
std::vector<float> expected() {
  const std::vector<float> X = sineSamples(160, 1.5f), W1 = sineSamples(16 * 24, 0.3f), B1 = sineSamples(24, 0.2f),
                           W2 = sineSamples(24 * 8, 0.25f), B2 = sineSamples(8, 0.1f);
  std::vector<float> Y(10 * 8);
  for (int R = 0; R < 10; ++R) {
    double G[24];
    for (int J = 0; J < 24; ++J) {
      double H = B1[J];
      for (int K = 0; K < 16; ++K)
        H += static_cast<double>(X[R * 16 + K]) * W1[K * 24 + J];
      G[J] = 0.5 * H * (1.0 + std::erf(H / std::sqrt(2.0)));
    }
    for (int J = 0; J < 8; ++J) {
      double V = B2[J];
      for (int K = 0; K < 24; ++K)
        V += G[K] * W2[K * 8 + J];
      Y[R * 8 + J] = static_cast<float>(V);
    }
  }
  return Y;
}

} // namespace

TEST(FuseLinearGelu, BiasAddsAndTheErfChainFold) {
  rt::AutoInit Init;
  const std::vector<float> Want = expected();
  for (bool HalfFirst : {false, true}) {
    const std::string Bytes = linearGeluModel(HalfFirst, false);
    const RunResult Fused = runModel(Bytes, true), Plain = runModel(Bytes, false);
    EXPECT_EQ(Plain.Ops, 9u) << "HalfFirst " << HalfFirst;
    EXPECT_EQ(Fused.Ops, 2u) << "MatMul+bias+Gelu, MatMul+bias (HalfFirst " << HalfFirst << ")";
    ASSERT_EQ(Fused.Y.size(), Want.size());
    for (size_t I = 0; I < Want.size(); ++I) {
      EXPECT_NEAR(Fused.Y[I], Want[I], 1e-4) << I;
      EXPECT_NEAR(Plain.Y[I], Want[I], 1e-4) << I;
    }
  }
}

TEST(FuseLinearGelu, ConstantsThroughIdentityAreConstantsAndFuse) {
  rt::AutoInit Init;
  // Identity of an initializer folds to it at load (RemoveFoldedNodes), so the bias Adds and the
  // GELU chain that read the Identity outputs fuse as if they read the initializers.
  const std::vector<float> Want = expected();
  const std::string Bytes = linearGeluModel(false, false, /*ViaIdentity=*/true);
  const RunResult Fused = runModel(Bytes, true), Plain = runModel(Bytes, false);
  EXPECT_EQ(Plain.Ops, 9u) << "the three Identity nodes run nothing";
  EXPECT_EQ(Fused.Ops, 2u);
  ASSERT_EQ(Fused.Y.size(), Want.size());
  for (size_t I = 0; I < Want.size(); ++I) {
    EXPECT_NEAR(Fused.Y[I], Want[I], 1e-4) << I;
    EXPECT_NEAR(Plain.Y[I], Want[I], 1e-4) << I;
  }
}

TEST(FuseLinearGelu, AnIntermediateWithAnotherReaderStaysUnfused) {
  rt::AutoInit Init;
  // The Erf's output is also a graph output: the GELU chain stays as it is; both Linears fuse.
  const RunResult R = runModel(linearGeluModel(false, true), true);
  EXPECT_EQ(R.Ops, 7u);
  const std::vector<float> Want = expected();
  for (size_t I = 0; I < Want.size(); ++I)
    EXPECT_NEAR(R.Y[I], Want[I], 1e-4) << I;
}

TEST(FuseLinearGelu, MultiplyByInverseSqrt2AlsoFolds) {
  rt::AutoInit Init;
  // x * 0.70710677 instead of x / 1.4142135 (another exporter's spelling).
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {3, 7});
  B.initializer("k", {}, {0.70710677f});
  B.initializer("one", {}, {1.0f});
  B.initializer("half", {}, {0.5f});
  B.node("Mul", {"k", "x"}, {"d"}, "scale");
  B.node("Erf", {"d"}, {"e"}, "erf");
  B.node("Add", {"one", "e"}, {"a"}, "add1");
  B.node("Mul", {"a", "x"}, {"xa"}, "mulx");
  B.node("Mul", {"half", "xa"}, {"y"}, "mulhalf");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  rt::Model M = rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
  EXPECT_EQ(M.getOperations().size(), 1u);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>({3, 7});
  const std::vector<float> XV = sineSamples(21, 3.0f);
  std::copy(XV.begin(), XV.end(), static_cast<float *>(X.data()));
  std::vector<rt::Tensor> In{X};
  R.infer(rt::make_array(In));
  R.wait();
  const float *Y = static_cast<const float *>(R.getOutput("y").data());
  for (size_t I = 0; I < XV.size(); ++I) {
    const double V = XV[I];
    EXPECT_NEAR(Y[I], 0.5 * V * (1.0 + std::erf(V / std::sqrt(2.0))), 1e-5) << I;
  }
}

TEST(FuseLinearGelu, AMatMulWithThreeInputsIsRejectedUnlessFused) {
  rt::AutoInit Init;
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 4});
  B.initializer("w", {4, 3}, sineSamples(12, 1.0f));
  B.initializer("b", {3}, sineSamples(3, 1.0f));
  B.node("MatMul", {"x", "w", "b"}, {"y"}, "mm");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  EXPECT_THROW(rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size()), rt::ModelError);
}

TEST(FuseLinearGelu, MatMulTakesOnlyAnErfGeluThatIsItsSoleReader) {
  rt::AutoInit Init;
  // Three MatMuls of x, each followed by a Gelu: the erf form folds into its MatMul; the tanh form
  // and a Gelu whose input is also a graph output stay separate ops (and those two MatMuls, which
  // read the same x, merge into one).
  OnnxBuilder B(20);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {5, 16});
  for (int I = 0; I < 3; ++I)
    B.initializer("w" + std::to_string(I), {16, 24}, sineSamples(16 * 24, 0.3f + 0.1f * static_cast<float>(I)));
  B.node("MatMul", {"x", "w0"}, {"m0"}, "mm0");
  B.node("Gelu", {"m0"}, {"y0"}, "gelu0");
  B.node("MatMul", {"x", "w1"}, {"m1"}, "mm1");
  auto *Tanh = B.node("Gelu", {"m1"}, {"y1"}, "gelu1");
  auto *A = Tanh->add_attribute();
  A->set_name("approximate");
  A->set_type(onnx::AttributeProto_AttributeType_STRING);
  A->set_s("tanh");
  B.node("MatMul", {"x", "w2"}, {"m2"}, "mm2");
  B.node("Gelu", {"m2"}, {"y2"}, "gelu2");
  for (const char *Y : {"y0", "y1", "y2", "m2"})
    B.output(Y, onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  rt::Model M = rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
  EXPECT_EQ(M.getOperations().size(), 4u);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>({5, 16});
  const std::vector<float> XV = sineSamples(80, 2.0f);
  std::copy(XV.begin(), XV.end(), static_cast<float *>(X.data()));
  std::vector<rt::Tensor> In{X};
  R.infer(rt::make_array(In));
  R.wait();
  for (int I = 0; I < 3; ++I) {
    const std::vector<float> W = sineSamples(16 * 24, 0.3f + 0.1f * static_cast<float>(I));
    const float *Y = static_cast<const float *>(R.getOutput("y" + std::to_string(I)).data());
    for (int Row = 0; Row < 5; ++Row)
      for (int J = 0; J < 24; ++J) {
        double H = 0;
        for (int K = 0; K < 16; ++K)
          H += static_cast<double>(XV[Row * 16 + K]) * W[K * 24 + J];
        const double Want = I == 1 ? 0.5 * H * (1.0 + std::tanh(0.7978845608028654 * (H + 0.044715 * H * H * H)))
                                   : 0.5 * H * (1.0 + std::erf(H / std::sqrt(2.0)));
        EXPECT_NEAR(Y[Row * 24 + J], Want, 1e-4) << I << " " << Row << " " << J;
      }
  }
}

// ---- The tanh approximation (GPT-2's gelu_new, torch's approximate="tanh") ----
namespace {

enum class Cube { MulOuter, MulInner, Pow };

/// x [2, 5, 24] -> 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + C2 * x^3))) -> y, op by op as GPT-2
/// exports it; Cube picks how x^3 is written, HalfFirst the (0.5 * x) * (1 + t) tail, Extra makes
/// the Tanh's output a graph output too.
std::string tanhGeluModel(Cube C, bool HalfFirst, bool Extra, float C2 = 0.044715f) {
  OnnxBuilder B(17);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 5, 24});
  B.initializer("c2", {}, {C2});
  B.initializer("c1", {}, {0.7978845608f});
  B.initializer("one", {}, {1.0f});
  B.initializer("half", {}, {0.5f});
  B.initializer("three", {}, {3.0f});
  if (C == Cube::Pow) {
    B.node("Pow", {"x", "three"}, {"x3"}, "cube");
  } else {
    B.node("Mul", {"x", "x"}, {"x2"}, "square");
    B.node("Mul", C == Cube::MulOuter ? std::vector<std::string>{"x", "x2"} : std::vector<std::string>{"x2", "x"},
           {"x3"}, "cube");
  }
  B.node("Mul", {"c2", "x3"}, {"s"}, "scale3");
  B.node("Add", {"x", "s"}, {"inner"}, "inner");
  B.node("Mul", {"c1", "inner"}, {"arg"}, "scale1");
  B.node("Tanh", {"arg"}, {"t"}, "tanh");
  B.node("Add", {"one", "t"}, {"a"}, "add1");
  if (HalfFirst) {
    B.node("Mul", {"x", "half"}, {"hx"}, "halfx");
    B.node("Mul", {"a", "hx"}, {"y"}, "mulg");
  } else {
    B.node("Mul", {"x", "a"}, {"xa"}, "mulx");
    B.node("Mul", {"half", "xa"}, {"y"}, "mulhalf");
  }
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  if (Extra)
    B.output("t", onnx::TensorProto_DataType_FLOAT);
  return B.bytes();
}

RunResult runTanhModel(const std::string &Bytes, bool MemOpt, std::vector<std::string> *Types = nullptr) {
  return runModel(Bytes, MemOpt, Types, {2, 5, 24}, 4.0f);
}

} // namespace

TEST(FuseLinearGelu, TheTanhChainBecomesOneGelu) {
  rt::AutoInit Init;
  const std::vector<float> X = sineSamples(240, 4.0f);
  for (Cube C : {Cube::MulOuter, Cube::MulInner, Cube::Pow})
    for (bool HalfFirst : {false, true}) {
      const std::string Bytes = tanhGeluModel(C, HalfFirst, false);
      std::vector<std::string> Types;
      const RunResult Fused = runTanhModel(Bytes, true, &Types), Plain = runTanhModel(Bytes, false);
      ASSERT_EQ(Types, std::vector<std::string>{"Gelu"}) << static_cast<int>(C) << " " << HalfFirst;
      EXPECT_GE(Plain.Ops, 8u); // eight or nine ops unfused
      ASSERT_EQ(Fused.Y.size(), X.size());
      for (size_t I = 0; I < X.size(); ++I) {
        const double V = X[I], Want = 0.5 * V * (1.0 + std::tanh(0.7978845608 * (V + 0.044715 * V * V * V)));
        EXPECT_NEAR(Fused.Y[I], Want, 2e-6 * (1.0 + std::fabs(Want))) << I;
        EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 2e-6 * (1.0 + std::fabs(Want))) << I;
      }
    }
}

TEST(FuseLinearGelu, ATanhChainWithAnotherReaderOrOtherConstantsStaysUnfused) {
  rt::AutoInit Init;
  for (int Case = 0; Case < 2; ++Case) {
    const std::string Bytes = Case == 0 ? tanhGeluModel(Cube::MulOuter, false, /*Extra=*/true)
                                        : tanhGeluModel(Cube::MulOuter, false, false, /*C2=*/0.05f);
    std::vector<std::string> Types;
    const RunResult Fused = runTanhModel(Bytes, true, &Types), Plain = runTanhModel(Bytes, false);
    EXPECT_EQ(std::count(Types.begin(), Types.end(), "Gelu"), 0) << Case;
    EXPECT_EQ(std::count(Types.begin(), Types.end(), "Tanh"), 1) << Case;
    for (size_t I = 0; I < Fused.Y.size(); ++I)
      EXPECT_NEAR(Fused.Y[I], Plain.Y[I], 1e-6 * (1.0 + std::fabs(Plain.Y[I]))) << Case << " " << I;
  }
}
