// Finds the raw_data bytes of the main graph's initializers inside the serialized model, so weights
// can be used in place (zero copy) instead of through protobuf's string copies, and parses a model
// without ever copying those bytes (so loading a 200 MB model does not hold a second 200 MB copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace onnx {
class ModelProto;
}

namespace optimium {
namespace runtime {
namespace detail {

struct RawSpan {
  const uint8_t *Data = nullptr;
  size_t Size = 0;
};

/// One entry per initializer of ModelProto.graph, in order (empty span when it has no raw_data).
/// Returns false when the bytes cannot be walked (the caller then falls back to copies).
bool scanInitializerRawData(const uint8_t *Data, size_t Size, std::vector<RawSpan> &Out);

/// Parses Data into M as ParseFromArray would, except that the raw_data payloads of the main
/// graph's initializers are left out of M: Spans gets one entry per initializer, in order, pointing
/// at them in Data (empty when it has none). Each run of ordinary fields is merged with protobuf's
/// own parser, so everything else is parsed exactly as usual. Returns false on malformed bytes or a
/// layout it does not handle (more than one graph field); the caller then parses normally.
bool parseModelWithoutRawData(const uint8_t *Data, size_t Size, onnx::ModelProto &M, std::vector<RawSpan> &Spans);

} // namespace detail
} // namespace runtime
} // namespace optimium
