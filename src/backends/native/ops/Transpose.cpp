// Transpose: permutes dims (default: reversed), any element type. The reference moves one element
// at a time; the blocked variant copies contiguous innermost runs when the last dim stays last.
#include <algorithm>
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

/// Tiled transpose for 1/2/4/8-byte elements: dims that stay adjacent are merged first; when the
/// input's innermost dim moves, 16 x 16 tiles of (that dim, the output's innermost dim) are
/// transposed in registers/L1 so both sides touch whole cache lines; the remaining dims are walked
/// with an odometer (no division per element). Moves K of attention ([B, H, S, D] -> [B, H, D, S])
/// at memory speed.
class TransposeTiledKernel : public Kernel {
public:
  explicit TransposeTiledKernel(std::vector<int64_t> Perm) : Perm(std::move(Perm)) {}

  Status run(const KernelContext &Ctx) const override {
    const TensorView &X = Ctx.Inputs[0], &Y = Ctx.Outputs[0];
    const size_t R = X.rank();
    if (R != Perm.size() || Y.rank() != R)
      return runError("transpose", "rank mismatch");
    for (size_t I = 0; I < R; ++I)
      if (Y.Dims[I] != X.Dims[Perm[I]])
        return runError("transpose", "output ", joinInts(Y.Dims), " is not the permuted input ", joinInts(X.Dims));
    if (Y.elementCount() == 0)
      return Status::ok();
    // Merge output dims whose sources are adjacent and in order; drop size-1 dims.
    std::vector<int64_t> InStrides(R, 1);
    for (size_t I = R; I-- > 1;)
      InStrides[I - 1] = InStrides[I] * X.Dims[I];
    std::vector<int64_t> Dims, Src; // per merged output dim: size, input stride (elements)
    for (size_t I = 0; I < R; ++I) {
      const int64_t D = Y.Dims[I], S = InStrides[Perm[I]];
      if (D == 1)
        continue;
      if (!Dims.empty() && Src.back() == S * D) {
        Dims.back() *= D;
        Src.back() = S;
      } else {
        Dims.push_back(D);
        Src.push_back(S);
      }
    }
    switch (getElementSize(X.Type)) {
    case 1: return runTyped<uint8_t>(X.Data, Y.Data, Dims, Src, Ctx.Par);
    case 2: return runTyped<uint16_t>(X.Data, Y.Data, Dims, Src, Ctx.Par);
    case 4: return runTyped<uint32_t>(X.Data, Y.Data, Dims, Src, Ctx.Par);
    case 8: return runTyped<uint64_t>(X.Data, Y.Data, Dims, Src, Ctx.Par);
    default: return runError("transpose", "unsupported element size");
    }
  }

private:
  template <typename T>
  static Status runTyped(const void *InV, void *OutV, const std::vector<int64_t> &Dims, const std::vector<int64_t> &Src,
                         const Parallel &Par) {
    const T *In = static_cast<const T *>(InV);
    T *Out = static_cast<T *>(OutV);
    const size_t R = Dims.size();
    if (R == 0) {
      Out[0] = In[0];
      return Status::ok();
    }
    std::vector<int64_t> OutStrides(R, 1);
    for (size_t I = R; I-- > 1;)
      OutStrides[I - 1] = OutStrides[I] * Dims[I];
    const int64_t J = static_cast<int64_t>(R - 1);
    // The output dim the input's innermost (stride 1) dim went to; J itself when it did not move.
    int64_t K = J;
    for (size_t I = 0; I < R; ++I)
      if (Src[I] == 1)
        K = static_cast<int64_t>(I);
    // Outer dims: every dim but K and J, walked by index T in [0, Outer).
    std::vector<int64_t> ODims, OSrc, ODst;
    for (int64_t I = 0; I < static_cast<int64_t>(R); ++I)
      if (I != K && I != J) {
        ODims.push_back(Dims[I]);
        OSrc.push_back(Src[I]);
        ODst.push_back(OutStrides[I]);
      }
    int64_t Outer = 1;
    for (int64_t D : ODims)
      Outer *= D;
    constexpr int64_t Tile = 16;
    const int64_t NJ = Dims[J], SJ = Src[J];
    const int64_t NK = K == J ? 1 : Dims[K], DK = K == J ? 0 : OutStrides[K];
    const int64_t KTiles = (NK + Tile - 1) / Tile;
    const size_t Tasks = static_cast<size_t>(Outer * KTiles);
    const size_t Grain = std::max<size_t>(1, static_cast<size_t>(16384 / std::max<int64_t>(1, NJ * std::min(NK, Tile))));
    Par.forRange(Tasks, Grain, [&](size_t Begin, size_t End) {
      std::vector<int64_t> Idx(ODims.size());
      size_t Task = Begin;
      while (Task < End) {
        // Decompose the outer index once per contiguous stretch, then step the odometer.
        int64_t OuterI = static_cast<int64_t>(Task) / KTiles, KT = static_cast<int64_t>(Task) % KTiles;
        int64_t Rem = OuterI, InBase = 0, OutBase = 0;
        for (size_t D = ODims.size(); D-- > 0;) {
          Idx[D] = Rem % ODims[D];
          Rem /= ODims[D];
          InBase += Idx[D] * OSrc[D];
          OutBase += Idx[D] * ODst[D];
        }
        for (; Task < End; ++Task) {
          if (K == J) {
            const T *I0 = In + InBase;
            T *O0 = Out + OutBase;
            if (SJ == 1)
              std::memcpy(O0, I0, static_cast<size_t>(NJ) * sizeof(T));
            else
              for (int64_t Jj = 0; Jj < NJ; ++Jj)
                O0[Jj] = I0[Jj * SJ];
          } else {
            const int64_t K0 = KT * Tile, K1 = std::min(NK, K0 + Tile);
            for (int64_t J0 = 0; J0 < NJ; J0 += Tile) {
              const int64_t J1 = std::min(NJ, J0 + Tile);
              for (int64_t Kk = K0; Kk < K1; ++Kk) {
                const T *I0 = In + InBase + Kk; // Src[K] == 1
                T *O0 = Out + OutBase + Kk * DK;
                for (int64_t Jj = J0; Jj < J1; ++Jj)
                  O0[Jj] = I0[Jj * SJ];
              }
            }
          }
          if (++KT == KTiles) {
            KT = 0;
            // Next outer index: step the odometer.
            size_t D = ODims.size();
            while (D-- > 0) {
              InBase += OSrc[D];
              OutBase += ODst[D];
              if (++Idx[D] < ODims[D])
                break;
              InBase -= OSrc[D] * ODims[D];
              OutBase -= ODst[D] * ODims[D];
              Idx[D] = 0;
            }
          }
        }
      }
    });
    return Status::ok();
  }
  std::vector<int64_t> Perm;
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
  K.Variants.push_back({"x8_transpose__tiled", 20,
                        [](const KernelCreateInfo &I) {
                          const size_t E = getElementSize(I.Inputs[0].Type);
                          return I.Inputs[0].Type != ElementType::String && (E == 1 || E == 2 || E == 4 || E == 8);
                        },
                        [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(std::vector<int64_t> Perm, parsePerm(I.N, I.Inputs[0].Shape.getRank()));
                          return makeKernel<TransposeTiledKernel>(std::move(Perm));
                        }});
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        testCase("default_reverse", {tensorInput({2, 3, 4})}),
        testCase("nchw_to_nhwc", {tensorInput({2, 3, 4, 5})}, {{"perm", attrInts({0, 2, 3, 1})}}),
        testCase("keep_last", {tensorInput({2, 3, 4, 5})}, {{"perm", attrInts({2, 0, 1, 3})}}),
        testCase("identity_perm", {tensorInput({3, 4})}, {{"perm", attrInts({0, 1})}}),
        testCase("attention_k", {tensorInput({1, 3, 37, 20})}, {{"perm", attrInts({0, 1, 3, 2})}}),
        testCase("heads_split", {tensorInput({2, 19, 3, 8})}, {{"perm", attrInts({0, 2, 1, 3})}}),
        testCase("nhwc_to_nchw", {tensorInput({2, 5, 7, 17})}, {{"perm", attrInts({0, 3, 1, 2})}}),
        testCase("rank5_mixed", {tensorInput({2, 3, 4, 5, 6})}, {{"perm", attrInts({4, 2, 0, 3, 1})}}),
        testCase("size1_dims", {tensorInput({1, 17, 1, 33})}, {{"perm", attrInts({3, 2, 1, 0})}}),
        testCase("f16", typedInputs({3, 33, 18}, ElementType::F16), {{"perm", attrInts({2, 0, 1})}}),
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
