// Converts an ONNX ModelProto (parsed with Debian's protobuf/ONNX schema) into the graph IR.
// Initializer bytes are used in place when possible (mapped file or the caller's buffer).
#include "import/onnx/OnnxImporter.h"
#include "import/onnx/LegacyOpsets.h"
#include "import/onnx/ModelMetadata.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <set>

#include "core/Log.h"
#include "core/LowPrecision.h"
#include "core/OnnxDataType.h"
#include "import/MappedFile.h"
#include "import/onnx/RawDataScanner.h"
#include "ir/Scopes.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

Value namedValue(const std::string &Name) {
  Value V;
  V.Name = Name;
  return V;
}

bool isDirectory(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0 && S_ISDIR(St.st_mode);
}
bool exists(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0;
}
std::string dirName(const std::string &Path) {
  const size_t Slash = Path.find_last_of('/');
  return Slash == std::string::npos ? std::string(".") : Path.substr(0, Slash);
}
std::string stem(const std::string &Path) {
  std::string P = Path;
  while (P.size() > 1 && P.back() == '/')
    P.pop_back();
  const size_t Slash = P.find_last_of('/');
  std::string Base = Slash == std::string::npos ? P : P.substr(Slash + 1);
  const size_t Dot = Base.rfind('.');
  if (Dot != std::string::npos && Dot > 0)
    Base = Base.substr(0, Dot);
  return Base;
}

Result<ElementType> convertDataType(int32_t T, const std::string &What) {
  if (T == onnx::TensorProto_DataType_STRING)
    return ElementType::String;
  const ElementType Numeric = numericTypeOfOnnxCode(T);
  if (Numeric != ElementType::Undefined)
    return Numeric;
  const ElementType Low = lowp::fromOnnxDataType(T);
  if (Low != ElementType::Undefined)
    return Low;
  return makeError(ErrorCode::Type, What, ": unsupported ONNX element type ", T);
}

class Importer {
public:
  Importer(std::string BaseDir, ImportedModel &Out, ExternalDataReader Reader = nullptr)
      : BaseDir(std::move(BaseDir)), Out(Out), Reader(std::move(Reader)) {}

  Status run(onnx::ModelProto &M, const std::vector<RawSpan> &Spans, std::shared_ptr<const void> BufferOwner,
             const MappedFile *Mapping) {
    Map = Mapping;
    if (!M.has_graph())
      return makeError(ErrorCode::Model, "the ONNX model has no graph");
    RETURN_IF_ERROR(readOpsets(M));
    Out.G = std::make_unique<Graph>();
    Graph &G = *Out.G;
    G.OpsetImports = Opsets;
    G.Name = M.graph().name();
    std::vector<std::pair<std::string, std::string>> Props;
    for (const auto &P : M.metadata_props())
      Props.emplace_back(P.key(), P.value());
    ASSIGN_OR_RETURN(G.Metadata, readModelMetadata(Props));
    Spans_ = &Spans;
    Owner = std::move(BufferOwner);
    return importGraph(*M.mutable_graph(), G);
  }

private:
  Status readOpsets(const onnx::ModelProto &M) {
    for (const auto &O : M.opset_import()) {
      std::string D = O.domain() == "ai.onnx" ? std::string() : O.domain();
      Opsets[D] = static_cast<int>(O.version());
    }
    if (M.opset_import_size() == 0)
      Opsets[""] = 1; // IR v2 models without opset_import meant opset 1
    auto It = Opsets.find("");
    if (It != Opsets.end()) {
      if (It->second > kMaxSupportedOpset)
        return makeError(ErrorCode::Model, "model uses ONNX opset ", It->second,
                         ", newer than the newest this runtime supports (", kMaxSupportedOpset, ")");
      if (It->second < kMinSupportedOpset)
        return makeError(ErrorCode::Model, "model uses ONNX opset ", It->second,
                         ", older than the oldest this runtime supports (", kMinSupportedOpset, ")");
    }
    return Status::ok();
  }

  /// Whether a dim_param names a dimension shared by the dims that carry it. Placeholders such as
  /// PaddlePaddle's "?" (written for both H and W of an image) or "-1" / "None" only say "unknown":
  /// each occurrence becomes its own symbol, as ONNX Runtime (which binds no symbols) runs them.
  static bool namesADimension(const std::string &Param) {
    if (Param.empty() || Param == "None" || Param == "none" || Param == "null")
      return false;
    for (char C : Param)
      if (std::isalpha(static_cast<unsigned char>(C)) || C == '_')
        return true;
    return false; // "?", "-1", "*", digits only
  }

