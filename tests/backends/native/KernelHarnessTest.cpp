// The kernel harness: every registered native op, every one of its test cases, every kernel
// variant that supports the case, checked against the op's "__ref" variant on the same random
// inputs. Plus hand-computed checks that the reference kernels themselves are right.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "ir/Container.h"
#include "import/MappedFile.h"
#include "backends/native/KernelRegistry.h"
#include "backends/native/KernelTestCase.h"
#include "backends/native/OutputAllocator.h"
#include "Optimium/Runtime/Types/BFloat16.h"
#include "Optimium/Runtime/Types/Float16.h"
#include "core/LowPrecision.h"

using namespace optimium::runtime;
using namespace optimium::runtime::detail;
namespace lowp = optimium::runtime::detail::lowp;

namespace {

constexpr int HarnessOpset = 17;

bool endsWith(const std::string &S, const std::string &Suffix) {
  return S.size() >= Suffix.size() && S.compare(S.size() - Suffix.size(), Suffix.size(), Suffix) == 0;
}

/// Owned memory for one tensor, or a sequence/optional value (C set).
struct Buffer {
  ElementType Type = ElementType::F32;
  std::vector<int64_t> Dims;
  std::vector<uint8_t> Bytes;
  std::shared_ptr<ContainerValue> C;

