// The compiled model folder (import/compiled/CompiledModel.h, exec compileModelFiles,
// optimium-compile): outputs identical to loading the ONNX file on the bundled and test models,
// the single-file bundle by path and by bytes (with its manifest marks), versioning, and every
// corruption path (truncated, flipped, missing, mixed files) as a ContainerError naming the file.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "exec/ModelCompiler.h"
#include "exec/ModelState.h"
#include "ir/InferShapes.h"
#include "core/CpuFeatureMask.h"
#include "core/CpuFeatures.h"
#include "import/compiled/ByteIO.h"
#include "tools/CompileModel.h"

namespace rt = optimium::runtime;
namespace rtd = optimium::runtime::detail;
namespace tools = optimium::tools;
using namespace optimium_test;

namespace {

std::string tempDir() {
  char Tmpl[] = "/tmp/optimium_compiled_XXXXXX";
  return mkdtemp(Tmpl);
}

std::vector<uint8_t> readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(In)), std::istreambuf_iterator<char>());
}

void writeFile(const std::string &Path, const std::vector<uint8_t> &Bytes) {
  std::ofstream(Path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
}

/// Compiles Model into a fresh folder (or bundle file) and returns its path.
std::string compileTo(const std::string &Model, bool Bundle = false, bool Bf16 = false) {
  tools::CompileOptions O;
  O.Model = Model;
  O.Output = tempDir() + (Bundle ? "/model.optb" : "/model.opt");
  O.Bundle = Bundle;
  O.Bf16 = Bf16;
  O.Verify = true;
  std::ostringstream Summary;
  const std::string Error = tools::compileModel(O, Summary);
  EXPECT_EQ(Error, "") << Model;
  return O.Output;
}

/// Inputs for every input of M: the model folder's input_<i>.npy where present, else a
/// deterministic pattern (floats) or zeros (other types: safe as indices) at the declared shape
/// with symbols set to 2.
std::vector<rt::Tensor> inputsFor(const rt::Model &M, const std::string &Folder) {
  std::vector<rt::Tensor> In;
  for (size_t I = 0; I < M.getInputNames().size(); ++I) {
    const std::string Npy = Folder + "/input_" + std::to_string(I) + ".npy";
    struct stat St;
    if (::stat(Npy.c_str(), &St) == 0) {
      In.push_back(readNpy(Npy));
      continue;
    }
    const rt::TensorInfo &TI = M.getInputTensorInfo(I);
    std::vector<int64_t> Dims;
    for (const rt::Expr &E : TI.Shape)
      Dims.push_back(E.isConst() ? E.value() : 2);
    rt::Tensor T = rt::tensor(TI.Type, rt::TensorShape::fromDims(Dims));
    std::memset(T.data(), 0, T.getElementCount() * rt::getElementSize(TI.Type));
    if (TI.Type == rt::ElementType::F32) {
      const std::vector<float> W = wave(T.getElementCount(), 1.0f);
      std::memcpy(T.data(), W.data(), W.size() * sizeof(float));
    }
    In.push_back(T);
  }
  return In;
}

std::vector<rt::Tensor> run(const rt::Model &M, const std::vector<rt::Tensor> &In) {
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(In));
  R.wait();
  std::vector<rt::Tensor> Out;
  for (size_t I = 0; I < M.getOutputNames().size(); ++I)
    Out.push_back(R.getOutput(I));
  return Out;
}

/// Same names, types, shapes and bytes.
void expectIdentical(const rt::Model &A, const rt::Model &B, const std::vector<rt::Tensor> &In, const std::string &What) {
  ASSERT_EQ(A.getOutputNames().size(), B.getOutputNames().size()) << What;
  for (size_t I = 0; I < A.getInputNames().size(); ++I)
    EXPECT_EQ(A.getInputNames()[I].str(), B.getInputNames()[I].str()) << What;
  EXPECT_EQ(opTypeList(A), opTypeList(B)) << What;
  const std::vector<rt::Tensor> OA = run(A, In), OB = run(B, In);
  for (size_t I = 0; I < OA.size(); ++I) {
    EXPECT_EQ(A.getOutputNames()[I].str(), B.getOutputNames()[I].str()) << What;
    ASSERT_EQ(OA[I].getType(), OB[I].getType()) << What;
    ASSERT_EQ(OA[I].getShape(), OB[I].getShape()) << What;
    const size_t Bytes = OA[I].getElementCount() * rt::getElementSize(OA[I].getType());
    EXPECT_EQ(std::memcmp(OA[I].data(), OB[I].data(), Bytes), 0) << What << " output " << I;
  }
}

/// Expects loading Path to throw a ContainerError whose message contains each of Parts.
void expectContainerError(const std::string &Path, const std::vector<std::string> &Parts) {
  try {
    rt::loadModel(Path);
    ADD_FAILURE() << "loading '" << Path << "' succeeded";
  } catch (const rt::ContainerError &E) {
    for (const std::string &P : Parts)
      EXPECT_NE(std::string(E.what()).find(P), std::string::npos) << E.what() << "\n  lacks: " << P;
  }
}

const std::vector<std::string> kModels = {"models/digits/model.onnx",        "tests/models/cnn",
                                          "tests/models/mlp",                "tests/models/dynamic_batch",
                                          "tests/models/external_data",      "tests/models/int64_input",
                                          "tests/models/scripted_loop",      "tests/models/two_inputs",
                                          "tests/models/group_encoder",      "tests/models/resizable_cache"};

std::string folderOf(const std::string &Model) {
  return Model.size() > 5 && Model.compare(Model.size() - 5, 5, ".onnx") == 0 ? Model.substr(0, Model.rfind('/')) : Model;
}

} // namespace

TEST(CompiledModel, OutputsAreIdenticalToTheOnnxModelOnEveryTestModel) {
  rt::AutoInit Init;
  for (const std::string &Rel : kModels) {
    const std::string Onnx = dataPath(Rel);
    const std::string Folder = compileTo(Onnx);
    rt::Model A = rt::loadModel(Onnx);
    rt::Model B = rt::loadModel(Folder);
    EXPECT_EQ(A.getName(), B.getName()) << Rel;
    EXPECT_EQ(A.isDynamic(), B.isDynamic()) << Rel;
    const auto KA = A.getAttributeKeys();
    const auto KB = B.getAttributeKeys();
    ASSERT_EQ(KA.size(), KB.size()) << Rel;
    for (size_t I = 0; I < KA.size(); ++I) {
      EXPECT_EQ(KA[I].str(), KB[I].str());
      EXPECT_EQ(A.getAttribute(KA[I]).toString(), B.getAttribute(KB[I]).toString()) << Rel << " " << KA[I].str();
    }
    if (Rel == "tests/models/resizable_cache")
      continue; // preserved input: MarksTravelInTheFolderAndTheBundle runs it
    expectIdentical(A, B, inputsFor(A, dataPath(folderOf(Rel))), Rel);
  }
}

TEST(CompiledModel, Bf16CompiledModelMatchesTheBf16OnnxLoad) {
  rt::AutoInit Init;
  const std::string Onnx = dataPath("tests/models/cnn");
  rt::ModelLoadOptions O;
  O.Precision = rt::ComputePrecision::BFloat16;
  rt::Model A = rt::loadModel(Onnx, O);
  rt::Model B = rt::loadModel(compileTo(Onnx, false, /*Bf16=*/true), O);
  expectIdentical(A, B, inputsFor(A, Onnx), "cnn bf16");
}

