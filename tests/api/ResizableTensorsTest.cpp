// Preserved and Resizable tensors (spec section 10): the optimium.json manifest, the cache kept
// in the request, setTensorShape / applyShapeChanges / ShrinkToFit / releaseStaleShapeMemory,
// migration callbacks, capacity validation, and every error path.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <stdexcept>

#include "Optimium/Runtime.h"
#include "OnnxBuilder.h"
#include "exec/Request.h"

namespace rt = optimium::runtime;
using namespace optimium_test;

namespace {

const int F32 = onnx::TensorProto_DataType_FLOAT;

/// cache_out = Concat(cache_in, x, axis=1): cache_in [2,n] grows by one column per run. With
/// Slow, a side chain of MatMuls on z keeps the request running for a while.
std::string cacheModel(bool Slow = false, bool DynamicOther = false) {
  OnnxBuilder B;
  B.input("cache_in", F32, {2, 0}, {"", "n"});
  B.input("x", F32, {2, 1}, DynamicOther ? std::vector<std::string>{"", "k"} : std::vector<std::string>{});
  auto *N = B.node("Concat", {"cache_in", "x"}, {"cache_out"}, "concat");
  OnnxBuilder::attrInt(N, "axis", 1);
  B.output("cache_out", F32);
  if (Slow) {
    B.input("z", F32, {128, 128});
    std::string Prev = "z";
    for (int I = 0; I < 40; ++I) {
      const std::string Out = I == 39 ? "y" : "t" + std::to_string(I);
      B.node("MatMul", {Prev, "z"}, {Out}, "mm" + std::to_string(I));
      Prev = Out;
    }
    B.output("y", F32);
  }
  return B.bytes();
}

const char *kCacheManifest = R"({"optimium_manifest": 1, "tensors": {
  "cache_in": {"preserved": true, "resizable": true, "update_from": "cache_out", "base_shape": [2, 0]}}})";

/// A fresh folder holding model.onnx (+ optimium.json when Manifest is non-empty).
std::string modelFolder(const std::string &Bytes, const std::string &Manifest) {
  char Tmpl[] = "/tmp/optimium_rs_XXXXXX";
  std::string Dir = mkdtemp(Tmpl);
  std::ofstream(Dir + "/model.onnx", std::ios::binary) << Bytes;
  if (!Manifest.empty())
    std::ofstream(Dir + "/optimium.json") << Manifest;
  return Dir;
}

rt::Model loadCache(const rt::ModelLoadOptions &O = {}, bool Slow = false) {
  return rt::loadModel(modelFolder(cacheModel(Slow), kCacheManifest), O);
}

rt::Tensor column(float A, float B) {
  rt::TypedTensor<float> T = rt::tensor<float>(rt::TensorShape({2, 1}));
  T.data()[0] = A;
  T.data()[1] = B;
  return T;
}

void step(rt::InferRequest &R, float A, float B) {
  R.infer({column(A, B)});
  R.wait();
}

std::vector<float> values(const rt::Tensor &T) {
  const float *P = static_cast<const float *>(T.data());
  return std::vector<float>(P, P + T.getElementCount());
}

std::vector<int64_t> dims(const rt::Tensor &T) { return T.getShape().getDims(); }

size_t staleBuffers(const rt::InferRequest &R) {
  std::lock_guard<std::mutex> Lock(R.impl()->Mu);
  return R.impl()->Stale.size();
}

} // namespace

TEST(ResizableTensors, ManifestMarksTensorsAndInferTakesOnlyTheOtherInputs) {
  rt::Model M = loadCache();
  ASSERT_EQ(M.getInputNames().size(), 1u);
  EXPECT_EQ(M.getInputNames()[0].str(), "x");
  EXPECT_TRUE(M.getTensorInfo("cache_in").Resizable);
  EXPECT_EQ(M.getTensorInfo("cache_in").Shape, rt::TensorShape({2, 0}));
  EXPECT_FALSE(M.getTensorInfo("x").Resizable);
  // inferShape works with or without the preserved input.
  std::map<std::string, rt::TensorShape> Shapes{{"x", rt::TensorShape({2, 1})}};
  EXPECT_EQ(M.inferShape("cache_out", Shapes), rt::TensorShape({2, 1}));
  Shapes.emplace("cache_in", rt::TensorShape({2, 3}));
  EXPECT_EQ(M.inferShape("cache_out", Shapes), rt::TensorShape({2, 4}));
}

