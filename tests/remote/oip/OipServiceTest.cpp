// OipService over the bundled digits model: routing, auth, metadata and inference (JSON and
// binary), without sockets.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "OipService.h"

using namespace optimium::remote::oip;
using json = nlohmann::json;

namespace {

const std::string kRoot = OPTIMIUM_TEST_DATA_DIR;

HttpRequest request(const std::string &Method, const std::string &Path, std::string Body = "",
                    std::vector<std::pair<std::string, std::string>> Headers = {}) {
  HttpRequest R;
  R.Method = Method;
  R.Path = Path;
  R.Target = Path;
  R.Body = std::move(Body);
  R.Headers = std::move(Headers);
  return R;
}

std::vector<float> digitsInput() {
  std::ifstream F(kRoot + "/models/digits/sample_input.bin", std::ios::binary);
  std::vector<float> V(64);
  F.read(reinterpret_cast<char *>(V.data()), 64 * 4);
  return V;
}

OipOptions options() {
  OipOptions O;
  O.Workspace = kRoot + "/models";
  O.Models = {{"digits", "digits"}};
  O.ModelThreads = 1;
  return O;
}

} // namespace

TEST(OipService, HealthMetadataAndErrors) {
  OipService S(options());
  EXPECT_EQ(S.handle(request("GET", "/v2/health/live")).Body, "{\"live\":true}");
  EXPECT_EQ(S.handle(request("GET", "/v2/health/ready")).Status, 200);
  json Server = json::parse(S.handle(request("GET", "/v2")).Body);
  EXPECT_EQ(Server["extensions"], json::array({"binary_tensor_data"}));
  HttpResponse M = S.handle(request("GET", "/v2/models/digits"));
  ASSERT_EQ(M.Status, 200);
  json Meta = json::parse(M.Body);
  EXPECT_EQ(Meta["name"], "digits");
  EXPECT_EQ(Meta["inputs"][0]["datatype"], "FP32");
  EXPECT_EQ(Meta["inputs"][0]["shape"], json::array({1, 1, 8, 8}));
  EXPECT_EQ(S.handle(request("GET", "/v2/models/digits/versions/1/ready")).Status, 200);
  EXPECT_EQ(S.handle(request("GET", "/v2/models/digits/versions/2")).Status, 404);
  HttpResponse NF = S.handle(request("GET", "/v2/models/nope"));
  EXPECT_EQ(NF.Status, 404);
  EXPECT_EQ(NF.Body, "{\"error\":\"model 'nope' not found\"}");
  EXPECT_EQ(S.handle(request("POST", "/v2/models/digits")).Status, 405);
  EXPECT_EQ(S.handle(request("GET", "/v2/models/digits/infer")).Status, 405);
  EXPECT_EQ(S.handle(request("GET", "/v1/models")).Status, 404);
  EXPECT_EQ(S.handle(request("POST", "/v2/models/digits/infer", "{bad")).Status, 400);
}

