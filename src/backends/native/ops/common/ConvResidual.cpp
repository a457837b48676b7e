// Residual wrapper for Conv kernel variants (see ConvResidual.h).
#include "backends/native/ops/common/ConvResidual.h"
#include "backends/native/ops/common/FusedActivation.h"
#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/SimdDispatch.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

/// Y = act(Y + R) over [B, E), a block at a time (the sum still in L1 when the activation runs).
void addResidualRange(float *Y, const float *R, size_t B, size_t E, const FusedAct &Act) {
  constexpr size_t Block = 1024;
  for (size_t B0 = B; B0 < E; B0 += Block) {
    const size_t E0 = std::min(E, B0 + Block);
    for (size_t I = B0; I < E0; ++I)
      Y[I] += R[I];
    applyFusedAct(Act, Y + B0, E0 - B0);
  }
}
OPT_TARGET_AVX512 void addResidualRangeAvx512(float *Y, const float *R, size_t B, size_t E, const FusedAct &Act) {
  addResidualRange(Y, R, B, E, Act);
}

/// The node as an unfused Conv: inputs X, W (, B), no clamp or residual attributes.
Node plainConv(const Node &N) {
  Node P = N;
  P.Inputs.resize(std::min<size_t>(P.Inputs.size(), kFusedResidualInput));
  while (P.Inputs.size() > 2 && P.Inputs.back() < 0)
    P.Inputs.pop_back();
  P.Attrs.erase(kFusedActMin);
  P.Attrs.erase(kFusedActMax);
  P.Attrs.erase(kFusedActKind);
  P.Attrs.erase(kFusedActAlpha);
  P.Attrs.erase(kFusedActBeta);
  P.Attrs.erase(kFusedResidual);
  return P;
}

std::vector<ValueInfo> plainInputs(const KernelCreateInfo &I, const Node &P) {
  return std::vector<ValueInfo>(I.Inputs.begin(), I.Inputs.begin() + static_cast<std::ptrdiff_t>(P.Inputs.size()));
}

class ConvResidualKernel : public Kernel {
public:
  ConvResidualKernel(std::unique_ptr<Kernel> Inner, FusedAct Act) : Inner(std::move(Inner)), Act(Act) {}

  Status run(const KernelContext &Ctx) const override {
    RETURN_IF_ERROR(Inner->run(Ctx));
    const float *R = convResidualOf(Ctx);
    const TensorView &Out = Ctx.Outputs[0];
    if (!R || Ctx.Inputs[kFusedResidualInput].elementCount() != Out.elementCount())
      return runError("conv_residual", "the residual does not match the output");
    float *Y = Out.data<float>();
    const bool Wide = simdAvx512();
    Ctx.Par.forRange(Out.elementCount(), 16384, [&](size_t B, size_t E) {
      if (Wide)
        addResidualRangeAvx512(Y, R, B, E, Act);
      else
        addResidualRange(Y, R, B, E, Act);
    });
    return Status::ok();
  }

private:
  std::unique_ptr<Kernel> Inner;
  FusedAct Act;
};

} // namespace

bool hasConvResidual(const Node &N) {
  return N.hasAttr(kFusedResidual) && N.Inputs.size() > kFusedResidualInput && N.Inputs[kFusedResidualInput] >= 0;
}

const float *convResidualOf(const KernelContext &Ctx) {
  return Ctx.Inputs.size() > kFusedResidualInput && Ctx.Inputs[kFusedResidualInput].Data
             ? Ctx.Inputs[kFusedResidualInput].data<float>()
             : nullptr;
}

KernelVariant withConvResidual(KernelVariant V) {
  KernelVariant W = V;
  W.Supports = [V](const KernelCreateInfo &I) {
    if (!hasConvResidual(I.N))
      return !V.Supports || V.Supports(I);
    if (I.Inputs.size() <= kFusedResidualInput || !I.Inputs[kFusedResidualInput].Present ||
        I.Inputs[kFusedResidualInput].Type != ElementType::F32)
      return false;
    const Node P = plainConv(I.N);
    const KernelCreateInfo PI{P, plainInputs(I, P), I.Outputs};
    return !V.Supports || V.Supports(PI);
  };
  W.Create = [V](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
    if (!hasConvResidual(I.N))
      return V.Create(I);
    const Node P = plainConv(I.N);
    const KernelCreateInfo PI{P, plainInputs(I, P), I.Outputs};
    ASSIGN_OR_RETURN(std::unique_ptr<Kernel> Inner, V.Create(PI));
    for (size_t K = 0; K < PI.ConstConsumed.size(); ++K)
      if (PI.ConstConsumed[K])
        markConstConsumed(I, K);
    ASSIGN_OR_RETURN(const FusedAct Act, convFusedActOf(I.N));
    return std::unique_ptr<Kernel>(new ConvResidualKernel(std::move(Inner), Act));
  };
  return W;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
