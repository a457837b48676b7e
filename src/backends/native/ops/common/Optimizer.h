// Shared by the training-domain optimizers (ai.onnx.preview.training Adagrad, Momentum, Adam):
// inputs R (learning rate, float scalar), T (update count, i64 scalar), then Groups lists of N
// tensors (X..., G..., and one or two state lists); outputs the updated X... then the updated
// states. Each tensor of a group has the shape of its X; updates run element-wise in double.
#pragma once

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/FloatDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

constexpr const char *TrainingDomain = "ai.onnx.preview.training";

/// Number of optimized tensors N for Groups input lists (e.g. 3: X, G, H) after R and T.
inline Result<size_t> optimizerTensorCount(const ShapeContext &Ctx, size_t Groups) {
  const size_t Lists = Ctx.Inputs.size() - 2;
  if (Ctx.Inputs.size() < 2 + Groups || Lists % Groups != 0)
    return Ctx.error(ErrorCode::Model, "has ", Ctx.Inputs.size(), " inputs, not R, T and ", Groups,
                     " lists of equal length");
  const size_t N = Lists / Groups;
  if (Ctx.Outputs.size() != N * (Groups - 1))
    return Ctx.error(ErrorCode::Model, "has ", Ctx.Outputs.size(), " outputs for ", N, " tensors, expected ",
                     N * (Groups - 1));
  return N;
}

/// Checks R, T and the lists, and gives output k of group j the shape and type of X_k.
inline Status inferOptimizer(ShapeContext &Ctx, size_t Groups) {
  ASSIGN_OR_RETURN(const size_t N, optimizerTensorCount(Ctx, Groups));
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, {ElementType::F32, ElementType::F64}, "R"));
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 1, {ElementType::I64}, "T"));
  if (Ctx.Inputs[0].Shape.getRank() != 0 || Ctx.Inputs[1].Shape.getRank() != 0)
    return Ctx.error(ErrorCode::Shape, "R ", Ctx.Inputs[0].Shape.toString(), " and T ", Ctx.Inputs[1].Shape.toString(),
                     " must be scalars");
  for (size_t K = 0; K < N; ++K) {
    const size_t X = 2 + K;
    RETURN_IF_ERROR(requireInputTypeIn(Ctx, X, {ElementType::F32, ElementType::F64}, "X"));
    for (size_t J = 1; J < Groups; ++J) {
      const size_t I = 2 + J * N + K;
      RETURN_IF_ERROR(requireSameType(Ctx, X, I));
      const TensorShape &A = Ctx.Inputs[X].Shape, &B = Ctx.Inputs[I].Shape;
      bool Same = A.getRank() == B.getRank();
      for (size_t D = 0; Same && D < A.getRank(); ++D)
        Same = !(A[D].isConst() && B[D].isConst() && A[D].value() != B[D].value());
      if (!Same)
        return Ctx.error(ErrorCode::Shape, "input ", I, " ", B.toString(), " does not have the shape of X_", K, " ",
                         A.toString());
    }
    for (size_t J = 0; J + 1 < Groups; ++J) {
      Ctx.Outputs[J * N + K].Type = Ctx.Inputs[X].Type;
      Ctx.Outputs[J * N + K].Shape = Ctx.Inputs[X].Shape;
    }
  }
  return Status::ok();
}

inline double optimizerRate(const TensorView &R) {
  return R.Type == ElementType::F64 ? R.data<const double>()[0] : static_cast<double>(R.data<const float>()[0]);
}

/// Runs Update(x, g, s0[, s1], &x_new, &s0_new[, &s1_new]) over every element of every tensor;
/// States = Groups - 2 (1 or 2). Update gets and returns doubles.
template <size_t States, typename Fn>
Status runOptimizer(const std::vector<TensorView> &In, const std::vector<TensorView> &Out, Fn Update) {
  constexpr size_t Groups = States + 2;
  const size_t N = (In.size() - 2) / Groups;
  for (size_t K = 0; K < N; ++K) {
    const TensorView &X = In[2 + K];
    for (size_t J = 1; J < Groups; ++J)
      if (In[2 + J * N + K].Dims != X.Dims)
        return runError("optimizer", "input ", 2 + J * N + K, " ", joinInts(In[2 + J * N + K].Dims),
                        " does not have the shape of X ", joinInts(X.Dims));
    visitFloat(X.Type, [&](auto Tag) {
      using T = typename decltype(Tag)::type;
      const auto in = [&](size_t J, size_t E) { return static_cast<double>(In[2 + J * N + K].data<const T>()[E]); };
      for (size_t E = 0; E < X.elementCount(); ++E) {
        double S[States], NewX = 0, NewS[States];
        for (size_t J = 0; J < States; ++J)
          S[J] = in(2 + J, E);
        Update(in(0, E), in(1, E), S, NewX, NewS);
        if (Out[K].Data)
          Out[K].data<T>()[E] = static_cast<T>(NewX);
        for (size_t J = 0; J < States; ++J)
          if (Out[(J + 1) * N + K].Data)
            Out[(J + 1) * N + K].data<T>()[E] = static_cast<T>(NewS[J]);
      }
    });
  }
  return Status::ok();
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
