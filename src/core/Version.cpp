// The loaded library's version. CMake defines OPTIMIUM_COMMIT_ID and OPTIMIUM_BUILD_INFO for the
// library's sources; the fallbacks keep stand-alone builds working.
#include "Optimium/Runtime/Version.h"

#ifndef OPTIMIUM_COMMIT_ID
#define OPTIMIUM_COMMIT_ID "unknown"
#endif
#ifndef OPTIMIUM_BUILD_INFO
#define OPTIMIUM_BUILD_INFO "unknown"
#endif

namespace optimium {
namespace runtime {

Version getVersion() {
  return Version{OPTIMIUM_RT_VERSION_MAJOR, OPTIMIUM_RT_VERSION_MINOR, OPTIMIUM_RT_VERSION_PATCH,
                 OPTIMIUM_RT_VERSION_TAG,   OPTIMIUM_COMMIT_ID,        OPTIMIUM_BUILD_INFO};
}

} // namespace runtime
} // namespace optimium
