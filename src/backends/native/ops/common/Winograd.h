// Winograd F(4x4, 3x3) and F(2x2, 3x3) convolution for 3x3 stride-1 dilation-1 group-1 Conv (f32,
// NCHW): 36 multiplies per 4x4 output tile and channel pair instead of 144 (F(2x2): 16 instead of
// 36, with a transformed weight 1.8x the size of the weight instead of 4x, for layers whose weights
// stream from memory). Weights are transformed and packed once (one packed GEMM B per transform
// point and 64-column block of output channels); per run, input tiles are transformed into 36 (16)
// row-major matrices (tiles x channels), multiplied by the packed GEMM, and the output transform
// adds bias, a residual and the clamp on the way out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/native/ops/common/Gemm.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// What the output transform applies to each output value v: v + Bias[k] (+ Residual at the same
/// NCHW position), then the fused activation.
struct WinogradEpilogue {
  const float *Bias = nullptr;     ///< per output channel, or nullptr
  const float *Residual = nullptr; ///< same shape as the output (one image), or nullptr
  FusedAct Act; ///< the fused activation
};

/// Geometry of one image: input H x W, output OH x OW, top/left padding (any padding: positions
/// outside the input read as zero).
struct WinogradGeometry {
  int64_t H = 0, W = 0, OH = 0, OW = 0, PadTop = 0, PadLeft = 0;
};

class Winograd3x3 {
public:
  /// Transforms and packs Wt ([K][C][3][3]) for MK's GEMM, for output tiles of Tile x Tile (4 or
  /// 2). Transforms selects the input/output transforms: AVX-512 (16 channels per vector), AVX2 +
  /// FMA (8) or portable; the caller checked the CPU (gemmIsaAvailable).
  Winograd3x3(const GemmMicroKernel &MK, GemmIsa Transforms, const float *Wt, int64_t K, int64_t C, int Tile,
              const std::string &CacheKey = std::string());

  /// Y (one image, [K][OH][OW]) = conv(X ([C][H][W])) with the epilogue, split over Par.
  void run(const float *X, const WinogradGeometry &G, float *Y, const WinogradEpilogue &Ep,
           const Parallel &Par) const;

  /// The output tile (4: F(4x4, 3x3), 2: F(2x2, 3x3)) that beats the direct GEMM for this shape on
  /// Isa's tier, or 0 for none (measured per ResNet/VGG/SqueezeNet layer shape: AVX-512 (and the
  /// portable variant) on Emerald Rapids, AVX2 on Zen 3; see Winograd.cpp).
  static int tileFor(int64_t C, int64_t K, int64_t OH, int64_t OW, GemmIsa Isa = GemmIsa::Avx512);

  int tile() const { return Tile; }

private:
  template <int TileT>
  void runTiles(const float *X, const WinogradGeometry &G, float *Y, const WinogradEpilogue &Ep,
                const Parallel &Par) const;

  const GemmMicroKernel &MK;
  GemmIsa Transforms;
  int Tile, Points;
  int64_t K, C, Cp, Kp, Splits;
  AlignedFloats Store;    ///< one block holding every U below (huge pages, one allocation)
  std::vector<PackedB> U; ///< [point * Splits + split]: Cp x (up to kSplitCols) columns, in Store
};

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
