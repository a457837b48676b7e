// ai.onnx.ml TreeEnsembleClassifier (opsets 1 and 3): X [N, C] (or [C]) of float, double, int64 or
// int32 -> Y [N] int64 labels, Z [N, E] float scores (E = number of class labels). Decision trees,
// random forests and gradient boosting of scikit-learn as skl2onnx exports them. Semantics (node
// modes, missing-value tracks, base values, post transforms, binary conventions) as ONNX Runtime
// computes them: see common/TreeEnsemble.h. String class labels are rejected at load: the native
// backend produces no string tensors.
#include "backends/native/ops/common/TreeEnsemble.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

/// The class labels of N: classlabels_int64s (exactly one of the two label lists must be set).
Result<std::vector<int64_t>> classLabels(const Node &N) {
  ASSIGN_OR_RETURN(const std::vector<int64_t> Ints, N.getInts("classlabels_int64s", {}));
  ASSIGN_OR_RETURN(const std::vector<std::string> Strings, mlStrings(N, "classlabels_strings"));
  if (!Strings.empty() && !Ints.empty())
    return attrError(N, "classlabels_strings", "and 'classlabels_int64s' are both set; give one of them");
  if (!Strings.empty())
    return attrError(N, "classlabels_strings",
                     "is not supported: the native backend produces no string tensors; export the model with "
                     "integer class labels (fit on integer-encoded y)");
  if (Ints.size() < 2)
    return attrError(N, "classlabels_int64s", "must name at least two classes, got ", Ints.size());
  return Ints;
}

OpSchema treeEnsembleClassifierSchema() {
  OpSchema S;
  S.Domain = kMlDomain;
  S.OpType = "TreeEnsembleClassifier";
  S.MinInputs = S.MaxInputs = 1;
  S.MinOutputs = S.MaxOutputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32, ElementType::F64, ElementType::I64, ElementType::I32}));
    ASSIGN_OR_RETURN(const std::vector<int64_t> Labels, classLabels(Ctx.N));
    Expr Rows, Cols;
    RETURN_IF_ERROR(mlInputShape(Ctx, Rows, Cols));
    Ctx.Outputs[0].Type = ElementType::I64;
    Ctx.Outputs[0].Shape = TensorShape({Rows});
    Ctx.Outputs[1].Type = ElementType::F32;
    Ctx.Outputs[1].Shape = TensorShape({Rows, Expr(static_cast<long long>(Labels.size()))});
    return Status::ok();
  };
  return S;
}

class TreeEnsembleClassifierKernel : public Kernel {
public:
  TreeEnsembleClassifierKernel(TreeEnsemble E, TreeEnsemble::ClassLabels L) : E(std::move(E)), L(std::move(L)) {}
  Status run(const KernelContext &Ctx) const override {
    return E.classify("treeensembleclassifier", Ctx, Ctx.Inputs[0], L, Ctx.Outputs[1].data<float>(),
                      Ctx.Outputs[0].data<int64_t>());
  }

private:
  TreeEnsemble E;
  TreeEnsemble::ClassLabels L;
};

Result<std::unique_ptr<Kernel>> createClassifier(const KernelCreateInfo &Info) {
  const Node &N = Info.N;
  ASSIGN_OR_RETURN(const std::vector<int64_t> Labels, classLabels(N));
  ASSIGN_OR_RETURN(const TreeSpec S, readTreeSpecV3(N, /*Classifier=*/true, static_cast<int64_t>(Labels.size())));
  ASSIGN_OR_RETURN(TreeEnsemble E, TreeEnsemble::build(N, S));
  TreeEnsemble::ClassLabels L;
  L.Labels = Labels;
  std::vector<int64_t> Classes = S.WeightTarget;
  std::sort(Classes.begin(), Classes.end());
  L.BinaryCase = Labels.size() == 2 && std::unique(Classes.begin(), Classes.end()) - Classes.begin() == 1;
  for (double W : S.Weights)
    L.WeightsPositive = L.WeightsPositive && W >= 0;
  return makeKernel<TreeEnsembleClassifierKernel>(std::move(E), std::move(L));
}

