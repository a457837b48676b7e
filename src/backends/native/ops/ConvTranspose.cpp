// ConvTranspose (f32): N-D transposed convolution with groups, strides, dilations, pads / auto_pad,
// output_padding and output_shape. The reference scatters each input element over its window;
// the 2-D variant computes the column matrix W^T * X with the blocked SGEMM (weights packed once)
// and folds it into the output (col2im).
#include <cstring>

#include "backends/native/ops/common/Gemm.h"
#include "backends/native/ops/common/OpUtil.h"
#include "backends/native/ops/common/PackedWeights.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct ConvTransposeAttrs {
  std::string AutoPad = "NOTSET";
  int64_t Group = 1;
  std::vector<int64_t> Kernel, Strides, Dilations, Pads, OutputPadding, OutputShape;
  bool HasPads = false;
  size_t spatial() const { return Kernel.size(); }
  int64_t effK(size_t I) const { return (Kernel[I] - 1) * Dilations[I] + 1; }
};

int64_t floorDivI(int64_t A, int64_t B) {
  int64_t Q = A / B;
  if ((A % B != 0) && ((A < 0) != (B < 0)))
    --Q;
  return Q;
}

/// Output sizes and leading pads of one run (ONNX reference rules).
struct TransposeGeometry {
  std::vector<int64_t> In, Out, PadBegin;
};

TransposeGeometry transposeGeometry(const ConvTransposeAttrs &A, const std::vector<int64_t> &XDims) {
  TransposeGeometry G;
  const size_t S = A.spatial();
  const bool Same = A.AutoPad == "SAME_UPPER" || A.AutoPad == "SAME_LOWER";
  for (size_t I = 0; I < S; ++I) {
    const int64_t In = XDims[I + 2];
    G.In.push_back(In);
    const int64_t Full = A.Strides[I] * (In - 1) + A.OutputPadding[I] + A.effK(I);
    if (!A.OutputShape.empty() || Same) {
      const int64_t Out = !A.OutputShape.empty() ? A.OutputShape[I] : In * A.Strides[I];
      G.Out.push_back(Out);
      if (A.HasPads && !Same) {
        G.PadBegin.push_back(A.Pads[I]);
      } else {
        const int64_t Total = Full - Out;
        const int64_t Half = floorDivI(Total, 2);
        G.PadBegin.push_back(A.AutoPad == "SAME_UPPER" ? Half : Total - Half);
      }
    } else {
      G.Out.push_back(Full - A.Pads[I] - A.Pads[I + S]);
      G.PadBegin.push_back(A.Pads[I]);
    }
  }
  return G;
}

