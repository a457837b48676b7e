// Hardmax: 1 at the first maximum of each line, 0 elsewhere, along the Softmax axis rules
// (common/MathSoftmax.h, which also holds the schema and kernel variants it shares with LogSoftmax).
// f16, bf16, f32, f64.
#include "backends/native/ops/common/MathSoftmax.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

template <typename T> struct HardmaxLine {
  void operator()(const T *In, T *Out, const AxisLines &L, size_t Line) const {
    using C = ComputeT<T>;
    const int64_t B = L.base(Line), S = L.Inner;
    int64_t Best = 0;
    for (int64_t K = 1; K < L.Axis; ++K)
      if (static_cast<C>(In[B + K * S]) > static_cast<C>(In[B + Best * S]))
        Best = K;
    for (int64_t K = 0; K < L.Axis; ++K)
      Out[B + K * S] = static_cast<T>(C(K == Best ? 1 : 0));
  }
};

std::vector<OpTestCase> hardmaxCases() {
  const auto x = [](std::vector<int64_t> D, ElementType T = ElementType::F32) {
    return rangeInput(std::move(D), T, -10, 10);
  };
  const auto axis = [](int64_t A) { return std::map<std::string, AttrValue>{{"axis", attrInt(A)}}; };
  return std::vector<OpTestCase>{
      testCase("last_axis", {x({3, 10})}),
      testCase("axis0", {x({4, 3})}, axis(0)),
      testCase("middle_axis", {x({2, 5, 3})}, axis(1)),
      testCase("ties_first_wins", {valuesInput({2, 4}, {1, 3, 3, 0, 2, 2, 2, 2}, ElementType::F32, false)}),
      testCase("many_rows", {x({256, 100})}),
      withOpset(testCase("opset11_coerced_2d", {x({2, 3, 4})}, axis(1)), 11),
      testCase("f64", {x({3, 4}, ElementType::F64)}),
  };
}

OPT_REGISTER_SCHEMA(Hardmax, axisLineSchema("Hardmax"));
OPT_REGISTER_KERNELS(Hardmax, axisLineKernels<HardmaxLine>("Hardmax", "hardmax", hardmaxCases));

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
