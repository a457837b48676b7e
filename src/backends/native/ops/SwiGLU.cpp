// SwiGLU: y = a * sigmoid(alpha * a) * b (the gated linear unit of LLaMA-style MLPs), a and b of
// the same shape and type (no broadcasting), alpha (default 1). Float types, computed in float
// (double for f64).
#include <cmath>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/FloatDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeSwiGLU(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                     const Parallel &Par) {
  const TensorView &A = In[0], &B = In[1], &Y = Out[0];
  if (A.Dims != B.Dims || Y.Dims != A.Dims)
    return runError("swiglu", "a ", joinInts(A.Dims), ", b ", joinInts(B.Dims), " and y ", joinInts(Y.Dims),
                    " differ");
  ASSIGN_OR_RETURN(const float Alpha, N.getFloat("alpha", 1.0f));
  visitFloat(A.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    using C = ComputeT<T>;
    const T *Pa = A.data<const T>(), *Pb = B.data<const T>();
    T *Py = Y.data<T>();
    Par.forRange(A.elementCount(), 4096, [&](size_t Begin, size_t End) {
      for (size_t I = Begin; I < End; ++I) {
        const C X = static_cast<C>(Pa[I]);
        Py[I] = static_cast<T>(X / (C(1) + std::exp(-static_cast<C>(Alpha) * X)) * static_cast<C>(Pb[I]));
      }
    });
  });
  return Status::ok();
}

OpSchema swiGLUSchema() {
  OpSchema S;
  S.OpType = "SwiGLU";
  S.MinInputs = S.MaxInputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(FloatTypes()), "A"));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
    const TensorShape &A = Ctx.Inputs[0].Shape, &B = Ctx.Inputs[1].Shape;
    bool Same = A.getRank() == B.getRank();
    for (size_t I = 0; Same && I < A.getRank(); ++I)
      Same = !(A[I].isConst() && B[I].isConst() && A[I].value() != B[I].value());
    if (!Same)
      return Ctx.error(ErrorCode::Shape, "inputs A ", A.toString(), " and B ", B.toString(),
                       " must have the same shape (SwiGLU does not broadcast)");
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = A;
    return Status::ok();
  };
  return S;
}

OpKernels swiGLUKernels() {
  OpKernels K;
  K.OpType = "SwiGLU";
  K.Variants.push_back(computeVariant("any_swiglu__ref", 0, computeSwiGLU));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        withOpset(testCase("f32", {tensorInput({4, 33}), tensorInput({4, 33})}), 28),
        withOpset(testCase("alpha_f16", {tensorInput({2, 8}, ElementType::F16), tensorInput({2, 8}, ElementType::F16)},
                           {{"alpha", attrFloat(1.702f)}}, 1e-2),
                  28),
        withOpset(testCase("f64_big", {tensorInput({3, 5000}, ElementType::F64), tensorInput({3, 5000}, ElementType::F64)}),
                  28),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(SwiGLU, swiGLUSchema());
OPT_REGISTER_KERNELS(SwiGLU, swiGLUKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