Result<ConvTransposeAttrs> parseConvTransposeAttrs(const Node &N, const TensorShape &X, const TensorShape &W) {
  ConvTransposeAttrs A;
  if (X.getRank() < 3)
    return makeError(ErrorCode::Shape, N.describe(), ": input must be [N, C, spatial...], got ", X.toString());
  if (W.getRank() != X.getRank())
    return makeError(ErrorCode::Shape, N.describe(), ": weight ", W.toString(), " and input ", X.toString(),
                     " must have the same rank");
  const size_t S = X.getRank() - 2;
  const auto bad = [&](const char *Attr, const std::vector<int64_t> &V, const std::string &Why) {
    return makeError(ErrorCode::Model, N.describe(), ": attribute '", Attr, "' value ", joinInts(V), " ", Why);
  };
  ASSIGN_OR_RETURN(A.AutoPad, N.getString("auto_pad", "NOTSET"));
  if (A.AutoPad != "NOTSET" && A.AutoPad != "SAME_UPPER" && A.AutoPad != "SAME_LOWER" && A.AutoPad != "VALID")
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'auto_pad' value '", A.AutoPad,
                     "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  ASSIGN_OR_RETURN(A.Group, N.getInt("group", 1));
  if (A.Group <= 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'group' value ", A.Group, " must be positive");
  if (X[1].isConst() && X[1].value() % A.Group != 0)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'group' value ", A.Group,
                     " does not divide the input channels ", X[1].value());
  if (X[1].isConst() && W[0].isConst() && X[1].value() != W[0].value())
    return makeError(ErrorCode::Shape, N.describe(), ": weight ", W.toString(), " must have ", X[1].value(),
                     " input channels (dim 0) to match the input ", X.toString());
  std::vector<int64_t> WK;
  for (size_t I = 2; I < W.getRank(); ++I) {
    if (!W[I].isConst()) {
      WK.clear();
      break;
    }
    WK.push_back(W[I].value());
  }
  ASSIGN_OR_RETURN(A.Kernel, N.getInts("kernel_shape", WK));
  if (A.Kernel.size() != S)
    return makeError(ErrorCode::Model, N.describe(), ": attribute 'kernel_shape' value ", joinInts(A.Kernel),
                     " must have ", S, " values (the weight's spatial dims must be known)");
  if (!WK.empty() && A.Kernel != WK)
    return bad("kernel_shape", A.Kernel, "does not match the weight's spatial dims " + joinInts(WK));
  for (int64_t K : A.Kernel)
    if (K <= 0)
      return bad("kernel_shape", A.Kernel, "must be positive");
  ASSIGN_OR_RETURN(A.Strides, N.getInts("strides", std::vector<int64_t>(S, 1)));
  ASSIGN_OR_RETURN(A.Dilations, N.getInts("dilations", std::vector<int64_t>(S, 1)));
  A.HasPads = N.hasAttr("pads");
  ASSIGN_OR_RETURN(A.Pads, N.getInts("pads", std::vector<int64_t>(2 * S, 0)));
  ASSIGN_OR_RETURN(A.OutputPadding, N.getInts("output_padding", std::vector<int64_t>(S, 0)));
  ASSIGN_OR_RETURN(A.OutputShape, N.getInts("output_shape", {}));
  if (A.OutputShape.size() == S + 2)
    A.OutputShape.erase(A.OutputShape.begin(), A.OutputShape.begin() + 2);
  if (A.Strides.size() != S)
    return bad("strides", A.Strides, "must have " + std::to_string(S) + " values");
  if (A.Dilations.size() != S)
    return bad("dilations", A.Dilations, "must have " + std::to_string(S) + " values");
  if (A.Pads.size() != 2 * S)
    return bad("pads", A.Pads, "must have " + std::to_string(2 * S) + " values");
  if (A.OutputPadding.size() == 2 * S) // some exporters write begin and end values
    A.OutputPadding.resize(S);
  if (A.OutputPadding.size() != S)
    return bad("output_padding", A.OutputPadding, "must have " + std::to_string(S) + " values");
  if (!A.OutputShape.empty() && A.OutputShape.size() != S)
    return bad("output_shape", A.OutputShape, "must have " + std::to_string(S) + " values");
  for (size_t I = 0; I < S; ++I) {
    if (A.Strides[I] <= 0)
      return bad("strides", A.Strides, "must be positive");
    if (A.Dilations[I] <= 0)
      return bad("dilations", A.Dilations, "must be positive");
    if (A.OutputPadding[I] < 0 || A.OutputPadding[I] >= std::max(A.Strides[I], A.Dilations[I]))
      return bad("output_padding", A.OutputPadding, "must be in [0, max(stride, dilation))");
  }
  for (int64_t P : A.Pads)
    if (P < 0)
      return bad("pads", A.Pads, "must not be negative");
  if (A.AutoPad == "VALID")
    std::fill(A.Pads.begin(), A.Pads.end(), 0);
  return A;
}

