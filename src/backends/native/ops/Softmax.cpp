// Softmax (f32, f64, f16, bf16). Opset >= 13: along one axis (default -1). Opset < 13: the input is
// coerced to 2-D at axis (default 1) and each flattened row is normalized. Node::OpsetVersion picks
// the rule. f16/bf16 round every step of the ONNX function body to the element type (see
// HalfSoftmaxKernel).
#include <cmath>

#include <type_traits>

#include "backends/native/ops/common/MathApprox.h"
#include "backends/native/ops/common/MathSoftmax.h"
#include "backends/native/ops/common/OpUtil.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

OpSchema softmaxSchema() {
  OpSchema S;
  S.OpType = "Softmax";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(
        requireInputType(Ctx, 0, {ElementType::F32, ElementType::F64, ElementType::F16, ElementType::BF16}));
    const TensorShape &In = Ctx.Inputs[0].Shape;
    if (In.getRank() == 0)
      return Ctx.error(ErrorCode::Shape, "input must have rank >= 1");
    ASSIGN_OR_RETURN(const int64_t Axis, softmaxFamilyAxis(Ctx.N, In.getRank()));
    (void)Axis;
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = In;
    return Status::ok();
  };
  return S;
}

/// The reference (any T, accumulated in double) and, for f32, the parallel fast path.
template <typename T> class SoftmaxKernel : public Kernel {
public:
  SoftmaxKernel(const Node &N, int64_t Axis, bool Fast) : N(N), Axis(Axis), Fast(Fast) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    if (X.Dims != Y.Dims || static_cast<int64_t>(X.rank()) <= Axis)
      return runError("softmax", "output shape ", joinInts(Y.Dims), " differs from input ", joinInts(X.Dims));
    const AxisLines L = softmaxFamilyLines(N, Axis, X.Dims);
    const T *In = X.data<T>();
    T *Out = Y.data<T>();
    const size_t Lines = L.lines();
    if (!Fast) {
      for (size_t Line = 0; Line < Lines; ++Line)
        refLine(In, Out, L, Line);
      return Status::ok();
    }
    Ctx.Par.forRange(Lines, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, L.Axis)), [&](size_t Lo, size_t Hi) {
      for (size_t Line = Lo; Line < Hi; ++Line)
        fastLine(In, Out, L, Line);
    });
    return Status::ok();
  }

private:
  static void refLine(const T *In, T *Out, const AxisLines &L, size_t Line) {
    const int64_t B = L.base(Line);
    double Max = -INFINITY, Sum = 0;
    for (int64_t K = 0; K < L.Axis; ++K)
      Max = std::max<double>(Max, In[B + K * L.Inner]);
    for (int64_t K = 0; K < L.Axis; ++K)
      Sum += std::exp(static_cast<double>(In[B + K * L.Inner]) - Max);
    for (int64_t K = 0; K < L.Axis; ++K)
      Out[B + K * L.Inner] = static_cast<T>(std::exp(static_cast<double>(In[B + K * L.Inner]) - Max) / Sum);
  }
  static void fastLine(const T *In, T *Out, const AxisLines &L, size_t Line) {
    const int64_t B = L.base(Line), S = L.Inner;
    if (std::is_same<T, float>::value && S == 1) {
      // Contiguous line (the last axis): max, exp and sum vectorized in one helper.
      approx::softmaxF32(reinterpret_cast<const float *>(In) + B, reinterpret_cast<float *>(Out) + B,
                         static_cast<size_t>(L.Axis));
      return;
    }
    T Max = -INFINITY;
    for (int64_t K = 0; K < L.Axis; ++K)
      Max = std::max(Max, In[B + K * S]);
    T Sum = 0;
    for (int64_t K = 0; K < L.Axis; ++K) {
      const T E = std::exp(In[B + K * S] - Max);
      Out[B + K * S] = E;
      Sum += E;
    }
    const T Inv = T(1) / Sum;
    for (int64_t K = 0; K < L.Axis; ++K)
      Out[B + K * S] *= Inv;
  }

  Node N; // a copy: only OpsetVersion is read at run time
  int64_t Axis;
  bool Fast;
};

