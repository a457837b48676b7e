// The Open Inference Protocol (KServe V2) REST messages: the inference request's JSON header (with
// Triton's binary tensor data extension), tensor conversion in both directions, datatype names and
// the JSON writers of the responses. Model-independent parsing is separate from the checks against
// a model so the fuzzer and the unit tests reach it without one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <Optimium/Runtime.h>

namespace optimium {
namespace remote {
namespace oip {

/// OIP datatype name of an element type ("FP32", "INT64", "BOOL", "BYTES", ...); empty for types
/// the protocol has no name for (float8, 4-bit and 2-bit types).
std::string datatypeName(runtime::ElementType Type);
/// The element type of an OIP datatype name; Undefined when unknown.
runtime::ElementType elementTypeOf(const std::string &Datatype);

struct OipInput {
  std::string Name;
  std::string Datatype;
  std::vector<int64_t> Shape;
  bool HasJsonData = false;
  nlohmann::json Data;        ///< the "data" member (flat or nested), when HasJsonData
  bool Binary = false;        ///< "parameters": {"binary_data_size": N}
  uint64_t BinarySize = 0;
  size_t BinaryOffset = 0;    ///< where its bytes start in the body (set by parseInferRequest)
};

struct OipRequestedOutput {
  std::string Name;
  int Binary = -1; ///< -1: not said (request default), 0: JSON, 1: binary
};

struct OipInferRequest {
  bool HasId = false;
  std::string Id;
  std::vector<OipInput> Inputs;
  bool HasOutputs = false; ///< "outputs" given: only those are returned
  std::vector<OipRequestedOutput> Outputs;
  bool BinaryOutputDefault = false; ///< request-level "binary_data_output"
};

/// Parses and validates the JSON inference request header Header[0..HeaderSize) and lays out the
/// binary inputs over the BinarySize bytes that follow it (they must add up exactly). Checks the
/// structure only (names unique, shapes non-negative, data or binary_data_size per input, known
/// datatypes); the model checks come with makeInputTensor(). Error: a message for a 400.
bool parseInferRequest(const char *Header, size_t HeaderSize, size_t BinarySize, OipInferRequest &Out,
                       std::string &Error);

/// Builds the tensor for In, checked against the model's input Info (datatype, rank, fixed dims,
/// data size or element count). Binary bytes come from Body (the whole request body; In.BinaryOffset
/// indexes it). Error names the tensor with expected vs actual.
bool makeInputTensor(const OipInput &In, const runtime::TensorInfo &Info, const char *Body,
                     runtime::Tensor &Out, std::string &Error);

/// Appends `"data":[...]` content (the flat element list, without the key) of T as JSON to Out;
/// false when the type has no JSON form (Error set).
bool appendJsonData(const runtime::Tensor &T, std::string &Out, std::string &Error);
/// Appends T's raw bytes as sent by the binary extension (BYTES: 4-byte little-endian length
/// prefix per element).
bool appendBinaryData(const runtime::Tensor &T, std::string &Out, std::string &Error);

/// A JSON string literal (escaped, quoted).
std::string jsonString(const std::string &S);

/// The model metadata response: name, versions, platform, inputs and outputs (-1 for symbolic dims).
std::string modelMetadataJson(const std::string &Name, const runtime::Model &M);

} // namespace oip
} // namespace remote
} // namespace optimium
