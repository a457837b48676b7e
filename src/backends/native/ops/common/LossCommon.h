// Shared by NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: attribute parsing (reduction,
// ignore_index), shape/type inference, and the kernel. Input [N, C, d1..dk] (log-probabilities for
// NLL, scores for SCE, which takes their log-softmax over C first), target [N, d1..dk] of class
// indices, optional weight [C]. loss = -w[t] * logp[n, t, d] per position, 0 where t ==
// ignore_index; reduced to none (target's shape), sum, or mean (divided by the summed weights of
// the positions not ignored). Accumulates in double; sums go through fixed chunks, so serial and
// parallel runs add in the same order.
#pragma once

#include <cmath>

#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

enum class LossReduction { None, Sum, Mean };

struct LossAttrs {
  LossReduction Reduction = LossReduction::Mean;
  bool HasIgnore = false;
  int64_t IgnoreIndex = 0;
};

inline Result<LossAttrs> parseLossAttrs(const Node &N) {
  LossAttrs A;
  ASSIGN_OR_RETURN(const std::string R, N.getString("reduction", "mean"));
  if (R == "none")
    A.Reduction = LossReduction::None;
  else if (R == "sum")
    A.Reduction = LossReduction::Sum;
  else if (R == "mean")
    A.Reduction = LossReduction::Mean;
  else
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'reduction' value '", R,
                     "' is not 'none', 'sum' or 'mean'");
  A.HasIgnore = N.hasAttr("ignore_index");
  ASSIGN_OR_RETURN(A.IgnoreIndex, N.getInt("ignore_index", 0));
  return A;
}

/// Inputs (scores, target[, weight]); outputs loss[, log_prob when WithLogProb].
inline Status inferLoss(ShapeContext &Ctx, bool WithLogProb) {
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(FloatTypes())));
  RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I32, ElementType::I64}));
  ASSIGN_OR_RETURN(const LossAttrs A, parseLossAttrs(Ctx.N));
  const TensorShape &X = Ctx.Inputs[0].Shape, &T = Ctx.Inputs[1].Shape;
  if (X.getRank() < 2)
    return Ctx.error(ErrorCode::Shape, "input ", X.toString(), " must have rank >= 2 ([N, C, d1, ...])");
  bool Match = T.getRank() + 1 == X.getRank();
  for (size_t I = 0; Match && I < T.getRank(); ++I) {
    const Expr &D = X[I == 0 ? 0 : I + 1];
    Match = !(D.isConst() && T[I].isConst() && D.value() != T[I].value());
  }
  if (!Match)
    return Ctx.error(ErrorCode::Shape, "target ", T.toString(), " does not match input ", X.toString(),
                     " without its class dim 1");
  if (Ctx.hasInput(2)) {
    RETURN_IF_ERROR(requireSameType(Ctx, 0, 2));
    const TensorShape &W = Ctx.Inputs[2].Shape;
    if (W.getRank() != 1 || (W[0].isConst() && X[1].isConst() && W[0].value() != X[1].value()))
      return Ctx.error(ErrorCode::Shape, "weight ", W.toString(), " is not [C] for input ", X.toString());
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = A.Reduction == LossReduction::None ? T : TensorShape();
  if (Ctx.Outputs.size() > 1) {
    if (!WithLogProb)
      return Ctx.error(ErrorCode::Model, "has ", Ctx.Outputs.size(), " outputs, expected 1");
    Ctx.Outputs[1].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[1].Shape = X;
  }
  return Status::ok();
}

inline OpSchema lossSchema(const char *Op, bool WithLogProb) {
  OpSchema S;
  S.OpType = Op;
  S.MinInputs = 2;
  S.MaxInputs = 3;
  S.MinOutputs = 1;
  S.MaxOutputs = WithLogProb ? 2 : 1;
  S.Infer = [WithLogProb](ShapeContext &Ctx) { return inferLoss(Ctx, WithLogProb); };
  return S;
}

template <typename T> inline T fromDouble(double V) { return static_cast<T>(static_cast<ComputeT<T>>(V)); }