  size_t count() const {
    size_t N = 1;
    for (int64_t D : Dims)
      N *= static_cast<size_t>(D);
    return N;
  }
  TensorView view() {
    if (C)
      return containerView(C);
    TensorView V;
    V.Type = Type;
    V.Dims = Dims;
    V.Data = Bytes.empty() ? nullptr : Bytes.data();
    return V;
  }
  double get(size_t I) const {
    const void *P = Bytes.data();
    switch (Type) {
    case ElementType::F32: return static_cast<const float *>(P)[I];
    case ElementType::F64: return static_cast<const double *>(P)[I];
    case ElementType::I8: return static_cast<const int8_t *>(P)[I];
    case ElementType::U8: return static_cast<const uint8_t *>(P)[I];
    case ElementType::I32: return static_cast<const int32_t *>(P)[I];
    case ElementType::I64: return static_cast<double>(static_cast<const int64_t *>(P)[I]);
    case ElementType::Bool: return static_cast<const uint8_t *>(P)[I];
    case ElementType::BF16: return bfloat16::toFloat(static_cast<const uint16_t *>(P)[I]);
    case ElementType::F16: return float16::toFloat(static_cast<const uint16_t *>(P)[I]);
    default:
      return lowp::isLowPrecision(Type) ? lowp::lowPrecisionToDouble(Type, static_cast<const uint8_t *>(P)[I]) : 0;
    }
  }
  void set(size_t I, double V) {
    void *P = Bytes.data();
    switch (Type) {
    case ElementType::F32: static_cast<float *>(P)[I] = static_cast<float>(V); break;
    case ElementType::F64: static_cast<double *>(P)[I] = V; break;
    case ElementType::I8: static_cast<int8_t *>(P)[I] = static_cast<int8_t>(std::llround(V)); break;
    case ElementType::U8: static_cast<uint8_t *>(P)[I] = static_cast<uint8_t>(std::llround(V)); break;
    case ElementType::I32: static_cast<int32_t *>(P)[I] = static_cast<int32_t>(std::llround(V)); break;
    case ElementType::I64: static_cast<int64_t *>(P)[I] = static_cast<int64_t>(std::llround(V)); break;
    case ElementType::Bool: static_cast<uint8_t *>(P)[I] = V != 0; break;
    case ElementType::BF16: static_cast<uint16_t *>(P)[I] = bfloat16::fromFloat(static_cast<float>(V)); break;
    case ElementType::F16: static_cast<uint16_t *>(P)[I] = float16::fromFloat(static_cast<float>(V)); break;
    default:
      // Low-precision types: the stored byte (sub-byte integers clamped to their range).
      if (lowp::isSubByteInt(Type)) {
        int32_t Lo, Hi;
        lowp::intRange(Type, Lo, Hi);
        static_cast<int8_t *>(P)[I] = static_cast<int8_t>(std::min<long long>(Hi, std::max<long long>(Lo, std::llround(V))));
      } else if (lowp::isLowPrecisionFloat(Type)) {
        static_cast<uint8_t *>(P)[I] = lowp::doubleToLowPrecision(Type, V, true);
      }
      break;
    }
  }
  bool isInteger() const { return Type != ElementType::F32 && Type != ElementType::F64; }
};

Buffer makeBuffer(ElementType T, std::vector<int64_t> Dims) {
  Buffer B;
  B.Type = T;
  B.Dims = std::move(Dims);
  B.Bytes.assign(B.count() * getElementSize(T), 0);
  return B;
}

/// A pool stand-in: splits into up to 4 chunks and runs them in reverse order, the first on this
/// thread and the others each on a thread of its own (one at a time, so results stay
/// deterministic), so kernels that assume a range starts at 0, that chunks run in order, or that
/// a chunk sees the caller's thread_local state fail.
Parallel reversedChunksParallel() {
  return Parallel(
      [](size_t N, size_t Grain, const Parallel::RangeFn &Fn) {
        const size_t Chunks = std::min<size_t>(4, (N + Grain - 1) / std::max<size_t>(Grain, 1));
        const size_t Step = (N + Chunks - 1) / Chunks;
        for (size_t C = Chunks; C-- > 0;) {
          const size_t B = C * Step, E = std::min(N, B + Step);
          if (B >= E)
            continue;
          if (C == Chunks - 1) {
            Fn(B, E);
          } else {
            std::exception_ptr Error;
            std::thread T([&] {
              try {
                Fn(B, E);
              } catch (...) {
                Error = std::current_exception();
              }
            });
            T.join();
            if (Error)
              std::rethrow_exception(Error);
          }
        }
      },
      4);
}

/// A node and its inputs, with inferred outputs, ready to create kernels for.
struct PreparedCase {
  Node N;
  std::vector<Buffer> Inputs;
  std::vector<ValueInfo> InputInfos, OutputInfos;
  std::vector<std::vector<int64_t>> OutputDims;
  std::vector<std::shared_ptr<MappedFile>> Files; ///< the mapped files of InFile constants
};

/// A constant whose bytes lie one page into a mapped file of their own (TestInput::InFile): the
/// file is removed once mapped (the mapping and an open descriptor keep it readable).
Status mapConstant(const Buffer &B, ValueInfo &VI, PreparedCase &P) {
  const std::string Path = ::testing::TempDir() + "/harness_const_" + std::to_string(::getpid()) + "_" +
                           std::to_string(P.Files.size()) + ".bin";
  {
    std::ofstream F(Path, std::ios::binary | std::ios::trunc);
    const std::vector<char> Page(4096, 0);
    F.write(Page.data(), static_cast<std::streamsize>(Page.size()));
    F.write(reinterpret_cast<const char *>(B.Bytes.data()), static_cast<std::streamsize>(B.Bytes.size()));
    if (!F)
      return makeError(ErrorCode::IO, "cannot write '", Path, "'");
  }
  auto M = MappedFile::open(Path);
  if (!M.isOk())
    return M.status();
  const std::shared_ptr<MappedFile> F = M.value();
  if (!F->sourceFile())
    return makeError(ErrorCode::IO, "cannot open '", Path, "' again");
  std::remove(Path.c_str());
  auto C = std::make_shared<ConstData>();
  C->Type = B.Type;
  C->Dims = B.Dims;
  C->Data = F->Data + 4096;
  C->Bytes = B.Bytes.size();
  C->KeepAlive = F;
  VI.Const = C;
  P.Files.push_back(F);
  return Status::ok();
}

Status prepare(const OpKernels &K, const OpTestCase &C, unsigned Seed, PreparedCase &P) {
  P.N.Name = K.OpType + "_" + C.Label;
  P.N.OpType = K.OpType;
  P.N.Domain = K.Domain;
  P.N.OpsetVersion = C.OpsetVersion > 0 ? C.OpsetVersion : HarnessOpset;
  P.N.Attrs = C.Attrs;
  std::mt19937 Rng(Seed);
  for (size_t I = 0; I < C.Inputs.size(); ++I) {
    const TestInput &In = C.Inputs[I];
    P.N.Inputs.push_back(In.Omitted ? -1 : static_cast<int>(I));
    ValueInfo VI;
    Buffer B;
    if (!In.Omitted && isContainerKind(In.Kind)) {
      B.Type = In.Type;
      B.C = makeContainer(In.Kind, In.Type);
      B.C->HasValue = !isOptionalKind(In.Kind) || !In.Elements.empty();
      std::uniform_real_distribution<double> Dist(In.Low, In.High);
      for (const std::vector<int64_t> &Dims : In.Elements) {
        Buffer E = makeBuffer(In.Type, Dims);
        for (size_t K = 0; K < E.count(); ++K)
          E.set(K, Dist(Rng));
        TensorView EV = E.view();
        EV.Data = E.Bytes.data();
        Result<OwnedTensor> T = copyToOwned(EV);
        if (!T.isOk())
          return T.status();
        B.C->Tensors.push_back(std::move(T).value());
      }
      VI.Present = true;
      VI.Kind = In.Kind;
      VI.Type = In.Type;
      // The element shape as inference would know it: exact when all agree, else symbols.
      std::vector<Expr> Elem;
      const size_t Rank = In.Elements.empty() ? 1 : In.Elements[0].size();
      for (size_t D = 0; D < Rank; ++D) {
        bool Same = !In.Elements.empty();
        for (const auto &Dims : In.Elements)
          Same &= Dims.size() == Rank && Dims[D] == In.Elements[0][D];
        Elem.push_back(Same ? Expr(static_cast<long long>(In.Elements[0][D]))
                            : Expr("elem_" + std::to_string(I) + "_" + std::to_string(D)));
      }
      VI.Shape = TensorShape(std::move(Elem));
    } else if (!In.Omitted) {
      B = makeBuffer(In.Type, In.Dims);
      std::uniform_real_distribution<double> Dist(In.Low, In.High);
      for (size_t E = 0; E < B.count(); ++E)
        B.set(E, In.Values.empty() ? Dist(Rng) : In.Values[E % In.Values.size()]);
      VI.Present = true;
      VI.Type = In.Type;
      VI.Shape = TensorShape::fromDims(In.Dims);
      if (In.Constant && In.InFile) {
        RETURN_IF_ERROR(mapConstant(B, VI, P));
      } else if (In.Constant) {
        VI.Const = ConstData::allocate(In.Type, In.Dims);
        if (!B.Bytes.empty())
          std::memcpy(VI.Const->mutableData(), B.Bytes.data(), B.Bytes.size());
      }
    }
    P.Inputs.push_back(std::move(B));
    P.InputInfos.push_back(VI);
  }
  for (int I = 0; I < C.NumOutputs; ++I)
    P.N.Outputs.push_back(static_cast<int>(C.Inputs.size()) + I);
  ShapeContext Ctx(P.N);
  Ctx.Inputs = P.InputInfos;
  RETURN_IF_ERROR(inferNode(Ctx));
  P.OutputInfos = Ctx.Outputs;
  for (const ValueInfo &O : Ctx.Outputs)
    P.OutputDims.push_back(isContainerKind(O.Kind) || O.Shape.isDynamic() ? std::vector<int64_t>() : O.Shape.getDims());
  return Status::ok();
}

/// Output buffers of a prepared case: containers for sequence/optional outputs, unallocated ones
/// (sized through the output allocator, as control flow is) where the shape is known only while
/// running, else Fill-initialized bytes.
std::vector<Buffer> makeOutputs(const PreparedCase &P, uint8_t Fill) {
  std::vector<Buffer> Outputs;
  for (size_t I = 0; I < P.OutputDims.size(); ++I) {
    const ValueInfo &O = P.OutputInfos[I];
    Buffer B;
    B.Type = O.Type;
    if (isContainerKind(O.Kind)) {
      B.C = makeContainer(O.Kind, O.Type);
    } else if (!O.Shape.isDynamic()) {
      B = makeBuffer(O.Type, P.OutputDims[I]);
      std::fill(B.Bytes.begin(), B.Bytes.end(), Fill);
    }
    Outputs.push_back(std::move(B));
  }
  return Outputs;
}

/// The allocator the executor would install: sizes Outputs[Index] once the kernel knows its dims.
OutputAllocator allocatorFor(std::vector<Buffer> &Outputs) {
  return [&Outputs](size_t Index, const std::vector<int64_t> &Dims) -> Result<TensorView> {
    if (Index >= Outputs.size())
      return makeError(ErrorCode::Infer, "no output ", Index);
    Buffer &B = Outputs[Index];
    B.Dims = Dims;
    B.Bytes.assign(B.count() * getElementSize(B.Type), 0xFF);
    TensorView V = B.view();
    return V;
  };
}

/// Creates V for the prepared case and runs it; outputs start as 0xFF bytes (NaN for floats) so
/// an element the kernel forgets to write shows up.
Status runVariant(const KernelVariant &V, PreparedCase &P, const Parallel &Par, std::vector<Buffer> &Outputs) {
  KernelCreateInfo Info{P.N, P.InputInfos, P.OutputInfos};
  ScopedSourceFiles Files(&P.Files);
  auto KernelOr = V.Create(Info);
  if (!KernelOr.isOk())
    return KernelOr.status();
  std::vector<TensorView> In, Out;
  for (Buffer &B : P.Inputs)
    In.push_back(B.view());
  Outputs = makeOutputs(P, 0xFF);
  for (Buffer &B : Outputs)
    Out.push_back(B.view());
  const OutputAllocator Alloc = allocatorFor(Outputs);
  ScopedOutputAllocator Scope(&Alloc);
  KernelContext Ctx{In, Out, Par};
  return (*KernelOr)->run(Ctx);
}

bool supports(const KernelVariant &V, const PreparedCase &P) {
  KernelCreateInfo Info{P.N, P.InputInfos, P.OutputInfos};
  ScopedSourceFiles Files(&P.Files);
  return !V.Supports || V.Supports(Info);
}

/// First mismatch as text, or "" when every element is within tolerance.
std::string compare(const Buffer &Ref, const Buffer &Got, double Tolerance);

/// Sequences/optionals: same kind, presence and length, and every element equal.
std::string compareContainers(const ContainerValue &Ref, const ContainerValue &Got, double Tolerance) {
  if (Ref.Kind != Got.Kind || Ref.HasValue != Got.HasValue || Ref.Type != Got.Type)
    return "kind, presence or element type differs";
  if (Ref.Tensors.size() != Got.Tensors.size())
    return "length " + std::to_string(Got.Tensors.size()) + ", reference " + std::to_string(Ref.Tensors.size());
  for (size_t I = 0; I < Ref.Tensors.size(); ++I) {
    auto AsBuffer = [](const OwnedTensor &T) {
      Buffer B = makeBuffer(T.View.Type, T.View.Dims);
      if (!B.Bytes.empty())
        std::memcpy(B.Bytes.data(), T.View.Data, B.Bytes.size());
      return B;
    };
    const std::string D = compare(AsBuffer(Ref.Tensors[I]), AsBuffer(Got.Tensors[I]), Tolerance);
    if (!D.empty())
      return "element " + std::to_string(I) + ": " + D;
  }
  return "";
}

std::string compare(const Buffer &Ref, const Buffer &Got, double Tolerance) {
  if (Ref.C || Got.C)
    return Ref.C && Got.C ? compareContainers(*Ref.C, *Got.C, Tolerance) : "one output is a sequence/optional";
  if (Ref.Dims != Got.Dims || Ref.Type != Got.Type)
    return "output shape or type differs";
  if (Ref.isInteger())
    return Ref.Bytes == Got.Bytes ? "" : "integer output differs";
  for (size_t I = 0; I < Ref.count(); ++I) {
    const double R = Ref.get(I), G = Got.get(I);
    if ((std::isnan(R) && std::isnan(G)) || R == G) // equal infinities too
      continue;
    const double Err = std::fabs(R - G) / std::max(1.0, std::fabs(R));
    if (!(Err <= Tolerance))
      return "element " + std::to_string(I) + ": reference " + std::to_string(R) + ", got " + std::to_string(G);
  }
  return "";
}

/// Rounds every float32 input (constants included) of P to its nearest bfloat16 value.
void roundFloatInputsToBf16(PreparedCase &P) {
  for (size_t I = 0; I < P.Inputs.size(); ++I) {
    Buffer &B = P.Inputs[I];
    if (B.C || B.Type != ElementType::F32 || B.Bytes.empty())
      continue;
    for (size_t E = 0; E < B.count(); ++E)
      B.set(E, bfloat16::toFloat(bfloat16::fromFloat(static_cast<float>(B.get(E)))));
    if (P.InputInfos[I].Const)
      std::memcpy(P.InputInfos[I].Const->mutableData(), B.Bytes.data(), B.Bytes.size());
  }
}

/// Variants of the bfloat16 compute mode (kComputeBf16) carry "_bf16c" in their names
/// ("f32_matmul_bf16c__...", "f32_conv__im2col_bf16c_..."): they round their float32 operands to
/// bfloat16 before multiplying, so they are checked against the reference run on the inputs
/// rounded to bfloat16: on those same rounded inputs only the float32 summation order differs
/// (the case's tolerance); on the raw inputs also the operands the kernel keeps float32 (bias,
/// residual, Gemm's C: rounded for the reference, at most 2^-9 of themselves each).
bool roundsToBf16(const KernelVariant &V) { return V.Name.find("_bf16c") != std::string::npos; }

/// Raw inputs against the reference on bf16-rounded inputs, relative to max(1, |reference|). A
/// rounding that is not to nearest even (truncation) is off by sums of K errors of 2^-9 x |a b|.
constexpr double kBf16RawTolerance = 1.0 / 128;

TEST(KernelHarness, EveryVariantMatchesReference) {
  const std::vector<const OpKernels *> All = allOpKernels();
  ASSERT_FALSE(All.empty());
  size_t CasesRun = 0, VariantRuns = 0;
  std::set<std::string> VariantsExercised, AllVariants;
  for (const OpKernels *K : All) {
    SCOPED_TRACE("op " + K->OpType);
    bool HasRef = false;
    for (const KernelVariant &V : K->Variants) {
      HasRef |= endsWith(V.Name, "__ref");
      AllVariants.insert(V.Name);
    }
    EXPECT_TRUE(HasRef) << K->OpType << " has no __ref variant";
    ASSERT_TRUE(static_cast<bool>(K->TestCases)) << K->OpType << " has no test cases";
    const std::vector<OpTestCase> Cases = K->TestCases();
    EXPECT_FALSE(Cases.empty()) << K->OpType << " has no test cases";
    EXPECT_NE(findOpSchema(K->Domain, K->OpType), nullptr) << K->OpType << " has kernels but no schema";
    unsigned Seed = 1234;
    for (const OpTestCase &C : Cases) {
      SCOPED_TRACE("case " + C.Label);
      PreparedCase P;
      const Status S = prepare(*K, C, Seed++, P);
      ASSERT_TRUE(S.isOk()) << S.message();
      const KernelVariant *Ref = nullptr;
      for (const KernelVariant &V : K->Variants)
        if (endsWith(V.Name, "__ref") && supports(V, P)) {
          Ref = &V;
          break;
        }
      ASSERT_NE(Ref, nullptr) << "no __ref variant supports the case";
      std::vector<Buffer> Expected;
      const Parallel Serial;
      const Status RS = runVariant(*Ref, P, Serial, Expected);
      ASSERT_TRUE(RS.isOk()) << Ref->Name << ": " << RS.message();
      ++CasesRun;
      const Parallel Par = reversedChunksParallel();
      for (const KernelVariant &V : K->Variants) {
        if (!supports(V, P))
          continue;
        SCOPED_TRACE("variant " + V.Name);
        VariantsExercised.insert(V.Name);
        std::vector<Buffer> Got;
        const Status VS = runVariant(V, P, Par, Got);
        ASSERT_TRUE(VS.isOk()) << VS.message();
        ++VariantRuns;
        ASSERT_EQ(Got.size(), Expected.size());
        if (!roundsToBf16(V)) {
          for (size_t O = 0; O < Got.size(); ++O) {
            const std::string Diff = compare(Expected[O], Got[O], C.Tolerance);
            EXPECT_EQ(Diff, "") << "output " << O;
          }
          continue;
        }
        PreparedCase Exact; // the same inputs, rounded to bfloat16
        ASSERT_TRUE(prepare(*K, C, Seed - 1, Exact).isOk());
        roundFloatInputsToBf16(Exact);
        std::vector<Buffer> ExactRef, ExactGot;
        ASSERT_TRUE(runVariant(*Ref, Exact, Serial, ExactRef).isOk());
        const Status ES = runVariant(V, Exact, Par, ExactGot);
        ASSERT_TRUE(ES.isOk()) << ES.message();
        ++VariantRuns;
        ASSERT_EQ(ExactGot.size(), ExactRef.size());
        for (size_t O = 0; O < Got.size(); ++O) {
          EXPECT_EQ(compare(ExactRef[O], ExactGot[O], C.Tolerance), "") << "output " << O << ", bf16-exact inputs";
          EXPECT_EQ(compare(ExactRef[O], Got[O], std::max(C.Tolerance, kBf16RawTolerance)), "")
              << "output " << O << ", raw inputs";
        }
      }
    }
  }
  // A variant no case reaches is untested code (unless this CPU lacks its ISA).
  for (const std::string &Name : AllVariants)
    if (!VariantsExercised.count(Name))
      std::cout << "[ note ] variant not exercised on this machine: " << Name << "\n";
  std::cout << "[ info ] " << All.size() << " ops, " << CasesRun << " cases, " << VariantRuns << " variant runs\n";
}

// run() is const and may be called by several requests at once: one kernel object (the variant the
// registry selects), several threads, each with its own outputs, all equal to the reference.
TEST(KernelHarness, OneKernelRunsConcurrently) {
  for (const OpKernels *K : allOpKernels()) {
    SCOPED_TRACE("op " + K->OpType);
    const std::vector<OpTestCase> Cases = K->TestCases();
    ASSERT_FALSE(Cases.empty());
    PreparedCase P;
    ASSERT_TRUE(prepare(*K, Cases[0], 99, P).isOk());
    KernelCreateInfo Info{P.N, P.InputInfos, P.OutputInfos};
    ScopedSourceFiles Files(&P.Files);
    const KernelVariant *Best = selectKernelVariant(*K, Info);
    ASSERT_NE(Best, nullptr);
    const KernelVariant *Ref = nullptr;
    for (const KernelVariant &V : K->Variants)
      if (endsWith(V.Name, "__ref") && supports(V, P) && !Ref)
        Ref = &V;
    ASSERT_NE(Ref, nullptr);
    std::vector<Buffer> Expected;
    ASSERT_TRUE(runVariant(*Ref, P, Parallel(), Expected).isOk());
    auto KernelOr = Best->Create(Info);
    ASSERT_TRUE(KernelOr.isOk()) << KernelOr.status().message();
    const Kernel &Shared = **KernelOr;
    constexpr int Threads = 4;
    std::vector<std::vector<Buffer>> Outs(Threads);
    std::vector<Status> Results(Threads);
    std::vector<std::thread> Pool;
    for (int T = 0; T < Threads; ++T)
      Pool.emplace_back([&, T] {
        std::vector<TensorView> In;
        for (Buffer &B : P.Inputs)
          In.push_back(B.view());
        const Parallel Serial;
        for (int Rep = 0; Rep < 3 && Results[T].isOk(); ++Rep) {
          Outs[T] = makeOutputs(P, 0);
          std::vector<TensorView> Out;
          for (Buffer &B : Outs[T])
            Out.push_back(B.view());
          const OutputAllocator Alloc = allocatorFor(Outs[T]);
          ScopedOutputAllocator Scope(&Alloc);
          KernelContext Ctx{In, Out, Serial};
          Results[T] = Shared.run(Ctx);
        }
      });
    for (std::thread &T : Pool)
      T.join();
    for (int T = 0; T < Threads; ++T) {
      ASSERT_TRUE(Results[T].isOk()) << Best->Name << ": " << Results[T].message();
      for (size_t O = 0; O < Expected.size(); ++O)
        EXPECT_EQ(compare(Expected[O], Outs[T][O], Cases[0].Tolerance), "") << Best->Name;
    }
  }
}

TEST(KernelHarness, ExpectedOpsAreRegistered) {
  for (const char *Op : {"Conv", "Gemm", "MatMul", "Add", "Mul", "Sub", "Div", "Relu", "MaxPool", "AveragePool",
                         "GlobalAveragePool", "Flatten", "Reshape", "Softmax", "Transpose", "Concat", "Identity"}) {
    EXPECT_NE(findOpKernels("", Op), nullptr) << Op;
    EXPECT_NE(findOpSchema("", Op), nullptr) << Op;
  }
}

// --- the reference kernels against hand-computed values ----------------------------------------

struct HandInput {
  ElementType Type;
  std::vector<int64_t> Dims;
  std::vector<double> Values;
  bool Constant = false;
};

/// Runs the op's __ref variant for Type on the given inputs and returns output 0 as doubles.
std::vector<double> runReference(const std::string &Op, const std::map<std::string, AttrValue> &Attrs,
                                 const std::vector<HandInput> &Inputs, int Opset = HarnessOpset,
                                 std::vector<int64_t> *OutDims = nullptr) {
  const OpKernels *K = findOpKernels("", Op);
  EXPECT_NE(K, nullptr);
  if (!K)
    return {};
  OpKernels Single = *K;
  OpTestCase C;
  C.Label = "hand";
  C.Attrs = Attrs;
  for (const HandInput &H : Inputs) {
    TestInput T;
    T.Type = H.Type;
    T.Dims = H.Dims;
    T.Values = H.Values;
    T.Constant = H.Constant;
    C.Inputs.push_back(T);
  }
  PreparedCase P;
  // Prepare with the harness opset, then re-run inference at the requested one.
  Status S = prepare(Single, C, 1, P);
  EXPECT_TRUE(S.isOk()) << S.message();
  if (!S.isOk())
    return {};
  P.N.OpsetVersion = Opset;
  for (const KernelVariant &V : K->Variants) {
    if (!endsWith(V.Name, "__ref") || !supports(V, P))
      continue;
    std::vector<Buffer> Out;
    S = runVariant(V, P, Parallel(), Out);
    EXPECT_TRUE(S.isOk()) << S.message();
    if (!S.isOk())
      return {};
    if (OutDims)
      *OutDims = Out[0].Dims;
    std::vector<double> R;
    for (size_t I = 0; I < Out[0].count(); ++I)
      R.push_back(Out[0].get(I));
    return R;
  }
  ADD_FAILURE() << "no reference variant for " << Op;
  return {};
}

void expectNear(const std::vector<double> &Got, const std::vector<double> &Want, double Tol = 1e-5) {
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t I = 0; I < Got.size(); ++I)
    EXPECT_NEAR(Got[I], Want[I], Tol) << "element " << I;
}