  Result<TensorShape> convertShape(const onnx::TypeProto_Tensor &T, const std::string &Name, bool &Known) {
    Known = T.has_shape();
    std::vector<Expr> Dims;
    if (!T.has_shape())
      return TensorShape();
    for (const auto &D : T.shape().dim()) {
      // A negative dim_value (tf2onnx writes -1) means "unknown", as ONNX Runtime reads it.
      if (D.has_dim_value() && D.dim_value() >= 0) {
        Dims.emplace_back(static_cast<int64_t>(D.dim_value()));
      } else if (D.has_dim_param() && namesADimension(D.dim_param())) {
        Dims.emplace_back(Expr(D.dim_param()));
      } else {
        Dims.emplace_back(Expr("unk__" + Name + "_" + std::to_string(Dims.size())));
      }
    }
    return TensorShape(std::move(Dims));
  }

  /// A TypeProto as kind + element type + element shape. Tensors, sequence(tensor) and
  /// optional(tensor | sequence(tensor)); maps, sparse tensors and deeper nesting are ModelErrors.
  Result<TypeDesc> convertType(const onnx::TypeProto &T, const std::string &Name) {
    TypeDesc D;
    const onnx::TypeProto *Inner = &T;
    if (T.has_optional_type()) {
      Inner = &T.optional_type().elem_type();
      D.Kind = Inner->has_sequence_type() ? ValueKind::OptionalSequence : ValueKind::OptionalTensor;
    }
    if (Inner->has_sequence_type()) {
      if (D.Kind == ValueKind::Tensor)
        D.Kind = ValueKind::Sequence;
      Inner = &Inner->sequence_type().elem_type();
    }
    if (!Inner->has_tensor_type()) {
      const char *What = Inner->has_map_type() ? "map" : Inner->has_sparse_tensor_type() ? "sparse tensor"
                         : Inner->has_sequence_type() || Inner->has_optional_type() ? "nested sequence/optional"
                                                                                        : "untyped";
      return makeError(ErrorCode::Model, "value '", Name, "' has a ", What,
                       " type; tensors, sequence(tensor) and optional(tensor | sequence(tensor)) are supported");
    }
    const auto &TT = Inner->tensor_type();
    if (TT.elem_type() != 0) {
      ASSIGN_OR_RETURN(D.Elem, convertDataType(TT.elem_type(), "value '" + Name + "'"));
    }
    bool Known = false;
    ASSIGN_OR_RETURN(TensorShape S, convertShape(TT, Name, Known));
    if (D.Kind == ValueKind::Sequence || D.Kind == ValueKind::OptionalSequence) {
      // Elements of one sequence may differ in shape, and exporters declare element shapes
      // loosely (a loop's empty start sequence as scalars): keep the rank, not the dims; no rank
      // (or rank 0) is unknown (one symbol, the IR's convention for "any shape").
      std::vector<Expr> Dims;
      for (size_t I = 0; I < std::max<size_t>(S.getRank(), 1); ++I)
        Dims.emplace_back(Expr("unk__" + Name + "_elem" + std::to_string(I)));
      S = TensorShape(std::move(Dims));
      Known = true;
    } else if (!Known && D.Kind == ValueKind::OptionalTensor) {
      S = TensorShape({Expr("unk__" + Name + "_elem0")});
      Known = true;
    }
    if (Known) {
      D.Shape = std::move(S);
      D.ShapeKnown = true;
    }
    return D;
  }

  Status applyValueInfo(const onnx::ValueInfoProto &VI, Value &V) {
    // No type, or a TypeProto with none of its kinds set: nothing declared, inference decides.
    if (!VI.has_type() || VI.type().value_case() == onnx::TypeProto::VALUE_NOT_SET)
      return Status::ok();
    ASSIGN_OR_RETURN(TypeDesc D, convertType(VI.type(), VI.name()));
    V.Kind = D.Kind;
    if (D.Elem != ElementType::Undefined)
      V.Type = D.Elem;
    if (D.ShapeKnown) {
      V.Shape = std::move(D.Shape);
      V.ShapeKnown = true;
    }
    return Status::ok();
  }

