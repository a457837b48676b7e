// Add: elementwise addition with numpy broadcasting (f32, f64, integers). The broadcasting
// machinery is shared in BinaryElementwise.h; this file only supplies the arithmetic.
#include "backends/native/ops/BinaryElementwise.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct AddOp {
  static constexpr bool IsDivision = false;
  template <typename T> static T apply(T A, T B) {
    using W = WrapType<T>;
    return static_cast<T>(static_cast<W>(A) + static_cast<W>(B));
  }
};

OPT_REGISTER_SCHEMA(Add, binaryElementwiseSchema<AddOp>("Add"));
OPT_REGISTER_KERNELS(Add, binaryElementwiseKernels<AddOp>("Add", "add"));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
