// Real models through the XNNPACK extension's float16 and int8 paths: the float16 MobileNetV2
// (scripts/make-lowprec-models.sh) against PyTorch's float32 output and the native backend, and
// the int8 QOperator ResNet-18 (scripts/make-qoperator-models.sh: QLinearConv, QLinearAdd,
// QLinearGlobalAveragePool, QGemm; int8 activations, symmetric per-channel int8 weights) against
// ONNX Runtime on the same model and the native backend. Placement is checked from getOperations().
// Skips when the fixture could not make the models (no PyPI).
#include <Optimium/Runtime.h>

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "TestUtil.h"
#include "backends/xnnpack/XnnpackTestUtil.h"

namespace rt = optimium::runtime;
using optimium_test::maxAbsDiff;
using optimium_test::readNpy;

namespace {

const auto *Env = ::testing::AddGlobalTestEnvironment(new xnnpack_test::Runtime);
using xnnpack_test::cpu;
using xnnpack_test::xnnpack;

/// DIR/NAME from the environment variable, or "" when the model is not there.
std::string modelDir(const char *Var, const char *Name) {
  const char *Root = std::getenv(Var);
  struct stat St;
  const std::string Dir = std::string(Root ? Root : "") + "/" + Name;
  return Root && ::stat((Dir + "/model.onnx").c_str(), &St) == 0 ? Dir : "";
}

rt::Model load(const std::string &Dir, const std::vector<rt::DeviceID> &Devices, bool Strict) {
  rt::ModelLoadOptions O;
  O.Devices = Devices;
  O.Strict = Strict;
  return rt::loadModel(Dir, O);
}

rt::Tensor runOnce(rt::Model &M, const rt::Tensor &X) {
  rt::InferRequest R = M.createRequest();
  R.infer({X});
  R.wait();
  return R.getOutput(0).clone();
}

size_t argmax(const rt::Tensor &T) {
  const float *P = static_cast<const float *>(T.data());
  return static_cast<size_t>(std::max_element(P, P + T.getElementCount()) - P);
}
double scaleOf(const rt::Tensor &T) {
  double S = 0;
  for (size_t I = 0; I < T.getElementCount(); ++I)
    S = std::max(S, static_cast<double>(std::fabs(static_cast<const float *>(T.data())[I])));
  return S;
}

/// "Conv 52/52, Clip 35/35, ..." : per op type, how many of the model's operations XNNPack runs.
std::string placement(const rt::Model &M, const rt::DeviceID &Xnn, size_t &OnXnn) {
  std::map<std::string, std::pair<size_t, size_t>> ByType;
  OnXnn = 0;
  for (const rt::OpInfo &Op : M.getOperations()) {
    auto &C = ByType[Op.Type];
    ++C.second;
    if (Op.Device == Xnn) {
      ++C.first;
      ++OnXnn;
    }
  }
  std::string S;
  for (const auto &KV : ByType)
    S += (S.empty() ? "" : ", ") + KV.first + " " + std::to_string(KV.second.first) + "/" + std::to_string(KV.second.second);
  return S;
}

} // namespace

