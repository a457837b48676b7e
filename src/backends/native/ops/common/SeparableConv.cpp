#include "backends/native/ops/common/SeparableConv.h"

#include <utility>

#include "backends/native/ops/common/RowPipeline.h"
#include "ir/FusedOps.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

namespace {

/// The keys of the first convolution's clamp (the second one's are kFusedActMin/Max).
const char *firstMinKey(bool PointwiseFirst) { return PointwiseFirst ? kExpandActMin : kDepthwiseActMin; }
const char *firstMaxKey(bool PointwiseFirst) { return PointwiseFirst ? kExpandActMax : kDepthwiseActMax; }

template <bool PointwiseFirst> Status inferSeparable(ShapeContext &Ctx) {
  RETURN_IF_ERROR(checkFusedPairTypes(Ctx));
  const TensorShape &X = Ctx.Inputs[0].Shape, &In2 = Ctx.Inputs[2].Shape;
  ASSIGN_OR_RETURN(const SeparableAttrs A, parseSeparableAttrs(Ctx.N, X, Ctx.Inputs[1].Shape, In2, PointwiseFirst));
  Ctx.Outputs[0].Type = ElementType::F32;
  // The output's channels: the depthwise weight's (1x1 first) or the 1x1 weight's, input 2 either way.
  return inferWindowShape(Ctx, A.W, X, In2[0], Ctx.Outputs[0].Shape);
}

/// Out[N, M, P] = clamp(B[M] + sum over c of W[M, c] * In[N, c, P]), accumulated in double.
void pointwiseReference(const float *In, const float *W, const float *B, const FusedClamp &Act, int64_t Batch,
                        int64_t C, int64_t M, int64_t Plane, float *Out) {
  for (int64_t N = 0; N < Batch; ++N)
    for (int64_t Mi = 0; Mi < M; ++Mi)
      for (int64_t P = 0; P < Plane; ++P) {
        double Acc = B ? B[Mi] : 0.0;
        for (int64_t Ci = 0; Ci < C; ++Ci)
          Acc += static_cast<double>(W[Mi * C + Ci]) * In[(N * C + Ci) * Plane + P];
        Out[(N * M + Mi) * Plane + P] = Act(static_cast<float>(Acc));
      }
}

/// The depthwise convolution of Batch x C planes of G (the clamp G's), accumulated in double.
void depthwiseReference(const DepthwiseGeometry &G, const FusedClamp &Act, const float *In, const float *W,
                        const float *B, int64_t Batch, int64_t C, float *Out) {
  for (int64_t N = 0; N < Batch; ++N)
    for (int64_t Ci = 0; Ci < C; ++Ci) {
      const float *Plane = In + (N * C + Ci) * G.H * G.W;
      for (int64_t Oh = 0; Oh < G.OH; ++Oh)
        for (int64_t Ow = 0; Ow < G.OW; ++Ow) {
          double Acc = B ? B[Ci] : 0.0;
          for (int64_t Kh = 0; Kh < G.KH; ++Kh)
            for (int64_t Kw = 0; Kw < G.KW; ++Kw) {
              const int64_t Ih = Oh * G.SH - G.PH + Kh * G.DH, Iw = Ow * G.SW - G.PW + Kw * G.DW;
              if (Ih >= 0 && Ih < G.H && Iw >= 0 && Iw < G.W)
                Acc += static_cast<double>(W[(Ci * G.KH + Kh) * G.KW + Kw]) * Plane[Ih * G.W + Iw];
            }
          Out[((N * C + Ci) * G.OH + Oh) * G.OW + Ow] = Act(static_cast<float>(Acc));
        }
    }
}

class SeparableRefKernel : public Kernel {
public:
  SeparableRefKernel(const char *Name, SeparableAttrs A, bool PointwiseFirst)
      : Name(Name), A(std::move(A)), PointwiseFirst(PointwiseFirst) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const SeparableRun R, planSeparableRun(Name, A, Ctx, PointwiseFirst));
    const size_t Pw = PointwiseFirst ? 1 : 2, Dw = PointwiseFirst ? 2 : 1;
    const float *X = Ctx.Inputs[0].data<float>(), *Wp = Ctx.Inputs[Pw].data<float>();
    const float *Wd = Ctx.Inputs[Dw].data<float>();
    const float *Bp = inputDataOrNull(Ctx, Pw + 2), *Bd = inputDataOrNull(Ctx, Dw + 2);
    float *Y = Ctx.Outputs[0].data<float>();
    const DepthwiseGeometry G = separableGeometry(A, R.G);
    if (PointwiseFirst) {
      std::vector<float> E(static_cast<size_t>(R.N * R.M * R.Plane));
      pointwiseReference(X, Wp, Bp, A.Pointwise, R.N, R.C, R.M, R.Plane, E.data());
      depthwiseReference(G, A.Depthwise, E.data(), Wd, Bd, R.N, R.M, Y);
    } else {
      std::vector<float> D(static_cast<size_t>(R.N * R.C * R.OutPlane));
      depthwiseReference(G, A.Depthwise, X, Wd, Bd, R.N, R.C, D.data());
      pointwiseReference(D.data(), Wp, Bp, A.Pointwise, R.N, R.C, R.M, R.OutPlane, Y);
    }
    return Status::ok();
  }

private:
  const char *Name;
  SeparableAttrs A;
  bool PointwiseFirst;
};

} // namespace

