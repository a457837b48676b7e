// The shared runtime's side of the crypto module (SealedCrypto.h): cryptoFunctions() loads
// liboptimium-runtime-crypto.so from beside the runtime library on first use, so that a process
// which never opens an encrypted model folder never loads OpenSSL. Compiled into
// liboptimium-runtime.so only, in place of SealedCryptoOpenSsl.cpp.
#include "import/SealedCrypto.h"

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

// Loaded once per process, on the first call.
const LoadedModule &cryptoModule() {
  static const LoadedModule Loaded = [] {
    LoadedModule L;
    std::string Tried;
    const bool Found = loadModuleBeside(kCryptoModuleFile, kCryptoModuleEntry, [&](void *Sym) -> std::string {
      const CryptoFunctions *F = Sym ? reinterpret_cast<const CryptoFunctions *(*)()>(Sym)() : nullptr;
      if (!F || F->Abi != kCryptoModuleAbi || F->Bytes != sizeof(CryptoFunctions) || !F->Scrypt || !F->Gcm)
        return std::string("not the crypto module of this runtime build (") +
               (Sym ? "its table does not match" : std::string("no ") + kCryptoModuleEntry) + ")";
      L.Functions = F;
      return "";
    }, Tried);
    if (!Found)
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