Status inferConvTranspose(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputType(Ctx, 0, {ElementType::F32}));
  RETURN_IF_ERROR(requireSameType(Ctx, 0, 1));
  const TensorShape &X = Ctx.Inputs[0].Shape, &W = Ctx.Inputs[1].Shape;
  ASSIGN_OR_RETURN(const ConvTransposeAttrs A, parseConvTransposeAttrs(Ctx.N, X, W));
  const Expr M = W[1] * Expr(A.Group);
  RETURN_IF_ERROR(checkChannelBias(Ctx, 2, M));
  std::vector<Expr> Dims{X[0], M};
  const size_t S = A.spatial();
  const bool Same = A.AutoPad == "SAME_UPPER" || A.AutoPad == "SAME_LOWER";
  for (size_t I = 0; I < S; ++I) {
    Expr D;
    if (!A.OutputShape.empty())
      D = Expr(A.OutputShape[I]);
    else if (Same)
      D = X[I + 2] * Expr(A.Strides[I]);
    else
      D = Expr(A.Strides[I]) * (X[I + 2] - Expr(1)) + Expr(A.OutputPadding[I] + A.effK(I) - A.Pads[I] - A.Pads[I + S]);
    if (D.isConst() && D.value() <= 0)
      return Ctx.error(ErrorCode::Shape, "input ", X.toString(), " gives a non-positive output dim ", D.value(),
                       " (pads ", joinInts(A.Pads), ")");
    Dims.push_back(D);
  }
  Ctx.Outputs[0].Type = ElementType::F32;
  Ctx.Outputs[0].Shape = TensorShape(std::move(Dims));
  return Status::ok();
}

OpSchema convTransposeSchema() {
  OpSchema S;
  S.OpType = "ConvTranspose";
  S.MinInputs = 2;
  S.MaxInputs = 3;
  S.Infer = inferConvTranspose;
  return S;
}

struct TransposeRun {
  TransposeGeometry G;
  int64_t N, C, M, Cg, Mg, InPlane, OutPlane, Taps;
};

Result<TransposeRun> planTranspose(const char *Name, const ConvTransposeAttrs &A, const KernelContext &Ctx) {
  const TensorView &X = Ctx.Inputs[0], &W = Ctx.Inputs[1], &Y = Ctx.Outputs[0];
  const size_t S = A.spatial();
  if (X.rank() != S + 2 || W.rank() != S + 2 || Y.rank() != S + 2)
    return runError(Name, "rank mismatch");
  TransposeRun R;
  R.G = transposeGeometry(A, X.Dims);
  R.N = X.Dims[0], R.C = X.Dims[1], R.Mg = W.Dims[1], R.Cg = R.C / A.Group, R.M = R.Mg * A.Group;
  if (W.Dims[0] != R.C || R.C % A.Group != 0 || Y.Dims[0] != R.N || Y.Dims[1] != R.M)
    return runError(Name, "input ", joinInts(X.Dims), ", weight ", joinInts(W.Dims), " and output ", joinInts(Y.Dims),
                    " do not match group ", A.Group);
  for (size_t I = 0; I < S; ++I)
    if (Y.Dims[I + 2] != R.G.Out[I] || W.Dims[I + 2] != A.Kernel[I])
      return runError(Name, "output ", joinInts(Y.Dims), " does not match the geometry");
  R.InPlane = product(X.Dims, 2, X.rank());
  R.OutPlane = product(Y.Dims, 2, Y.rank());
  R.Taps = product(A.Kernel, 0, S);
  return R;
}

const float *biasOf(const KernelContext &Ctx) {
  return inputDataOrNull(Ctx, 2);
}

