// liboptimium-runtime-crypto.so's entry point (SealedCrypto.h): OpenSSL's table, for the shared
// runtime to call once it meets an encrypted model folder.
#include "import/SealedCrypto.h"

extern "C" __attribute__((visibility("default"))) const optimium::runtime::detail::sealed::CryptoFunctions *
optimium_rt_crypto() {
  return &optimium::runtime::detail::sealed::openSslCryptoFunctions();
}
