// Depthwise Conv (one input and one output channel per group): a portable tap-major stencil, the
// AVX2 plane kernel (common/PlaneWindow) and the AVX-512 ones (common/PlaneWindow, common/DepthwiseFlat).
#include <algorithm>
#include <memory>

#include "backends/native/ops/common/DepthwiseFlat.h"
#include "backends/native/ops/common/PlaneWindow.h"
#include "backends/native/ops/conv/ConvCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace conv {

namespace {

/// Depthwise 2-D convolution (one input channel per group, one output channel per group): each
/// output plane is an independent small stencil, split over the pool.
class ConvDepthwiseKernel : public Kernel {
public:
  explicit ConvDepthwiseKernel(ConvAttrs A) : A(std::move(A)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv("f32_conv__depthwise_direct", A, Ctx));
    const float *X = Ctx.Inputs[0].data<float>(), *Wt = Ctx.Inputs[1].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    const WindowAttrs &W = A.W;
    const int64_t H = R.G.In[0], Wd = R.G.In[1], OH = R.G.Out[0], OW = R.G.Out[1];
    const int64_t KH = W.Kernel[0], KW = W.Kernel[1], SH = W.Strides[0], SW = W.Strides[1];
    const int64_t DH = W.Dilations[0], DW = W.Dilations[1], PH = R.G.PadBegin[0], PW = R.G.PadBegin[1];
    Ctx.Par.forRange(static_cast<size_t>(R.N * R.M), 1, [&](size_t Lo, size_t Hi) {
      for (size_t P = Lo; P < Hi; ++P) {
        const int64_t M = static_cast<int64_t>(P) % R.M;
        const float *In = X + static_cast<int64_t>(P) * R.InPlane; // channel M of image P / M
        const float *K = Wt + M * KH * KW;
        float *Out = Y + static_cast<int64_t>(P) * R.OutPlane;
        const float Bias = B ? B[M] : 0.0f;
        // Valid output columns of each kernel column: iw = ow*SW - PW + kw*DW in [0, Wd).
        int64_t OwLo[64], OwHi[64];
        for (int64_t Kw = 0; Kw < KW; ++Kw) {
          const int64_t Off = Kw * DW - PW;
          OwLo[Kw] = std::min<int64_t>(OW, Off >= 0 ? 0 : (-Off + SW - 1) / SW);
          OwHi[Kw] = Wd - 1 - Off < 0 ? 0 : std::min<int64_t>(OW, (Wd - 1 - Off) / SW + 1);
        }
        for (int64_t Oh = 0; Oh < OH; ++Oh) {
          float *OutRow = Out + Oh * OW;
          for (int64_t Ow = 0; Ow < OW; ++Ow)
            OutRow[Ow] = Bias;
          // Tap-major: each tap is a scaled, strided row added to the output row (vectorizes).
          for (int64_t Kh = 0; Kh < KH; ++Kh) {
            const int64_t Ih = Oh * SH - PH + Kh * DH;
            if (Ih < 0 || Ih >= H)
              continue;
            const float *Row = In + Ih * Wd;
            for (int64_t Kw = 0; Kw < KW; ++Kw) {
              const float Kv = K[Kh * KW + Kw];
              const int64_t Off = Kw * DW - PW;
              if (SW == 1) {
                for (int64_t Ow = OwLo[Kw]; Ow < OwHi[Kw]; ++Ow)
                  OutRow[Ow] += Kv * Row[Ow + Off];
              } else {
                for (int64_t Ow = OwLo[Kw]; Ow < OwHi[Kw]; ++Ow)
                  OutRow[Ow] += Kv * Row[Ow * SW + Off];
              }
            }
          }
        }
      }
    });
    A.applyAct(Ctx.Outputs[0].data<float>(), Ctx.Outputs[0].elementCount());
    return Status::ok();
  }

private:
  ConvAttrs A;
};

/// Depthwise convolution with the AVX-512 plane kernel (common/PlaneWindow.h): strides 1 and 2,
/// bias and the fused clamp applied in registers.
class ConvDepthwiseAvx512Kernel : public Kernel {
public:
  ConvDepthwiseAvx512Kernel(ConvAttrs A, std::shared_ptr<const FlatDepthwisePlan> FlatCache)
      : A(std::move(A)), FlatCache(std::move(FlatCache)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const ConvRun R, planConv("f32_conv__depthwise_avx512", A, Ctx));
    const float *X = Ctx.Inputs[0].data<float>(), *Wt = Ctx.Inputs[1].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    DepthwiseGeometry G = planeGeometryOf(A.W, &R.G);
    G.Act = A.Act;
    if (R.OutPlane == 0 || R.N * R.M == 0)
      return Status::ok();
    if (!depthwiseAvx512Supported(G))
      return runError("f32_conv__depthwise_avx512", "geometry not supported");
    const int64_t KT = G.KH * G.KW;
    // Stride-1 "same" planes take the flat-plane kernel (common/DepthwiseFlat): no per-row work.
    const bool Flat = depthwiseFlatSupported(G);
    const DepthwisePlan Plan = Flat ? DepthwisePlan{G, {}, {}, {}} : planDepthwise(G);
    FlatDepthwisePlan LocalPlan; // when the geometry is not the one planned at creation
    const bool Cached = Flat && FlatCache && sameGeometry(FlatCache->G, G);
    if (Flat && !Cached)
      LocalPlan = planDepthwiseFlat(G);
    const FlatDepthwisePlan &FlatPlan = Cached ? *FlatCache : LocalPlan;
    Ctx.Par.forRange(static_cast<size_t>(R.N * R.M), planesPerChunk(R.OutPlane, KT), [&](size_t Lo, size_t Hi) {
      for (size_t P = Lo; P < Hi; ++P) {
        const int64_t M = static_cast<int64_t>(P) % R.M;
        const float *In = X + static_cast<int64_t>(P) * R.InPlane;
        float *Out = Y + static_cast<int64_t>(P) * R.OutPlane;
        if (Flat)
          depthwiseFlatAvx512(FlatPlan, In, Wt + M * KT, B ? B[M] : 0.0f, Out);
        else
          depthwisePlaneAvx512(Plan, In, Wt + M * KT, B ? B[M] : 0.0f, Out);
      }
    });
    return Status::ok();
  }

