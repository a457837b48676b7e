// Minimal .npy writer for intermediate dumps (IntermediateSavePath).
#pragma once

#include <string>
#include <vector>

#include "Optimium/Runtime/ElementType.h"
#include "core/Status.h"

namespace optimium {
namespace runtime {
namespace detail {

Status writeNpy(const std::string &Path, ElementType Type, const std::vector<int64_t> &Dims, const void *Data);

} // namespace detail
} // namespace runtime
} // namespace optimium
