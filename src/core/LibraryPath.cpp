// Where the runtime's own shared library lives (see LibraryPath.h).
#include "core/LibraryPath.h"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>

namespace optimium {
namespace runtime {
namespace detail {

std::string thisLibraryPath() {
  Dl_info Info{};
  if (!dladdr(reinterpret_cast<void *>(&thisLibraryPath), &Info) || !Info.dli_fname)
    return std::string();
  return Info.dli_fname;
}

std::string folderOf(const std::string &Path) {
  const size_t Slash = Path.find_last_of('/');
  return Slash == std::string::npos ? std::string("./") : Path.substr(0, Slash + 1);
}

std::vector<std::string> besideThisLibrary(const std::string &File) {
  std::vector<std::string> Out;
  const std::string Own = thisLibraryPath();
  if (Own.empty())
    return Out;
  Out.push_back(folderOf(Own) + File);
  if (char *Real = ::realpath(Own.c_str(), nullptr)) {
    const std::string Candidate = folderOf(Real) + File;
    std::free(Real);
    if (Candidate != Out.front())
      Out.push_back(Candidate);
  }
  return Out;
}

bool loadModuleBeside(const std::string &File, const char *Entry, const std::function<std::string(void *)> &Accept,
                      std::string &Tried) {
  Tried.clear();
  for (const std::string &Path : besideThisLibrary(File)) {
    void *Handle = ::dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    std::string Why;
    if (!Handle) {
      const char *Err = ::dlerror();
      Why = Err ? std::string(Err) : Path + ": cannot be loaded";
    } else {
      const std::string Refused = Accept(::dlsym(Handle, Entry));
      if (Refused.empty())
        return true;
      Why = Path + ": " + Refused;
    }
    Tried += (Tried.empty() ? "" : "; ") + Why;
  }
  return false;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
