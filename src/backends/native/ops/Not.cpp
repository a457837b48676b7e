// Not: logical negation of bool tensors. The elementwise machinery is shared in common/ElementwiseUnary.h.
#include "backends/native/ops/common/ElementwiseUnary.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct NotOp {
  template <typename C> static C apply(C X, const UnaryParams &P) {
    (void)P;
    return !X;
  }
};

using NotTypes = TypeList<bool>;

UnaryDesc notDesc() {
  UnaryDesc D;
  D.OpType = "Not";
  D.Name = "not";
  return D;
}

OpKernels notKernels() {
  OpKernels K = unaryKernels<NotOp>(notDesc(), NotTypes());
  return K;
}

OPT_REGISTER_SCHEMA(Not, unarySchema<NotOp>(notDesc(), NotTypes()));
OPT_REGISTER_KERNELS(Not, notKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
