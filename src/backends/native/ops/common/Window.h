// HannWindow, HammingWindow, BlackmanWindow (opset 17): a 1-D window of 'size' (an i32/i64 scalar
// input) samples, sum_k A[k] * cos(2 pi k n / N) with N = size (periodic=1) or size - 1
// (periodic=0), computed in double and stored as 'output_datatype' (float by default). The length is
// known at load when size is a constant, else resolved per run.
#pragma once

#include <cmath>
#include <vector>

#include "backends/native/ops/common/ElementwiseCast.h"
#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Cosine-sum coefficients of one window: w[n] = A0 - A1 cos(2 pi n/N) + A2 cos(4 pi n/N).
struct WindowCoeffs {
  double A0, A1, A2;
};

inline Result<int64_t> windowSize(const Node &N, const TensorView &Size) {
  if (Size.elementCount() != 1)
    return makeError(ErrorCode::Shape, N.describe(), ": input 'size' must be a scalar, got shape ", joinInts(Size.Dims));
  int64_t V = 0;
  if (Size.Type == ElementType::I32)
    V = Size.data<int32_t>()[0];
  else if (Size.Type == ElementType::I64)
    V = Size.data<int64_t>()[0];
  else
    return makeError(ErrorCode::Type, N.describe(), ": input 'size' must be i32 or i64, got ", toString(Size.Type));
  if (V < 0)
    return makeError(ErrorCode::Shape, N.describe(), ": input 'size' must be >= 0, got ", V);
  return V;
}

inline ComputeFn windowCompute(WindowCoeffs W) {
  return [W](const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
             const Parallel &) -> Status {
    ASSIGN_OR_RETURN(const int64_t Size, windowSize(N, In[0]));
    ASSIGN_OR_RETURN(const int64_t Periodic, N.getInt("periodic", 1));
    const TensorView &Y = Out[0];
    if (static_cast<int64_t>(Y.elementCount()) != Size)
      return runError("window", "output ", joinInts(Y.Dims), " does not hold ", Size, " samples");
    const double Denom = static_cast<double>(Periodic ? Size : Size - 1);
    visitNumeric(Y.Type, [&](auto Tag) {
      using T = typename decltype(Tag)::type;
      for (int64_t I = 0; I < Size; ++I) {
        const double X = Denom > 0 ? 2.0 * M_PI * static_cast<double>(I) / Denom : 0.0;
        const double V = W.A0 - W.A1 * std::cos(X) + W.A2 * std::cos(2.0 * X);
        Y.data<T>()[I] = static_cast<T>(static_cast<typename ComputeType<T>::type>(V));
      }
    });
    return Status::ok();
  };
}

inline OpSchema windowSchema(const char *OpType, WindowCoeffs W) {
  OpSchema S;
  S.OpType = OpType;
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [W](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, {ElementType::I32, ElementType::I64}, "size"));
    ASSIGN_OR_RETURN(const int64_t Periodic, Ctx.N.getInt("periodic", 1));
    if (Periodic != 0 && Periodic != 1)
      return Ctx.error(ErrorCode::Model, "attribute 'periodic' must be 0 or 1, got ", Periodic);
    ASSIGN_OR_RETURN(const int64_t Code, Ctx.N.getInt("output_datatype", 1));
    ASSIGN_OR_RETURN(const ElementType T, elementTypeFromOnnx(Ctx, "output_datatype", Code));
    if (T == ElementType::Bool || lowp::isLowPrecision(T))
      return Ctx.error(ErrorCode::Type, "attribute 'output_datatype' must be a numeric type of at least 8 bits (f16, f32, ",
                       "f64, bf16 or an integer type), got ", toString(T));
    Ctx.Outputs[0].Type = T;
    if (isConstInput(Ctx, 0)) {
      TensorView Size;
      Size.Type = Ctx.Inputs[0].Type;
      Size.Dims = Ctx.Inputs[0].Const->Dims;
      Size.Data = Ctx.Inputs[0].Const->mutableData();
      auto N = windowSize(Ctx.N, Size);
      if (!N.isOk())
        return N.status();
      Ctx.Outputs[0].Shape = TensorShape({Expr(static_cast<long long>(*N))});
      return foldIfConstant(Ctx, windowCompute(W));
    }
    Ctx.Outputs[0].Shape = TensorShape({Ctx.newSymbol()});
    return Status::ok();
  };
  return S;
}

inline OpKernels windowKernels(const char *OpType, const char *Name, WindowCoeffs W) {
  OpKernels K;
  K.OpType = OpType;
  K.Variants.push_back(computeVariant(std::string("any_") + Name + "__ref", 0, windowCompute(W)));
  K.TestCases = [] {
    const auto size = [](double N, bool Const) { return valuesInput({}, {N}, ElementType::I64, Const); };
    std::vector<OpTestCase> Cases = {
        testCase("periodic", {size(10, true)}),
        testCase("symmetric", {size(9, true)}, {{"periodic", attrInt(0)}}),
        testCase("f64", {size(5, true)}, {{"output_datatype", attrInt(11)}}),
        testCase("one_sample", {size(1, true)}, {{"periodic", attrInt(0)}}),
    };
    for (OpTestCase &C : Cases)
      C.OpsetVersion = 17;
    return Cases;
  };
  return K;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
