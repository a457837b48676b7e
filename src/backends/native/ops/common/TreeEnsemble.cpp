// Tree ensembles of ai.onnx.ml: attribute reading (v3 and v5 layouts), flattening and evaluation.
#include "backends/native/ops/common/TreeEnsemble.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

#include "backends/native/ops/common/ThreadScratch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

Result<TreeMode> modeOf(const Node &N, const std::string &S) {
  static const std::pair<const char *, TreeMode> Names[] = {
      {"BRANCH_LEQ", TreeMode::Leq}, {"BRANCH_LT", TreeMode::Lt}, {"BRANCH_GTE", TreeMode::Gte},
      {"BRANCH_GT", TreeMode::Gt},   {"BRANCH_EQ", TreeMode::Eq}, {"BRANCH_NEQ", TreeMode::Neq},
      {"LEAF", TreeMode::Leaf}};
  for (const auto &P : Names)
    if (S == P.first)
      return P.second;
  return attrError(N, "nodes_modes", "has '", S, "', expected BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, BRANCH_GT, ",
                   "BRANCH_EQ, BRANCH_NEQ or LEAF");
}

Result<TreeAggregate> aggregateOf(const Node &N, const std::string &S) {
  if (S == "SUM")
    return TreeAggregate::Sum;
  if (S == "AVERAGE")
    return TreeAggregate::Average;
  if (S == "MIN")
    return TreeAggregate::Min;
  if (S == "MAX")
    return TreeAggregate::Max;
  return attrError(N, "aggregate_function", "is '", S, "', expected SUM, AVERAGE, MIN or MAX");
}

Status sameLength(const Node &N, const char *Attr, size_t Got, const char *Ref, size_t Want) {
  if (Got != Want)
    return attrError(N, Attr, "has ", Got, " values but '", Ref, "' has ", Want);
  return Status::ok();
}

Result<std::vector<int64_t>> ints(const Node &N, const char *Attr) { return N.getInts(Attr, {}); }

} // namespace

Result<TreeSpec> readTreeSpecV3(const Node &N, bool Classifier, int64_t Classes) {
  TreeSpec S;
  const char *Prefix = Classifier ? "class_" : "target_";
  const std::string Ids = std::string(Prefix) + "ids";
  const std::string NodeIds = std::string(Prefix) + "nodeids", TreeIds = std::string(Prefix) + "treeids",
                    WeightsName = std::string(Prefix) + "weights";
  if (Classifier) {
    S.Targets = Classes;
  } else {
    ASSIGN_OR_RETURN(S.Targets, N.getInt("n_targets", 1));
  }
  if (S.Targets <= 0)
    return attrError(N, Classifier ? "classlabels_int64s" : "n_targets", "must give at least one ",
                     Classifier ? "class" : "target");
  ASSIGN_OR_RETURN(const std::string Agg, N.getString("aggregate_function", "SUM"));
  if (Classifier && Agg != "SUM")
    return attrError(N, "aggregate_function", "is not an attribute of a classifier");
  ASSIGN_OR_RETURN(S.Aggregate, aggregateOf(N, Agg));
  ASSIGN_OR_RETURN(S.Post, mlPostTransform(N));
  ASSIGN_OR_RETURN(S.TreeIds, ints(N, "nodes_treeids"));
  ASSIGN_OR_RETURN(S.NodeIds, ints(N, "nodes_nodeids"));
  ASSIGN_OR_RETURN(S.FeatureIds, ints(N, "nodes_featureids"));
  ASSIGN_OR_RETURN(S.TrueIds, ints(N, "nodes_truenodeids"));
  ASSIGN_OR_RETURN(S.FalseIds, ints(N, "nodes_falsenodeids"));
  ASSIGN_OR_RETURN(S.MissingTrue, ints(N, "nodes_missing_value_tracks_true"));
  ASSIGN_OR_RETURN(const std::vector<std::string> Modes, mlStrings(N, "nodes_modes"));
  for (const std::string &M : Modes) {
    ASSIGN_OR_RETURN(const TreeMode T, modeOf(N, M));
    S.Modes.push_back(T);
  }
  bool D1 = false, D2 = false, D3 = false;
  ASSIGN_OR_RETURN(S.Values, mlFloatsOrTensor(N, "nodes_values", &D1));
  ASSIGN_OR_RETURN(S.Weights, mlFloatsOrTensor(N, WeightsName, &D2));
  ASSIGN_OR_RETURN(S.Base, mlFloatsOrTensor(N, "base_values", &D3));
  S.Double = D1 || D2 || D3;
  ASSIGN_OR_RETURN(S.WeightTarget, ints(N, Ids.c_str()));
  ASSIGN_OR_RETURN(S.WeightNode, ints(N, NodeIds.c_str()));
  ASSIGN_OR_RETURN(S.WeightTree, ints(N, TreeIds.c_str()));
  const size_t Count = S.Modes.size();
  RETURN_IF_ERROR(sameLength(N, "nodes_treeids", S.TreeIds.size(), "nodes_modes", Count));
  RETURN_IF_ERROR(sameLength(N, "nodes_nodeids", S.NodeIds.size(), "nodes_modes", Count));
  RETURN_IF_ERROR(sameLength(N, "nodes_featureids", S.FeatureIds.size(), "nodes_modes", Count));
  RETURN_IF_ERROR(sameLength(N, "nodes_truenodeids", S.TrueIds.size(), "nodes_modes", Count));
  RETURN_IF_ERROR(sameLength(N, "nodes_falsenodeids", S.FalseIds.size(), "nodes_modes", Count));
  RETURN_IF_ERROR(sameLength(N, "nodes_values", S.Values.size(), "nodes_modes", Count));
  if (!S.MissingTrue.empty())
    RETURN_IF_ERROR(sameLength(N, "nodes_missing_value_tracks_true", S.MissingTrue.size(), "nodes_modes", Count));
  RETURN_IF_ERROR(sameLength(N, NodeIds.c_str(), S.WeightNode.size(), Ids.c_str(), S.WeightTarget.size()));
  RETURN_IF_ERROR(sameLength(N, TreeIds.c_str(), S.WeightTree.size(), Ids.c_str(), S.WeightTarget.size()));
  RETURN_IF_ERROR(sameLength(N, WeightsName.c_str(), S.Weights.size(), Ids.c_str(), S.WeightTarget.size()));
  return S;
}

