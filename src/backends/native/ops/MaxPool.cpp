// MaxPool: kernel_shape, strides, pads, auto_pad, dilations, ceil_mode, and the optional Indices
// output (flat index into the input; storage_order 1 numbers the spatial dims column-major).
// f32 without Indices takes the shared pooling kernels; other types (f64, i8, u8) and Indices take
// the generic N-d kernel below.
#include <cmath>
#include <limits>
#include <cstring>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backends/native/ops/common/MaxPoolSeparable.h"
#include "backends/native/ops/common/PlaneWindow.h"
#include "backends/native/ops/common/ThreadScratch.h"
#include "backends/native/ops/common/Pooling.h"
#include "backends/native/ops/common/VecMath512.h"
#include "core/CpuFeatures.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct MaxReducer {
  float init() const { return -INFINITY; }
  float add(float Acc, float V) const { return V > Acc || std::isnan(V) ? V : Acc; }
  float finish(float Acc, int64_t, int64_t) const { return Acc; }
};

Status checkMaxPoolAttrs(const Node &N) {
  ASSIGN_OR_RETURN(const int64_t StorageOrder, N.getInt("storage_order", 0));
  if (StorageOrder != 0 && StorageOrder != 1)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'storage_order' value ", StorageOrder,
                     " must be 0 or 1");
  return Status::ok();
}

bool wantsIndices(const Node &N) { return N.Outputs.size() > 1 && N.Outputs[1] >= 0; }

/// Any spatial rank, any element type, optional Indices. The first maximum wins (as ONNX's
/// reference); NaN propagates. A window entirely in padding yields the lowest value and index -1.
template <typename T> class MaxPoolWithIndicesKernel : public Kernel {
public:
  MaxPoolWithIndicesKernel(std::string Name, WindowAttrs W, bool ColumnMajor)
      : Name(std::move(Name)), W(std::move(W)), ColumnMajor(ColumnMajor) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    const TensorView *Idx = Ctx.Outputs.size() > 1 && Ctx.Outputs[1].Data ? &Ctx.Outputs[1] : nullptr;
    const size_t S = W.spatialRank();
    if (X.rank() != S + 2 || Y.rank() != S + 2)
      return runError(Name.c_str(), "input ", joinInts(X.Dims), " does not have ", S, " spatial dims");
    const WindowGeometry G = computeWindowGeometry(W, X.Dims);
    for (size_t I = 0; I < S; ++I)
      if (Y.Dims[I + 2] != G.Out[I])
        return runError(Name.c_str(), "output ", joinInts(Y.Dims), " does not match the window geometry");
    const int64_t Planes = X.Dims[0] * X.Dims[1];
    const int64_t InPlane = product(X.Dims, 2, X.rank()), OutPlane = product(Y.Dims, 2, Y.rank());
    // Strides of each spatial dim in the index numbering (row- or column-major).
    std::vector<int64_t> IndexStride(S, 1);
    for (size_t D = 0; D < S; ++D)
      for (size_t E = 0; E < S; ++E)
        if (ColumnMajor ? E < D : E > D)
          IndexStride[D] *= G.In[E];
    const T *In = X.data<T>();
    T *Out = Y.data<T>();
    int64_t *OutIdx = Idx ? Idx->data<int64_t>() : nullptr;
    Ctx.Par.forRange(static_cast<size_t>(Planes), 1, [&](size_t Lo, size_t Hi) {
      for (size_t P = Lo; P < Hi; ++P)
        plane(G, IndexStride, In + static_cast<int64_t>(P) * InPlane, Out + static_cast<int64_t>(P) * OutPlane,
              OutIdx ? OutIdx + static_cast<int64_t>(P) * OutPlane : nullptr, static_cast<int64_t>(P) * InPlane,
              OutPlane);
    });
    return Status::ok();
  }

private:
  void plane(const WindowGeometry &G, const std::vector<int64_t> &IndexStride, const T *In, T *Out, int64_t *OutIdx,
             int64_t PlaneBase, int64_t OutPlane) const {
    const size_t S = W.spatialRank();
    const int64_t Taps = product(W.Kernel, 0, S);
    std::vector<int64_t> O(S), K(S);
    for (int64_t OI = 0; OI < OutPlane; ++OI) {
      int64_t Rem = OI;
      for (size_t D = S; D-- > 0;) {
        O[D] = Rem % G.Out[D];
        Rem /= G.Out[D];
      }
      T Best = std::numeric_limits<T>::lowest();
      int64_t BestIndex = -1;
      bool Found = false;
      for (int64_t Tap = 0; Tap < Taps; ++Tap) {
        int64_t TR = Tap, Offset = 0, Index = 0;
        bool Inside = true;
        for (size_t D = S; D-- > 0;) {
          K[D] = TR % W.Kernel[D];
          TR /= W.Kernel[D];
        }
        for (size_t D = 0; D < S; ++D) {
          const int64_t Pos = O[D] * W.Strides[D] - G.PadBegin[D] + K[D] * W.Dilations[D];
          Inside &= Pos >= 0 && Pos < G.In[D];
          Offset = Offset * G.In[D] + Pos;
          Index += Pos * IndexStride[D];
        }
        if (!Inside)
          continue;
        const T V = In[Offset];
        if (!Found || V > Best || (V != V && Best == Best)) { // NaN != NaN: the first NaN wins
          Best = V;
          BestIndex = PlaneBase + Index;
          Found = true;
        }
      }
      Out[OI] = Best;
      if (OutIdx)
        OutIdx[OI] = BestIndex;
    }
  }

  std::string Name;
  WindowAttrs W;
  bool ColumnMajor;
};

