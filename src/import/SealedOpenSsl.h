// OpenSSL's cipher context as an owning object, for the files that call OpenSSL themselves
// (SealedCryptoOpenSsl.cpp, SealedWriter.cpp); nothing of the shared runtime's own objects.
#pragma once

#include <openssl/evp.h>

namespace optimium {
namespace runtime {
namespace detail {
namespace sealed {

struct CipherCtx {
  EVP_CIPHER_CTX *C = EVP_CIPHER_CTX_new();
  ~CipherCtx() { EVP_CIPHER_CTX_free(C); }
  CipherCtx() = default;
  CipherCtx(const CipherCtx &) = delete;
  CipherCtx &operator=(const CipherCtx &) = delete;
};

} // namespace sealed
} // namespace detail
} // namespace runtime
} // namespace optimium