TEST(ResizableTensors, CacheStaysInTheRequestAcrossRuns) {
  rt::Model M = loadCache();
  rt::InferRequest R = M.createRequest();
  rt::Tensor Initial = R.getTensor("cache_in"); // readable before the first run: zeros at base shape
  EXPECT_EQ(dims(Initial), (std::vector<int64_t>{2, 0}));
  step(R, 1, 10);
  step(R, 2, 20);
  step(R, 3, 30);
  rt::Tensor C = R.getTensor("cache_in");
  EXPECT_EQ(dims(C), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(C), (std::vector<float>{1, 2, 3, 10, 20, 30}));
  EXPECT_EQ(values(R.getOutput("cache_out")), values(C));
  // A second request has its own cache.
  rt::InferRequest R2 = M.createRequest();
  step(R2, 5, 50);
  EXPECT_EQ(values(R2.getTensor("cache_in")), (std::vector<float>{5, 50}));
  EXPECT_EQ(dims(R.getTensor("cache_in")), (std::vector<int64_t>{2, 3}));
  // The preserved value is writable between runs.
  static_cast<float *>(R.getTensor("cache_in").data())[0] = -1;
  step(R, 4, 40);
  EXPECT_EQ(values(R.getTensor("cache_in")), (std::vector<float>{-1, 2, 3, 4, 10, 20, 30, 40}));
  // The map form of infer() takes the same inputs.
  R.infer(std::map<std::string, rt::Tensor>{{"x", column(5, 50)}});
  R.wait();
  EXPECT_EQ(dims(R.getTensor("cache_in")), (std::vector<int64_t>{2, 5}));
  std::vector<rt::Tensor> TwoInputs = {column(1, 1), column(1, 1)};
  EXPECT_THROW(R.infer(rt::make_array(TwoInputs)), rt::InvalidArgumentError);
}

TEST(ResizableTensors, WithinCapacityIsMetadataOnlyAndRestridesInPlace) {
  rt::ModelLoadOptions O;
  O.ResizableCapacities.emplace("cache_in", rt::TensorShape({2, 8}));
  rt::Model M = loadCache(O);
  rt::InferRequest R = M.createRequest();
  step(R, 1, 10);
  step(R, 2, 20);
  step(R, 3, 30);
  const void *Before = R.getTensor("cache_in").data();
  R.setTensorShape("cache_in", rt::TensorShape({2, 5}));
  EXPECT_EQ(dims(R.getTensor("cache_in")), (std::vector<int64_t>{2, 3})); // recorded, not applied
  R.applyShapeChanges();
  rt::Tensor C = R.getTensor("cache_in");
  EXPECT_EQ(C.data(), Before);
  EXPECT_EQ(values(C), (std::vector<float>{1, 2, 3, 0, 0, 10, 20, 30, 0, 0}));
  EXPECT_EQ(staleBuffers(R), 0u);
  R.setTensorShape("cache_in", rt::TensorShape({2, 2}));
  R.applyShapeChanges();
  EXPECT_EQ(R.getTensor("cache_in").data(), Before);
  EXPECT_EQ(values(R.getTensor("cache_in")), (std::vector<float>{1, 2, 10, 20}));
  R.applyShapeChanges(); // nothing pending: no-op
  EXPECT_EQ(values(R.getTensor("cache_in")), (std::vector<float>{1, 2, 10, 20}));
  // Lazily applied by the next infer().
  R.setTensorShape("cache_in", rt::TensorShape({2, 1}));
  step(R, 7, 70);
  EXPECT_EQ(values(R.getTensor("cache_in")), (std::vector<float>{1, 7, 10, 70}));
  // Beyond the declared capacity: a hard cap, for setTensorShape and for the run's growth.
  EXPECT_THROW(R.setTensorShape("cache_in", rt::TensorShape({2, 9})), rt::InvalidArgumentError);
  R.setTensorShape("cache_in", rt::TensorShape({2, 8}));
  EXPECT_THROW(step(R, 1, 1), rt::ShapeError);
  EXPECT_EQ(dims(R.getTensor("cache_in")), (std::vector<int64_t>{2, 8}));
}

