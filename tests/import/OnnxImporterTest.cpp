// The ONNX importer: zero-copy initializers, dim_param symbols, node order, error messages.
#include <gtest/gtest.h>

#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "import/onnx/OnnxImporter.h"
#include "import/onnx/RawDataScanner.h"

using namespace optimium::runtime;
using namespace optimium::runtime::detail;
using namespace optimium_test;

TEST(OnnxImporter, InitializersPointIntoTheCallersBuffer) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {4});
  B.initializer("w", {4}, {1, 2, 3, 4});
  B.node("Add", {"x", "w"}, {"y"});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  // Place the bytes so the raw data lands on a 4-byte boundary whatever the header length is.
  const std::string Bytes = B.bytes();
  std::vector<RawSpan> Spans;
  ASSERT_TRUE(scanInitializerRawData(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), Spans));
  ASSERT_EQ(Spans.size(), 1u);
  ASSERT_EQ(Spans[0].Size, 16u);
  const size_t RawOffset = static_cast<size_t>(Spans[0].Data - reinterpret_cast<const uint8_t *>(Bytes.data()));
  std::vector<uint8_t> Aligned(Bytes.size() + 64);
  uint8_t *Base = Aligned.data();
  while ((reinterpret_cast<uintptr_t>(Base) + RawOffset) % 4 != 0)
    ++Base;
  std::copy(Bytes.begin(), Bytes.end(), Base);
  auto R = importOnnxBuffer(Base, Bytes.size(), "", "test");
  ASSERT_TRUE(R.isOk()) << R.status().message();
  const Graph &G = *R.value().G;
  const Value &W = G.Values[G.findValue("w")];
  ASSERT_TRUE(W.Const);
  EXPECT_EQ(static_cast<const uint8_t *>(W.Const->Data), Base + RawOffset); // zero copy
  EXPECT_EQ(W.Const->as<float>()[3], 4.0f);
}

TEST(OnnxImporter, SymbolicDimsAreKept) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {0, 16}, {"batch", ""});
  B.node("Relu", {"x"}, {"y"});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  auto R = importOnnxBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), "", "test");
  ASSERT_TRUE(R.isOk()) << R.status().message();
  const Value &X = R.value().G->Values[R.value().G->Inputs[0]];
  EXPECT_TRUE(X.Shape[0].isSymbol());
  EXPECT_EQ(X.Shape[0].symbol(), "batch");
  EXPECT_EQ(X.Shape[1].value(), 16);
}

TEST(OnnxImporter, OutOfOrderNodesAreSortedAndCyclesRejected) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2});
  B.node("Relu", {"t"}, {"y"}, "second");
  B.node("Relu", {"x"}, {"t"}, "first");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  std::string Bytes = B.bytes();
  auto R = importOnnxBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), "", "test");
  ASSERT_TRUE(R.isOk()) << R.status().message();
  EXPECT_EQ(R.value().G->Nodes[0].Name, "first");

  OnnxBuilder C;
  C.input("x", onnx::TensorProto_DataType_FLOAT, {2});
  C.node("Add", {"x", "b"}, {"a"}, "loop_a");
  C.node("Relu", {"a"}, {"b"}, "loop_b");
  C.output("b", onnx::TensorProto_DataType_FLOAT);
  Bytes = C.bytes();
  auto R2 = importOnnxBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), "", "test");
  ASSERT_FALSE(R2.isOk());
  EXPECT_EQ(R2.status().code(), ErrorCode::Model);
  EXPECT_NE(R2.status().message().find("cycle"), std::string::npos) << R2.status().message();
}

TEST(OnnxImporter, WrongInitializerSizeIsAModelError) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {4});
  B.initializer("w", {5}, {1, 2, 3, 4}); // 5 elements declared, 4 stored
  B.node("Add", {"x", "w"}, {"y"});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  auto R = importOnnxBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), "", "test");
  ASSERT_FALSE(R.isOk());
  EXPECT_EQ(R.status().code(), ErrorCode::Model);
  EXPECT_NE(R.status().message().find("'w'"), std::string::npos) << R.status().message();
}

