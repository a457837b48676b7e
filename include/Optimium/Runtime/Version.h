// Runtime version: getVersion() is the loaded library's, OPTIMIUM_RT_CURRENT_VERSION the headers'.
#pragma once

#include <cstdint>
#include <cstring>

#include "Optimium/Runtime/Export.h"

#define OPTIMIUM_RT_VERSION_MAJOR 4
#define OPTIMIUM_RT_VERSION_MINOR 4
#define OPTIMIUM_RT_VERSION_PATCH 0
#define OPTIMIUM_RT_VERSION_TAG ""

namespace optimium {
namespace runtime {

struct Version {
  uint32_t Major;
  uint32_t Minor;
  uint32_t Patch;
  const char *Tag;      ///< e.g. "" or "-rc1"
  const char *CommitID; ///< git commit of the build ("" in headers)
  const char *BuildInfo; ///< compiler and build type ("" in headers)
};

/// Versions are equal when major, minor, patch and tag are; commit and build info are ignored.
inline bool operator==(const Version &A, const Version &B) {
  return A.Major == B.Major && A.Minor == B.Minor && A.Patch == B.Patch &&
         std::strcmp(A.Tag ? A.Tag : "", B.Tag ? B.Tag : "") == 0;
}
inline bool operator!=(const Version &A, const Version &B) { return !(A == B); }

OPTIMIUM_RT_API Version getVersion();

} // namespace runtime
} // namespace optimium

#define OPTIMIUM_RT_CURRENT_VERSION                                                                \
  ::optimium::runtime::Version {                                                                   \
    OPTIMIUM_RT_VERSION_MAJOR, OPTIMIUM_RT_VERSION_MINOR, OPTIMIUM_RT_VERSION_PATCH,               \
        OPTIMIUM_RT_VERSION_TAG, "", ""                                                            \
  }
