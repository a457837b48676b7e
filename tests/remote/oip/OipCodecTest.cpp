// The OIP inference request header (JSON + binary layout), datatype names and tensor conversion.
#include <gtest/gtest.h>

#include <cstring>

#include "OipCodec.h"

using namespace optimium::remote::oip;
namespace rt = optimium::runtime;

namespace {

bool parse(const std::string &Header, OipInferRequest &R, std::string &E, size_t Binary = 0) {
  return parseInferRequest(Header.data(), Header.size(), Binary, R, E);
}

std::string parseError(const std::string &Header, size_t Binary = 0) {
  OipInferRequest R;
  std::string E;
  return parse(Header, R, E, Binary) ? "" : E;
}

rt::TensorInfo info(const std::string &Name, rt::ElementType T, rt::TensorShape S) {
  rt::TensorInfo I;
  I.Name = Name;
  I.Type = T;
  I.Shape = std::move(S);
  return I;
}

class OipCodec : public ::testing::Test {
protected:
  rt::AutoInit Init;
};

} // namespace

TEST_F(OipCodec, DatatypeNames) {
  EXPECT_EQ(datatypeName(rt::ElementType::F32), "FP32");
  EXPECT_EQ(datatypeName(rt::ElementType::I64), "INT64");
  EXPECT_EQ(datatypeName(rt::ElementType::Bool), "BOOL");
  EXPECT_EQ(datatypeName(rt::ElementType::String), "BYTES");
  EXPECT_EQ(datatypeName(rt::ElementType::F8E4M3FN), "");
  EXPECT_EQ(elementTypeOf("UINT8"), rt::ElementType::U8);
  EXPECT_EQ(elementTypeOf("FP16"), rt::ElementType::F16);
  EXPECT_EQ(elementTypeOf("fp32"), rt::ElementType::Undefined);
}

TEST_F(OipCodec, ParsesJsonAndBinaryInputs) {
  OipInferRequest R;
  std::string E;
  const std::string H = R"({"id":"42","parameters":{"binary_data_output":true},
    "inputs":[{"name":"a","datatype":"FP32","shape":[2,2],"data":[[1,2],[3,4]]},
              {"name":"b","datatype":"INT64","shape":[2],"parameters":{"binary_data_size":16}},
              {"name":"c","datatype":"UINT8","shape":[3],"parameters":{"binary_data_size":3}}],
    "outputs":[{"name":"y","parameters":{"binary_data":false}},{"name":"z"}]})";
  ASSERT_TRUE(parse(H, R, E, 19)) << E;
  EXPECT_TRUE(R.HasId);
  EXPECT_EQ(R.Id, "42");
  EXPECT_TRUE(R.BinaryOutputDefault);
  ASSERT_EQ(R.Inputs.size(), 3u);
  EXPECT_TRUE(R.Inputs[0].HasJsonData);
  EXPECT_EQ(R.Inputs[0].Shape, (std::vector<int64_t>{2, 2}));
  EXPECT_TRUE(R.Inputs[1].Binary);
  EXPECT_EQ(R.Inputs[1].BinaryOffset, 0u);
  EXPECT_EQ(R.Inputs[2].BinaryOffset, 16u);
  ASSERT_EQ(R.Outputs.size(), 2u);
  EXPECT_EQ(R.Outputs[0].Binary, 0);
  EXPECT_EQ(R.Outputs[1].Binary, -1);
}

