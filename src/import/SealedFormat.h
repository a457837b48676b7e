// What the reader (SealedFolder.cpp, in the runtime) and the writer (SealedWriter.cpp, also linked
// into the tools) of encrypted model folders share: the file layout, the key derivation, AES-GCM
// (on SealedCrypto.h's functions: no OpenSSL header here).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/Status.h"
#include "import/SealedFolder.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace sealed {

constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;
constexpr size_t kSaltBytes = 16;
/// An encrypted file: magic (8) | u32 format version | u32 flags (0) | u64 plaintext bytes |
/// nonce (12) -- 36 header bytes, all little-endian -- then the ciphertext, then the GCM tag.
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + kNonceBytes;
constexpr size_t kNonceOffset = 24;
/// EVP_*Update takes an int length: the writer encrypts large files in chunks.
constexpr size_t kChunkBytes = size_t{1} << 28;
/// Bounds on the KDF parameters, so a forged parameter file cannot ask for absurd work.
constexpr uint64_t kMaxScryptN = uint64_t{1} << 22;
constexpr uint64_t kMaxScryptMemory = uint64_t{1} << 31;
constexpr const char *kFormatName = "optimium-encrypted-model";

using Key = std::array<uint8_t, 32>;

bool isDirectory(const std::string &P);
bool isRegularFile(const std::string &P);
bool exists(const std::string &P);
std::string dirName(const std::string &P);
std::string trimSlashes(std::string P);
/// Whether the file at Path starts with kSealedFileMagic.
bool startsWithMagic(const std::string &Path);

std::string toHex(const uint8_t *P, size_t N);
bool fromHex(const std::string &S, std::vector<uint8_t> &Out);
void putLE(uint8_t *P, uint64_t V, size_t Bytes);
uint64_t getLE(const uint8_t *P, size_t Bytes);

/// Zeroes Bytes at P in a way the compiler cannot drop (keys, passphrases, decrypted weights).
void wipe(void *P, size_t Bytes);

/// InvalidArgument when the scrypt parameters are out of the bounds above.
Status checkScrypt(const ScryptParams &K);
/// scrypt(Passphrase, Salt) -> K.
Status deriveKey(const std::string &Passphrase, const std::vector<uint8_t> &Salt, const ScryptParams &Params, Key &K);
/// Additional data of the passphrase check: everything in the parameter file but the check itself,
/// so a changed KDF parameter, salt or file list fails like a wrong passphrase.
std::string checkAad(const ScryptParams &K, const std::vector<uint8_t> &Salt, const std::vector<std::string> &Files);
/// Additional data of one file: its header and its name inside the folder.
std::string fileAad(const uint8_t *Header, const std::string &Name);
/// AES-256-GCM over In (InBytes) into Out in one go; Encrypt: Tag receives the tag, else Tag is
/// checked (false: it did not verify).
bool gcm(bool Encrypt, const Key &K, const uint8_t *Nonce, const std::string &Aad, const uint8_t *In, size_t InBytes,
         uint8_t *Out, uint8_t *Tag);

} // namespace sealed
} // namespace detail
} // namespace runtime
} // namespace optimium