/// Runs the loss for scores of type T. Softmax: take the log-softmax over C first (SCE), writing it
/// to output 1 when requested. Par: split positions over the pool.
template <typename T>
Status runLoss(const char *Name, const LossAttrs &A, bool Softmax, bool Par, const KernelContext &Ctx) {
  const TensorView &X = Ctx.Inputs[0], &Tgt = Ctx.Inputs[1];
  if (X.rank() < 2 || Tgt.rank() + 1 != X.rank())
    return runError(Name, "input ", joinInts(X.Dims), " and target ", joinInts(Tgt.Dims), " do not match");
  const int64_t N = X.Dims[0], C = X.Dims[1], D = product(X.Dims, 2, X.rank());
  const T *In = X.data<const T>();
  const T *W = hasRunInput(Ctx, 2) ? Ctx.Inputs[2].data<const T>() : nullptr;
  const bool I64 = Tgt.Type == ElementType::I64;
  const auto target = [&](int64_t P) -> int64_t {
    return I64 ? Tgt.data<const int64_t>()[P] : static_cast<int64_t>(Tgt.data<const int32_t>()[P]);
  };
  T *LogProb = Softmax && hasRunOutput(Ctx, 1) ? Ctx.Outputs[1].data<T>() : nullptr;
  const TensorView &L = Ctx.Outputs[0];
  const int64_t Positions = N * D;
  // Fixed chunks (independent of the thread count): partial sums, then one ordered total.
  const int64_t Chunk = 1024, Chunks = (Positions + Chunk - 1) / Chunk;
  std::vector<double> LossSum(static_cast<size_t>(Chunks)), WeightSum(static_cast<size_t>(Chunks));
  std::vector<int64_t> Bad(static_cast<size_t>(Chunks), -1);
  forRangeMaybe(Ctx, Par, static_cast<size_t>(Chunks), 1, [&](size_t Lo, size_t Hi) {
    for (size_t Ch = Lo; Ch < Hi; ++Ch) {
      double Ls = 0, Ws = 0;
      const int64_t P0 = static_cast<int64_t>(Ch) * Chunk, P1 = std::min(Positions, P0 + Chunk);
      for (int64_t P = P0; P < P1; ++P) {
        const int64_t Nn = P / D, Dd = P % D;
        const T *Row = In + Nn * C * D + Dd; // element c at Row[c * D]
        const int64_t Cls = target(P);
        double LogSum = 0;
        if (Softmax) {
          double Max = -INFINITY;
          for (int64_t K = 0; K < C; ++K)
            Max = std::max(Max, static_cast<double>(Row[K * D]));
          double Sum = 0;
          for (int64_t K = 0; K < C; ++K)
            Sum += std::exp(static_cast<double>(Row[K * D]) - Max);
          LogSum = Max + std::log(Sum);
          if (LogProb)
            for (int64_t K = 0; K < C; ++K)
              LogProb[Nn * C * D + Dd + K * D] = fromDouble<T>(static_cast<double>(Row[K * D]) - LogSum);
        }
        double Loss = 0;
        if (!(A.HasIgnore && Cls == A.IgnoreIndex)) {
          if (Cls < 0 || Cls >= C) {
            if (Bad[Ch] < 0)
              Bad[Ch] = P;
            continue;
          }
          const double Wt = W ? static_cast<double>(W[Cls]) : 1.0;
          Loss = -(static_cast<double>(Row[Cls * D]) - LogSum) * Wt;
          Ws += Wt;
        }
        if (A.Reduction == LossReduction::None)
          L.data<T>()[P] = fromDouble<T>(Loss);
        Ls += Loss;
      }
      LossSum[Ch] = Ls;
      WeightSum[Ch] = Ws;
    }
  });
  for (int64_t Ch = 0; Ch < Chunks; ++Ch)
    if (Bad[Ch] >= 0)
      return runError(Name, "target value ", target(Bad[Ch]), " at flat index ", Bad[Ch], " is outside [0, ", C,
                      ") and is not ignore_index");
  if (A.Reduction == LossReduction::None)
    return Status::ok();
  double Ls = 0, Ws = 0;
  for (int64_t Ch = 0; Ch < Chunks; ++Ch)
    Ls += LossSum[Ch], Ws += WeightSum[Ch];
  L.data<T>()[0] = fromDouble<T>(A.Reduction == LossReduction::Sum ? Ls : Ls / Ws);
  return Status::ok();
}