AttrValue ints(std::vector<int64_t> V) {
  AttrValue A;
  A.K = AttrValue::Kind::Ints;
  A.Ints = std::move(V);
  return A;
}
AttrValue intAttr(int64_t V) {
  AttrValue A;
  A.K = AttrValue::Kind::Int;
  A.I = V;
  return A;
}
AttrValue floatAttr(float V) {
  AttrValue A;
  A.K = AttrValue::Kind::Float;
  A.F = V;
  return A;
}

const ElementType F32 = ElementType::F32;

TEST(ReferenceKernels, ConvTiny) {
  // 1x1x3x3 input 1..9, 2x2 kernel of ones, bias 10: window sums + 10.
  auto Y = runReference("Conv", {}, {{F32, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}},
                                     {F32, {1, 1, 2, 2}, {1, 1, 1, 1}},
                                     {F32, {1}, {10}}});
  expectNear(Y, {22, 26, 34, 38});
  // Padding 1, stride 2, kernel [[1,0],[0,-1]]: y = x[i-1][j-1] - x[i][j] over the padded input.
  Y = runReference("Conv", {{"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}},
                   {{F32, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}, {F32, {1, 1, 2, 2}, {1, 0, 0, -1}}});
  expectNear(Y, {-1, -3, -7, 5 - 9});
  // Grouped: 2 channels, 2 groups, 1x1 kernels scale 2 and 3.
  Y = runReference("Conv", {{"group", intAttr(2)}},
                   {{F32, {1, 2, 1, 2}, {1, 2, 3, 4}}, {F32, {2, 1, 1, 1}, {2, 3}}});
  expectNear(Y, {2, 4, 9, 12});
}

TEST(ReferenceKernels, Softmax) {
  const double E1 = std::exp(1.0), E2 = std::exp(2.0);
  // Opset 13: along the last axis.
  auto Y = runReference("Softmax", {}, {{F32, {2, 2}, {0, 1, 0, 2}}});
  expectNear(Y, {1 / (1 + E1), E1 / (1 + E1), 1 / (1 + E2), E2 / (1 + E2)});
  // Opset 11, axis 1 on [1, 2, 2]: the trailing 2x2 is one flattened row of 4.
  Y = runReference("Softmax", {{"axis", intAttr(1)}}, {{F32, {1, 2, 2}, {0, 1, 0, 2}}}, 11);
  const double Sum = 1 + E1 + 1 + E2;
  expectNear(Y, {1 / Sum, E1 / Sum, 1 / Sum, E2 / Sum});
  // Opset 13, axis 1 on [1, 2, 2]: columns.
  Y = runReference("Softmax", {{"axis", intAttr(1)}}, {{F32, {1, 2, 2}, {0, 1, 0, 2}}}, 13);
  expectNear(Y, {0.5, E1 / (E1 + E2), 0.5, E2 / (E1 + E2)});
}

TEST(ReferenceKernels, Pooling) {
  // 4x4 input 0..15, kernel 3, stride 2, ceil_mode: windows start at 0 and 2 -> 2x2.
  std::vector<double> X(16);
  for (int I = 0; I < 16; ++I)
    X[I] = I;
  std::vector<int64_t> Dims;
  auto Y = runReference("MaxPool", {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"ceil_mode", intAttr(1)}},
                        {{F32, {1, 1, 4, 4}, X}}, HarnessOpset, &Dims);
  EXPECT_EQ(Dims, (std::vector<int64_t>{1, 1, 2, 2}));
  expectNear(Y, {10, 11, 14, 15});
  // Average 2x2 with pad 1: corner window covers one real element.
  Y = runReference("AveragePool", {{"kernel_shape", ints({2, 2})}, {"pads", ints({1, 1, 0, 0})}},
                   {{F32, {1, 1, 2, 2}, {1, 2, 3, 4}}});
  expectNear(Y, {1, 1.5, 2, 2.5});
  Y = runReference("AveragePool",
                   {{"kernel_shape", ints({2, 2})}, {"pads", ints({1, 1, 0, 0})}, {"count_include_pad", intAttr(1)}},
                   {{F32, {1, 1, 2, 2}, {1, 2, 3, 4}}});
  expectNear(Y, {0.25, 0.75, 1, 2.5});
  Y = runReference("GlobalAveragePool", {}, {{F32, {1, 2, 2, 1}, {1, 3, 5, 9}}});
  expectNear(Y, {2, 7});
}

