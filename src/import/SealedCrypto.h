// The cryptography of encrypted model folders (scrypt, AES-256-GCM) as a table of plain functions,
// so that the shared runtime loads OpenSSL only for an encrypted folder: liboptimium-runtime.so
// takes the table from the module liboptimium-runtime-crypto.so beside it on first use
// (SealedCryptoClient.cpp), and everything that embeds the runtime's objects (the tools, the tests,
// the Python extension) links OpenSSL's table directly (SealedCryptoOpenSsl.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace optimium {
namespace runtime {
namespace detail {
namespace sealed {

constexpr uint32_t kCryptoModuleAbi = 1;
constexpr const char *kCryptoModuleFile = "liboptimium-runtime-crypto.so";
/// The module's entry point: extern "C" const CryptoFunctions *optimium_rt_crypto(void).
constexpr const char *kCryptoModuleEntry = "optimium_rt_crypto";

struct CryptoFunctions {
  uint32_t Abi;   ///< kCryptoModuleAbi
  uint32_t Bytes; ///< sizeof(CryptoFunctions)
  /// scrypt(Passphrase, Salt) with cost N, r, p (at most MaxMemory bytes) into Out; 1 on success.
  int (*Scrypt)(const char *Passphrase, size_t PassphraseBytes, const uint8_t *Salt, size_t SaltBytes, uint64_t N,
                uint64_t R, uint64_t P, uint64_t MaxMemory, uint8_t *Out, size_t OutBytes);
  /// AES-256-GCM, 32-byte Key, 12-byte Nonce, additional data Aad, over In (InBytes) into Out in one
  /// go; Encrypt: Tag (16 bytes) receives the tag, else it is checked. 1 on success (decrypting: the
  /// tag verified), else 0.
  int (*Gcm)(int Encrypt, const uint8_t *Key, const uint8_t *Nonce, const uint8_t *Aad, size_t AadBytes,
             const uint8_t *In, size_t InBytes, uint8_t *Out, uint8_t *Tag);
};

/// The functions, or nullptr with Error saying why they cannot be had.
const CryptoFunctions *cryptoFunctions(std::string &Error);

/// OpenSSL's implementation (SealedCryptoOpenSsl.cpp): what the module hands out.
const CryptoFunctions &openSslCryptoFunctions();

} // namespace sealed
} // namespace detail
} // namespace runtime
} // namespace optimium
