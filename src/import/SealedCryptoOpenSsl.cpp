// The cryptography of encrypted model folders on OpenSSL (SealedCrypto.h): linked into the tools,
// the tests and the Python extension, and into the module liboptimium-runtime-crypto.so.
#include "import/SealedCrypto.h"
#include "import/SealedOpenSsl.h"

#include <algorithm>
#include <climits>

namespace optimium {
namespace runtime {
namespace detail {
namespace sealed {

namespace {

/// EVP_*Update takes an int length: large inputs go through in chunks.
constexpr size_t kChunkBytes = size_t{1} << 28;

int scrypt(const char *Passphrase, size_t PassphraseBytes, const uint8_t *Salt, size_t SaltBytes, uint64_t N,
           uint64_t R, uint64_t P, uint64_t MaxMemory, uint8_t *Out, size_t OutBytes) {
  return EVP_PBE_scrypt(Passphrase, PassphraseBytes, Salt, SaltBytes, N, R, P, MaxMemory, Out, OutBytes) == 1;
}

int gcm(int Encrypt, const uint8_t *Key, const uint8_t *Nonce, const uint8_t *Aad, size_t AadBytes, const uint8_t *In,
        size_t InBytes, uint8_t *Out, uint8_t *Tag) {
  constexpr int NonceBytes = 12, TagBytes = 16;
  if (AadBytes > static_cast<size_t>(INT_MAX))
    return 0;
  CipherCtx Ctx;
  if (!Ctx.C || EVP_CipherInit_ex(Ctx.C, EVP_aes_256_gcm(), nullptr, nullptr, nullptr, Encrypt ? 1 : 0) != 1 ||
      EVP_CIPHER_CTX_ctrl(Ctx.C, EVP_CTRL_GCM_SET_IVLEN, NonceBytes, nullptr) != 1 ||
      EVP_CipherInit_ex(Ctx.C, nullptr, nullptr, Key, Nonce, -1) != 1)
    return 0;
  int Len = 0;
  if (AadBytes && EVP_CipherUpdate(Ctx.C, nullptr, &Len, Aad, static_cast<int>(AadBytes)) != 1)
    return 0;
  for (size_t Off = 0; Off < InBytes; Off += kChunkBytes) {
    const int N = static_cast<int>(std::min(kChunkBytes, InBytes - Off));
    if (EVP_CipherUpdate(Ctx.C, Out + Off, &Len, In + Off, N) != 1)
      return 0;
  }
  if (!Encrypt && EVP_CIPHER_CTX_ctrl(Ctx.C, EVP_CTRL_GCM_SET_TAG, TagBytes, Tag) != 1)
    return 0;
  uint8_t Final[16];
  if (EVP_CipherFinal_ex(Ctx.C, Final, &Len) != 1)
    return 0; // decrypting: the tag did not verify
  return !Encrypt || EVP_CIPHER_CTX_ctrl(Ctx.C, EVP_CTRL_GCM_GET_TAG, TagBytes, Tag) == 1;
}

} // namespace

const CryptoFunctions &openSslCryptoFunctions() {
  static const CryptoFunctions F = {kCryptoModuleAbi, sizeof(CryptoFunctions), scrypt, gcm};
  return F;
}

const CryptoFunctions *cryptoFunctions(std::string &) { return &openSslCryptoFunctions(); }

} // namespace sealed
} // namespace detail
} // namespace runtime
} // namespace optimium
