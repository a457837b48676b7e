// The com.microsoft QOperator ops ONNX Runtime's quantizer emits and the ONNX node tests do not
// cover: QGemm and QLinearGlobalAveragePool against hand-computed values (ties rounding half to
// even included), and their load-time and run-time errors.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "OnnxBuilder.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

constexpr int I8 = onnx::TensorProto::INT8, I32 = onnx::TensorProto::INT32;

OnnxBuilder contribModel() {
  OnnxBuilder B;
  auto *O = B.model().add_opset_import();
  O->set_domain("com.microsoft");
  O->set_version(1);
  return B;
}

template <typename T> std::vector<T> run(const std::string &Bytes, rt::Tensor X) {
  rt::Model M = loadModelBytes(Bytes);
  rt::InferRequest R = M.createRequest();
  R.infer({X});
  R.wait();
  const rt::Tensor Y = R.getOutput(0);
  std::vector<T> V(Y.getElementCount());
  std::memcpy(V.data(), Y.data(), V.size() * sizeof(T));
  return V;
}

rt::Tensor int8Tensor(const std::vector<int64_t> &Dims, const std::vector<int8_t> &V) {
  rt::Tensor T = rt::tensor(rt::ElementType::I8, rt::TensorShape::fromDims(Dims));
  std::memcpy(T.data(), V.data(), V.size());
  return T;
}

std::string globalAveragePool(int64_t ChannelsLast) {
  OnnxBuilder B = contribModel();
  B.input("x", I8, ChannelsLast ? std::vector<int64_t>{1, 1, 2, 2} : std::vector<int64_t>{1, 2, 2, 2});
  B.initializer("xs", {}, {0.5f});
  B.initializerRaw("xz", I8, {}, std::vector<int8_t>{1});
  B.initializer("ys", {}, {0.25f});
  B.initializerRaw("yz", I8, {}, std::vector<int8_t>{-2});
  onnx::NodeProto *N = B.node("QLinearGlobalAveragePool", {"x", "xs", "xz", "ys", "yz"}, {"y"});
  N->set_domain("com.microsoft");
  OnnxBuilder::attrInt(N, "channels_last", ChannelsLast);
  B.output("y");
  return B.bytes();
}

/// QGemm(a [1, 3], b [2, 3] transposed, per-column b_scale, int32 bias [, y_scale, y_zero_point]).
std::string qgemm(bool Quantized, std::vector<float> BScales = {0.5f, 0.25f}) {
  OnnxBuilder B = contribModel();
  B.input("a", I8, {1, 3});
  B.initializer("as", {}, {0.1f});
  B.initializerRaw("az", I8, {}, std::vector<int8_t>{1});
  B.initializerRaw("b", I8, {2, 3}, std::vector<int8_t>{1, 0, -1, 2, 2, 2});
  B.initializer("bs", {static_cast<int64_t>(BScales.size())}, BScales);
  B.initializerRaw("bz", I8, {static_cast<int64_t>(BScales.size())}, std::vector<int8_t>(BScales.size(), 0));
  B.initializerRaw("c", I32, {2}, std::vector<int32_t>{4, -4});
  std::vector<std::string> In{"a", "as", "az", "b", "bs", "bz", "c"};
  if (Quantized) {
    B.initializer("ys", {}, {0.05f});
    B.initializerRaw("yz", I8, {}, std::vector<int8_t>{3});
    In.push_back("ys");
    In.push_back("yz");
  }
  onnx::NodeProto *N = B.node("QGemm", In, {"y"});
  N->set_domain("com.microsoft");
  OnnxBuilder::attrInt(N, "transB", 1);
  B.output("y");
  return B.bytes();
}

} // namespace

