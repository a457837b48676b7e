// RNN (opsets 7, 14, 22; f32, f16): see common/RnnCommon.h for the shared time loop; this file
// registers the op's schema, kernels and harness cases.
#include "backends/native/ops/common/RnnCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpKernels rnnKernels() {
  OpKernels K;
  K.OpType = "RNN";
  addRnnVariants(K, "rnn", RnnKind::Rnn);
  K.TestCases = [] { return rnnCases(RnnKind::Rnn); };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(RNN, rnnSchema("RNN", RnnKind::Rnn));
OPT_REGISTER_KERNELS(RNN, rnnKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