private:
  ConvAttrs A;
  std::shared_ptr<const FlatDepthwisePlan> FlatCache; ///< planned at creation (known shapes), or null
};

/// Depthwise convolution with the AVX2+FMA plane kernel (common/PlaneWindow.h): strides 1 and 2,
/// bias and a clamp in registers, other fused activations per finished rows.
class ConvDepthwiseAvx2Kernel : public Kernel {
public:
  explicit ConvDepthwiseAvx2Kernel(ConvAttrs A) : A(std::move(A)) {}

  Status run(const KernelContext &Ctx) const override {
    static const char *Name = "f32_conv__depthwise_avx2";
    ASSIGN_OR_RETURN(const ConvRun R, planConv(Name, A, Ctx));
    const float *X = Ctx.Inputs[0].data<float>(), *Wt = Ctx.Inputs[1].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    DepthwiseGeometry G = planeGeometryOf(A.W, &R.G);
    G.Act = A.Act;
    if (R.OutPlane == 0 || R.N * R.M == 0)
      return Status::ok();
    if (!depthwiseAvx2Supported(G))
      return runError(Name, "geometry not supported");
    const int64_t KT = G.KH * G.KW;
    const DepthwisePlan Plan = planDepthwiseAvx2(G);
    Ctx.Par.forRange(static_cast<size_t>(R.N * R.M), planesPerChunk(R.OutPlane, KT), [&](size_t Lo, size_t Hi) {
      for (size_t P = Lo; P < Hi; ++P) {
        const int64_t M = static_cast<int64_t>(P) % R.M;
        depthwisePlaneAvx2(Plan, X + static_cast<int64_t>(P) * R.InPlane, Wt + M * KT, B ? B[M] : 0.0f,
                           Y + static_cast<int64_t>(P) * R.OutPlane);
      }
    });
    return Status::ok();
  }

private:
  ConvAttrs A;
};

} // namespace

bool isDepthwiseConv(const KernelCreateInfo &I) {
  if (!convTypesOk(I) || !is2D(I))
    return false;
  auto Group = I.N.getInt("group", 1);
  const TensorShape &X = I.Inputs[0].Shape, &Wt = I.Inputs[1].Shape;
  return Group.isOk() && *Group > 1 && X[1].isConst() && X[1].value() == *Group && Wt[0].isConst() &&
         Wt[0].value() == *Group && Wt[1].isConst() && Wt[1].value() == 1 && Wt[3].isConst() && Wt[3].value() <= 64;
}

KernelVariant depthwiseAvx512Variant() {
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!isDepthwiseConv(I))
      return false;
    auto A = attrsFor(I);
    if (!A.isOk() || A->W.Kernel.size() != 2)
      return false;
    return depthwiseAvx512Supported(planeGeometryOf(A->W, nullptr));
  };
  return {"f32_conv__depthwise_avx512", 60, Supports, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            std::shared_ptr<const FlatDepthwisePlan> FlatCache;
            const TensorShape &XS = I.Inputs[0].Shape;
            if (XS[2].isConst() && XS[3].isConst()) {
              const WindowGeometry Geo = computeWindowGeometry(A.W, {1, 1, XS[2].value(), XS[3].value()});
              DepthwiseGeometry G = planeGeometryOf(A.W, &Geo);
              G.Act = A.Act;
              FlatCache = cachedFlatPlan(G);
            }
            return makeKernel<ConvDepthwiseAvx512Kernel>(std::move(A), std::move(FlatCache));
          }};
}

KernelVariant depthwiseAvx2Variant() {
  const auto Supports = [](const KernelCreateInfo &I) {
    if (!isDepthwiseConv(I))
      return false;
    auto A = attrsFor(I);
    return A.isOk() && A->W.Kernel.size() == 2 && depthwiseAvx2Supported(planeGeometryOf(A->W, nullptr));
  };
  return {"f32_conv__depthwise_avx2", 55, Supports, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            return makeKernel<ConvDepthwiseAvx2Kernel>(std::move(A));
          }};
}

KernelVariant depthwiseVariant() {
  const auto Supports = [](const KernelCreateInfo &I) { return isDepthwiseConv(I); };
  return {"f32_conv__depthwise_direct", 50, Supports, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvAttrs A, attrsFor(I));
            return makeKernel<ConvDepthwiseKernel>(std::move(A));
          }};
}

} // namespace conv
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