namespace {

/// Appends the subtree of v5 node (or leaf) Id to S as tree Tree, node ids from Next on; a
/// BRANCH_MEMBER node becomes a chain of BRANCH_EQ nodes, one per member value. Returns the
/// largest node id used.
struct V5Reader {
  const Node &N;
  TreeSpec &S;
  std::vector<int64_t> Modes, Features, TrueIds, FalseIds, TrueLeaf, FalseLeaf, Missing, LeafTarget;
  std::vector<double> Splits, LeafWeights;
  std::vector<std::vector<double>> Members;

  Status checkIndex(int64_t Id, bool Leaf) const {
    const size_t Size = Leaf ? LeafTarget.size() : Modes.size();
    if (Id < 0 || static_cast<size_t>(Id) >= Size)
      return attrError(N, Leaf ? "leaf_targetids" : "nodes_modes", "has no entry ", Id, " (", Size, " entries)");
    return Status::ok();
  }

  Result<int64_t> add(int64_t Id, int64_t Tree, int64_t NodeId, size_t Member, bool Leaf, int Depth) {
    if (Depth > 100000)
      return attrError(N, "nodes_truenodeids", "form a cycle");
    RETURN_IF_ERROR(checkIndex(Id, Leaf));
    const size_t I = static_cast<size_t>(Id);
    S.TreeIds.push_back(Tree);
    S.NodeIds.push_back(NodeId);
    if (Leaf) {
      S.Modes.push_back(TreeMode::Leaf);
      S.FeatureIds.push_back(0);
      S.TrueIds.push_back(0);
      S.FalseIds.push_back(0);
      S.Values.push_back(0);
      S.MissingTrue.push_back(0);
      S.WeightTarget.push_back(LeafTarget[I]);
      S.WeightTree.push_back(Tree);
      S.WeightNode.push_back(NodeId);
      S.Weights.push_back(LeafWeights[I]);
      return NodeId;
    }
    const bool IsMember = Modes[I] == 6;
    S.FeatureIds.push_back(Features[I]);
    S.MissingTrue.push_back(Missing.empty() ? 0 : Missing[I]);
    S.Modes.push_back(IsMember ? TreeMode::Eq : static_cast<TreeMode>(Modes[I]));
    S.Values.push_back(IsMember ? Members[I][Member] : Splits[I]);
    const size_t FalseSlot = S.FalseIds.size();
    S.FalseIds.push_back(0);
    S.TrueIds.push_back(NodeId + 1);
    ASSIGN_OR_RETURN(const int64_t LastTrue, add(TrueIds[I], Tree, NodeId + 1, 0, TrueLeaf[I] != 0, Depth + 1));
    S.FalseIds[FalseSlot] = LastTrue + 1;
    if (IsMember && Member + 1 < Members[I].size())
      return add(Id, Tree, LastTrue + 1, Member + 1, false, Depth + 1);
    return add(FalseIds[I], Tree, LastTrue + 1, 0, FalseLeaf[I] != 0, Depth + 1);
  }
};

} // namespace