/// float16 / bfloat16: the ONNX function body of Softmax, ReduceMax -> Sub -> Exp -> ReduceSum ->
/// Div, with every intermediate a T tensor: each step computes in float and rounds to T (the sum
/// accumulates in float and rounds once). That is what the ONNX reference (numpy half arithmetic)
/// and the body run op by op produce; computing in float and rounding only the result, as the
/// float32 kernel behind the half adapter did, differs from them by an ulp on some elements.
template <typename T> class HalfSoftmaxKernel : public Kernel {
public:
  HalfSoftmaxKernel(const Node &N, int64_t Axis) : N(N), Axis(Axis) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    if (X.Dims != Y.Dims || static_cast<int64_t>(X.rank()) <= Axis)
      return runError("softmax", "output shape ", joinInts(Y.Dims), " differs from input ", joinInts(X.Dims));
    const AxisLines L = softmaxFamilyLines(N, Axis, X.Dims);
    const T *In = X.data<T>();
    T *Out = Y.data<T>();
    const size_t Lines = L.lines();
    Ctx.Par.forRange(Lines, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, L.Axis)), [&](size_t Lo, size_t Hi) {
      for (size_t Line = Lo; Line < Hi; ++Line) {
        const int64_t B = L.base(Line), S = L.Inner;
        float Max = -INFINITY;
        for (int64_t K = 0; K < L.Axis; ++K)
          Max = std::max(Max, static_cast<float>(In[B + K * S]));
        float Sum = 0;
        for (int64_t K = 0; K < L.Axis; ++K) {
          const T Shifted = static_cast<T>(static_cast<float>(In[B + K * S]) - Max);
          const T E = static_cast<T>(std::exp(static_cast<float>(Shifted)));
          Out[B + K * S] = E;
          Sum += static_cast<float>(E);
        }
        const float Total = static_cast<float>(static_cast<T>(Sum));
        for (int64_t K = 0; K < L.Axis; ++K)
          Out[B + K * S] = static_cast<T>(static_cast<float>(Out[B + K * S]) / Total);
      }
    });
    return Status::ok();
  }

private:
  Node N; // a copy: only OpsetVersion is read at run time
  int64_t Axis;
};

template <typename T> KernelVariant halfSoftmaxVariant(const std::string &Name) {
  const ElementType ET = ElementTypeOf<T>::value;
  return {Name, 0, [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); },
          [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(const int64_t Axis, softmaxFamilyAxis(I.N, I.Inputs[0].Shape.getRank()));
            return makeKernel<HalfSoftmaxKernel<T>>(I.N, Axis);
          }};
}

template <typename T> KernelVariant softmaxVariant(const std::string &Name, int Priority, bool Fast) {
  const ElementType ET = ElementTypeOf<T>::value;
  return {Name, Priority, [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); },
          [Fast](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(const int64_t Axis, softmaxFamilyAxis(I.N, I.Inputs[0].Shape.getRank()));
            return makeKernel<SoftmaxKernel<T>>(I.N, Axis, Fast);
          }};
}

OpKernels softmaxKernels() {
  OpKernels K;
  K.OpType = "Softmax";
  K.Variants.push_back(softmaxVariant<float>("f32_softmax__ref", 0, false));
  K.Variants.push_back(softmaxVariant<float>("f32_softmax__parallel", 10, true));
  K.Variants.push_back(softmaxVariant<double>("f64_softmax__ref", 0, false));
  K.Variants.push_back(softmaxVariant<double>("f64_softmax__parallel", 10, true));
  K.Variants.push_back(halfSoftmaxVariant<float16>("f16_softmax__ref"));
  K.Variants.push_back(halfSoftmaxVariant<bfloat16>("bf16_softmax__ref"));
  K.TestCases = [] {
    const auto wide = [](std::vector<int64_t> Dims) {
      TestInput I = tensorInput(std::move(Dims));
      I.Low = -10, I.High = 10;
      return I;
    };
    return std::vector<OpTestCase>{
        testCase("last_axis", {wide({3, 10})}, {}, 1e-5),
        testCase("axis0", {wide({4, 3})}, {{"axis", attrInt(0)}}, 1e-5),
        testCase("middle_axis", {wide({2, 5, 3})}, {{"axis", attrInt(1)}}, 1e-5),
        testCase("negative_axis", {wide({2, 3, 4})}, {{"axis", attrInt(-2)}}, 1e-5),
        testCase("rank1", {wide({7})}, {}, 1e-5),
        testCase("many_rows", {wide({64, 1000})}, {}, 1e-5),
        testCase("f64", typedInputs({3, 2, 5}, ElementType::F64), {{"axis", attrInt(1)}}, 1e-5),
        testCase("f16", typedInputs({3, 2, 5}, ElementType::F16), {{"axis", attrInt(1)}}, 1e-3),
        testCase("bf16_last_axis", typedInputs({4, 9}, ElementType::BF16), {}, 1e-2),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Softmax, softmaxSchema());
OPT_REGISTER_KERNELS(Softmax, softmaxKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
