// End-to-end: loading real ONNX models (file, folder, external data, memory), running them and
// matching saved reference outputs; model metadata; every bad-input path of loading.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "TestUtil.h"
#include "core/CpuFeatures.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

std::string readFile(const std::string &Path) {
  std::ifstream F(Path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(F), std::istreambuf_iterator<char>());
}

rt::Tensor runOnce(rt::Model &M, const std::vector<rt::Tensor> &Inputs, size_t Output = 0) {
  rt::InferRequest R = M.createRequest();
  R.infer(rt::make_array(Inputs));
  EXPECT_FALSE(R.wait());
  EXPECT_EQ(R.getStatus(), rt::InferStatus::Ready);
  return R.getOutput(Output);
}

void expectMatchesReference(const std::string &Folder, const rt::ModelLoadOptions &Options = {}) {
  rt::Model M = rt::loadModel(dataPath(Folder), Options);
  std::vector<rt::Tensor> Inputs;
  for (size_t I = 0; I < M.getInputNames().size(); ++I)
    Inputs.push_back(readNpy(dataPath(Folder + "/input_" + std::to_string(I) + ".npy")));
  rt::Tensor Expected = readNpy(dataPath(Folder + "/output_0.npy"));
  rt::Tensor Out = runOnce(M, Inputs);
  ASSERT_EQ(Out.getShape(), Expected.getShape()) << Folder;
  EXPECT_LE(maxAbsDiff(Out, Expected), 1e-4) << Folder;
}

} // namespace

TEST(Model, BundledDigitsModelMatchesPyTorchAndIsAccurate) {
  rt::Model M = rt::loadModel(dataPath("models/digits"));
  rt::Tensor Images = readNpy(dataPath("models/digits/test_images.npy"));
  rt::Tensor Labels = readNpy(dataPath("models/digits/test_labels.npy"));
  rt::Tensor Probs = readNpy(dataPath("models/digits/test_probabilities.npy"));
  const size_t N = static_cast<size_t>(Images.getShape()[0].value());
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> In = rt::tensor<float>({1, 1, 8, 8});
  size_t Correct = 0;
  double MaxDiff = 0;
  for (size_t I = 0; I < N; ++I) {
    std::copy_n(static_cast<const float *>(Images.data()) + I * 64, 64, In.data());
    R.infer(rt::make_array(std::vector<rt::Tensor>{In}));
    R.wait();
    rt::TypedTensor<float> Out(R.getOutput("probabilities"));
    const float *Ref = static_cast<const float *>(Probs.data()) + I * 10;
    size_t Best = 0;
    for (size_t C = 0; C < 10; ++C) {
      MaxDiff = std::max(MaxDiff, static_cast<double>(std::fabs(Out[C] - Ref[C])));
      if (Out[C] > Out[Best])
        Best = C;
    }
    Correct += static_cast<int64_t>(Best) == static_cast<const int64_t *>(Labels.data())[I];
  }
  const double Accuracy = static_cast<double>(Correct) / static_cast<double>(N);
  std::cout << "digits: " << N << " held-out digits, accuracy " << Accuracy * 100 << "%, max abs diff vs PyTorch "
            << MaxDiff << std::endl;
  EXPECT_GE(Accuracy, 0.95);
  EXPECT_LE(MaxDiff, 1e-4);
}

TEST(Model, TestModelsMatchTheirReferences) {
  expectMatchesReference("tests/models/mlp");
  expectMatchesReference("tests/models/cnn");
  expectMatchesReference("tests/models/two_inputs");
  expectMatchesReference("tests/models/dynamic_batch");
}

TEST(Model, ResultsDoNotDependOnThreadsOrScheduler) {
  for (int Threads : {1, 2})
    for (auto S : {rt::SchedulerType::Exclusive, rt::SchedulerType::Sequential, rt::SchedulerType::Pipeline,
                   rt::SchedulerType::Auto}) {
      rt::ModelLoadOptions O;
      O.ThreadCount = Threads;
      O.Scheduler = S;
      expectMatchesReference("tests/models/cnn", O);
      O.EnableMemoryOptimization = false;
      expectMatchesReference("tests/models/cnn", O);
    }
}

