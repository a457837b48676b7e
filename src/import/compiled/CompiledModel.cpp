// Encoding and bounds-checked decoding of the compiled model folder (CompiledModel.h). The graph
// encoding mirrors ir/Graph.h field by field; the decoder validates every index, kind, size and
// offset before anything downstream sees the graph.
#include "import/compiled/CompiledModel.h"

#include <sys/stat.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

#include "Optimium/Runtime/Version.h"
#include "core/ExprTree.h"
#include "core/LargeAlloc.h"
#include "import/SealedFolder.h"
#include "import/compiled/ByteIO.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

constexpr char kHeaderMagic[9] = "OPTMHEAD";
constexpr char kGraphMagic[9] = "OPTMGRPH";
constexpr char kWeightsMagic[9] = "OPTMWGHT";
constexpr char kPackedMagic[9] = "OPTMPACK";
/// Nesting limits: expressions and subgraphs are decoded recursively; a corrupt file must not run
/// the stack out.
constexpr int kMaxExprDepth = 256;
constexpr int kMaxGraphDepth = 32;
constexpr int kMaxAttributeDepth = 32;
constexpr uint8_t kLastElementType = static_cast<uint8_t>(ElementType::F8E8M0);
constexpr uint8_t kLastAttributeKind = static_cast<uint8_t>(AttributeKind::Map);

uint32_t crc32Of(const uint8_t *P, size_t N) {
  uLong C = crc32(0L, Z_NULL, 0);
  while (N) { // zlib takes uInt lengths
    const uInt Chunk = static_cast<uInt>(std::min<size_t>(N, 1u << 30));
    C = crc32(C, P, Chunk);
    P += Chunk;
    N -= Chunk;
  }
  return static_cast<uint32_t>(C);
}

/// Preamble + Body as one file.
std::vector<uint8_t> withPreamble(const char *Magic, std::vector<uint8_t> Body, bool Crc = true) {
  ByteWriter W;
  W.raw(Magic, 8);
  W.u32(kCompiledFormatVersion);
  W.u32(0);
  W.u64(Body.size());
  W.u32(Crc ? crc32Of(Body.data(), Body.size()) : 0);
  W.u32(0);
  W.Bytes.insert(W.Bytes.end(), Body.begin(), Body.end());
  return std::move(W.Bytes);
}

// ---------------------------------------------------------------------------------------------
// Encoding

struct Encoder {
  ByteWriter Out;     ///< graph.bin's body
  ByteWriter Weights; ///< weights.bin, preamble space included (offsets are file offsets)
  /// The constants to lay out in weights.bin once the graph is encoded (layOutWeights), each with
  /// the graph.bin positions of the offset fields that refer to it.
  struct PendingConstant {
    const ConstData *C;
    const void *Bytes;
    std::vector<size_t> OffsetFields;
  };
  std::vector<PendingConstant> Pending;
  std::map<const ConstData *, size_t> PendingIndex;
  Status Error;