class ConvTransposeRefKernel : public Kernel {
public:
  explicit ConvTransposeRefKernel(ConvTransposeAttrs A) : A(std::move(A)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const TransposeRun R, planTranspose("f32_convtranspose__ref", A, Ctx));
    const size_t S = A.spatial();
    const float *X = Ctx.Inputs[0].data<float>(), *W = Ctx.Inputs[1].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    std::vector<double> Acc(static_cast<size_t>(R.OutPlane));
    std::vector<int64_t> I(S), K(S);
    for (int64_t N = 0; N < R.N; ++N)
      for (int64_t M = 0; M < R.M; ++M) {
        const int64_t G = M / R.Mg, Mi = M % R.Mg;
        std::fill(Acc.begin(), Acc.end(), B ? B[M] : 0.0);
        for (int64_t C = 0; C < R.Cg; ++C) {
          const float *Xp = X + (N * R.C + G * R.Cg + C) * R.InPlane;
          const float *Wp = W + ((G * R.Cg + C) * R.Mg + Mi) * R.Taps;
          for (int64_t II = 0; II < R.InPlane; ++II) {
            int64_t Rem = II;
            for (size_t D = S; D-- > 0;) {
              I[D] = Rem % R.G.In[D];
              Rem /= R.G.In[D];
            }
            for (int64_t T = 0; T < R.Taps; ++T) {
              int64_t TR = T, Off = 0;
              bool Inside = true;
              for (size_t D = S; D-- > 0;) {
                K[D] = TR % A.Kernel[D];
                TR /= A.Kernel[D];
              }
              for (size_t D = 0; D < S; ++D) {
                const int64_t O = I[D] * A.Strides[D] + K[D] * A.Dilations[D] - R.G.PadBegin[D];
                Inside &= O >= 0 && O < R.G.Out[D];
                Off = Off * R.G.Out[D] + O;
              }
              if (Inside)
                Acc[static_cast<size_t>(Off)] += static_cast<double>(Xp[II]) * Wp[T];
            }
          }
        }
        float *Yp = Y + (N * R.M + M) * R.OutPlane;
        for (int64_t O = 0; O < R.OutPlane; ++O)
          Yp[O] = static_cast<float>(Acc[static_cast<size_t>(O)]);
      }
    return Status::ok();
  }

private:
  ConvTransposeAttrs A;
};

/// 2-D: per (image, group) col[Mg*KH*KW, H*W] = Wg^T * Xg, then col2im into Y (split over channels).
class ConvTransposeGemmKernel : public Kernel {
public:
  ConvTransposeGemmKernel(std::string Name, const GemmMicroKernel &MK, ConvTransposeAttrs A, std::vector<PackedA> PW)
      : Name(std::move(Name)), MK(MK), A(std::move(A)), PackedW(std::move(PW)) {}