TEST(QuantContribOps, QLinearGlobalAveragePoolHandComputed) {
  // Channel 0: (1 + 2 + 3 + 4 - 4 * 1) * 0.5 / (4 * 0.25) = 3 -> 3 - 2 = 1.
  // Channel 1: (-8 - 7 + 10 + 0 - 4) * 0.5 / 1 = -4.5, a tie: rounds to even -4 -> -6.
  EXPECT_EQ(run<int8_t>(globalAveragePool(0), int8Tensor({1, 2, 2, 2}, {1, 2, 3, 4, -8, -7, 10, 0})),
            (std::vector<int8_t>{1, -6}));
  // channels_last [1, 1, 2, 2]: channel 0 {1, 2}: (3 - 2) * 0.5 / 0.5 = 1 -> -1; channel 1 {-8, -7}: -17 -> -19.
  EXPECT_EQ(run<int8_t>(globalAveragePool(1), int8Tensor({1, 1, 2, 2}, {1, -8, 2, -7})), (std::vector<int8_t>{-1, -19}));
}

TEST(QuantContribOps, QGemmHandComputed) {
  // a - a_zp = {0, 1, 2}; column 0: 0 + 0 - 2 = -2, + bias 4 = 2, * 0.1 * 0.5 = 0.1;
  // column 1: 0 + 2 + 4 = 6, - 4 = 2, * 0.1 * 0.25 = 0.05.
  const std::vector<float> F = run<float>(qgemm(false), int8Tensor({1, 3}, {1, 2, 3}));
  ASSERT_EQ(F.size(), 2u);
  EXPECT_NEAR(F[0], 0.1f, 1e-6f);
  EXPECT_NEAR(F[1], 0.05f, 1e-6f);
  // Quantized: 0.1 / 0.05 = 2 -> 2 + 3 = 5; 0.05 / 0.05 = 1 -> 4.
  EXPECT_EQ(run<int8_t>(qgemm(true), int8Tensor({1, 3}, {1, 2, 3})), (std::vector<int8_t>{5, 4}));
}

TEST(QuantContribOps, Errors) {
  // A b_scale of 3 for N = 2 columns: a clear error naming the op at the run.
  try {
    run<int8_t>(qgemm(true, {0.5f, 0.25f, 0.1f}), int8Tensor({1, 3}, {1, 2, 3}));
    ADD_FAILURE() << "a b_scale of the wrong size ran";
  } catch (const rt::Exception &E) {
    EXPECT_NE(std::string(E.what()).find("b_scale"), std::string::npos) << E.what();
  }
  // y_scale without y_zero_point: the output type is unknown, refused at load.
  OnnxBuilder B = contribModel();
  B.input("a", I8, {1, 3});
  B.initializer("as", {}, {0.1f});
  B.initializerRaw("az", I8, {}, std::vector<int8_t>{0});
  B.initializerRaw("b", I8, {3, 2}, std::vector<int8_t>{1, 2, 3, 4, 5, 6});
  B.initializer("bs", {}, {0.1f});
  B.initializerRaw("bz", I8, {}, std::vector<int8_t>{0});
  B.initializer("ys", {}, {0.1f});
  B.node("QGemm", {"a", "as", "az", "b", "bs", "bz", "", "ys"}, {"y"})->set_domain("com.microsoft");
  B.output("y");
  try {
    loadModelBytes(B.bytes());
    ADD_FAILURE() << "QGemm with y_scale and no y_zero_point loaded";
  } catch (const rt::Exception &E) {
    EXPECT_NE(std::string(E.what()).find("y_zero_point"), std::string::npos) << E.what();
  }
  // A rank-2 X for the pool (it needs [N, C, spatial...]).
  OnnxBuilder P = contribModel();
  P.input("x", I8, {2, 3});
  P.initializer("xs", {}, {0.5f});
  P.initializerRaw("xz", I8, {}, std::vector<int8_t>{0});
  P.initializer("ys", {}, {0.5f});
  P.initializerRaw("yz", I8, {}, std::vector<int8_t>{0});
  P.node("QLinearGlobalAveragePool", {"x", "xs", "xz", "ys", "yz"}, {"y"})->set_domain("com.microsoft");
  P.output("y");
  try {
    loadModelBytes(P.bytes());
    ADD_FAILURE() << "a rank-2 QLinearGlobalAveragePool loaded";
  } catch (const rt::Exception &E) {
    EXPECT_NE(std::string(E.what()).find("rank 3"), std::string::npos) << E.what();
  }
}
