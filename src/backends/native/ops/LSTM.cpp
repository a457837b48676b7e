// LSTM (opsets 7, 14, 22; f32, f16): see common/RnnCommon.h for the shared time loop; this file
// registers the op's schema, kernels and harness cases.
#include "backends/native/ops/common/RnnCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpKernels lstmKernels() {
  OpKernels K;
  K.OpType = "LSTM";
  addRnnVariants(K, "lstm", RnnKind::Lstm);
  K.TestCases = [] { return rnnCases(RnnKind::Lstm); };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(LSTM, rnnSchema("LSTM", RnnKind::Lstm));
OPT_REGISTER_KERNELS(LSTM, lstmKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