TEST_F(OipCodec, HeaderErrors) {
  EXPECT_NE(parseError("{"), "");
  EXPECT_NE(parseError("[]"), "");
  EXPECT_NE(parseError("{}").find("'inputs'"), std::string::npos);
  EXPECT_NE(parseError(R"({"id":5,"inputs":[]})").find("'id'"), std::string::npos);
  EXPECT_NE(parseError(R"({"inputs":[{"datatype":"FP32","shape":[1],"data":[1]}]})").find("'name'"), std::string::npos);
  EXPECT_NE(parseError(R"({"inputs":[{"name":"a","datatype":"FLOAT","shape":[1],"data":[1]}]})").find("unknown datatype"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[-1],"data":[1]}]})").find("non-negative"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[1]}]})").find("neither"), std::string::npos);
  EXPECT_NE(parseError(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[1],"data":[1]},
                                     {"name":"a","datatype":"FP32","shape":[1],"data":[1]}]})")
                .find("twice"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":8}}]})", 4)
                .find("past the end"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":4}}]})", 9)
                .find("5 bytes of binary data after"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[1099511627776,1099511627776],"data":[]}]})")
                .find("too large"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"inputs":[],"outputs":[{"name":"y","parameters":{"classification":3}}]})").find("classification"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"inputs":[],"outputs":[{"name":"y"},{"name":"y"}]})").find("twice"), std::string::npos);
  EXPECT_EQ(parseError(R"({"inputs":[]})"), "");
}

TEST_F(OipCodec, MakeInputTensorChecksAgainstTheModel) {
  OipInferRequest R;
  std::string E;
  ASSERT_TRUE(parse(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[2,3],"data":[[1,2,3],[4,5.5,6]]}]})", R, E)) << E;
  rt::Tensor T;
  ASSERT_TRUE(makeInputTensor(R.Inputs[0], info("x", rt::ElementType::F32, {rt::Expr("batch"), 3}), "", T, E)) << E;
  EXPECT_EQ(T.getShape(), rt::TensorShape({2, 3}));
  EXPECT_EQ(static_cast<const float *>(T.data())[4], 5.5f);

  EXPECT_FALSE(makeInputTensor(R.Inputs[0], info("x", rt::ElementType::F32, {2, 4}), "", T, E));
  EXPECT_NE(E.find("shape [2,3] does not match the model's [2,4]"), std::string::npos) << E;
  EXPECT_FALSE(makeInputTensor(R.Inputs[0], info("x", rt::ElementType::F32, {6}), "", T, E));
  EXPECT_NE(E.find("[6]"), std::string::npos) << E;
  EXPECT_FALSE(makeInputTensor(R.Inputs[0], info("x", rt::ElementType::I64, {2, 3}), "", T, E));
  EXPECT_NE(E.find("datatype FP32 does not match the model's INT64"), std::string::npos) << E;

  ASSERT_TRUE(parse(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[2,3],"data":[1,2,3,4,5]}]})", R, E));
  EXPECT_FALSE(makeInputTensor(R.Inputs[0], info("x", rt::ElementType::F32, {2, 3}), "", T, E));
  EXPECT_NE(E.find("5 elements in 'data', shape [2,3] needs 6"), std::string::npos) << E;
}

TEST_F(OipCodec, IntegerRangesAndBooleans) {
  OipInferRequest R;
  std::string E;
  rt::Tensor T;
  ASSERT_TRUE(parse(R"({"inputs":[{"name":"i","datatype":"INT64","shape":[3],"data":[8589934592,-1,9223372036854775807]}]})", R, E));
  ASSERT_TRUE(makeInputTensor(R.Inputs[0], info("i", rt::ElementType::I64, {3}), "", T, E)) << E;
  EXPECT_EQ(static_cast<const int64_t *>(T.data())[0], int64_t(1) << 33);
  EXPECT_EQ(static_cast<const int64_t *>(T.data())[2], INT64_MAX);
  ASSERT_TRUE(parse(R"({"inputs":[{"name":"i","datatype":"UINT8","shape":[2],"data":[1,256]}]})", R, E));
  EXPECT_FALSE(makeInputTensor(R.Inputs[0], info("i", rt::ElementType::U8, {2}), "", T, E));
  EXPECT_NE(E.find("element 1 (256)"), std::string::npos) << E;
  ASSERT_TRUE(parse(R"({"inputs":[{"name":"i","datatype":"INT32","shape":[1],"data":[1.5]}]})", R, E));
  EXPECT_FALSE(makeInputTensor(R.Inputs[0], info("i", rt::ElementType::I32, {1}), "", T, E));
  ASSERT_TRUE(parse(R"({"inputs":[{"name":"b","datatype":"BOOL","shape":[2],"data":[true,false]}]})", R, E));
  ASSERT_TRUE(makeInputTensor(R.Inputs[0], info("b", rt::ElementType::Bool, {2}), "", T, E)) << E;
  EXPECT_TRUE(static_cast<const bool *>(T.data())[0]);
  ASSERT_TRUE(parse(R"({"inputs":[{"name":"b","datatype":"BOOL","shape":[1],"data":[1]}]})", R, E));
  EXPECT_FALSE(makeInputTensor(R.Inputs[0], info("b", rt::ElementType::Bool, {1}), "", T, E));
}

