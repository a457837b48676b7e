// Momentum (ai.onnx.preview.training 1): one SGD-with-momentum step for N tensors. Inputs R, T,
// X..., G..., V...; outputs X_new..., V_new... with g = norm_coefficient * x + grad,
// v' = alpha * v + beta' * g (beta' = 1 on the first step, T = 0) and x' = x - R * v' ('standard')
// or x' = x - R * (g + alpha * v') ('nesterov').
#include "backends/native/ops/common/Optimizer.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct MomentumAttrs {
  float Alpha = 0, Beta = 0, Norm = 0;
  bool Nesterov = false;
};

Result<MomentumAttrs> momentumAttrs(const Node &N) {
  MomentumAttrs A;
  for (const char *Name : {"alpha", "beta", "norm_coefficient", "mode"})
    if (!N.hasAttr(Name))
      return makeError(ErrorCode::Model, N.describe(), ": attribute '", Name, "' is required");
  ASSIGN_OR_RETURN(A.Alpha, N.getFloat("alpha", 0));
  ASSIGN_OR_RETURN(A.Beta, N.getFloat("beta", 0));
  ASSIGN_OR_RETURN(A.Norm, N.getFloat("norm_coefficient", 0));
  ASSIGN_OR_RETURN(const std::string Mode, N.getString("mode", ""));
  if (Mode != "standard" && Mode != "nesterov")
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'mode' value '", Mode,
                     "' is not 'standard' or 'nesterov'");
  A.Nesterov = Mode == "nesterov";
  return A;
}

Status computeMomentum(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                       const Parallel &) {
  ASSIGN_OR_RETURN(const MomentumAttrs A, momentumAttrs(N));
  const double R = optimizerRate(In[0]);
  const double Beta = In[1].data<const int64_t>()[0] > 0 ? A.Beta : 1.0;
  return runOptimizer<1>(In, Out, [&](double X, double G, const double *S, double &NewX, double *NewS) {
    const double Gr = A.Norm * X + G;
    NewS[0] = A.Alpha * S[0] + Beta * Gr;
    NewX = A.Nesterov ? X - R * (Gr + A.Alpha * NewS[0]) : X - R * NewS[0];
  });
}

OpSchema momentumSchema() {
  OpSchema S;
  S.Domain = TrainingDomain;
  S.OpType = "Momentum";
  S.MinInputs = 5;
  S.MaxInputs = -1;
  S.MinOutputs = 2;
  S.MaxOutputs = -1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    ASSIGN_OR_RETURN(const MomentumAttrs A, momentumAttrs(Ctx.N));
    (void)A;
    return inferOptimizer(Ctx, 3);
  };
  return S;
}

OpKernels momentumKernels() {
  OpKernels K;
  K.Domain = TrainingDomain;
  K.OpType = "Momentum";
  K.Variants.push_back(computeVariant("any_momentum__ref", 0, computeMomentum));
  K.TestCases = [] {
    const TestInput R = scalarInput(0.1, ElementType::F32, false);
    const std::map<std::string, AttrValue> Std = {{"alpha", attrFloat(0.9f)}, {"beta", attrFloat(0.1f)},
                                                  {"norm_coefficient", attrFloat(0.01f)},
                                                  {"mode", attrString("standard")}};
    std::map<std::string, AttrValue> Nes = Std;
    Nes["mode"] = attrString("nesterov");
    return std::vector<OpTestCase>{
        withOutputs(withOpset(testCase("standard_first_step", {R, scalarInput(0, ElementType::I64, false),
                                                               tensorInput({5}), tensorInput({5}), tensorInput({5})},
                                       Std),
                              1),
                    2),
        withOutputs(withOpset(testCase("nesterov_two", {R, scalarInput(4, ElementType::I64, false), tensorInput({2, 2}),
                                                        tensorInput({3}), tensorInput({2, 2}), tensorInput({3}),
                                                        tensorInput({2, 2}), tensorInput({3})},
                                       Nes),
                              1),
                    4),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Momentum, momentumSchema());
OPT_REGISTER_KERNELS(Momentum, momentumKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
