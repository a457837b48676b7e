// Transpose: permutes dims (default: reversed), any element type. The reference moves one element
// at a time; the blocked variant copies contiguous innermost runs when the last dim stays last.
#include <cstring>

#include "backends/native/ops/common/OpUtil.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

Result<std::vector<int64_t>> parsePerm(const Node &N, size_t Rank) {
  std::vector<int64_t> Reversed(Rank);
  for (size_t I = 0; I < Rank; ++I)
    Reversed[I] = static_cast<int64_t>(Rank - 1 - I);
  ASSIGN_OR_RETURN(std::vector<int64_t> Perm, N.getInts("perm", Reversed));
  std::vector<bool> Seen(Rank, false);
  bool Ok = Perm.size() == Rank;
  for (int64_t P : Perm) {
    if (!Ok || P < 0 || P >= static_cast<int64_t>(Rank) || Seen[P]) {
      Ok = false;
      break;
    }
    Seen[P] = true;
  }
  if (!Ok)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'perm' value ", joinInts(Perm),
                     " is not a permutation of the ", Rank, " input dims");
  return Perm;
}

OpSchema transposeSchema() {
  OpSchema S;
  S.OpType = "Transpose";
  S.MinInputs = S.MaxInputs = 1;
  S.Infer = [](ShapeContext &Ctx) -> Status {
    RETURN_IF_ERROR(requireCopyableType(Ctx, 0));
    const TensorShape &In = Ctx.Inputs[0].Shape;
    ASSIGN_OR_RETURN(const std::vector<int64_t> Perm, parsePerm(Ctx.N, In.getRank()));
    std::vector<Expr> Dims;
    for (int64_t P : Perm)
      Dims.push_back(In[static_cast<size_t>(P)]);
    Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
    Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
    return Status::ok();
  };
  return S;
}

class TransposeKernel : public Kernel {
public:
  TransposeKernel(std::string Name, std::vector<int64_t> Perm, bool Blocked)
      : Name(std::move(Name)), Perm(std::move(Perm)), Blocked(Blocked) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    const size_t R = X.rank();
    if (R != Perm.size() || Y.rank() != R)
      return runError(Name.c_str(), "rank mismatch");
    std::vector<int64_t> InStrides(R, 1);
    for (size_t I = R; I-- > 1;)
      InStrides[I - 1] = InStrides[I] * X.Dims[I];
    // Stride in the input of each output dim.
    std::vector<int64_t> Src(R);
    for (size_t I = 0; I < R; ++I) {
      if (Y.Dims[I] != X.Dims[Perm[I]])
        return runError(Name.c_str(), "output ", joinInts(Y.Dims), " is not the permuted input ", joinInts(X.Dims));
      Src[I] = InStrides[Perm[I]];
    }
    const size_t Elem = getElementSize(X.Type), N = Y.elementCount();
    if (N == 0)
      return Status::ok();
    const char *In = static_cast<const char *>(X.Data);
    char *Out = static_cast<char *>(Y.Data);
    // Copy runs of Run elements: contiguous in both when the innermost dim is not moved.
    const size_t Run = (Blocked && R && Perm[R - 1] == static_cast<int64_t>(R - 1)) ? static_cast<size_t>(Y.Dims[R - 1]) : 1;
    const size_t OuterR = Run > 1 ? R - 1 : R;
    const size_t Runs = N / Run;
    const auto Body = [&](size_t Lo, size_t Hi) {
      for (size_t T = Lo; T < Hi; ++T) {
        size_t Rem = T;
        int64_t Off = 0;
        for (size_t D = OuterR; D-- > 0;) {
          Off += static_cast<int64_t>(Rem % static_cast<size_t>(Y.Dims[D])) * Src[D];
          Rem /= static_cast<size_t>(Y.Dims[D]);
        }
        std::memcpy(Out + T * Run * Elem, In + Off * static_cast<int64_t>(Elem), Run * Elem);
      }
    };
    if (Blocked)
      Ctx.Par.forRange(Runs, std::max<size_t>(1, 4096 / Run), Body);
    else
      Body(0, Runs);
    return Status::ok();
  }

private:
  std::string Name;
  std::vector<int64_t> Perm;
  bool Blocked;
};

KernelVariant transposeVariant(const std::string &Name, int Priority, bool Blocked) {
  return {Name, Priority, nullptr, [Name, Blocked](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(std::vector<int64_t> Perm, parsePerm(I.N, I.Inputs[0].Shape.getRank()));
            return makeKernel<TransposeKernel>(Name, std::move(Perm), Blocked);
          }};
}

OpKernels transposeKernels() {
  OpKernels K;
  K.OpType = "Transpose";
  K.Variants.push_back(transposeVariant("any_transpose__ref", 0, false));
  K.Variants.push_back(transposeVariant("any_transpose__blocked", 10, true));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("default_reverse", {tensorInput({2, 3, 4})}),
        testCase("nchw_to_nhwc", {tensorInput({2, 3, 4, 5})}, {{"perm", attrInts({0, 2, 3, 1})}}),
        testCase("keep_last", {tensorInput({2, 3, 4, 5})}, {{"perm", attrInts({2, 0, 1, 3})}}),
        testCase("identity_perm", {tensorInput({3, 4})}, {{"perm", attrInts({0, 1})}}),
        testCase("rank1", {tensorInput({5})}),
        testCase("i64", typedInputs({3, 5}, ElementType::I64)),
        testCase("u8", typedInputs({2, 3, 4}, ElementType::U8), {{"perm", attrInts({1, 0, 2})}}),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Transpose, transposeSchema());
OPT_REGISTER_KERNELS(Transpose, transposeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
