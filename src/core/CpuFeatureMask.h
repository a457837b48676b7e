// CPU features as a stored bit mask (compiled model folders record the features their passes were
// gated on). Implemented in CpuFeatures.cpp beside the feature table.
#pragma once

#include <cstdint>
#include <string>

#include "core/CpuFeatures.h"

namespace optimium {
namespace runtime {
namespace detail {

/// The features as a bit mask: bit I = the I-th name of CpuFeatures::toString()'s order. Compiled
/// model folders store it, so the order is append-only.
uint64_t cpuFeatureMask(const CpuFeatures &F);
/// The names of the features set in Mask that Have lacks, space-separated ("" when none).
std::string missingCpuFeatures(uint64_t Mask, const CpuFeatures &Have);

} // namespace detail
} // namespace runtime
} // namespace optimium
