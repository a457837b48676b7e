// Adam (ai.onnx.preview.training 1): one Adam step for N tensors. Inputs R, T, X..., G..., V...
// (first moment), H... (second moment); outputs X_new..., V_new..., H_new... with
// g = norm_coefficient * x + grad, v' = alpha v + (1 - alpha) g, h' = beta h + (1 - beta) g^2,
// r = R * sqrt(1 - beta^T) / (1 - alpha^T) (R when T = 0),
// x' = (1 - norm_coefficient_post) * (x - r * v' / (sqrt(h') + epsilon)).
#include <cmath>

#include "backends/native/ops/common/Optimizer.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeAdam(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                   const Parallel &) {
  ASSIGN_OR_RETURN(const float Alpha, N.getFloat("alpha", 0.9f));
  ASSIGN_OR_RETURN(const float Beta, N.getFloat("beta", 0.999f));
  ASSIGN_OR_RETURN(const float Eps, N.getFloat("epsilon", 1e-6f));
  ASSIGN_OR_RETURN(const float Norm, N.getFloat("norm_coefficient", 0.0f));
  ASSIGN_OR_RETURN(const float Post, N.getFloat("norm_coefficient_post", 0.0f));
  const int64_t T = In[1].data<const int64_t>()[0];
  double R = optimizerRate(In[0]);
  if (T > 0)
    R = R * std::sqrt(1.0 - std::pow(static_cast<double>(Beta), static_cast<double>(T))) /
        (1.0 - std::pow(static_cast<double>(Alpha), static_cast<double>(T)));
  return runOptimizer<2>(In, Out, [&](double X, double G, const double *S, double &NewX, double *NewS) {
    const double Gr = Norm * X + G;
    NewS[0] = Alpha * S[0] + (1.0 - Alpha) * Gr;
    NewS[1] = Beta * S[1] + (1.0 - Beta) * Gr * Gr;
    NewX = (1.0 - Post) * (X - R * (NewS[0] / (std::sqrt(NewS[1]) + Eps)));
  });
}

OpSchema adamSchema() {
  OpSchema S;
  S.Domain = TrainingDomain;
  S.OpType = "Adam";
  S.MinInputs = 6;
  S.MaxInputs = -1;
  S.MinOutputs = 3;
  S.MaxOutputs = -1;
  S.Infer = [](ShapeContext &Ctx) { return inferOptimizer(Ctx, 4); };
  return S;
}

OpKernels adamKernels() {
  OpKernels K;
  K.Domain = TrainingDomain;
  K.OpType = "Adam";
  K.Variants.push_back(computeVariant("any_adam__ref", 0, computeAdam));
  K.TestCases = [] {
    const TestInput R = scalarInput(0.1, ElementType::F32, false);
    TestInput H = tensorInput({3, 2});
    H.Low = 0.1;
    H.High = 2;
    TestInput H64 = H;
    H64.Dims = {4};
    H64.Type = ElementType::F64;
    return std::vector<OpTestCase>{
        withOutputs(withOpset(testCase("one", {R, scalarInput(5, ElementType::I64, false), tensorInput({3, 2}),
                                               tensorInput({3, 2}), tensorInput({3, 2}), H},
                                       {{"norm_coefficient", attrFloat(0.001f)}, {"norm_coefficient_post", attrFloat(0.01f)}}),
                              1),
                    3),
        withOutputs(withOpset(testCase("first_step_f64", {R, scalarInput(0, ElementType::I64, false),
                                                          tensorInput({4}, ElementType::F64), tensorInput({4}, ElementType::F64),
                                                          tensorInput({4}, ElementType::F64), H64}),
                              1),
                    3),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Adam, adamSchema());
OPT_REGISTER_KERNELS(Adam, adamKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