template <typename T> KernelVariant maxPoolGenericVariant(const std::string &Name) {
  const ElementType ET = ElementTypeOf<T>::value;
  const auto Supports = [ET](const KernelCreateInfo &I) { return inputIs(I, 0, ET); };
  return {Name, ET == ElementType::F32 ? -1 : 0, Supports, [Name](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            RETURN_IF_ERROR(checkMaxPoolAttrs(I.N));
            ASSIGN_OR_RETURN(WindowAttrs W, parseWindowAttrs(I.N, I.Inputs[0].Shape.getRank() - 2, nullptr, true));
            ASSIGN_OR_RETURN(const int64_t StorageOrder, I.N.getInt("storage_order", 0));
            return makeKernel<MaxPoolWithIndicesKernel<T>>(Name, std::move(W), StorageOrder == 1);
          }};
}

OpSchema maxPoolSchema() {
  OpSchema S;
  S.OpType = "MaxPool";
  S.MinInputs = S.MaxInputs = 1;
  S.MinOutputs = 1;
  S.MaxOutputs = 2;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(checkMaxPoolAttrs(Ctx.N));
    RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32, ElementType::F64, ElementType::I8, ElementType::U8}));
    const TensorShape &In = Ctx.Inputs[0].Shape;
    if (In.getRank() < 3)
      return Ctx.error(ErrorCode::Shape, "input must be [N, C, spatial...], got ", In.toString());
    ASSIGN_OR_RETURN(const WindowAttrs W, parseWindowAttrs(Ctx.N, In.getRank() - 2, nullptr, true));
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    RETURN_IF_ERROR(inferWindowShape(Ctx, W, In, In[1], Ctx.Outputs[0].Shape));
    if (Ctx.Outputs.size() > 1 && Ctx.Outputs[1].Present) {
      Ctx.Outputs[1].Type = ElementType::I64;
      Ctx.Outputs[1].Shape = Ctx.Outputs[0].Shape;
    }
    return Status::ok();
  };
  return S;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define OPT_POOL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define OPT_POOL_CLONES
#endif

/// max(A, B) with a NaN on either side winning; branch-free, so the loops below vectorize.
inline float nanMax(float A, float B) { return (A != A || A > B) ? A : B; }
inline uint8_t nanMax(uint8_t A, uint8_t B) { return A > B ? A : B; }
inline int8_t nanMax(int8_t A, int8_t B) { return A > B ? A : B; }

/// The value of an output whose window lies wholly in the padding (the reference's initial value).
template <typename T> T windowIdentity() { return std::numeric_limits<T>::lowest(); }
template <> float windowIdentity<float>() { return -INFINITY; }

/// Row[c] = nanMax(Row[c], R[c]).
template <typename T> inline void maxIntoRowImpl(T *__restrict Row, const T *__restrict R, int64_t N) {
  for (int64_t C = 0; C < N; ++C)
    Row[C] = nanMax(Row[C], R[C]);
}
OPT_POOL_CLONES void maxIntoRow(float *__restrict Row, const float *__restrict R, int64_t N) { maxIntoRowImpl(Row, R, N); }
OPT_POOL_CLONES void maxIntoRow(uint8_t *__restrict Row, const uint8_t *__restrict R, int64_t N) {
  maxIntoRowImpl(Row, R, N);
}
OPT_POOL_CLONES void maxIntoRow(int8_t *__restrict Row, const int8_t *__restrict R, int64_t N) {
  maxIntoRowImpl(Row, R, N);
}

/// Out[o] = max over k < KW of Row[o * SW + k * DW], for outputs whose windows lie inside Row.
template <typename T>
inline void maxWindowsImpl(const T *__restrict Row, T *__restrict Out, int64_t Count, int64_t SW, int64_t KW, int64_t DW) {
  for (int64_t O = 0; O < Count; ++O) {
    const T *W = Row + O * SW;
    T M = W[0];
    for (int64_t K = 1; K < KW; ++K)
      M = nanMax(M, W[K * DW]);
    Out[O] = M;
  }
}
OPT_POOL_CLONES void maxWindows(const float *__restrict Row, float *__restrict Out, int64_t Count, int64_t SW,
                                int64_t KW, int64_t DW) {
  maxWindowsImpl(Row, Out, Count, SW, KW, DW);
}
OPT_POOL_CLONES void maxWindows(const uint8_t *__restrict Row, uint8_t *__restrict Out, int64_t Count, int64_t SW,
                                int64_t KW, int64_t DW) {
  maxWindowsImpl(Row, Out, Count, SW, KW, DW);
}
OPT_POOL_CLONES void maxWindows(const int8_t *__restrict Row, int8_t *__restrict Out, int64_t Count, int64_t SW,
                                int64_t KW, int64_t DW) {
  maxWindowsImpl(Row, Out, Count, SW, KW, DW);
}