TEST(CompiledModel, BundleLoadsFromAPathAndFromBytes) {
  rt::AutoInit Init;
  const std::string Onnx = dataPath("models/digits/model.onnx");
  const std::string Bundle = compileTo(Onnx, /*Bundle=*/true);
  rt::Model A = rt::loadModel(Onnx);
  const std::vector<rt::Tensor> In = inputsFor(A, dataPath("models/digits"));
  expectIdentical(A, rt::loadModel(Bundle), In, "bundle path");
  // Bytes, at an address that is not 64-byte aligned (the weights then get an aligned copy).
  const std::vector<uint8_t> Bytes = readFile(Bundle);
  std::vector<uint8_t> Shifted(Bytes.size() + 1);
  std::memcpy(Shifted.data() + 1, Bytes.data(), Bytes.size());
  expectIdentical(A, rt::loadModel(Bytes.data(), Bytes.size()), In, "bundle bytes");
  expectIdentical(A, rt::loadModel(Shifted.data() + 1, Bytes.size()), In, "bundle bytes, unaligned");
  // A truncated bundle in memory.
  EXPECT_THROW(rt::loadModel(Bytes.data(), Bytes.size() / 2), rt::ContainerError);
  EXPECT_THROW(rt::loadModel(Bytes.data(), 20), rt::ContainerError);
}

TEST(CompiledModel, MarksTravelInTheFolderAndTheBundle) {
  rt::AutoInit Init;
  const std::string Onnx = dataPath("tests/models/resizable_cache");
  rt::Model A = rt::loadModel(Onnx);
  const std::vector<uint8_t> Bytes = readFile(compileTo(Onnx, /*Bundle=*/true));
  for (rt::Model B : {rt::loadModel(compileTo(Onnx)), rt::loadModel(Bytes.data(), Bytes.size())}) {
    ASSERT_EQ(B.getInputNames().size(), A.getInputNames().size());
    EXPECT_TRUE(B.getTensorInfo("cache").Resizable);
    EXPECT_EQ(B.getTensorInfo("cache").Shape, A.getTensorInfo("cache").Shape);
    // The cache persists and grows across runs exactly as with the ONNX model.
    rt::InferRequest RA = A.createRequest(), RB = B.createRequest();
    const std::vector<rt::Tensor> In = inputsFor(A, "");
    for (int Step = 0; Step < 3; ++Step) {
      RA.infer(rt::make_array(In));
      RA.wait();
      RB.infer(rt::make_array(In));
      RB.wait();
    }
    const rt::Tensor CA = RA.getTensor("cache"), CB = RB.getTensor("cache");
    ASSERT_EQ(CA.getShape(), CB.getShape());
    EXPECT_EQ(std::memcmp(CA.data(), CB.data(), CA.getElementCount() * rt::getElementSize(CA.getType())), 0);
  }
}

TEST(CompiledModel, ANewerFormatVersionIsRefusedNamingTheFileAndBothVersions) {
  rt::AutoInit Init;
  const std::string Folder = compileTo(dataPath("tests/models/mlp"));
  for (const char *Name : {rtd::kCompiledHeaderFile, rtd::kCompiledGraphFile, rtd::kCompiledWeightsFile}) {
    const std::string Path = Folder + "/" + Name;
    std::vector<uint8_t> Bytes = readFile(Path);
    const std::vector<uint8_t> Good = Bytes;
    const uint32_t Newer = rtd::kCompiledFormatVersion + 1;
    std::memcpy(Bytes.data() + 8, &Newer, 4);
    writeFile(Path, Bytes);
    std::vector<std::string> Parts = {Path, "format version " + std::to_string(Newer),
                                      "reads format versions 1 to " + std::to_string(rtd::kCompiledFormatVersion)};
    if (std::string(Name) == rtd::kCompiledHeaderFile)
      Parts.push_back("by runtime "); // the writer's runtime version
    expectContainerError(Folder, Parts);
    writeFile(Path, Good);
  }
  EXPECT_NO_THROW(rt::loadModel(Folder));
}

TEST(CompiledModel, TruncatedFilesAreContainerErrorsNamingTheFile) {
  rt::AutoInit Init;
  const std::string Folder = compileTo(dataPath("tests/models/cnn"));
  for (const char *Name : {rtd::kCompiledHeaderFile, rtd::kCompiledGraphFile, rtd::kCompiledWeightsFile}) {
    const std::string Path = Folder + "/" + Name;
    const std::vector<uint8_t> Good = readFile(Path);
    for (size_t Keep : {size_t(0), size_t(7), size_t(31), size_t(32), size_t(40), Good.size() / 2, Good.size() - 1}) {
      writeFile(Path, std::vector<uint8_t>(Good.begin(), Good.begin() + Keep));
      expectContainerError(Folder, {Path});
    }
    writeFile(Path, Good);
  }
  EXPECT_NO_THROW(rt::loadModel(Folder));
}

TEST(CompiledModel, FlippedBytesInTheHeaderAndGraphAreContainerErrors) {
  rt::AutoInit Init;
  const std::string Folder = compileTo(dataPath("tests/models/scripted_loop"));
  for (const char *Name : {rtd::kCompiledHeaderFile, rtd::kCompiledGraphFile}) {
    const std::string Path = Folder + "/" + Name;
    const std::vector<uint8_t> Good = readFile(Path);
    const size_t Step = std::max<size_t>(1, Good.size() / 97);
    for (size_t At = 0; At < Good.size(); At += Step) {
      std::vector<uint8_t> Bad = Good;
      Bad[At] ^= 0x5a;
      writeFile(Path, Bad);
      expectContainerError(Folder, {Name});
    }
    writeFile(Path, Good);
  }
  // The weights' preamble is checked at load; their contents only by verifyCompiledModel
  // (checking them would read every weight at load).
  const std::string Weights = Folder + "/" + rtd::kCompiledWeightsFile;
  const std::vector<uint8_t> Good = readFile(Weights);
  for (size_t At : {size_t(0), size_t(9), size_t(17)}) {
    std::vector<uint8_t> Bad = Good;
    Bad[At] ^= 0x5a;
    writeFile(Weights, Bad);
    expectContainerError(Folder, {Weights});
  }
  std::vector<uint8_t> Bad = Good;
  Bad.back() ^= 0x01;
  writeFile(Weights, Bad);
  rtd::CompiledSource Src;
  Src.Folder = Src.Label = Folder;
  const rtd::Status S = rtd::verifyCompiledModel(Src);
  EXPECT_EQ(S.code(), rtd::ErrorCode::Container);
  EXPECT_NE(S.message().find(Weights), std::string::npos) << S.message();
  writeFile(Weights, Good);
  EXPECT_TRUE(rtd::verifyCompiledModel(Src).isOk());
}

TEST(CompiledModel, MissingAndMixedFilesAreContainerErrors) {
  rt::AutoInit Init;
  const std::string A = compileTo(dataPath("tests/models/cnn")), B = compileTo(dataPath("tests/models/mlp"));
  for (const char *Name : {rtd::kCompiledGraphFile, rtd::kCompiledWeightsFile}) {
    const std::string Path = A + "/" + Name;
    const std::vector<uint8_t> Good = readFile(Path);
    ::unlink(Path.c_str());
    expectContainerError(A, {A, Name, "lacks"});
    writeFile(Path, readFile(B + "/" + Name)); // another compilation's file
    expectContainerError(A, {Path, "does not belong"});
    writeFile(Path, Good);
  }
  EXPECT_NO_THROW(rt::loadModel(A));
}