  Status run(const KernelContext &Ctx) const override {
    ASSIGN_OR_RETURN(const TransposeRun R, planTranspose(Name.c_str(), A, Ctx));
    const float *X = Ctx.Inputs[0].data<float>(), *W = Ctx.Inputs[1].data<float>(), *B = biasOf(Ctx);
    float *Y = Ctx.Outputs[0].data<float>();
    const int64_t Rows = R.Mg * R.Taps, Cols = R.InPlane;
    std::vector<PackedA> Local;
    const std::vector<PackedA> *Weights = &PackedW;
    if (PackedW.empty()) {
      Local.resize(static_cast<size_t>(A.Group));
      for (int64_t G = 0; G < A.Group; ++G)
        packA(MK, Rows, R.Cg, MatrixRef{W + G * R.Cg * Rows, 1, Rows}, Local[G]);
      Weights = &Local;
    }
    const int64_t H = R.G.In[0], Wd = R.G.In[1], OH = R.G.Out[0], OW = R.G.Out[1];
    const int64_t KH = A.Kernel[0], KW = A.Kernel[1], SH = A.Strides[0], SW = A.Strides[1];
    const int64_t DH = A.Dilations[0], DW = A.Dilations[1], PH = R.G.PadBegin[0], PW = R.G.PadBegin[1];
    AlignedFloats Col(static_cast<size_t>(std::max<int64_t>(1, Rows * Cols)));
    PackedB PB;
    for (int64_t N = 0; N < R.N; ++N)
      for (int64_t G = 0; G < A.Group; ++G) {
        const float *Xg = X + (N * R.C + G * R.Cg) * R.InPlane;
        if (Cols > 0 && Rows > 0) {
          packB(MK, R.Cg, Cols, MatrixRef{Xg, Cols, 1}, PB, Ctx.Par);
          gemmPacked(MK, (*Weights)[G], PB, 1.0f, 0.0f, Col.data(), Cols, Ctx.Par);
        }
        Ctx.Par.forRange(static_cast<size_t>(R.Mg), 1, [&](size_t Lo, size_t Hi) {
          for (size_t Mi = Lo; Mi < Hi; ++Mi) {
            const int64_t M = G * R.Mg + static_cast<int64_t>(Mi);
            float *Yp = Y + (N * R.M + M) * R.OutPlane;
            const float Bv = B ? B[M] : 0.0f;
            for (int64_t O = 0; O < R.OutPlane; ++O)
              Yp[O] = Bv;
            for (int64_t Kh = 0; Kh < KH; ++Kh)
              for (int64_t Kw = 0; Kw < KW; ++Kw) {
                const float *Row = Col.data() + ((static_cast<int64_t>(Mi) * KH + Kh) * KW + Kw) * Cols;
                for (int64_t Ih = 0; Ih < H; ++Ih) {
                  const int64_t Oh = Ih * SH + Kh * DH - PH;
                  if (Oh < 0 || Oh >= OH)
                    continue;
                  float *Out = Yp + Oh * OW;
                  const float *In = Row + Ih * Wd;
                  const int64_t Off = Kw * DW - PW;
                  // Iw range with 0 <= Iw*SW + Off < OW.
                  const int64_t Lo2 = Off >= 0 ? 0 : (-Off + SW - 1) / SW;
                  const int64_t Hi2 = OW - 1 - Off < 0 ? 0 : std::min<int64_t>(Wd, (OW - 1 - Off) / SW + 1);
                  for (int64_t Iw = Lo2; Iw < Hi2; ++Iw)
                    Out[Iw * SW + Off] += In[Iw];
                }
              }
          }
        });
      }
    return Status::ok();
  }

private:
  std::string Name;
  const GemmMicroKernel &MK;
  ConvTransposeAttrs A;
  std::vector<PackedA> PackedW;
};

bool typesOk(const KernelCreateInfo &I) {
  return inputIs(I, 0, ElementType::F32) && inputIs(I, 1, ElementType::F32) &&
         (I.Inputs.size() < 3 || !I.Inputs[2].Present || inputIs(I, 2, ElementType::F32));
}

Result<ConvTransposeAttrs> attrsFor(const KernelCreateInfo &I) {
  return parseConvTransposeAttrs(I.N, I.Inputs[0].Shape, I.Inputs[1].Shape);
}

KernelVariant gemmVariant(GemmIsa Isa, int Priority) {
  const GemmMicroKernel &MK = gemmMicroKernel(Isa);
  const std::string Name = std::string("f32_convtranspose__col2im_") + MK.Name;
  const auto Supports = [Isa](const KernelCreateInfo &I) {
    return gemmIsaAvailable(Isa) && typesOk(I) && I.Inputs[0].Shape.getRank() == 4;
  };
  return {Name, Priority, Supports, [Name, &MK](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
            ASSIGN_OR_RETURN(ConvTransposeAttrs A, attrsFor(I));
            std::vector<PackedA> Packed;
            if (inputIsConst(I, 1)) {
              const ConstData &W = *I.Inputs[1].Const;
              const int64_t Cg = W.Dims[0] / A.Group, Rows = product(W.Dims, 1, W.Dims.size());
              Packed.resize(static_cast<size_t>(A.Group));
              // Each group's panels in a compiled folder's packed.bin (the load borrows them).
              for (int64_t G = 0; G < A.Group; ++G) {
                const std::string Key =
                    packedWeightsKey(I, 1, Name + "/g" + std::to_string(G) + "/kc" + std::to_string(GemmKC));
                if (!borrowPackedA(Key, MK, Rows, Cg, GemmKC, Packed[G])) {
                  packA(MK, Rows, Cg, MatrixRef{W.as<float>() + G * Cg * Rows, 1, Rows}, Packed[G]);
                  storePackedA(Key, Packed[G]);
                }
              }
            }
            return makeKernel<ConvTransposeGemmKernel>(Name, MK, std::move(A), std::move(Packed));
          }};
}