TEST(Model, Int64ArithmeticIsExact) {
  rt::Model M = rt::loadModel(dataPath("tests/models/int64_input/model.onnx"));
  rt::Tensor In = readNpy(dataPath("tests/models/int64_input/input_0.npy"));
  rt::Tensor Expected = readNpy(dataPath("tests/models/int64_input/output_0.npy"));
  rt::Tensor Out = runOnce(M, {In});
  ASSERT_EQ(Out.getType(), rt::ElementType::I64);
  for (size_t I = 0; I < 4; ++I)
    EXPECT_EQ(static_cast<const int64_t *>(Out.data())[I], static_cast<const int64_t *>(Expected.data())[I]);
}

TEST(Model, ExternalDataBesideTheModelIsRead) {
  expectMatchesReference("tests/models/external_data");
  // Same through the .onnx path rather than the folder.
  rt::Model M = rt::loadModel(dataPath("tests/models/external_data/model.onnx"));
  EXPECT_EQ(M.getInputNames().size(), 1u);
}

TEST(Model, ExternalDataFromMemoryIsAClearError) {
  const std::string Bytes = readFile(dataPath("tests/models/external_data/model.onnx"));
  try {
    rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
    FAIL() << "expected ModelError";
  } catch (const rt::ModelError &E) {
    EXPECT_NE(std::string(E.what()).find("weights.bin"), std::string::npos) << E.what();
  }
}

TEST(Model, LoadsFromAnInMemoryBufferWithoutCopyingWeights) {
  const std::string Bytes = readFile(dataPath("tests/models/mlp/model.onnx"));
  rt::Model M = rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
  rt::Tensor Out = runOnce(M, {readNpy(dataPath("tests/models/mlp/input_0.npy"))});
  EXPECT_LE(maxAbsDiff(Out, readNpy(dataPath("tests/models/mlp/output_0.npy"))), 1e-4);
}

TEST(Model, MetadataDescribesTensorsAndOperations) {
  rt::Model M = rt::loadModel(dataPath("models/digits/model.onnx"));
  EXPECT_EQ(M.getName(), "model");
  ASSERT_EQ(M.getInputNames().size(), 1u);
  EXPECT_EQ(M.getInputNames()[0], rt::StringRef("image"));
  EXPECT_EQ(M.getOutputNames()[0], rt::StringRef("probabilities"));
  const rt::TensorInfo &In = M.getInputTensorInfo(0);
  EXPECT_EQ(In.Shape, rt::TensorShape({1, 1, 8, 8}));
  EXPECT_EQ(In.Type, rt::ElementType::F32);
  EXPECT_EQ(In.getTensorSize(), 256u);
  EXPECT_FALSE(In.Constant);
  EXPECT_EQ(M.getOutputTensorInfo(0).Shape, rt::TensorShape({1, 10}));
  EXPECT_FALSE(M.isDynamic());
  size_t Constants = 0, Intermediates = 0;
  for (const rt::TensorInfo &T : M.getTensors()) {
    Constants += T.Constant;
    Intermediates += !T.Constant && T.Name != "image" && T.Name != "probabilities";
    EXPECT_FALSE(T.Shape.isDynamic()) << T.Name;
  }
  // Two Conv -> Relu pairs are fused (10 ONNX nodes), and on AVX-512 (Conv's small kernel) the
  // first one with the MaxPool after it too; with every intermediate readable, none are.
  const bool PoolFused = optimium::runtime::detail::cpuFeatures().avx512Fma();
  EXPECT_GE(Constants, 8u);
  EXPECT_GE(Intermediates, PoolFused ? 6u : 7u);
  ASSERT_EQ(M.getOperations().size(), PoolFused ? 7u : 8u);
  {
    rt::ModelLoadOptions Unfused;
    Unfused.EnableMemoryOptimization = false;
    EXPECT_EQ(rt::loadModel(dataPath("models/digits/model.onnx"), Unfused).getOperations().size(), 10u);
  }
  const rt::DeviceID CPU = rt::getLocalInfo().Devices[0];
  bool SawConv = false;
  for (const rt::OpInfo &Op : M.getOperations()) {
    EXPECT_EQ(Op.Device, CPU) << Op.Name;
    if (Op.Type == "Conv") {
      SawConv = true;
      ASSERT_TRUE(Op.hasAttribute("kernel_shape"));
      rt::Attribute K = Op.getAttribute("kernel_shape");
      ASSERT_TRUE(K.isa<rt::ListAttr>());
      EXPECT_EQ(K.cast<rt::ListAttr>()[0].cast<rt::I64Attr>().value(), 3);
      EXPECT_FALSE(Op.getAttribute("no_such_attribute"));
    }
  }
  EXPECT_TRUE(SawConv);
  EXPECT_THROW(M.getTensorInfo("nope"), rt::InvalidArgumentError);
  EXPECT_THROW(M.getInputTensorInfo(1), rt::InvalidArgumentError);
}