TEST(ResizableTensors, OverflowReallocatesPreservesContentAndRetainsOldPools) {
  rt::Model M = loadCache();
  rt::InferRequest R = M.createRequest();
  step(R, 1, 10);
  step(R, 2, 20);
  const void *Before = R.getTensor("cache_in").data();
  R.setTensorShape("cache_in", rt::TensorShape({2, 16}));
  R.applyShapeChanges();
  rt::Tensor C = R.getTensor("cache_in");
  EXPECT_NE(C.data(), Before);
  std::vector<float> Want(32, 0.0f);
  Want[0] = 1, Want[1] = 2, Want[16] = 10, Want[17] = 20;
  EXPECT_EQ(values(C), Want);
  EXPECT_GT(staleBuffers(R), 0u);
  R.releaseStaleShapeMemory();
  EXPECT_EQ(staleBuffers(R), 0u);
  R.releaseStaleShapeMemory(); // no-op
  step(R, 3, 30);
  EXPECT_EQ(dims(R.getTensor("cache_in")), (std::vector<int64_t>{2, 17}));
  EXPECT_EQ(values(R.getTensor("cache_in"))[16], 3.0f);
}

TEST(ResizableTensors, ShrinkToFitReleasesOnlyWhenItReallocates) {
  rt::Model M = loadCache();
  rt::InferRequest R = M.createRequest();
  step(R, 1, 10);
  R.setTensorShape("cache_in", rt::TensorShape({2, 64}));
  R.applyShapeChanges(); // grows; old pools retained
  ASSERT_GT(staleBuffers(R), 0u);
  R.applyShapeChanges(true); // capacity already at its target: early return, pools still held
  EXPECT_GT(staleBuffers(R), 0u);
  const void *Grown = R.getTensor("cache_in").data();
  R.setTensorShape("cache_in", rt::TensorShape({2, 2}));
  R.applyShapeChanges(true); // reallocates down and releases
  EXPECT_EQ(staleBuffers(R), 0u);
  EXPECT_NE(R.getTensor("cache_in").data(), Grown);
  EXPECT_EQ(values(R.getTensor("cache_in")), (std::vector<float>{1, 0, 10, 0}));
  EXPECT_EQ(R.impl()->States[0].Cap, (std::vector<int64_t>{2, 2}));
}

TEST(ResizableTensors, ShrinkToFitNeverGoesBelowADeclaredCapacity) {
  rt::ModelLoadOptions O;
  O.ResizableCapacities.emplace("cache_in", rt::TensorShape({2, 8}));
  rt::Model M = loadCache(O);
  rt::InferRequest R = M.createRequest();
  step(R, 1, 10);
  const void *Before = R.getTensor("cache_in").data();
  R.setTensorShape("cache_in", rt::TensorShape({2, 0}));
  R.applyShapeChanges(true);
  EXPECT_EQ(R.getTensor("cache_in").data(), Before); // floor = declared capacity: no reallocation
  EXPECT_EQ(R.impl()->States[0].Cap, (std::vector<int64_t>{2, 8}));
}

TEST(ResizableTensors, ShrinkToFitComparesElementCounts) {
  // Capacity [8,2] (16 elements) and a current shape [4,4] (16): nothing to do; a per-axis max
  // would be [8,4] and grow the pool.
  OnnxBuilder B;
  B.input("s", F32, {8, 2});
  B.input("x", F32, {1});
  B.node("Add", {"x", "x"}, {"y"}, "add");
  B.output("y", F32);
  rt::Model M = rt::loadModel(modelFolder(B.bytes(), R"({"optimium_manifest": 1, "tensors": {
    "s": {"preserved": true, "resizable": true}}})"));
  rt::InferRequest R = M.createRequest();
  R.setTensorShape("s", rt::TensorShape({4, 4}));
  R.applyShapeChanges(true);
  EXPECT_EQ(R.impl()->States[0].Cap, (std::vector<int64_t>{8, 2}));
  EXPECT_EQ(dims(R.getTensor("s")), (std::vector<int64_t>{4, 4}));
}

