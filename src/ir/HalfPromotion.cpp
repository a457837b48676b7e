// Conversions behind half-precision promotion.
#include "ir/HalfPromotion.h"

#include "Optimium/Runtime/Types.h"

namespace optimium {
namespace runtime {
namespace detail {

bool isHalfType(ElementType T) { return T == ElementType::F16 || T == ElementType::BF16; }

bool hasHalfValues(const std::vector<ValueInfo> &Infos) {
  for (const ValueInfo &V : Infos)
    if (V.Present && isHalfType(V.Type))
      return true;
  return false;
}

ElementType halfTypeOf(const std::vector<ValueInfo> &Infos) {
  ElementType T = ElementType::Undefined;
  for (const ValueInfo &V : Infos)
    if (V.Present && isHalfType(V.Type) && T != ElementType::F16)
      T = V.Type;
  return T;
}

std::vector<ValueInfo> promoteHalfToFloat(const std::vector<ValueInfo> &Infos) {
  std::vector<ValueInfo> Out = Infos;
  for (ValueInfo &V : Out) {
    if (!V.Present || !isHalfType(V.Type))
      continue;
    if (V.Const) {
      auto C = ConstData::allocate(ElementType::F32, V.Const->Dims);
      float *Dst = static_cast<float *>(C->mutableData());
      const uint16_t *Src = static_cast<const uint16_t *>(V.Const->Data);
      for (size_t I = 0; I < C->elementCount(); ++I)
        Dst[I] = V.Type == ElementType::F16 ? float16::toFloat(Src[I]) : bfloat16::toFloat(Src[I]);
      V.Const = C;
    }
    V.Type = ElementType::F32;
  }
  return Out;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
