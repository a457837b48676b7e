// Umbrella header of Optimium Runtime. Stream operators live in Utils/StreamHelper.h.
#pragma once

#include "Optimium/Runtime/Attribute.h"
#include "Optimium/Runtime/Config.h"
#include "Optimium/Runtime/Device.h"
#include "Optimium/Runtime/DeviceProperties.h"
#include "Optimium/Runtime/ElementType.h"
#include "Optimium/Runtime/Exceptions.h"
#include "Optimium/Runtime/Export.h"
#include "Optimium/Runtime/InferRequest.h"
#include "Optimium/Runtime/Logging/LogSettings.h"
#include "Optimium/Runtime/Model.h"
#include "Optimium/Runtime/ModelGroup.h"
#include "Optimium/Runtime/Options.h"
#include "Optimium/Runtime/Profile.h"
#include "Optimium/Runtime/Shape.h"
#include "Optimium/Runtime/Tensor.h"
#include "Optimium/Runtime/TensorInfo.h"
#include "Optimium/Runtime/Types.h"
#include "Optimium/Runtime/Utils/ArrayRef.h"
#include "Optimium/Runtime/Utils/StringRef.h"
#include "Optimium/Runtime/Version.h"

namespace optimium {
namespace runtime {

/// Starts the runtime: detects devices, loads known extensions. Idempotent (reference counted
/// with finalize()).
OPTIMIUM_RT_API void initialize();
/// Shuts the runtime down once every initialize() has been matched.
OPTIMIUM_RT_API void finalize();
OPTIMIUM_RT_API bool isInitialized();

/// Calls initialize() on construction and finalize() on destruction. Must outlive every model,
/// request and inference.
class AutoInit {
public:
  AutoInit() { initialize(); }
  ~AutoInit() { finalize(); }
  AutoInit(const AutoInit &) = delete;
  AutoInit &operator=(const AutoInit &) = delete;
};

/// Loads a backend extension library (liboptimium-runtime-<backend>.so). InvalidArgumentError when
/// the path is not a file; ExtensionError when it cannot be loaded or registered.
OPTIMIUM_RT_API void loadExtension(const std::string &Path);

} // namespace runtime
} // namespace optimium
