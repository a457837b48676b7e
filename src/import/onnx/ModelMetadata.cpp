// Typed model attributes: JSON values of "optimium.attr.*" metadata keys -> Attribute trees.
#include "import/onnx/ModelMetadata.h"

#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

Result<Attribute> fromJson(const nlohmann::json &J, const std::string &Key, const std::string &Path) {
  using nlohmann::json;
  switch (J.type()) {
  case json::value_t::null:
    return makeError(ErrorCode::Model, "model attribute '", Key, "': null is not an attribute value (at ",
                     Path.empty() ? std::string("the top level") : Path, ")");
  case json::value_t::boolean:
    return Attribute::getBool(J.get<bool>());
  case json::value_t::number_integer:
    return Attribute::getInt(AttributeKind::I64, J.get<int64_t>());
  case json::value_t::number_unsigned: {
    const uint64_t U = J.get<uint64_t>();
    if (U <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return Attribute::getInt(AttributeKind::I64, static_cast<int64_t>(U));
    return Attribute::getUInt(AttributeKind::U64, U);
  }
  case json::value_t::number_float:
    return Attribute::getFloat(AttributeKind::F64, J.get<double>());
  case json::value_t::string:
    return Attribute::getString(J.get<std::string>());
  case json::value_t::array: {
    std::vector<Attribute> Items;
    for (size_t I = 0; I < J.size(); ++I) {
      ASSIGN_OR_RETURN(Attribute A, fromJson(J[I], Key, Path + "[" + std::to_string(I) + "]"));
      Items.push_back(std::move(A));
    }
    return Attribute::getList(Items);
  }
  case json::value_t::object: {
    std::map<std::string, Attribute> Items;
    for (auto It = J.begin(); It != J.end(); ++It) {
      ASSIGN_OR_RETURN(Attribute A, fromJson(It.value(), Key, Path + "." + It.key()));
      Items.emplace(It.key(), std::move(A));
    }
    return Attribute::getMap(Items);
  }
  default:
    return makeError(ErrorCode::Model, "model attribute '", Key, "': unsupported JSON value");
  }
}

} // namespace

Result<std::map<std::string, Attribute>>
readModelMetadata(const std::vector<std::pair<std::string, std::string>> &Props) {
  std::map<std::string, Attribute> Out;
  const size_t PrefixLen = std::strlen(kTypedAttributePrefix);
  for (const auto &P : Props) {
    const std::string &Key = P.first;
    std::string Name = Key;
    Attribute A;
    if (Key.compare(0, PrefixLen, kTypedAttributePrefix) == 0) {
      Name = Key.substr(PrefixLen);
      if (Name.empty())
        return makeError(ErrorCode::Model, "model metadata key '", Key, "' names no attribute after '",
                         kTypedAttributePrefix, "'");
      nlohmann::json J;
      try {
        J = nlohmann::json::parse(P.second);
      } catch (const nlohmann::json::exception &E) {
        return makeError(ErrorCode::Model, "model metadata key '", Key, "' must hold JSON: ", E.what());
      }
      ASSIGN_OR_RETURN(A, fromJson(J, Key, ""));
    } else {
      A = Attribute::getString(P.second);
    }
    if (!Out.emplace(Name, std::move(A)).second)
      return makeError(ErrorCode::Model, "model attribute '", Name, "' is given twice in the metadata (key '", Key,
                       "')");
  }
  return Out;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
