// Spec section 4 "Version information". The fragment is copied verbatim into main(); checks
// afterwards: the loaded library's version equals the headers' (OPTIMIUM_RT_CURRENT_VERSION) and
// the library reports a commit id and build info.
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Version.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <cstring>
#include <iostream>

namespace rt = optimium::runtime;

int main() {
    rt::Version V = rt::getVersion();
    std::cout << V.Major << "." << V.Minor << "." << V.Patch << V.Tag << "\n"
              << "commit: " << V.CommitID << "\n"
              << "build:  " << V.BuildInfo << std::endl;

    // Version the headers were compiled against.
    constexpr rt::Version Compiled = OPTIMIUM_RT_CURRENT_VERSION;
    if (V != Compiled)
        std::cerr << "warning: runtime/header version mismatch" << std::endl;

    // --- checks (not part of the spec sample) ---
    if (V != Compiled || V.Major != 4 || V.Minor != 4) {
        std::cerr << "FAIL: runtime " << V << " != headers " << Compiled << std::endl;
        return 1;
    }
    if (V.CommitID == nullptr || std::strlen(V.CommitID) == 0 || V.BuildInfo == nullptr ||
        std::strlen(V.BuildInfo) == 0) {
        std::cerr << "FAIL: empty commit id or build info" << std::endl;
        return 1;
    }
    return 0;
}