/// 2-D max pooling (f32, and u8/s8 for quantized models), separable: per output row, the max over the window's valid input rows is
/// taken column by column into a scratch row (contiguous, vectorizable), then the max over each
/// output's window columns of that row. ~KH + KW comparisons per output instead of KH * KW with
/// per-tap bounds work. NaN propagates (as the reference).
template <typename T> class MaxPoolRowsKernel : public Kernel {
public:
  explicit MaxPoolRowsKernel(WindowAttrs W) : W(std::move(W)) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    if (X.rank() != 4 || Y.rank() != 4)
      return runError("maxpool", "input ", joinInts(X.Dims), " is not 4-D");
    const WindowGeometry G = computeWindowGeometry(W, X.Dims);
    if (Y.Dims[2] != G.Out[0] || Y.Dims[3] != G.Out[1])
      return runError("maxpool", "output ", joinInts(Y.Dims), " does not match the window geometry");
    const int64_t Planes = X.Dims[0] * X.Dims[1], H = G.In[0], Wd = G.In[1], OH = G.Out[0], OW = G.Out[1];
    const T *In = X.data<T>();
    T *Out = Y.data<T>();
    Ctx.Par.forRange(static_cast<size_t>(Planes), 1, [&](size_t Lo, size_t Hi) {
      std::vector<T> Row(static_cast<size_t>(std::max<int64_t>(Wd, 1)));
      for (size_t P = Lo; P < Hi; ++P)
        plane(G, In + static_cast<int64_t>(P) * H * Wd, Out + static_cast<int64_t>(P) * OH * OW, Row.data());
    });
    return Status::ok();
  }

private:
  void plane(const WindowGeometry &G, const T *In, T *Out, T *Row) const {
    const int64_t H = G.In[0], Wd = G.In[1], OH = G.Out[0], OW = G.Out[1];
    const int64_t SH = W.Strides[0], SW = W.Strides[1], DH = W.Dilations[0], DW = W.Dilations[1];
    const int64_t KH = W.Kernel[0], KW = W.Kernel[1];
    // Outputs whose whole window lies inside a row: [OwLo, OwHi); the edges take the slow path.
    const int64_t PW = G.PadBegin[1];
    const int64_t OwLo = std::min(OW, (PW + SW - 1) / SW);
    int64_t OwHi = OwLo;
    while (OwHi < OW && OwHi * SW - PW + (KW - 1) * DW < Wd)
      ++OwHi;
    for (int64_t Oh = 0; Oh < OH; ++Oh) {
      const int64_t H0 = Oh * SH - G.PadBegin[0];
      int64_t KH0, KH1;
      validTaps(H0, KH, DH, H, KH0, KH1);
      T *O = Out + Oh * OW;
      if (KH0 >= KH1) { // the window lies in the padding
        for (int64_t Ow = 0; Ow < OW; ++Ow)
          O[Ow] = windowIdentity<T>();
        continue;
      }
      const T *R0 = In + (H0 + KH0 * DH) * Wd;
      for (int64_t C = 0; C < Wd; ++C)
        Row[C] = R0[C];
      for (int64_t Kh = KH0 + 1; Kh < KH1; ++Kh)
        maxIntoRow(Row, In + (H0 + Kh * DH) * Wd, Wd);
      if (OwHi > OwLo)
        maxWindows(Row + OwLo * SW - PW, O + OwLo, OwHi - OwLo, SW, KW, DW);
      for (int64_t Ow = 0; Ow < OW; ++Ow) {
        if (Ow == OwLo && OwHi > OwLo) {
          Ow = OwHi - 1;
          continue;
        }
        const int64_t W0 = Ow * SW - G.PadBegin[1];
        int64_t KW0, KW1;
        validTaps(W0, KW, DW, Wd, KW0, KW1);
        T M = windowIdentity<T>();
        for (int64_t Kw = KW0; Kw < KW1; ++Kw)
          M = nanMax(M, Row[W0 + Kw * DW]);
        O[Ow] = M;
      }
    }
  }

  WindowAttrs W;
};

#if defined(__x86_64__)
/// 2-D u8/s8 max pooling (quantized models: passes/FuseQdq puts MaxPool on the integers) with
/// AVX-512BW: per output row, the max of the window's valid input rows into a row padded with the
/// type's minimum (which never wins over a real value: the padding is ignored, as ONNX asks), then
/// per kernel column one load (stride 1) or one load + vpmovwb (stride 2: the even bytes) per
/// vector of outputs.
template <bool Signed> class MaxPoolBytesAvx512Kernel : public Kernel {
public:
  explicit MaxPoolBytesAvx512Kernel(WindowAttrs W) : W(std::move(W)) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    if (X.rank() != 4 || Y.rank() != 4)
      return runError(Name, "input ", joinInts(X.Dims), " is not 4-D");
    const WindowGeometry G = computeWindowGeometry(W, X.Dims);
    if (Y.Dims[2] != G.Out[0] || Y.Dims[3] != G.Out[1])
      return runError(Name, "output ", joinInts(Y.Dims), " does not match the window geometry");
    const int64_t Planes = X.Dims[0] * X.Dims[1], InPlane = G.In[0] * G.In[1], OutPlane = G.Out[0] * G.Out[1];
    if (Planes == 0 || OutPlane == 0)
      return Status::ok();
    // Padded row: PL + Wd + whatever the last vector of windows reads past the end.
    const int64_t OW = G.Out[1], SW = W.Strides[1];
    const int64_t RowLen = (OW + 64) * SW + (W.Kernel[1] - 1) * W.Dilations[1] + G.PadBegin[1] + G.In[1] + 128;
    const uint8_t *In = X.data<const uint8_t>();
    uint8_t *Out = Y.data<uint8_t>();
    Ctx.Par.forRange(static_cast<size_t>(Planes), std::max<size_t>(1, 4096 / static_cast<size_t>(OutPlane)),
                     [&](size_t Lo, size_t Hi) {
                       std::vector<uint8_t> Row(static_cast<size_t>(RowLen));
                       for (size_t P = Lo; P < Hi; ++P)
                         plane(G, In + static_cast<int64_t>(P) * InPlane, Out + static_cast<int64_t>(P) * OutPlane,
                               Row.data());
                     });
    return Status::ok();
  }

  static constexpr const char *Name = Signed ? "i8_maxpool__avx512" : "u8_maxpool__avx512";

