// ai.onnx.ml TreeEnsemble (opset 5): X [N, C] (or [C]) float or double -> Y [N, n_targets] of X's
// type. The opset-5 layout (tree_roots, nodes_trueleafs / nodes_falseleafs, leaf_targetids /
// leaf_weights, integer modes and transforms, BRANCH_MEMBER with NaN-separated membership_values)
// is converted at creation into the v3 layout (a BRANCH_MEMBER node becomes a chain of BRANCH_EQ
// nodes), then flattened and evaluated as TreeEnsembleRegressor is (common/TreeEnsemble.h).
// Scores accumulate in X's type, as ONNX Runtime does.
#include "backends/native/ops/common/TreeEnsemble.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema treeEnsembleSchema() {
  OpSchema S;
  S.Domain = kMlDomain;
  S.OpType = "TreeEnsemble";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32, ElementType::F64}));
    ASSIGN_OR_RETURN(const int64_t Targets, Ctx.N.getInt("n_targets", 0));
    if (Targets <= 0)
      return attrError(Ctx.N, "n_targets", "must be positive, got ", Targets);
    Expr Rows, Cols;
    RETURN_IF_ERROR(mlInputShape(Ctx, Rows, Cols));
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = TensorShape({Rows, Expr(static_cast<long long>(Targets))});
    return Status::ok();
  };
  return S;
}

class TreeEnsembleKernel : public Kernel {
public:
  explicit TreeEnsembleKernel(TreeEnsemble E) : E(std::move(E)) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &Y = Ctx.Outputs[0];
    if (Y.Type == ElementType::F64)
      return E.regress("treeensemble", Ctx, Ctx.Inputs[0], Y.data<double>());
    return E.regress("treeensemble", Ctx, Ctx.Inputs[0], Y.data<float>());
  }

private:
  TreeEnsemble E;
};

Result<std::unique_ptr<Kernel>> createTreeEnsemble(const KernelCreateInfo &Info) {
  ASSIGN_OR_RETURN(TreeSpec S, readTreeSpecV5(Info.N));
  S.Double = Info.Inputs[0].Type == ElementType::F64;
  ASSIGN_OR_RETURN(TreeEnsemble E, TreeEnsemble::build(Info.N, S));
  return makeKernel<TreeEnsembleKernel>(std::move(E));
}

AttrValue tensorAttr(ElementType T, const std::vector<double> &V) {
  AttrValue A;
  A.K = AttrValue::Kind::Tensor;
  A.T = ConstData::allocate(T, {static_cast<int64_t>(V.size())});
  for (size_t I = 0; I < V.size(); ++I) {
    if (T == ElementType::F64)
      static_cast<double *>(A.T->mutableData())[I] = V[I];
    else if (T == ElementType::F32)
      static_cast<float *>(A.T->mutableData())[I] = static_cast<float>(V[I]);
    else
      static_cast<uint8_t *>(A.T->mutableData())[I] = static_cast<uint8_t>(V[I]);
  }
  return A;
}

/// Tree 0: node 0 (Mode0 on x0) -> true: node 1 (BRANCH_MEMBER on x1 in {-0.5, 0.25, 0.5}, with a
/// missing-value track) -> leaves 0 / 1; false: leaf 2. Tree 1: a single leaf (3).
std::map<std::string, AttrValue> ensembleAttrs(ElementType T, int64_t Mode0, int64_t Agg, int64_t Post) {
  std::map<std::string, AttrValue> A;
  A["n_targets"] = attrInt(2);
  A["aggregate_function"] = attrInt(Agg);
  A["post_transform"] = attrInt(Post);
  A["tree_roots"] = attrInts({0, 2});
  A["nodes_modes"] = tensorAttr(ElementType::U8, {static_cast<double>(Mode0), 6, 0});
  A["nodes_featureids"] = attrInts({0, 1, 0});
  A["nodes_splits"] = tensorAttr(T, {0.2, 0, 0});
  A["nodes_truenodeids"] = attrInts({1, 0, 3});
  A["nodes_trueleafs"] = attrInts({0, 1, 1});
  A["nodes_falsenodeids"] = attrInts({2, 1, 3});
  A["nodes_falseleafs"] = attrInts({1, 1, 1});
  A["nodes_missing_value_tracks_true"] = attrInts({0, 1, 0});
  A["membership_values"] = tensorAttr(T, {-0.5, 0.25, 0.5, std::nan("")});
  A["leaf_targetids"] = attrInts({0, 1, 0, 1});
  A["leaf_weights"] = tensorAttr(T, {0.3, 0.6, 0.1, 0.2});
  return A;
}

std::vector<OpTestCase> ensembleCases() {
  std::vector<OpTestCase> Cases;
  auto Add = [&](std::string Label, ElementType T, int64_t Mode0, int64_t Agg, int64_t Post) {
    // Member values and NaN in x1 so that BRANCH_MEMBER and the missing track both fire.
    TestInput X = valuesInput({6, 2}, {0.1, -0.5, 0.1, 0.25, 0.5, 0.5, 0.0, std::nan(""), 0.1, 0.3, 0.9, 0.25}, T,
                              false);
    OpTestCase C = testCase(std::move(Label), {X}, ensembleAttrs(T, Mode0, Agg, Post));
    Cases.push_back(withOpset(C, 5));
  };
  Add("leq_sum", ElementType::F32, 0, 1, 0);
  Add("lt_average_logistic", ElementType::F32, 1, 0, 2);
  Add("gte_min_softmax", ElementType::F32, 2, 2, 1);
  Add("gt_max", ElementType::F32, 3, 3, 0);
  Add("eq_sum_softmax_zero", ElementType::F32, 4, 1, 3);
  Add("neq_sum_double", ElementType::F64, 5, 1, 0);
  return Cases;
}

OPT_REGISTER_SCHEMA(TreeEnsemble, treeEnsembleSchema());
OPT_REGISTER_KERNELS(TreeEnsemble, OpKernels{kMlDomain,
                                             "TreeEnsemble",
                                             {{"any_treeensemble__ref", 0, nullptr, createTreeEnsemble}},
                                             ensembleCases});

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
