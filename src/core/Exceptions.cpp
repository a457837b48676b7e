// Out-of-line destructors anchor the exception classes' vtables in the library.
#include "Optimium/Runtime/Exceptions.h"

namespace optimium {
namespace runtime {

Exception::~Exception() = default;
#define OPT_EXCEPTION_DTOR(Name) Name::~Name() = default;
OPT_EXCEPTION_DTOR(InvalidArgumentError)
OPT_EXCEPTION_DTOR(InvalidStateError)
OPT_EXCEPTION_DTOR(InvalidOperationError)
OPT_EXCEPTION_DTOR(TypeError)
OPT_EXCEPTION_DTOR(ShapeError)
OPT_EXCEPTION_DTOR(ExtensionError)
OPT_EXCEPTION_DTOR(DeviceError)
OPT_EXCEPTION_DTOR(ModelError)
OPT_EXCEPTION_DTOR(RequestError)
OPT_EXCEPTION_DTOR(InferError)
OPT_EXCEPTION_DTOR(OutOfResourceError)
OPT_EXCEPTION_DTOR(ContainerError)
OPT_EXCEPTION_DTOR(RemoteError)
OPT_EXCEPTION_DTOR(IOError)
OPT_EXCEPTION_DTOR(NetworkError)
OPT_EXCEPTION_DTOR(OSError)
OPT_EXCEPTION_DTOR(NotImplementedError)
#undef OPT_EXCEPTION_DTOR

} // namespace runtime
} // namespace optimium
