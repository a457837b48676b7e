// Log: natural logarithm (log(0) = -inf, log(x < 0) = NaN). The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct LogOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return std::log(X);
  }
};

using LogTypes = TypeList<float, double, float16, bfloat16>;

UnaryDesc logDesc() {
  UnaryDesc D;
  D.OpType = "Log";
  D.Name = "log";
  D.Low = 0.01, D.High = 10;
  return D;
}

OpKernels logKernels() {
  OpKernels K = unaryKernels<LogOp>(logDesc(), LogTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Log, unarySchema<LogOp>(logDesc(), LogTypes()));
OPT_REGISTER_KERNELS(Log, logKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