/// A hand-made ensemble over 3 features: tree 0 (BRANCH_LEQ on x0, then Mode on x1), tree 1 (a
/// BRANCH_GT root with a missing-value track); Classes class weights per leaf, or (OneClass) weights
/// of class 1 only, all positive with post transform NONE, else some negative.
std::map<std::string, AttrValue> classifierAttrs(const std::string &Mode, int Classes, const std::string &Post,
                                                 std::vector<float> Base, bool OneClass) {
  std::map<std::string, AttrValue> A;
  A["nodes_treeids"] = attrInts({0, 0, 0, 0, 0, 1, 1, 1});
  A["nodes_nodeids"] = attrInts({0, 1, 2, 3, 4, 0, 1, 2});
  A["nodes_featureids"] = attrInts({0, 1, 0, 0, 0, 2, 0, 0});
  A["nodes_modes"] = attrStrings({"BRANCH_LEQ", Mode, "LEAF", "LEAF", "LEAF", "BRANCH_GT", "LEAF", "LEAF"});
  A["nodes_values"] = attrFloats({0.1f, -0.2f, 0, 0, 0, 0.3f, 0, 0});
  A["nodes_truenodeids"] = attrInts({1, 2, 0, 0, 0, 1, 0, 0});
  A["nodes_falsenodeids"] = attrInts({4, 3, 0, 0, 0, 2, 0, 0});
  A["nodes_missing_value_tracks_true"] = attrInts({0, 0, 0, 0, 0, 1, 0, 0});
  std::vector<int64_t> Tree, NodeId, Ids;
  std::vector<float> W;
  const int64_t Leaves[][2] = {{0, 2}, {0, 3}, {0, 4}, {1, 1}, {1, 2}};
  for (size_t L = 0; L < 5; ++L)
    for (int C = OneClass ? 1 : 0; C < (OneClass ? 2 : Classes); ++C) {
      Tree.push_back(Leaves[L][0]);
      NodeId.push_back(Leaves[L][1]);
      Ids.push_back(C);
      W.push_back(0.1f * static_cast<float>((L * 7 + static_cast<size_t>(C) * 3) % 11) - (OneClass && Post != "NONE" ? 0.3f : 0.0f));
    }
  A["class_treeids"] = attrInts(Tree);
  A["class_nodeids"] = attrInts(NodeId);
  A["class_ids"] = attrInts(Ids);
  A["class_weights"] = attrFloats(W);
  std::vector<int64_t> Labels;
  for (int C = 0; C < Classes; ++C)
    Labels.push_back(10 + C);
  A["classlabels_int64s"] = attrInts(Labels);
  A["post_transform"] = attrString(Post);
  if (!Base.empty())
    A["base_values"] = attrFloats(Base);
  return A;
}

std::vector<OpTestCase> classifierCases() {
  std::vector<OpTestCase> Cases;
  auto Add = [&](std::string Label, std::map<std::string, AttrValue> A, ElementType T = ElementType::F32) {
    OpTestCase C = testCase(std::move(Label), {tensorInput({7, 3}, T)}, std::move(A));
    C.NumOutputs = 2;
    Cases.push_back(C);
  };
  Add("three_classes_leq", classifierAttrs("BRANCH_LEQ", 3, "NONE", {}, false));
  Add("softmax_lt", classifierAttrs("BRANCH_LT", 3, "SOFTMAX", {0.1f, 0.2f, -0.1f}, false));
  Add("logistic_gte", classifierAttrs("BRANCH_GTE", 4, "LOGISTIC", {}, false));
  Add("softmax_zero_eq", classifierAttrs("BRANCH_EQ", 3, "SOFTMAX_ZERO", {}, false));
  Add("neq", classifierAttrs("BRANCH_NEQ", 3, "NONE", {}, false));
  Add("binary_both_classes", classifierAttrs("BRANCH_GT", 2, "NONE", {}, false));
  Add("binary_one_class", classifierAttrs("BRANCH_LEQ", 2, "NONE", {}, true));
  Add("binary_one_class_logistic", classifierAttrs("BRANCH_LEQ", 2, "LOGISTIC", {}, true));
  Add("binary_base2", classifierAttrs("BRANCH_LEQ", 2, "NONE", {0.2f, 0.2f}, true));
  Add("double_input", classifierAttrs("BRANCH_LEQ", 3, "NONE", {}, false), ElementType::F64);
  return Cases;
}

OPT_REGISTER_SCHEMA(TreeEnsembleClassifier, treeEnsembleClassifierSchema());
OPT_REGISTER_KERNELS(TreeEnsembleClassifier,
                     OpKernels{kMlDomain,
                               "TreeEnsembleClassifier",
                               {{"f32_treeensembleclassifier__ref", 0, nullptr, createClassifier}},
                               classifierCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