TEST(XnnpackRealModels, MobileNetV2Float16) {
  const std::string Dir = modelDir("OPTIMIUM_LOWPREC_MODELS", "mobilenet_v2_fp16");
  if (Dir.empty())
    GTEST_SKIP() << "mobilenet_v2_fp16 is not available (see the output of make_lowprec_models)";
  const rt::DeviceID Xnn = xnnpack();
  ASSERT_EQ(Xnn.getPlatform(), rt::PlatformKind::XNNPack) << "the XNNPACK extension is not loaded";
  rt::Model OnXnn = load(Dir, {Xnn, cpu()}, false), Native = load(Dir, {cpu()}, true);
  size_t Count = 0;
  const std::string Where = placement(OnXnn, Xnn, Count);
  std::printf("mobilenet_v2_fp16 on XNNPack: %zu of %zu operations (%s)\n", Count, OnXnn.getOperations().size(),
              Where.c_str());
  // Every float16 Conv, Clip, Add, the GlobalAveragePool and the Gemm; the boundary Casts and the
  // Flatten stay on the CPU.
  for (const rt::OpInfo &Op : OnXnn.getOperations())
    if (Op.Type == "Conv" || Op.Type == "Clip" || Op.Type == "Add" || Op.Type == "GlobalAveragePool" ||
        Op.Type == "Gemm") {
      EXPECT_EQ(Op.Device, Xnn) << Op.Type << " '" << Op.Name << "'";
    }
  const rt::Tensor X = readNpy(Dir + "/input_0.npy"), Torch = readNpy(Dir + "/output_0.npy");
  const rt::Tensor YX = runOnce(OnXnn, X), YN = runOnce(Native, X);
  const double Scale = scaleOf(Torch), DT = maxAbsDiff(YX, Torch), DN = maxAbsDiff(YX, YN),
               NT = maxAbsDiff(YN, Torch);
  std::printf("mobilenet_v2_fp16: XNNPack vs PyTorch float32 %.4g, vs native %.4g, native vs PyTorch %.4g (scale %.4g)\n",
              DT, DN, NT, Scale);
  // fp16 accumulation (XNNPACK rounds after every multiply-add) over 52 layers: measured 2.3% of
  // the output scale from PyTorch's float32 (the native backend, fp32 compute: 1%); allowed 5%.
  EXPECT_LE(DT, 5e-2 * Scale);
  EXPECT_LE(DN, 5e-2 * Scale);
  EXPECT_EQ(argmax(YX), argmax(Torch));
  EXPECT_EQ(argmax(YX), argmax(YN));
}

TEST(XnnpackRealModels, ResNet18Int8QOperator) {
  const std::string Dir = modelDir("OPTIMIUM_QOPERATOR_MODELS", "resnet18_qop_s8s8");
  if (Dir.empty())
    GTEST_SKIP() << "resnet18_qop_s8s8 is not available (see the output of make_qoperator_models)";
  const rt::DeviceID Xnn = xnnpack();
  ASSERT_EQ(Xnn.getPlatform(), rt::PlatformKind::XNNPack) << "the XNNPACK extension is not loaded";
  rt::Model OnXnn = load(Dir, {Xnn, cpu()}, false), Native = load(Dir, {cpu()}, true);
  size_t Count = 0;
  const std::string Where = placement(OnXnn, Xnn, Count);
  std::printf("resnet18_qop_s8s8 on XNNPack: %zu of %zu operations (%s)\n", Count, OnXnn.getOperations().size(),
              Where.c_str());
  size_t Convs = 0;
  for (const rt::OpInfo &Op : OnXnn.getOperations())
    if (Op.Type == "QLinearConv") {
      ++Convs;
      EXPECT_EQ(Op.Device, Xnn) << "QLinearConv '" << Op.Name << "'";
    }
  EXPECT_EQ(Convs, 20u);
  const rt::Tensor X = readNpy(Dir + "/input_0.npy"), Ort = readNpy(Dir + "/ort_reference_0.npy"),
                   Torch = readNpy(Dir + "/output_0.npy");
  const rt::Tensor YX = runOnce(OnXnn, X), YN = runOnce(Native, X);
  // One step of the output (its DequantizeLinear's scale): what a requantization that rounds a tie
  // the other way moves a logit by.
  const double Step = static_cast<const float *>(readNpy(Dir + "/output_step.npy").data())[0], DX = maxAbsDiff(YX, Ort), DN = maxAbsDiff(YN, Ort);
  std::printf("resnet18_qop_s8s8: XNNPack vs ONNX Runtime %.4g (%.2f steps), native vs ONNX Runtime %.4g (%.2f steps), "
              "XNNPack vs PyTorch float32 %.4g (scale %.4g)\n",
              DX, DX / Step, DN, DN / Step, maxAbsDiff(YX, Torch), scaleOf(Torch));
  // XNNPACK requantizes as ONNX Runtime's MLAS does (float32 multiplier, round to nearest even):
  // measured bit-identical; the native kernels requantize in double, and where a tie rounds the
  // other way a layer's output moves a step, which reaches the logits as at most one output step.
  EXPECT_LE(DX, 1.01 * Step);
  EXPECT_LE(DN, 1.01 * Step);
  EXPECT_EQ(argmax(YX), argmax(Ort));
  EXPECT_EQ(argmax(YN), argmax(Ort));
  EXPECT_EQ(argmax(YX), argmax(Torch));
}
