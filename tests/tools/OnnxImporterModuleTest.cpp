// The shared runtime's ONNX importer module (src/import/onnx/OnnxImporterModule.h): protobuf is
// loaded only for ONNX models, and a missing or foreign module is a clear error, never a crash.
#include "ToolTestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace optimium_test;

namespace {

const std::string Digits = std::string(OPTIMIUM_TEST_DATA_DIR) + "/models/digits";

// optimium-run with the environment Env (e.g. "LD_DEBUG=files") in front.
RunResult runTool(const std::string &Env, const std::vector<std::string> &Args, const std::string &Dir) {
  return optimium_test::runWithEnv(OPTIMIUM_RUN_BINARY, Env, Args, Dir + "/stderr.txt");
}

std::string compileDigits(const std::string &Dir) {
  const std::string Folder = Dir + "/digits.opt";
  RunResult R = runProcess(OPTIMIUM_COMPILE_BINARY, {Digits, "-o", Folder}, Dir + "/compile_stderr.txt");
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  return Folder;
}

} // namespace

// The glibc loader's own record (LD_DEBUG=files) of what a process loads: a compiled folder runs
// without protobuf or libonnx_proto, an ONNX model loads them through the importer module.
TEST(OnnxImporterModule, ProtobufIsLoadedOnlyForOnnxModels) {
  const std::string Dir = testTempDir("optimium_onnx_module_");
  const std::string Folder = compileDigits(Dir);
  const std::vector<std::string> Expect = {"--input=@" + Digits + "/sample_input.npy",
                                           "--expected_output=@" + Digits + "/sample_output.npy"};
  std::vector<std::string> Args = {"--module=" + Folder};
  Args.insert(Args.end(), Expect.begin(), Expect.end());
  RunResult R = runTool("LD_DEBUG=files", Args, Dir);
  ASSERT_EQ(R.Code, 0) << R.Out << R.Err;
  EXPECT_NE(R.Out.find("[SUCCESS]"), std::string::npos) << R.Out;
  EXPECT_EQ(R.Err.find("libprotobuf"), std::string::npos) << R.Err;
  EXPECT_EQ(R.Err.find("libonnx_proto"), std::string::npos) << R.Err;
  EXPECT_EQ(R.Err.find("liboptimium-runtime-onnx"), std::string::npos) << R.Err;

  Args = {"--module=" + Digits + "/model.onnx"};
  Args.insert(Args.end(), Expect.begin(), Expect.end());
  R = runTool("LD_DEBUG=files", Args, Dir);
  ASSERT_EQ(R.Code, 0) << R.Out << R.Err;
  EXPECT_NE(R.Out.find("[SUCCESS]"), std::string::npos) << R.Out;
  EXPECT_NE(R.Err.find("liboptimium-runtime-onnx.so"), std::string::npos) << R.Err;
  EXPECT_NE(R.Err.find("libprotobuf"), std::string::npos) << R.Err;
  std::filesystem::remove_all(Dir);
}

// A runtime library without the module beside it (or with something else under its name) still
// runs compiled folders; an ONNX model is one clear error line naming the module and why.
TEST(OnnxImporterModule, AMissingOrForeignModuleIsAClearError) {
  const std::string Dir = testTempDir("optimium_onnx_module_");
  const std::string Folder = compileDigits(Dir);
  const std::string Lib = Dir + "/lib";
  ::mkdir(Lib.c_str(), 0755);
  // A copy (not a symlink: the loader would find the module beside the file it points to).
  copyFile(OPTIMIUM_RUNTIME_LIBRARY, Lib + "/liboptimium-runtime.so.4.4");
  const std::string Env = "LD_LIBRARY_PATH=" + Lib;
  const std::vector<std::string> Input = {"--input=@" + Digits + "/sample_input.npy"};

  std::vector<std::string> Args = {"--module=" + Folder};
  Args.insert(Args.end(), Input.begin(), Input.end());
  RunResult R = runTool(Env, Args, Dir);
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;

  const std::string Model = Digits + "/model.onnx";
  Args = {"--module=" + Model};
  Args.insert(Args.end(), Input.begin(), Input.end());
  R = runTool(Env, Args, Dir);
  EXPECT_EQ(R.Code, 1) << R.Out << R.Err;
  EXPECT_EQ(R.Err.rfind("optimium-run: error: " + Model +
                            ": loading an ONNX model needs the importer module liboptimium-runtime-onnx.so beside the "
                            "runtime library, which was not usable: " + Lib + "/liboptimium-runtime-onnx.so: ",
                        0),
            0u)
      << R.Err;
  EXPECT_EQ(R.Out, "");

  // Another shared object under the module's name is refused, not called.
  copyFile(OPTIMIUM_EXAMPLE_BACKEND, Lib + "/liboptimium-runtime-onnx.so");
  R = runTool(Env, Args, Dir);
  EXPECT_EQ(R.Code, 1) << R.Out << R.Err;
  EXPECT_NE(R.Err.find(Lib + "/liboptimium-runtime-onnx.so: not the ONNX importer of this runtime build (no "
                             "optimium_rt_onnx_importer)"),
            std::string::npos)
      << R.Err;

  // The real module beside the copy: it works again.
  copyFile(OPTIMIUM_ONNX_MODULE, Lib + "/liboptimium-runtime-onnx.so");
  R = runTool(Env, Args, Dir);
  EXPECT_EQ(R.Code, 0) << R.Out << R.Err;
  std::filesystem::remove_all(Dir);
}
