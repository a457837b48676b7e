// Where the runtime's own shared library lives (see LibraryPath.h).
#include "core/LibraryPath.h"

#include <dlfcn.h>

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

} // namespace detail
} // namespace runtime
} // namespace optimium
