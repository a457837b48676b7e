// Einsum: sums of products over labelled dims (numpy's einsum, with ellipsis broadcasting and
// repeated labels for diagonals). The reference walks every label combination; the matmul variant
// (f32) maps two-operand contractions ('bij,bjk->bik', 'bhqd,bhkd->bhqk', ...) to batched GEMMs
// and one-operand permutations ('ij->ji') to a strided copy, falling back to the reference
// otherwise.
#include <algorithm>
#include <map>

#include "backends/native/ops/common/Einsum.h"
#include "backends/native/ops/common/Gemm.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

std::vector<size_t> ranksOf(const std::vector<TensorView> &In) {
  std::vector<size_t> R;
  for (const TensorView &V : In)
    R.push_back(V.rank());
  return R;
}

/// Size of every label (ellipsis dims broadcast), or an error on mismatching dims.
Result<std::map<int, int64_t>> labelSizes(const EinsumSpec &S, const std::vector<TensorView> &In) {
  std::map<int, int64_t> Size;
  for (size_t I = 0; I < In.size(); ++I)
    for (size_t D = 0; D < In[I].rank(); ++D) {
      const int L = S.Inputs[I][D];
      const int64_t V = In[I].Dims[D];
      auto It = Size.find(L);
      if (It == Size.end() || It->second == 1)
        Size[L] = V;
      else if (V != 1 && V != It->second)
        return runError("any_einsum__ref", "label sizes ", It->second, " and ", V, " differ");
    }
  return Size;
}

/// Per operand, the stride of each label (repeated labels add up: diagonals; broadcast dims 0).
std::vector<std::map<int, int64_t>> labelStrides(const EinsumSpec &S, const std::vector<TensorView> &In,
                                                 const std::map<int, int64_t> &Size) {
  std::vector<std::map<int, int64_t>> Out(In.size());
  for (size_t I = 0; I < In.size(); ++I) {
    const std::vector<int64_t> St = stridesOf(In[I].Dims);
    for (size_t D = 0; D < In[I].rank(); ++D) {
      const int L = S.Inputs[I][D];
      Out[I][L] += (In[I].Dims[D] == 1 && Size.at(L) != 1) ? 0 : St[D];
    }
  }
  return Out;
}

template <typename T>
void einsumRefTyped(const EinsumSpec &S, const std::vector<TensorView> &In, const TensorView &Y,
                    const std::map<int, int64_t> &Size) {
  using C = typename ComputeType<T>::type;
  using Acc = typename std::conditional<std::is_floating_point<C>::value, double,
                                        typename std::conditional<std::is_same<C, bool>::value, int64_t,
                                                                  typename std::conditional<std::is_signed<C>::value, int64_t, uint64_t>::type>::type>::type;
  const std::vector<std::map<int, int64_t>> Strides = labelStrides(S, In, Size);
  const size_t NL = S.AllLabels.size(), NOut = S.Output.size();
  std::vector<int64_t> Dims(NL);
  std::vector<std::vector<int64_t>> St(In.size(), std::vector<int64_t>(NL, 0));
  for (size_t J = 0; J < NL; ++J) {
    Dims[J] = Size.at(S.AllLabels[J]);
    for (size_t I = 0; I < In.size(); ++I) {
      auto It = Strides[I].find(S.AllLabels[J]);
      St[I][J] = It == Strides[I].end() ? 0 : It->second;
    }
  }
  const int64_t OutCount = product(Dims, 0, NOut), SumCount = product(Dims, NOut, NL);
  std::vector<int64_t> Pos(NL);
  for (int64_t O = 0; O < OutCount; ++O) {
    Acc Total = 0;
    for (int64_t Sm = 0; Sm < SumCount; ++Sm) {
      // Decode (O, Sm) into one index per label.
      int64_t R = Sm;
      for (size_t J = NL; J-- > NOut;) {
        Pos[J] = R % Dims[J];
        R /= Dims[J];
      }
      R = O;
      for (size_t J = NOut; J-- > 0;) {
        Pos[J] = R % Dims[J];
        R /= Dims[J];
      }
      Acc Prod = 1;
      for (size_t I = 0; I < In.size(); ++I) {
        int64_t Off = 0;
        for (size_t J = 0; J < NL; ++J)
          Off += Pos[J] * St[I][J];
        Prod = static_cast<Acc>(Prod * static_cast<Acc>(static_cast<C>(In[I].data<const T>()[Off])));
      }
      Total = static_cast<Acc>(Total + Prod);
    }
    Y.data<T>()[O] = static_cast<T>(static_cast<C>(Total));
  }
}

Status computeEinsumRef(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                        const Parallel &) {
  ASSIGN_OR_RETURN(const EinsumSpec S, parseEinsum(N, ranksOf(In)));
  ASSIGN_OR_RETURN(const auto Size, labelSizes(S, In));
  visitNumeric(Out[0].Type, [&](auto Tag) { einsumRefTyped<typename decltype(Tag)::type>(S, In, Out[0], Size); });
  return Status::ok();
}

