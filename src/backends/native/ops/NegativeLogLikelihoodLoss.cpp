// NegativeLogLikelihoodLoss (opsets 12-22): -weight[t] * input[n, t, d...] for each target class t,
// with ignore_index and none/sum/mean reduction (common/LossCommon.h).
#include "backends/native/ops/common/LossCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpKernels nlllossKernels() {
  OpKernels K;
  K.OpType = "NegativeLogLikelihoodLoss";
  addAllLossVariants(K, "nllloss", false);
  K.TestCases = [] { return lossCases(false); };
  return K;
}

OPT_REGISTER_SCHEMA(NegativeLogLikelihoodLoss, lossSchema("NegativeLogLikelihoodLoss", false));
OPT_REGISTER_KERNELS(NegativeLogLikelihoodLoss, nlllossKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
