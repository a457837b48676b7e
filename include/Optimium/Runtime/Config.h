// Process-wide settings of how tensors print (StreamHelper.h).
#pragma once

#include "Optimium/Runtime/Export.h"

namespace optimium {
namespace runtime {
namespace config {

/// Max elements printed per dimension before eliding with "..."; negative = unlimited (default 8).
OPTIMIUM_RT_API void setPrintThreshold(int Threshold);
OPTIMIUM_RT_API int getPrintThreshold();
/// Decimal digits printed for floating-point elements, 0-15 (default 6).
OPTIMIUM_RT_API void setPrintPrecision(int Precision);
OPTIMIUM_RT_API int getPrintPrecision();

} // namespace config
} // namespace runtime
} // namespace optimium