TEST_F(OipCodec, BinaryInputs) {
  OipInferRequest R;
  std::string E;
  rt::Tensor T;
  const float Values[3] = {1.5f, -2.0f, 3.25f};
  std::string Body(reinterpret_cast<const char *>(Values), sizeof(Values));
  ASSERT_TRUE(parse(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[3],"parameters":{"binary_data_size":12}}]})", R, E, 12));
  ASSERT_TRUE(makeInputTensor(R.Inputs[0], info("x", rt::ElementType::F32, {3}), Body.data(), T, E)) << E;
  EXPECT_EQ(std::memcmp(T.data(), Values, 12), 0);
  EXPECT_FALSE(makeInputTensor(R.Inputs[0], info("x", rt::ElementType::F32, {rt::Expr("n")}), "", T, E) &&
               R.Inputs[0].BinarySize != 12);
  ASSERT_TRUE(parse(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[4],"parameters":{"binary_data_size":12}}]})", R, E, 12));
  EXPECT_FALSE(makeInputTensor(R.Inputs[0], info("x", rt::ElementType::F32, {4}), Body.data(), T, E));
  EXPECT_NE(E.find("binary_data_size 12 does not match shape [4] of FP32 (16 bytes)"), std::string::npos) << E;
  // BYTES: 4-byte little-endian length prefixes.
  std::string Bytes = std::string("\x02\x00\x00\x00hi\x00\x00\x00\x00", 10);
  ASSERT_TRUE(parse(R"({"inputs":[{"name":"s","datatype":"BYTES","shape":[2],"parameters":{"binary_data_size":10}}]})", R, E, 10));
  ASSERT_TRUE(makeInputTensor(R.Inputs[0], info("s", rt::ElementType::String, {2}), Bytes.data(), T, E)) << E;
  EXPECT_EQ(static_cast<const std::string *>(T.data())[0], "hi");
  EXPECT_EQ(static_cast<const std::string *>(T.data())[1], "");
}

TEST_F(OipCodec, OutputEncoding) {
  rt::Tensor F = rt::tensor(rt::ElementType::F32, {3});
  float *P = static_cast<float *>(F.data());
  P[0] = 0.1f;
  P[1] = -2;
  P[2] = 1e-30f;
  std::string Out, E;
  ASSERT_TRUE(appendJsonData(F, Out, E));
  EXPECT_EQ(Out, "[0.1,-2,1e-30]");
  Out.clear();
  ASSERT_TRUE(appendBinaryData(F, Out, E));
  EXPECT_EQ(Out.size(), 12u);
  rt::Tensor I = rt::tensor(rt::ElementType::I64, {2});
  static_cast<int64_t *>(I.data())[0] = int64_t(1) << 40;
  static_cast<int64_t *>(I.data())[1] = -7;
  Out.clear();
  ASSERT_TRUE(appendJsonData(I, Out, E));
  EXPECT_EQ(Out, "[1099511627776,-7]");
  rt::Tensor B = rt::tensor(rt::ElementType::Bool, {2});
  static_cast<bool *>(B.data())[0] = true;
  static_cast<bool *>(B.data())[1] = false;
  Out.clear();
  ASSERT_TRUE(appendJsonData(B, Out, E));
  EXPECT_EQ(Out, "[true,false]");
  EXPECT_EQ(jsonString("a\"b\n"), "\"a\\\"b\\n\"");
}
