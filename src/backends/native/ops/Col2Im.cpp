// Col2Im (opset 18): the inverse of im2col. Input [N, C * prod(block_shape), L] holds one column
// per sliding block; each value is added into image [N, C, image_shape...] at its block position
// (overlaps sum, positions in the padding are dropped). Any number of spatial dims; float types.
// image_shape and block_shape are inputs: the output shape is exact when they are constant.
#include "backends/native/ops/common/ElementwiseCommon.h"
#include "backends/native/ops/common/FloatDispatch.h"

namespace optimium {
namespace runtime {
namespace detail {
namespace ops {
namespace {

struct Col2ImGeometry {
  std::vector<int64_t> Image, Block, Dilations, PadsBegin, PadsEnd, Strides, Blocks;
  int64_t BlockSize = 1, BlockCount = 1;
};

/// Checks the attributes against image_shape / block_shape and counts the sliding blocks.
Result<Col2ImGeometry> col2ImGeometry(const Node &N, std::vector<int64_t> Image, std::vector<int64_t> Block) {
  Col2ImGeometry G;
  const size_t K = Image.size();
  if (K == 0 || Block.size() != K)
    return makeError(ErrorCode::Shape, N.describe(), ": image_shape ", joinInts(Image), " and block_shape ",
                     joinInts(Block), " must have the same non-zero length");
  ASSIGN_OR_RETURN(G.Dilations, N.getInts("dilations", std::vector<int64_t>(K, 1)));
  ASSIGN_OR_RETURN(G.Strides, N.getInts("strides", std::vector<int64_t>(K, 1)));
  ASSIGN_OR_RETURN(const std::vector<int64_t> Pads, N.getInts("pads", std::vector<int64_t>(2 * K, 0)));
  if (G.Dilations.size() != K || G.Strides.size() != K || Pads.size() != 2 * K)
    return makeError(ErrorCode::Model, N.describe(), ": dilations ", joinInts(G.Dilations), ", strides ",
                     joinInts(G.Strides), " and pads ", joinInts(Pads), " do not fit ", K, " spatial dims");
  for (size_t I = 0; I < K; ++I) {
    if (G.Dilations[I] < 1 || G.Strides[I] < 1 || Pads[I] < 0 || Pads[I + K] < 0)
      return makeError(ErrorCode::Model, N.describe(), ": dilations ", joinInts(G.Dilations), ", strides ",
                       joinInts(G.Strides), " must be positive and pads ", joinInts(Pads), " non-negative");
    if (Image[I] < 1 || Block[I] < 1)
      return makeError(ErrorCode::Shape, N.describe(), ": image_shape ", joinInts(Image), " and block_shape ",
                       joinInts(Block), " must be positive");
    G.PadsBegin.push_back(Pads[I]);
    G.PadsEnd.push_back(Pads[I + K]);
    const int64_t Span = G.Dilations[I] * (Block[I] - 1) + 1;
    const int64_t Count = (Image[I] + Pads[I] + Pads[I + K] - Span) / G.Strides[I] + 1;
    if (Image[I] + Pads[I] + Pads[I + K] < Span)
      return makeError(ErrorCode::Shape, N.describe(), ": block ", joinInts(Block), " (dilations ",
                       joinInts(G.Dilations), ") does not fit padded image ", joinInts(Image));
    G.Blocks.push_back(Count);
    G.BlockSize *= Block[I];
    G.BlockCount *= Count;
  }
  G.Image = std::move(Image);
  G.Block = std::move(Block);
  return G;
}

Status checkCol2ImInput(const Node &N, const Col2ImGeometry &G, int64_t Channels, int64_t Length) {
  if (Channels % G.BlockSize != 0)
    return makeError(ErrorCode::Shape, N.describe(), ": input dim 1 (", Channels,
                     ") is not a multiple of the block size ", G.BlockSize, " (block_shape ", joinInts(G.Block), ")");
  if (Length != G.BlockCount)
    return makeError(ErrorCode::Shape, N.describe(), ": input dim 2 (", Length, ") is not the number of blocks ",
                     joinInts(G.Blocks), " = ", G.BlockCount, " for image_shape ", joinInts(G.Image));
  return Status::ok();
}

template <typename T>
void col2ImPlanes(const Col2ImGeometry &G, const T *Src, T *Dst, size_t Begin, size_t End) {
  using C = ComputeT<T>;
  const size_t K = G.Image.size();
  const int64_t ImageSize = product(G.Image, 0, K);
  std::vector<C> Acc(static_cast<size_t>(ImageSize));
  std::vector<int64_t> Off(K), Pos(K);
  for (size_t P = Begin; P < End; ++P) { // one (n, c) image plane
    std::fill(Acc.begin(), Acc.end(), C(0));
    const T *Col = Src + static_cast<int64_t>(P) * G.BlockSize * G.BlockCount;
    for (int64_t B = 0; B < G.BlockSize; ++B) {
      for (size_t D = K, R = static_cast<size_t>(B); D-- > 0; R /= static_cast<size_t>(G.Block[D]))
        Off[D] = static_cast<int64_t>(R % static_cast<size_t>(G.Block[D])) * G.Dilations[D] - G.PadsBegin[D];
      for (int64_t L = 0; L < G.BlockCount; ++L) {
        int64_t Index = 0;
        bool Inside = true;
        for (size_t D = K, R = static_cast<size_t>(L); D-- > 0; R /= static_cast<size_t>(G.Blocks[D]))
          Pos[D] = static_cast<int64_t>(R % static_cast<size_t>(G.Blocks[D])) * G.Strides[D] + Off[D];
        for (size_t D = 0; D < K && Inside; ++D) {
          Inside = Pos[D] >= 0 && Pos[D] < G.Image[D];
          Index = Index * G.Image[D] + Pos[D];
        }
        if (Inside)
          Acc[static_cast<size_t>(Index)] += static_cast<C>(Col[B * G.BlockCount + L]);
      }
    }
    T *Out = Dst + static_cast<int64_t>(P) * ImageSize;
    for (int64_t I = 0; I < ImageSize; ++I)
      Out[I] = static_cast<T>(Acc[static_cast<size_t>(I)]);
  }
}

Status computeCol2Im(const Node &N, const std::vector<TensorView> &In, const std::vector<TensorView> &Out,
                     const Parallel &Par) {
  const TensorView &X = In[0], &Y = Out[0];
  ASSIGN_OR_RETURN(std::vector<int64_t> Image, readInts(In[1], "image_shape"));
  ASSIGN_OR_RETURN(std::vector<int64_t> Block, readInts(In[2], "block_shape"));
  ASSIGN_OR_RETURN(const Col2ImGeometry G, col2ImGeometry(N, std::move(Image), std::move(Block)));
  if (X.rank() != 3)
    return runError("col2im", "input ", joinInts(X.Dims), " is not 3-D");
  RETURN_IF_ERROR(checkCol2ImInput(N, G, X.Dims[1], X.Dims[2]));
  std::vector<int64_t> OutDims = {X.Dims[0], X.Dims[1] / G.BlockSize};
  OutDims.insert(OutDims.end(), G.Image.begin(), G.Image.end());
  if (Y.Dims != OutDims)
    return runError("col2im", "output ", joinInts(Y.Dims), " is not ", joinInts(OutDims));
  const size_t Planes = static_cast<size_t>(OutDims[0] * OutDims[1]);
  visitFloat(X.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    Par.forRange(Planes, 1, [&](size_t B, size_t E) { col2ImPlanes<T>(G, X.data<const T>(), Y.data<T>(), B, E); });
  });
  return Status::ok();
}

Status inferCol2Im(ShapeContext &Ctx) {
  RETURN_IF_ERROR(requireInputTypeIn(Ctx, 0, elementTypes(FloatTypes()), "input"));
  RETURN_IF_ERROR(requireInputType(Ctx, 1, {ElementType::I64}));
  RETURN_IF_ERROR(requireInputType(Ctx, 2, {ElementType::I64}));
  const TensorShape &X = Ctx.Inputs[0].Shape, &IS = Ctx.Inputs[1].Shape, &BS = Ctx.Inputs[2].Shape;
  if (X.getRank() != 3)
    return Ctx.error(ErrorCode::Shape, "input ", X.toString(), " is not [N, C * prod(block_shape), L]");
  if (IS.getRank() != 1 || BS.getRank() != 1 || !IS[0].isConst())
    return Ctx.error(ErrorCode::Shape, "image_shape ", IS.toString(), " and block_shape ", BS.toString(),
                     " must be 1-D of a known length");
  const size_t K = static_cast<size_t>(IS[0].value());
  std::vector<Expr> Out = {X[0], Ctx.newSymbol()};
  for (size_t I = 0; I < K; ++I)
    Out.push_back(Ctx.newSymbol());
  if (isConstInput(Ctx, 1) && isConstInput(Ctx, 2)) {
    ASSIGN_OR_RETURN(std::vector<int64_t> Image, constInts(Ctx, 1));
    ASSIGN_OR_RETURN(std::vector<int64_t> Block, constInts(Ctx, 2));
    ASSIGN_OR_RETURN(const Col2ImGeometry G, col2ImGeometry(Ctx.N, Image, Block));
    if (X[1].isConst() && X[2].isConst())
      RETURN_IF_ERROR(checkCol2ImInput(Ctx.N, G, X[1].value(), X[2].value()));
    if (X[1].isConst())
      Out[1] = Expr(static_cast<long long>(X[1].value() / G.BlockSize));
    for (size_t I = 0; I < K; ++I)
      Out[2 + I] = Expr(static_cast<long long>(Image[I]));
  }
  Ctx.Outputs[0].Type = Ctx.Inputs[0].Type;
  Ctx.Outputs[0].Shape = TensorShape(Out);
  return Status::ok();
}

OpSchema col2ImSchema() {
  OpSchema S;
  S.OpType = "Col2Im";
  S.MinInputs = S.MaxInputs = 3;
  S.Infer = inferCol2Im;
  return S;
}

OpKernels col2ImKernels() {
  OpKernels K;
  K.OpType = "Col2Im";
  K.Variants.push_back(computeVariant("any_col2im__ref", 0, computeCol2Im));
  K.TestCases = [] {
    return std::vector<OpTestCase>{
        withOpset(testCase("2d", {tensorInput({1, 5, 5}), intsInput({5, 5}), intsInput({1, 5})}), 18),
        withOpset(testCase("2d_strided_padded", {tensorInput({2, 2 * 4, 9}), intsInput({5, 5}), intsInput({2, 2})},
                           {{"strides", attrInts({2, 2})}, {"pads", attrInts({1, 1, 1, 1})}, {"dilations", attrInts({1, 1})}}),
                  18),
        withOpset(testCase("3d_dilated", {tensorInput({1, 8, 8}), intsInput({4, 4, 4}), intsInput({2, 2, 2})},
                           {{"dilations", attrInts({2, 2, 2})}}),
                  18),
        withOpset(testCase("f64", {tensorInput({1, 4, 9}, ElementType::F64), intsInput({4, 4}), intsInput({2, 2})}), 18),
    };
  };
  return K;
}

OPT_REGISTER_SCHEMA(Col2Im, col2ImSchema());
OPT_REGISTER_KERNELS(Col2Im, col2ImKernels());

} // namespace
} // namespace ops
} // namespace detail
} // namespace runtime
} // namespace optimium
