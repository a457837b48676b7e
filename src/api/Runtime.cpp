// initialize()/finalize(), loadModel(), loadExtension(): the public entry points.
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "Optimium/Runtime.h"
#include "api/OwnedModelBytes.h"
#include "backends/BackendRegistry.h"
#include "core/ErrorConversion.h"
#include "core/LibraryPath.h"
#include "core/Log.h"
#include "exec/Lifecycle.h"
#include "exec/ModelState.h"

namespace optimium {
namespace runtime {

using namespace detail;

namespace {

// initialize() / finalize() run one at a time (InitMutex, held through a whole shutdown);
// Initialized is what every entry point checks, without waiting for a shutdown in progress.
std::mutex InitMutex;
int InitCount = 0;                    ///< Guarded by InitMutex.
std::atomic<bool> Initialized{false};

/// Folder of this shared library (where extensions are auto-loaded from), without a trailing '/'.
std::string libraryFolder() {
  const std::string Own = thisLibraryPath();
  if (Own.empty())
    return ".";
  std::string Folder = folderOf(Own);
  Folder.pop_back();
  return Folder;
}

void autoLoadExtensions() {
  // The spec's list, then the simulated accelerator (docs/devices.md; explicit-only, so loading it
  // changes no placement unless ModelLoadOptions.Devices names it).
  static const char *Known[] = {"xnnpack", "cuda", "vulkan", "opencl", "snpe", "qnn", "sim"};
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
  if (!Initialized.load())
    throw InvalidStateError(std::string(What) +
                            ": the runtime is not initialized; call rt::initialize() first or declare an rt::AutoInit");
}

} // namespace

void initialize() {
  std::lock_guard<std::mutex> Lock(InitMutex);
  if (InitCount++ > 0)
    return;
  registerNativeBackend();
  openRuntime();
  Initialized.store(true);
  autoLoadExtensions();
  OPT_LOG(Info, "Optimium Runtime ", OPTIMIUM_RT_VERSION_MAJOR, ".", OPTIMIUM_RT_VERSION_MINOR, ".",
          OPTIMIUM_RT_VERSION_PATCH, " initialized");
}

// The spec: finalize() shuts the runtime down entirely. The last matching call stops every run
// in flight before its next op (it ends with an InvalidStateError), waits for them, joins every
// model's threads, destroys every kernel and unloads the extensions; models, requests and group
// members still held then refuse to run (InvalidStateError). initialize() starts afresh.
void finalize() {
  // A pool worker or an inference callback would wait for its own run below.
  if (onRuntimeThread())
    throw InvalidOperationError("finalize: called from an inference callback or a runtime thread, where it would "
                                "wait for itself; call it from the application's own thread");
  std::lock_guard<std::mutex> Lock(InitMutex);
  if (InitCount == 0 || --InitCount > 0)
    return;
  Initialized.store(false); // new loads and entry points fail from here on
  shutDownLiveModels();     // runs stopped and waited for, threads joined, kernels destroyed
  unregisterAllBackends();  // extensions destroyed and closed (none of their kernels is left)
  OPT_LOG(Info, "Optimium Runtime finalized");
}

bool isInitialized() { return Initialized.load(); }

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