Result<SeparableAttrs> parseSeparableAttrs(const Node &N, const TensorShape &X, const TensorShape &In1,
                                           const TensorShape &In2, bool PointwiseFirst) {
  SeparableAttrs A;
  const TensorShape &Wp = PointwiseFirst ? In1 : In2, &Wd = PointwiseFirst ? In2 : In1;
  ASSIGN_OR_RETURN(A.W, fusedPairWindow(N, X, Wp, Wd, PointwiseFirst));
  const char *MinKey = firstMinKey(PointwiseFirst), *MaxKey = firstMaxKey(PointwiseFirst);
  FusedClamp &First = PointwiseFirst ? A.Pointwise : A.Depthwise, &Second = PointwiseFirst ? A.Depthwise : A.Pointwise;
  ASSIGN_OR_RETURN(First, fusedClampOf(N, MinKey, MaxKey));
  ASSIGN_OR_RETURN(Second, fusedClampOf(N, kFusedActMin, kFusedActMax));
  return A;
}

Result<SeparableAttrs> separableAttrsFor(const KernelCreateInfo &I, bool PointwiseFirst) {
  return parseSeparableAttrs(I.N, I.Inputs[0].Shape, I.Inputs[1].Shape, I.Inputs[2].Shape, PointwiseFirst);
}

OpSchema separableSchema(const char *OpType, bool PointwiseFirst) {
  OpSchema S;
  S.Domain = kFusedPointwiseDepthwiseDomain;
  S.OpType = OpType;
  S.MinInputs = 3;
  S.MaxInputs = 5;
  S.Infer = PointwiseFirst ? inferSeparable<true> : inferSeparable<false>;
  return S;
}

bool separableTypesOk(const KernelCreateInfo &I) {
  for (size_t K = 0; K < I.Inputs.size() && K < 5; ++K)
    if ((K < 3 || I.Inputs[K].Present) && !inputIs(I, K, ElementType::F32))
      return false;
  return I.Inputs.size() >= 3;
}

Result<SeparableRun> planSeparableRun(const char *Name, const SeparableAttrs &A, const KernelContext &Ctx,
                                      bool PointwiseFirst) {
  const TensorView &X = Ctx.Inputs[0], &In1 = Ctx.Inputs[1], &In2 = Ctx.Inputs[2], &Y = Ctx.Outputs[0];
  if (X.rank() != 4 || In1.rank() != 4 || In2.rank() != 4 || Y.rank() != 4)
    return runError(Name, "rank mismatch");
  const TensorView &Wp = PointwiseFirst ? In1 : In2, &Wd = PointwiseFirst ? In2 : In1;
  SeparableRun R;
  R.G = computeWindowGeometry(A.W, X.Dims);
  R.N = X.Dims[0], R.C = X.Dims[1], R.M = Wp.Dims[0];
  R.KH = Wd.Dims[2], R.KW = Wd.Dims[3];
  const int64_t DwChannels = PointwiseFirst ? R.M : R.C;
  if (Wp.Dims[1] != R.C || Wp.Dims[2] != 1 || Wp.Dims[3] != 1 || Wd.Dims[0] != DwChannels || Wd.Dims[1] != 1 ||
      Y.Dims[0] != R.N || Y.Dims[1] != R.M || Y.Dims[2] != R.G.Out[0] || Y.Dims[3] != R.G.Out[1] ||
      R.KH != A.W.Kernel[0] || R.KW != A.W.Kernel[1])
    return runError(Name, "input ", joinInts(X.Dims), ", weights ", joinInts(In1.Dims), " and ", joinInts(In2.Dims),
                    " do not match the output ", joinInts(Y.Dims));
  R.Plane = X.Dims[2] * X.Dims[3];
  R.OutPlane = Y.Dims[2] * Y.Dims[3];
  return R;
}

DepthwiseGeometry separableGeometry(const SeparableAttrs &A, const WindowGeometry &Geo) {
  DepthwiseGeometry G = planeGeometryOf(A.W, &Geo);
  G.Act = A.Depthwise;
  return G;
}

RowPipelineWeights packRowPipelineWeights(const KernelCreateInfo &I, size_t Index, const std::string &Layout) {
  const ConstData &W = *I.Inputs[Index].Const;
  RowPipelineWeights P;
  P.M = W.Dims[0], P.C = W.Dims[1];
  P.Packed = packPointwiseWeightsCached(I, Index, Layout);
  markConstConsumed(I, Index);
  return P;
}

KernelVariant separableReferenceVariant(const char *Name, bool PointwiseFirst) {
  return {Name, 0, separableTypesOk,
          [Name, PointwiseFirst](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(SeparableAttrs A, separableAttrsFor(I, PointwiseFirst));
            return makeKernel<SeparableRefKernel>(Name, std::move(A), PointwiseFirst);
          }};
}

std::map<std::string, AttrValue> withSeparableClamp(std::map<std::string, AttrValue> Attrs, float Lo, float Hi,
                                                    bool OnFirst, bool PointwiseFirst) {
  Attrs[OnFirst ? firstMinKey(PointwiseFirst) : kFusedActMin] = attrFloat(Lo);
  Attrs[OnFirst ? firstMaxKey(PointwiseFirst) : kFusedActMax] = attrFloat(Hi);
  return Attrs;
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
