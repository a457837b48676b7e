// Depthwise Conv with channels in vector lanes, AVX2 + FMA: the 8-lane sibling of
// ConvDepthwiseBlocked.cpp (MobileNet's and EfficientNet's 3x3 and 5x5 layers, ConvNeXt's 7x7),
// by common/DepthwiseLanes8's strips of output rows per 8 channels.
#include <algorithm>
#include <memory>
#include <vector>

#include "backends/native/ops/common/DepthwiseLanes8.h"
#include "backends/native/ops/common/PackedWeights.h"
#include "backends/native/ops/common/ThreadScratch.h"
#include "backends/native/ops/conv/ConvCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace conv {

namespace {

constexpr int64_t kLanes = kDwLanes8;
constexpr const char *kName = "f32_conv__depthwise_blocked_avx2";

class ConvDepthwiseBlockedAvx2Kernel : public Kernel {
public:
  ConvDepthwiseBlockedAvx2Kernel(ConvAttrs A, int64_t C, AlignedFloats PackedW)
      : A(std::move(A)), C(C), Wt(std::move(PackedW)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv(kName, A, Ctx));
    if (R.M != C || R.C != C)
      return runError(kName, "channels changed since creation");
    const WindowAttrs &W = A.W;
    if (!depthwiseLanes8Supported(W.Kernel[0], W.Kernel[1], W.Strides[0], W.Strides[1], W.Dilations[0],
                                  W.Dilations[1]))
      return runError(kName, "window not supported on this CPU");
    const float *X = Ctx.Inputs[0].data<float>(), *Bp = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    if (R.OutPlane == 0 || R.N * R.M == 0)
      return Status::ok();
    const DwLanes8Geometry G = dwLanes8Geometry(R.G.In[0], R.G.In[1], R.G.Out[0], R.G.Out[1], W.Kernel[0], W.Kernel[1],
                                                W.Strides[0], W.Strides[1], R.G.PadBegin[0], R.G.PadBegin[1]);
    const int64_t CB = (C + kLanes - 1) / kLanes, Items = R.N * CB;
    const int64_t SR = depthwiseLanes8StripRows(G, Items, Ctx.Par.threads());
    const int64_t Strips = (G.OH + SR - 1) / SR, Taps = G.KH * G.KW;
    // Under ~256K multiply-adds of work (the transposes counted) the fan-out costs more than it saves.
    const Parallel &Par = Ctx.Par.ifWorth(R.N * C * dwLanes8RowsWork(G, G.OH));
    const size_t Grain = depthwiseLanes8Grain(G, SR, Items * Strips, Par.threads());
    Par.forRange(static_cast<size_t>(Items * Strips), Grain, [&](size_t Lo, size_t Hi) {
      // Packed input rows of the strip, then its outputs: on this worker's scratch stack.
      ScratchFrame Scratch;
      float *const In = Scratch.take<float>(static_cast<size_t>(dwLanes8InFloats(G, SR)));
      float *const Out = Scratch.take<float>(static_cast<size_t>(dwLanes8OutFloats(G, SR)));
      for (size_t T = Lo; T < Hi; ++T) {
        const int64_t S = static_cast<int64_t>(T) % Strips, Item = static_cast<int64_t>(T) / Strips;
        const int64_t N = Item / CB, B = Item % CB, C0 = B * kLanes, Cv = std::min<int64_t>(kLanes, C - C0);
        alignas(32) float Bv[kLanes] = {};
        if (Bp)
          std::copy(Bp + C0, Bp + C0 + Cv, Bv);
        depthwiseLanes8Strip(G, X + (N * C + C0) * R.InPlane, R.InPlane, Cv, Wt.data() + B * Taps * kLanes, Bv, A.Act,
                             S * SR, std::min(G.OH, S * SR + SR), In, Out, Y + (N * C + C0) * R.OutPlane, R.OutPlane);
      }
    });
    return Status::ok();
  }

private:
  ConvAttrs A;
  int64_t C;
  AlignedFloats Wt; ///< [C / 8][KH * KW][8], zero past C
};

} // namespace

KernelVariant depthwiseBlockedAvx2Variant() {
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!isDepthwiseConv(I) || !inputIsConst(I, 1))
      return false;
    auto A = attrsFor(I);
    if (!A.isOk() || A->W.Kernel.size() != 2)
      return false;
    // Every plane size, 3x3 included: with the transposes' 128-bit halves it is ahead of the AVX2
    // plane kernel on wide planes too (3x3, 1 thread, Zen 3: 112x112 stride 1 x32 243 -> 160 us,
    // 112x112 stride 2 x96 313 -> 237, 56x56 stride 1 x144 289 -> 181, stride 2 146 -> 90).
    const WindowAttrs &W = A->W;
    return depthwiseLanes8Supported(W.Kernel[0], W.Kernel[1], W.Strides[0], W.Strides[1], W.Dilations[0],
                                    W.Dilations[1]);
  };
  // Below the AVX-512 plane kernel (60): on an AVX-512 CPU those run; above the AVX2 plane kernel (55).
  return {kName, 58, Supports, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            const ConstData &W = *I.Inputs[1].Const;
            const int64_t C = W.Dims[0], Taps = W.Dims[2] * W.Dims[3], CB = (C + kLanes - 1) / kLanes;
            // Packed once: a compiled folder's packed.bin holds the layout (optimium-compile), so
            // its load borrows it from the mapping instead of copying ConvNeXt-T's 18 7x7 layers.
            const size_t Floats = static_cast<size_t>(CB * Taps * kLanes);
            const std::string Key = packedWeightsKey(I, 1, std::string(kName) + "/lanes8");
            AlignedFloats Wt;
            if (!borrowPackedFloats(Key, Floats, Wt)) {
              Wt.resize(Floats);
              packDepthwiseLanes8(W.as<float>(), C, Taps, Wt.data());
              storePackedFloats(Key, Wt);
            }
            markConstConsumed(I, 1);
            return makeKernel<ConvDepthwiseBlockedAvx2Kernel>(std::move(A), C, std::move(Wt));
          }};
}

} // namespace conv
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
