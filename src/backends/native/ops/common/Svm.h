// Shared by the ai.onnx.ml SVMClassifier and SVMRegressor: the kernel function (LINEAR, POLY,
// RBF, SIGMOID with kernel_params [gamma, coef0, degree]) in float, as ONNX Runtime evaluates it.
#pragma once

#include <cmath>

#include "backends/native/ops/common/MlCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

struct SvmKernel {
  enum Type { Linear, Poly, Rbf, Sigmoid };
  Type K = Linear;
  float Gamma = 0, Coef0 = 0, Degree = 0;

  /// K(x, v) over F features.
  float operator()(const float *X, const float *V, int64_t F) const {
    if (K == Rbf) {
      float Sum = 0;
      for (int64_t I = 0; I < F; ++I) {
        const float D = X[I] - V[I];
        Sum += D * D;
      }
      return std::exp(-Gamma * Sum);
    }
    // Fused multiply-adds in feature order, as ORT's GEMM (MLAS) accumulates: a cubic kernel on
    // unscaled features amplifies the rounding of a plain sum to ~2e-5 of the probabilities.
    float Dot = 0;
    for (int64_t I = 0; I < F; ++I)
      Dot = std::fma(X[I], V[I], Dot);
    if (K == Linear)
      return Dot;
    const float A = Gamma * Dot + Coef0;
    if (K == Sigmoid)
      return std::tanh(A);
    if (Degree == 2)
      return A * A;
    if (Degree == 3)
      return A * A * A;
    return std::pow(A, Degree);
  }
};

/// kernel_type (LINEAR by default) and kernel_params of N.
inline Result<SvmKernel> readSvmKernel(const Node &N) {
  SvmKernel K;
  ASSIGN_OR_RETURN(const std::string T, N.getString("kernel_type", "LINEAR"));
  if (T == "LINEAR")
    K.K = SvmKernel::Linear;
  else if (T == "POLY")
    K.K = SvmKernel::Poly;
  else if (T == "RBF")
    K.K = SvmKernel::Rbf;
  else if (T == "SIGMOID")
    K.K = SvmKernel::Sigmoid;
  else
    return attrError(N, "kernel_type", "is '", T, "', expected LINEAR, POLY, RBF or SIGMOID");
  ASSIGN_OR_RETURN(const std::vector<float> P, N.getFloats("kernel_params", {}));
  if (!P.empty() && P.size() != 3)
    return attrError(N, "kernel_params", "has ", P.size(), " values, expected [gamma, coef0, degree]");
  if (P.size() == 3) {
    K.Gamma = P[0];
    K.Coef0 = P[1];
    K.Degree = P[2];
  }
  return K;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