TEST(ReferenceKernels, GemmAndMatMul) {
  // Y = 2 * A^T B + 0.5 * C, A^T = [[1,2],[3,4]], B = I, C = [10, 20] broadcast over rows.
  auto Y = runReference("Gemm", {{"transA", intAttr(1)}, {"alpha", floatAttr(2)}, {"beta", floatAttr(0.5f)}},
                        {{F32, {2, 2}, {1, 3, 2, 4}}, {F32, {2, 2}, {1, 0, 0, 1}}, {F32, {2}, {10, 20}}});
  expectNear(Y, {2 + 5, 4 + 10, 6 + 5, 8 + 10});
  // 1-D x 2-D: [1, 2] @ [[1, 2, 3], [4, 5, 6]] = [9, 12, 15], rank 1.
  std::vector<int64_t> Dims;
  Y = runReference("MatMul", {}, {{F32, {2}, {1, 2}}, {F32, {2, 3}, {1, 2, 3, 4, 5, 6}}}, HarnessOpset, &Dims);
  EXPECT_EQ(Dims, (std::vector<int64_t>{3}));
  expectNear(Y, {9, 12, 15});
}

TEST(ReferenceKernels, IntegerArithmeticIsExact) {
  const double Big = 4000000000123.0; // beyond int32 and beyond float precision
  auto Y = runReference("Add", {}, {{ElementType::I64, {2}, {Big, -Big}}, {ElementType::I64, {2}, {1, -1}}});
  ASSERT_EQ(Y.size(), 2u);
  EXPECT_EQ(static_cast<int64_t>(Y[0]), 4000000000124LL);
  EXPECT_EQ(static_cast<int64_t>(Y[1]), -4000000000124LL);
  // Truncating integer division.
  Y = runReference("Div", {}, {{ElementType::I32, {3}, {7, -7, 7}}, {ElementType::I32, {3}, {2, 2, -2}}});
  expectNear(Y, {3, -3, -3});
}

