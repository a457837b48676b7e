// The tree ensembles of ai.onnx.ml (TreeEnsembleClassifier / TreeEnsembleRegressor, opsets 1 and
// 3, and TreeEnsemble, opset 5), with ONNX Runtime's semantics: a node goes to its true child when
// `x CMP threshold` holds (or x is NaN and its missing-value track is true); leaves add their
// weights to the targets (SUM / AVERAGE) or keep the least / greatest (MIN / MAX); base values,
// the post transform and, for classifiers, the label and the binary conventions follow ORT.
//
// The trees are flattened at kernel creation: one node array (threshold as double, feature,
// absolute child indices, mode; a leaf's children are its range in the weight array), one root
// per tree. Scores accumulate in float, or in double when the attributes came as doubles
// (*_as_tensor), as ORT does. Rows run in parallel, in blocks of 64 evaluated tree by tree (a
// tree's nodes stay in cache), with a walk specialized for ensembles whose branch nodes all
// compare the same way (every skl2onnx tree: BRANCH_LEQ).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends/native/ops/common/MlCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

enum class TreeMode : uint8_t { Leq, Lt, Gte, Gt, Eq, Neq, Leaf };
enum class TreeAggregate { Average, Sum, Min, Max };

/// The ensemble in the v3 attribute layout (TreeEnsemble v5 is converted into it).
struct TreeSpec {
  int64_t Targets = 0;
  TreeAggregate Aggregate = TreeAggregate::Sum;
  PostTransform Post = PostTransform::None;
  bool Double = false; ///< thresholds / weights given as doubles: accumulate in double
  std::vector<int64_t> TreeIds, NodeIds, FeatureIds, TrueIds, FalseIds, MissingTrue;
  std::vector<TreeMode> Modes;
  std::vector<double> Values;
  std::vector<int64_t> WeightTree, WeightNode, WeightTarget;
  std::vector<double> Weights;
  std::vector<double> Base;
};

/// Reads the v3 attributes of a TreeEnsembleClassifier (Classifier) or TreeEnsembleRegressor.
/// Targets is the class count for a classifier.
Result<TreeSpec> readTreeSpecV3(const Node &N, bool Classifier, int64_t Classes);
/// Reads and converts the attributes of a TreeEnsemble (opset 5).
Result<TreeSpec> readTreeSpecV5(const Node &N);

class TreeEnsemble {
public:
  static Result<TreeEnsemble> build(const Node &N, const TreeSpec &S);

  int64_t targets() const { return Targets; }
  int64_t maxFeature() const { return MaxFeature; }
  bool accumulatesDouble() const { return Double; }

  /// Regressor scores of every row of X: Out[r * targets() + t] (ORT's aggregators, then the post
  /// transform). OutT is float or double.
  template <typename OutT> Status regress(const char *Kernel, const KernelContext &Ctx, const TensorView &X, OutT *Out) const;

  /// Classifier scores (Scores[r * targets() + c]) and labels (a class index for string labels,
  /// else an int64 label of Labels).
  struct ClassLabels {
    std::vector<int64_t> Labels; ///< classlabels_int64s, or 0..n-1 for string labels
    bool BinaryCase = false;     ///< two classes, weights for one class only
    bool WeightsPositive = true;
  };
  Status classify(const char *Kernel, const KernelContext &Ctx, const TensorView &X, const ClassLabels &L,
                  float *Scores, int64_t *Labels) const;

private:
  struct TreeNode {
    double Threshold = 0; ///< leaf: its first weight
    int32_t Feature = 0;
    int32_t True = 0;  ///< leaf: first weight
    int32_t False = 0; ///< leaf: weight count
    TreeMode Mode = TreeMode::Leaf;
    bool MissingTrue = false;
  };
  /// Adds the leaves of every tree for Rows rows (X: Rows x Cols) to Score / Has (Rows x Targets).
  template <typename Acc> void accumulate(const double *X, int64_t Cols, size_t Rows, Acc *Score, uint8_t *Has) const;
  template <typename Walk, typename Acc>
  void accumulateBlock(const double *X, int64_t Cols, size_t Rows, Acc *Score, uint8_t *Has) const;
  template <typename Acc> Status forRows(const char *Kernel, const KernelContext &Ctx, const TensorView &X,
                                         const std::function<void(int64_t, Acc *, uint8_t *, float *)> &Finish) const;
  template <typename Acc> void finishRegression(Acc *Score, const uint8_t *Has, float *Out) const;
  template <typename Acc>
  void finishClassification(Acc *Score, uint8_t *Has, const ClassLabels &L, float *Out, int64_t *Label) const;

  std::vector<TreeNode> Nodes;
  std::vector<int32_t> Roots;
  std::vector<int32_t> WeightTarget;
  std::vector<double> WeightValue;
  std::vector<double> Base;
  int64_t Targets = 0;
  int64_t MaxFeature = -1;
  TreeAggregate Aggregate = TreeAggregate::Sum;
  PostTransform Post = PostTransform::None;
  bool Double = false;
  /// The comparison of every branch node (Leq/Lt/Gte/Gt), else Neq: the per-node walk.
  TreeMode SameMode = TreeMode::Neq;
  bool HasMissing = false;
};

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