TEST(CompiledModel, ForeignCpuFeaturesFallBackToThisCpusKernels) {
  rt::AutoInit Init;
  // A header claiming every feature bit (amx included, which this CPU lacks): the folder loads,
  // kernels are chosen for this CPU, outputs unchanged.
  const std::string Onnx = dataPath("tests/models/cnn");
  auto Files = rtd::compileModelFiles(Onnx, {});
  ASSERT_TRUE(Files.isOk()) << Files.status().message();
  EXPECT_EQ(rtd::missingCpuFeatures(rtd::cpuFeatureMask(rtd::cpuFeatures()), rtd::cpuFeatures()), "");
  EXPECT_NE(rtd::missingCpuFeatures(~0ull, rtd::CpuFeatures()).find("avx512f"), std::string::npos);
  rtd::CompileInfo Info;
  Info.CpuMask = (1ull << 20) - 1;
  Info.CpuText = "everything";
  Info.ModelName = "cnn";
  rtd::ImportedModel Imported = rtd::importOnnxPath(Onnx).value();
  ASSERT_TRUE(rtd::inferGraphShapes(*Imported.G).isOk());
  auto Plain = rtd::encodeCompiledModel(*Imported.G, Info); // unfused: an older CPU's graph
  ASSERT_TRUE(Plain.isOk());
  const std::string Dir = tempDir() + "/foreign.opt";
  ASSERT_TRUE(rtd::writeCompiledFolder(Plain.value(), Dir).isOk());
  rt::Model A = rt::loadModel(Onnx);
  rt::Model B = rt::loadModel(Dir);
  // The stored graph is unfused (Relu apart from its Conv), so the kernels differ from the fused
  // ONNX load's: equal to float32 rounding, and equal to the saved reference output.
  const std::vector<rt::Tensor> In = inputsFor(A, Onnx);
  const std::vector<rt::Tensor> OA = run(A, In), OB = run(B, In);
  ASSERT_EQ(OA.size(), OB.size());
  for (size_t I = 0; I < OA.size(); ++I)
    EXPECT_LT(maxAbsDiff(OA[I], OB[I]), 1e-4);
  EXPECT_LT(maxAbsDiff(OB[0], readNpy(Onnx + "/output_0.npy")), 1e-3);
}

TEST(CompiledModel, CompileToolReportsBadUsageAndBadModels) {
  std::ostringstream Out, Err;
  auto Main = [&](std::vector<std::string> Args) {
    Args.insert(Args.begin(), "optimium-compile");
    std::vector<char *> Argv;
    for (std::string &A : Args)
      Argv.push_back(&A[0]);
    Out.str("");
    Err.str("");
    return tools::compileModelMain(static_cast<int>(Argv.size()), Argv.data(), Out, Err);
  };
  EXPECT_EQ(Main({}), 2);
  EXPECT_EQ(Main({dataPath("tests/models/mlp")}), 2);
  EXPECT_NE(Err.str().find("no output"), std::string::npos);
  EXPECT_EQ(Main({"--bogus"}), 2);
  EXPECT_EQ(Main({"a", "b", "-o", "x"}), 2);
  EXPECT_EQ(Main({"--help"}), 0);
  const std::string Dir = tempDir();
  EXPECT_EQ(Main({dataPath("tests/models/does_not_exist.onnx"), "-o", Dir + "/x.opt"}), 1);
  EXPECT_NE(Err.str().find("does_not_exist"), std::string::npos) << Err.str();
  EXPECT_EQ(Main({dataPath("tests/models/mlp"), "-o", Dir + "/m.opt", "--verify"}), 0) << Err.str();
  EXPECT_NE(Out.str().find("weights"), std::string::npos);
  EXPECT_EQ(Main({Dir + "/m.opt", "-o", Dir + "/again.opt"}), 1); // compiled already
  EXPECT_NE(Err.str().find("compiled model already"), std::string::npos) << Err.str();
  // The output is a file: not a folder.
  writeFile(Dir + "/file", {1, 2, 3});
  EXPECT_EQ(Main({dataPath("tests/models/mlp"), "-o", Dir + "/file"}), 1);
  EXPECT_NE(Err.str().find("not a folder"), std::string::npos) << Err.str();
}

// optimium-compile --passphrase-file / --encrypt: the folder's files are written encrypted from
// memory (no file of it in the clear), load with the passphrase to the same outputs as the ONNX
// model, and refuse a wrong or missing passphrase, a tampered file, a bundle and the passphrase
// on the command line.
TEST(CompiledModel, EncryptedFolderLoadsOnlyWithItsPassphrase) {
  const std::string Dir = tempDir(), Model = dataPath("tests/models/cnn");
  const std::string PassFile = Dir + "/pass.txt";
  { std::ofstream(PassFile) << "correct horse battery staple\n"; }
  tools::CompileOptions O;
  O.Model = Model;
  O.Output = Dir + "/sealed.opt";
  O.Encrypt = true;
  O.PassphraseFile = PassFile;
  O.ScryptLog2N = 10; // cheap for the test; the default is 14
  O.Verify = true;
  std::ostringstream Summary;
  ASSERT_EQ(tools::compileModel(O, Summary), "");
  EXPECT_NE(Summary.str().find("(encrypted)"), std::string::npos) << Summary.str();
  // Every file is encrypted: none holds the compiled format's magic in the clear.
  for (const char *Name : {"header.bin", "graph.bin", "weights.bin", "packed.bin"}) {
    const std::vector<uint8_t> Bytes = readFile(O.Output + "/" + Name);
    ASSERT_GE(Bytes.size(), 8u) << Name;
    EXPECT_EQ(std::memcmp(Bytes.data(), "OPTRTENC", 8), 0) << Name;
  }
  struct stat St;
  EXPECT_EQ(::stat((O.Output + "/encryption.json").c_str(), &St), 0);

  rt::ModelLoadOptions LO;
  LO.Passphrase = "correct horse battery staple";
  rt::Model Sealed = rt::loadModel(O.Output, LO);
  rt::Model Onnx = rt::loadModel(Model);
  expectIdentical(Sealed, Onnx, inputsFor(Onnx, Model), "encrypted compiled cnn");
  // packed.bin is decrypted into aligned memory and its entries borrowed from there.
  EXPECT_GT(Sealed.impl()->PackedHits, 0u);
  EXPECT_EQ(Sealed.impl()->PackedMisses, 0u);

  // Wrong and missing passphrases: clear errors, no model.
  LO.Passphrase = "wrong";
  try {
    rt::loadModel(O.Output, LO);
    ADD_FAILURE() << "a wrong passphrase loaded";
  } catch (const rt::ContainerError &E) {
    EXPECT_NE(std::string(E.what()).find("passphrase"), std::string::npos) << E.what();
  }
  try {
    rt::loadModel(O.Output);
    ADD_FAILURE() << "no passphrase loaded";
  } catch (const rt::Exception &E) {
    EXPECT_NE(std::string(E.what()).find("passphrase"), std::string::npos) << E.what();
  }
  // A flipped byte in the encrypted weights: the tag fails, naming the file.
  std::vector<uint8_t> W = readFile(O.Output + "/weights.bin");
  W[W.size() / 2] ^= 0x40;
  writeFile(O.Output + "/weights.bin", W);
  LO.Passphrase = "correct horse battery staple";
  try {
    rt::loadModel(O.Output, LO);
    ADD_FAILURE() << "a tampered weights file loaded";
  } catch (const rt::ContainerError &E) {
    EXPECT_NE(std::string(E.what()).find("weights.bin"), std::string::npos) << E.what();
  }

  // The tool: the environment variable, and what it refuses.
  std::ostringstream Out, Err;
  auto Main = [&](std::vector<std::string> Args) {
    Args.insert(Args.begin(), "optimium-compile");
    std::vector<char *> Argv;
    for (std::string &A : Args)
      Argv.push_back(&A[0]);
    Out.str("");
    Err.str("");
    return tools::compileModelMain(static_cast<int>(Argv.size()), Argv.data(), Out, Err);
  };
  ::setenv("OPTIMIUM_RT_PASSPHRASE", "from the environment", 1);
  EXPECT_EQ(Main({Model, "-o", Dir + "/env.opt", "--encrypt", "--scrypt-log2n=10"}), 0) << Err.str();
  ::unsetenv("OPTIMIUM_RT_PASSPHRASE");
  LO.Passphrase = "from the environment";
  expectIdentical(rt::loadModel(Dir + "/env.opt", LO), Onnx, inputsFor(Onnx, Model), "encrypted via the environment");
  EXPECT_EQ(Main({Model, "-o", Dir + "/none.opt", "--encrypt"}), 1);
  EXPECT_NE(Err.str().find("no passphrase"), std::string::npos) << Err.str();
  EXPECT_EQ(Main({Model, "-o", Dir + "/cli.opt", "--passphrase=secret"}), 2);
  EXPECT_NE(Err.str().find("not taken from the command line"), std::string::npos) << Err.str();
  EXPECT_EQ(Err.str().find("secret"), std::string::npos) << Err.str();
  EXPECT_EQ(Main({Model, "-o", Dir + "/b.optb", "--bundle", "--passphrase-file", PassFile}), 1);
  EXPECT_NE(Err.str().find("--bundle"), std::string::npos) << Err.str();
  EXPECT_EQ(Main({Model, "-o", Dir + "/c.opt", "--passphrase-file", Dir + "/missing.txt"}), 1);
  EXPECT_NE(Err.str().find("missing.txt"), std::string::npos) << Err.str();
  EXPECT_EQ(Main({Model, "-o", Dir + "/d.opt", "--encrypt", "--scrypt-log2n=x"}), 2);
}

