// optimium.json: parse, serialize, locate (nlohmann-json; errors name the file and the key).
#include "import/Manifest.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace optimium {
namespace runtime {
namespace detail {

using nlohmann::json;

const ManifestEntry *Manifest::find(const std::string &Name) const {
  for (const ManifestEntry &E : Tensors)
    if (E.Name == Name)
      return &E;
  return nullptr;
}

ManifestEntry &Manifest::getOrAdd(const std::string &Name) {
  for (ManifestEntry &E : Tensors)
    if (E.Name == Name)
      return E;
  Tensors.emplace_back();
  Tensors.back().Name = Name;
  return Tensors.back();
}

Result<Manifest> parseManifest(const std::string &Text, const std::string &Path) {
  auto Bad = [&](const std::string &Key, const std::string &Why) {
    return makeError(ErrorCode::Model, "manifest '", Path, "': ", Key.empty() ? "" : "'" + Key + "': ", Why);
  };
  json J = json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded())
    return Bad("", "not valid JSON");
  if (!J.is_object())
    return Bad("", "the top level must be an object");
  Manifest M;
  M.Path = Path;
  for (auto It = J.begin(); It != J.end(); ++It)
    if (It.key() != "optimium_manifest" && It.key() != "tensors")
      return Bad(It.key(), "unknown key (expected optimium_manifest, tensors)");
  if (!J.contains("optimium_manifest") || !J["optimium_manifest"].is_number_integer() ||
      J["optimium_manifest"].get<int64_t>() != kManifestVersion)
    return Bad("optimium_manifest", "must be " + std::to_string(kManifestVersion));
  if (!J.contains("tensors"))
    return M;
  const json &Tensors = J["tensors"];
  if (!Tensors.is_object())
    return Bad("tensors", "must be an object mapping tensor names to entries");
  for (auto It = Tensors.begin(); It != Tensors.end(); ++It) {
    const std::string Key = "tensors." + It.key();
    const json &E = It.value();
    if (!E.is_object())
      return Bad(Key, "must be an object");
    ManifestEntry Entry;
    Entry.Name = It.key();
    for (auto F = E.begin(); F != E.end(); ++F) {
      const std::string FK = Key + "." + F.key();
      const json &V = F.value();
      if (F.key() == "preserved" || F.key() == "resizable") {
        if (!V.is_boolean())
          return Bad(FK, "must be true or false");
        (F.key() == "preserved" ? Entry.Preserved : Entry.Resizable) = V.get<bool>();
      } else if (F.key() == "update_from") {
        if (!V.is_string() || V.get<std::string>().empty())
          return Bad(FK, "must be the name of a graph output");
        Entry.UpdateFrom = V.get<std::string>();
      } else if (F.key() == "base_shape") {
        if (!V.is_array())
          return Bad(FK, "must be an array of non-negative integers");
        for (const json &D : V) {
          if (!D.is_number_integer() || D.get<int64_t>() < 0)
            return Bad(FK, "must be an array of non-negative integers");
          Entry.BaseShape.push_back(D.get<int64_t>());
        }
        Entry.HasBaseShape = true;
      } else {
        return Bad(FK, "unknown key (expected preserved, resizable, update_from, base_shape)");
      }
    }
    if (!Entry.UpdateFrom.empty() && !Entry.Preserved)
      return Bad(Key + ".update_from", "needs \"preserved\": true");
    M.Tensors.push_back(std::move(Entry));
  }
  return M;
}

Result<Manifest> readManifest(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return makeError(ErrorCode::IO, "cannot read manifest '", Path, "'");
  std::stringstream SS;
  SS << In.rdbuf();
  return parseManifest(SS.str(), Path);
}

std::string serializeManifest(const Manifest &M) {
  json Tensors = json::object();
  for (const ManifestEntry &E : M.Tensors) {
    json Entry = json::object();
    if (E.Preserved)
      Entry["preserved"] = true;
    if (E.Resizable)
      Entry["resizable"] = true;
    if (!E.UpdateFrom.empty())
      Entry["update_from"] = E.UpdateFrom;
    if (E.HasBaseShape)
      Entry["base_shape"] = E.BaseShape;
    Tensors[E.Name] = std::move(Entry);
  }
  json J = json::object();
  J["optimium_manifest"] = kManifestVersion;
  J["tensors"] = std::move(Tensors);
  return J.dump(2) + "\n";
}

std::string manifestPathFor(const std::string &ModelPath) {
  struct stat St;
  if (::stat(ModelPath.c_str(), &St) != 0)
    return "";
  std::string Candidate;
  if (S_ISDIR(St.st_mode)) {
    Candidate = ModelPath + "/optimium.json";
  } else {
    const size_t Slash = ModelPath.find_last_of('/');
    const std::string Dir = Slash == std::string::npos ? "." : ModelPath.substr(0, Slash);
    std::string Base = Slash == std::string::npos ? ModelPath : ModelPath.substr(Slash + 1);
    const size_t Dot = Base.rfind(".onnx");
    if (Dot != std::string::npos && Dot + 5 == Base.size())
      Base = Base.substr(0, Dot);
    Candidate = Base == "model" ? Dir + "/optimium.json" : Dir + "/" + Base + ".optimium.json";
  }
  return ::stat(Candidate.c_str(), &St) == 0 ? Candidate : "";
}

} // namespace detail
} // namespace runtime
} // namespace optimium
