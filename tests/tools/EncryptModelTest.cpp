// optimium-encrypt: the real binary writes a folder the runtime loads with the passphrase (same
// outputs as the plain model), takes the passphrase from a file or OPTIMIUM_RT_PASSPHRASE and
// refuses it on the command line; its error cases.
#include "tools/EncryptModel.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "Optimium/Runtime.h"
#include "ToolTestUtil.h"
#include "core/Npy.h"

using namespace optimium::tools;
using namespace optimium_test;
namespace rt = optimium::runtime;

namespace {

std::string tempDir() {
  char Tmpl[] = "/tmp/optimium_encrypt_tool_XXXXXX";
  return mkdtemp(Tmpl);
}

std::string source(const std::string &Rel) { return std::string(OPTIMIUM_TEST_DATA_DIR) + "/" + Rel; }

rt::Tensor runOnce(rt::Model &M, const rt::Tensor &In) {
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(std::vector<rt::Tensor>{In}));
  EXPECT_FALSE(R.wait());
  return R.getOutput(0);
}

RunResult encryptTool(const std::vector<std::string> &Args, const std::string &EnvPassphrase = "") {
  std::string Binary = OPTIMIUM_ENCRYPT_BINARY;
  if (!EnvPassphrase.empty())
    ::setenv("OPTIMIUM_RT_PASSPHRASE", EnvPassphrase.c_str(), 1);
  else
    ::unsetenv("OPTIMIUM_RT_PASSPHRASE");
  RunResult R = runProcess(Binary, Args, tempDir() + "/stderr");
  ::unsetenv("OPTIMIUM_RT_PASSPHRASE");
  return R;
}

void expectSameOutputs(const std::string &Plain, const std::string &Sealed, const std::string &Passphrase,
                       const std::string &Input) {
  rt::AutoInit Init;
  rt::ModelLoadOptions O;
  O.Passphrase = Passphrase;
  rt::Model A = rt::loadModel(Plain);
  rt::Model B = rt::loadModel(Sealed, O);
  const optimium::npy::HostArray Arr = optimium::npy::readNpyFile(Input);
  rt::Tensor In = rt::tensor(Arr.Type, rt::TensorShape::fromDims(Arr.Dims));
  std::memcpy(In.data(), Arr.Bytes.data(), Arr.Bytes.size());
  rt::Tensor X = runOnce(A, In), Y = runOnce(B, In);
  ASSERT_EQ(X.getTensorSize(), Y.getTensorSize());
  EXPECT_EQ(std::memcmp(X.data(), Y.data(), X.getTensorSize()), 0);
}

} // namespace

TEST(EncryptModelTool, PassphraseFromAFile) {
  const std::string Dir = tempDir();
  std::ofstream(Dir + "/pass.txt") << "from a file\n";
  RunResult R = encryptTool({source("tests/models/external_data"), "-o", Dir + "/enc", "--passphrase-file",
                             Dir + "/pass.txt", "--scrypt-log2n", "10"});
  ASSERT_EQ(R.Code, 0) << R.Err;
  EXPECT_NE(R.Out.find("encrypted " + Dir + "/enc/weights.bin"), std::string::npos) << R.Out;
  EXPECT_NE(R.Out.find("encryption.json"), std::string::npos) << R.Out;
  expectSameOutputs(source("tests/models/external_data"), Dir + "/enc", "from a file",
                    source("tests/models/external_data/input_0.npy"));
}

TEST(EncryptModelTool, PassphraseFromTheEnvironmentWithTheDefaultKdf) {
  const std::string Dir = tempDir();
  RunResult R = encryptTool({source("models/digits/model.onnx"), "-o", Dir + "/enc"}, "from the environment");
  ASSERT_EQ(R.Code, 0) << R.Err;
  expectSameOutputs(source("models/digits"), Dir + "/enc", "from the environment", source("models/digits/sample_input.npy"));
  rt::AutoInit Init;
  rt::ModelLoadOptions Wrong;
  Wrong.Passphrase = "from a file";
  EXPECT_THROW(rt::loadModel(Dir + "/enc", Wrong), rt::ContainerError);
}

TEST(EncryptModelTool, RefusesThePassphraseOnTheCommandLineAndBadArguments) {
  const std::string Dir = tempDir();
  const std::string Model = source("tests/models/mlp");
  RunResult R = encryptTool({Model, "-o", Dir + "/a", "--passphrase", "secret"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("not taken from the command line"), std::string::npos) << R.Err;
  EXPECT_EQ(R.Err.find("secret"), std::string::npos) << R.Err;
  R = encryptTool({Model, "-o", Dir + "/b"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("OPTIMIUM_RT_PASSPHRASE"), std::string::npos) << R.Err;
  R = encryptTool({Model, "-o", Dir + "/c", "--passphrase-file", Dir + "/none"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("cannot read the passphrase file"), std::string::npos) << R.Err;
  std::ofstream(Dir + "/empty.txt") << "\nsecond line";
  R = encryptTool({Model, "-o", Dir + "/d", "--passphrase-file", Dir + "/empty.txt"});
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("empty line"), std::string::npos) << R.Err;
  R = encryptTool({Model, "-o", Dir + "/e", "--scrypt-log2n", "40"}, "pw");
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("--scrypt-log2n"), std::string::npos) << R.Err;
  R = encryptTool({Dir + "/no-such-model", "-o", Dir + "/f"}, "pw");
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("does not exist"), std::string::npos) << R.Err;
  R = encryptTool({Model}, "pw");
  EXPECT_EQ(R.Code, 1);
  EXPECT_NE(R.Err.find("usage"), std::string::npos) << R.Err;
  R = encryptTool({"--help"});
  EXPECT_EQ(R.Code, 0);
  EXPECT_NE(R.Out.find("OPTIMIUM_RT_PASSPHRASE"), std::string::npos);
}
