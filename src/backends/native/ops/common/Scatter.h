// The reduction attribute shared by ScatterND and ScatterElements: none, add, mul (opset 16),
// max, min (opset 18), applied in the element type's arithmetic.
#pragma once

#include "backends/native/ops/common/Indexing.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {

enum class ScatterReduction { None, Add, Mul, Max, Min };

inline Result<ScatterReduction> scatterReduction(const Node &N) {
  ASSIGN_OR_RETURN(const std::string R, N.getString("reduction", "none"));
  const bool V16 = N.OpsetVersion == 0 || N.OpsetVersion >= 16, V18 = N.OpsetVersion == 0 || N.OpsetVersion >= 18;
  if (R == "none")
    return ScatterReduction::None;
  if (R == "add" && V16)
    return ScatterReduction::Add;
  if (R == "mul" && V16)
    return ScatterReduction::Mul;
  if (R == "max" && V18)
    return ScatterReduction::Max;
  if (R == "min" && V18)
    return ScatterReduction::Min;
  return makeError(ErrorCode::Model, N.describe(), ": attribute 'reduction' value '", R, "' is not supported at opset ",
                   N.OpsetVersion, " (none", V16 ? ", add, mul" : "", V18 ? ", max, min" : "", ")");
}

/// Dst = reduce(Dst, Src) for one element of type T.
template <typename T> inline void scatterApply(T &Dst, const T &Src, ScatterReduction R) {
  using C = typename ComputeType<T>::type;
  const C A = static_cast<C>(Dst), B = static_cast<C>(Src);
  switch (R) {
  case ScatterReduction::None: Dst = Src; break;
  case ScatterReduction::Add: Dst = static_cast<T>(A + B); break;
  case ScatterReduction::Mul: Dst = static_cast<T>(A * B); break;
  case ScatterReduction::Max: Dst = static_cast<T>(A < B ? B : A); break;
  case ScatterReduction::Min: Dst = static_cast<T>(B < A ? B : A); break;
  }
}

} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
