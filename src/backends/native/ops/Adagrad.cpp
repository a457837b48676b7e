// Adagrad (ai.onnx.preview.training 1): one Adagrad step for N tensors. Inputs R, T, X..., G...,
// H... (accumulated squared gradients); outputs X_new..., H_new... with
// r = R / (1 + T * decay_factor), g = norm_coefficient * x + grad, h' = h + g^2,
// x' = x - r * g / (sqrt(h') + epsilon).
#include <cmath>

#include "backends/native/ops/common/Optimizer.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Status computeAdagrad(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                      const Parallel &) {
  ASSIGN_OR_RETURN(const float Decay, N.getFloat("decay_factor", 0.0f));
  ASSIGN_OR_RETURN(const float Eps, N.getFloat("epsilon", 1e-6f));
  ASSIGN_OR_RETURN(const float Norm, N.getFloat("norm_coefficient", 0.0f));
  const double R = optimizerRate(In[0]) / (1.0 + static_cast<double>(In[1].data<const int64_t>()[0]) * Decay);
  return runOptimizer<1>(In, Out, [&](double X, double G, const double *S, double &NewX, double *NewS) {
    const double Gr = Norm * X + G;
    NewS[0] = S[0] + Gr * Gr;
    NewX = X - R * Gr / (std::sqrt(NewS[0]) + Eps);
  });
}

OpSchema adagradSchema() {
  OpSchema S;
  S.Domain = TrainingDomain;
  S.OpType = "Adagrad";
  S.MinInputs = 5;
  S.MaxInputs = -1;
  S.MinOutputs = 2;
  S.MaxOutputs = -1;
  S.Infer = [](ShapeContext &Ctx) { return inferOptimizer(Ctx, 3); };
  return S;
}

OpKernels adagradKernels() {
  OpKernels K;
  K.Domain = TrainingDomain;
  K.OpType = "Adagrad";
  K.Variants.push_back(computeVariant("any_adagrad__ref", 0, computeAdagrad));
  K.TestCases = [] {
    const TestInput R = scalarInput(0.1, ElementType::F32, false), T = scalarInput(3, ElementType::I64, false);
    TestInput H = tensorInput({4, 3});
    H.Low = 0.1;
    H.High = 2;
    TestInput H2 = H, H3 = H;
    H2.Dims = {2};
    H3.Dims = {3};
    return std::vector<OpTestCase>{
        withOutputs(withOpset(testCase("one", {R, T, tensorInput({4, 3}), tensorInput({4, 3}), H},
                                       {{"decay_factor", attrFloat(0.1f)}, {"norm_coefficient", attrFloat(0.01f)}}),
                              1),
                    2),
        withOutputs(withOpset(testCase("two", {R, T, tensorInput({2}), tensorInput({3}), tensorInput({2}),
                                               tensorInput({3}), H2, H3}),
                              1),
                    4),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Adagrad, adagradSchema());
OPT_REGISTER_KERNELS(Adagrad, adagradKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
