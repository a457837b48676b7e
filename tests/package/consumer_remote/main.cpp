// The external consumer of the Optimium-Remote package: built against the installed headers and
// libraries only. Connecting to a port nothing listens on must fail with NetworkError naming it.
#if __cplusplus != 201402L
#error "the consumer must be compiled as C++14"
#endif

#include <Optimium/Remote.h>

#include <iostream>
#include <string>

namespace rt = optimium::runtime;

int main() {
    rt::ConnectOptions Options;
    Options.ConnectTimeout = std::chrono::milliseconds(2000);
    try {
        rt::connect("127.0.0.1", 1, Options);
        std::cerr << "FAIL: connected to 127.0.0.1:1" << std::endl;
        return 1;
    } catch (const rt::NetworkError &E) {
        std::cout << "NetworkError: " << E.what() << std::endl;
        if (std::string(E.what()).find("127.0.0.1:1") == std::string::npos) {
            std::cerr << "FAIL: the error does not name the endpoint" << std::endl;
            return 1;
        }
    }
    std::cout << "remote package consumer OK (default port " << rt::kDefaultRemotePort << ")" << std::endl;
    return 0;
}