// Run by ctest compiled_model_without_avx512: a folder compiled on this CPU (ctest
// compile_test_models) loads with avx512f hidden; kernels are chosen for the smaller CPU and the
// outputs match the ONNX model loaded under the same mask (to float32 rounding: the kernels differ
// from the compile host's, not from this load's own ONNX path).
TEST(CompiledFallback, AFolderCompiledWithAvx512LoadsOnASmallerCpu) {
  const char *Folder = std::getenv("OPTIMIUM_TEST_COMPILED_FOLDER");
  if (!Folder)
    GTEST_SKIP() << "OPTIMIUM_TEST_COMPILED_FOLDER is not set (ctest compiled_model_without_avx512 sets it)";
  rt::AutoInit Init;
  const std::string Onnx = dataPath("tests/models/cnn");
  rt::Model A = rt::loadModel(Onnx);
  rt::Model B = rt::loadModel(Folder);
  const std::vector<rt::Tensor> In = inputsFor(A, Onnx);
  const std::vector<rt::Tensor> OA = run(A, In), OB = run(B, In);
  ASSERT_EQ(OA.size(), OB.size());
  for (size_t I = 0; I < OA.size(); ++I)
    EXPECT_LT(maxAbsDiff(OA[I], OB[I]), 1e-4);
  const rt::Tensor Want = readNpy(Onnx + "/output_0.npy");
  EXPECT_LT(maxAbsDiff(OB[0], Want), 1e-3);
  // Packed weights: served from packed.bin when this CPU's features are the compile host's, else
  // every key misses (the CPU feature level is part of it) and the kernels pack at load.
  rtd::CompiledSource Src;
  Src.Folder = Src.Label = Folder;
  auto C = rtd::readCompiledModel(Src);
  ASSERT_TRUE(C.isOk()) << C.status().message();
  ASSERT_TRUE(C.value().Packed);
  if (C.value().Info.CpuMask == rtd::cpuFeatureMask(rtd::cpuFeatures())) {
    EXPECT_GT(B.impl()->PackedHits, 0u);
    EXPECT_EQ(B.impl()->PackedMisses, 0u);
  } else {
    EXPECT_EQ(B.impl()->PackedHits, 0u);
    EXPECT_GT(B.impl()->PackedMisses, 0u);
  }
}

TEST(CompiledModel, PackedWeightsAreBorrowedWithNoPackingAtLoad) {
  rt::AutoInit Init;
  for (const std::string Rel : {"models/digits/model.onnx", "tests/models/cnn", "tests/models/mlp"}) {
    const std::string Onnx = dataPath(Rel);
    const std::string Folder = compileTo(Onnx);
    struct stat St;
    ASSERT_EQ(::stat((Folder + "/" + rtd::kCompiledPackedFile).c_str(), &St), 0) << Rel;
    rt::Model A = rt::loadModel(Onnx);
    rt::Model B = rt::loadModel(Folder);
    EXPECT_EQ(A.impl()->PackedHits + A.impl()->PackedMisses, 0u) << Rel; // ONNX loads have no cache
    EXPECT_GT(B.impl()->PackedHits, 0u) << Rel;
    EXPECT_EQ(B.impl()->PackedMisses, 0u) << Rel;
    expectIdentical(A, B, inputsFor(A, dataPath(folderOf(Rel))), Rel + " packed");
  }
  // The bundle carries packed.bin too: by path and by (aligned) bytes.
  const std::string Onnx = dataPath("models/digits/model.onnx");
  const std::string Bundle = compileTo(Onnx, /*Bundle=*/true);
  rt::Model A = rt::loadModel(Onnx);
  rt::Model B = rt::loadModel(Bundle);
  EXPECT_GT(B.impl()->PackedHits, 0u);
  EXPECT_EQ(B.impl()->PackedMisses, 0u);
  expectIdentical(A, B, inputsFor(A, dataPath("models/digits")), "packed bundle");
}