  Result<std::shared_ptr<ConstData>> convertTensor(onnx::TensorProto &T, const RawSpan *Span) {
    const std::string What = "initializer '" + T.name() + "'";
    auto C = std::make_shared<ConstData>();
    ASSIGN_OR_RETURN(C->Type, convertDataType(T.data_type(), What));
    for (int64_t D : T.dims()) {
      if (D < 0)
        return makeError(ErrorCode::Model, What, " has a negative dimension ", D);
      C->Dims.push_back(D);
    }
    const size_t Count = C->elementCount();
    const size_t ElemSize = getElementSize(C->Type);

    if (C->Type == ElementType::String) {
      if (static_cast<size_t>(T.string_data_size()) != Count)
        return makeError(ErrorCode::Model, What, " has ", T.string_data_size(), " strings, expected ", Count);
      C->Strings.assign(T.string_data().begin(), T.string_data().end());
      C->Data = C->Strings.data();
      C->Bytes = Count * sizeof(std::string);
      return C;
    }
    const size_t Bytes = Count * ElemSize;

    if (lowp::packedBits(C->Type) != 0)
      return convertLowPrecision(T, Span, C, What);
    if (T.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
      return readExternal(T, C, Bytes, What);

    if (!T.raw_data().empty() || (Span && Span->Size)) {
      const size_t RawSize = T.raw_data().empty() ? Span->Size : T.raw_data().size();
      if (RawSize != Bytes)
        return makeError(ErrorCode::Model, What, ": raw_data holds ", RawSize, " bytes, expected ", Bytes,
                         " for ", Count, " elements of ", toString(C->Type));
      // Zero copy: point into the model bytes when they are the same and suitably aligned.
      if (Span && Span->Size == Bytes && Owner && reinterpret_cast<uintptr_t>(Span->Data) % ElemSize == 0 &&
          (T.raw_data().empty() || std::memcmp(Span->Data, T.raw_data().data(), Bytes) == 0)) {
        C->Data = Span->Data;
        C->Bytes = Bytes;
        C->KeepAlive = Owner;
        std::string().swap(*T.mutable_raw_data());
        return C;
      }
      if (T.raw_data().empty() && Owner && InPlace.count(T.name())) {
        // Read in place by its only readers (Gather rows, MatMul packing; see inPlaceReadable):
        // no aligned copy at all, the file's bytes are the Source and leave the resident set
        // (Conv weights, copied when their kernel is created, leave it after that).
        C->Source = Span->Data;
        C->Bytes = Bytes;
        C->KeepAlive = Owner;
        if (Map && !Deferred.count(T.name()))
          Map->releaseResidentPages(Span->Data, Bytes);
        return C;
      }
      auto Owned = ConstData::allocate(C->Type, C->Dims);
      if (Bytes != 0)
        std::memcpy(Owned->mutableData(), T.raw_data().empty() ? Span->Data : reinterpret_cast<const uint8_t *>(T.raw_data().data()), Bytes);
      if (T.raw_data().empty() && Owner) {
        // The copy is the working one: the file's bytes stay as its Source (the loader may drop
        // the copy once kernels have packed it) and leave the resident set now.
        Owned->Source = Span->Data;
        if (Map)
          Map->releaseResidentPages(Span->Data, Bytes);
      }
      std::string().swap(*T.mutable_raw_data());
      return Owned;
    }

    auto Owned = ConstData::allocate(C->Type, C->Dims);
    auto CheckCount = [&](int N) -> Status {
      if (static_cast<size_t>(N) != Count)
        return makeError(ErrorCode::Model, What, " holds ", N, " values, expected ", Count);
      return Status::ok();
    };
    void *Dst = Owned->mutableData();
    switch (C->Type) {
    case ElementType::F32:
      RETURN_IF_ERROR(CheckCount(T.float_data_size()));
      if (Bytes != 0) // an empty field's data() may be null
        std::memcpy(Dst, T.float_data().data(), Bytes);
      break;
    case ElementType::F64:
      RETURN_IF_ERROR(CheckCount(T.double_data_size()));
      if (Bytes != 0) // an empty field's data() may be null
        std::memcpy(Dst, T.double_data().data(), Bytes);
      break;
    case ElementType::I64:
      RETURN_IF_ERROR(CheckCount(T.int64_data_size()));
      if (Bytes != 0) // an empty field's data() may be null
        std::memcpy(Dst, T.int64_data().data(), Bytes);
      break;
    case ElementType::U32:
    case ElementType::U64:
      RETURN_IF_ERROR(CheckCount(T.uint64_data_size()));
      for (size_t I = 0; I < Count; ++I) {
        if (C->Type == ElementType::U32)
          static_cast<uint32_t *>(Dst)[I] = static_cast<uint32_t>(T.uint64_data(static_cast<int>(I)));
        else
          static_cast<uint64_t *>(Dst)[I] = T.uint64_data(static_cast<int>(I));
      }
      break;
    default: // int32_data carries i32, i16, i8, u16, u8, bool, f16 and bf16 (bits)
      RETURN_IF_ERROR(CheckCount(T.int32_data_size()));
      for (size_t I = 0; I < Count; ++I) {
        const int32_t V = T.int32_data(static_cast<int>(I));
        switch (ElemSize) {
        case 1: static_cast<uint8_t *>(Dst)[I] = static_cast<uint8_t>(V); break;
        case 2: static_cast<uint16_t *>(Dst)[I] = static_cast<uint16_t>(V); break;
        default: static_cast<int32_t *>(Dst)[I] = V; break;
        }
      }
      break;
    }
    return Owned;
  }

  /// Low-precision initializers: ONNX packs int4/uint4/float4 two per byte and int2/uint2 four per
  /// byte (lowest bits first), in raw_data, external data or int32_data (one packed byte per value;
  /// one element per value for the 8-bit types); the runtime stores one element per byte.
  Result<std::shared_ptr<ConstData>> convertLowPrecision(onnx::TensorProto &T, const RawSpan *Span,
                                                         const std::shared_ptr<ConstData> &C, const std::string &What) {
    const size_t Count = C->elementCount();
    const size_t Packed = lowp::packedByteCount(C->Type, Count);
    std::vector<uint8_t> Bytes;
    if (T.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
      ASSIGN_OR_RETURN(auto Raw, readExternal(T, std::make_shared<ConstData>(*C), Packed, What));
      const uint8_t *P = static_cast<const uint8_t *>(Raw->Data);
      Bytes.assign(P, P + Packed);
    } else if (!T.raw_data().empty() || (Span && Span->Size) || Count == 0) {
      const uint8_t *Raw = T.raw_data().empty() && Span ? Span->Data
                                                         : reinterpret_cast<const uint8_t *>(T.raw_data().data());
      const size_t RawSize = T.raw_data().empty() && Span ? Span->Size : T.raw_data().size();
      if (RawSize != Packed)
        return makeError(ErrorCode::Model, What, ": raw_data holds ", RawSize, " bytes, expected ", Packed, " for ",
                         Count, " elements of ", toString(C->Type), " (packed)");
      Bytes.assign(Raw, Raw + RawSize);
    } else {
      if (static_cast<size_t>(T.int32_data_size()) != Packed)
        return makeError(ErrorCode::Model, What, " holds ", T.int32_data_size(), " int32_data values, expected ", Packed,
                         " for ", Count, " elements of ", toString(C->Type));
      for (int32_t V : T.int32_data())
        Bytes.push_back(static_cast<uint8_t>(V));
    }
    auto Owned = ConstData::allocate(C->Type, C->Dims);
    if (Count)
      lowp::unpackSubByte(C->Type, Bytes.data(), Count, static_cast<uint8_t *>(Owned->mutableData()));
    std::string().swap(*T.mutable_raw_data());
    return Owned;
  }

  Result<std::shared_ptr<ConstData>> readExternal(const onnx::TensorProto &T, std::shared_ptr<ConstData> C,
                                                  size_t Bytes, const std::string &What) {
    std::string Location;
    uint64_t Offset = 0;
    int64_t Length = -1;
    for (const auto &E : T.external_data()) {
      if (E.key() == "location")
        Location = E.value();
      else if (E.key() == "offset")
        Offset = std::strtoull(E.value().c_str(), nullptr, 10);
      else if (E.key() == "length")
        Length = std::strtoll(E.value().c_str(), nullptr, 10);
    }
    if (Location.empty())
      return makeError(ErrorCode::Model, What, ": external data without a location");
    if (BaseDir.empty())
      return makeError(ErrorCode::Model, What, ": external data file '", Location,
                       "' cannot be resolved for a model loaded from memory; load it from its path");
    if (Location[0] == '/' || Location.find("..") != std::string::npos)
      return makeError(ErrorCode::Model, What, ": external data location '", Location,
                       "' must be a relative path inside the model folder");
    const std::string Path = BaseDir + "/" + Location;
    auto It = ExternalFiles.find(Path);
    if (It == ExternalFiles.end()) {
      ModelFileBytes File;
      if (Reader) {
        ASSIGN_OR_RETURN(File, Reader(Location));
      } else {
        if (!exists(Path))
          return makeError(ErrorCode::IO, What, ": external data file '", Path, "' does not exist");
        ASSIGN_OR_RETURN(auto F, MappedFile::open(Path));
        File = ModelFileBytes{F->Data, F->Size, F};
        Out.Mappings.push_back(F);
      }
      It = ExternalFiles.emplace(Path, File).first;
      Out.KeepAlive.push_back(File.Owner);
    }
    const ModelFileBytes &F = It->second;
    if (Length >= 0 && static_cast<uint64_t>(Length) != Bytes)
      return makeError(ErrorCode::Model, What, ": external data length ", Length, " differs from the ", Bytes,
                       " bytes its shape needs");
    if (Offset > F.Size || Bytes > F.Size - Offset)
      return makeError(ErrorCode::Model, What, ": external data [", Offset, ", ", Offset + Bytes, ") lies beyond the end of '",
                       Path, "' (", F.Size, " bytes)");
    const uint8_t *P = F.Data + Offset;
    if (reinterpret_cast<uintptr_t>(P) % std::max<size_t>(1, getElementSize(C->Type)) == 0) {
      C->Data = P;
      C->Bytes = Bytes;
      C->KeepAlive = F.Owner;
      return C;
    }
    auto Owned = ConstData::allocate(C->Type, C->Dims);
    std::memcpy(Owned->mutableData(), P, Bytes);
    return Owned;
  }

  Status convertAttribute(onnx::AttributeProto &A, AttrValue &V, const std::string &NodeDesc) {
    switch (A.type()) {
    case onnx::AttributeProto_AttributeType_FLOAT: V.K = AttrValue::Kind::Float; V.F = A.f(); break;
    case onnx::AttributeProto_AttributeType_INT: V.K = AttrValue::Kind::Int; V.I = A.i(); break;
    case onnx::AttributeProto_AttributeType_STRING: V.K = AttrValue::Kind::String; V.S = A.s(); break;
    case onnx::AttributeProto_AttributeType_FLOATS:
      V.K = AttrValue::Kind::Floats;
      V.Floats.assign(A.floats().begin(), A.floats().end());
      break;
    case onnx::AttributeProto_AttributeType_INTS:
      V.K = AttrValue::Kind::Ints;
      V.Ints.assign(A.ints().begin(), A.ints().end());
      break;
    case onnx::AttributeProto_AttributeType_STRINGS:
      V.K = AttrValue::Kind::Strings;
      V.Strings.assign(A.strings().begin(), A.strings().end());
      break;
    case onnx::AttributeProto_AttributeType_TENSOR: {
      V.K = AttrValue::Kind::Tensor;
      ASSIGN_OR_RETURN(V.T, convertTensor(*A.mutable_t(), nullptr));
      break;
    }
    case onnx::AttributeProto_AttributeType_GRAPH: {
      V.K = AttrValue::Kind::Graph;
      V.G = std::make_shared<Graph>();
      V.G->OpsetImports = Opsets;
      RETURN_IF_ERROR(importGraph(*A.mutable_g(), *V.G));
      break;
    }
    case onnx::AttributeProto_AttributeType_TYPE_PROTO: {
      V.K = AttrValue::Kind::Type;
      ASSIGN_OR_RETURN(V.Ty, convertType(A.tp(), NodeDesc + " attribute '" + A.name() + "'"));
      break;
    }
    default:
      return makeError(ErrorCode::Model, NodeDesc, ": attribute '", A.name(), "' has unsupported type ",
                       static_cast<int>(A.type()));
    }
    return Status::ok();
  }

  /// Big float32 initializers whose every reader takes them from unaligned bytes itself: data of a
  /// Gather (rows are copied with memcpy) or B of a MatMul whose A is not a constant (packed at
  /// load straight from the file). Those skip the aligned working copy, so the weights are held once
  /// (packed) or not at all (an embedding table: only the rows a run reads come in from the file).
  /// Weights of a Conv with a non-constant input also skip it at import: the loader makes the
  /// aligned copy right before the Conv's kernel packs it, in memory reused from weight to weight;
  /// their names also go to Deferred (their file pages stay resident until then).
  /// Graphs with subgraphs (which read outer values by name) keep the copies.
  static std::set<std::string> inPlaceReadable(const onnx::GraphProto &GP, std::set<std::string> &Deferred) {
    std::set<std::string> Init, Consts, Bad, Used;
    Deferred.clear();
    for (const auto &T : GP.initializer())
      if (T.data_type() == onnx::TensorProto_DataType_FLOAT && T.data_location() != onnx::TensorProto_DataLocation_EXTERNAL) {
        int64_t N = 1;
        for (int64_t D : T.dims())
          N *= D;
        if (N >= (int64_t{1} << 14)) // 64 KiB and up: smaller ones are cheap to copy
          Init.insert(T.name());
      }
    for (const auto &T : GP.initializer())
      Consts.insert(T.name());
    for (const auto &N : GP.node())
      for (const auto &A : N.attribute())
        if (A.has_g() || A.graphs_size() > 0)
          return {};
    for (const auto &N : GP.node()) {
      if (N.op_type() == "Constant")
        for (const auto &O : N.output())
          Consts.insert(O);
      for (int I = 0; I < N.input_size(); ++I) {
        const std::string &In = N.input(I);
        if (!Init.count(In))
          continue;
        Used.insert(In);
        const bool Domain = N.domain().empty() || N.domain() == "ai.onnx";
        const bool InPlaceReader = Domain && readsFileBytesInPlace(N.op_type(), static_cast<size_t>(I));
        const bool GatherData = InPlaceReader && N.op_type() == "Gather";
        const bool MatMulB = InPlaceReader && N.op_type() == "MatMul" && N.input_size() == 2 &&
                             !Consts.count(N.input(0)) && N.input(0) != In;
        // A Conv's weights (with a non-constant input): the loader copies them aligned right
        // before the kernel packs them, into memory it reuses for the next weight (ModelLoader).
        const bool ConvW = Domain && N.op_type() == "Conv" && I == 1 && N.input_size() >= 2 &&
                           !Consts.count(N.input(0)) && N.input(0) != In;
        if (!GatherData && !MatMulB && !ConvW)
          Bad.insert(In);
        if (ConvW)
          Deferred.insert(In);
      }
    }
    for (const auto &O : GP.output())
      Bad.insert(O.name());
    std::set<std::string> Out;
    for (const std::string &Name : Used)
      if (!Bad.count(Name))
        Out.insert(Name);
    return Out;
  }

  Status importGraph(onnx::GraphProto &GP, Graph &G) {
    const bool IsMain = &G == Out.G.get();
    // A classifier's ZipMap (ai.onnx.ml) makes a sequence of maps, which the runtime has no type
    // for: say so first, naming the node (CatBoost leaves it unnamed: then its output) and how to
    // export without it for each converter (its output's map type would otherwise be the first
    // error, which names neither).
    for (const onnx::NodeProto &NP : GP.node())
      if (NP.op_type() == "ZipMap" && NP.domain() == "ai.onnx.ml") {
        const std::string In = NP.input_size() ? NP.input(0) : "", Out = NP.output_size() ? NP.output(0) : "";
        const std::string Which =
            NP.name().empty() ? "the ZipMap node writing '" + Out + "'" : "node '" + NP.name() + "'";
        return makeError(ErrorCode::Model, Which, " (ZipMap): ZipMap outputs a sequence of maps, which the runtime ",
                         "does not support; export the classifier without it (skl2onnx: to_onnx(model, X, ",
                         "options={'zipmap': False}); onnxmltools: convert_lightgbm(model, ..., zipmap=False); ",
                         "converters without that option, such as CatBoost's save_model(format='onnx'): delete the ",
                         "ZipMap node and rename its input '", In, "' to '", Out, "', the graph output it wrote); ",
                         "the probabilities are then a [N, classes] float tensor, columns in the order of the ",
                         "model's classes");
      }
    if (IsMain) {
      InPlace = inPlaceReadable(GP, Deferred);
    } else {
      InPlace.clear();
      Deferred.clear();
    }
    // Initializers first: they are constants (older IR versions also list them as inputs).
    for (int I = 0; I < GP.initializer_size(); ++I) {
      onnx::TensorProto &T = *GP.mutable_initializer(I);
      if (T.name().empty())
        return makeError(ErrorCode::Model, "initializer #", I, " has no name");
      if (G.findValue(T.name()) >= 0)
        return makeError(ErrorCode::Model, "initializer '", T.name(), "' is defined twice");
      const RawSpan *Span = IsMain && static_cast<size_t>(I) < Spans_->size() ? &(*Spans_)[I] : nullptr;
      Value V;
      V.Name = T.name();
      ASSIGN_OR_RETURN(V.Const, convertTensor(T, Span));
      V.Type = V.Const->Type;
      V.Shape = TensorShape::fromDims(V.Const->Dims);
      V.ShapeKnown = true;
      G.addValue(std::move(V));
    }
    for (const auto &VI : GP.input()) {
      const int Existing = G.findValue(VI.name());
      if (Existing >= 0 && G.Values[Existing].Const)
        continue; // an initializer listed as input: a constant with a default (IR < 4)
      if (Existing >= 0)
        return makeError(ErrorCode::Model, "graph input '", VI.name(), "' is declared twice");
      Value V;
      V.Name = VI.name();
      V.IsGraphInput = true;
      RETURN_IF_ERROR(applyValueInfo(VI, V));
      // A subgraph's inputs (a Loop/Scan body's) may leave type and shape to the node that runs it.
      if (V.Type == ElementType::Undefined && IsMain)
        return makeError(ErrorCode::Model, "graph input '", VI.name(), "' has no element type");
      if (!V.ShapeKnown && IsMain)
        return makeError(ErrorCode::Model, "graph input '", VI.name(), "' has no shape");
      G.Inputs.push_back(G.addValue(std::move(V)));
    }
    // Nodes.
    std::map<std::string, int> OpCounts;
    for (int NI = 0; NI < GP.node_size(); ++NI) {
      onnx::NodeProto &NP = *GP.mutable_node(NI);
      Node N;
      N.OpType = NP.op_type();
      N.Domain = NP.domain() == "ai.onnx" ? std::string() : NP.domain();
      N.Name = NP.name().empty() ? N.OpType + "_" + std::to_string(OpCounts[N.OpType]++) : NP.name();
      auto OpsetIt = Opsets.find(N.Domain);
      if (OpsetIt == Opsets.end())
        return makeError(ErrorCode::Model, N.describe(), ": domain '", N.Domain, "' is not imported by the model");
      N.OpsetVersion = OpsetIt->second;
      for (auto &A : *NP.mutable_attribute()) {
        AttrValue V;
        RETURN_IF_ERROR(convertAttribute(A, V, N.describe()));
        N.Attrs[A.name()] = std::move(V);
      }
      for (const std::string &In : NP.input())
        N.Inputs.push_back(In.empty() ? -1 : valueFor(G, In));
      // Control flow: what the subgraphs read from enclosing scopes becomes trailing inputs, so
      // ordering, lifetimes, the memory planner and the schedulers see those reads.
      for (const std::string &Name : capturedNames(N))
        N.Inputs.push_back(valueFor(G, Name));
      for (const std::string &OutName : NP.output()) {
        if (OutName.empty()) {
          N.Outputs.push_back(-1);
          continue;
        }
        const int Existing = G.findValue(OutName);
        if (Existing >= 0 && (G.Values[Existing].Producer >= 0 || G.Values[Existing].Const ||
                              G.Values[Existing].IsGraphInput))
          return makeError(ErrorCode::Model, N.describe(), ": output '", OutName,
                           "' is already produced elsewhere (ONNX requires single assignment)");
        const int Idx = Existing >= 0 ? Existing : G.addValue(namedValue(OutName));
        G.Values[Idx].Producer = static_cast<int>(G.Nodes.size());
        N.Outputs.push_back(Idx);
      }
      RETURN_IF_ERROR(upgradeLegacyNode(N));
      G.Nodes.push_back(std::move(N));
    }
    for (const auto &VI : GP.value_info()) {
      const int Idx = G.findValue(VI.name());
      if (Idx >= 0 && !G.Values[Idx].Const && !G.Values[Idx].IsGraphInput) {
        // value_info only annotates: a declaration this runtime cannot read is dropped, not fatal.
        Status S = applyValueInfo(VI, G.Values[Idx]);
        if (!S.isOk())
          OPT_LOG(Warning, "ignoring the value_info of '", VI.name(), "': ", S.message());
      }
    }
    for (const auto &VI : GP.output()) {
      // A subgraph may output an outer-scope value as is.
      const int Idx = IsMain ? G.findValue(VI.name()) : valueFor(G, VI.name());
      if (Idx < 0)
        return makeError(ErrorCode::Model, "graph output '", VI.name(), "' is not produced by any node");
      if (!G.Values[Idx].Const && !G.Values[Idx].IsGraphInput)
        RETURN_IF_ERROR(applyValueInfo(VI, G.Values[Idx]));
      G.Values[Idx].IsGraphOutput = true;
      G.Outputs.push_back(Idx);
    }
    RETURN_IF_ERROR(checkDefinitions(G, IsMain));
    RETURN_IF_ERROR(sortTopologically(G));
    G.rebuildUseLists();
    return Status::ok();
  }

  /// Values referenced but never defined: outer-scope names are fine in subgraphs only.
  int valueFor(Graph &G, const std::string &Name) {
    const int Idx = G.findValue(Name);
    return Idx >= 0 ? Idx : G.addValue(namedValue(Name));
  }

  Status checkDefinitions(const Graph &G, bool IsMain) {
    if (!IsMain)
      return Status::ok();
    for (const Node &N : G.Nodes)
      for (int In : N.Inputs)
        if (In >= 0) {
          const Value &V = G.Values[In];
          if (!V.Const && !V.IsGraphInput && V.Producer < 0)
            return makeError(ErrorCode::Model, N.describe(), ": input '", V.Name,
                             "' is not a graph input, an initializer or the output of any node");
        }
    return Status::ok();
  }

  /// ONNX requires topological order but exporters occasionally break it: sort (stable) and
  /// reject cycles.
  Status sortTopologically(Graph &G) {
    const size_t N = G.Nodes.size();
    std::vector<int> Pending(N, 0);
    std::vector<std::vector<int>> Users(N);
    for (size_t I = 0; I < N; ++I) {
      std::set<int> Producers;
      for (int In : G.Nodes[I].Inputs)
        if (In >= 0 && G.Values[In].Producer >= 0)
          Producers.insert(G.Values[In].Producer);
      for (int P : Producers) {
        Users[P].push_back(static_cast<int>(I));
        ++Pending[I];
      }
    }
    std::vector<int> Order;
    std::set<int> Ready;
    for (size_t I = 0; I < N; ++I)
      if (Pending[I] == 0)
        Ready.insert(static_cast<int>(I));
    while (!Ready.empty()) {
      const int I = *Ready.begin();
      Ready.erase(Ready.begin());
      Order.push_back(I);
      for (int U : Users[I])
        if (--Pending[U] == 0)
          Ready.insert(U);
    }
    if (Order.size() != N) {
      for (size_t I = 0; I < N; ++I)
        if (Pending[I] > 0)
          return makeError(ErrorCode::Model, "the graph has a cycle through ", G.Nodes[I].describe());
    }
    bool Sorted = true;
    for (size_t I = 0; I < N; ++I)
      Sorted &= Order[I] == static_cast<int>(I);
    if (Sorted)
      return Status::ok();
    std::vector<Node> Nodes;
    Nodes.reserve(N);
    for (int I : Order)
      Nodes.push_back(std::move(G.Nodes[I]));
    G.Nodes = std::move(Nodes);
    for (size_t I = 0; I < N; ++I)
      for (int O : G.Nodes[I].Outputs)
        if (O >= 0)
          G.Values[O].Producer = static_cast<int>(I);
    return Status::ok();
  }

  std::string BaseDir;
  ImportedModel &Out;
  std::map<std::string, int> Opsets;
  const std::vector<RawSpan> *Spans_ = nullptr;
  std::shared_ptr<const void> Owner;
  std::set<std::string> InPlace; ///< initializers of the graph being imported read in place (inPlaceReadable)
  std::set<std::string> Deferred; ///< those the loader copies when creating their kernels (Conv weights)
  const MappedFile *Map = nullptr; ///< the mapped model file Owner is, if it is one
  ExternalDataReader Reader; ///< supplies external data files instead of mapping them (encrypted folders)
  std::map<std::string, ModelFileBytes> ExternalFiles;
};

Result<ImportedModel> importBytes(const uint8_t *Data, size_t Size, const std::string &BaseDir,
                                  const std::string &SourceName, std::shared_ptr<const void> Owner,
                                  const MappedFile *Map = nullptr, ExternalDataReader Reader = nullptr) {
  if (!Data || Size == 0)
    return makeError(ErrorCode::Container, SourceName, ": empty model data");
  if (Size > static_cast<size_t>(INT_MAX))
    return makeError(ErrorCode::Container, SourceName, ": ", Size, " bytes exceed the 2 GiB protobuf limit; store the weights as external data");
  onnx::ModelProto M;
  std::vector<RawSpan> Spans;
  // Initializer bytes stay in Data (parsed around, used in place or copied once from there);
  // only a layout the walker does not handle takes protobuf's full parse (with its string copies).
  if (!parseModelWithoutRawData(Data, Size, M, Spans)) {
    M.Clear();
    google::protobuf::io::ArrayInputStream Stream(Data, static_cast<int>(Size));
    google::protobuf::io::CodedInputStream Coded(&Stream);
    Coded.SetTotalBytesLimit(INT_MAX);
    Coded.SetRecursionLimit(256);
    if (!M.ParseFromCodedStream(&Coded) || !Coded.ConsumedEntireMessage())
      return makeError(ErrorCode::Container, SourceName, ": not a valid ONNX model (protobuf parsing failed; the file is truncated or corrupt)");
    if (!scanInitializerRawData(Data, Size, Spans) || !Owner)
      Spans.clear(); // raw_data is in M: copy from there
  }
  if (!M.has_graph() || M.ir_version() <= 0)
    return makeError(ErrorCode::Container, SourceName, ": not an ONNX model (no ir_version or graph)");
  ImportedModel Out;
  Importer Imp(BaseDir, Out, std::move(Reader));
  Status S = Imp.run(M, Spans, Owner, Map);
  if (!S.isOk())
    return S.withContext(SourceName);
  if (Owner)
    Out.KeepAlive.push_back(Owner);
  return Out;
}

} // namespace

