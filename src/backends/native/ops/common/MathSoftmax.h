// Shared by LogSoftmax and Hardmax: the Softmax-family axis rules. Opset >= 13: along one axis
// (default -1). Opset < 13: the input is coerced to 2-D at 'axis' (default 1) and each flattened
// row is one line. Lines are [Outer, Axis, Inner] with stride Inner along the axis.
#pragma once

#include <functional>

#include "backends/native/ops/common/ElementwiseCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

struct AxisLines {
  int64_t Outer, Axis, Inner;
  size_t lines() const { return static_cast<size_t>(Outer * Inner); }
  /// Offset of element 0 of line T.
  int64_t base(size_t T) const {
    const int64_t O = static_cast<int64_t>(T) / Inner, I = static_cast<int64_t>(T) % Inner;
    return O * Axis * Inner + I;
  }
};

inline bool legacySoftmaxAxis(const Node &N) { return N.OpsetVersion > 0 && N.OpsetVersion < 13; }

inline Result<int64_t> softmaxFamilyAxis(const Node &N, size_t Rank) {
  ASSIGN_OR_RETURN(const int64_t Axis, N.getInt("axis", legacySoftmaxAxis(N) ? 1 : -1));
  return normalizeAxis(N, "axis", Axis, static_cast<int64_t>(Rank));
}

inline AxisLines softmaxFamilyLines(const Node &N, int64_t Axis, const std::vector<int64_t> &Dims) {
  const size_t A = static_cast<size_t>(Axis);
  if (legacySoftmaxAxis(N))
    return {product(Dims, 0, A), product(Dims, A, Dims.size()), 1};
  return {product(Dims, 0, A), Dims[A], product(Dims, A + 1, Dims.size())};
}

/// Schema: floats, rank >= 1, valid axis; output like the input.
inline Status inferSoftmaxFamily(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(FloatTypes())));
  const TensorShape &In = Ctx.Inputs[0].Shape;
  if (In.getRank() == 0)
    return Ctx.error(ErrorCode::Shape, "input must have rank >= 1");
  ASSIGN_OR_RETURN(const int64_t Axis, softmaxFamilyAxis(Ctx.N, In.getRank()));
  (void)Axis;
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = In;
  return Status::ok();
}

/// A kernel running LineFn(In, Out, Lines, LineIndex) for every line; serial or over the pool.
template <typename T, typename LineFn> class AxisLineKernel : public Kernel {
public:
  AxisLineKernel(std::string Name, Node N, bool Parallel, LineFn Fn)
      : Name(std::move(Name)), N(std::move(N)), Par(Parallel), Fn(Fn) {}
  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    if (X.Dims != Y.Dims || X.rank() == 0)
      return runError(Name.c_str(), "output shape ", joinInts(Y.Dims), " differs from input ", joinInts(X.Dims));
    ASSIGN_OR_RETURN(const int64_t Axis, softmaxFamilyAxis(N, X.rank()));
    const AxisLines L = softmaxFamilyLines(N, Axis, X.Dims);
    const T *In = X.data<T>();
    T *Out = Y.data<T>();
    if (!Par) {
      for (size_t I = 0; I < L.lines(); ++I)
        Fn(In, Out, L, I);
      return Status::ok();
    }
    Ctx.Par.forRange(L.lines(), std::max<int64_t>(1, 4096 / std::max<int64_t>(1, L.Axis)), [&](size_t Lo, size_t Hi) {
      for (size_t I = Lo; I < Hi; ++I)
        Fn(In, Out, L, I);
    });
    return Status::ok();
  }

private:
  std::string Name;
  Node N;
  bool Par;
  LineFn Fn;
};

/// Kernel variants of a line op (Hardmax, LogSoftmax): per float type a reference and a parallel
/// variant, named <type>_<Name>__ref / __parallel, running Line<T> on each line.
template <template <typename> class Line>
void pushAxisLineVariants(std::vector<KernelVariant> &, const std::string &, TypeList<>) {}
template <template <typename> class Line, typename T, typename... Rest>
void pushAxisLineVariants(std::vector<KernelVariant> &Out, const std::string &Name, TypeList<T, Rest...>) {
  const ElementType ET = ElementTypeOf<T>::value;
  for (int Par = 0; Par < 2; ++Par) {
    const std::string VariantName = std::string(typeName<T>()) + "_" + Name + (Par ? "__parallel" : "__ref");
    Out.push_back({VariantName, Par ? 10 : 0, [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); },
                   [VariantName, Par](const KernelCreateInfo &I) {
                     return makeKernel<AxisLineKernel<T, Line<T>>>(VariantName, I.N, Par != 0, Line<T>());
                   }});
  }
  pushAxisLineVariants<Line>(Out, Name, TypeList<Rest...>());
}

/// Schema of a line op: one input, the Softmax axis rules, output like the input.
inline OpSchema axisLineSchema(const char *OpType) {
  OpSchema S;
  S.OpType = OpType;
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = inferSoftmaxFamily;
  return S;
}

/// Kernels of a line op over FloatTypes; Cases are the op's own harness cases.
template <template <typename> class Line>
OpKernels axisLineKernels(const char *OpType, const std::string &Name, std::function<std::vector<OpTestCase>()> Cases) {
  OpKernels K;
  K.OpType = OpType;
  pushAxisLineVariants<Line>(K.Variants, Name, FloatTypes());
  K.TestCases = std::move(Cases);
  return K;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
