// float16/bfloat16 through float32 implementations: an op whose schema and kernels only take
// float32 still runs half-precision tensors, converted at the op boundary (computed in float32,
// rounded once at the output, which is at least as accurate as computing in half precision).
#pragma once

#include "ir/OpSchema.h"

namespace optimium {
namespace runtime {
namespace detail {

bool isHalfType(ElementType T);
/// Whether any present input or output of the infos is float16/bfloat16.
bool hasHalfValues(const std::vector<ValueInfo> &Infos);
/// The same infos with float16/bfloat16 replaced by float32 (constants converted too).
std::vector<ValueInfo> promoteHalfToFloat(const std::vector<ValueInfo> &Infos);
/// The half type a node works in (float16 wins over bfloat16), Undefined when none.
ElementType halfTypeOf(const std::vector<ValueInfo> &Infos);

} // namespace detail
} // namespace runtime
} // namespace optimium