/// "<t>_<op>__ref" (serial) and "<t>_<op>__parallel" for t in f32, f64, f16, bf16.
template <typename T> void addLossVariants(OpKernels &K, const std::string &Op, bool Softmax) {
  const ElementType ET = ElementTypeOf<T>::value;
  const std::string Prefix = std::string(toString(ET)) + "_";
  for (bool Par : {false, true}) {
    const std::string Name = Prefix + Op + (Par ? "__parallel" : "__ref");
    K.Variants.push_back({Name, Par ? 10 : 0, [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); },
                          [Name, Softmax, Par](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                            ASSIGN_OR_RETURN(const LossAttrs A, parseLossAttrs(I.N));
                            return makeKernel<FunctionKernel>([Name, A, Softmax, Par](const KernelContext &C) {
                              return runLoss<T>(Name.c_str(), A, Softmax, Par, C);
                            });
                          }});
  }
}

inline void addAllLossVariants(OpKernels &K, const std::string &Op, bool Softmax) {
  addLossVariants<float>(K, Op, Softmax);
  addLossVariants<double>(K, Op, Softmax);
  addLossVariants<float16>(K, Op, Softmax);
  addLossVariants<bfloat16>(K, Op, Softmax);
}

/// Harness cases shared by both losses (targets drawn from [0, C) plus an ignored value).
inline std::vector<OpTestCase> lossCases(bool Softmax) {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto tgt = [](std::vector<int64_t> D, std::vector<double> V, ElementType T = ElementType::I64) {
    return valuesInput(std::move(D), std::move(V), T, false);
  };
  const auto W = [](int64_t C) {
    TestInput I = tensorInput({C});
    I.Low = 0.1, I.High = 2.0;
    return I;
  };
  const auto Red = [](const char *R) { return attrString(R); };
  std::vector<OpTestCase> C = {
      testCase("none_2d", {X({3, 5}), tgt({3}, {1, 4, 0})}, {{"reduction", Red("none")}}),
      testCase("mean_weight", {X({3, 5, 2}), tgt({3, 2}, {0, 1, 2, 3, 4, 0}), W(5)}),
      testCase("sum_ignore", {X({2, 4, 3, 2}), tgt({2, 3, 2}, {0, 1, 2, 3, 1, 2}), W(4)},
               {{"reduction", Red("sum")}, {"ignore_index", attrInt(2)}}),
      testCase("mean_ignore_negative_i32", {X({4, 3, 5}), tgt({4, 5}, {0, -1, 2, 1, -1, 1, 2}, ElementType::I32)},
               {{"ignore_index", attrInt(-1)}}),
      testCase("many_positions", {X({2, 6, 40, 30}), tgt({2, 40, 30}, {0, 5, 3, 1, 2, 4, 5})}),
      testCase("f64_none", {tensorInput({3, 4, 2}, ElementType::F64), tgt({3, 2}, {3, 2, 1, 0, 1, 2})},
               {{"reduction", Red("none")}}),
      testCase("f16_mean", {tensorInput({3, 4}, ElementType::F16), tgt({3}, {3, 2, 1})}),
      testCase("bf16_sum", {tensorInput({2, 4, 3}, ElementType::BF16), tgt({2, 3}, {3, 2, 1, 0, 1, 2})},
               {{"reduction", Red("sum")}}),
  };
  if (Softmax) {
    OpTestCase LP = testCase("log_prob", {X({3, 5, 2}), tgt({3, 2}, {0, 1, 2, 3, 4, 0})});
    LP.NumOutputs = 2;
    C.push_back(LP);
  }
  for (OpTestCase &Case : C)
    Case = withOpset(Case, Softmax ? 13 : 22);
  return C;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