const GemmMicroKernel &bestGemm() {
  for (GemmIsa Isa : {GemmIsa::Avx512, GemmIsa::Avx2})
    if (gemmIsaAvailable(Isa))
      return gemmMicroKernel(Isa);
  return gemmMicroKernel(GemmIsa::Portable);
}

/// A strided view of a tensor whose label strides are Strides, walking Labels in order.
StridedView viewOf(const std::vector<int> &Labels, const std::map<int, int64_t> &Size,
                   const std::map<int, int64_t> &Strides) {
  StridedView V;
  for (int L : Labels) {
    V.Dims.push_back(Size.at(L));
    auto It = Strides.find(L);
    V.Strides.push_back(It == Strides.end() ? 0 : It->second);
  }
  return V;
}

Status computeEinsumMatMul(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                           const Parallel &Par) {
  ASSIGN_OR_RETURN(const EinsumSpec S, parseEinsum(N, ranksOf(In)));
  ASSIGN_OR_RETURN(const auto Size, labelSizes(S, In));
  const TensorView &Y = Out[0];
  const auto Has = [](const std::vector<int> &V, int L) { return std::find(V.begin(), V.end(), L) != V.end(); };
  bool Simple = Y.Type == ElementType::F32 && (In.size() == 1 || In.size() == 2);
  for (size_t I = 0; I < In.size() && Simple; ++I)
    for (size_t D = 0; D < In[I].rank(); ++D) {
      const int L = S.Inputs[I][D];
      Simple &= std::count(S.Inputs[I].begin(), S.Inputs[I].end(), L) == 1; // no diagonals
      Simple &= In[I].Dims[D] == Size.at(L);                                 // no broadcasting
      Simple &= Has(S.Output, L) || (In.size() == 2 && Has(S.Inputs[1 - I], L));
    }
  if (!Simple)
    return computeEinsumRef(N, In, Out, Par);
  const std::vector<std::map<int, int64_t>> Strides = labelStrides(S, In, Size);
  if (In.size() == 1) { // a permutation
    stridedCopyFast(In[0].Data, Y.Data, sizeof(float), viewOf(S.Output, Size, Strides[0]), Par);
    return Status::ok();
  }
  std::vector<int> Batch, M, Nl, K;
  for (int L : S.AllLabels) {
    const bool InA = Has(S.Inputs[0], L), InB = Has(S.Inputs[1], L), InOut = Has(S.Output, L);
    (InA && InB ? (InOut ? Batch : K) : (InA ? M : Nl)).push_back(L);
  }
  const auto Prod = [&](const std::vector<int> &Ls) {
    int64_t P = 1;
    for (int L : Ls)
      P *= Size.at(L);
    return P;
  };
  const int64_t NB = Prod(Batch), NM = Prod(M), NN = Prod(Nl), NK = Prod(K);
  if (Y.elementCount() == 0)
    return Status::ok();
  // Pack A as [batch, M, K] and B as [batch, K, N] (one strided copy each), multiply per batch.
  std::vector<int> AOrder = Batch, BOrder = Batch;
  AOrder.insert(AOrder.end(), M.begin(), M.end());
  AOrder.insert(AOrder.end(), K.begin(), K.end());
  BOrder.insert(BOrder.end(), K.begin(), K.end());
  BOrder.insert(BOrder.end(), Nl.begin(), Nl.end());
  AlignedFloats A(static_cast<size_t>(NB * NM * NK)), B(static_cast<size_t>(NB * NK * NN)),
      Cm(static_cast<size_t>(NB * NM * NN));
  stridedCopyFast(In[0].Data, A.data(), sizeof(float), viewOf(AOrder, Size, Strides[0]), Par);
  stridedCopyFast(In[1].Data, B.data(), sizeof(float), viewOf(BOrder, Size, Strides[1]), Par);
  const GemmMicroKernel &MK = bestGemm();
  for (int64_t Bi = 0; Bi < NB; ++Bi) {
    float *C = Cm.data() + Bi * NM * NN;
    if (NK == 0) {
      std::fill(C, C + NM * NN, 0.0f);
      continue;
    }
    sgemm(MK, NM, NN, NK, 1.0f, MatrixRef{A.data() + Bi * NM * NK, NK, 1}, MatrixRef{B.data() + Bi * NK * NN, NN, 1},
          0.0f, C, NN, Par);
  }
  // C is [batch..., M..., N...] row-major: walk it in the output's label order.
  std::vector<int> COrder = Batch;
  COrder.insert(COrder.end(), M.begin(), M.end());
  COrder.insert(COrder.end(), Nl.begin(), Nl.end());
  std::vector<int64_t> CDims;
  for (int L : COrder)
    CDims.push_back(Size.at(L));
  const std::vector<int64_t> CSt = stridesOf(CDims);
  std::map<int, int64_t> CStrides;
  for (size_t I = 0; I < COrder.size(); ++I)
    CStrides[COrder[I]] = CSt[I];
  stridedCopyFast(Cm.data(), Y.Data, sizeof(float), viewOf(S.Output, Size, CStrides), Par);
  return Status::ok();
}