  void expr(const Expr &E) {
    const ExprParts P = exprParts(E);
    Out.u8(static_cast<uint8_t>(P.Op));
    if (P.Op == ExprOp::Const)
      Out.i64(P.Value);
    else if (P.Op == ExprOp::Symbol)
      Out.str(P.Name);
    else {
      expr(P.L);
      expr(P.R);
    }
  }
  void shape(const TensorShape &S) {
    Out.u32(static_cast<uint32_t>(S.getRank()));
    for (const Expr &E : S)
      expr(E);
  }
  void attribute(const Attribute &A) {
    const AttributeKind K = A ? A.getKind() : AttributeKind::None;
    Out.u8(static_cast<uint8_t>(K));
    switch (K) {
    case AttributeKind::None: break;
    case AttributeKind::I8: Out.i64(A.cast<I8Attr>().value()); break;
    case AttributeKind::I16: Out.i64(A.cast<I16Attr>().value()); break;
    case AttributeKind::I32: Out.i64(A.cast<I32Attr>().value()); break;
    case AttributeKind::I64: Out.i64(A.cast<I64Attr>().value()); break;
    case AttributeKind::Bool: Out.i64(A.cast<BoolAttr>().value() ? 1 : 0); break;
    case AttributeKind::U8: Out.u64(A.cast<U8Attr>().value()); break;
    case AttributeKind::U16: Out.u64(A.cast<U16Attr>().value()); break;
    case AttributeKind::U32: Out.u64(A.cast<U32Attr>().value()); break;
    case AttributeKind::U64: Out.u64(A.cast<U64Attr>().value()); break;
    case AttributeKind::F16: Out.f64(static_cast<float>(A.cast<F16Attr>().value())); break;
    case AttributeKind::BF16: Out.f64(static_cast<float>(A.cast<BF16Attr>().value())); break;
    case AttributeKind::F32: Out.f64(A.cast<F32Attr>().value()); break;
    case AttributeKind::TF32: Out.f64(A.cast<TF32Attr>().value()); break;
    case AttributeKind::F64: Out.f64(A.cast<F64Attr>().value()); break;
    case AttributeKind::QS8: quant(A.cast<QS8Attr>()); break;
    case AttributeKind::QS16: quant(A.cast<QS16Attr>()); break;
    case AttributeKind::QS32: quant(A.cast<QS32Attr>()); break;
    case AttributeKind::String: Out.str(A.cast<StringAttr>().value()); break;
    case AttributeKind::List: {
      const ListAttr L = A.cast<ListAttr>();
      Out.u32(static_cast<uint32_t>(L.size()));
      for (const Attribute &E : L)
        attribute(E);
      break;
    }
    case AttributeKind::Map: {
      const MapAttr M = A.cast<MapAttr>();
      Out.u32(static_cast<uint32_t>(M.size()));
      for (const auto &KV : M.value()) {
        Out.str(KV.first);
        attribute(KV.second);
      }
      break;
    }
    }
  }
  template <typename Q> void quant(const Q &A) {
    Out.i64(A.value());
    Out.f32(A.scale());
    Out.i64(A.zeroPoint());
  }
  void metadata(const std::map<std::string, Attribute> &M) {
    Out.u32(static_cast<uint32_t>(M.size()));
    for (const auto &KV : M) {
      Out.str(KV.first);
      attribute(KV.second);
    }
  }
  /// Storage 0: strings inline; 1: bytes inline (attribute tensors); 2: a range of weights.bin.
  void constant(const ConstData &C, bool Inline) {
    Out.u8(static_cast<uint8_t>(C.Type));
    Out.u32(static_cast<uint32_t>(C.Dims.size()));
    for (int64_t D : C.Dims)
      Out.i64(D);
    if (C.Type == ElementType::String) {
      Out.u8(0);
      Out.u32(static_cast<uint32_t>(C.Strings.size()));
      for (const std::string &S : C.Strings)
        Out.str(S);
      return;
    }
    const void *Bytes = C.Data ? C.Data : C.Source;
    if (!Bytes && C.Bytes) {
      if (Error.isOk())
        Error = makeError(ErrorCode::Container, "a constant of ", C.Bytes, " bytes has no data to write");
      Bytes = nullptr;
    }
    if (Inline) {
      Out.u8(1);
      Out.u64(C.Bytes);
      if (C.Bytes)
        Out.raw(Bytes, C.Bytes);
      return;
    }
    Out.u8(2);
    auto It = PendingIndex.find(&C);
    if (It == PendingIndex.end()) {
      It = PendingIndex.emplace(&C, Pending.size()).first;
      Pending.push_back(PendingConstant{&C, Bytes, {}});
    }
    Pending[It->second].OffsetFields.push_back(Out.Bytes.size());
    Out.u64(0); // patched by layOutWeights
    Out.u64(C.Bytes);
  }
  /// Writes the constants into weights.bin and their offsets into graph.bin: first the small ones
  /// (below kCompiledHotConstantBytes: biases, norm scales, depthwise weights, shapes), in graph
  /// order, then the large ones. The small ones are what a compiled model's kernels read at run
  /// time when packed.bin serves their big weights; packed together they fill a few pages. The
  /// kernel maps a file's whole large folio on a fault (Linux 6.18, ext4, a file written in one
  /// piece as optimium-compile writes it), so a bias between two packed weights made megabytes of
  /// those never-read weights resident (ResNet-50: +32 MiB peak RSS).
  void layOutWeights() {
    for (const bool Small : {true, false})
      for (const PendingConstant &P : Pending) {
        const ConstData &C = *P.C;
        if ((C.Bytes < kCompiledHotConstantBytes) != Small)
          continue;
        Weights.padTo(C.Bytes >= kCompiledPageAlignment ? kCompiledPageAlignment : kCompiledSmallAlignment);
        const uint64_t Offset = Weights.Bytes.size();
        if (C.Bytes && P.Bytes)
          Weights.raw(P.Bytes, C.Bytes);
        else if (C.Bytes)
          Weights.Bytes.resize(Weights.Bytes.size() + C.Bytes);
        for (size_t Field : P.OffsetFields)
          std::memcpy(Out.Bytes.data() + Field, &Offset, sizeof(Offset)); // little-endian, as ByteWriter
      }
  }
  void attrValue(const AttrValue &A) {
    Out.u8(static_cast<uint8_t>(A.K));
    switch (A.K) {
    case AttrValue::Kind::Int: Out.i64(A.I); break;
    case AttrValue::Kind::Float: Out.f32(A.F); break;
    case AttrValue::Kind::String: Out.str(A.S); break;
    case AttrValue::Kind::Ints:
      Out.u32(static_cast<uint32_t>(A.Ints.size()));
      for (int64_t V : A.Ints)
        Out.i64(V);
      break;
    case AttrValue::Kind::Floats:
      Out.u32(static_cast<uint32_t>(A.Floats.size()));
      for (float V : A.Floats)
        Out.f32(V);
      break;
    case AttrValue::Kind::Strings:
      Out.u32(static_cast<uint32_t>(A.Strings.size()));
      for (const std::string &V : A.Strings)
        Out.str(V);
      break;
    case AttrValue::Kind::Tensor:
      Out.u8(A.T ? 1 : 0);
      if (A.T)
        constant(*A.T, /*Inline=*/true);
      break;
    case AttrValue::Kind::Graph:
      Out.u8(A.G ? 1 : 0);
      if (A.G)
        graph(*A.G, /*TopLevel=*/false);
      break;
    case AttrValue::Kind::Type:
      Out.u8(static_cast<uint8_t>(A.Ty.Kind));
      Out.u8(static_cast<uint8_t>(A.Ty.Elem));
      Out.u8(A.Ty.ShapeKnown ? 1 : 0);
      shape(A.Ty.Shape);
      break;
    }
  }
  void graph(const Graph &G, bool TopLevel) {
    Out.str(G.Name);
    Out.u32(static_cast<uint32_t>(G.OpsetImports.size()));
    for (const auto &KV : G.OpsetImports) {
      Out.str(KV.first);
      Out.i64(KV.second);
    }
    if (!TopLevel) // the top level's metadata lives in the header
      metadata(G.Metadata);
    Out.u32(static_cast<uint32_t>(G.Values.size()));
    for (const Value &V : G.Values) {
      Out.str(V.Name);
      Out.u8(static_cast<uint8_t>(V.Kind));
      Out.u8(static_cast<uint8_t>(V.Type));
      Out.u8(V.ShapeKnown ? 1 : 0);
      Out.u8(V.RankUnknown ? 1 : 0);
      Out.u8(V.IsGraphInput ? 1 : 0);
      Out.u8(V.IsGraphOutput ? 1 : 0);
      shape(V.Shape);
      Out.u8(V.Const ? 1 : 0);
      if (V.Const)
        constant(*V.Const, /*Inline=*/false);
    }
    Out.u32(static_cast<uint32_t>(G.Nodes.size()));
    for (const Node &N : G.Nodes) {
      Out.str(N.Name);
      Out.str(N.OpType);
      Out.str(N.Domain);
      Out.i32(N.OpsetVersion);
      Out.u32(static_cast<uint32_t>(N.Inputs.size()));
      for (int I : N.Inputs)
        Out.i32(I);
      Out.u32(static_cast<uint32_t>(N.Outputs.size()));
      for (int O : N.Outputs)
        Out.i32(O);
      Out.u32(static_cast<uint32_t>(N.Attrs.size()));
      for (const auto &KV : N.Attrs) {
        Out.str(KV.first);
        attrValue(KV.second);
      }
    }
    for (const std::vector<int> *L : {&G.Inputs, &G.Outputs}) {
      Out.u32(static_cast<uint32_t>(L->size()));
      for (int V : *L)
        Out.i32(V);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Decoding

struct Decoder {
  ByteReader &R;
  const uint8_t *WeightsData; ///< the weights file (offsets are file offsets)
  size_t WeightsSize;
  std::shared_ptr<const void> WeightsOwner;

  Expr expr(int Depth) {
    if (Depth > kMaxExprDepth) {
      R.fail("a shape expression nests deeper than ", kMaxExprDepth);
      return Expr();
    }
    const uint8_t Op = R.u8("expression kind");
    if (!R.ok())
      return Expr();
    if (Op >= kExprOpCount) {
      R.fail("unknown expression kind ", static_cast<int>(Op));
      return Expr();
    }
    switch (static_cast<ExprOp>(Op)) {
    case ExprOp::Const: return Expr(static_cast<long long>(R.i64("constant dimension")));
    case ExprOp::Symbol: {
      std::string Name = R.str("symbol name");
      if (R.ok() && Name.empty()) {
        R.fail("an empty symbol name");
        return Expr();
      }
      return R.ok() ? Expr(Name) : Expr();
    }
    default: {
      Expr L = expr(Depth + 1);
      Expr Rt = expr(Depth + 1);
      return R.ok() ? makeBinaryExpr(static_cast<ExprOp>(Op), L, Rt) : Expr();
    }
    }
  }
  TensorShape shape() {
    const uint32_t Rank = R.count("rank", 6);
    std::vector<Expr> Dims;
    for (uint32_t I = 0; I < Rank && R.ok(); ++I)
      Dims.push_back(expr(0));
    return TensorShape(std::move(Dims));
  }
  Attribute attribute(int Depth) {
    if (Depth > kMaxAttributeDepth) {
      R.fail("an attribute nests deeper than ", kMaxAttributeDepth);
      return Attribute();
    }
    const uint8_t K = R.u8("attribute kind");
    if (R.ok() && K > kLastAttributeKind) {
      R.fail("unknown attribute kind ", static_cast<int>(K));
      return Attribute();
    }
    const AttributeKind Kind = static_cast<AttributeKind>(K);
    switch (Kind) {
    case AttributeKind::None: return Attribute();
    case AttributeKind::I8:
    case AttributeKind::I16:
    case AttributeKind::I32:
    case AttributeKind::I64: return Attribute::getInt(Kind, R.i64("integer attribute"));
    case AttributeKind::Bool: return Attribute::getBool(R.i64("bool attribute") != 0);
    case AttributeKind::U8:
    case AttributeKind::U16:
    case AttributeKind::U32:
    case AttributeKind::U64: return Attribute::getUInt(Kind, R.u64("unsigned attribute"));
    case AttributeKind::F16:
    case AttributeKind::BF16:
    case AttributeKind::F32:
    case AttributeKind::TF32:
    case AttributeKind::F64: return Attribute::getFloat(Kind, R.f64("float attribute"));
    case AttributeKind::QS8:
    case AttributeKind::QS16:
    case AttributeKind::QS32: {
      const int64_t V = R.i64("quantized value");
      const float Scale = R.f32("quantized scale");
      const int64_t Zero = R.i64("quantized zero point");
      return Attribute::getQuantized(Kind, V, Scale, Zero);
    }
    case AttributeKind::String: return Attribute::getString(R.str("string attribute"));
    case AttributeKind::List: {
      const uint32_t N = R.count("list length", 1);
      std::vector<Attribute> L;
      for (uint32_t I = 0; I < N && R.ok(); ++I)
        L.push_back(attribute(Depth + 1));
      return Attribute::getList(L);
    }
    case AttributeKind::Map: {
      std::map<std::string, Attribute> M;
      metadataInto(M, Depth + 1);
      return Attribute::getMap(M);
    }
    }
    return Attribute();
  }
  void metadataInto(std::map<std::string, Attribute> &M, int Depth) {
    const uint32_t N = R.count("map size", 5);
    for (uint32_t I = 0; I < N && R.ok(); ++I) {
      std::string Key = R.str("map key");
      Attribute A = attribute(Depth);
      if (R.ok() && !M.emplace(std::move(Key), A).second)
        R.fail("a repeated metadata key");
    }
  }
  std::shared_ptr<ConstData> constant(bool AllowWeights) {
    const uint8_t T = R.u8("constant element type");
    if (R.ok() && (T == 0 || T > kLastElementType)) {
      R.fail("unknown constant element type ", static_cast<int>(T));
      return nullptr;
    }
    auto C = std::make_shared<ConstData>();
    C->Type = static_cast<ElementType>(T);
    const uint32_t Rank = R.count("constant rank", 8);
    uint64_t Count = 1;
    for (uint32_t I = 0; I < Rank && R.ok(); ++I) {
      const int64_t D = R.i64("constant dimension");
      if (D < 0) {
        R.fail("a negative constant dimension ", D);
        return nullptr;
      }
      C->Dims.push_back(D);
      if (D && Count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(D)) {
        R.fail("a constant's element count overflows");
        return nullptr;
      }
      Count *= static_cast<uint64_t>(D);
    }
    const uint8_t Storage = R.u8("constant storage");
    if (!R.ok())
      return nullptr;
    if (C->Type == ElementType::String) {
      if (Storage != 0) {
        R.fail("a string constant must be stored inline (storage 0), found storage ", static_cast<int>(Storage));
        return nullptr;
      }
      const uint32_t N = R.count("string count", 4);
      if (R.ok() && N != Count) {
        R.fail("a string constant of ", Count, " elements holds ", N, " strings");
        return nullptr;
      }
      for (uint32_t I = 0; I < N && R.ok(); ++I)
        C->Strings.push_back(R.str("string element"));
      C->Data = C->Strings.data();
      C->Bytes = C->Strings.size() * sizeof(std::string);
      return R.ok() ? C : nullptr;
    }
    const uint64_t Elem = getElementSize(C->Type);
    if (Count > std::numeric_limits<uint64_t>::max() / (Elem ? Elem : 1)) {
      R.fail("a constant's byte size overflows");
      return nullptr;
    }
    const uint64_t Want = Count * Elem;
    if (Storage == 1) {
      const uint64_t Bytes = R.u64("inline constant size");
      if (R.ok() && Bytes != Want) {
        R.fail("an inline constant of ", toString(C->Type), " ", Count, " elements has ", Bytes, " bytes, expected ", Want);
        return nullptr;
      }
      const uint8_t *P = R.bytes(static_cast<size_t>(Bytes), "inline constant bytes");
      if (!P)
        return nullptr;
      auto Copy = ConstData::allocate(C->Type, C->Dims);
      if (Bytes)
        std::memcpy(Copy->mutableData(), P, static_cast<size_t>(Bytes));
      return Copy;
    }
    if (Storage != 2 || !AllowWeights) {
      R.fail("unknown constant storage ", static_cast<int>(Storage));
      return nullptr;
    }
    const uint64_t Offset = R.u64("weight offset");
    const uint64_t Bytes = R.u64("weight size");
    if (!R.ok())
      return nullptr;
    if (Bytes != Want) {
      R.fail("a weight of ", toString(C->Type), " ", Count, " elements has ", Bytes, " bytes, expected ", Want);
      return nullptr;
    }
    if (Offset < kCompiledPreambleBytes || Offset % kCompiledSmallAlignment || Offset > WeightsSize ||
        Bytes > WeightsSize - Offset) {
      R.fail("a weight of ", Bytes, " bytes at offset ", Offset, " does not lie (64-byte aligned) inside '", WeightsPath,
             "' of ", WeightsSize, " bytes");
      return nullptr;
    }
    C->Data = WeightsData + Offset;
    C->Bytes = static_cast<size_t>(Bytes);
    C->KeepAlive = WeightsOwner;
    return C;
  }
  bool valueKind(uint8_t K) {
    if (K > static_cast<uint8_t>(ValueKind::OptionalSequence)) {
      R.fail("unknown value kind ", static_cast<int>(K));
      return false;
    }
    return true;
  }
  bool elementType(uint8_t T, bool AllowUndefined) {
    if (T > kLastElementType || (!AllowUndefined && T == 0)) {
      R.fail("unknown element type ", static_cast<int>(T));
      return false;
    }
    return true;
  }
  AttrValue attrValue(int GraphDepth) {
    AttrValue A;
    const uint8_t K = R.u8("attribute kind");
    if (R.ok() && K > static_cast<uint8_t>(AttrValue::Kind::Type)) {
      R.fail("unknown node attribute kind ", static_cast<int>(K));
      return A;
    }
    A.K = static_cast<AttrValue::Kind>(K);
    switch (A.K) {
    case AttrValue::Kind::Int: A.I = R.i64("int attribute"); break;
    case AttrValue::Kind::Float: A.F = R.f32("float attribute"); break;
    case AttrValue::Kind::String: A.S = R.str("string attribute"); break;
    case AttrValue::Kind::Ints: {
      const uint32_t N = R.count("ints length", 8);
      for (uint32_t I = 0; I < N && R.ok(); ++I)
        A.Ints.push_back(R.i64("ints element"));
      break;
    }
    case AttrValue::Kind::Floats: {
      const uint32_t N = R.count("floats length", 4);
      for (uint32_t I = 0; I < N && R.ok(); ++I)
        A.Floats.push_back(R.f32("floats element"));
      break;
    }
    case AttrValue::Kind::Strings: {
      const uint32_t N = R.count("strings length", 4);
      for (uint32_t I = 0; I < N && R.ok(); ++I)
        A.Strings.push_back(R.str("strings element"));
      break;
    }
    case AttrValue::Kind::Tensor:
      if (R.flag("tensor attribute present"))
        A.T = constant(/*AllowWeights=*/false);
      break;
    case AttrValue::Kind::Graph:
      if (R.flag("graph attribute present"))
        A.G = std::shared_ptr<Graph>(graph(GraphDepth + 1));
      break;
    case AttrValue::Kind::Type: {
      const uint8_t VK = R.u8("type attribute kind");
      const uint8_t ET = R.u8("type attribute element type");
      if (!R.ok() || !valueKind(VK) || !elementType(ET, true))
        break;
      A.Ty.Kind = static_cast<ValueKind>(VK);
      A.Ty.Elem = static_cast<ElementType>(ET);
      A.Ty.ShapeKnown = R.flag("type attribute shape known");
      A.Ty.Shape = shape();
      break;
    }
    }
    return A;
  }
  /// One graph; subgraphs (Depth > 0) may read values of enclosing graphs, which appear as values
  /// with neither producer nor constant nor graph-input flag.
  std::unique_ptr<Graph> graph(int Depth) {
    if (Depth > kMaxGraphDepth) {
      R.fail("subgraphs nest deeper than ", kMaxGraphDepth);
      return nullptr;
    }
    auto G = std::make_unique<Graph>();
    G->Name = R.str("graph name");
    const uint32_t NOpsets = R.count("opset import count", 12);
    for (uint32_t I = 0; I < NOpsets && R.ok(); ++I) {
      std::string Domain = R.str("opset domain");
      const int64_t V = R.i64("opset version");
      if (R.ok() && (V < 0 || V > std::numeric_limits<int>::max()))
        R.fail("opset version ", V, " of domain '", Domain, "' is out of range");
      G->OpsetImports[Domain] = static_cast<int>(V);
    }
    if (Depth > 0)
      metadataInto(G->Metadata, 0);
    const uint32_t NValues = R.count("value count", 15);
    G->Values.reserve(NValues);
    std::set<std::string> Names;
    for (uint32_t I = 0; I < NValues && R.ok(); ++I) {
      Value V;
      V.Name = R.str("value name");
      const uint8_t K = R.u8("value kind");
      const uint8_t T = R.u8("value element type");
      if (!R.ok() || !valueKind(K) || !elementType(T, true))
        return nullptr;
      V.Kind = static_cast<ValueKind>(K);
      V.Type = static_cast<ElementType>(T);
      V.ShapeKnown = R.flag("value shape known");
      V.RankUnknown = R.flag("value rank unknown");
      V.IsGraphInput = R.flag("value is a graph input");
      V.IsGraphOutput = R.flag("value is a graph output");
      V.Shape = shape();
      if (R.flag("value has a constant")) {
        V.Const = constant(/*AllowWeights=*/true);
        if (R.ok() && V.Const->Type != V.Type)
          R.fail("value '", V.Name, "' is ", toString(V.Type), " but its constant is ", toString(V.Const->Type));
      }
      if (R.ok() && !V.Name.empty() && !Names.insert(V.Name).second)
        R.fail("two values are named '", V.Name, "'");
      G->Values.push_back(std::move(V));
    }
    const int NV = static_cast<int>(G->Values.size());
    std::vector<int> ProducedBy(G->Values.size(), -1);
    const uint32_t NNodes = R.count("node count", 28);
    G->Nodes.reserve(NNodes);
    for (uint32_t NI = 0; NI < NNodes && R.ok(); ++NI) {
      Node N;
      N.Name = R.str("node name");
      N.OpType = R.str("node op type");
      N.Domain = R.str("node domain");
      N.OpsetVersion = R.i32("node opset version");
      if (R.ok() && N.OpType.empty())
        R.fail("node ", NI, " has no op type");
      const uint32_t NIn = R.count("node input count", 4);
      for (uint32_t I = 0; I < NIn && R.ok(); ++I) {
        const int V = R.i32("node input");
        if (R.ok() && (V < -1 || V >= NV)) {
          R.fail(N.describe(), " input ", I, " is value ", V, ", not one of the ", NV, " values");
          return nullptr;
        }
        N.Inputs.push_back(V);
      }
      const uint32_t NOut = R.count("node output count", 4);
      for (uint32_t I = 0; I < NOut && R.ok(); ++I) {
        const int V = R.i32("node output");
        if (R.ok() && (V < -1 || V >= NV)) {
          R.fail(N.describe(), " output ", I, " is value ", V, ", not one of the ", NV, " values");
          return nullptr;
        }
        if (V >= 0) {
          if (ProducedBy[V] >= 0 || G->Values[V].Const || G->Values[V].IsGraphInput) {
            R.fail(N.describe(), " output '", G->Values[V].Name, "' is a constant, a graph input or another node's output");
            return nullptr;
          }
          ProducedBy[V] = static_cast<int>(NI);
        }
        N.Outputs.push_back(V);
      }
      const uint32_t NAttrs = R.count("node attribute count", 5);
      for (uint32_t I = 0; I < NAttrs && R.ok(); ++I) {
        std::string Key = R.str("attribute name");
        AttrValue A = attrValue(Depth);
        if (R.ok() && !N.Attrs.emplace(std::move(Key), std::move(A)).second)
          R.fail(N.describe(), " repeats an attribute");
      }
      G->Nodes.push_back(std::move(N));
    }
    if (!R.ok())
      return nullptr;
    // Every node input produced in the graph comes from an earlier node.
    for (size_t NI = 0; NI < G->Nodes.size(); ++NI)
      for (int V : G->Nodes[NI].Inputs)
        if (V >= 0 && ProducedBy[V] >= static_cast<int>(NI)) {
          R.fail(G->Nodes[NI].describe(), " reads '", G->Values[V].Name, "' before it is produced (nodes out of order)");
          return nullptr;
        } else if (V >= 0 && Depth == 0 && ProducedBy[V] < 0 && !G->Values[V].Const && !G->Values[V].IsGraphInput) {
          R.fail(G->Nodes[NI].describe(), " reads '", G->Values[V].Name, "', which no node, input or constant defines");
          return nullptr;
        }
    for (std::vector<int> *L : {&G->Inputs, &G->Outputs}) {
      const bool In = L == &G->Inputs;
      const uint32_t N = R.count(In ? "graph input count" : "graph output count", 4);
      for (uint32_t I = 0; I < N && R.ok(); ++I) {
        const int V = R.i32(In ? "graph input" : "graph output");
        if (R.ok() && (V < 0 || V >= NV)) {
          R.fail("graph ", In ? "input " : "output ", I, " is value ", V, ", not one of the ", NV, " values");
          return nullptr;
        }
        if (R.ok() && !(In ? G->Values[V].IsGraphInput : G->Values[V].IsGraphOutput)) {
          R.fail("graph ", In ? "input" : "output", " '", G->Values[V].Name, "' lacks its flag");
          return nullptr;
        }
        L->push_back(V);
      }
    }
    if (!R.ok())
      return nullptr;
    G->rebuildUseLists();
    return G;
  }
  std::string WeightsPath;
};


// ---------------------------------------------------------------------------------------------
// Files

std::string runtimeVersionText() {
  const Version V = getVersion();
  return std::to_string(V.Major) + "." + std::to_string(V.Minor) + "." + std::to_string(V.Patch) + (V.Tag ? V.Tag : "") +
         " (" + (V.CommitID ? V.CommitID : "") + ")";
}

/// Checks F's preamble (magic, version, flags, size, CRC) and returns a reader over its body.
Result<ByteReader> openBody(const FolderFile &F, const char *Magic, const char *What, bool CheckCrc) {
  auto Bad = [&](const auto &...Parts) { return makeError(ErrorCode::Container, "compiled model file '", F.Path, "' ", Parts...); };
  if (F.Size < kCompiledPreambleBytes)
    return Bad("is truncated: ", F.Size, " bytes, its preamble alone takes ", kCompiledPreambleBytes);
  if (std::memcmp(F.Data, Magic, 8) != 0)
    return Bad("is not a compiled model ", What, " file (its first bytes are not '", Magic, "')");
  ByteReader P(F.Data + 8, kCompiledPreambleBytes - 8, F.Path);
  const uint32_t Version = P.u32("format version");
  const uint32_t Flags = P.u32("flags");
  const uint64_t BodySize = P.u64("body size");
  const uint32_t Crc = P.u32("CRC");
  const uint32_t Reserved = P.u32("reserved");
  if (Version > kCompiledFormatVersion || Version == 0) {
    // The header's body starts with the writer's runtime version in every format version.
    std::string Writer;
    if (std::strcmp(Magic, kHeaderMagic) == 0) {
      ByteReader H(F.Data + kCompiledPreambleBytes, F.Size - kCompiledPreambleBytes, F.Path);
      const std::string V = H.str("runtime version");
      if (H.ok() && V.size() < 200)
        Writer = " by runtime " + V;
    }
    return Bad("was written in folder format version ", Version, Writer, "; this runtime (", runtimeVersionText(),
               ") reads format versions 1 to ", kCompiledFormatVersion, ": recompile the model with this runtime's "
               "optimium-compile or use a newer runtime");
  }
  if (Reserved != 0)
    return Bad("is corrupt: its preamble's reserved word is ", Reserved, ", not 0");
  if (Flags != 0)
    return Bad("has flags ", Flags, " this runtime does not know (an encrypted folder?)");
  if (BodySize != F.Size - kCompiledPreambleBytes)
    return Bad(BodySize > F.Size - kCompiledPreambleBytes ? "is truncated" : "has trailing bytes", ": its preamble says ",
               kCompiledPreambleBytes + BodySize, " bytes, the file has ", F.Size);
  if (CheckCrc && crc32Of(F.Data + kCompiledPreambleBytes, F.Size - kCompiledPreambleBytes) != Crc)
    return Bad("is corrupt: the CRC-32 of its contents does not match its preamble");
  return ByteReader(F.Data + kCompiledPreambleBytes, F.Size - kCompiledPreambleBytes, F.Path);
}

uint32_t preambleCrc(const FolderFile &F) {
  uint32_t C = 0;
  std::memcpy(&C, F.Data + 24, 4);
  return C;
}

struct HeaderFields {
  CompileInfo Info;
  std::map<std::string, Attribute> Metadata;
  uint64_t GraphFileBytes = 0, WeightsFileBytes = 0;
  uint32_t GraphCrc = 0, WeightsCrc = 0;
};

std::vector<uint8_t> encodeHeader(const CompileInfo &Info, const Graph &G, const std::vector<uint8_t> &GraphFile,
                                  const std::vector<uint8_t> &WeightsFile) {
  Encoder E;
  ByteWriter &W = E.Out;
  W.str(Info.RuntimeVersion.empty() ? runtimeVersionText() : Info.RuntimeVersion);
  W.u64(Info.CpuMask);
  W.str(Info.CpuText);
  W.u8(Info.Bf16Compute ? 1 : 0);
  W.u8(Info.KeepIntermediates ? 1 : 0);
  W.str(Info.ModelName);
  W.u64(GraphFile.size());
  W.u32(crc32Of(GraphFile.data() + kCompiledPreambleBytes, GraphFile.size() - kCompiledPreambleBytes));
  W.u64(WeightsFile.size());
  W.u32(crc32Of(WeightsFile.data() + kCompiledPreambleBytes, WeightsFile.size() - kCompiledPreambleBytes));
  W.u32(static_cast<uint32_t>(Info.Marks.size()));
  for (const ManifestEntry &M : Info.Marks) {
    W.str(M.Name);
    W.u8(M.Preserved ? 1 : 0);
    W.u8(M.Resizable ? 1 : 0);
    W.str(M.UpdateFrom);
    W.u8(M.HasBaseShape ? 1 : 0);
    W.u32(static_cast<uint32_t>(M.BaseShape.size()));
    for (int64_t D : M.BaseShape)
      W.i64(D);
  }
  E.metadata(G.Metadata);
  return withPreamble(kHeaderMagic, std::move(W.Bytes));
}

Result<HeaderFields> decodeHeader(const FolderFile &F, bool CheckCrc) {
  ASSIGN_OR_RETURN(ByteReader R, openBody(F, kHeaderMagic, "header", CheckCrc));
  HeaderFields H;
  H.Info.RuntimeVersion = R.str("runtime version");
  H.Info.CpuMask = R.u64("CPU feature mask");
  H.Info.CpuText = R.str("CPU features");
  H.Info.Bf16Compute = R.flag("bf16 compute");
  H.Info.KeepIntermediates = R.flag("keep intermediates");
  H.Info.ModelName = R.str("model name");
  H.GraphFileBytes = R.u64("graph file size");
  H.GraphCrc = R.u32("graph CRC");
  H.WeightsFileBytes = R.u64("weights file size");
  H.WeightsCrc = R.u32("weights CRC");
  const uint32_t NMarks = R.count("mark count", 15);
  for (uint32_t I = 0; I < NMarks && R.ok(); ++I) {
    ManifestEntry M;
    M.Name = R.str("marked tensor name");
    M.Preserved = R.flag("preserved");
    M.Resizable = R.flag("resizable");
    M.UpdateFrom = R.str("update_from");
    M.HasBaseShape = R.flag("has base shape");
    const uint32_t Rank = R.count("base shape rank", 8);
    for (uint32_t D = 0; D < Rank && R.ok(); ++D) {
      M.BaseShape.push_back(R.i64("base shape dimension"));
      if (R.ok() && M.BaseShape.back() < 0)
        R.fail("base shape of '", M.Name, "' has a negative dimension");
    }
    H.Info.Marks.push_back(std::move(M));
  }
  Decoder D{R, nullptr, 0, nullptr, ""};
  D.metadataInto(H.Metadata, 0);
  if (R.ok() && R.remaining())
    R.fail(R.remaining(), " unread bytes after the header");
  if (!R.ok())
    return R.status();
  return H;
}

struct BundleEntry {
  std::string Name;
  uint64_t Offset, Size;
};
constexpr size_t kBundleNameBytes = 16;

Result<std::vector<BundleEntry>> bundleTable(const CompiledSource &Src) {
  ByteReader R(Src.Bundle, Src.BundleSize, Src.Label);
  const uint8_t *Magic = R.bytes(8, "bundle magic");
  if (!Magic || std::memcmp(Magic, kCompiledBundleMagic, 8) != 0)
    return makeError(ErrorCode::Container, "'", Src.Label, "' is not a compiled model bundle (no '", kCompiledBundleMagic,
                     "' magic)");
  const uint32_t Version = R.u32("bundle format version");
  if (R.ok() && (Version > kCompiledFormatVersion || Version == 0))
    return makeError(ErrorCode::Container, "compiled model bundle '", Src.Label, "' was written in format version ",
                     Version, "; this runtime (", runtimeVersionText(), ") reads format versions 1 to ",
                     kCompiledFormatVersion);
  const uint32_t N = R.count("bundle section count", kBundleNameBytes + 16);
  std::vector<BundleEntry> Out;
  for (uint32_t I = 0; I < N && R.ok(); ++I) {
    const uint8_t *Name = R.bytes(kBundleNameBytes, "section name");
    BundleEntry E;
    E.Offset = R.u64("section offset");
    E.Size = R.u64("section size");
    if (!R.ok())
      break;
    E.Name.assign(reinterpret_cast<const char *>(Name), strnlen(reinterpret_cast<const char *>(Name), kBundleNameBytes));
    if (E.Offset > Src.BundleSize || E.Size > Src.BundleSize - E.Offset)
      R.fail("section '", E.Name, "' (", E.Size, " bytes at ", E.Offset, ") lies outside the ", Src.BundleSize,
             "-byte bundle (truncated?)");
    Out.push_back(E);
  }
  if (!R.ok())
    return R.status();
  return Out;
}

} // namespace

Result<FolderFile> readFolderFile(const CompiledSource &Src, const std::string &Name, bool Optional) {
  FolderFile F;
  if (Src.Sealed) {
    F.Path = Src.Folder + "/" + Name;
    if (!Src.Sealed->contains(Name)) {
      if (Optional)
        return F;
      return makeError(ErrorCode::Container, "encrypted compiled model folder '", Src.Folder, "' lacks its file '",
                       Name, "' (", kSealedParamsFile, " does not list it)");
    }
    ASSIGN_OR_RETURN(std::shared_ptr<const PlainBuffer> Plain, Src.Sealed->readFile(Name));
    F.Data = Plain->data();
    F.Size = Plain->size();
    F.Owner = std::move(Plain);
    return F;
  }
  if (!Src.Folder.empty()) {
    F.Path = Src.Folder + "/" + Name;
    struct stat St;
    if (::stat(F.Path.c_str(), &St) != 0) {
      if (Optional && errno == ENOENT)
        return F;
      return makeError(ErrorCode::Container, "compiled model folder '", Src.Folder, "' lacks its file '", Name,
                       "' (", std::strerror(errno), ")");
    }
    // packed.bin is read whole by the first inference (on this CPU every entry is a hit); the
    // other files only in parts (weights.bin's big constants not at all when packed.bin serves them).
    auto M = MappedFile::open(F.Path, /*HugeFolios=*/Name == kCompiledPackedFile);
    if (!M.isOk())
      return makeError(ErrorCode::Container, "compiled model file '", F.Path, "' cannot be read: ", M.status().message());
    F.Mapping = M.value();
    F.Data = F.Mapping->Data;
    F.Size = F.Mapping->Size;
    F.Owner = F.Mapping;
    return F;
  }
  ASSIGN_OR_RETURN(std::vector<BundleEntry> Table, bundleTable(Src));
  F.Path = Src.Label + ":" + Name;
  for (const BundleEntry &E : Table)
    if (E.Name == Name) {
      F.Data = Src.Bundle + E.Offset;
      F.Size = static_cast<size_t>(E.Size);
      F.Owner = Src.BundleOwner;
      return F;
    }
  if (Optional)
    return FolderFile();
  return makeError(ErrorCode::Container, "compiled model bundle '", Src.Label, "' lacks its section '", Name, "'");
}

bool isCompiledFolder(const std::string &Path) {
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0 || !S_ISDIR(St.st_mode))
    return false;
  return ::stat((Path + "/" + kCompiledHeaderFile).c_str(), &St) == 0;
}

bool isCompiledBundle(const uint8_t *Data, size_t Size) {
  return Data && Size >= 8 && std::memcmp(Data, kCompiledBundleMagic, 8) == 0;
}

Result<CompiledFiles> encodeCompiledModel(const Graph &G, const CompileInfo &Info) {
  Encoder E;
  E.Weights.Bytes.resize(kCompiledPreambleBytes); // the preamble goes here once the size is known
  E.graph(G, /*TopLevel=*/true);
  if (!E.Error.isOk())
    return E.Error;
  E.layOutWeights();
  CompiledFiles F;
  F.Graph = withPreamble(kGraphMagic, std::move(E.Out.Bytes));
  std::vector<uint8_t> Body(E.Weights.Bytes.begin() + kCompiledPreambleBytes, E.Weights.Bytes.end());
  ByteWriter Pre;
  Pre.raw(kWeightsMagic, 8);
  Pre.u32(kCompiledFormatVersion);
  Pre.u32(0);
  Pre.u64(Body.size());
  Pre.u32(crc32Of(Body.data(), Body.size()));
  Pre.u32(0);
  F.Weights = std::move(E.Weights.Bytes);
  std::memcpy(F.Weights.data(), Pre.Bytes.data(), kCompiledPreambleBytes);
  F.Header = encodeHeader(Info, G, F.Graph, F.Weights);
  return F;
}

Status writeCompiledFolder(const CompiledFiles &Files, const std::string &Dir) {
  struct stat St;
  if (::stat(Dir.c_str(), &St) == 0) {
    if (!S_ISDIR(St.st_mode))
      return makeError(ErrorCode::IO, "output '", Dir, "' exists and is not a folder");
  } else if (::mkdir(Dir.c_str(), 0755) != 0) {
    return makeError(ErrorCode::IO, "cannot create the folder '", Dir, "': ", std::strerror(errno));
  }
  // The header goes last: a folder whose writing failed part way has no header and is not taken
  // for a compiled model.
  std::remove((Dir + "/" + kCompiledHeaderFile).c_str());
  const std::pair<const char *, const std::vector<uint8_t> *> Order[] = {
      {kCompiledGraphFile, &Files.Graph}, {kCompiledWeightsFile, &Files.Weights}, {kCompiledPackedFile, &Files.Packed},
      {kCompiledHeaderFile, &Files.Header}};
  std::remove((Dir + "/" + kCompiledPackedFile).c_str());
  for (const auto &P : Order) {
    if (P.second->empty())
      continue; // no packed weights recorded
    const std::string Path = Dir + "/" + P.first, Tmp = Path + ".tmp";
    FILE *Out = std::fopen(Tmp.c_str(), "wb");
    if (!Out)
      return makeError(ErrorCode::IO, "cannot write '", Tmp, "': ", std::strerror(errno));
    const bool Ok = std::fwrite(P.second->data(), 1, P.second->size(), Out) == P.second->size();
    const bool Closed = std::fclose(Out) == 0;
    if (!Ok || !Closed || std::rename(Tmp.c_str(), Path.c_str()) != 0) {
      std::remove(Tmp.c_str());
      return makeError(ErrorCode::IO, "cannot write '", Path, "': ", std::strerror(errno));
    }
  }
  return Status::ok();
}

std::vector<uint8_t> bundleCompiledFiles(const CompiledFiles &Files) {
  std::vector<std::pair<const char *, const std::vector<uint8_t> *>> Sections = {
      {kCompiledHeaderFile, &Files.Header}, {kCompiledGraphFile, &Files.Graph}, {kCompiledWeightsFile, &Files.Weights}};
  if (!Files.Packed.empty())
    Sections.push_back({kCompiledPackedFile, &Files.Packed});
  const size_t N = Sections.size();
  ByteWriter W;
  W.raw(kCompiledBundleMagic, 8);
  W.u32(kCompiledFormatVersion);
  W.u32(static_cast<uint32_t>(N));
  uint64_t Offset = 16 + N * (kBundleNameBytes + 16);
  for (const auto &S : Sections) {
    Offset = (Offset + kCompiledPageAlignment - 1) / kCompiledPageAlignment * kCompiledPageAlignment;
    char Name[kBundleNameBytes] = {0};
    std::strncpy(Name, S.first, kBundleNameBytes - 1);
    W.raw(Name, kBundleNameBytes);
    W.u64(Offset);
    W.u64(S.second->size());
    Offset += S.second->size();
  }
  for (const auto &S : Sections) {
    W.padTo(kCompiledPageAlignment);
    W.raw(S.second->data(), S.second->size());
  }
  return std::move(W.Bytes);
}

std::vector<uint8_t> encodePackedWeights(const PackedRecord &Record, uint32_t GraphCrc) {
  // Body: graph CRC (u32), entry count (u32), index CRC (u32), reserved (u32), then per entry key
  // (str), offset (u64, from the file's start), size (u64); then the entries' bytes.
  ByteWriter Index;
  uint64_t Offset = 0; // relative to the data area, fixed up below
  std::vector<uint64_t> Rel;
  for (const auto &KV : Record) {
    const size_t Align = KV.second.size() >= kCompiledPageAlignment ? kCompiledPageAlignment : kCompiledSmallAlignment;
    Offset = (Offset + Align - 1) / Align * Align;
    Rel.push_back(Offset);
    Offset += KV.second.size();
  }
  // The index's size does not depend on the offsets' values: encode once to learn it.
  auto EncodeIndex = [&](uint64_t Base) {
    ByteWriter W;
    size_t I = 0;
    for (const auto &KV : Record) {
      W.str(KV.first);
      W.u64(Base + Rel[I++]);
      W.u64(KV.second.size());
    }
    return std::move(W.Bytes);
  };
  const size_t IndexBytes = EncodeIndex(0).size();
  const uint64_t Base = (kCompiledPreambleBytes + 16 + IndexBytes + kCompiledPageAlignment - 1) / kCompiledPageAlignment *
                        kCompiledPageAlignment;
  const std::vector<uint8_t> IndexData = EncodeIndex(Base);
  ByteWriter W;
  W.u32(GraphCrc);
  W.u32(static_cast<uint32_t>(Record.size()));
  W.u32(crc32Of(IndexData.data(), IndexData.size()));
  W.u32(0);
  W.Bytes.insert(W.Bytes.end(), IndexData.begin(), IndexData.end());
  W.Bytes.resize(Base - kCompiledPreambleBytes, 0);
  size_t I = 0;
  for (const auto &KV : Record) {
    W.Bytes.resize(Base + Rel[I++] - kCompiledPreambleBytes, 0);
    W.Bytes.insert(W.Bytes.end(), KV.second.begin(), KV.second.end());
  }
  return withPreamble(kPackedMagic, std::move(W.Bytes));
}

namespace {
/// packed.bin's index, every entry bounds-checked; the index's CRC always, the entries' with Crc.
Result<std::shared_ptr<PackedWeights>> decodePackedWeights(const FolderFile &F, uint32_t GraphCrc, bool CheckChecksums,
                                                           bool CheckEntries) {
  ASSIGN_OR_RETURN(ByteReader R, openBody(F, kPackedMagic, "packed weights", CheckEntries));
  const uint32_t Graph = R.u32("graph CRC");
  const uint32_t N = R.count("packed entry count", 20);
  const uint32_t IndexCrc = R.u32("index CRC");
  const uint32_t Reserved = R.u32("reserved");
  if (!R.ok())
    return R.status();
  if (Reserved != 0)
    return makeError(ErrorCode::Container, "compiled model file '", F.Path, "' is corrupt: a reserved word is not 0");
  if (CheckChecksums && Graph != GraphCrc)
    return makeError(ErrorCode::Container, "compiled model file '", F.Path, "' does not belong to this folder's graph "
                     "(files of two compilations mixed?)");
  const uint8_t *IndexStart = F.Data + kCompiledPreambleBytes + 16;
  auto P = std::make_shared<PackedWeights>();
  P->Path = F.Path;
  P->Owner = F.Owner;
  for (uint32_t I = 0; I < N && R.ok(); ++I) {
    std::string Key = R.str("packed entry key");
    const uint64_t Off = R.u64("packed entry offset"), Size = R.u64("packed entry size");
    if (!R.ok())
      break;
    if (Off > F.Size || Size > F.Size - Off)
      R.fail("packed entry '", Key, "' (", Size, " bytes at ", Off, ") lies outside the ", F.Size, "-byte file");
    else if (Off % kCompiledSmallAlignment)
      R.fail("packed entry '", Key, "' is not 64-byte aligned (offset ", Off, ")");
    else if (!P->Entries.emplace(Key, PackedWeights::Entry{F.Data + Off, Size}).second)
      R.fail("packed entry '", Key, "' appears twice");
  }
  if (!R.ok())
    return R.status();
  if (CheckChecksums && crc32Of(IndexStart, R.position() - 16) != IndexCrc)
    return makeError(ErrorCode::Container, "compiled model file '", F.Path,
                     "' is corrupt: the CRC-32 of its index does not match");
  return P;
}
} // namespace

Result<CompiledModel> readCompiledModel(const CompiledSource &Src) {
  ASSIGN_OR_RETURN(FolderFile HeaderFile, readFolderFile(Src, kCompiledHeaderFile));
  ASSIGN_OR_RETURN(HeaderFields H, decodeHeader(HeaderFile, !Src.SkipChecksums));
  ASSIGN_OR_RETURN(FolderFile GraphFile, readFolderFile(Src, kCompiledGraphFile));
  ASSIGN_OR_RETURN(ByteReader R, openBody(GraphFile, kGraphMagic, "graph", !Src.SkipChecksums));
  ASSIGN_OR_RETURN(FolderFile WeightsFile, readFolderFile(Src, kCompiledWeightsFile));
  RETURN_IF_ERROR(openBody(WeightsFile, kWeightsMagic, "weights", false).status());
  auto Mismatch = [&](const FolderFile &F, const char *What) {
    return makeError(ErrorCode::Container, "compiled model file '", F.Path, "' does not belong to '", HeaderFile.Path,
                     "': its ", What, " differs from the one the header records (files of two compilations mixed?)");
  };
  if (!Src.SkipChecksums) {
    if (GraphFile.Size != H.GraphFileBytes)
      return Mismatch(GraphFile, "size");
    if (preambleCrc(GraphFile) != H.GraphCrc)
      return Mismatch(GraphFile, "CRC-32");
    if (WeightsFile.Size != H.WeightsFileBytes)
      return Mismatch(WeightsFile, "size");
    if (preambleCrc(WeightsFile) != H.WeightsCrc)
      return Mismatch(WeightsFile, "CRC-32");
  }

  CompiledModel M;
  M.Info = std::move(H.Info);
  // A bundle in a buffer that is not 64-byte aligned: the weights get an aligned copy (kernels
  // read constants with aligned loads).
  const uint8_t *Weights = WeightsFile.Data;
  std::shared_ptr<const void> WeightsOwner = WeightsFile.Owner;
  if (reinterpret_cast<uintptr_t>(Weights) % kCompiledSmallAlignment) {
    size_t Mapped = 0;
    void *P = allocateBlock(WeightsFile.Size, /*Zero=*/false, Mapped);
    if (!P)
      return makeError(ErrorCode::OutOfResource, "cannot allocate ", WeightsFile.Size, " bytes for the weights of '",
                       Src.Label, "'");
    std::memcpy(P, Weights, WeightsFile.Size);
    WeightsOwner = std::shared_ptr<const void>(P, [Mapped](const void *Q) { freeBlock(const_cast<void *>(Q), Mapped); });
    Weights = static_cast<const uint8_t *>(P);
  }
  Decoder D{R, Weights, WeightsFile.Size, WeightsOwner, WeightsFile.Path};
  std::unique_ptr<Graph> G = D.graph(0);
  if (R.ok() && R.remaining())
    R.fail(R.remaining(), " unread bytes after the graph");
  if (!R.ok())
    return R.status();
  G->Metadata = std::move(H.Metadata);
  // The marks name graph inputs of this graph.
  for (const ManifestEntry &E : M.Info.Marks) {
    const int V = G->findValue(E.Name);
    if (V < 0 || !G->Values[V].IsGraphInput)
      return makeError(ErrorCode::Container, "compiled model file '", HeaderFile.Path, "' marks '", E.Name,
                       "', which is not an input of the graph in '", GraphFile.Path, "'");
  }
  // packed.bin (optional): mapped, its index checked; kernels borrow its entries on a hit.
  ASSIGN_OR_RETURN(FolderFile PackedFile, readFolderFile(Src, kCompiledPackedFile, /*Optional=*/true));
  if (PackedFile.Mapping || PackedFile.Data) {
    if (reinterpret_cast<uintptr_t>(PackedFile.Data) % kCompiledSmallAlignment == 0) {
      ASSIGN_OR_RETURN(M.Packed, decodePackedWeights(PackedFile, preambleCrc(GraphFile), !Src.SkipChecksums, false));
    } // else (an unaligned bundle in memory): no packed weights; kernels pack at load
  }
  M.Imported.G = std::move(G);
  M.Imported.Name = M.Info.ModelName;
  M.Imported.KeepAlive.push_back(WeightsOwner);
  if (WeightsFile.Mapping && Weights == WeightsFile.Data)
    M.Imported.Mappings.push_back(WeightsFile.Mapping);
  return M;
}

Status verifyCompiledModel(const CompiledSource &Src) {
  ASSIGN_OR_RETURN(CompiledModel M, readCompiledModel(Src));
  (void)M;
  ASSIGN_OR_RETURN(FolderFile WeightsFile, readFolderFile(Src, kCompiledWeightsFile));
  RETURN_IF_ERROR(openBody(WeightsFile, kWeightsMagic, "weights", true).status());
  ASSIGN_OR_RETURN(FolderFile PackedFile, readFolderFile(Src, kCompiledPackedFile, /*Optional=*/true));
  if (PackedFile.Mapping || PackedFile.Data)
    RETURN_IF_ERROR(openBody(PackedFile, kPackedMagic, "packed weights", true).status());
  return Status::ok();
}

} // namespace detail
} // namespace runtime
} // namespace optimium