TEST(Model, ModelAttributesComeFromMetadataProps) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2});
  B.node("Relu", {"x"}, {"y"});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  B.metadata("model_type", "classifier");
  const std::string Bytes = B.bytes();
  rt::Model M = rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
  ASSERT_TRUE(M.hasAttribute("model_type"));
  rt::Attribute A = M.getAttribute("model_type");
  ASSERT_TRUE(A.isa<rt::StringAttr>());
  EXPECT_EQ(A.cast<rt::StringAttr>().value(), "classifier");
  EXPECT_FALSE(M.getAttribute("missing"));
  ASSERT_EQ(M.getAttributeKeys().size(), 1u);
}

namespace {
rt::Model loadWithMetadata(const std::vector<std::pair<std::string, std::string>> &Props) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2});
  B.node("Relu", {"x"}, {"y"});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  for (const auto &P : Props)
    B.metadata(P.first, P.second);
  const std::string Bytes = B.bytes();
  return rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
}
} // namespace

TEST(Model, TypedAttributesComeFromOptimiumAttrJson) {
  rt::Model M = loadWithMetadata({{"author", "team"},
                                  {"optimium.attr.num_layers", "6"},
                                  {"optimium.attr.big", "18446744073709551615"},
                                  {"optimium.attr.scale", "0.125"},
                                  {"optimium.attr.causal", "true"},
                                  {"optimium.attr.task", "\"decode\""},
                                  {"optimium.attr.dims", "[1, 8, 64]"},
                                  {"optimium.attr.config", "{\"heads\": 8, \"names\": [\"k\", \"v\"], \"rope\": {\"base\": 10000.5}}"}});
  ASSERT_EQ(M.getAttributeKeys().size(), 8u);
  EXPECT_EQ(M.getAttribute("author").cast<rt::StringAttr>().value(), "team");
  ASSERT_TRUE(M.getAttribute("num_layers").isa<rt::I64Attr>());
  EXPECT_EQ(M.getAttribute("num_layers").cast<rt::I64Attr>().value(), 6);
  ASSERT_TRUE(M.getAttribute("big").isa<rt::U64Attr>());
  EXPECT_EQ(M.getAttribute("big").cast<rt::U64Attr>().value(), 18446744073709551615ull);
  ASSERT_TRUE(M.getAttribute("scale").isa<rt::F64Attr>());
  EXPECT_DOUBLE_EQ(M.getAttribute("scale").cast<rt::F64Attr>().value(), 0.125);
  ASSERT_TRUE(M.getAttribute("causal").isa<rt::BoolAttr>());
  EXPECT_TRUE(M.getAttribute("causal").cast<rt::BoolAttr>().value());
  EXPECT_EQ(M.getAttribute("task").cast<rt::StringAttr>().value(), "decode");
  ASSERT_TRUE(M.getAttribute("dims").isa<rt::ListAttr>());
  rt::ListAttr Dims = M.getAttribute("dims").cast<rt::ListAttr>();
  ASSERT_EQ(Dims.size(), 3u);
  EXPECT_EQ(Dims[1].cast<rt::I64Attr>().value(), 8);
  ASSERT_TRUE(M.getAttribute("config").isa<rt::MapAttr>());
  rt::MapAttr Config = M.getAttribute("config").cast<rt::MapAttr>();
  EXPECT_EQ(Config.get("heads").cast<rt::I64Attr>().value(), 8);
  EXPECT_EQ(Config.get("names").cast<rt::ListAttr>()[1].cast<rt::StringAttr>().value(), "v");
  EXPECT_DOUBLE_EQ(Config.get("rope").cast<rt::MapAttr>().get("base").cast<rt::F64Attr>().value(), 10000.5);
  EXPECT_FALSE(M.hasAttribute("optimium.attr.num_layers"));
  EXPECT_FALSE(M.getAttribute("missing"));
}