TEST(CompiledModel, PackedWeightsWithOtherKeysArePackedAgainAtLoad) {
  rt::AutoInit Init;
  const std::string Onnx = dataPath("tests/models/cnn");
  const std::string Folder = compileTo(Onnx);
  rt::Model A = rt::loadModel(Onnx);
  const std::vector<rt::Tensor> In = inputsFor(A, Onnx);
  // A packed.bin of the right graph whose keys name no kernel of it (another runtime's layout):
  // every lookup misses, the kernels pack as for the ONNX file, outputs unchanged.
  const std::vector<uint8_t> Graph = readFile(Folder + "/" + rtd::kCompiledGraphFile);
  uint32_t GraphCrc = 0;
  std::memcpy(&GraphCrc, Graph.data() + 24, 4);
  rtd::PackedRecord Other;
  Other["0:nowhere:native:in1/f32_gemm__other"] = std::vector<uint8_t>(256, 7);
  writeFile(Folder + "/" + rtd::kCompiledPackedFile, rtd::encodePackedWeights(Other, GraphCrc));
  rt::Model B = rt::loadModel(Folder);
  EXPECT_EQ(B.impl()->PackedHits, 0u);
  EXPECT_GT(B.impl()->PackedMisses, 0u);
  expectIdentical(A, B, In, "packed keys missing");
  // The right keys, one entry of another size (a layout that changed without its key): that lookup
  // is a miss and the kernel packs, the others are hits.
  {
    rtd::CompiledSource Src;
    Src.Folder = Src.Label = compileTo(Onnx);
    auto Good = rtd::readCompiledModel(Src);
    ASSERT_TRUE(Good.isOk()) << Good.status().message();
    ASSERT_TRUE(Good.value().Packed);
    rtd::PackedRecord Resized;
    for (const auto &KV : Good.value().Packed->Entries)
      Resized[KV.first].assign(KV.second.Data, KV.second.Data + KV.second.Size);
    ASSERT_GE(Resized.size(), 2u);
    Resized.begin()->second.resize(Resized.begin()->second.size() + 64, 0);
    writeFile(Folder + "/" + rtd::kCompiledPackedFile, rtd::encodePackedWeights(Resized, GraphCrc));
    rt::Model R = rt::loadModel(Folder);
    EXPECT_EQ(R.impl()->PackedMisses, 1u);
    EXPECT_EQ(R.impl()->PackedHits, Resized.size() - 1);
    expectIdentical(A, R, In, "one packed entry resized");
  }
  // No packed.bin at all: the folder still loads (kernels pack at load).
  ::unlink((Folder + "/" + rtd::kCompiledPackedFile).c_str());
  rt::Model C = rt::loadModel(Folder);
  EXPECT_EQ(C.impl()->PackedHits + C.impl()->PackedMisses, 0u);
  expectIdentical(A, C, In, "no packed.bin");
  // Another compilation's packed.bin is refused, naming the file.
  const std::string Mlp = compileTo(dataPath("tests/models/mlp"));
  writeFile(Folder + "/" + rtd::kCompiledPackedFile, readFile(Mlp + "/" + rtd::kCompiledPackedFile));
  expectContainerError(Folder, {Folder + "/" + rtd::kCompiledPackedFile, "does not belong"});
}

TEST(CompiledModel, CorruptPackedWeightsAreContainerErrorsNamingTheFile) {
  rt::AutoInit Init;
  const std::string Folder = compileTo(dataPath("tests/models/cnn"));
  const std::string Path = Folder + "/" + rtd::kCompiledPackedFile;
  const std::vector<uint8_t> Good = readFile(Path);
  ASSERT_GT(Good.size(), 4096u);
  for (size_t Keep : {size_t(0), size_t(7), size_t(31), size_t(32), size_t(40), Good.size() / 2, Good.size() - 1}) {
    writeFile(Path, std::vector<uint8_t>(Good.begin(), Good.begin() + Keep));
    expectContainerError(Folder, {Path});
  }
  // Every byte of the preamble and the index is checked at load (the index by its CRC-32).
  for (size_t At = 0; At < 200 && At < Good.size(); At += 3) {
    if (At >= 24 && At < 28)
      continue; // the whole body's CRC-32: checked by verifyCompiledModel only (below)
    std::vector<uint8_t> Bad = Good;
    Bad[At] ^= 0x5a;
    writeFile(Path, Bad);
    expectContainerError(Folder, {Path});
  }
  // An entry's bytes only by verifyCompiledModel (checking them would read every packed weight).
  std::vector<uint8_t> Bad = Good;
  Bad.back() ^= 0x01;
  writeFile(Path, Bad);
  rtd::CompiledSource Src;
  Src.Folder = Src.Label = Folder;
  const rtd::Status S = rtd::verifyCompiledModel(Src);
  EXPECT_EQ(S.code(), rtd::ErrorCode::Container);
  EXPECT_NE(S.message().find(Path), std::string::npos) << S.message();
  writeFile(Path, Good);
  EXPECT_TRUE(rtd::verifyCompiledModel(Src).isOk());
  EXPECT_NO_THROW(rt::loadModel(Folder));
}

namespace {

/// An inverted-residual block (MobileNetV2's): 1x1 expand + Clip(0, 6) -> depthwise 3x3 + Clip ->
/// 1x1 project. The first pair fuses into FusedPointwiseDepthwise; a 10x10 stride-1 plane keeps
/// its blocked kernel on every x86 CPU (the AVX-512 row and transposed kernels decline it).
std::string invertedResidualModel(const std::string &Dir) {
  constexpr int64_t C = 16, M = 96, H = 10, W = 10;
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, C, H, W});
  B.initializer("w1", {M, C, 1, 1}, wave(M * C, 0.4f));
  B.initializer("b1", {M}, wave(M, 0.3f, 1.0f));
  B.initializer("w2", {M, 1, 3, 3}, wave(M * 9, 0.5f, 2.0f));
  B.initializer("b2", {M}, wave(M, 0.2f, 3.0f));
  B.initializer("w3", {C, M, 1, 1}, wave(C * M, 0.3f, 4.0f));
  B.initializer("lo", {}, {0.0f});
  B.initializer("hi", {}, {6.0f});
  B.node("Conv", {"x", "w1", "b1"}, {"e"}, "expand");
  B.node("Clip", {"e", "lo", "hi"}, {"e6"}, "clip1");
  onnx::NodeProto *Dw = B.node("Conv", {"e6", "w2", "b2"}, {"d"}, "depthwise");
  OnnxBuilder::attrInt(Dw, "group", M);
  OnnxBuilder::attrInts(Dw, "pads", {1, 1, 1, 1});
  B.node("Clip", {"d", "lo", "hi"}, {"d6"}, "clip2");
  B.node("Conv", {"d6", "w3"}, {"y"}, "project");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Path = Dir + "/inverted_residual.onnx";
  const std::string Bytes = B.bytes();
  writeFile(Path, std::vector<uint8_t>(Bytes.begin(), Bytes.end()));
  return Path;
}

/// The keys of Folder's packed.bin.
std::vector<std::string> packedKeys(const std::string &Folder) {
  rtd::CompiledSource Src;
  Src.Folder = Src.Label = Folder;
  auto C = rtd::readCompiledModel(Src);
  EXPECT_TRUE(C.isOk()) << C.status().message();
  std::vector<std::string> Keys;
  if (C.isOk() && C.value().Packed)
    for (const auto &KV : C.value().Packed->Entries)
      Keys.push_back(KV.first);
  return Keys;
}

size_t countKeysWith(const std::vector<std::string> &Keys, const std::string &Part) {
  size_t N = 0;
  for (const std::string &K : Keys)
    N += K.find(Part) != std::string::npos;
  return N;
}

/// B's model written to tempDir()/Name; returns the file's path.
std::string writeModel(const OnnxBuilder &B, const std::string &Name) {
  const std::string Path = tempDir() + "/" + Name;
  const std::string Bytes = B.bytes();
  writeFile(Path, std::vector<uint8_t>(Bytes.begin(), Bytes.end()));
  return Path;
}

/// Folder (compiled from Onnx, Keys entries in its packed.bin) loads borrowing every entry and
/// packing nothing at load, with outputs identical to the ONNX file's.
void expectFolderBorrowsEveryEntry(const std::string &Onnx, const std::string &Folder, size_t Keys,
                                   const std::string &What) {
  rt::Model A = rt::loadModel(Onnx);
  rt::Model M = rt::loadModel(Folder);
  EXPECT_EQ(M.impl()->PackedHits, Keys) << What;
  EXPECT_EQ(M.impl()->PackedMisses, 0u) << What;
  std::vector<rt::Tensor> In = inputsFor(A, "");
  expectIdentical(A, M, In, What);
}

} // namespace

