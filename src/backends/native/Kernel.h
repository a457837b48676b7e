// Native (CPU) kernels: the interface every op implements, the variant registry, and the test
// cases the kernel harness (tests/backends/native/KernelHarnessTest.cpp) runs every variant on.
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

/// One input of a harness test case: random values (uniform in [Low, High]) unless Values is set.
struct TestInput {
  ElementType Type = ElementType::F32;
  std::vector<int64_t> Dims;
  std::vector<double> Values;
  bool Constant = false; ///< Passed as a constant at create time (weights, shape tensors).
  bool Omitted = false;  ///< An omitted optional input.
  double Low = -1.0, High = 1.0;
  /// A sequence/optional input: Kind != Tensor, one entry of Elements per element (its dims; an
  /// optional without entries is empty). Type is the element type; Dims is unused.
  ValueKind Kind = ValueKind::Tensor;
  std::vector<std::vector<int64_t>> Elements;
};

struct OpTestCase {
  std::string Label;
  std::map<std::string, AttrValue> Attrs;
  std::vector<TestInput> Inputs;
  int NumOutputs = 1;
  double Tolerance = 1e-4; ///< Max abs diff relative to max(1, |reference|).
  int OpsetVersion = 0;    ///< Opset the node is built with; 0 = the harness default (17).
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
