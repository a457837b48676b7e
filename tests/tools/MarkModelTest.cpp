// optimium-mark: glob expansion, writing and updating optimium.json, the runtime accepting what
// it writes, and its error cases (bad patterns, unknown outputs, bad existing manifests).
#include "tools/MarkModel.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "ToolTestUtil.h"

using namespace optimium::tools;
using namespace optimium_test;
namespace rt = optimium::runtime;

namespace {

/// A 2-layer toy "decoder": present_{key,value}_i = Concat(past_{key,value}_i, x), y = Relu(x).
std::string decoderFolder() {
  OnnxBuilder B;
  const int F32 = onnx::TensorProto_DataType_FLOAT;
  B.input("x", F32, {1, 2, 1, 4});
  for (int I = 0; I < 2; ++I)
    for (const char *KV : {"key", "value"}) {
      const std::string Suffix = std::string(KV) + "_" + std::to_string(I);
      B.input("past_" + Suffix, F32, {1, 2, 0, 4}, {"", "", "past_len", ""});
      auto *N = B.node("Concat", {"past_" + Suffix, "x"}, {"present_" + Suffix}, "cat_" + Suffix);
      OnnxBuilder::attrInt(N, "axis", 2);
      B.output("present_" + Suffix, F32);
    }
  B.node("Relu", {"x"}, {"y"}, "relu");
  B.output("y", F32);
  char Tmpl[] = "/tmp/optimium_mark_XXXXXX";
  std::string Dir = mkdtemp(Tmpl);
  std::ofstream(Dir + "/model.onnx", std::ios::binary) << B.bytes();
  return Dir;
}

int runMain(std::vector<std::string> Args, std::string &Out, std::string &Err) {
  Args.insert(Args.begin(), "optimium-mark");
  std::vector<char *> Argv;
  for (auto &A : Args)
    Argv.push_back(&A[0]);
  std::ostringstream O, E;
  const int RC = markModelMain(static_cast<int>(Argv.size()), Argv.data(), O, E);
  Out = O.str();
  Err = E.str();
  return RC;
}

} // namespace

TEST(MarkModel, GlobMatch) {
  std::string C;
  EXPECT_TRUE(globMatch("past_*", "past_key_0", &C));
  EXPECT_EQ(C, "key_0");
  EXPECT_TRUE(globMatch("*_0", "past_key_0", &C));
  EXPECT_EQ(C, "past_key");
  EXPECT_TRUE(globMatch("exact", "exact", nullptr));
  EXPECT_FALSE(globMatch("past_*", "present_key_0", nullptr));
  EXPECT_FALSE(globMatch("a*a", "a", nullptr));
}

TEST(MarkModel, WritesAManifestTheRuntimeLoads) {
  const std::string Dir = decoderFolder();
  std::string Out, Err;
  ASSERT_EQ(runMain({Dir, "--preserve", "past_*=present_*", "--resizable=past_*=1x2x0x4"}, Out, Err), 0) << Err;
  EXPECT_NE(Out.find("preserve past_key_1 <- present_key_1"), std::string::npos) << Out;
  const std::string Json = readFile(Dir + "/optimium.json");
  EXPECT_NE(Json.find("\"update_from\": \"present_value_0\""), std::string::npos) << Json;
  EXPECT_NE(Json.find("\"base_shape\""), std::string::npos) << Json;

  rt::AutoInit Init;
  rt::Model M = rt::loadModel(Dir);
  ASSERT_EQ(M.getInputNames().size(), 1u);
  EXPECT_EQ(M.getInputNames()[0].str(), "x");
  EXPECT_TRUE(M.getTensorInfo("past_value_1").Resizable);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> X = rt::tensor<float>({1, 2, 1, 4});
  for (int Step = 1; Step <= 3; ++Step) {
    X.fill(static_cast<float>(Step));
    R.infer({X});
    R.wait();
  }
  rt::TypedTensor<float> K(R.getTensor("past_key_1"));
  EXPECT_EQ(K.getShape(), rt::TensorShape({1, 2, 3, 4}));
  EXPECT_EQ(K[0], 1.0f);
  EXPECT_EQ(K[4], 2.0f);
  EXPECT_EQ(K[8], 3.0f);
}

TEST(MarkModel, UpdatesAnExistingManifest) {
  const std::string Dir = decoderFolder();
  std::string Out, Err;
  ASSERT_EQ(runMain({Dir, "--preserve", "past_key_0=present_key_0", "--resizable", "past_key_0=1x2x0x4"}, Out, Err), 0) << Err;
  ASSERT_EQ(runMain({Dir, "--preserve", "past_value_0=present_value_0", "--resizable", "past_value_0=1x2x0x4"}, Out, Err), 0)
      << Err;
  const std::string Json = readFile(Dir + "/optimium.json");
  EXPECT_NE(Json.find("past_key_0"), std::string::npos);
  EXPECT_NE(Json.find("past_value_0"), std::string::npos);
  EXPECT_EQ(Json.find("past_key_1"), std::string::npos);
}

TEST(MarkModel, Errors) {
  const std::string Dir = decoderFolder();
  std::string Out, Err;
  EXPECT_EQ(runMain({Dir}, Out, Err), 1); // nothing to do
  EXPECT_EQ(runMain({"/nonexistent", "--preserve", "a"}, Out, Err), 1);
  EXPECT_NE(Err.find("not a model folder"), std::string::npos) << Err;
  EXPECT_EQ(runMain({Dir, "--preserve", "nothing_*"}, Out, Err), 1);
  EXPECT_NE(Err.find("no graph input matches"), std::string::npos) << Err;
  EXPECT_EQ(runMain({Dir, "--preserve", "past_*=missing_*"}, Out, Err), 1);
  EXPECT_NE(Err.find("not a graph output"), std::string::npos) << Err;
  EXPECT_EQ(runMain({Dir, "--resizable", "past_*=1xAx0"}, Out, Err), 1);
  EXPECT_EQ(runMain({Dir, "--resizable", "past_*"}, Out, Err), 1);
  EXPECT_EQ(runMain({Dir, "--preserve", "p*s*"}, Out, Err), 1);
  EXPECT_EQ(runMain({Dir, "--bogus"}, Out, Err), 1);
  struct stat St;
  EXPECT_NE(::stat((Dir + "/optimium.json").c_str(), &St), 0); // nothing written on errors
  // A broken existing manifest is reported with its path, not overwritten.
  std::ofstream(Dir + "/optimium.json") << "{\"optimium_manifest\": 1, \"tensors\": {\"x\": {\"bogus\": 1}}}";
  EXPECT_EQ(runMain({Dir, "--preserve", "past_*=present_*"}, Out, Err), 1);
  EXPECT_NE(Err.find("tensors.x.bogus"), std::string::npos) << Err;
  EXPECT_NE(readFile(Dir + "/optimium.json").find("bogus"), std::string::npos);
}