TEST(ResizableTensors, MigrationCallbackReplacesTheDefaultCopy) {
  rt::ModelLoadOptions O;
  O.ResizableCapacities.emplace("cache_in", rt::TensorShape({2, 8}));
  rt::Model M = loadCache(O);
  rt::InferRequest R = M.createRequest();
  step(R, 1, 10);
  step(R, 2, 20);
  int Calls = 0;
  R.setResizeMigration("cache_in", [&](const rt::Tensor &Old, rt::Tensor &New) {
    ++Calls;
    EXPECT_EQ(dims(Old), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(values(Old), (std::vector<float>{1, 2, 10, 20}));
    EXPECT_EQ(values(New), std::vector<float>(static_cast<size_t>(New.getElementCount()), 0.0f)); // zeroed
    static_cast<float *>(New.data())[0] = 42;
  });
  R.setTensorShape("cache_in", rt::TensorShape({2, 3})); // in-place restride
  R.applyShapeChanges();
  EXPECT_EQ(Calls, 1);
  EXPECT_EQ(values(R.getTensor("cache_in")), (std::vector<float>{42, 0, 0, 0, 0, 0}));
  R.setResizeMigration("cache_in", nullptr); // default again
  R.setTensorShape("cache_in", rt::TensorShape({2, 2}));
  R.applyShapeChanges();
  EXPECT_EQ(Calls, 1);
  EXPECT_EQ(values(R.getTensor("cache_in")), (std::vector<float>{42, 0, 0, 0}));
  // Unknown or non-preserved tensors.
  EXPECT_THROW(R.setResizeMigration("x", nullptr), rt::InvalidArgumentError);
  EXPECT_THROW(R.setResizeMigration("nope", nullptr), rt::InvalidArgumentError);
}

TEST(ResizableTensors, MigrationCallbackFiresOnOverflowAndShrink) {
  rt::Model M = loadCache();
  rt::InferRequest R = M.createRequest();
  step(R, 1, 10);
  int Calls = 0;
  R.setResizeMigration("cache_in", [&](const rt::Tensor &, rt::Tensor &) { ++Calls; });
  R.setTensorShape("cache_in", rt::TensorShape({2, 32}));
  R.applyShapeChanges();
  R.setTensorShape("cache_in", rt::TensorShape({2, 1}));
  R.applyShapeChanges(true);
  EXPECT_EQ(Calls, 2);
}

TEST(ResizableTensors, ThrowingMigrationFaultsTheRequestAndKeepsTheCache) {
  rt::Model M = loadCache();
  rt::InferRequest R = M.createRequest();
  step(R, 1, 10);
  step(R, 2, 20);
  const void *Before = R.getTensor("cache_in").data();
  R.setResizeMigration("cache_in", [](const rt::Tensor &, rt::Tensor &) { throw std::runtime_error("migration boom"); });
  R.setTensorShape("cache_in", rt::TensorShape({2, 40})); // would reallocate
  EXPECT_THROW(R.applyShapeChanges(), std::runtime_error);
  EXPECT_EQ(R.getStatus(), rt::InferStatus::Fault);
  EXPECT_THROW(R.wait(), std::runtime_error);
  rt::Tensor C = R.getTensor("cache_in");
  EXPECT_EQ(C.data(), Before);
  EXPECT_EQ(dims(C), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values(C), (std::vector<float>{1, 2, 10, 20}));
  // Lazily, through infer(): same error, same guarantees.
  R.setTensorShape("cache_in", rt::TensorShape({2, 1}));
  EXPECT_THROW(step(R, 3, 30), std::runtime_error);
  EXPECT_EQ(values(R.getTensor("cache_in")), (std::vector<float>{1, 2, 10, 20}));
  // Recovery: default migration, next run succeeds.
  R.setResizeMigration("cache_in", nullptr);
  step(R, 3, 30);
  EXPECT_EQ(R.getStatus(), rt::InferStatus::Ready);
  EXPECT_EQ(values(R.getTensor("cache_in")), (std::vector<float>{1, 3, 10, 30})); // the pending [2,1] applied
}

TEST(ResizableTensors, SetTensorShapeErrors) {
  rt::ModelLoadOptions O;
  O.ResizableCapacities.emplace("cache_in", rt::TensorShape({2, 8}));
  rt::Model M = loadCache(O);
  rt::InferRequest R = M.createRequest();
  try {
    R.setTensorShape("x", rt::TensorShape({2, 2}));
    FAIL();
  } catch (const rt::InvalidArgumentError &E) {
    EXPECT_NE(std::string(E.what()).find("'x'"), std::string::npos) << E.what();
    EXPECT_NE(std::string(E.what()).find("not resizable"), std::string::npos) << E.what();
  }
  try {
    R.setTensorShape("cache_in", rt::TensorShape({2, 2, 1}));
    FAIL();
  } catch (const rt::ShapeError &E) {
    EXPECT_NE(std::string(E.what()).find("rank"), std::string::npos) << E.what();
  }
  EXPECT_THROW(R.setTensorShape("cache_in", rt::TensorShape({rt::Expr(2), rt::Expr("n")})), rt::InvalidArgumentError);
  EXPECT_THROW(R.setTensorShape("cache_in", rt::TensorShape({4, 8})), rt::InvalidArgumentError); // beyond declared
  EXPECT_THROW(R.setTensorShape("nope", rt::TensorShape({1})), rt::InvalidArgumentError);
}

TEST(ResizableTensors, ApplyShapeChangesWhileRunningIsInvalidState) {
  rt::Model M = loadCache({}, /*Slow=*/true);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> Z = rt::tensor<float>(rt::TensorShape({128, 128}));
  Z.fill(0.001f);
  R.setTensorShape("cache_in", rt::TensorShape({2, 3}));
  R.infer({column(1, 10), Z});
  if (R.getStatus() == rt::InferStatus::Running) {
    EXPECT_THROW(R.applyShapeChanges(), rt::InvalidStateError);
    R.setTensorShape("cache_in", rt::TensorShape({2, 1})); // recording is allowed
  }
  R.wait();
  EXPECT_EQ(R.getStatus(), rt::InferStatus::Ready);
  EXPECT_EQ(values(R.getTensor("cache_in")), (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 10}));
}