TEST(OipService, InferJsonAndBinary) {
  OipService S(options());
  const std::vector<float> X = digitsInput();
  json Req = {{"id", "r1"},
              {"inputs", {{{"name", "image"}, {"datatype", "FP32"}, {"shape", {1, 1, 8, 8}}, {"data", X}}}}};
  HttpResponse J = S.handle(request("POST", "/v2/models/digits/infer", Req.dump()));
  ASSERT_EQ(J.Status, 200) << J.Body;
  json Out = json::parse(J.Body);
  EXPECT_EQ(Out["id"], "r1");
  EXPECT_EQ(Out["model_name"], "digits");
  std::vector<float> P = Out["outputs"][0]["data"].get<std::vector<float>>();
  ASSERT_EQ(P.size(), 10u);
  EXPECT_EQ(std::max_element(P.begin(), P.end()) - P.begin(), 7); // the sample is a 7

  // The same input as binary, the output requested binary.
  json BinReq = {{"inputs", {{{"name", "image"}, {"datatype", "FP32"}, {"shape", {1, 1, 8, 8}},
                              {"parameters", {{"binary_data_size", 256}}}}}},
                 {"outputs", {{{"name", "probabilities"}, {"parameters", {{"binary_data", true}}}}}}};
  std::string Header = BinReq.dump();
  std::string Body = Header + std::string(reinterpret_cast<const char *>(X.data()), 256);
  HttpResponse B = S.handle(request("POST", "/v2/models/digits/infer", Body,
                                    {{"inference-header-content-length", std::to_string(Header.size())}}));
  ASSERT_EQ(B.Status, 200) << B.Body;
  const std::string *HL = nullptr;
  for (const auto &H : B.Headers)
    if (H.first == "Inference-Header-Content-Length")
      HL = &H.second;
  ASSERT_NE(HL, nullptr);
  const size_t Len = std::stoul(*HL);
  json BOut = json::parse(B.Body.substr(0, Len));
  EXPECT_EQ(BOut["outputs"][0]["parameters"]["binary_data_size"], 40);
  ASSERT_EQ(B.Body.size(), Len + 40);
  std::vector<float> PB(10);
  std::memcpy(PB.data(), B.Body.data() + Len, 40);
  for (size_t I = 0; I < 10; ++I)
    EXPECT_EQ(PB[I], P[I]);

  // Wrong shape, unknown output, missing input, bad header length.
  Req["inputs"][0]["shape"] = {1, 64};
  HttpResponse W = S.handle(request("POST", "/v2/models/digits/infer", Req.dump()));
  EXPECT_EQ(W.Status, 400);
  EXPECT_NE(W.Body.find("input 'image': shape [1,64] does not match the model's [1,1,8,8]"), std::string::npos) << W.Body;
  Req["inputs"][0]["shape"] = {1, 1, 8, 8};
  Req["outputs"] = {{{"name", "zzz"}}};
  HttpResponse U = S.handle(request("POST", "/v2/models/digits/infer", Req.dump()));
  EXPECT_EQ(U.Status, 400);
  EXPECT_NE(U.Body.find("no output 'zzz'"), std::string::npos) << U.Body;
  HttpResponse Missing = S.handle(request("POST", "/v2/models/digits/infer", R"({"inputs":[]})"));
  EXPECT_EQ(Missing.Status, 400);
  EXPECT_NE(Missing.Body.find("input 'image' of model 'digits' is missing"), std::string::npos) << Missing.Body;
  HttpResponse BadLen = S.handle(request("POST", "/v2/models/digits/infer", "{}",
                                         {{"inference-header-content-length", "99"}}));
  EXPECT_EQ(BadLen.Status, 400);
}

TEST(OipService, AccessToken) {
  OipOptions O = options();
  O.AccessToken = "s3cret";
  OipService S(O);
  EXPECT_EQ(S.handle(request("GET", "/v2/health/live")).Status, 200); // probes stay open
  EXPECT_EQ(S.handle(request("GET", "/v2/models/digits")).Status, 401);
  EXPECT_EQ(S.handle(request("GET", "/v2/models/digits", "", {{"authorization", "Bearer nope"}})).Status, 401);
  EXPECT_EQ(S.handle(request("GET", "/v2/models/digits", "", {{"authorization", "Bearer s3cret"}})).Status, 200);
}

TEST(OipService, ModelPathsStayInTheWorkspace) {
  OipOptions O = options();
  O.Models = {{"x", "../README.md"}};
  EXPECT_THROW(resolveModels(O), std::runtime_error);
  O.Models = {{"x", "/etc/passwd"}};
  EXPECT_THROW(resolveModels(O), std::runtime_error);
  O.Models = {{"x", "missing.onnx"}};
  EXPECT_THROW(resolveModels(O), std::runtime_error);
  O.Models = {{"bad name", "digits"}};
  EXPECT_THROW(resolveModels(O), std::runtime_error);
  O.Models.clear(); // discovery: models/digits holds model.onnx
  auto M = resolveModels(O);
  ASSERT_EQ(M.size(), 1u);
  EXPECT_EQ(M[0].first, "digits");
}
