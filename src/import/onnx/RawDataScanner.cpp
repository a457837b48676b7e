// A minimal protobuf wire-format walker: ModelProto.graph (7) -> GraphProto.initializer (5) ->
// TensorProto.raw_data (9). Bounds-checked; any malformed input just makes it return false.
#include "import/onnx/RawDataScanner.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include <climits>

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

/// Merges [B, E), a sequence of complete fields of Msg's type, into Msg.
bool mergeFields(google::protobuf::MessageLite &Msg, const uint8_t *B, const uint8_t *E) {
  if (B == E)
    return true;
  if (E - B > INT_MAX)
    return false;
  google::protobuf::io::ArrayInputStream Stream(B, static_cast<int>(E - B));
  google::protobuf::io::CodedInputStream Coded(&Stream);
  Coded.SetTotalBytesLimit(INT_MAX);
  Coded.SetRecursionLimit(256);
  return Msg.MergePartialFromCodedStream(&Coded) && Coded.ConsumedEntireMessage();
}

} // namespace

bool parseModelWithoutRawData(const uint8_t *Data, size_t Size, onnx::ModelProto &M, std::vector<RawSpan> &Spans) {
  M.Clear();
  Spans.clear();
  Reader Model{Data, Data + Size};
  const uint8_t *Run = Data; // start of the pending run of ordinary ModelProto fields
  bool SawGraph = false;
  while (Model.P < Model.End) {
    const uint8_t *FieldStart = Model.P;
    uint32_t Num, Wire;
    const uint8_t *Payload;
    size_t Len;
    if (!Model.field(Num, Wire, Payload, Len))
      return false;
    if (Num != 7 || Wire != 2)
      continue;
    if (SawGraph)
      return false;
    SawGraph = true;
    if (!mergeFields(M, Run, FieldStart))
      return false;
    Run = Model.P;
    onnx::GraphProto *G = M.mutable_graph();
    Reader Graph{Payload, Payload + Len};
    const uint8_t *GRun = Payload;
    while (Graph.P < Graph.End) {
      const uint8_t *GField = Graph.P;
      uint32_t GNum, GWire;
      const uint8_t *TData;
      size_t TLen;
      if (!Graph.field(GNum, GWire, TData, TLen))
        return false;
      if (GNum != 5 || GWire != 2)
        continue;
      if (!mergeFields(*G, GRun, GField))
        return false;
      GRun = Graph.P;
      onnx::TensorProto *T = G->add_initializer();
      RawSpan Span;
      Reader Tensor{TData, TData + TLen};
      const uint8_t *TRun = TData;
      while (Tensor.P < Tensor.End) {
        const uint8_t *TField = Tensor.P;
        uint32_t TNum, TWire;
        const uint8_t *RData;
        size_t RLen;
        if (!Tensor.field(TNum, TWire, RData, RLen))
          return false;
        if (TNum != 9 || TWire != 2)
          continue;
        if (!mergeFields(*T, TRun, TField))
          return false;
        TRun = Tensor.P;
        Span = RawSpan{RData, RLen}; // the last raw_data wins, as protobuf's bytes fields do
      }
      if (!mergeFields(*T, TRun, Tensor.End))
        return false;
      Spans.push_back(Span);
    }
    if (!mergeFields(*G, GRun, Graph.End))
      return false;
  }
  return mergeFields(M, Run, Model.End);
}

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