TEST(ModelErrors, BadTypedAttributeIsAModelErrorNamingTheKey) {
  auto ExpectError = [](const std::vector<std::pair<std::string, std::string>> &Props, const std::string &Needle) {
    try {
      loadWithMetadata(Props);
      ADD_FAILURE() << "no ModelError for " << Props.back().first;
    } catch (const rt::ModelError &E) {
      EXPECT_NE(std::string(E.what()).find(Needle), std::string::npos) << E.what();
    }
  };
  ExpectError({{"optimium.attr.layers", "[1, 2"}}, "optimium.attr.layers");
  ExpectError({{"optimium.attr.layers", "not json"}}, "must hold JSON");
  ExpectError({{"optimium.attr.cfg", "{\"a\": [1, null]}"}}, ".a[1]");
  ExpectError({{"optimium.attr.", "1"}}, "names no attribute");
  ExpectError({{"layers", "6"}, {"optimium.attr.layers", "6"}}, "given twice");
}

TEST(Model, DynamicBatchKeepsSymbolsAndRunsAnyBatch) {
  rt::Model M = rt::loadModel(dataPath("models/digits/model_batch.onnx"));
  EXPECT_TRUE(M.isDynamic());
  const rt::TensorInfo &In = M.getInputTensorInfo(0);
  ASSERT_TRUE(In.Shape[0].isSymbol());
  EXPECT_EQ(In.Shape[0].symbol(), "batch");
  EXPECT_TRUE(M.getOutputTensorInfo(0).Shape[0].isSymbol());
  rt::TensorShape S = M.inferShape("probabilities", std::map<std::string, rt::TensorShape>{{"image", rt::TensorShape({7, 1, 8, 8})}});
  EXPECT_EQ(S, rt::TensorShape({7, 10}));
  rt::TensorShape Sym = M.inferShape("probabilities", std::vector<rt::TensorShape>{rt::TensorShape({rt::Expr("n"), 1, 8, 8})});
  EXPECT_EQ(Sym[0], rt::Expr("n"));
  EXPECT_EQ(Sym[1].value(), 10);

  rt::Tensor Images = readNpy(dataPath("models/digits/test_images.npy"));
  rt::Tensor Probs = readNpy(dataPath("models/digits/test_probabilities.npy"));
  rt::InferRequest R = M.createRequest();
  for (int64_t Batch : {5, 1, 32}) {
    rt::Tensor In = rt::tensor(rt::ElementType::F32, {Batch, 1, 8, 8});
    std::copy_n(static_cast<const float *>(Images.data()), Batch * 64, static_cast<float *>(In.data()));
    R.infer(rt::make_array(std::vector<rt::Tensor>{In}));
    R.wait();
    rt::Tensor Out = R.getOutput(0);
    ASSERT_EQ(Out.getShape(), rt::TensorShape({Batch, 10}));
    for (int64_t I = 0; I < Batch * 10; ++I)
      EXPECT_NEAR(static_cast<const float *>(Out.data())[I], static_cast<const float *>(Probs.data())[I], 1e-4);
  }
}

// ---- bad input -------------------------------------------------------------------------------

TEST(ModelErrors, MissingPathIsAnIOErrorNamingIt) {
  try {
    rt::loadModel("/no/such/model.onnx");
    FAIL();
  } catch (const rt::IOError &E) {
    EXPECT_NE(std::string(E.what()).find("/no/such/model.onnx"), std::string::npos);
  }
}

TEST(ModelErrors, FolderWithoutModelIsAContainerError) {
  EXPECT_THROW(rt::loadModel(dataPath("tests")), rt::ContainerError);
}

