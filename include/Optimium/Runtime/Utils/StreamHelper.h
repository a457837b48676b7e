// operator<< for runtime types. Not included by <Optimium/Runtime.h> on purpose.
#pragma once

#include <ostream>

#include "Optimium/Runtime.h"

namespace optimium {
namespace runtime {

OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, ElementType Type);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, const Expr &E);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, const TensorShape &Shape);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, const TensorInfo &Info);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, const QuantScheme &Scheme);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, const Tensor &T);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, const DeviceID &ID);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, const HostInfo &Info);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, PlatformKind Kind);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, DeviceKind Kind);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, OSKind Kind);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, InferStatus Status);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, SchedulerType Type);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, LogLevel Level);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, const Attribute &Attr);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, const Version &V);
OPTIMIUM_RT_API std::ostream &operator<<(std::ostream &OS, const OpInfo &Op);

} // namespace runtime
} // namespace optimium
