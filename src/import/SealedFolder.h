// Encrypted ("sealed") model folders: every file of a model encrypted with AES-256-GCM under a key
// derived from a passphrase by scrypt; decrypted only into memory. Format: docs/encrypted-models.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/Status.h"

namespace optimium {
namespace runtime {
namespace detail {

/// The folder's parameter file: format version, KDF parameters and salt, the list of encrypted
/// files and a passphrase check.
constexpr const char *kSealedParamsFile = "encryption.json";
/// Newest format this runtime reads (and the one it writes).
constexpr int kSealedFormatVersion = 1;
/// First bytes of every encrypted file.
constexpr char kSealedFileMagic[8] = {'O', 'P', 'T', 'R', 'T', 'E', 'N', 'C'};

/// scrypt cost: memory 128 * N * R * P bytes. The default (N = 2^14, r = 8, p = 1: 16 MiB) takes
/// ~50-70 ms on the development machine (docs/encrypted-models.md).
struct ScryptParams {
  uint64_t N = uint64_t{1} << 14;
  uint32_t R = 8;
  uint32_t P = 1;
};

/// Decrypted bytes of one file: 64-byte (large: 2 MiB) aligned, kept out of core dumps where the
/// block is mapped, and overwritten with zeros before it is freed.
class PlainBuffer {
public:
  PlainBuffer(const PlainBuffer &) = delete;
  PlainBuffer &operator=(const PlainBuffer &) = delete;
  ~PlainBuffer();
  const uint8_t *data() const { return Data; }
  size_t size() const { return Size; }

private:
  friend class SealedFolder;
  PlainBuffer() = default;
  uint8_t *Data = nullptr;
  size_t Size = 0;
  size_t Mapped = 0; ///< allocateBlock's MappedBytes
};

/// An encrypted model folder opened with its passphrase: the key is derived once (scrypt) and
/// checked against the folder's parameter file; each readFile decrypts one file into memory.
class SealedFolder {
public:
  /// ContainerError when the parameter file is missing, malformed or of a newer version, or when
  /// Passphrase is not the folder's (the error says so; the passphrase is never part of it).
  static Result<std::shared_ptr<SealedFolder>> open(const std::string &Folder, const std::string &Passphrase);
  ~SealedFolder();
  SealedFolder(const SealedFolder &) = delete;
  SealedFolder &operator=(const SealedFolder &) = delete;

  /// The decrypted content of the file Name (relative to the folder, as listed in the parameter
  /// file). Handed out only after its authentication tag verified: a tampered, truncated, swapped
  /// or foreign file is a ContainerError naming it ("wrong passphrase or corrupted file"), and no
  /// byte of it is returned.
  Result<std::shared_ptr<const PlainBuffer>> readFile(const std::string &Name) const;
  /// Whether Name is one of the folder's encrypted files.
  bool contains(const std::string &Name) const;
  const std::vector<std::string> &files() const { return Files; }
  const std::string &folder() const { return Folder; }
  /// Seconds the key derivation took in open() (for the load-time breakdown).
  double kdfSeconds() const { return KdfSeconds; }

private:
  SealedFolder() = default;
  std::string Folder;
  std::vector<std::string> Files;
  std::array<uint8_t, 32> Key{};
  double KdfSeconds = 0;
};

/// One file of an encrypted folder, decrypted in memory (opens the folder, so pays the KDF; use
/// SealedFolder to read several files).
Result<std::shared_ptr<const PlainBuffer>> readModelFile(const std::string &Folder, const std::string &Name,
                                                         const std::string &Passphrase);

/// A file to encrypt: its path on disk (or its bytes in memory) and the name it gets inside the
/// encrypted folder.
struct SealedInput {
  std::string SourcePath; ///< read from disk; with InMemory only a label for messages
  std::string Name;
  bool InMemory = false;  ///< encrypt Data[0, Size) (never written in the clear)
  const uint8_t *Data = nullptr;
  size_t Size = 0;
};

/// Encrypts Inputs into OutFolder (created when missing; it must hold no file of the same name)
/// and writes the parameter file. Each file gets a fresh random nonce; its name and header are
/// authenticated with it, so files cannot be renamed or swapped. InvalidArgument for an empty
/// passphrase, bad names or KDF parameters; IOError when a file cannot be read or written.
Status encryptFiles(const std::vector<SealedInput> &Inputs, const std::string &OutFolder,
                    const std::string &Passphrase, const ScryptParams &Kdf = ScryptParams());

/// Encrypts a model: an .onnx file or a folder holding model.onnx, together with the external data
/// files it references and its manifest (optimium.json, or <stem>.optimium.json beside a file),
/// into OutFolder as model.onnx, the external files under their names and optimium.json. OutFolder
/// must not exist or be empty, and not be the input folder. Returns the names written.
Result<std::vector<std::string>> encryptModelFolder(const std::string &InputPathOrFolder, const std::string &OutFolder,
                                                    const std::string &Passphrase,
                                                    const ScryptParams &Kdf = ScryptParams());

/// Whether Path is an encrypted model folder (a folder holding the parameter file). A folder whose
/// model.onnx is encrypted but that lacks the parameter file, or a single encrypted file, is a
/// ContainerError saying so.
Result<bool> isSealedModelPath(const std::string &Path);

/// Canonical form of a file name inside a folder ("./a//b" -> "a/b"); InvalidArgument when it is
/// empty, absolute or leaves the folder.
Result<std::string> sealedFileName(const std::string &Name);

} // namespace detail
} // namespace runtime
} // namespace optimium