TEST(ReferenceKernels, IntegerDivisionByZeroIsAnError) {
  const OpKernels *K = findOpKernels("", "Div");
  ASSERT_NE(K, nullptr);
  OpTestCase C;
  C.Label = "div0";
  for (const std::vector<double> &Values : {std::vector<double>{1, 2}, std::vector<double>{1, 0}}) {
    TestInput In;
    In.Type = ElementType::I32;
    In.Dims = {2};
    In.Values = Values;
    C.Inputs.push_back(In);
  }
  PreparedCase P;
  ASSERT_TRUE(prepare(*K, C, 1, P).isOk());
  for (const KernelVariant &V : K->Variants) {
    if (!supports(V, P))
      continue;
    std::vector<Buffer> Out;
    const Status S = runVariant(V, P, Parallel(), Out);
    EXPECT_EQ(S.code(), ErrorCode::Infer) << V.Name;
    EXPECT_NE(S.message().find("division by zero"), std::string::npos) << S.message();
  }
}

TEST(ReferenceKernels, ReshapeTransposeConcat) {
  std::vector<int64_t> Dims;
  auto Y = runReference("Transpose", {}, {{F32, {2, 3}, {1, 2, 3, 4, 5, 6}}}, HarnessOpset, &Dims);
  EXPECT_EQ(Dims, (std::vector<int64_t>{3, 2}));
  expectNear(Y, {1, 4, 2, 5, 3, 6});
  Y = runReference("Concat", {{"axis", intAttr(-1)}},
                   {{F32, {2, 1}, {1, 2}}, {F32, {2, 2}, {3, 4, 5, 6}}}, HarnessOpset, &Dims);
  EXPECT_EQ(Dims, (std::vector<int64_t>{2, 3}));
  expectNear(Y, {1, 3, 4, 2, 5, 6});
  Y = runReference("Reshape", {}, {{F32, {2, 3}, {1, 2, 3, 4, 5, 6}}, {ElementType::I64, {2}, {0, -1}, true}}, HarnessOpset,
                   &Dims);
  EXPECT_EQ(Dims, (std::vector<int64_t>{2, 3}));
  expectNear(Y, {1, 2, 3, 4, 5, 6});
  Y = runReference("Relu", {}, {{ElementType::I8, {3}, {-5, 0, 7}}});
  expectNear(Y, {0, 0, 7});
}

} // namespace

