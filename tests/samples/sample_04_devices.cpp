// Spec section 4 "Check available devices". Verbatim except `int main(...)` -> `int main()`;
// the "// ..." placeholder is filled with the runtime initialization the section requires
// (rt::AutoInit at the top of main, as the spec recommends). Checks afterwards: the local host
// has a Native CPU device and the documented HostInfo / DeviceID accessors work.
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <iostream>

namespace rt = optimium::runtime;

int main() {
    // ...
    rt::AutoInit Init;

    rt::HostInfo Local = rt::getLocalInfo();

    bool Found = false;
    for (rt::DeviceID ID : Local.Devices) {
        if (ID.getPlatform() == rt::PlatformKind::Native) {
            Found = true;
            break;
        }
    }

    if (!Found)
        std::cout << "error: cannot find needed device." << std::endl;

    // --- checks (not part of the spec sample) ---
    std::cout << "host: id=" << Local.ID << " name=" << Local.Name << " arch=" << Local.Architecture
              << " os=" << Local.OS << std::endl;
    for (rt::DeviceID ID : Local.Devices)
        std::cout << "device: " << ID.toString() << " platform=" << ID.getPlatform()
                  << " kind=" << ID.getDeviceKind() << " index=" << ID.getIndex()
                  << " host=" << ID.getHostID() << " cpu=" << rt::isDeviceCPU(ID.getDeviceKind())
                  << " capability=" << ID.getCapability().toString() << std::endl;
    if (!Found) {
        std::cerr << "FAIL: no Native device on the local host" << std::endl;
        return 1;
    }
    if (Local.ID != 0) {
        std::cerr << "FAIL: local host id is " << Local.ID << ", expected 0" << std::endl;
        return 1;
    }
    const rt::DeviceID First = Local.Devices[0];
    if (First.getHostInfo().ID != 0 || !rt::isDeviceCPU(First.getDeviceKind()) ||
        First.getCapability().getKind() == rt::CapabilityKind::Void) {
        std::cerr << "FAIL: first device " << First << " is not a local CPU with capabilities" << std::endl;
        return 1;
    }
    return 0;
}
