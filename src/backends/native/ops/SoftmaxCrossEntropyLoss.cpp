// SoftmaxCrossEntropyLoss (opset 13): the log-softmax of the scores over dim 1 (optional output
// log_prob), then the negative log-likelihood loss of NegativeLogLikelihoodLoss (common/LossCommon.h).
#include "backends/native/ops/common/LossCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpKernels sceKernels() {
  OpKernels K;
  K.OpType = "SoftmaxCrossEntropyLoss";
  addAllLossVariants(K, "sce", true);
  K.TestCases = [] { return lossCases(true); };
  return K;
}

OPT_REGISTER_SCHEMA(SoftmaxCrossEntropyLoss, lossSchema("SoftmaxCrossEntropyLoss", true));
OPT_REGISTER_KERNELS(SoftmaxCrossEntropyLoss, sceKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