private:
  __attribute__((target("avx512f,avx512bw"))) static __m512i vmax(__m512i A, __m512i B) {
    return Signed ? _mm512_max_epi8(A, B) : _mm512_max_epu8(A, B);
  }

  __attribute__((target("avx512f,avx512bw,avx512vl"))) void plane(const WindowGeometry &G, const uint8_t *In,
                                                                   uint8_t *Out, uint8_t *Row) const {
    const int64_t H = G.In[0], Wd = G.In[1], OH = G.Out[0], OW = G.Out[1];
    const int64_t SH = W.Strides[0], SW = W.Strides[1], DH = W.Dilations[0], DW = W.Dilations[1];
    const int64_t KH = W.Kernel[0], KW = W.Kernel[1], PL = G.PadBegin[1];
    const uint8_t Min = Signed ? 0x80 : 0x00;
    const int64_t RowLen = (OW + 64) * SW + (KW - 1) * DW + PL + Wd + 128;
    std::memset(Row, Min, static_cast<size_t>(RowLen));
    uint8_t *Body = Row + PL;
    for (int64_t Oh = 0; Oh < OH; ++Oh) {
      const int64_t H0 = Oh * SH - G.PadBegin[0];
      int64_t KH0, KH1;
      validTaps(H0, KH, DH, H, KH0, KH1);
      uint8_t *O = Out + Oh * OW;
      if (KH0 >= KH1) { // the window lies in the padding
        std::memset(O, Min, static_cast<size_t>(OW));
        continue;
      }
      for (int64_t C = 0; C < Wd; C += 64) {
        const __mmask64 M = Wd - C >= 64 ? ~0ull : (1ull << (Wd - C)) - 1ull;
        __m512i V = _mm512_maskz_loadu_epi8(M, In + (H0 + KH0 * DH) * Wd + C);
        for (int64_t Kh = KH0 + 1; Kh < KH1; ++Kh)
          V = vmax(V, _mm512_maskz_loadu_epi8(M, In + (H0 + Kh * DH) * Wd + C));
        _mm512_mask_storeu_epi8(Body + C, M, V);
      }
      if (SW == 1) {
        for (int64_t Ow = 0; Ow < OW; Ow += 64) {
          __m512i V = _mm512_loadu_si512(Row + Ow);
          for (int64_t Kw = 1; Kw < KW; ++Kw)
            V = vmax(V, _mm512_loadu_si512(Row + Ow + Kw * DW));
          _mm512_mask_storeu_epi8(O + Ow, OW - Ow >= 64 ? ~0ull : (1ull << (OW - Ow)) - 1ull, V);
        }
      } else if (SW == 2) {
        for (int64_t Ow = 0; Ow < OW; Ow += 32) {
          __m512i V = _mm512_loadu_si512(Row + 2 * Ow);
          for (int64_t Kw = 1; Kw < KW; ++Kw)
            V = vmax(V, _mm512_loadu_si512(Row + 2 * Ow + Kw * DW));
          // The max of window o sits in byte 2 o: keep the low byte of each 16-bit lane.
          _mm256_mask_storeu_epi8(O + Ow, OW - Ow >= 32 ? ~0u : (1u << (OW - Ow)) - 1u, _mm512_cvtepi16_epi8(V));
        }
      } else {
        for (int64_t Ow = 0; Ow < OW; ++Ow) {
          uint8_t M = Row[Ow * SW];
          for (int64_t Kw = 1; Kw < KW; ++Kw) {
            const uint8_t V = Row[Ow * SW + Kw * DW];
            M = Signed ? (static_cast<int8_t>(V) > static_cast<int8_t>(M) ? V : M) : std::max(M, V);
          }
          O[Ow] = M;
        }
      }
    }
  }

  WindowAttrs W;
};
#endif

/// f32 2-D max pooling, horizontal stride 1 or 2: AVX-512 by the plane kernel of
/// common/PlaneWindow.h (16 outputs per vector, and a dedicated loop for full 2x2 stride-2
/// windows), AVX2 by the separable kernel of common/MaxPoolSeparable.h (column maxima into a row
/// buffer, then row maxima: 8 outputs per vector).
class MaxPoolPlaneKernel : public Kernel {
public:
  MaxPoolPlaneKernel(WindowAttrs W, bool Avx512) : W(std::move(W)), Avx512(Avx512) {}

