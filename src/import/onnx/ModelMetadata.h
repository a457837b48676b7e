// Model attributes from ONNX metadata_props: a plain key is a StringAttr; a key
// "optimium.attr.<name>" holds JSON and becomes a typed attribute <name> (see README).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "Optimium/Runtime/Attribute.h"
#include "core/Status.h"

namespace optimium {
namespace runtime {
namespace detail {

/// The prefix of typed attribute keys.
constexpr const char *kTypedAttributePrefix = "optimium.attr.";

/// Converts metadata_props (key, value) pairs, in file order, to model attributes. JSON numbers
/// that are integers become I64Attr (U64Attr above INT64_MAX), other numbers F64Attr, true/false
/// BoolAttr, strings StringAttr, arrays ListAttr, objects MapAttr. Invalid JSON, null values,
/// an empty name and a name given twice are ModelErrors naming the key.
Result<std::map<std::string, Attribute>>
readModelMetadata(const std::vector<std::pair<std::string, std::string>> &Props);

} // namespace detail
} // namespace runtime
} // namespace optimium