// Low-precision initializers: ONNX packs int4 two and uint2 four per byte (lowest bits first); the
// runtime stores one element per byte (int4 sign-extended). Float8 codes come through int32_data too.
TEST(OnnxImporter, PackedSubByteInitializersAreUnpacked) {
  OnnxBuilder B(21);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1});
  const auto Add = [&B](const std::string &Name, int Type, int64_t Count) {
    auto *T = B.M.mutable_graph()->add_initializer();
    T->set_name(Name);
    T->set_data_type(Type);
    T->add_dims(Count);
    return T;
  };
  Add("i4", 22, 3)->set_raw_data(std::string("\x78\x01", 2)); // [-8, 7, 1]
  auto *U2 = Add("u2", 25, 5);                                 // [1, 2, 3, 0, 3] in int32_data
  U2->add_int32_data(0x39);
  U2->add_int32_data(0x03);
  auto *F8 = Add("f8", 17, 2); // e4m3fn 1.0 and NaN, one code per int32_data value
  F8->add_int32_data(0x38);
  F8->add_int32_data(0xFF);
  B.node("Identity", {"x"}, {"y"});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  std::string Bytes = B.bytes();
  auto R = importOnnxBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), "", "test");
  ASSERT_TRUE(R.isOk()) << R.status().message();
  const Graph &G = *R.value().G;
  const auto Stored = [&G](const std::string &Name) {
    const Value &V = G.Values[G.findValue(Name)];
    EXPECT_TRUE(V.Const);
    const uint8_t *P = static_cast<const uint8_t *>(V.Const->Data);
    return std::vector<int>(P, P + V.Const->elementCount());
  };
  EXPECT_EQ(G.Values[G.findValue("i4")].Type, ElementType::I4);
  EXPECT_EQ(Stored("i4"), (std::vector<int>{0xF8, 7, 1}));
  EXPECT_EQ(G.Values[G.findValue("u2")].Type, ElementType::U2);
  EXPECT_EQ(Stored("u2"), (std::vector<int>{1, 2, 3, 0, 3}));
  EXPECT_EQ(G.Values[G.findValue("f8")].Type, ElementType::F8E4M3FN);
  EXPECT_EQ(Stored("f8"), (std::vector<int>{0x38, 0xFF}));

  // 3 int4 elements need 2 packed bytes, not 3.
  B.M.mutable_graph()->mutable_initializer(0)->set_raw_data(std::string("\x78\x01\x00", 3));
  Bytes = B.bytes();
  R = importOnnxBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), "", "test");
  ASSERT_FALSE(R.isOk());
  EXPECT_EQ(R.status().code(), ErrorCode::Model);
  EXPECT_NE(R.status().message().find("'i4'"), std::string::npos) << R.status().message();
  EXPECT_NE(R.status().message().find("expected 2"), std::string::npos) << R.status().message();
}

TEST(OnnxImporter, ScannerRejectsGarbageWithoutReadingOutOfBounds) {
  std::vector<uint8_t> Junk{0x3a, 0xff, 0xff, 0xff, 0xff, 0x0f}; // field 7 claiming a huge length
  std::vector<RawSpan> Spans;
  EXPECT_FALSE(scanInitializerRawData(Junk.data(), Junk.size(), Spans));
}

TEST(OnnxImporter, ParseWithoutRawDataMatchesProtobufAndPointsIntoTheBytes) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 3});
  B.initializer("w", {3, 2}, {1, 2, 3, 4, 5, 6});
  B.initializer("b", {2}, {0.5f, -0.5f});
  B.node("MatMul", {"x", "w"}, {"xw"});
  B.node("Add", {"xw", "b"}, {"y"});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  const auto *Data = reinterpret_cast<const uint8_t *>(Bytes.data());
  onnx::ModelProto Lazy;
  std::vector<RawSpan> Spans, Scanned;
  ASSERT_TRUE(parseModelWithoutRawData(Data, Bytes.size(), Lazy, Spans));
  ASSERT_TRUE(scanInitializerRawData(Data, Bytes.size(), Scanned));
  ASSERT_EQ(Spans.size(), 2u);
  ASSERT_EQ(Lazy.graph().initializer_size(), 2);
  for (size_t I = 0; I < Spans.size(); ++I) {
    EXPECT_EQ(Spans[I].Data, Scanned[I].Data);
    EXPECT_EQ(Spans[I].Size, Scanned[I].Size);
    EXPECT_TRUE(Lazy.graph().initializer(static_cast<int>(I)).raw_data().empty()); // not copied
    EXPECT_GE(Spans[I].Data, Data);
    EXPECT_LE(Spans[I].Data + Spans[I].Size, Data + Bytes.size());
  }
  // Putting the bytes back gives exactly the message protobuf parses.
  for (size_t I = 0; I < Spans.size(); ++I)
    Lazy.mutable_graph()->mutable_initializer(static_cast<int>(I))->set_raw_data(Spans[I].Data, Spans[I].Size);
  onnx::ModelProto Full;
  ASSERT_TRUE(Full.ParseFromString(Bytes));
  EXPECT_EQ(Lazy.SerializeAsString(), Full.SerializeAsString());
  // Malformed bytes are refused (the caller then reports protobuf's error).
  onnx::ModelProto Bad;
  EXPECT_FALSE(parseModelWithoutRawData(Data, Bytes.size() - 3, Bad, Spans));
}

