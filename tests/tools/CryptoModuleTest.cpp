// The shared runtime's crypto module (src/import/SealedCrypto.h): OpenSSL's libcrypto is loaded only
// for an encrypted model folder, optimium-run reads an encrypted folder's passphrase from a file,
// and a missing or foreign module is a clear error, never a crash.
#include "ToolTestUtil.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace optimium_test;

namespace {

const std::string Digits = std::string(OPTIMIUM_TEST_DATA_DIR) + "/models/digits";

void writeFile(const std::string &Path, const std::string &Text) { std::ofstream(Path, std::ios::trunc) << Text; }

// optimium-run with the environment Env (e.g. "LD_DEBUG=files") in front.
RunResult runTool(const std::string &Env, const std::vector<std::string> &Args, const std::string &Dir) {
  return optimium_test::runWithEnv(OPTIMIUM_RUN_BINARY, Env, Args, Dir + "/stderr.txt");
}

/// The digits model compiled into Dir/NAME, encrypted with the passphrase in PassFile when given.
std::string compileDigits(const std::string &Dir, const std::string &Name, const std::string &PassFile) {
  const std::string Folder = Dir + "/" + Name;
  std::vector<std::string> Args = {Digits, "-o", Folder};
  if (!PassFile.empty())
    Args.insert(Args.end(), {"--passphrase-file", PassFile});
  RunResult R = runProcess(OPTIMIUM_COMPILE_BINARY, Args, Dir + "/compile_stderr.txt");
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  return Folder;
}

const std::vector<std::string> Expect = {"--input=@" + Digits + "/sample_input.npy",
                                         "--expected_output=@" + Digits + "/sample_output.npy"};

std::vector<std::string> args(const std::string &Module, std::vector<std::string> Extra = {}) {
  std::vector<std::string> A = {"--module=" + Module};
  A.insert(A.end(), Extra.begin(), Extra.end());
  A.insert(A.end(), Expect.begin(), Expect.end());
  return A;
}

} // namespace

// The glibc loader's own record (LD_DEBUG=files): a plain compiled folder runs without libcrypto,
// an encrypted one loads it through the module and gives the plain folder's outputs.
TEST(CryptoModule, LibcryptoIsLoadedOnlyForEncryptedFolders) {
  const std::string Dir = testTempDir("optimium_crypto_module_");
  writeFile(Dir + "/pass.txt", "correct horse battery staple\n");
  const std::string Plain = compileDigits(Dir, "plain.opt", "");
  const std::string Sealed = compileDigits(Dir, "sealed.opt", Dir + "/pass.txt");

  RunResult R = runTool("LD_DEBUG=files", args(Plain), Dir);
  ASSERT_EQ(R.Code, 0) << R.Out << R.Err;
  EXPECT_NE(R.Out.find("[SUCCESS]"), std::string::npos) << R.Out;
  EXPECT_EQ(R.Err.find("libcrypto"), std::string::npos) << R.Err;
  EXPECT_EQ(R.Err.find("liboptimium-runtime-crypto"), std::string::npos) << R.Err;

  R = runTool("LD_DEBUG=files", args(Sealed, {"--passphrase_file=" + Dir + "/pass.txt"}), Dir);
  ASSERT_EQ(R.Code, 0) << R.Out << R.Err;
  EXPECT_NE(R.Out.find("[SUCCESS]"), std::string::npos) << R.Out;
  EXPECT_NE(R.Err.find("liboptimium-runtime-crypto.so"), std::string::npos) << R.Err;
  EXPECT_NE(R.Err.find("libcrypto"), std::string::npos) << R.Err;

  // The passphrase from the environment works too; a wrong one is a clear error.
  R = runTool("OPTIMIUM_RT_PASSPHRASE=correct horse battery staple", args(Sealed), Dir);
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  writeFile(Dir + "/wrong.txt", "wrong\n");
  R = runTool("LD_DEBUG=", args(Sealed, {"--passphrase_file=" + Dir + "/wrong.txt"}), Dir);
  EXPECT_EQ(R.Code, 1) << R.Out << R.Err;
  EXPECT_NE(R.Err.find("passphrase"), std::string::npos) << R.Err;
  EXPECT_EQ(R.Out.find("[SUCCESS]"), std::string::npos) << R.Out;
  std::filesystem::remove_all(Dir);
}

// Never on the command line, where other users can read it in the process list.
TEST(CryptoModule, RunRefusesAPassphraseOnTheCommandLine) {
  const std::string Dir = testTempDir("optimium_crypto_module_");
  RunResult R = runTool("LD_DEBUG=", args(Digits + "/model.onnx", {"--passphrase=secret"}), Dir);
  EXPECT_EQ(R.Code, 1) << R.Out << R.Err;
  EXPECT_NE(R.Err.find("--passphrase: not on the command line"), std::string::npos) << R.Err;
  EXPECT_EQ(R.Err.find("secret"), std::string::npos) << R.Err;
  std::filesystem::remove_all(Dir);
}

// A runtime library without the module beside it (or with something else under its name) still
// runs plain folders; an encrypted one is one clear error line naming the module and why.
TEST(CryptoModule, AMissingOrForeignModuleIsAClearError) {
  const std::string Dir = testTempDir("optimium_crypto_module_");
  writeFile(Dir + "/pass.txt", "secret words\n");
  const std::string Plain = compileDigits(Dir, "plain.opt", "");
  const std::string Sealed = compileDigits(Dir, "sealed.opt", Dir + "/pass.txt");
  const std::string Lib = Dir + "/lib";
  ::mkdir(Lib.c_str(), 0755);
  // A copy (not a symlink: the loader would find the module beside the file it points to).
  copyFile(OPTIMIUM_RUNTIME_LIBRARY, Lib + "/liboptimium-runtime.so.4.4");
  const std::string Env = "LD_LIBRARY_PATH=" + Lib;
  const std::string PassFlag = "--passphrase_file=" + Dir + "/pass.txt";

  RunResult R = runTool(Env, args(Plain), Dir);
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;

  R = runTool(Env, args(Sealed, {PassFlag}), Dir);
  EXPECT_EQ(R.Code, 1) << R.Out << R.Err;
  EXPECT_NE(R.Err.find("reading an encrypted model needs the module liboptimium-runtime-crypto.so beside the "
                       "runtime library, which was not usable: " + Lib + "/liboptimium-runtime-crypto.so: "),
            std::string::npos)
      << R.Err;
  EXPECT_EQ(R.Out.find("[SUCCESS]"), std::string::npos) << R.Out;

  // Another shared object under the module's name is refused, not called.
  copyFile(OPTIMIUM_EXAMPLE_BACKEND, Lib + "/liboptimium-runtime-crypto.so");
  R = runTool(Env, args(Sealed, {PassFlag}), Dir);
  EXPECT_EQ(R.Code, 1) << R.Out << R.Err;
  EXPECT_NE(R.Err.find(Lib + "/liboptimium-runtime-crypto.so: not the crypto module of this runtime build (no "
                             "optimium_rt_crypto)"),
            std::string::npos)
      << R.Err;

  // The real module beside the copy: it works again.
  copyFile(OPTIMIUM_CRYPTO_MODULE, Lib + "/liboptimium-runtime-crypto.so");
  R = runTool(Env, args(Sealed, {PassFlag}), Dir);
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  EXPECT_NE(R.Out.find("[SUCCESS]"), std::string::npos) << R.Out;
  std::filesystem::remove_all(Dir);
}
