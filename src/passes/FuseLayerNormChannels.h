// LayerNorm over the channels of an NCHW tensor as one op: Transpose (channel axis to the end,
// perm [0, 2, ..., r-1, 1]) -> LayerNormalization (last axis, one output) -> Transpose (back, perm
// [0, r-1, 1, ..., r-2]) becomes com.optimium LayerNormChannels (ir/FusedOps.h) on the first
// Transpose's input: ConvNeXt's stem and downsampling "LayerNorm2d" as PyTorch exports it.
#pragma once

#include <cstddef>

#include "ir/Graph.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Returns the number of LayerNorms rewritten. Callers skip it when every intermediate must stay
/// readable.
size_t fuseLayerNormChannels(Graph &G);

/// The same without the Transpose back: Transpose (channels to the end) -> LayerNormalization (last
/// axis) becomes LayerNormChannels with channels_last = 1 (ConvNeXt's blocks, whose MLP reads the
/// result channels last); one pass over the tensor instead of two. Run after fuseLayerNormChannels,
/// which takes the chains that do transpose back. Returns the number rewritten.
size_t fuseLayerNormChannelsLast(Graph &G);

} // namespace detail
} // namespace runtime
} // namespace optimium