TEST(ResizableTensors, FailedReallocationPropagatesAndTheNextInferWorks) {
  rt::Model M = loadCache();
  rt::InferRequest R = M.createRequest();
  step(R, 1, 10);
  R.setTensorShape("cache_in", rt::TensorShape({2, int64_t(1) << 56}));
  EXPECT_THROW(R.applyShapeChanges(), rt::OutOfResourceError);
  EXPECT_TRUE(R.impl()->Dirty);
  EXPECT_EQ(values(R.getTensor("cache_in")), (std::vector<float>{1, 10}));
  step(R, 2, 20);
  EXPECT_EQ(values(R.getTensor("cache_in")), (std::vector<float>{1, 2, 10, 20}));
  EXPECT_FALSE(R.impl()->Dirty);
}

TEST(ResizableTensors, ResizableNonPreservedInputFollowsSetTensorShape) {
  OnnxBuilder B;
  B.input("v", F32, {3});
  B.node("Relu", {"v"}, {"y"}, "relu");
  B.output("y", F32);
  rt::ModelLoadOptions O;
  O.ResizableCapacities.emplace("v", rt::TensorShape({6}));
  rt::Model M = rt::loadModel(modelFolder(B.bytes(), R"({"optimium_manifest": 1, "tensors": {"v": {"resizable": true}}})"), O);
  ASSERT_EQ(M.getInputNames().size(), 1u);
  rt::InferRequest R = M.createRequest();
  rt::TypedTensor<float> V5 = rt::tensor<float>(rt::TensorShape({5}));
  V5.fill(-1.0f);
  EXPECT_THROW(R.infer({V5}), rt::ShapeError); // still [3]
  R.setTensorShape("v", rt::TensorShape({5}));
  R.infer({V5});
  R.wait();
  EXPECT_EQ(dims(R.getOutput("y")), (std::vector<int64_t>{5}));
  EXPECT_THROW(R.setResizeMigration("v", nullptr), rt::InvalidArgumentError); // not preserved
}

