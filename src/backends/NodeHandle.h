// What the runtime passes as OptRtNode::host_node: the IR node and what inference knows about it.
#pragma once

#include "backends/native/Kernel.h"

namespace optimium {
namespace runtime {
namespace detail {

struct NodeHandle {
  const Node *N = nullptr;
  const KernelCreateInfo *Info = nullptr;
};

/// Copies Message into an ABI error buffer (always NUL-terminated).
void writeAbiError(const std::string &Message, char *Buffer, size_t Size);

} // namespace detail
} // namespace runtime
} // namespace optimium