  Status run(const KernelContext &Ctx) const override {
    const char *Name = Avx512 ? "f32_maxpool__avx512" : "f32_maxpool__avx2";
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    if (X.rank() != 4 || Y.rank() != 4)
      return runError(Name, "input ", joinInts(X.Dims), " is not 4-D");
    const WindowGeometry G = computeWindowGeometry(W, X.Dims);
    if (Y.Dims[2] != G.Out[0] || Y.Dims[3] != G.Out[1])
      return runError(Name, "output ", joinInts(Y.Dims), " does not match the window geometry");
    const int64_t Planes = X.Dims[0] * X.Dims[1], InPlane = G.In[0] * G.In[1], OutPlane = G.Out[0] * G.Out[1];
    if (Planes == 0 || OutPlane == 0)
      return Status::ok();
    const float *In = X.data<float>();
    float *Out = Y.data<float>();
#if defined(__x86_64__)
    // Full 2x2 windows at stride 2 (no padding, no partial window at the end): the dedicated loop.
    if (Avx512 && W.Kernel[0] == 2 && W.Kernel[1] == 2 && W.Strides[0] == 2 && W.Strides[1] == 2 && W.Dilations[0] == 1 &&
        W.Dilations[1] == 1 && G.PadBegin[0] == 0 && G.PadBegin[1] == 0 && G.Out[0] == G.In[0] / 2 &&
        G.Out[1] == G.In[1] / 2) {
      Ctx.Par.forRange(static_cast<size_t>(Planes), planesPerChunk(OutPlane, 4), [&](size_t Lo, size_t Hi) {
        for (size_t P = Lo; P < Hi; ++P)
          vec512::maxPool2x2Plane512(In + static_cast<int64_t>(P) * InPlane, G.In[1],
                                     Out + static_cast<int64_t>(P) * OutPlane, G.Out[0], G.Out[1]);
      });
      return Status::ok();
    }
#endif
    const DepthwiseGeometry PG = planeGeometryOf(W, &G);
    if (!Avx512) {
      // Separable (column maxima, then row maxima): KH + KW operations per output, not KH * KW.
      Ctx.Par.forRange(static_cast<size_t>(Planes), planesPerChunk(OutPlane, W.Kernel[0] + W.Kernel[1]),
                       [&](size_t Lo, size_t Hi) {
                         ScratchFrame Frame;
                         const int64_t P = static_cast<int64_t>(Lo);
                         maxPoolPlanesSeparableAvx2(PG, In + P * InPlane, InPlane, Out + P * OutPlane, OutPlane,
                                                    static_cast<int64_t>(Hi - Lo),
                                                    Frame.take<float>(static_cast<size_t>(maxPoolSeparableScratch(PG))));
                       });
      return Status::ok();
    }
    const DepthwisePlan Plan = planDepthwise(PG);
    Ctx.Par.forRange(static_cast<size_t>(Planes), planesPerChunk(OutPlane, W.Kernel[0] * W.Kernel[1]), [&](size_t Lo, size_t Hi) {
      for (size_t P = Lo; P < Hi; ++P)
        maxPoolPlaneAvx512(Plan, In + static_cast<int64_t>(P) * InPlane, Out + static_cast<int64_t>(P) * OutPlane);
    });
    return Status::ok();
  }

private:
  WindowAttrs W;
  bool Avx512;
};

KernelVariant maxPoolVariant(const std::string &Name, int Priority, bool Fast2D) {
  const auto Supports = [Fast2D](const KernelCreateInfo &I) {
    return inputIs(I, 0, ElementType::F32) && !wantsIndices(I.N) && (!Fast2D || I.Inputs[0].Shape.getRank() == 4);
  };
  return {Name, Priority, Supports, [Name, Fast2D](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            RETURN_IF_ERROR(checkMaxPoolAttrs(I.N));
            ASSIGN_OR_RETURN(WindowAttrs W, parseWindowAttrs(I.N, I.Inputs[0].Shape.getRank() - 2, nullptr, true));
            return makeKernel<PoolKernel<MaxReducer>>(Name, std::move(W), MaxReducer{}, Fast2D);
          }};
}

OpKernels maxPoolKernels() {
  OpKernels K;
  K.OpType = "MaxPool";
  K.Variants.push_back(maxPoolVariant("f32_maxpool__ref", 0, false));
  K.Variants.push_back(maxPoolVariant("f32_maxpool__2d", 10, true));
  K.Variants.push_back({"f32_maxpool__rows", 20,
                        [](const KernelCreateInfo &I) {
                          return inputIs(I, 0, ElementType::F32) && !wantsIndices(I.N) &&
                                 I.Inputs[0].Shape.getRank() == 4;
                        },
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          RETURN_IF_ERROR(checkMaxPoolAttrs(I.N));
                          ASSIGN_OR_RETURN(WindowAttrs W, parseWindowAttrs(I.N, 2, nullptr, true));
                          return makeKernel<MaxPoolRowsKernel<float>>(std::move(W));
                        }});
#if defined(__x86_64__)
  for (ElementType T : {ElementType::U8, ElementType::I8})
    K.Variants.push_back({T == ElementType::U8 ? "u8_maxpool__avx512" : "i8_maxpool__avx512", 30,
                          [T](const KernelCreateInfo &I) {
                            return cpuFeatures().avx512Int8() &&
                                   inputIs(I, 0, T) && !wantsIndices(I.N) && I.Inputs[0].Shape.getRank() == 4;
                          },
                          [T](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                            RETURN_IF_ERROR(checkMaxPoolAttrs(I.N));
                            ASSIGN_OR_RETURN(WindowAttrs W, parseWindowAttrs(I.N, 2, nullptr, true));
                            if (T == ElementType::U8)
                              return makeKernel<MaxPoolBytesAvx512Kernel<false>>(std::move(W));
                            return makeKernel<MaxPoolBytesAvx512Kernel<true>>(std::move(W));
                          }});