// --- low-precision types: Cast / QuantizeLinear / DequantizeLinear by hand ------------------------

namespace {

/// Shape inference of one node on the given inputs (the path a model load takes).
Status inferCase(const std::string &Op, const std::map<std::string, AttrValue> &Attrs,
                 const std::vector<HandInput> &Inputs) {
  const OpKernels *K = findOpKernels("", Op);
  if (!K)
    return Status(ErrorCode::NotImplemented, "no op " + Op);
  OpTestCase C;
  C.Label = "bad";
  C.Attrs = Attrs;
  for (const HandInput &H : Inputs) {
    TestInput T;
    T.Type = H.Type;
    T.Dims = H.Dims;
    T.Values = H.Values;
    T.Constant = H.Constant;
    C.Inputs.push_back(T);
  }
  PreparedCase P;
  return prepare(*K, C, 1, P);
}

void expectSameValues(const std::vector<double> &Got, const std::vector<double> &Want) {
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t I = 0; I < Got.size(); ++I) {
    if (std::isnan(Want[I]))
      EXPECT_TRUE(std::isnan(Got[I])) << "element " << I << ": " << Got[I];
    else
      EXPECT_EQ(Got[I], Want[I]) << "element " << I;
  }
}

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

} // namespace

TEST(ReferenceKernels, CastToFloat8SaturatesOrOverflows) {
  const HandInput X{F32, {6}, {0.47892547, 1e6, -1e6, kNan, kInf, 1e-7}};
  expectSameValues(runReference("Cast", {{"to", intAttr(17)}}, {X}), {0.46875, 448, -448, kNan, 448, 0});
  expectSameValues(runReference("Cast", {{"to", intAttr(17)}, {"saturate", intAttr(0)}}, {X}),
                   {0.46875, kNan, kNan, kNan, kNan, 0});
  expectSameValues(runReference("Cast", {{"to", intAttr(19)}, {"saturate", intAttr(0)}}, {X}),
                   {0.5, kInf, -kInf, kNan, kInf, 0});
  expectSameValues(runReference("Cast", {{"to", intAttr(20)}}, {X}), {0.5, 57344, -57344, kNan, 57344, 0});
  expectSameValues(runReference("Cast", {{"to", intAttr(23)}}, {{F32, {4}, {0.25, 0.75, 9, -5}}}), {0, 1, 6, -4});
}

