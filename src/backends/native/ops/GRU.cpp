// GRU (opsets 7, 14, 22; f32, f16): see common/RnnCommon.h for the shared time loop; this file
// registers the op's schema, kernels and harness cases.
#include "backends/native/ops/common/RnnCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpKernels gruKernels() {
  OpKernels K;
  K.OpType = "GRU";
  addRnnVariants(K, "gru", RnnKind::Gru);
  K.TestCases = [] { return rnnCases(RnnKind::Gru); };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(GRU, rnnSchema("GRU", RnnKind::Gru));
OPT_REGISTER_KERNELS(GRU, gruKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