TEST(ResizableTensors, CapacitiesAreValidatedAtLoad) {
  const std::string Dir = modelFolder(cacheModel(), R"({"optimium_manifest": 1, "tensors": {
    "cache_in": {"preserved": true, "resizable": true, "update_from": "cache_out", "base_shape": [2, 4]}}})");
  auto Load = [&](const char *Name, rt::TensorShape S) {
    rt::ModelLoadOptions O;
    O.ResizableCapacities.emplace(Name, S);
    return rt::loadModel(Dir, O);
  };
  EXPECT_THROW(Load("no_such_tensor", rt::TensorShape({4})), rt::ModelError);
  EXPECT_THROW(Load("x", rt::TensorShape({2, 1})), rt::ModelError);          // not resizable
  EXPECT_THROW(Load("cache_in", rt::TensorShape({8})), rt::ModelError);      // other rank
  EXPECT_THROW(Load("cache_in", rt::TensorShape({2, 2})), rt::ModelError);   // smaller than base
  EXPECT_THROW(Load("cache_in", rt::TensorShape({rt::Expr(2), rt::Expr("n")})), rt::InvalidArgumentError); // symbolic
  EXPECT_NO_THROW(Load("cache_in", rt::TensorShape({4, 2}))); // same element count, other layout
  // A symbolic-dynamic model rejects capacities.
  const std::string DynDir = modelFolder(cacheModel(false, /*DynamicOther=*/true), kCacheManifest);
  rt::ModelLoadOptions O;
  O.ResizableCapacities.emplace("cache_in", rt::TensorShape({2, 8}));
  EXPECT_THROW(rt::loadModel(DynDir, O), rt::ModelError);
  EXPECT_NO_THROW(rt::loadModel(DynDir));
}

TEST(ResizableTensors, BadManifestsAreModelErrorsNamingFileAndKey) {
  auto Expect = [](const std::string &Manifest, const std::string &Key) {
    const std::string Dir = modelFolder(cacheModel(), Manifest);
    try {
      rt::loadModel(Dir);
      ADD_FAILURE() << "loaded with manifest " << Manifest;
    } catch (const rt::ModelError &E) {
      EXPECT_NE(std::string(E.what()).find("optimium.json"), std::string::npos) << E.what();
      EXPECT_NE(std::string(E.what()).find(Key), std::string::npos) << E.what();
    }
  };
  Expect("{not json", "not valid JSON");
  Expect(R"({"optimium_manifest": 2, "tensors": {}})", "optimium_manifest");
  Expect(R"({"optimium_manifest": 1, "tensors": {"ghost": {"preserved": true}}})", "tensors.ghost");
  Expect(R"({"optimium_manifest": 1, "tensors": {"cache_out": {"preserved": true}}})", "tensors.cache_out");
  Expect(R"({"optimium_manifest": 1, "tensors": {"cache_in": {"preserved": true, "base_shape": [2]}}})",
         "tensors.cache_in.base_shape");
  Expect(R"({"optimium_manifest": 1, "tensors": {"cache_in": {"preserved": true, "update_from": "x", "base_shape": [2, 0]}}})",
         "tensors.cache_in.update_from");
  Expect(R"({"optimium_manifest": 1, "tensors": {"cache_in": {"preserved": true, "resizable": true}}})",
         "tensors.cache_in"); // symbolic without base_shape
  Expect(R"({"optimium_manifest": 1, "tensors": {"cache_in": {"presrved": true}}})", "tensors.cache_in.presrved");
  Expect(R"({"optimium_manifest": 1, "tensors": {"cache_in": {"resizable": "yes"}}})", "tensors.cache_in.resizable");
}