TEST(CompiledModel, FusedPointwiseDepthwiseWeightsArePackedInTheFolder) {
  rt::AutoInit Init;
  const std::string Onnx = invertedResidualModel(tempDir());
  const std::string Folder = compileTo(Onnx);
  const std::vector<std::string> Keys = packedKeys(Folder);
  // The fused expand + depthwise node's blocks of W1 (PackedA per block of channels) and the
  // projection's weights, each under the node's key: im2col GEMM panels, or on an AVX2 CPU
  // without AVX-512 the channels-in-lanes kernel's panels (a small-plane projection).
  EXPECT_GE(countKeysWith(Keys, "f32_pointwise_depthwise__blocked_"), 1u);
  // On an AVX2 CPU without AVX-512 also W2 in the 8-lane depthwise's groups (blocked_avx2/lanes8).
  if (rtd::cpuFeatures().avx2Fma() && !rtd::cpuFeatures().avx512Fma()) {
    EXPECT_EQ(countKeysWith(Keys, "/lanes8/"), 1u);
  }
  EXPECT_EQ(countKeysWith(Keys, "f32_conv__im2col_gemm_") + countKeysWith(Keys, "f32_conv__pointwise_transposed_avx2"),
            1u);
  expectFolderBorrowsEveryEntry(Onnx, Folder, Keys.size(), "inverted residual");
}

TEST(CompiledModel, WinogradTransformedWeightsAreInTheFolder) {
  // A 3x3 stride-1 32 -> 32 convolution on 28x28 runs Winograd F(4x4) on AVX2 and AVX-512 CPUs: its
  // transformed weights (4x the 3x3 ones) go into packed.bin, and the folder's load borrows them
  // (no transform at load) with outputs identical to the ONNX file's.
  rt::AutoInit Init;
  constexpr int64_t C = 32, H = 28;
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, C, H, H});
  B.initializer("w", {C, C, 3, 3}, wave(C * C * 9, 0.2f));
  B.initializer("b", {C}, wave(C, 0.3f, 1.0f));
  onnx::NodeProto *Conv = B.node("Conv", {"x", "w", "b"}, {"c"}, "conv3x3");
  OnnxBuilder::attrInts(Conv, "pads", {1, 1, 1, 1});
  B.node("Relu", {"c"}, {"y"}, "relu");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Onnx = writeModel(B, "winograd.onnx");
  const std::string Folder = compileTo(Onnx);
  const std::vector<std::string> Keys = packedKeys(Folder);
  if (rtd::cpuFeatures().avx2Fma()) {
    EXPECT_EQ(countKeysWith(Keys, "f32_conv__winograd_"), 1u);
  }
  expectFolderBorrowsEveryEntry(Onnx, Folder, Keys.size(), "winograd");
}

TEST(CompiledModel, BlockedDepthwiseWeightsAreInTheFolder) {
  // A 7x7 depthwise convolution (ConvNeXt's) runs the AVX2 channels-in-lanes kernel on an AVX2 CPU
  // without AVX-512: its weights in 8-lane blocks go into packed.bin and the folder's load borrows
  // them (no copy at load), outputs identical to the ONNX file's. 20 channels: a partial last block.
  rt::AutoInit Init;
  constexpr int64_t C = 20, H = 14;
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, C, H, H});
  B.initializer("w", {C, 1, 7, 7}, wave(C * 49, 0.2f));
  B.initializer("b", {C}, wave(C, 0.3f, 1.0f));
  onnx::NodeProto *Conv = B.node("Conv", {"x", "w", "b"}, {"y"}, "dw7x7");
  OnnxBuilder::attrInts(Conv, "pads", {3, 3, 3, 3});
  OnnxBuilder::attrInt(Conv, "group", C);
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Onnx = writeModel(B, "depthwise7x7.onnx");
  const std::string Folder = compileTo(Onnx);
  const std::vector<std::string> Keys = packedKeys(Folder);
  if (rtd::cpuFeatures().avx2Fma() && !rtd::cpuFeatures().AVX512F) {
    EXPECT_EQ(countKeysWith(Keys, "f32_conv__depthwise_blocked_avx2"), 1u);
  }
  expectFolderBorrowsEveryEntry(Onnx, Folder, Keys.size(), "depthwise7x7");
}

TEST(CompiledModel, ConvTransposeAndStemWeightsAreInTheFolder) {
  // A 3-channel 3x3 stride-2 stem (the direct kernel on AVX2 / AVX-512: its own weight layout) and
  // a grouped ConvTranspose (col2im GEMM: one panel set per group): both layouts go into
  // packed.bin and the folder's load borrows them (a kernel that kept a copy outside the cache
  // would count as a miss), outputs identical to the ONNX file's.
  rt::AutoInit Init;
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 3, 33, 31});
  B.initializer("ws", {16, 3, 3, 3}, wave(16 * 27, 0.2f));
  B.initializer("bs", {16}, wave(16, 0.3f, 1.0f));
  B.initializer("wt", {16, 6, 3, 3}, wave(16 * 6 * 9, 0.15f));
  onnx::NodeProto *Stem = B.node("Conv", {"x", "ws", "bs"}, {"s"}, "stem");
  OnnxBuilder::attrInts(Stem, "strides", {2, 2});
  OnnxBuilder::attrInts(Stem, "pads", {1, 1, 1, 1});
  onnx::NodeProto *Up = B.node("ConvTranspose", {"s", "wt"}, {"y"}, "up");
  OnnxBuilder::attrInts(Up, "strides", {2, 2});
  OnnxBuilder::attrInt(Up, "group", 2);
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Onnx = writeModel(B, "stem_convtranspose.onnx");
  const std::string Folder = compileTo(Onnx);
  const std::vector<std::string> Keys = packedKeys(Folder);
  EXPECT_EQ(countKeysWith(Keys, "f32_convtranspose__col2im_"), 2u); // one per group
  if (rtd::cpuFeatures().avx2Fma()) {
    EXPECT_EQ(countKeysWith(Keys, "f32_conv__direct_avx"), 1u);
  }
  expectFolderBorrowsEveryEntry(Onnx, Folder, Keys.size(), "stem + convtranspose");
}

TEST(CompiledModel, StridedPointwiseWeightsAreInTheFolder) {
  // ResNet-style downsample convolutions (1x1 stride 2): 64 -> 96 from 28x28 to 14x14 and 128 ->
  // 96 from 14x14 to 7x7. On an AVX2 CPU without AVX-512 they run the strided pointwise-rows and
  // channels-in-lanes kernels, whose packed weights go into packed.bin; the folder's load borrows
  // them, outputs identical to the ONNX file's.
  rt::AutoInit Init;
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 64, 28, 28});
  B.input("z", onnx::TensorProto_DataType_FLOAT, {1, 128, 14, 14});
  B.initializer("w1", {96, 64, 1, 1}, wave(96 * 64, 0.2f));
  B.initializer("b1", {96}, wave(96, 0.3f, 1.0f));
  B.initializer("w2", {96, 128, 1, 1}, wave(96 * 128, 0.15f));
  B.initializer("b2", {96}, wave(96, 0.2f, 0.5f));
  onnx::NodeProto *Rows = B.node("Conv", {"x", "w1", "b1"}, {"y1"}, "downsample_rows");
  OnnxBuilder::attrInts(Rows, "strides", {2, 2});
  onnx::NodeProto *Lanes = B.node("Conv", {"z", "w2", "b2"}, {"y2"}, "downsample_lanes");
  OnnxBuilder::attrInts(Lanes, "strides", {2, 2});
  B.output("y1", onnx::TensorProto_DataType_FLOAT);
  B.output("y2", onnx::TensorProto_DataType_FLOAT);
  const std::string Onnx = writeModel(B, "strided_pointwise.onnx");
  const std::string Folder = compileTo(Onnx);
  const std::vector<std::string> Keys = packedKeys(Folder);
  EXPECT_EQ(Keys.size(), 2u);
  if (rtd::cpuFeatures().avx2Fma() && !rtd::cpuFeatures().avx512Fma()) {
    EXPECT_EQ(countKeysWith(Keys, "f32_conv__pointwise_rows_strided_avx2"), 1u);
    EXPECT_EQ(countKeysWith(Keys, "f32_conv__pointwise_transposed_strided_avx2"), 1u);
  }
  expectFolderBorrowsEveryEntry(Onnx, Folder, Keys.size(), "strided pointwise");
}