TEST(ReferenceKernels, CastToSubByteIntegers) {
  // From floats: truncate; out of range gives 0. From integers: keep the low bits.
  expectSameValues(runReference("Cast", {{"to", intAttr(22)}}, {{F32, {6}, {-9, -8, 7, 8, 2.7, -2.7}}}),
                   {0, -8, 7, 0, 2, -2});
  expectSameValues(runReference("Cast", {{"to", intAttr(22)}}, {{ElementType::I32, {3}, {-9, 200, 15}}}), {7, -8, -1});
  expectSameValues(runReference("Cast", {{"to", intAttr(25)}}, {{F32, {5}, {-1, 0, 1.5, 3, 4}}}), {0, 0, 1, 3, 0});
  expectSameValues(runReference("Cast", {{"to", intAttr(1)}}, {{ElementType::I4, {3}, {-8, 0, 7}}}), {-8, 0, 7});
}

TEST(ReferenceKernels, QuantizeLinearLowPrecisionTargets) {
  // int4: rint(x / scale) + zero point, clamped to [-8, 7].
  expectSameValues(runReference("QuantizeLinear", {},
                                {{F32, {4}, {-100, 100, 3.5, 2.5}}, {F32, {}, {1}, true}, {ElementType::I4, {}, {0}, true}}),
                   {-8, 7, 4, 2});
  // uint2 via output_dtype, no zero point.
  expectSameValues(runReference("QuantizeLinear", {{"output_dtype", intAttr(25)}},
                                {{F32, {4}, {-1, 1, 2, 9}}, {F32, {}, {1}, true}}),
                   {0, 1, 2, 3});
  // float8: 'saturate' decides what 1000 / 1 becomes in e4m3fn.
  const std::vector<HandInput> In{{F32, {2}, {1000, 1}}, {F32, {}, {1}, true}, {ElementType::F8E4M3FN, {}, {0}, true}};
  expectSameValues(runReference("QuantizeLinear", {}, In), {448, 1});
  expectSameValues(runReference("QuantizeLinear", {{"saturate", intAttr(0)}}, In), {kNan, 1});
}