TEST(ModelErrors, CorruptAndTruncatedFilesAreContainerErrors) {
  const std::string Good = readFile(dataPath("models/digits/model.onnx"));
  const std::string Dir = ::testing::TempDir();
  const std::string Truncated = Dir + "/truncated.onnx", Garbage = Dir + "/garbage.onnx", Empty = Dir + "/empty.onnx";
  std::ofstream(Truncated, std::ios::binary) << Good.substr(0, Good.size() / 2);
  std::ofstream(Garbage, std::ios::binary) << std::string(1000, '\xff');
  std::ofstream(Empty, std::ios::binary) << "";
  for (const std::string &P : {Truncated, Garbage, Empty}) {
    try {
      rt::loadModel(P);
      FAIL() << P;
    } catch (const rt::ContainerError &E) {
      EXPECT_NE(std::string(E.what()).find(P), std::string::npos) << E.what();
    }
  }
  // Every prefix length of a small model: never a crash, always a documented exception.
  const std::string Small = readFile(dataPath("tests/models/mlp/model.onnx"));
  for (size_t Len = 0; Len < Small.size(); Len += 7) {
    try {
      rt::loadModel(reinterpret_cast<const uint8_t *>(Small.data()), Len);
    } catch (const rt::Exception &) {
    }
  }
}

TEST(ModelErrors, UnsupportedOpNamesOpAndNode) {
  try {
    rt::loadModel(dataPath("tests/models/unsupported_op"));
    FAIL();
  } catch (const rt::ModelError &E) {
    const std::string M = E.what();
    EXPECT_NE(M.find("FancyUnimplementedOp"), std::string::npos) << M;
    EXPECT_NE(M.find("my_unsupported_node"), std::string::npos) << M;
  }
}

TEST(ModelErrors, NewerOpsetIsAModelError) {
  OnnxBuilder B(99);
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2});
  B.node("Relu", {"x"}, {"y"});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  try {
    rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
    FAIL();
  } catch (const rt::ModelError &E) {
    EXPECT_NE(std::string(E.what()).find("opset 99"), std::string::npos) << E.what();
  }
}

TEST(ModelErrors, ShapesThatCannotBroadcastAreShapeErrorsAtLoad) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 3});
  B.initializer("c", {4}, {1, 2, 3, 4});
  B.node("Add", {"x", "c"}, {"y"}, "bad_add");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  try {
    rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
    FAIL();
  } catch (const rt::ShapeError &E) {
    EXPECT_NE(std::string(E.what()).find("bad_add"), std::string::npos) << E.what();
  }
}

TEST(ModelErrors, MismatchedInputTypesAreTypeErrorsAtLoad) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2});
  B.initializerI64("c", {2}, {1, 2});
  B.node("Add", {"x", "c"}, {"y"}, "mixed_add");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  try {
    rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
    FAIL();
  } catch (const rt::TypeError &E) {
    EXPECT_NE(std::string(E.what()).find("mixed_add"), std::string::npos) << E.what();
  }
}

TEST(ModelErrors, BadAttributeValueNamesNodeAndAttribute) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {1, 1, 4, 4});
  auto *N = B.node("MaxPool", {"x"}, {"y"}, "bad_pool");
  OnnxBuilder::attrInts(N, "kernel_shape", {2, 2});
  OnnxBuilder::attrInts(N, "strides", {0, 1});
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  try {
    rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
    FAIL();
  } catch (const rt::Exception &E) {
    const std::string M = E.what();
    EXPECT_NE(M.find("bad_pool"), std::string::npos) << M;
    EXPECT_NE(M.find("strides"), std::string::npos) << M;
  }
}

TEST(ModelErrors, DanglingInputIsAModelError) {
  OnnxBuilder B;
  B.input("x", onnx::TensorProto_DataType_FLOAT, {2});
  B.node("Add", {"x", "ghost"}, {"y"}, "uses_ghost");
  B.output("y", onnx::TensorProto_DataType_FLOAT);
  const std::string Bytes = B.bytes();
  try {
    rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
    FAIL();
  } catch (const rt::ModelError &E) {
    EXPECT_NE(std::string(E.what()).find("ghost"), std::string::npos) << E.what();
  }
}

