// optimium-mark's library: reads the ONNX graph's input/output names, expands the glob patterns,
// and merges the result into optimium.json (parsed and written by the runtime's Manifest code).
#include "tools/MarkModel.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "import/Manifest.h"

namespace optimium {
namespace tools {

namespace {

bool isFile(const std::string &P) {
  struct stat St;
  return ::stat(P.c_str(), &St) == 0 && S_ISREG(St.st_mode);
}

bool parseShape(const std::string &Text, std::vector<int64_t> &Dims) {
  Dims.clear();
  if (Text == "x" || Text == "scalar")
    return true;
  std::stringstream SS(Text);
  std::string Part;
  while (std::getline(SS, Part, 'x')) {
    if (Part.empty() || Part.find_first_not_of("0123456789") != std::string::npos)
      return false;
    Dims.push_back(std::stoll(Part));
  }
  return !Dims.empty() && Text.back() != 'x';
}

} // namespace

bool globMatch(const std::string &Pattern, const std::string &Name, std::string *Captured) {
  const size_t Star = Pattern.find('*');
  if (Star == std::string::npos)
    return Pattern == Name;
  const std::string Pre = Pattern.substr(0, Star), Post = Pattern.substr(Star + 1);
  if (Name.size() < Pre.size() + Post.size() || Name.compare(0, Pre.size(), Pre) != 0 ||
      Name.compare(Name.size() - Post.size(), Post.size(), Post) != 0)
    return false;
  if (Captured)
    *Captured = Name.substr(Pre.size(), Name.size() - Pre.size() - Post.size());
  return true;
}

std::string markModel(const MarkOptions &O, std::ostream &Summary) {
  const std::string OnnxPath = O.ModelFolder + "/model.onnx";
  if (!isFile(OnnxPath))
    return "'" + O.ModelFolder + "' is not a model folder (no model.onnx)";
  onnx::ModelProto Model;
  {
    std::ifstream In(OnnxPath, std::ios::binary);
    if (!Model.ParseFromIstream(&In))
      return "'" + OnnxPath + "' is not a valid ONNX model";
  }
  std::set<std::string> Initializers;
  for (const auto &T : Model.graph().initializer())
    Initializers.insert(T.name());
  std::vector<std::string> Inputs, Outputs;
  for (const auto &VI : Model.graph().input())
    if (!Initializers.count(VI.name()))
      Inputs.push_back(VI.name());
  for (const auto &VI : Model.graph().output())
    Outputs.push_back(VI.name());

  const std::string ManifestPath = O.ModelFolder + "/optimium.json";
  runtime::detail::Manifest Man;
  Man.Path = ManifestPath;
  if (isFile(ManifestPath)) {
    auto R = runtime::detail::readManifest(ManifestPath);
    if (!R.isOk())
      return R.status().message();
    Man = std::move(R).value();
  }

  for (const std::string &Spec : O.Preserve) {
    const size_t Eq = Spec.find('=');
    const std::string Pat = Spec.substr(0, Eq);
    const std::string OutPat = Eq == std::string::npos ? "" : Spec.substr(Eq + 1);
    if (Pat.empty() || std::count(Pat.begin(), Pat.end(), '*') > 1 || std::count(OutPat.begin(), OutPat.end(), '*') > 1 ||
        (Eq != std::string::npos && OutPat.empty()))
      return "--preserve '" + Spec + "': expected PATTERN or PATTERN=OUTPUT_PATTERN (at most one '*' each)";
    if (OutPat.find('*') != std::string::npos && Pat.find('*') == std::string::npos)
      return "--preserve '" + Spec + "': the output pattern has a '*' but the input pattern does not";
    size_t Matched = 0;
    for (const std::string &In : Inputs) {
      std::string Cap;
      if (!globMatch(Pat, In, &Cap))
        continue;
      ++Matched;
      std::string Out = OutPat;
      const size_t Star = Out.find('*');
      if (Star != std::string::npos)
        Out.replace(Star, 1, Cap);
      if (!Out.empty() && std::find(Outputs.begin(), Outputs.end(), Out) == Outputs.end())
        return "--preserve '" + Spec + "': input '" + In + "' would be updated from '" + Out +
               "', which is not a graph output";
      runtime::detail::ManifestEntry &E = Man.getOrAdd(In);
      E.Preserved = true;
      E.UpdateFrom = Out;
      Summary << "preserve " << In << (Out.empty() ? "" : " <- " + Out) << "\n";
    }
    if (!Matched)
      return "--preserve '" + Spec + "': no graph input matches '" + Pat + "'";
  }
  for (const std::string &Spec : O.Resizable) {
    const size_t Eq = Spec.find('=');
    std::vector<int64_t> Dims;
    if (Eq == std::string::npos || Eq == 0 || !parseShape(Spec.substr(Eq + 1), Dims))
      return "--resizable '" + Spec + "': expected PATTERN=DxDx... (e.g. past_*=1x8x0x64)";
    const std::string Pat = Spec.substr(0, Eq);
    size_t Matched = 0;
    for (const std::string &In : Inputs) {
      if (!globMatch(Pat, In, nullptr))
        continue;
      ++Matched;
      runtime::detail::ManifestEntry &E = Man.getOrAdd(In);
      E.Resizable = true;
      E.HasBaseShape = true;
      E.BaseShape = Dims;
      Summary << "resizable " << In << " base " << Spec.substr(Eq + 1) << "\n";
    }
    if (!Matched)
      return "--resizable '" + Spec + "': no graph input matches '" + Pat + "'";
  }
  // Round-trip through the parser so a written manifest is always one the runtime accepts.
  const std::string Text = runtime::detail::serializeManifest(Man);
  auto Check = runtime::detail::parseManifest(Text, ManifestPath);
  if (!Check.isOk())
    return Check.status().message();
  std::ofstream Out(ManifestPath, std::ios::binary | std::ios::trunc);
  Out << Text;
  if (!Out)
    return "cannot write '" + ManifestPath + "'";
  Summary << "wrote " << ManifestPath << "\n";
  return "";
}

int markModelMain(int Argc, char **Argv, std::ostream &Out, std::ostream &Err) {
  MarkOptions O;
  const char *Usage = "usage: optimium-mark <model-folder> [--preserve 'PAT[=OUTPAT]']... [--resizable 'PAT=DxD...']...\n";
  for (int I = 1; I < Argc; ++I) {
    const std::string A = Argv[I];
    auto Value = [&](const std::string &Flag, std::vector<std::string> &Into) {
      if (A.compare(0, Flag.size() + 1, Flag + "=") == 0) {
        Into.push_back(A.substr(Flag.size() + 1));
        return true;
      }
      if (A == Flag && I + 1 < Argc) {
        Into.push_back(Argv[++I]);
        return true;
      }
      return false;
    };
    if (A == "--help" || A == "-h") {
      Out << Usage;
      return 0;
    }
    if (Value("--preserve", O.Preserve) || Value("--resizable", O.Resizable))
      continue;
    if (A.compare(0, 2, "--") == 0 || !O.ModelFolder.empty()) {
      Err << "optimium-mark: unexpected argument '" << A << "'\n" << Usage;
      return 1;
    }
    O.ModelFolder = A;
  }
  if (O.ModelFolder.empty() || (O.Preserve.empty() && O.Resizable.empty())) {
    Err << Usage;
    return 1;
  }
  const std::string Error = markModel(O, Out);
  if (!Error.empty()) {
    Err << "optimium-mark: " << Error << "\n";
    return 1;
  }
  return 0;
}

int markModelMain(int Argc, char **Argv) { return markModelMain(Argc, Argv, std::cout, std::cerr); }

} // namespace tools
} // namespace optimium
