// --flagfile expansion; see Flagfile.h.
#include "tools/Flagfile.h"

#include <fstream>

#include "tools/Npy.h"
#include "tools/TextUtil.h"

namespace optimium {
namespace tools {

std::vector<std::string> expandFlagfiles(const std::vector<std::string> &Args, int Depth) {
  if (Depth > 16)
    throw ToolError("--flagfile nesting deeper than 16 (a flagfile includes itself?)");
  std::vector<std::string> Out;
  for (const std::string &A : Args) {
    if (!startsWith(A, "--flagfile=") && !startsWith(A, "-flagfile=")) {
      Out.push_back(A);
      continue;
    }
    const std::string Path = A.substr(A.find('=') + 1);
    std::ifstream F(Path);
    if (Path.empty() || !F)
      throw ToolError("--flagfile: cannot open '" + Path + "'");
    std::vector<std::string> Lines;
    std::string Line;
    while (std::getline(F, Line)) {
      Line = trim(Line);
      if (Line.empty() || Line[0] == '#')
        continue;
      Lines.push_back(Line);
    }
    for (std::string &L : expandFlagfiles(Lines, Depth + 1))
      Out.push_back(std::move(L));
  }
  return Out;
}

} // namespace tools
} // namespace optimium