TEST(ReferenceKernels, BlockedQuantization) {
  // x [2, 4], scales [2, 2] along axis 1 in blocks of 2.
  expectSameValues(runReference("QuantizeLinear", {{"axis", intAttr(1)}, {"block_size", intAttr(2)}},
                                {{F32, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}},
                                 {F32, {2, 2}, {1, 2, 0.5, 4}, true},
                                 {ElementType::I8, {2, 2}, {0, 1, 2, 3}, true}}),
                   {1, 2, 3, 3, 12, 14, 5, 5});
  // A last, shorter block: 5 values in blocks of 3 need 2 scales.
  expectSameValues(runReference("QuantizeLinear", {{"axis", intAttr(1)}, {"block_size", intAttr(3)}},
                                {{F32, {1, 5}, {1, 2, 3, 4, 5}}, {F32, {1, 2}, {1, 10}, true}}),
                   {1, 2, 3, 0, 0});
  expectSameValues(runReference("DequantizeLinear", {{"axis", intAttr(1)}, {"block_size", intAttr(2)}},
                                {{ElementType::I8, {2, 3}, {1, 2, 3, 4, 5, 6}}, {F32, {2, 2}, {1, 2, 3, 4}, true}}),
                   {1, 2, 6, 12, 15, 24});
}

TEST(ReferenceKernels, DequantizeLinearLowPrecisionInputs) {
  expectSameValues(runReference("DequantizeLinear", {},
                                {{ElementType::F8E4M3FN, {3}, {448, -0.5, 0.015625}}, {F32, {}, {2}, true}}),
                   {896, -1, 0.03125});
  expectSameValues(runReference("DequantizeLinear", {},
                                {{ElementType::I4, {3}, {-8, 0, 7}}, {F32, {}, {0.5}, true}, {ElementType::I4, {}, {-1}, true}}),
                   {-3.5, 0.5, 4});
  expectSameValues(runReference("DequantizeLinear", {{"axis", intAttr(0)}},
                                {{ElementType::F4E2M1, {2, 2}, {6, -0.5, 1.5, 3}}, {F32, {2}, {1, 2}, true}}),
                   {6, -0.5, 3, 6});
}

TEST(ReferenceKernels, BadBlockSizeIsAModelErrorNamingTheNode) {
  const HandInput X{F32, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}};
  // Scale [2, 3] does not match ceil(4 / 2) = 2 blocks.
  Status S = inferCase("QuantizeLinear", {{"axis", intAttr(1)}, {"block_size", intAttr(2)}},
                       {X, {F32, {2, 3}, {1, 1, 1, 1, 1, 1}, true}});
  EXPECT_EQ(S.code(), ErrorCode::Model);
  EXPECT_NE(S.message().find("QuantizeLinear"), std::string::npos) << S.message();
  EXPECT_NE(S.message().find("'block_size' value 2"), std::string::npos) << S.message();
  EXPECT_NE(S.message().find("[2, 3]"), std::string::npos) << S.message();
  // Negative.
  S = inferCase("DequantizeLinear", {{"axis", intAttr(1)}, {"block_size", intAttr(-2)}},
                {{ElementType::I8, {2, 4}, {1}}, {F32, {2, 2}, {1}, true}});
  EXPECT_EQ(S.code(), ErrorCode::Model);
  EXPECT_NE(S.message().find("DequantizeLinear"), std::string::npos) << S.message();
  EXPECT_NE(S.message().find("-2"), std::string::npos) << S.message();
  // Zero (not blocked) with a 2-D scale.
  S = inferCase("QuantizeLinear", {{"axis", intAttr(1)}}, {X, {F32, {2, 2}, {1}, true}});
  EXPECT_EQ(S.code(), ErrorCode::Model);
  EXPECT_NE(S.message().find("block_size"), std::string::npos) << S.message();
  // Unsupported conversions name the type.
  S = inferCase("QuantizeLinear", {{"output_dtype", intAttr(24)}}, {X, {F32, {}, {1}, true}});
  EXPECT_EQ(S.code(), ErrorCode::Model);
  EXPECT_NE(S.message().find("'output_dtype' value 24"), std::string::npos) << S.message();
  S = inferCase("Cast", {{"to", intAttr(27)}}, {X});
  EXPECT_EQ(S.code(), ErrorCode::Type);
  EXPECT_NE(S.message().find("float6e2m3"), std::string::npos) << S.message();
  S = inferCase("Cast", {{"to", intAttr(24)}, {"round_mode", [] {
                          AttrValue A;
                          A.K = AttrValue::Kind::String;
                          A.S = "sideways";
                          return A;
                        }()}},
                {X});
  EXPECT_EQ(S.code(), ErrorCode::Model);
  EXPECT_NE(S.message().find("sideways"), std::string::npos) << S.message();
}
