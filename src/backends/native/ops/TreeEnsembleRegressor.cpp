// ai.onnx.ml TreeEnsembleRegressor (opsets 1 and 3): X [N, C] (or [C]) of float, double, int64 or
// int32 -> Y [N, n_targets] float. Decision trees, random forests, gradient boosting of
// scikit-learn as skl2onnx exports them; aggregate_function SUM / AVERAGE / MIN / MAX, base values
// and post transforms as ONNX Runtime computes them (common/TreeEnsemble.h).
#include "backends/native/ops/common/TreeEnsemble.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema treeEnsembleRegressorSchema() {
  OpSchema S;
  S.Domain = kMlDomain;
  S.OpType = "TreeEnsembleRegressor";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32, ElementType::F64, ElementType::I64, ElementType::I32}));
    ASSIGN_OR_RETURN(const int64_t Targets, Ctx.N.getInt("n_targets", 1));
    if (Targets <= 0)
      return attrError(Ctx.N, "n_targets", "must be positive, got ", Targets);
    Expr Rows, Cols;
    RETURN_IF_ERROR(mlInputShape(Ctx, Rows, Cols));
    Ctx.Outputs[0].Type = ElementType::F32;
    Ctx.Outputs[0].Shape = TensorShape({Rows, Expr(static_cast<long long>(Targets))});
    return Status::ok();
  };
  return S;
}

class TreeEnsembleRegressorKernel : public Kernel {
public:
  explicit TreeEnsembleRegressorKernel(TreeEnsemble E) : E(std::move(E)) {}
  Status run(const KernelContext &Ctx) const override {
    return E.regress("treeensembleregressor", Ctx, Ctx.Inputs[0], Ctx.Outputs[0].data<float>());
  }

private:
  TreeEnsemble E;
};

Result<std::unique_ptr<Kernel>> createRegressor(const KernelCreateInfo &Info) {
  ASSIGN_OR_RETURN(const TreeSpec S, readTreeSpecV3(Info.N, /*Classifier=*/false, 0));
  ASSIGN_OR_RETURN(TreeEnsemble E, TreeEnsemble::build(Info.N, S));
  return makeKernel<TreeEnsembleRegressorKernel>(std::move(E));
}

/// Two trees over 3 features (the second BRANCH_LT with a missing-value track), Targets targets.
std::map<std::string, AttrValue> regressorAttrs(int Targets, const std::string &Agg, const std::string &Post,
                                                std::vector<float> Base, bool AsTensor) {
  std::map<std::string, AttrValue> A;
  A["nodes_treeids"] = attrInts({0, 0, 0, 0, 0, 1, 1, 1});
  A["nodes_nodeids"] = attrInts({0, 1, 2, 3, 4, 0, 1, 2});
  A["nodes_featureids"] = attrInts({2, 0, 0, 0, 0, 1, 0, 0});
  A["nodes_modes"] = attrStrings({"BRANCH_LEQ", "BRANCH_GTE", "LEAF", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"});
  const std::vector<float> Values = {0.2f, -0.1f, 0, 0, 0, 0.4f, 0, 0};
  A["nodes_truenodeids"] = attrInts({1, 2, 0, 0, 0, 1, 0, 0});
  A["nodes_falsenodeids"] = attrInts({4, 3, 0, 0, 0, 2, 0, 0});
  A["nodes_missing_value_tracks_true"] = attrInts({0, 0, 0, 0, 0, 1, 0, 0});
  std::vector<int64_t> Tree, NodeId, Ids;
  std::vector<float> W;
  const int64_t Leaves[][2] = {{0, 2}, {0, 3}, {0, 4}, {1, 1}, {1, 2}};
  for (size_t L = 0; L < 5; ++L)
    for (int T = 0; T < Targets; ++T) {
      Tree.push_back(Leaves[L][0]);
      NodeId.push_back(Leaves[L][1]);
      Ids.push_back(T);
      W.push_back(0.1f * static_cast<float>((L * 5 + static_cast<size_t>(T) * 3) % 9) + 0.05f); // (0, 1): PROBIT is finite
    }
  A["target_treeids"] = attrInts(Tree);
  A["target_nodeids"] = attrInts(NodeId);
  A["target_ids"] = attrInts(Ids);
  A["n_targets"] = attrInt(Targets);
  A["aggregate_function"] = attrString(Agg);
  A["post_transform"] = attrString(Post);
  auto Tensor = [](const std::vector<float> &V) {
    AttrValue T;
    T.K = AttrValue::Kind::Tensor;
    T.T = ConstData::allocate(ElementType::F64, {static_cast<int64_t>(V.size())});
    for (size_t I = 0; I < V.size(); ++I)
      static_cast<double *>(T.T->mutableData())[I] = V[I];
    return T;
  };
  if (AsTensor) {
    A["nodes_values_as_tensor"] = Tensor(Values);
    A["target_weights_as_tensor"] = Tensor(W);
  } else {
    A["nodes_values"] = attrFloats(Values);
    A["target_weights"] = attrFloats(W);
  }
  if (!Base.empty())
    A["base_values"] = attrFloats(Base);
  return A;
}

std::vector<OpTestCase> regressorCases() {
  std::vector<OpTestCase> Cases;
  auto Add = [&](std::string Label, std::map<std::string, AttrValue> A, ElementType T = ElementType::F32) {
    Cases.push_back(testCase(std::move(Label), {tensorInput({9, 3}, T)}, std::move(A)));
  };
  Add("sum", regressorAttrs(1, "SUM", "NONE", {0.5f}, false));
  Add("average", regressorAttrs(1, "AVERAGE", "NONE", {}, false));
  Add("min", regressorAttrs(1, "MIN", "NONE", {}, false));
  Add("max", regressorAttrs(1, "MAX", "NONE", {0.1f}, false));
  Add("average_probit", regressorAttrs(1, "AVERAGE", "PROBIT", {}, false));
  Add("targets_average_probit", regressorAttrs(2, "AVERAGE", "PROBIT", {}, false));
  Add("targets_sum_softmax", regressorAttrs(3, "SUM", "SOFTMAX", {0.1f, 0.2f, 0.3f}, false));
  Add("targets_average_logistic", regressorAttrs(2, "AVERAGE", "LOGISTIC", {}, false));
  Add("targets_min_softmax_zero", regressorAttrs(3, "MIN", "SOFTMAX_ZERO", {}, false));
  Add("targets_max", regressorAttrs(2, "MAX", "NONE", {1.0f, -1.0f}, false));
  Add("as_tensor", regressorAttrs(2, "SUM", "NONE", {}, true));
  Add("int64_input", regressorAttrs(1, "SUM", "NONE", {}, false), ElementType::I64);
  return Cases;
}

OPT_REGISTER_SCHEMA(TreeEnsembleRegressor, treeEnsembleRegressorSchema());
OPT_REGISTER_KERNELS(TreeEnsembleRegressor,
                     OpKernels{kMlDomain,
                               "TreeEnsembleRegressor",
                               {{"f32_treeensembleregressor__ref", 0, nullptr, createRegressor}},
                               regressorCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