Result<ImportedModel> importOnnxPath(const std::string &Path) {
  if (Path.empty())
    return makeError(ErrorCode::InvalidArgument, "model path is empty");
  if (!exists(Path))
    return makeError(ErrorCode::IO, "model path '", Path, "' does not exist");
  std::string File = Path;
  std::string Name = stem(Path);
  if (isDirectory(Path)) {
    File = Path + "/model.onnx";
    if (!exists(File))
      return makeError(ErrorCode::Container, "model folder '", Path, "' holds no model.onnx");
  }
  ASSIGN_OR_RETURN(auto Mapped, MappedFile::open(File));
  const uint8_t *Data = Mapped->Data;
  const size_t Size = Mapped->Size;
  std::shared_ptr<const void> Owner = Mapped;
  ASSIGN_OR_RETURN(ImportedModel M, importBytes(Data, Size, dirName(File), "'" + File + "'", Owner, Mapped.get()));
  M.Name = Name;
  M.Mappings.push_back(Mapped);
  return M;
}

Result<ImportedModel> importOnnxBuffer(const uint8_t *Data, size_t Size, const std::string &BaseDir,
                                       const std::string &SourceName, std::shared_ptr<const void> Owner,
                                       ExternalDataReader Reader) {
  // Without an owner the caller keeps the buffer alive: a non-owning shared_ptr lets constants
  // point into it.
  if (!Owner && Data)
    Owner = std::shared_ptr<const void>(Data, [](const void *) {});
  ASSIGN_OR_RETURN(ImportedModel M,
                   importBytes(Data, Size, BaseDir, SourceName, Data ? Owner : nullptr, nullptr, std::move(Reader)));
  M.Name = M.G->Name.empty() ? "model" : M.G->Name;
  return M;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