Status inferEinsum(ShapeContext &Ctx) {
  std::vector<size_t> Ranks;
  for (size_t I = 0; I < Ctx.Inputs.size(); ++I) {
    if (!Ctx.Inputs[I].Present)
      return Ctx.error(ErrorCode::Model, "input ", I, " is missing");
    RETURN_IF_ERROR(requireNumericType(Ctx, I));
    RETURN_IF_ERROR(requireSameType(Ctx, 0, I));
    Ranks.push_back(Ctx.Inputs[I].Shape.getRank());
  }
  ASSIGN_OR_RETURN(const EinsumSpec S, parseEinsum(Ctx.N, Ranks));
  std::map<int, Expr> Size;
  for (size_t I = 0; I < Ranks.size(); ++I)
    for (size_t D = 0; D < Ranks[I]; ++D) {
      const int L = S.Inputs[I][D];
      const Expr &V = Ctx.Inputs[I].Shape[D];
      auto It = Size.find(L);
      if (It == Size.end() || (It->second.isConst() && It->second.value() == 1)) {
        Size[L] = V;
      } else if (V.isConst() && It->second.isConst() && V.value() != 1 && V.value() != It->second.value()) {
        return Ctx.error(ErrorCode::Shape, "label '", L < 256 ? std::string(1, static_cast<char>(L)) : std::string("..."),
                         "' has sizes ", It->second.value(), " and ", V.value(), " in the inputs");
      } else if (!It->second.isConst() && V.isConst() && V.value() != 1) {
        Size[L] = V;
      }
    }
  std::vector<Expr> Dims;
  for (int L : S.Output)
    Dims.push_back(Size.at(L));
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
  return foldIfConstant(Ctx, computeEinsumRef);
}

OpSchema einsumSchema() {
  OpSchema S;
  S.OpType = "Einsum";
  S.MinInputs = 1;
  S.MaxInputs = -1;
  S.Infer = inferEinsum;
  return S;
}

OpKernels einsumKernels() {
  OpKernels K;
  K.OpType = "Einsum";
  K.Variants.push_back(computeVariant("any_einsum__ref", 0, computeEinsumRef));
  K.Variants.push_back(computeVariant("f32_einsum__matmul", 10, computeEinsumMatMul, [](const KernelCreateInfo &I) {
    return inputIs(I, 0, ElementType::F32);
  }));
  K.TestCases = [] {
    const auto eq = [](const char *E) { return std::map<std::string, AttrValue>{{"equation", attrString(E)}}; };
    return std::vector<OpTestCase>{
        testCase("bmm", {tensorInput({2, 3, 4}), tensorInput({2, 4, 5})}, eq("bij,bjk->bik"), 1e-4),
        testCase("attn_scores", {tensorInput({2, 3, 5, 8}), tensorInput({2, 3, 6, 8})}, eq("bhqd,bhkd->bhqk"), 1e-4),
        testCase("attn_values", {tensorInput({2, 3, 5, 6}), tensorInput({2, 3, 6, 8})}, eq("bhqk,bhkd->bhqd"), 1e-4),
        testCase("transpose", {tensorInput({3, 4})}, eq("ij->ji")),
        testCase("implicit_matmul", {tensorInput({3, 4}), tensorInput({4, 2})}, eq("ij,jk")),
        testCase("sum_axis", {tensorInput({3, 4})}, eq("ij->i")),
        testCase("trace_diag", {tensorInput({4, 4})}, eq("ii")),
        testCase("batch_diagonal", {tensorInput({2, 3, 3})}, eq("...ii ->...i")),
        testCase("outer", {tensorInput({3}), tensorInput({5})}, eq("i,j->ij")),
        testCase("dot", {tensorInput({6}), tensorInput({6})}, eq("i,i")),
        testCase("three_operands", {tensorInput({2, 3}), tensorInput({3, 4}), tensorInput({4, 2})}, eq("ij,jk,kl->il")),
        testCase("ellipsis_broadcast", {tensorInput({2, 1, 3, 4}), tensorInput({5, 4, 2})}, eq("...ij,...jk->...ik")),
        testCase("i64", {typedInputs({2, 3}, ElementType::I64)[0], typedInputs({3, 2}, ElementType::I64)[0]}, eq("ij,jk->ik")),
        testCase("big_bmm", {tensorInput({4, 40, 64}), tensorInput({4, 64, 48})}, eq("bij,bjk->bik"), 1e-4),
    };
  };
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(Einsum, einsumSchema());
OPT_REGISTER_KERNELS(Einsum, einsumKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
