// Registry of native kernels: each op's file registers its variants (OPT_REGISTER_KERNELS); the
// planner asks for the best variant that supports a node.
#include "backends/native/KernelRegistry.h"
#include "core/PendingFactories.h"

#include <map>
#include <mutex>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

namespace {

struct KernelRegistry {
  std::mutex Lock;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<OpKernels>> Ops;
  /// Registered but not built yet, by op name.
  PendingFactories<OpKernelsFactory> Pending;
};

// Function-local static: registrars run from static initializers of other translation units.
KernelRegistry &registry() {
  static KernelRegistry R;
  return R;
}

void addLocked(KernelRegistry &R, OpKernels K) {
  auto Key = std::make_pair(K.Domain, K.OpType);
  auto It = R.Ops.find(Key);
  if (It == R.Ops.end()) {
    R.Ops.emplace(std::move(Key), std::make_unique<OpKernels>(std::move(K)));
    return;
  }
  // A second registration for the same op (an ISA-specific file, an extension) adds variants.
  OpKernels &Existing = *It->second;
  for (KernelVariant &V : K.Variants)
    Existing.Variants.push_back(std::move(V));
  if (!Existing.TestCases)
    Existing.TestCases = std::move(K.TestCases);
}

/// Builds the pending kernels registered as OpType (every pending one when OpType is null).
void buildPendingLocked(KernelRegistry &R, const std::string *OpType) {
  R.Pending.build(OpType, [&R](OpKernels K) { addLocked(R, std::move(K)); });
}

} // namespace

void registerOpKernels(OpKernels K) {
  KernelRegistry &R = registry();
  std::lock_guard<std::mutex> G(R.Lock);
  // Pending factories of the same op first, so variant order stays registration order.
  buildPendingLocked(R, &K.OpType);
  addLocked(R, std::move(K));
}

void registerOpKernelsFactory(const char *OpType, OpKernelsFactory Make) {
  KernelRegistry &R = registry();
  std::lock_guard<std::mutex> G(R.Lock);
  R.Pending.add(OpType, Make);
}

const OpKernels *findOpKernels(const std::string &Domain, const std::string &OpType) {
  KernelRegistry &R = registry();
  std::lock_guard<std::mutex> G(R.Lock);
  const auto Key = std::make_pair(Domain == "ai.onnx" ? std::string() : Domain, OpType);
  // Registrations are named by OpType, also those of other domains (com.microsoft QLinearAdd); run
  // also when built already: a later registration may add variants.
  buildPendingLocked(R, &OpType);
  auto It = R.Ops.find(Key);
  if (It == R.Ops.end() && !R.Pending.empty()) {
    buildPendingLocked(R, nullptr); // registered under another name: build everything once
    It = R.Ops.find(Key);
  }
  return It == R.Ops.end() ? nullptr : It->second.get();
}

std::vector<const OpKernels *> allOpKernels() {
  KernelRegistry &R = registry();
  std::lock_guard<std::mutex> G(R.Lock);
  buildPendingLocked(R, nullptr);
  std::vector<const OpKernels *> Out;
  for (const auto &KV : R.Ops)
    Out.push_back(KV.second.get());
  return Out;
}

const KernelVariant *selectKernelVariant(const OpKernels &K, const KernelCreateInfo &Info) {
  const KernelVariant *Best = nullptr;
  for (const KernelVariant &V : K.Variants) {
    if (V.Supports && !V.Supports(Info))
      continue;
    // Ties keep the earlier registration.
    if (!Best || V.Priority > Best->Priority)
      Best = &V;
  }
  return Best;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
