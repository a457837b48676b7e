// The native kernel registry: each op's variants (dtype_op__isa_variant, with a priority and a
// supports() check) registered next to the op (OPT_REGISTER_KERNELS), and the selection of the
// best variant for a node. The op's harness test cases hang off its entry (KernelTestCase.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backends/native/Kernel.h"

namespace optimium {
namespace runtime {
namespace detail {

struct OpTestCase; // KernelTestCase.h

struct KernelVariant {
  /// dtype_op__isa_variant, e.g. "f32_conv__ref", "f32_conv__im2col_gemm". The reference variant
  /// of every op ends in "__ref".
  std::string Name;
  /// Highest priority among the supporting variants is chosen; the reference has priority 0.
  int Priority = 0;
  /// Whether this variant handles the node (types, attributes, CPU features). Null = always.
  std::function<bool(const KernelCreateInfo &)> Supports;
  KernelFactory Create;
};

struct OpKernels {
  std::string Domain;
  std::string OpType;
  std::vector<KernelVariant> Variants;
  std::function<std::vector<OpTestCase>()> TestCases;
};

void registerOpKernels(OpKernels K);
const OpKernels *findOpKernels(const std::string &Domain, const std::string &OpType);
std::vector<const OpKernels *> allOpKernels();
/// The highest-priority variant that supports the node, or null.
const KernelVariant *selectKernelVariant(const OpKernels &K, const KernelCreateInfo &Info);

/// Makes the kernels of one op; OPT_REGISTER_KERNELS registers it under the op's name (which must
/// be the OpType, default domain) and it runs on the first lookup of that op (see OpSchemaFactory).
using OpKernelsFactory = OpKernels (*)();
void registerOpKernelsFactory(const char *OpType, OpKernelsFactory Make);

struct KernelRegistrar {
  KernelRegistrar(const char *OpType, OpKernelsFactory Make) { registerOpKernelsFactory(OpType, Make); }
};

#define OPT_REGISTER_KERNELS(Id, ...)                                                              \
  static ::optimium::runtime::detail::KernelRegistrar OPT_CONCAT(OptKernelRegistrar_, Id)(        \
      #Id, []() -> ::optimium::runtime::detail::OpKernels { return __VA_ARGS__; })

} // namespace detail
} // namespace runtime
} // namespace optimium