TEST(OnnxImporter, SequenceAndOptionalTypesBecomeValueKinds) {
  OnnxBuilder B(18);
  auto *S = B.M.mutable_graph()->add_input();
  S->set_name("seq");
  auto *ST = S->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
  ST->set_elem_type(onnx::TensorProto_DataType_INT64);
  ST->mutable_shape()->add_dim()->set_dim_value(3);
  auto *O = B.M.mutable_graph()->add_input();
  O->set_name("opt");
  O->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto_DataType_FLOAT);
  B.node("SequenceLength", {"seq"}, {"n"});
  B.node("OptionalHasElement", {"opt"}, {"has"});
  B.output("n");
  B.output("has");
  const std::string Bytes = B.bytes();
  auto R = importOnnxBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), "", "test");
  ASSERT_TRUE(R.isOk()) << R.status().message();
  const Graph &G = *R.value().G;
  const Value &Seq = G.Values[G.findValue("seq")];
  EXPECT_EQ(Seq.Kind, ValueKind::Sequence);
  EXPECT_EQ(Seq.Type, ElementType::I64);
  ASSERT_EQ(Seq.Shape.getRank(), 1u); // the declared rank, dims left symbolic (elements may differ)
  EXPECT_FALSE(Seq.Shape[0].isConst());
  EXPECT_EQ(G.Values[G.findValue("opt")].Kind, ValueKind::OptionalTensor);
}

TEST(OnnxImporter, MapTypedInputIsAModelErrorNamingIt) {
  OnnxBuilder B(18);
  auto *M = B.M.mutable_graph()->add_input();
  M->set_name("table");
  auto *MT = M->mutable_type()->mutable_map_type();
  MT->set_key_type(onnx::TensorProto_DataType_INT64);
  MT->mutable_value_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  B.node("Identity", {"table"}, {"y"});
  B.output("y");
  const std::string Bytes = B.bytes();
  auto R = importOnnxBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), "", "test");
  ASSERT_FALSE(R.isOk());
  EXPECT_EQ(R.status().code(), ErrorCode::Model);
  EXPECT_NE(R.status().message().find("'table'"), std::string::npos) << R.status().message();
  EXPECT_NE(R.status().message().find("map"), std::string::npos) << R.status().message();
}

TEST(OnnxImporter, ZipMapIsAModelErrorWithTheExportHint) {
  OnnxBuilder B(18);
  auto *O = B.M.add_opset_import();
  O->set_domain("ai.onnx.ml");
  O->set_version(3);
  B.input("probabilities", onnx::TensorProto_DataType_FLOAT, {2, 3});
  onnx::NodeProto *N = B.node("ZipMap", {"probabilities"}, {"maps"}, "zipmap_1");
  N->set_domain("ai.onnx.ml");
  B.output("maps");
  const std::string Bytes = B.bytes();
  auto R = importOnnxBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), "", "test");
  ASSERT_FALSE(R.isOk());
  EXPECT_EQ(R.status().code(), ErrorCode::Model);
  for (const char *Part : {"node 'zipmap_1' (ZipMap)", "sequence of maps", "'zipmap': False", "zipmap=False",
                           "CatBoost", "rename its input 'probabilities' to 'maps'"})
    EXPECT_NE(R.status().message().find(Part), std::string::npos) << Part << " in " << R.status().message();
}

// CatBoost writes its ZipMap without a name: the error names it by its output.
TEST(OnnxImporter, UnnamedZipMapIsNamedByItsOutput) {
  OnnxBuilder B(18);
  auto *O = B.M.add_opset_import();
  O->set_domain("ai.onnx.ml");
  O->set_version(2);
  B.input("probability_tensor", onnx::TensorProto_DataType_FLOAT, {2, 3});
  onnx::NodeProto *N = B.node("ZipMap", {"probability_tensor"}, {"probabilities"});
  N->set_domain("ai.onnx.ml");
  N->clear_name();
  B.output("probabilities");
  const std::string Bytes = B.bytes();
  auto R = importOnnxBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), "", "test");
  ASSERT_FALSE(R.isOk());
  for (const char *Part : {"the ZipMap node writing 'probabilities' (ZipMap)",
                           "rename its input 'probability_tensor' to 'probabilities'"})
    EXPECT_NE(R.status().message().find(Part), std::string::npos) << Part << " in " << R.status().message();
}

// Empty initializers (a dim of 0: exporters write them for empty Resize roi/scales, empty shapes)
// with no data field at all: each typed field and raw_data import as zero-element constants.
TEST(OnnxImporter, EmptyInitializersOfEveryStorageKindImport) {
  OnnxBuilder B(13);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1});
  const int Types[] = {onnx::TensorProto_DataType_FLOAT, onnx::TensorProto_DataType_DOUBLE,
                       onnx::TensorProto_DataType_INT64, onnx::TensorProto_DataType_INT32,
                       onnx::TensorProto_DataType_UINT64, onnx::TensorProto_DataType_UINT8};
  int N = 0;
  for (int Type : Types) {
    auto *T = B.M.mutable_graph()->add_initializer();
    T->set_name("e" + std::to_string(N++));
    T->set_data_type(Type);
    T->add_dims(0);
  }
  B.node("Identity", {"x"}, {"y"});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  auto R = importOnnxBuffer(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size(), "", "test");
  ASSERT_TRUE(R.isOk()) << R.status().message();
  const Graph &G = *R.value().G;
  for (int I = 0; I < N; ++I) {
    const Value &V = G.Values[G.findValue("e" + std::to_string(I))];
    ASSERT_TRUE(V.Const) << I;
    EXPECT_EQ(V.Const->elementCount(), 0u) << I;
  }
}