Result<TreeSpec> readTreeSpecV5(const Node &N) {
  TreeSpec S;
  V5Reader R{N, S, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  ASSIGN_OR_RETURN(S.Targets, N.getInt("n_targets", 0));
  if (S.Targets <= 0)
    return attrError(N, "n_targets", "must be positive, got ", S.Targets);
  ASSIGN_OR_RETURN(const int64_t Agg, N.getInt("aggregate_function", 1));
  if (Agg < 0 || Agg > 3)
    return attrError(N, "aggregate_function", "is ", Agg, ", expected 0 (AVERAGE), 1 (SUM), 2 (MIN) or 3 (MAX)");
  S.Aggregate = static_cast<TreeAggregate>(Agg);
  ASSIGN_OR_RETURN(const int64_t Post, N.getInt("post_transform", 0));
  static const PostTransform Posts[] = {PostTransform::None, PostTransform::Softmax, PostTransform::Logistic,
                                        PostTransform::SoftmaxZero, PostTransform::Probit};
  if (Post < 0 || Post > 4)
    return attrError(N, "post_transform", "is ", Post, ", expected 0 (NONE) to 4 (PROBIT)");
  S.Post = Posts[Post];
  {
    ASSIGN_OR_RETURN(const std::vector<double> M, mlTensorValues(N, "nodes_modes"));
    for (double V : M) {
      if (V < 0 || V > 6)
        return attrError(N, "nodes_modes", "has mode ", V, ", expected 0 (BRANCH_LEQ) to 6 (BRANCH_MEMBER)");
      R.Modes.push_back(static_cast<int64_t>(V));
    }
  }
  ASSIGN_OR_RETURN(R.Features, ints(N, "nodes_featureids"));
  ASSIGN_OR_RETURN(R.TrueIds, ints(N, "nodes_truenodeids"));
  ASSIGN_OR_RETURN(R.FalseIds, ints(N, "nodes_falsenodeids"));
  ASSIGN_OR_RETURN(R.TrueLeaf, ints(N, "nodes_trueleafs"));
  ASSIGN_OR_RETURN(R.FalseLeaf, ints(N, "nodes_falseleafs"));
  ASSIGN_OR_RETURN(R.Missing, ints(N, "nodes_missing_value_tracks_true"));
  ASSIGN_OR_RETURN(R.LeafTarget, ints(N, "leaf_targetids"));
  ASSIGN_OR_RETURN(R.Splits, mlTensorValues(N, "nodes_splits"));
  ASSIGN_OR_RETURN(R.LeafWeights, mlTensorValues(N, "leaf_weights"));
  ASSIGN_OR_RETURN(const std::vector<double> MemberValues, mlTensorValues(N, "membership_values"));
  ASSIGN_OR_RETURN(const std::vector<int64_t> Roots, ints(N, "tree_roots"));
  const size_t Count = R.Modes.size();
  RETURN_IF_ERROR(sameLength(N, "nodes_featureids", R.Features.size(), "nodes_modes", Count));
  RETURN_IF_ERROR(sameLength(N, "nodes_truenodeids", R.TrueIds.size(), "nodes_modes", Count));
  RETURN_IF_ERROR(sameLength(N, "nodes_falsenodeids", R.FalseIds.size(), "nodes_modes", Count));
  RETURN_IF_ERROR(sameLength(N, "nodes_trueleafs", R.TrueLeaf.size(), "nodes_modes", Count));
  RETURN_IF_ERROR(sameLength(N, "nodes_falseleafs", R.FalseLeaf.size(), "nodes_modes", Count));
  RETURN_IF_ERROR(sameLength(N, "nodes_splits", R.Splits.size(), "nodes_modes", Count));
  if (!R.Missing.empty())
    RETURN_IF_ERROR(sameLength(N, "nodes_missing_value_tracks_true", R.Missing.size(), "nodes_modes", Count));
  RETURN_IF_ERROR(sameLength(N, "leaf_weights", R.LeafWeights.size(), "leaf_targetids", R.LeafTarget.size()));
  // membership_values: the member sets of the BRANCH_MEMBER nodes in node order, separated by NaN.
  size_t Pos = 0;
  for (size_t I = 0; I < Count; ++I) {
    R.Members.emplace_back();
    if (R.Modes[I] != 6)
      continue;
    while (Pos < MemberValues.size() && !std::isnan(MemberValues[Pos]))
      R.Members.back().push_back(MemberValues[Pos++]);
    ++Pos;
    if (R.Members.back().empty())
      return attrError(N, "membership_values", "has no values for BRANCH_MEMBER node ", I);
  }
  for (size_t T = 0; T < Roots.size(); ++T) {
    RETURN_IF_ERROR(R.checkIndex(Roots[T], false));
    const size_t Root = static_cast<size_t>(Roots[T]);
    // A root whose children are the same index is a leaf (a tree of one leaf).
    RETURN_IF_ERROR(R.add(Roots[T], static_cast<int64_t>(T), 0, 0, R.FalseIds[Root] == R.TrueIds[Root], 0).status());
  }
  return S;
}

Result<TreeEnsemble> TreeEnsemble::build(const Node &N, const TreeSpec &S) {
  TreeEnsemble E;
  E.Targets = S.Targets;
  E.Aggregate = S.Aggregate;
  E.Post = S.Post;
  E.Double = S.Double;
  E.Base = S.Base;
  if (!S.Base.empty() && static_cast<int64_t>(S.Base.size()) != S.Targets && S.Base.size() != 1)
    return attrError(N, "base_values", "has ", S.Base.size(), " values, expected none, one or ", S.Targets);
  const size_t Count = S.Modes.size();
  if (Count == 0)
    return attrError(N, "nodes_modes", "is empty: the ensemble has no trees");
  if (Count > static_cast<size_t>(INT32_MAX / 2))
    return attrError(N, "nodes_modes", "has too many nodes (", Count, ")");
  std::map<std::pair<int64_t, int64_t>, int32_t> Index;
  E.Nodes.resize(Count);
  for (size_t I = 0; I < Count; ++I) {
    if (!Index.emplace(std::make_pair(S.TreeIds[I], S.NodeIds[I]), static_cast<int32_t>(I)).second)
      return attrError(N, "nodes_nodeids", "has node ", S.NodeIds[I], " of tree ", S.TreeIds[I], " twice");
    TreeNode &T = E.Nodes[I];
    T.Mode = S.Modes[I];
    T.Threshold = S.Values[I];
    T.MissingTrue = I < S.MissingTrue.size() && S.MissingTrue[I] == 1;
    if (T.Mode != TreeMode::Leaf) {
      if (S.FeatureIds[I] < 0 || S.FeatureIds[I] > INT32_MAX)
        return attrError(N, "nodes_featureids", "has feature ", S.FeatureIds[I], " at node ", I);
      T.Feature = static_cast<int32_t>(S.FeatureIds[I]);
      E.MaxFeature = std::max<int64_t>(E.MaxFeature, T.Feature);
    }
    if (I == 0 || S.TreeIds[I] != S.TreeIds[I - 1])
      E.Roots.push_back(static_cast<int32_t>(I));
  }
  for (size_t I = 0; I < Count; ++I) {
    TreeNode &T = E.Nodes[I];
    if (T.Mode == TreeMode::Leaf)
      continue;
    for (int Side = 0; Side < 2; ++Side) {
      const int64_t Child = Side ? S.FalseIds[I] : S.TrueIds[I];
      auto It = Index.find(std::make_pair(S.TreeIds[I], Child));
      if (It == Index.end())
        return attrError(N, Side ? "nodes_falsenodeids" : "nodes_truenodeids", "names node ", Child, " of tree ",
                         S.TreeIds[I], ", which does not exist");
      if (It->second == static_cast<int32_t>(I))
        return attrError(N, Side ? "nodes_falsenodeids" : "nodes_truenodeids", "makes node ", S.NodeIds[I],
                         " of tree ", S.TreeIds[I], " its own child");
      (Side ? T.False : T.True) = It->second;
    }
  }
  // Weights in (tree, node) order, attached to their leaves; weights of branch nodes are ignored
  // (old onnxmltools wrote some), as ORT does.
  std::vector<size_t> Order(S.WeightTarget.size());
  for (size_t I = 0; I < Order.size(); ++I)
    Order[I] = I;
  std::stable_sort(Order.begin(), Order.end(), [&S](size_t A, size_t B) {
    return std::make_pair(S.WeightTree[A], S.WeightNode[A]) < std::make_pair(S.WeightTree[B], S.WeightNode[B]);
  });
  std::vector<char> HasWeight(Count, 0);
  for (size_t K : Order) {
    auto It = Index.find(std::make_pair(S.WeightTree[K], S.WeightNode[K]));
    if (It == Index.end())
      return attrError(N, "class_nodeids' / 'target_nodeids", "names node ", S.WeightNode[K], " of tree ",
                       S.WeightTree[K], ", which does not exist");
    TreeNode &T = E.Nodes[static_cast<size_t>(It->second)];
    if (T.Mode != TreeMode::Leaf)
      continue;
    if (S.WeightTarget[K] < 0 || S.WeightTarget[K] >= S.Targets)
      return attrError(N, "class_ids' / 'target_ids", "has target ", S.WeightTarget[K], ", expected [0, ", S.Targets,
                       ")");
    if (!HasWeight[static_cast<size_t>(It->second)]) {
      HasWeight[static_cast<size_t>(It->second)] = 1;
      T.True = static_cast<int32_t>(E.WeightValue.size());
    }
    ++T.False;
    E.WeightTarget.push_back(static_cast<int32_t>(S.WeightTarget[K]));
    E.WeightValue.push_back(S.Weights[K]);
  }
  for (size_t I = 0; I < Count; ++I) {
    TreeNode &T = E.Nodes[I];
    if (T.Mode != TreeMode::Leaf)
      continue;
    if (!HasWeight[I])
      return attrError(N, "nodes_modes", "makes node ", S.NodeIds[I], " of tree ", S.TreeIds[I],
                       " a leaf, but no weight is given for it");
    T.Threshold = E.WeightValue[static_cast<size_t>(T.True)]; // a leaf compares nothing: its first weight
  }
  // One comparison for every branch node (and no missing-value track) gets a walk of its own.
  E.SameMode = TreeMode::Leaf;
  bool First = true;
  for (const TreeNode &T : E.Nodes) {
    E.HasMissing = E.HasMissing || T.MissingTrue;
    if (T.Mode == TreeMode::Leaf)
      continue;
    if (First)
      E.SameMode = T.Mode;
    else if (T.Mode != E.SameMode)
      E.SameMode = TreeMode::Neq; // mixed: the per-node walk
    First = false;
  }
  if (E.SameMode == TreeMode::Eq)
    E.SameMode = TreeMode::Neq;
  // Every tree must be acyclic (a walk must end at a leaf).
  std::vector<uint8_t> State(Count, 0); // 0 new, 1 on the path, 2 done
  for (int32_t Root : E.Roots) {
    std::vector<std::pair<int32_t, int>> Stack{{Root, 0}};
    while (!Stack.empty()) {
      auto &Top = Stack.back();
      const TreeNode &T = E.Nodes[static_cast<size_t>(Top.first)];
      if (Top.second == 0)
        State[static_cast<size_t>(Top.first)] = 1;
      if (T.Mode == TreeMode::Leaf || Top.second == 2) {
        State[static_cast<size_t>(Top.first)] = 2;
        Stack.pop_back();
        continue;
      }
      const int32_t Child = Top.second == 0 ? T.True : T.False;
      ++Top.second;
      if (State[static_cast<size_t>(Child)] == 1)
        return attrError(N, "nodes_truenodeids", "and 'nodes_falsenodeids' form a cycle in tree ",
                         S.TreeIds[static_cast<size_t>(Root)]);
      if (State[static_cast<size_t>(Child)] == 0)
        Stack.push_back({Child, 0});
    }
  }
  return E;
}

namespace {

/// The walk from a root to its leaf, for one comparison (Cmp) on every branch node (Missing: some
/// node has a missing-value track), or Mixed: the node's own mode.
template <typename Cmp, bool Missing> struct SameModeWalk {
  template <typename NodeT> static const NodeT *leaf(const NodeT *Nodes, const NodeT *Nd, const double *X) {
    while (Nd->Mode != TreeMode::Leaf) {
      const double V = X[Nd->Feature];
      const bool Go = Cmp()(V, Nd->Threshold) || (Missing && Nd->MissingTrue && std::isnan(V));
      Nd = Nodes + (Go ? Nd->True : Nd->False);
    }
    return Nd;
  }
};

struct MixedWalk {
  template <typename NodeT> static const NodeT *leaf(const NodeT *Nodes, const NodeT *Nd, const double *X) {
    while (Nd->Mode != TreeMode::Leaf) {
      const double V = X[Nd->Feature], T = Nd->Threshold;
      bool Go;
      switch (Nd->Mode) {
      case TreeMode::Leq: Go = V <= T; break;
      case TreeMode::Lt: Go = V < T; break;
      case TreeMode::Gte: Go = V >= T; break;
      case TreeMode::Gt: Go = V > T; break;
      case TreeMode::Eq: Go = V == T; break;
      default: Go = V != T; break;
      }
      Go = Go || (Nd->MissingTrue && std::isnan(V));
      Nd = Nodes + (Go ? Nd->True : Nd->False);
    }
    return Nd;
  }
};

/// Rows evaluated together, trees outer and rows inner, so a tree's nodes stay in cache across
/// the block (each row still sums its trees in order: results are the same as row by row).
constexpr size_t kRowBlock = 64;

} // namespace

template <typename Walk, typename Acc>
void TreeEnsemble::accumulateBlock(const double *X, int64_t Cols, size_t Rows, Acc *Score, uint8_t *Has) const {
  const bool Min = Aggregate == TreeAggregate::Min, Max = Aggregate == TreeAggregate::Max;
  const bool Single = Targets == 1 && !Min && !Max;
  const TreeNode *Base = Nodes.data();
  for (int32_t Root : Roots)
    for (size_t R = 0; R < Rows; ++R) {
      const TreeNode &L = *Walk::leaf(Base, Base + Root, X + R * static_cast<size_t>(Cols));
      Acc *S = Score + R * static_cast<size_t>(Targets);
      uint8_t *H = Has + R * static_cast<size_t>(Targets);
      if (Single) { // one target summed: the leaf's first weight, kept in its threshold
        S[0] += static_cast<Acc>(L.Threshold);
        continue;
      }
      // One target: only a leaf's first weight counts (ORT's single-target path).
      const int32_t End = Targets == 1 ? L.True + 1 : L.True + L.False;
      for (int32_t W = L.True; W < End; ++W) {
        const size_t T = static_cast<size_t>(WeightTarget[static_cast<size_t>(W)]);
        const Acc V = static_cast<Acc>(WeightValue[static_cast<size_t>(W)]);
        if (Min)
          S[T] = !H[T] || V < S[T] ? V : S[T];
        else if (Max)
          S[T] = !H[T] || V > S[T] ? V : S[T];
        else
          S[T] += V;
        H[T] = 1;
      }
    }
}

template <typename Acc>
void TreeEnsemble::accumulate(const double *X, int64_t Cols, size_t Rows, Acc *Score, uint8_t *Has) const {
  switch (SameMode) {
  case TreeMode::Leq:
    return HasMissing ? accumulateBlock<SameModeWalk<std::less_equal<double>, true>>(X, Cols, Rows, Score, Has)
                      : accumulateBlock<SameModeWalk<std::less_equal<double>, false>>(X, Cols, Rows, Score, Has);
  case TreeMode::Lt:
    return HasMissing ? accumulateBlock<SameModeWalk<std::less<double>, true>>(X, Cols, Rows, Score, Has)
                      : accumulateBlock<SameModeWalk<std::less<double>, false>>(X, Cols, Rows, Score, Has);
  case TreeMode::Gte:
    return HasMissing ? accumulateBlock<SameModeWalk<std::greater_equal<double>, true>>(X, Cols, Rows, Score, Has)
                      : accumulateBlock<SameModeWalk<std::greater_equal<double>, false>>(X, Cols, Rows, Score, Has);
  case TreeMode::Gt:
    return HasMissing ? accumulateBlock<SameModeWalk<std::greater<double>, true>>(X, Cols, Rows, Score, Has)
                      : accumulateBlock<SameModeWalk<std::greater<double>, false>>(X, Cols, Rows, Score, Has);
  default: return accumulateBlock<MixedWalk>(X, Cols, Rows, Score, Has);
  }
}

template <typename Acc>
Status TreeEnsemble::forRows(const char *Kernel, const KernelContext &Ctx, const TensorView &X,
                             const std::function<void(int64_t, Acc *, uint8_t *, float *)> &Finish) const {
  ASSIGN_OR_RETURN(const MlRows R, mlRows(Kernel, X));
  if (MaxFeature >= R.Cols)
    return runError(Kernel, "the trees read feature ", MaxFeature, " but the input has ", R.Cols, " features");
  const int64_t Work = R.Rows * static_cast<int64_t>(Roots.size()) * 16;
  const size_t Cols = static_cast<size_t>(std::max<int64_t>(R.Cols, 1)), T = static_cast<size_t>(Targets);
  Ctx.Par.ifWorth(Work).forRange(static_cast<size_t>(R.Rows), kRowBlock, [&](size_t Begin, size_t End) {
    ScratchFrame F;
    const size_t Block = std::min(kRowBlock, End - Begin);
    double *Rows = F.take<double>(Block * Cols);
    Acc *Score = F.take<Acc>(Block * T);
    uint8_t *Has = F.take<uint8_t>(Block * T);
    float *Buf = F.take<float>(T);
    for (size_t B = Begin; B < End; B += kRowBlock) {
      const size_t N = std::min(kRowBlock, End - B);
      for (size_t I = 0; I < N; ++I)
        R.row(X, static_cast<int64_t>(B + I), Rows + I * Cols);
      std::fill(Score, Score + N * T, Acc(0));
      std::fill(Has, Has + N * T, uint8_t(0));
      accumulate(Rows, static_cast<int64_t>(Cols), N, Score, Has);
      for (size_t I = 0; I < N; ++I)
        Finish(static_cast<int64_t>(B + I), Score + I * T, Has + I * T, Buf);
    }
  });
  return Status::ok();
}

template <typename Acc> void TreeEnsemble::finishRegression(Acc *Score, const uint8_t *Has, float *Out) const {
  const Acc Trees = static_cast<Acc>(Roots.size());
  if (Targets == 1) {
    const Acc Origin = Base.size() == 1 ? static_cast<Acc>(Base[0]) : Acc(0);
    Acc S = Score[0];
    if (Aggregate == TreeAggregate::Average)
      S = S / Trees + Origin;
    else if (Aggregate == TreeAggregate::Sum)
      S = S + Origin;
    else
      S = Has[0] ? S + Origin : Origin;
    Score[0] = S;
  } else {
    const bool UseBase = static_cast<int64_t>(Base.size()) == Targets;
    for (int64_t T = 0; T < Targets; ++T) {
      const Acc B = UseBase ? static_cast<Acc>(Base[static_cast<size_t>(T)]) : Acc(0);
      if (Aggregate == TreeAggregate::Average)
        Score[T] = Score[T] / Trees + B;
      else if (Aggregate == TreeAggregate::Sum)
        Score[T] = Score[T] + B;
      else
        Score[T] = B + (Has[T] ? Score[T] : Acc(0));
    }
  }
  for (int64_t T = 0; T < Targets; ++T)
    Out[T] = static_cast<float>(Score[T]);
}

template <typename OutT>
Status TreeEnsemble::regress(const char *Kernel, const KernelContext &Ctx, const TensorView &X, OutT *Out) const {
  const bool Transformed = Post == PostTransform::Probit || (Targets > 1 && Post != PostTransform::None);
  auto Run = [&](auto Zero) -> Status {
    using Acc = decltype(Zero);
    return forRows<Acc>(Kernel, Ctx, X, [&](int64_t R, Acc *Score, uint8_t *Has, float *Buf) {
      OutT *O = Out + R * Targets;
      // finishRegression leaves the final scores in Score (Acc) and their float values in Buf.
      finishRegression(Score, Has, Buf);
      if (Transformed) {
        mlTransformScores(Post, Buf, static_cast<size_t>(Targets));
        for (int64_t T = 0; T < Targets; ++T)
          O[T] = static_cast<OutT>(Buf[T]);
      } else {
        for (int64_t T = 0; T < Targets; ++T)
          O[T] = static_cast<OutT>(Score[T]);
      }
    });
  };
  return Double ? Run(double(0)) : Run(float(0));
}

template Status TreeEnsemble::regress<float>(const char *, const KernelContext &, const TensorView &, float *) const;
template Status TreeEnsemble::regress<double>(const char *, const KernelContext &, const TensorView &, double *) const;

template <typename Acc>
void TreeEnsemble::finishClassification(Acc *Score, uint8_t *Has, const ClassLabels &L, float *Out,
                                        int64_t *Label) const {
  if (Targets > 2) {
    for (size_t K = 0; K < Base.size(); ++K) {
      Score[K] = Has[K] ? Score[K] + static_cast<Acc>(Base[K]) : static_cast<Acc>(Base[K]);
      Has[K] = 1;
    }
    int64_t Best = -1;
    for (int64_t K = 0; K < Targets; ++K)
      if (Has[K] && (Best < 0 || Score[K] > Score[Best]))
        Best = K;
    *Label = L.Labels[static_cast<size_t>(std::max<int64_t>(Best, 0))];
    for (int64_t K = 0; K < Targets; ++K)
      Out[K] = static_cast<float>(Score[K]);
    mlTransformScores(Post, Out, static_cast<size_t>(Targets));
    return;
  }
  // Two classes: ORT's binary conventions.
  size_t Size = 2;
  int Second = -1; // how a single score becomes two: 0/1 (1 - s, s), 2/3 (-s, s) or logistic
  if (Base.size() == 2) {
    if (Has[1]) {
      Score[1] = static_cast<Acc>(Base[1]) + Score[0];
      Score[0] = -Score[1];
    } else {
      Score[1] += static_cast<Acc>(Base[1]);
      Score[0] += static_cast<Acc>(Base[0]);
    }
  } else if (Base.size() == 1) {
    Score[0] += static_cast<Acc>(Base[0]);
    if (!Has[1])
      Size = 1;
  } else {
    Second = 3;
    if (!Has[1])
      Size = 1;
  }
  const Acc Pos = Size == 2 && Has[1] ? Score[1] : (Has[0] ? Score[0] : Acc(0));
  if (L.BinaryCase) {
    const bool Positive = L.WeightsPositive ? Pos > Acc(0.5) : Pos > Acc(0);
    Second = L.WeightsPositive ? (Positive ? 0 : 1) : (Positive ? 2 : 3);
    *Label = L.Labels[Positive ? 1 : 0];
  } else {
    *Label = Pos > Acc(0) ? 1 : 0;
  }
  if (Size == 2) {
    Out[0] = static_cast<float>(Score[0]);
    Out[1] = static_cast<float>(Score[1]);
    mlTransformScores(Post, Out, 2);
    return;
  }
  const float S = static_cast<float>(Score[0]);
  Out[1] = 0;
  if (Post == PostTransform::Probit) {
    Out[0] = mlProbit(S);
  } else if (Second == 0 || Second == 1) {
    Out[0] = 1 - S;
    Out[1] = S;
  } else if (Second >= 2 && Post == PostTransform::Logistic) {
    Out[0] = mlLogistic(-S);
    Out[1] = mlLogistic(S);
  } else if (Second >= 2) {
    Out[0] = -S;
    Out[1] = S;
  } else {
    Out[0] = S;
  }
}

Status TreeEnsemble::classify(const char *Kernel, const KernelContext &Ctx, const TensorView &X, const ClassLabels &L,
                              float *Scores, int64_t *Labels) const {
  auto Run = [&](auto Zero) -> Status {
    using Acc = decltype(Zero);
    return forRows<Acc>(Kernel, Ctx, X, [&](int64_t R, Acc *Score, uint8_t *Has, float *) {
      finishClassification(Score, Has, L, Scores + R * Targets, Labels + R);
    });
  };
  return Double ? Run(double(0)) : Run(float(0));
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
