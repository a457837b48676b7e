// A minimal protobuf wire-format walker: ModelProto.graph (7) -> GraphProto.initializer (5) ->
// TensorProto.raw_data (9). Bounds-checked; any malformed input just makes it return false.
#include "import/onnx/RawDataScanner.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

struct Reader {
  const uint8_t *P;
  const uint8_t *End;

  bool varint(uint64_t &V) {
    V = 0;
    for (int Shift = 0; Shift < 64; Shift += 7) {
      if (P >= End)
        return false;
      const uint8_t B = *P++;
      V |= static_cast<uint64_t>(B & 0x7f) << Shift;
      if (!(B & 0x80))
        return true;
    }
    return false;
  }

  /// Reads one field header and, for length-delimited fields, its payload span.
  bool field(uint32_t &Number, uint32_t &Wire, const uint8_t *&Payload, size_t &Len) {
    uint64_t Key;
    if (!varint(Key))
      return false;
    Number = static_cast<uint32_t>(Key >> 3);
    Wire = static_cast<uint32_t>(Key & 7);
    Payload = nullptr;
    Len = 0;
    switch (Wire) {
    case 0: {
      uint64_t Ignored;
      return varint(Ignored);
    }
    case 1:
      if (End - P < 8)
        return false;
      P += 8;
      return true;
    case 5:
      if (End - P < 4)
        return false;
      P += 4;
      return true;
    case 2: {
      uint64_t L;
      if (!varint(L) || L > static_cast<uint64_t>(End - P))
        return false;
      Payload = P;
      Len = static_cast<size_t>(L);
      P += L;
      return true;
    }
    default: // groups (3/4) are not used by ONNX
      return false;
    }
  }
};

} // namespace

bool scanInitializerRawData(const uint8_t *Data, size_t Size, std::vector<RawSpan> &Out) {
  Out.clear();
  Reader Model{Data, Data + Size};
  const uint8_t *GraphData = nullptr;
  size_t GraphLen = 0;
  while (Model.P < Model.End) {
    uint32_t Num, Wire;
    const uint8_t *Payload;
    size_t Len;
    if (!Model.field(Num, Wire, Payload, Len))
      return false;
    if (Num == 7 && Wire == 2) {
      GraphData = Payload; // the last occurrence wins, as protobuf merges
      GraphLen = Len;
    }
  }
  if (!GraphData)
    return true;
  Reader Graph{GraphData, GraphData + GraphLen};
  while (Graph.P < Graph.End) {
    uint32_t Num, Wire;
    const uint8_t *Payload;
    size_t Len;
    if (!Graph.field(Num, Wire, Payload, Len))
      return false;
    if (Num != 5 || Wire != 2)
      continue;
    RawSpan Span;
    Reader Tensor{Payload, Payload + Len};
    while (Tensor.P < Tensor.End) {
      uint32_t TNum, TWire;
      const uint8_t *TPayload;
      size_t TLen;
      if (!Tensor.field(TNum, TWire, TPayload, TLen))
        return false;
      if (TNum == 9 && TWire == 2)
        Span = RawSpan{TPayload, TLen};
    }
    Out.push_back(Span);
  }
  return true;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
