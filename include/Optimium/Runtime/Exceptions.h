// The exception hierarchy of the public API. Internally errors travel as Status/Result and are
// converted to these types at the API boundary.
#pragma once

#include <stdexcept>
#include <string>

#include "Optimium/Runtime/Export.h"

namespace optimium {
namespace runtime {

class OPTIMIUM_RT_API Exception : public std::runtime_error {
public:
  explicit Exception(const std::string &Message) : std::runtime_error(Message) {}
  ~Exception() override;
};

#define OPTIMIUM_RT_DECLARE_EXCEPTION(Name)                                                          \
  class OPTIMIUM_RT_API Name : public Exception {                                                  \
  public:                                                                                          \
    explicit Name(const std::string &Message) : Exception(Message) {}                              \
    ~Name() override;                                                                              \
  };

OPTIMIUM_RT_DECLARE_EXCEPTION(InvalidArgumentError)
OPTIMIUM_RT_DECLARE_EXCEPTION(InvalidStateError)
OPTIMIUM_RT_DECLARE_EXCEPTION(InvalidOperationError)
OPTIMIUM_RT_DECLARE_EXCEPTION(TypeError)
OPTIMIUM_RT_DECLARE_EXCEPTION(ShapeError)
OPTIMIUM_RT_DECLARE_EXCEPTION(ExtensionError)
OPTIMIUM_RT_DECLARE_EXCEPTION(DeviceError)
OPTIMIUM_RT_DECLARE_EXCEPTION(ModelError)
OPTIMIUM_RT_DECLARE_EXCEPTION(RequestError)
OPTIMIUM_RT_DECLARE_EXCEPTION(InferError)
OPTIMIUM_RT_DECLARE_EXCEPTION(OutOfResourceError)
OPTIMIUM_RT_DECLARE_EXCEPTION(ContainerError)
OPTIMIUM_RT_DECLARE_EXCEPTION(RemoteError)
OPTIMIUM_RT_DECLARE_EXCEPTION(IOError)
OPTIMIUM_RT_DECLARE_EXCEPTION(NetworkError)
OPTIMIUM_RT_DECLARE_EXCEPTION(OSError)
OPTIMIUM_RT_DECLARE_EXCEPTION(NotImplementedError)

#undef OPTIMIUM_RT_DECLARE_EXCEPTION

} // namespace runtime
} // namespace optimium