std::vector<OpTestCase> convTransposeCases() {
  const auto X = [](std::vector<int64_t> D) { return tensorInput(std::move(D)); };
  const auto W = [](std::vector<int64_t> D) { return constInput(std::move(D)); };
  const auto ints = [](std::vector<int64_t> V) { return attrInts(std::move(V)); };
  return {
      testCase("basic", {X({1, 1, 3, 3}), W({1, 2, 3, 3})}),
      testCase("bias_pads", {X({2, 3, 5, 4}), W({3, 4, 3, 3}), W({4})}, {{"pads", ints({1, 1, 1, 1})}}),
      testCase("strides_output_padding", {X({1, 2, 4, 5}), W({2, 3, 3, 3}), W({3})},
               {{"strides", ints({3, 2})}, {"output_padding", ints({1, 1})}}),
      testCase("output_shape", {X({1, 1, 3, 3}), W({1, 2, 3, 3})}, {{"strides", ints({3, 2})}, {"output_shape", ints({10, 8})}}),
      testCase("same_upper", {X({1, 2, 4, 4}), W({2, 2, 3, 3})}, {{"strides", ints({2, 2})}, {"auto_pad", attrString("SAME_UPPER")}}),
      testCase("same_lower", {X({1, 2, 3, 5}), W({2, 2, 4, 3})}, {{"strides", ints({2, 2})}, {"auto_pad", attrString("SAME_LOWER")}}),
      testCase("dilations", {X({1, 2, 4, 4}), W({2, 3, 2, 3})}, {{"dilations", ints({2, 2})}}),
      testCase("groups", {X({1, 4, 3, 4}), W({4, 3, 3, 3}), W({6})}, {{"group", attrInt(2)}, {"strides", ints({2, 2})}}),
      testCase("asym_pads", {X({1, 2, 5, 5}), W({2, 2, 3, 3})}, {{"pads", ints({0, 1, 2, 0})}, {"strides", ints({2, 1})}}),
      testCase("weights_not_const", {X({1, 3, 4, 4}), X({3, 2, 3, 3}), X({2})}, {{"strides", ints({2, 2})}}),
      testCase("large", {X({1, 32, 8, 8}), W({32, 16, 4, 4}), W({16})}, {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
      testCase("1d", {X({2, 3, 6}), W({3, 2, 3}), W({2})}, {{"strides", ints({2})}}),
      testCase("3d", {X({1, 2, 3, 4, 3}), W({2, 2, 2, 3, 2})}, {{"strides", ints({2, 1, 2})}, {"pads", ints({0, 1, 0, 1, 0, 1})}}),
  };
}

OpKernels convTransposeKernels() {
  OpKernels K;
  K.OpType = "ConvTranspose";
  K.Variants.push_back({"f32_convtranspose__ref", 0, typesOk, [](const KernelCreateInfo &I) -> Result<std::unique_ptr<Kernel>> {
                          ASSIGN_OR_RETURN(ConvTransposeAttrs A, attrsFor(I));
                          return makeKernel<ConvTransposeRefKernel>(std::move(A));
                        }});
  K.Variants.push_back(gemmVariant(GemmIsa::Portable, 10));
  K.Variants.push_back(gemmVariant(GemmIsa::Avx2, 20));
  K.Variants.push_back(gemmVariant(GemmIsa::Avx512, 30));
  K.TestCases = convTransposeCases;
  return K;
}

OPT_REGISTER_HEAVY_SCHEMA(ConvTranspose, convTransposeSchema());
OPT_REGISTER_KERNELS(ConvTranspose, convTransposeKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
