// Relu: max(x, 0) elementwise for f32, f64, i32, i64 and i8.
#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/SimdDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema reluSchema() {
  OpSchema S;
  S.OpType = "Relu";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputType(
        Ctx, 0, {ElementType::F32, ElementType::F64, ElementType::I32, ElementType::I64, ElementType::I8}));
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = Ctx.Inputs[0].Shape;
    return Status::ok();
  };
  return S;
}

template <typename T> void reluLoop(const T *X, T *Y, size_t Lo, size_t Hi) {
  for (size_t I = Lo; I < Hi; ++I)
    Y[I] = X[I] < T(0) ? T(0) : X[I]; // written so NaN passes through, as max(0, NaN) does
}
/// reluLoop compiled for AVX-512 (SimdDispatch.h).
template <typename T> OPT_TARGET_AVX512 void reluLoopAvx512(const T *X, T *Y, size_t Lo, size_t Hi) {
  reluLoop(X, Y, Lo, Hi);
}

template <typename T> Status reluRange(const KernelContext &Ctx, bool Parallel) {
  const T *X = Ctx.Inputs[0].data<T>();
  T *Y = Ctx.Outputs[0].data<T>();
  const size_t N = Ctx.Inputs[0].elementCount();
  if (Ctx.Outputs[0].elementCount() != N)
    return runError("relu", "input and output element counts differ");
  if (!Parallel) { // the reference: as written, on the baseline ISA
    reluLoop(X, Y, 0, N);
    return Status::ok();
  }
  const auto Loop = simdAvx512() ? reluLoopAvx512<T> : reluLoop<T>;
  Ctx.Par.forRange(N, 16384, [&](size_t Lo, size_t Hi) { Loop(X, Y, Lo, Hi); });
  return Status::ok();
}

template <typename T> void addReluVariants(std::vector<KernelVariant> &Out, const std::string &TypeName) {
  const ElementType ET = ElementTypeOf<T>::value;
  const auto Supports = [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); };
  Out.push_back({TypeName + "_relu__ref", 0, Supports, [](const KernelCreateInfo &) {
                   return makeKernel<FunctionKernel>([](const KernelContext &C) { return reluRange<T>(C, false); });
                 }});
  Out.push_back({TypeName + "_relu__parallel", 10, Supports, [](const KernelCreateInfo &) {
                   return makeKernel<FunctionKernel>([](const KernelContext &C) { return reluRange<T>(C, true); });
                 }});
}

OpKernels reluKernels() {
  OpKernels K;
  K.OpType = "Relu";
  addReluVariants<float>(K.Variants, "f32");
  addReluVariants<double>(K.Variants, "f64");
  addReluVariants<int32_t>(K.Variants, "i32");
  addReluVariants<int64_t>(K.Variants, "i64");
  addReluVariants<int8_t>(K.Variants, "i8");
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("f32", {tensorInput({2, 3, 4})}),
        testCase("f32_large", {tensorInput({3, 100000})}),
        testCase("f64", {tensorInput({7}, ElementType::F64)}),
        testCase("i32", typedInputs({5, 5}, ElementType::I32)),
        testCase("i64", typedInputs({9}, ElementType::I64)),
        testCase("i8", typedInputs({4, 4}, ElementType::I8)),
        testCase("scalar", {tensorInput({})}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Relu, reluSchema());
OPT_REGISTER_KERNELS(Relu, reluKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