#endif
  for (ElementType T : {ElementType::U8, ElementType::I8})
    K.Variants.push_back({T == ElementType::U8 ? "u8_maxpool__rows" : "i8_maxpool__rows", 20,
                          [T](const KernelCreateInfo &I) {
                            return inputIs(I, 0, T) && !wantsIndices(I.N) && I.Inputs[0].Shape.getRank() == 4;
                          },
                          [T](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                            RETURN_IF_ERROR(checkMaxPoolAttrs(I.N));
                            ASSIGN_OR_RETURN(WindowAttrs W, parseWindowAttrs(I.N, 2, nullptr, true));
                            if (T == ElementType::U8)
                              return makeKernel<MaxPoolRowsKernel<uint8_t>>(std::move(W));
                            return makeKernel<MaxPoolRowsKernel<int8_t>>(std::move(W));
                          }});
  for (const bool Avx512 : {true, false})
    K.Variants.push_back({Avx512 ? "f32_maxpool__avx512" : "f32_maxpool__avx2", Avx512 ? 30 : 25,
                          [Avx512](const KernelCreateInfo &I) {
                            if (!inputIs(I, 0, ElementType::F32) || wantsIndices(I.N) ||
                                I.Inputs[0].Shape.getRank() != 4 || !checkMaxPoolAttrs(I.N).isOk())
                              return false;
                            auto W = parseWindowAttrs(I.N, 2, nullptr, true);
                            if (!W.isOk() || W->Kernel.size() != 2)
                              return false;
                            const DepthwiseGeometry G = planeGeometryOf(*W, nullptr);
                            return Avx512 ? depthwiseAvx512Supported(G) : maxPoolSeparableAvx2Supported(G);
                          },
                          [Avx512](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                            RETURN_IF_ERROR(checkMaxPoolAttrs(I.N));
                            ASSIGN_OR_RETURN(WindowAttrs W, parseWindowAttrs(I.N, 2, nullptr, true));
                            return makeKernel<MaxPoolPlaneKernel>(std::move(W), Avx512);
                          }});
  K.Variants.push_back(maxPoolGenericVariant<float>("f32_maxpool_indices__ref"));
  K.Variants.push_back(maxPoolGenericVariant<double>("f64_maxpool__ref"));
  K.Variants.push_back(maxPoolGenericVariant<int8_t>("i8_maxpool__ref"));
  K.Variants.push_back(maxPoolGenericVariant<uint8_t>("u8_maxpool__ref"));
  K.TestCases = [] {
    std::vector<OpTestCase> Cases = poolingCases();
    Cases.push_back(testCase("storage_order", {tensorInput({1, 1, 4, 4})},
                             {{"kernel_shape", attrInts({2, 2})}, {"storage_order", attrInt(1)}}));
    OpTestCase Indices = testCase("indices", {tensorInput({2, 2, 5, 5})},
                                  {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})}, {"pads", attrInts({1, 1, 1, 1})}});
    Indices.NumOutputs = 2;
    Cases.push_back(Indices);
    OpTestCase IndicesColumnMajor = Indices;
    IndicesColumnMajor.Label = "indices_storage_order";
    IndicesColumnMajor.Attrs["storage_order"] = attrInt(1);
    Cases.push_back(IndicesColumnMajor);
    TestInput Bytes = tensorInput({1, 2, 5, 5}, ElementType::U8);
    Bytes.Low = 0, Bytes.High = 255;
    Cases.push_back(testCase("u8", {Bytes}, {{"kernel_shape", attrInts({2, 2})}}));
    TestInput Stem = tensorInput({1, 3, 23, 21}, ElementType::U8);
    Stem.Low = 0, Stem.High = 255;
    Cases.push_back(testCase("u8_resnet_stem", {Stem},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})}, {"pads", attrInts({1, 1, 1, 1})}}));
    TestInput SBytes = tensorInput({2, 2, 9, 37}, ElementType::I8);
    SBytes.Low = -128, SBytes.High = 127;
    Cases.push_back(testCase("i8_ceil_dilated", {SBytes},
                             {{"kernel_shape", attrInts({3, 2})}, {"strides", attrInts({2, 1})}, {"dilations", attrInts({1, 2})},
                              {"ceil_mode", attrInt(1)}, {"pads", attrInts({0, 1, 0, 1})}}));
    // Full 2x2 stride-2 windows (the dedicated AVX-512 loop): rows wider than two vectors, odd
    // sizes (the last input row and column unused), a 2x2 plane.
    Cases.push_back(testCase("k2s2_wide", {tensorInput({2, 3, 6, 70})},
                             {{"kernel_shape", attrInts({2, 2})}, {"strides", attrInts({2, 2})}}));
    Cases.push_back(testCase("k2s2_odd", {tensorInput({1, 5, 9, 29})},
                             {{"kernel_shape", attrInts({2, 2})}, {"strides", attrInts({2, 2})}}));
    Cases.push_back(testCase("k2s2_tiny", {tensorInput({1, 1, 2, 3})},
                             {{"kernel_shape", attrInts({2, 2})}, {"strides", attrInts({2, 2})}}));
    Cases.push_back(testCase("resnet_stem", {tensorInput({1, 4, 23, 21})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"pads", attrInts({1, 1, 1, 1})}}));
    Cases.push_back(testCase("wide_rows_ceil", {tensorInput({1, 3, 9, 37})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"ceil_mode", attrInt(1)}, {"pads", attrInts({0, 1, 0, 1})}}));
    Cases.push_back(testCase("wide_rows_dilated", {tensorInput({1, 2, 11, 40})},
                             {{"kernel_shape", attrInts({2, 3})}, {"dilations", attrInts({2, 2})},
                              {"pads", attrInts({1, 2, 1, 2})}}));
    Cases.push_back(testCase("pad_wider_than_input", {tensorInput({1, 1, 2, 2})},
                             {{"kernel_shape", attrInts({3, 3})}, {"pads", attrInts({2, 2, 2, 2})}}));
    // The AVX2 plane kernel (8 outputs per vector): SqueezeNet's 3x3 stride-2 ceil-mode pools on
    // rows not a multiple of 8 wide, planes narrower than 8, 5x5 and 7x7 windows with dilation 2,
    // vertical stride 3, NaN inputs (a NaN in a window wins).
    Cases.push_back(testCase("avx2_k3s2_ceil_wide", {tensorInput({1, 3, 27, 57})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"ceil_mode", attrInt(1)}}));
    Cases.push_back(testCase("avx2_narrow", {tensorInput({2, 2, 7, 5})},
                             {{"kernel_shape", attrInts({3, 3})}, {"pads", attrInts({1, 1, 1, 1})}}));
    Cases.push_back(testCase("avx2_k5_dilated", {tensorInput({1, 2, 17, 37})},
                             {{"kernel_shape", attrInts({5, 5})}, {"dilations", attrInts({2, 2})},
                              {"pads", attrInts({4, 3, 2, 4})}}));
    Cases.push_back(testCase("avx2_k7_stride2_vstride3", {tensorInput({1, 2, 23, 50})},
                             {{"kernel_shape", attrInts({7, 7})}, {"strides", attrInts({3, 2})},
                              {"pads", attrInts({3, 3, 3, 3})}}));
    Cases.push_back(testCase("avx2_nan_k3s2", {valuesInput({1, 2, 13, 40}, nanSprinkled(2 * 13 * 40, 29), ElementType::F32, false)},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"pads", attrInts({1, 1, 1, 1})}}));
    Cases.push_back(testCase("avx2_nan_k3s1", {valuesInput({1, 2, 9, 35}, nanSprinkled(2 * 9 * 35, 53), ElementType::F32, false)},
                             {{"kernel_shape", attrInts({3, 3})}, {"pads", attrInts({1, 1, 1, 1})}}));
    // The AVX2 separable kernel (column maxima, then row maxima): SqueezeNet's 13- and 27-wide
    // ceil-mode planes (a partial last vector: plain tail loads and whole-vector stores except on
    // the last row), a vertical-only and a horizontal-only window, NaN through both stages, a
    // window taller than the plane with vertical dilation, stride 1 with horizontal dilation 3.
    Cases.push_back(testCase("sep_squeezenet_13", {tensorInput({1, 3, 27, 27})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"ceil_mode", attrInt(1)}}));
    Cases.push_back(testCase("sep_k4x1_s2x1", {tensorInput({2, 2, 11, 19})},
                             {{"kernel_shape", attrInts({4, 1})}, {"strides", attrInts({2, 1})},
                              {"pads", attrInts({1, 0, 2, 0})}}));
    Cases.push_back(testCase("sep_k1x5_s1x2", {tensorInput({1, 2, 3, 45})},
                             {{"kernel_shape", attrInts({1, 5})}, {"strides", attrInts({1, 2})},
                              {"pads", attrInts({0, 2, 0, 2})}, {"ceil_mode", attrInt(1)}}));
    Cases.push_back(testCase("sep_nan_k2s2", {valuesInput({1, 3, 10, 33}, nanSprinkled(3 * 10 * 33, 17), ElementType::F32, false)},
                             {{"kernel_shape", attrInts({2, 2})}, {"strides", attrInts({2, 2})},
                              {"ceil_mode", attrInt(1)}}));
    Cases.push_back(testCase("sep_tall_dilated", {tensorInput({1, 2, 4, 21})},
                             {{"kernel_shape", attrInts({5, 3})}, {"dilations", attrInts({2, 3})},
                              {"pads", attrInts({4, 3, 4, 3})}, {"strides", attrInts({3, 1})}}));
    // The AVX2 3-wide stride-2 kernel without a row buffer: an odd left pad on rows a multiple of
    // 16 wide (aligned column vectors) and on ragged ones with ceil mode and top pad 2, an even
    // left pad 2 under a 5-tall window with vertical dilation and stride 3, rows narrower than a
    // vector, NaN at the edges; several planes, as each plane's reads and last stores run into
    // the next one's.
    Cases.push_back(testCase("k3s2_pad1_aligned", {tensorInput({1, 3, 12, 64})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"pads", attrInts({1, 1, 1, 1})}}));
    Cases.push_back(testCase("k3s2_pad1_ceil", {tensorInput({2, 2, 11, 45})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"pads", attrInts({2, 1, 1, 1})}, {"ceil_mode", attrInt(1)}}));
    Cases.push_back(testCase("k3s2_pad2_tall_dilated", {tensorInput({1, 3, 17, 50})},
                             {{"kernel_shape", attrInts({5, 3})}, {"strides", attrInts({3, 2})},
                              {"dilations", attrInts({2, 1})}, {"pads", attrInts({2, 2, 2, 2})}}));
    Cases.push_back(testCase("k3s2_narrow", {tensorInput({3, 2, 5, 6})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"pads", attrInts({1, 1, 1, 1})}}));
    Cases.push_back(testCase("k3s2_nan_pad1_ceil",
                             {valuesInput({1, 3, 15, 33}, nanSprinkled(3 * 15 * 33, 11), ElementType::F32, false)},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"pads", attrInts({1, 1, 1, 1})}, {"ceil_mode", attrInt(1)}}));
    // Planes smaller than a vector of outputs: a row's whole-vector store may not reach past the
    // next plane (it ran past the tensor on random graphs).
    Cases.push_back(testCase("k3s2_tiny_planes", {tensorInput({2, 6, 8, 3})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({1, 2})}}));
    Cases.push_back(testCase("k3s2_tiny_padded", {tensorInput({2, 12, 2, 2})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"pads", attrInts({1, 2, 2, 2})}}));
    // The AVX2 3-wide stride-2 kernel's plain rows (3-tall windows, left pad 0 or 1: plain maxima,
    // the plane redone where the sum of its loaded rows is NaN): one NaN per plane, on each input
    // row (the windows' first, middle and last rows, the plane's last row checked apart) at the
    // first column, a middle odd one and the last odd one (a plain max drops an odd column's NaN),
    // then planes without NaN after them, and +inf with -inf
    // (a false alarm); vertical strides 1, 2 and 3 (rows summed per window: 1, 2, all three) and
    // dilation 2; left pad 1 (ResNet's); ceil mode where the last window's right column lies
    // outside the row (even rows, or odd ones with pad 1), rows narrower than a vector, a top pad
    // (its first row by the checked kernel).
    const auto OneNanPerPlane = [](int64_t Planes, int64_t H, int64_t W) {
      std::vector<double> V = nanSprinkled(static_cast<size_t>(Planes * H * W), static_cast<size_t>(Planes * H * W) + 2);
      const int64_t Cols[3] = {0, W / 2 | 1, (W - 2) | 1};
      for (int64_t P = 0; P < Planes && P < 3 * H; ++P)
        V[static_cast<size_t>((P * H + P / 3) * W + Cols[P % 3])] = NAN;
      if (Planes > 3 * H + 1) {
        V[static_cast<size_t>((3 * H + 1) * H * W + W + 2)] = INFINITY;
        V[static_cast<size_t>((3 * H + 1) * H * W + 2 * W + 3)] = -INFINITY;
      }
      return valuesInput({1, Planes, H, W}, std::move(V), ElementType::F32, false);
    };
    Cases.push_back(testCase("k3s2_plain_nan_each_row", {OneNanPerPlane(31, 9, 21)},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})}}));
    Cases.push_back(testCase("k3s2_plain_nan_ceil_even", {OneNanPerPlane(27, 8, 18)},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"ceil_mode", attrInt(1)}}));
    Cases.push_back(testCase("k3s2_plain_nan_vstride1", {OneNanPerPlane(23, 7, 19)},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({1, 2})}}));
    Cases.push_back(testCase("k3s2_plain_nan_vstride3_dilated", {OneNanPerPlane(35, 11, 25)},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({3, 2})},
                              {"dilations", attrInts({2, 1})}, {"pads", attrInts({1, 0, 2, 0})}}));
    Cases.push_back(testCase("k3s2_plain_nan_pad1", {OneNanPerPlane(29, 9, 24)},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"pads", attrInts({1, 1, 1, 1})}}));
    Cases.push_back(testCase("k3s2_plain_nan_pad1_ceil_odd", {OneNanPerPlane(30, 10, 25)},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"pads", attrInts({1, 1, 1, 1})}, {"ceil_mode", attrInt(1)}}));
    Cases.push_back(testCase("k3s2_plain_pad1_narrow", {tensorInput({2, 3, 6, 5})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"pads", attrInts({0, 1, 0, 1})}, {"ceil_mode", attrInt(1)}}));
    Cases.push_back(testCase("k3s2_plain_ceil_even", {tensorInput({2, 3, 11, 32})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"ceil_mode", attrInt(1)}}));
    Cases.push_back(testCase("k3s2_plain_narrow_ceil", {tensorInput({1, 5, 7, 6})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"ceil_mode", attrInt(1)}}));
    Cases.push_back(testCase("k3s2_plain_three_wide", {tensorInput({2, 3, 5, 3})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})}}));
    Cases.push_back(testCase("k3s2_plain_top_pad", {tensorInput({1, 4, 13, 29})},
                             {{"kernel_shape", attrInts({3, 3})}, {"strides", attrInts({2, 2})},
                              {"pads", attrInts({1, 0, 1, 0})}, {"ceil_mode", attrInt(1)}}));
    return Cases;
  };
  return K;
}

OPT_REGISTER_SCHEMA(MaxPool, maxPoolSchema());
OPT_REGISTER_KERNELS(MaxPool, maxPoolKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