TEST(CompiledModel, StridedTapsWeightsAreInTheFolder) {
  // A ResNet-style 3x3 stride-2 convolution (48 -> 64 channels, 28x28 to 14x14). On an AVX2 CPU
  // without AVX-512 it runs f32_conv__im2col_gemm_avx2_6x16's tap-broadcast path (runTaps), whose W^T
  // panels go into packed.bin under the ".../wt/..." key; the folder's load borrows them, outputs
  // identical to the ONNX file's.
  rt::AutoInit Init;
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 48, 28, 28});
  B.initializer("w", {64, 48, 3, 3}, wave(64 * 48 * 9, 0.05f));
  B.initializer("b", {64}, wave(64, 0.3f, 1.0f));
  onnx::NodeProto *Conv = B.node("Conv", {"x", "w", "b"}, {"y"}, "conv_s2");
  OnnxBuilder::attrInts(Conv, "strides", {2, 2});
  OnnxBuilder::attrInts(Conv, "pads", {1, 1, 1, 1});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Onnx = writeModel(B, "strided_taps.onnx");
  const std::string Folder = compileTo(Onnx);
  const std::vector<std::string> Keys = packedKeys(Folder);
  EXPECT_EQ(Keys.size(), 1u);
  if (rtd::cpuFeatures().avx2Fma() && !rtd::cpuFeatures().avx512Fma()) {
    EXPECT_EQ(countKeysWith(Keys, "f32_conv__im2col_gemm_avx2_6x16/wt/"), 1u) << ::testing::PrintToString(Keys);
  }
  expectFolderBorrowsEveryEntry(Onnx, Folder, Keys.size(), "strided taps");
}

TEST(CompiledModel, PackedWeightsReachTheNativeKernelsTheSimulatedNpuCreates) {
  // The sim forwards each node to the host's native kernels (OptRtHostApi::native_create_kernel)
  // with the node's cache: keys are scoped by backend, so a folder compiled for the sim serves
  // them, and one compiled for the CPU misses for them and packs at load.
  const std::string Counter = ::testing::TempDir() + "/sim_counter_packed_" + std::to_string(::getpid());
  ::setenv("OPTIMIUM_RT_SIM_COUNTER_PATH", Counter.c_str(), 1);
  rt::AutoInit Init;
  rt::loadExtension(OPTIMIUM_SIM_BACKEND);
  rt::ModelLoadOptions OnSim;
  OnSim.Devices = {rt::DeviceID::from(rt::PlatformKind::Synaptics, rt::DeviceKind::SynapNPU, 0)};
  const std::string Onnx = dataPath("models/digits/model.onnx");
  auto Files = rtd::compileModelFiles(Onnx, OnSim);
  ASSERT_TRUE(Files.isOk()) << Files.status().message();
  const std::string SimFolder = tempDir() + "/sim.opt";
  ASSERT_TRUE(rtd::writeCompiledFolder(Files.value(), SimFolder).isOk());
  EXPECT_GT(countKeysWith(packedKeys(SimFolder), ":sim:"), 0u);
  rt::Model A = rt::loadModel(Onnx, OnSim);
  const std::vector<rt::Tensor> In = inputsFor(A, dataPath("models/digits"));
  {
    rt::Model B = rt::loadModel(SimFolder, OnSim);
    EXPECT_GT(B.impl()->PackedHits, 0u);
    EXPECT_EQ(B.impl()->PackedMisses, 0u);
    expectIdentical(A, B, In, "sim folder on the sim");
  }
  {
    const std::string CpuFolder = compileTo(Onnx);
    rt::Model B = rt::loadModel(CpuFolder, OnSim);
    EXPECT_GT(B.impl()->PackedMisses, 0u);
    expectIdentical(A, B, In, "CPU folder on the sim");
  }
  std::remove(Counter.c_str());
}

TEST(CompiledModel, SubgraphNodesHaveTheirOwnPackedWeights) {
  // If's two branches each multiply by a constant of their own, with the same shape and the same
  // node name and position: they share the If node's host scope, so only the subgraph part of the
  // key (ScopedWeightsKeyScope) keeps the else branch from borrowing the then branch's packing.
  rt::AutoInit Init;
  const auto Branch = [](const std::string &Out, float Phase) {
    OnnxBuilder B;
    B.initializer("w", {8, 8}, wave(64, 0.5f, Phase));
    B.node("MatMul", {"x", "w"}, {Out}, "mm");
    B.output(Out, onnx::TensorProto_DataType_FLOAT);
    return B.M.graph();
  };
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {4, 8});
  B.input("cond", onnx::TensorProto_DataType_BOOL, {});
  onnx::NodeProto *If = B.node("If", {"cond"}, {"y"}, "choose");
  OnnxBuilder::attrGraph(If, "then_branch", Branch("a", 1.0f));
  OnnxBuilder::attrGraph(If, "else_branch", Branch("b", 2.0f));
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Onnx = writeModel(B, "if.onnx");
  const std::string Folder = compileTo(Onnx);
  const std::vector<std::string> Keys = packedKeys(Folder);
  EXPECT_EQ(countKeysWith(Keys, "then_branch#0:mm|in1/f32_matmul__"), 1u);
  EXPECT_EQ(countKeysWith(Keys, "else_branch#0:mm|in1/f32_matmul__"), 1u);
  rt::Model A = rt::loadModel(Onnx);
  rt::Model C = rt::loadModel(Folder);
  EXPECT_EQ(C.impl()->PackedHits, Keys.size());
  EXPECT_EQ(C.impl()->PackedMisses, 0u);
  rt::Tensor X = rt::tensor(rt::ElementType::F32, rt::TensorShape::fromDims({4, 8}));
  const std::vector<float> XV = wave(32, 1.0f);
  std::memcpy(X.data(), XV.data(), XV.size() * sizeof(float));
  for (bool Cond : {true, false}) {
    rt::Tensor T = rt::tensor(rt::ElementType::Bool, rt::TensorShape::fromDims({}));
    *static_cast<bool *>(T.data()) = Cond;
    expectIdentical(A, C, {X, T}, Cond ? "then branch" : "else branch");
  }
}

