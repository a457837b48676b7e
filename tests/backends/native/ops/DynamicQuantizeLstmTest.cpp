// com.microsoft DynamicQuantizeLSTM (ddddocr's quantized CRNN, made by onnxruntime's
// quantize_dynamic) equals an ONNX LSTM over its dequantized weights, transposed from [D, K, 4H]
// to LSTM's [D, 4H, K]; and a missing scale input is a ModelError naming the node.
#include <gtest/gtest.h>

#include <cmath>

#include "OnnxBuilder.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

constexpr int64_t kDirs = 2, kHidden = 5, kInput = 7, kSeq = 4, kBatch = 3;

std::vector<int8_t> quantizedWeights(int64_t Rows, int64_t Cols, int Salt) {
  std::vector<int8_t> Q(static_cast<size_t>(kDirs * Rows * Cols));
  for (size_t I = 0; I < Q.size(); ++I)
    Q[I] = static_cast<int8_t>(static_cast<int>((I * 37 + static_cast<size_t>(Salt) * 11) % 255) - 127);
  return Q;
}

/// [D, K, Rows] int8 -> [D, Rows, K] float: (q - zp[d]) * scale[d].
std::vector<float> dequantizeTransposed(const std::vector<int8_t> &Q, int64_t K, int64_t Rows,
                                        const std::vector<float> &Scale, const std::vector<int8_t> &Zp) {
  std::vector<float> F(Q.size());
  for (int64_t D = 0; D < kDirs; ++D)
    for (int64_t Kk = 0; Kk < K; ++Kk)
      for (int64_t R = 0; R < Rows; ++R)
        F[static_cast<size_t>((D * Rows + R) * K + Kk)] =
            static_cast<float>(Q[static_cast<size_t>((D * K + Kk) * Rows + R)] - Zp[static_cast<size_t>(D)]) *
            Scale[static_cast<size_t>(D)];
  return F;
}

void lstmAttrs(onnx::NodeProto *N) {
  OnnxBuilder::attrInt(N, "hidden_size", kHidden);
  auto *A = N->add_attribute();
  A->set_name("direction");
  A->set_type(onnx::AttributeProto_AttributeType_STRING);
  A->set_s("bidirectional");
}

rt::Tensor runModel(const std::string &Bytes, const rt::Tensor &X) {
  rt::Model M = loadModelBytes(Bytes);
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(std::vector<rt::Tensor>{X}));
  R.wait();
  return R.getOutput(0).clone();
}

} // namespace

TEST(DynamicQuantizeLstm, EqualsLstmOverDequantizedWeights) {
  const int64_t G = 4 * kHidden;
  const std::vector<int8_t> W = quantizedWeights(G, kInput, 1), R = quantizedWeights(G, kHidden, 2);
  const std::vector<float> WScale = {0.011f, 0.007f}, RScale = {0.013f, 0.005f};
  const std::vector<int8_t> WZp = {0, 3}, RZp = {-2, 1};
  std::vector<float> Bias(static_cast<size_t>(kDirs * 2 * G));
  for (size_t I = 0; I < Bias.size(); ++I)
    Bias[I] = 0.05f * std::sin(0.7f * static_cast<float>(I));

  OnnxBuilder Q;
  Q.model().add_opset_import()->set_domain("com.microsoft");
  Q.model().mutable_opset_import(1)->set_version(1);
  Q.input("x", onnx::TensorProto_DataType_FLOAT, {kSeq, kBatch, kInput});
  Q.initializerRaw("w", onnx::TensorProto_DataType_INT8, {kDirs, kInput, G}, W);
  Q.initializerRaw("r", onnx::TensorProto_DataType_INT8, {kDirs, kHidden, G}, R);
  Q.initializer("b", {kDirs, 2 * G}, Bias);
  Q.initializer("ws", {kDirs}, WScale);
  Q.initializerRaw("wz", onnx::TensorProto_DataType_INT8, {kDirs}, WZp);
  Q.initializer("rs", {kDirs}, RScale);
  Q.initializerRaw("rz", onnx::TensorProto_DataType_INT8, {kDirs}, RZp);
  auto *N = Q.node("DynamicQuantizeLSTM", {"x", "w", "r", "b", "", "", "", "", "ws", "wz", "rs", "rz"}, {"y"});
  N->set_domain("com.microsoft");
  lstmAttrs(N);
  Q.output("y", onnx::TensorProto_DataType_FLOAT);

  OnnxBuilder F;
  F.input("x", onnx::TensorProto_DataType_FLOAT, {kSeq, kBatch, kInput});
  F.initializer("w", {kDirs, G, kInput}, dequantizeTransposed(W, kInput, G, WScale, WZp));
  F.initializer("r", {kDirs, G, kHidden}, dequantizeTransposed(R, kHidden, G, RScale, RZp));
  F.initializer("b", {kDirs, 2 * G}, Bias);
  lstmAttrs(F.node("LSTM", {"x", "w", "r", "b"}, {"y"}));
  F.output("y", onnx::TensorProto_DataType_FLOAT);

  rt::Tensor X = rt::tensor(rt::ElementType::F32, rt::TensorShape({rt::Expr(kSeq), rt::Expr(kBatch), rt::Expr(kInput)}));
  const std::vector<float> Wave = wave(X.getElementCount(), 1.5f);
  std::copy(Wave.begin(), Wave.end(), static_cast<float *>(X.data()));
  const rt::Tensor Got = runModel(Q.bytes(), X), Want = runModel(F.bytes(), X);
  ASSERT_EQ(Got.getShape(), Want.getShape());
  ASSERT_EQ(Got.getShape(), rt::TensorShape({rt::Expr(kSeq), rt::Expr(kDirs), rt::Expr(kBatch), rt::Expr(kHidden)}));
  EXPECT_LE(maxAbsDiff(Got, Want), 1e-6);
  double Scale = 0;
  for (size_t I = 0; I < Want.getElementCount(); ++I)
    Scale = std::max(Scale, static_cast<double>(std::fabs(static_cast<const float *>(Want.data())[I])));
  EXPECT_GT(Scale, 0.05); // the weights do something
}

TEST(DynamicQuantizeLstm, MissingScalesAreAModelError) {
  const int64_t G = 4 * kHidden;
  OnnxBuilder Q;
  Q.model().add_opset_import()->set_domain("com.microsoft");
  Q.model().mutable_opset_import(1)->set_version(1);
  Q.input("x", onnx::TensorProto_DataType_FLOAT, {kSeq, kBatch, kInput});
  Q.initializerRaw("w", onnx::TensorProto_DataType_INT8, {kDirs, kInput, G}, quantizedWeights(G, kInput, 1));
  Q.initializerRaw("r", onnx::TensorProto_DataType_INT8, {kDirs, kHidden, G}, quantizedWeights(G, kHidden, 2));
  auto *N = Q.node("DynamicQuantizeLSTM", {"x", "w", "r"}, {"y"}, "qlstm");
  N->set_domain("com.microsoft");
  lstmAttrs(N);
  Q.output("y", onnx::TensorProto_DataType_FLOAT);
  try {
    loadModelBytes(Q.bytes());
    FAIL() << "loaded a DynamicQuantizeLSTM without scales";
  } catch (const rt::ModelError &E) {
    EXPECT_NE(std::string(E.what()).find("qlstm"), std::string::npos) << E.what();
    EXPECT_NE(std::string(E.what()).find("W_scale"), std::string::npos) << E.what();
  }
}
