// Native (CPU) kernels: the interface every op implements (create -> run) and what a kernel sees
// when it runs. The variants of each op and their selection are in KernelRegistry.h; the harness
// test cases in KernelTestCase.h.
//
// Lifecycle: create (validate attributes, pack constant weights once; may be called with
// symbolic shapes) -> run (concrete shapes and bound pointers, any number of times, possibly
// concurrently from several requests: run() must not mutate the kernel).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/OpSchema.h"
#include "ir/TensorView.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Intra-op parallelism, backed by the model's thread pool. Fn(Begin, End) is called on disjoint
/// ranges covering [0, N); Grain is the smallest range worth a task.
class Parallel {
public:
  using RangeFn = std::function<void(size_t Begin, size_t End)>;
  using ForFn = std::function<void(size_t N, size_t Grain, const RangeFn &Fn)>;
  Parallel() {}
  Parallel(ForFn F, int Threads) : For(std::move(F)), Threads(Threads) {}
  void forRange(size_t N, size_t Grain, const RangeFn &Fn) const {
    if (N == 0)
      return;
    if (!For || Threads <= 1 || N <= Grain)
      Fn(0, N);
    else
      For(N, Grain, Fn);
  }
  int threads() const { return Threads; }

  /// The cost model for fan-outs: multiply-adds (or comparable element steps) below which one
  /// fan-out costs more than splitting saves. With the pool's workers warm (a ~0.5 ms spin after
  /// each fan-out), a fan-out and join costs ~2-5 us on a 2-vCPU VM; 2^18 multiply-adds take
  /// ~5-10 us on one AVX-512 core. (It was 2^21 when workers parked between ops: a fan-out then
  /// paid a wake-up, and MobileNetV3-Small's 1x1 convs of 30-45 us ran on one thread.)
  static constexpr int64_t kMinParallelWork = int64_t{1} << 18;
  /// This, or a serial stand-in when Work is below MinWork.
  const Parallel &ifWorth(int64_t Work, int64_t MinWork = kMinParallelWork) const {
    static const Parallel SerialPar;
    return Work < MinWork ? SerialPar : *this;
  }

private:
  ForFn For;
  int Threads = 1;
};

/// The profiler as a kernel sees it (OptRtExecContext::record_copy): empty unless the run is profiled.
struct KernelProfileHook {
  void (*RecordCopy)(void *Profile, int32_t Begin, int32_t IsOutput, uint32_t Index) = nullptr;
  void *Profile = nullptr;
  explicit operator bool() const { return RecordCopy != nullptr; }
  /// Begin or end of a copy/conversion of input (IsOutput false) or output Index.
  void copy(bool Begin, bool IsOutput, size_t Index) const {
    if (RecordCopy)
      RecordCopy(Profile, Begin ? 1 : 0, IsOutput ? 1 : 0, static_cast<uint32_t>(Index));
  }
};

struct KernelContext {
  const std::vector<TensorView> &Inputs;   ///< Omitted optional inputs have Data == nullptr.
  const std::vector<TensorView> &Outputs;  ///< Allocated by the executor with inferred shapes.
  const Parallel &Par;
  KernelProfileHook Profile = {};
};

struct KernelCreateInfo {
  const Node &N;
  std::vector<ValueInfo> Inputs;  ///< Types, shapes (may be symbolic), constant values.
  std::vector<ValueInfo> Outputs;
  /// Set by a factory (markConstConsumed) for each constant input it copied into a form of its own
  /// (packed weights) and never reads at run time: the loader may then release that constant.
  mutable std::vector<char> ConstConsumed = {};
};

/// A factory's note that the kernel it creates keeps its own copy of constant input Index.
inline void markConstConsumed(const KernelCreateInfo &I, size_t Index) {
  if (I.ConstConsumed.size() < I.Inputs.size())
    I.ConstConsumed.resize(I.Inputs.size(), 0);
  if (Index < I.ConstConsumed.size())
    I.ConstConsumed[Index] = 1;
}

class Kernel {
public:
  virtual ~Kernel() = default;
  virtual Status run(const KernelContext &Ctx) const = 0;
};

using KernelFactory = std::function<Result<std::unique_ptr<Kernel>>(const KernelCreateInfo &)>;

/// Helper for kernels without state: wraps a run function.
class FunctionKernel : public Kernel {
public:
  using Fn = std::function<Status(const KernelContext &)>;
  explicit FunctionKernel(Fn F) : F(std::move(F)) {}
  Status run(const KernelContext &Ctx) const override { return F(Ctx); }

private:
  Fn F;
};

} // namespace detail
} // namespace runtime
} // namespace optimium
