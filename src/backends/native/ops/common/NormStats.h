// Mean / inverse standard deviation of contiguous blocks, shared by InstanceNormalization and
// GroupNormalization: each block of Size elements is normalized in place semantics
// y = (x - mean) * invstd * scale[ch] + bias[ch], where the channel changes every ChannelSize.
#pragma once

#include "backends/native/ops/common/NormCommon.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

/// Normalizes Blocks blocks of BlockSize elements of X into Y. Block B covers channels
/// [B % BlocksPerImage * ChPerBlock, ...) of ChannelSize elements each; Scale/Bias are indexed by
/// ParamOf(block, channel-in-image).
template <typename ParamFn>
void normalizeBlocks(const KernelContext &Ctx, bool Par, const TensorView &X, const TensorView &Y, int64_t Blocks,
                     int64_t BlockSize, int64_t ChannelSize, float Epsilon, ParamFn ParamOf) {
  forRangeMaybe(Ctx, Par, static_cast<size_t>(Blocks), 1, [&](size_t Lo, size_t Hi) {
    std::vector<float> Row(static_cast<size_t>(BlockSize));
    for (size_t B = Lo; B < Hi; ++B) {
      const size_t Base = B * static_cast<size_t>(BlockSize);
      double Sum = 0;
      for (int64_t I = 0; I < BlockSize; ++I)
        Sum += (Row[I] = loadFloat(X, Base + I));
      const double Mean = BlockSize ? Sum / static_cast<double>(BlockSize) : 0.0;
      double Sq = 0;
      for (int64_t I = 0; I < BlockSize; ++I) {
        const double D = Row[I] - Mean;
        Sq += D * D;
      }
      const double Var = BlockSize ? Sq / static_cast<double>(BlockSize) : 0.0;
      const float Inv = static_cast<float>(1.0 / std::sqrt(Var + Epsilon));
      const float M = static_cast<float>(Mean);
      for (int64_t I = 0; I < BlockSize; ++I) {
        float S, Bv;
        ParamOf(static_cast<int64_t>(B), I / std::max<int64_t>(ChannelSize, 1), S, Bv);
        storeFloat(Y, Base + I, (Row[I] - M) * Inv * S + Bv);
      }
    }
  });
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
