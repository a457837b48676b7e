// The ai.onnx.ml ops (scikit-learn models): load-time errors that name node and attribute (string
// labels, malformed trees, bad modes) and output shapes (ZipMap: tests/import/OnnxImporterTest). Their values are checked by the
// kernel harness and, against ONNX Runtime, by the sklearn_models corpus test.
#include <gtest/gtest.h>

#include "backends/native/KernelRegistry.h"
#include "backends/native/ops/OpInferTestUtil.h"

using namespace optimium_test;
using optimium::runtime::detail::ErrorCode;
using optimium::runtime::detail::attrFloats;
using optimium::runtime::detail::attrStrings;
namespace rtd = optimium::runtime::detail;

namespace {

NodeInference inferMl(const std::string &Op, std::vector<ValueInfo> Inputs, std::map<std::string, AttrValue> Attrs,
                      int NumOutputs = 1, int Opset = 3) {
  NodeInference R;
  R.N.Name = "n1";
  R.N.OpType = Op;
  R.N.Domain = "ai.onnx.ml";
  R.N.OpsetVersion = Opset;
  R.N.Attrs = std::move(Attrs);
  for (size_t I = 0; I < Inputs.size(); ++I)
    R.N.Inputs.push_back(static_cast<int>(I));
  for (int I = 0; I < NumOutputs; ++I)
    R.N.Outputs.push_back(100 + I);
  rtd::ShapeContext Ctx(R.N);
  Ctx.Inputs = std::move(Inputs);
  R.S = rtd::inferNode(Ctx);
  R.Outputs = Ctx.Outputs;
  return R;
}

/// The kernel of a node that inferred fine: its creation status.
rtd::Status createMl(const NodeInference &R, std::vector<ValueInfo> Inputs) {
  const rtd::OpKernels *K = rtd::findOpKernels("ai.onnx.ml", R.N.OpType);
  if (!K)
    return rtd::makeError(ErrorCode::Model, "no kernels");
  rtd::KernelCreateInfo Info{R.N, std::move(Inputs), R.Outputs};
  const rtd::KernelVariant *V = rtd::selectKernelVariant(*K, Info);
  if (!V)
    return rtd::makeError(ErrorCode::Model, "no variant");
  auto Kernel = V->Create(Info);
  return Kernel.isOk() ? rtd::Status::ok() : Kernel.status();
}

/// One tree: node 0 splits x0 at 0.5 into leaves 1 and 2.
std::map<std::string, AttrValue> stump() {
  return {{"nodes_treeids", attrInts({0, 0, 0})},
          {"nodes_nodeids", attrInts({0, 1, 2})},
          {"nodes_featureids", attrInts({0, 0, 0})},
          {"nodes_modes", attrStrings({"BRANCH_LEQ", "LEAF", "LEAF"})},
          {"nodes_values", attrFloats({0.5f, 0, 0})},
          {"nodes_truenodeids", attrInts({1, 0, 0})},
          {"nodes_falsenodeids", attrInts({2, 0, 0})},
          {"target_treeids", attrInts({0, 0})},
          {"target_nodeids", attrInts({1, 2})},
          {"target_ids", attrInts({0, 0})},
          {"target_weights", attrFloats({1, 2})}};
}

TEST(MlOps, StringClassLabelsAreRejected) {
  expectInferError(inferMl("LinearClassifier", {valueInfo({2, 2})},
                           {{"coefficients", attrFloats({1, 2, 3, 4})},
                            {"intercepts", attrFloats({0, 1})},
                            {"classlabels_strings", attrStrings({"a", "b"})}},
                           2, 1),
                   ErrorCode::Model, {"'classlabels_strings'", "string tensors"});
}

TEST(MlOps, TreeRegressorShapesAndMalformedTrees) {
  NodeInference R = inferMl("TreeEnsembleRegressor", {valueInfo({5, 2})}, stump());
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Shape, TensorShape({5, 1}));
  EXPECT_TRUE(createMl(R, {valueInfo({5, 2})}).isOk());

  auto Bad = [](const char *Attr, AttrValue V, std::vector<std::string> Parts) {
    std::map<std::string, AttrValue> A = stump();
    A[Attr] = std::move(V);
    NodeInference R = inferMl("TreeEnsembleRegressor", {valueInfo({5, 2})}, A);
    ASSERT_TRUE(R.S.isOk()) << R.S.message();
    const rtd::Status S = createMl(R, {valueInfo({5, 2})});
    EXPECT_EQ(S.code(), ErrorCode::Model) << S.message();
    Parts.push_back("node 'n1' (TreeEnsembleRegressor)");
    for (const std::string &P : Parts)
      EXPECT_NE(S.message().find(P), std::string::npos) << "missing '" << P << "' in: " << S.message();
  };
  Bad("nodes_modes", attrStrings({"BRANCH_LEQ", "LEAF", "BRANCH_XX"}), {"'nodes_modes'", "BRANCH_XX"});
  Bad("nodes_falsenodeids", attrInts({7, 0, 0}), {"'nodes_falsenodeids'", "7"});
  Bad("nodes_truenodeids", attrInts({0, 0, 0}), {"'nodes_truenodeids'", "its own child"});
  Bad("target_nodeids", attrInts({1, 1}), {"no weight"});
  Bad("nodes_values", attrFloats({0.5f}), {"'nodes_values'", "1 values"});
  Bad("aggregate_function", attrString("MEDIAN"), {"'aggregate_function'", "MEDIAN"});
  // Node 1 branches back to node 0: a cycle.
  std::map<std::string, AttrValue> A = stump();
  A["nodes_modes"] = attrStrings({"BRANCH_LEQ", "BRANCH_LEQ", "LEAF"});
  A["nodes_truenodeids"] = attrInts({1, 0, 0});
  A["nodes_falsenodeids"] = attrInts({2, 2, 0});
  A["target_nodeids"] = attrInts({2, 2});
  NodeInference C = inferMl("TreeEnsembleRegressor", {valueInfo({5, 2})}, A);
  ASSERT_TRUE(C.S.isOk()) << C.S.message();
  const rtd::Status S = createMl(C, {valueInfo({5, 2})});
  EXPECT_NE(S.message().find("cycle"), std::string::npos) << S.message();
}

TEST(MlOps, ClassifierOutputs) {
  std::map<std::string, AttrValue> A = stump();
  A.erase("target_treeids");
  A.erase("target_nodeids");
  A.erase("target_ids");
  A.erase("target_weights");
  A["class_treeids"] = attrInts({0, 0});
  A["class_nodeids"] = attrInts({1, 2});
  A["class_ids"] = attrInts({0, 2});
  A["class_weights"] = attrFloats({1, 1});
  A["classlabels_int64s"] = attrInts({4, 5, 6});
  NodeInference R = inferMl("TreeEnsembleClassifier", {valueInfo({3, 2})}, A, 2);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_EQ(R.Outputs[0].Type, ElementType::I64);
  EXPECT_EQ(R.Outputs[1].Shape, TensorShape({3, 3}));
  A["class_ids"] = attrInts({0, 3});
  R = inferMl("TreeEnsembleClassifier", {valueInfo({3, 2})}, A, 2);
  ASSERT_TRUE(R.S.isOk()) << R.S.message();
  EXPECT_NE(createMl(R, {valueInfo({3, 2})}).message().find("'class_ids"), std::string::npos);
}

} // namespace
