// LogSoftmax: x - max - log(sum(exp(x - max))) along the Softmax axis rules (common/MathSoftmax.h).
// f16, bf16, f32, f64 (16-bit floats compute in float); schema and variants shared with Hardmax.
#include "backends/native/ops/common/MathSoftmax.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

template <typename T> struct LogSoftmaxLine {
  void operator()(const T *In, T *Out, const AxisLines &L, size_t Line) const {
    using C = ComputeT<T>;
    const int64_t B = L.base(Line), S = L.Inner;
    double Max = -INFINITY;
    for (int64_t K = 0; K < L.Axis; ++K)
      Max = std::max<double>(Max, static_cast<C>(In[B + K * S]));
    double Sum = 0;
    for (int64_t K = 0; K < L.Axis; ++K)
      Sum += std::exp(static_cast<double>(static_cast<C>(In[B + K * S])) - Max);
    const double Shift = Max + std::log(Sum);
    for (int64_t K = 0; K < L.Axis; ++K)
      Out[B + K * S] = static_cast<T>(static_cast<C>(static_cast<double>(static_cast<C>(In[B + K * S])) - Shift));
  }
};

std::vector<OpTestCase> logSoftmaxCases() {
  const auto x = [](std::vector<int64_t> D, ElementType T = ElementType::F32) {
    return rangeInput(std::move(D), T, -10, 10);
  };
  const auto axis = [](int64_t A) { return std::map<std::string, AttrValue>{{"axis", attrInt(A)}}; };
  return std::vector<OpTestCase>{
      testCase("last_axis", {x({3, 10})}, {}, 1e-5),
      testCase("axis0", {x({4, 3})}, axis(0), 1e-5),
      testCase("middle_axis", {x({2, 5, 3})}, axis(1), 1e-5),
      testCase("rank1", {x({7})}, {}, 1e-5),
      testCase("many_rows", {x({64, 1000})}, {}, 1e-5),
      testCase("large_values", {rangeInput({2, 4}, ElementType::F32, 1000, 2000)}, {}, 1e-5),
      withOpset(testCase("opset11_coerced_2d", {x({2, 3, 4})}, axis(1), 1e-5), 11),
      withOpset(testCase("opset11_default_axis", {x({2, 3, 4})}, {}, 1e-5), 11),
      testCase("f64", {x({3, 4}, ElementType::F64)}, {}, 1e-5),
      testCase("f16", {x({3, 4}, ElementType::F16)}, {}, 1e-5),
  };
}

OPT_REGISTER_SCHEMA(LogSoftmax, axisLineSchema("LogSoftmax"));
OPT_REGISTER_KERNELS(LogSoftmax, axisLineKernels<LogSoftmaxLine>("LogSoftmax", "logsoftmax", logSoftmaxCases));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