TEST(ModelErrors, OptionsAreValidated) {
  const std::string Path = dataPath("tests/models/mlp");
  rt::ModelLoadOptions O;
  O.ThreadCount = -1;
  EXPECT_THROW(rt::loadModel(Path, O), rt::InvalidArgumentError);
  O = {};
  O.Cores = {4096};
  EXPECT_THROW(rt::loadModel(Path, O), rt::InvalidArgumentError);
  O = {};
  O.SpinYieldIterations = -3;
  EXPECT_THROW(rt::loadModel(Path, O), rt::InvalidArgumentError);
  O = {};
  O.ResizableCapacities.emplace("no_such_tensor", rt::TensorShape({4}));
  EXPECT_THROW(rt::loadModel(Path, O), rt::ModelError);
  O = {};
  O.ResizableCapacities.emplace("x", rt::TensorShape({4, 16})); // exists, but is not resizable
  EXPECT_THROW(rt::loadModel(Path, O), rt::ModelError);
  O = {};
  O.IntermediateSavePath = "/no/such/folder";
  EXPECT_THROW(rt::loadModel(Path, O), rt::IOError);
  O = {};
  O.Scheduler = static_cast<rt::SchedulerType>(42);
  EXPECT_THROW(rt::loadModel(Path, O), rt::InvalidArgumentError);
}

TEST(ModelErrors, AbsentDeviceFallsBackUnlessStrict) {
  rt::ModelLoadOptions O;
  O.Devices = {rt::DeviceID::from(rt::PlatformKind::CUDA, rt::DeviceKind::NVIDIA)};
  O.Strict = false;
  rt::Model M = rt::loadModel(dataPath("tests/models/mlp"), O);
  for (const rt::OpInfo &Op : M.getOperations())
    EXPECT_EQ(Op.Device.getPlatform(), rt::PlatformKind::Native);
  O.Strict = true;
  try {
    rt::loadModel(dataPath("tests/models/mlp"), O);
    FAIL();
  } catch (const rt::DeviceError &E) {
    EXPECT_NE(std::string(E.what()).find("CUDA"), std::string::npos) << E.what();
  }
}

TEST(ModelErrors, LoadingBeforeInitializeIsAnInvalidStateError) {
  rt::finalize(); // the test environment initialized once
  EXPECT_FALSE(rt::isInitialized());
  EXPECT_THROW(rt::loadModel(dataPath("tests/models/mlp")), rt::InvalidStateError);
  rt::initialize();
  EXPECT_NO_THROW(rt::loadModel(dataPath("tests/models/mlp")));
}

TEST(ModelErrors, RmsNormalizationBadScaleOrStashTypeNamesTheNode) {
  auto Load = [](const std::vector<int64_t> &ScaleDims, int64_t Stash) {
    OnnxBuilder B(23);
    B.input("x", onnx::TensorProto_DataType_FLOAT, {2, 4});
    B.initializer("scale", ScaleDims, std::vector<float>(static_cast<size_t>(ScaleDims[0]), 1.0f));
    auto *N = B.node("RMSNormalization", {"x", "scale"}, {"y"}, "rms");
    OnnxBuilder::attrInt(N, "stash_type", Stash);
    B.output("y", onnx::TensorProto_DataType_FLOAT);
    const std::string Bytes = B.bytes();
    return rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
  };
  EXPECT_NO_THROW(Load({4}, 1));
  try {
    Load({3}, 1);
    ADD_FAILURE() << "no ShapeError";
  } catch (const rt::ShapeError &E) {
    EXPECT_NE(std::string(E.what()).find("'rms'"), std::string::npos) << E.what();
    EXPECT_NE(std::string(E.what()).find("does not broadcast"), std::string::npos) << E.what();
  }
  EXPECT_THROW(Load({4}, 0), rt::ModelError);
}

TEST(ModelErrors, WindowFunctionsRejectBadSizeAndAttributes) {
  auto Load = [](int64_t Size, int64_t Periodic, int64_t DType) {
    OnnxBuilder B(17);
    B.initializerI64("size", {}, {Size});
    auto *N = B.node("HannWindow", {"size"}, {"w"}, "hann");
    OnnxBuilder::attrInt(N, "periodic", Periodic);
    OnnxBuilder::attrInt(N, "output_datatype", DType);
    B.output("w", 0);
    const std::string Bytes = B.bytes();
    return rt::loadModel(reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size());
  };
  EXPECT_NO_THROW(Load(8, 1, 1));
  EXPECT_THROW(Load(-3, 1, 1), rt::ShapeError);  // negative size
  EXPECT_THROW(Load(8, 2, 1), rt::ModelError);   // periodic must be 0 or 1
  EXPECT_THROW(Load(8, 1, 8), rt::TypeError);    // string output type
}
