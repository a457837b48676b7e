// initialize()/finalize(), loadModel(), loadExtension(): the public entry points.
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <mutex>

#include "Optimium/Runtime.h"
#include "api/OwnedModelBytes.h"
#include "backends/BackendRegistry.h"
#include "core/ErrorConversion.h"
#include "core/Log.h"
#include "exec/ModelState.h"

namespace optimium {
namespace runtime {

using namespace detail;

namespace {

std::mutex InitMutex;
int InitCount = 0;

/// Folder of this shared library (where extensions are auto-loaded from).
std::string libraryFolder() {
  Dl_info Info;
  if (dladdr(reinterpret_cast<void *>(&libraryFolder), &Info) && Info.dli_fname) {
    std::string P = Info.dli_fname;
    const size_t Slash = P.find_last_of('/');
    return Slash == std::string::npos ? std::string(".") : P.substr(0, Slash);
  }
  return ".";
}

void autoLoadExtensions() {
  static const char *Known[] = {"xnnpack", "cuda", "vulkan", "opencl", "snpe", "qnn"};
  std::vector<std::string> Folders{libraryFolder()};
  if (const char *Extra = std::getenv("OPTIMIUM_RT_EXTENSION_PATH")) {
    std::string S = Extra;
    size_t Start = 0;
    while (Start <= S.size()) {
      const size_t Colon = S.find(':', Start);
      const std::string Part = S.substr(Start, Colon == std::string::npos ? std::string::npos : Colon - Start);
      if (!Part.empty())
        Folders.push_back(Part);
      if (Colon == std::string::npos)
        break;
      Start = Colon + 1;
    }
  }
  for (const std::string &Folder : Folders)
    for (const char *Name : Known) {
      const std::string Path = Folder + "/liboptimium-runtime-" + Name + ".so";
      struct stat St;
      if (::stat(Path.c_str(), &St) != 0)
        continue;
      Status S = loadExtensionLibrary(Path);
      if (!S.isOk())
        OPT_LOG(Warning, "could not auto-load extension '", Path, "': ", S.message());
    }
}

void requireInitialized(const char *What) {
  std::lock_guard<std::mutex> Lock(InitMutex);
  if (InitCount == 0)
    throw InvalidStateError(std::string(What) +
                            ": the runtime is not initialized; call rt::initialize() first or declare an rt::AutoInit");
}

} // namespace

void initialize() {
  std::lock_guard<std::mutex> Lock(InitMutex);
  if (InitCount++ > 0)
    return;
  registerNativeBackend();
  autoLoadExtensions();
  OPT_LOG(Info, "Optimium Runtime ", OPTIMIUM_RT_VERSION_MAJOR, ".", OPTIMIUM_RT_VERSION_MINOR, ".",
          OPTIMIUM_RT_VERSION_PATCH, " initialized");
}

void finalize() {
  std::lock_guard<std::mutex> Lock(InitMutex);
  if (InitCount > 0)
    --InitCount;
}

bool isInitialized() {
  std::lock_guard<std::mutex> Lock(InitMutex);
  return InitCount > 0;
}

void loadExtension(const std::string &Path) {
  requireInitialized("loadExtension");
  throwIfError(loadExtensionLibrary(Path));
}

Model loadModel(const std::string &Path, const ModelLoadOptions &Options) {
  requireInitialized("loadModel");
  return Model(valueOrThrow(loadModelFromPath(Path, Options)));
}

Model loadModel(const uint8_t *Data, size_t Size, const ModelLoadOptions &Options) {
  requireInitialized("loadModel");
  if (!Data)
    throw InvalidArgumentError("loadModel: the model data pointer is null");
  return Model(valueOrThrow(loadModelFromBuffer(Data, Size, Options)));
}

namespace detail {

void requireRuntimeInitialized(const char *What) { requireInitialized(What); }

Model loadModelOwningBytes(std::shared_ptr<const std::vector<uint8_t>> Bytes, const ModelLoadOptions &Options) {
  requireInitialized("loadModel");
  if (!Bytes)
    throw InvalidArgumentError("loadModel: no model bytes");
  const uint8_t *Data = Bytes->data();
  const size_t Size = Bytes->size();
  return Model(valueOrThrow(loadModelFromBuffer(Data, Size, Options, std::move(Bytes))));
}

} // namespace detail

} // namespace runtime
} // namespace optimium
