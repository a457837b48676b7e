// The shared runtime's side of the crypto module (SealedCrypto.h): cryptoFunctions() loads
// liboptimium-runtime-crypto.so from beside the runtime library on first use, so that a process
// which never opens an encrypted model folder never loads OpenSSL. Compiled into
// liboptimium-runtime.so only, in place of SealedCryptoOpenSsl.cpp.
#include "import/SealedCrypto.h"

#include <dlfcn.h>

#include <vector>

#include "core/LibraryPath.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace sealed {

namespace {

struct LoadedModule {
  const CryptoFunctions *Functions = nullptr;
  std::string Error;
};

// Loaded once per process and never unloaded (RTLD_NODELETE).
const LoadedModule &cryptoModule() {
  static const LoadedModule Loaded = [] {
    LoadedModule L;
    std::string Tried;
    for (const std::string &Path : besideThisLibrary(kCryptoModuleFile)) {
      void *Handle = ::dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
      if (!Handle) {
        const char *Why = ::dlerror();
        Tried += (Tried.empty() ? "" : "; ") + std::string(Why ? Why : Path + ": cannot be loaded");
        continue;
      }
      using Entry = const CryptoFunctions *(*)();
      auto Init = reinterpret_cast<Entry>(::dlsym(Handle, kCryptoModuleEntry));
      const CryptoFunctions *F = Init ? Init() : nullptr;
      if (!F || F->Abi != kCryptoModuleAbi || F->Bytes != sizeof(CryptoFunctions) || !F->Scrypt || !F->Gcm) {
        Tried += (Tried.empty() ? "" : "; ") + Path + ": not the crypto module of this runtime build (" +
                 (Init ? "its table does not match" : std::string("no ") + kCryptoModuleEntry) + ")";
        continue;
      }
      L.Functions = F;
      return L;
    }
    L.Error = std::string("reading an encrypted model needs the module ") + kCryptoModuleFile +
              " beside the runtime library, which was not usable: " +
              (Tried.empty() ? std::string("the runtime library's own path is unknown") : Tried);
    return L;
  }();
  return Loaded;
}

} // namespace

const CryptoFunctions *cryptoFunctions(std::string &Error) {
  const LoadedModule &M = cryptoModule();
  if (!M.Functions)
    Error = M.Error;
  return M.Functions;
}

} // namespace sealed
} // namespace detail
} // namespace runtime
} // namespace optimium