TEST(CompiledModel, SmallConstantsComeFirstInTheWeightsFile) {
  // What a compiled model reads at run time when packed.bin serves its big weights (biases, scales)
  // lies together at the start of weights.bin, not between the packed weights: the kernel maps a
  // file's whole large folio on a fault, and a bias between two weights made megabytes of them
  // resident. The graph interleaves them: w1 (256 KiB), b1 (1 KiB), w2 (128 KiB), b2, s.
  rt::AutoInit Init;
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {4, 256});
  B.initializer("w1", {256, 256}, wave(256 * 256, 0.05f, 1.0f));
  B.node("MatMul", {"x", "w1"}, {"h1"}, "mm1");
  B.initializer("b1", {256}, wave(256, 0.5f, 2.0f));
  B.node("Add", {"h1", "b1"}, {"a1"}, "add1");
  B.node("Relu", {"a1"}, {"r1"}, "relu1");
  B.initializer("w2", {256, 128}, wave(256 * 128, 0.05f, 3.0f));
  B.node("MatMul", {"r1", "w2"}, {"h2"}, "mm2");
  B.initializer("b2", {128}, wave(128, 0.5f, 4.0f));
  B.node("Add", {"h2", "b2"}, {"a2"}, "add2");
  B.initializer("s", {128}, wave(128, 2.0f, 5.0f));
  B.node("Mul", {"a2", "s"}, {"y"}, "scale");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Onnx = writeModel(B, "layout.onnx");
  const std::string Folder = compileTo(Onnx);
  rt::Model A = rt::loadModel(Onnx);
  rt::Model C = rt::loadModel(Folder);
  // Every constant of the loaded folder points into the one weights.bin mapping.
  const uint8_t *LastSmall = nullptr, *FirstLarge = nullptr;
  size_t Small = 0, Large = 0;
  for (const rtd::Value &V : C.impl()->G->Values) {
    if (!V.Const || V.Const->Bytes == 0 || !V.Const->Data)
      continue;
    const uint8_t *P = static_cast<const uint8_t *>(V.Const->Data);
    if (V.Const->Bytes < rtd::kCompiledHotConstantBytes) {
      ++Small;
      LastSmall = std::max(LastSmall, P);
    } else {
      ++Large;
      FirstLarge = FirstLarge ? std::min(FirstLarge, P) : P;
    }
  }
  EXPECT_GE(Small, 2u); // the biases and the scale (fusions may fold some of them together)
  ASSERT_EQ(Large, 2u);
  EXPECT_LT(LastSmall, FirstLarge);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(FirstLarge) % rtd::kCompiledPageAlignment, 0u);
  rt::Tensor X = rt::tensor(rt::ElementType::F32, rt::TensorShape::fromDims({4, 256}));
  const std::vector<float> XV = wave(4 * 256, 1.0f);
  std::memcpy(X.data(), XV.data(), XV.size() * sizeof(float));
  expectIdentical(A, C, {X}, "small constants first");
  // Without packed.bin the kernels pack from the moved weights: still the same outputs.
  ASSERT_EQ(std::remove((Folder + "/" + rtd::kCompiledPackedFile).c_str()), 0);
  rt::Model D = rt::loadModel(Folder);
  EXPECT_EQ(D.impl()->PackedHits, 0u);
  expectIdentical(A, D, {X}, "small constants first, packing at load");
}

namespace {
/// How many pages of [P, P + Bytes) this process has mapped in (/proc/self/pagemap's present
/// bit); -1 when pagemap cannot be read.
long presentPages(const void *P, size_t Bytes) {
  const uintptr_t Page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t First = reinterpret_cast<uintptr_t>(P) / Page, Last = (reinterpret_cast<uintptr_t>(P) + Bytes - 1) / Page;
  std::vector<uint64_t> Entries(Last - First + 1);
  const int Fd = ::open("/proc/self/pagemap", O_RDONLY);
  if (Fd < 0)
    return -1;
  const size_t Want = Entries.size() * sizeof(uint64_t);
  const ssize_t Got = ::pread(Fd, Entries.data(), Want, static_cast<off_t>(First * sizeof(uint64_t)));
  ::close(Fd);
  if (Got != static_cast<ssize_t>(Want))
    return -1;
  return static_cast<long>(std::count_if(Entries.begin(), Entries.end(), [](uint64_t E) { return E >> 63; }));
}
} // namespace

TEST(CompiledModel, AGatherTablesRowsAreReadFromTheFileWithoutMappingIt) {
  // ids [1, 8] -> Gather(table [8192, 256]: 8 MiB) -> MatMul(w [256, 32]) -> y. A run reads 8 rows
  // of the table; through the mapping, a file written in one piece (as optimium-compile writes it)
  // sits in the page cache in large folios, each mapped whole on a fault (Linux 6.18): 8 rows made
  // most of the table resident. Read from the file (any_gather__file_rows), no page of it is
  // mapped after a run: from the compiled folder as written, read cold from disk, and from the ONNX
  // file. A table cut short after loading is a clear error naming the file, not a crash.
  rt::AutoInit Init;
  constexpr int64_t Rows = 8192, Dim = 256;
  OnnxBuilder B;
  B.input("ids", onnx::TensorProto_DataType_INT64, {1, 8});
  B.initializer("table", {Rows, Dim}, wave(Rows * Dim, 1.0f, 1.0f));
  B.initializer("w", {Dim, 32}, wave(Dim * 32, 0.05f, 2.0f));
  B.node("Gather", {"table", "ids"}, {"emb"}, "embed");
  B.node("MatMul", {"emb", "w"}, {"y"}, "proj");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Onnx = writeModel(B, "table.onnx");
  const std::string Folder = compileTo(Onnx);
  const std::string Weights = Folder + "/" + rtd::kCompiledWeightsFile;
  rt::TypedTensor<int64_t> Ids = rt::tensor<int64_t>({1, 8});
  const int64_t IdValues[8] = {3, Rows - 1, 4000, 4001, 4002, 3, 0, Rows / 2 + 17};
  std::copy(IdValues, IdValues + 8, Ids.data());
  const auto tableOf = [](const rt::Model &M) -> const rtd::ConstData & {
    const rtd::Graph &G = *M.impl()->G;
    return *G.Values[static_cast<size_t>(G.findValue("table"))].Const;
  };
  rt::Model A = rt::loadModel(Onnx);
  for (const bool Cold : {false, true}) {
    const std::string What = Cold ? "compiled, cold" : "compiled, as written";
    if (Cold) { // the file's pages leave the page cache: the load reads it from disk
      const int Fd = ::open(Weights.c_str(), O_RDONLY);
      ASSERT_GE(Fd, 0);
      EXPECT_EQ(::posix_fadvise(Fd, 0, 0, POSIX_FADV_DONTNEED), 0);
      ::close(Fd);
    }
    rt::Model C = rt::loadModel(Folder);
    expectIdentical(A, C, {Ids}, What);
    const rtd::ConstData &T = tableOf(C);
    ASSERT_NE(T.Data, nullptr) << What;
    const long Present = presentPages(T.Data, T.Bytes);
    if (Present < 0)
      GTEST_SKIP() << "cannot read /proc/self/pagemap";
    EXPECT_EQ(Present, 0) << What << ": pages of the " << T.Bytes << "-byte table mapped after a run";
  }
  const rtd::ConstData &OnnxTable = tableOf(A);
  EXPECT_EQ(presentPages(OnnxTable.Data ? OnnxTable.Data : OnnxTable.Source, OnnxTable.Bytes), 0) << "ONNX file";

  // weights.bin ends with the table (w is small: it comes first); cut off its second half.
  rt::Model C = rt::loadModel(Folder);
  struct stat St;
  ASSERT_EQ(::stat(Weights.c_str(), &St), 0);
  ASSERT_EQ(::truncate(Weights.c_str(), St.st_size - static_cast<off_t>(tableOf(C).Bytes / 2)), 0);
  try {
    run(C, {Ids});
    ADD_FAILURE() << "a run reading rows past the end of a truncated weights.bin succeeded";
  } catch (const rt::Exception &E) {
    const std::string Message = E.what();
    EXPECT_NE(Message.find(Weights), std::string::npos) << Message;
    EXPECT_NE(Message.find("ends before"), std::string::npos) << Message;
  }
}
