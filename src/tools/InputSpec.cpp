// Parsing --input specs into host arrays; see InputSpec.h for the syntax.
#include "tools/InputSpec.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "tools/ElementText.h"
#include "tools/TextUtil.h"

namespace optimium {
namespace tools {

namespace rt = optimium::runtime;
using rt::ElementType;

namespace {

[[noreturn]] void specError(const std::string &FlagName, const std::string &Spec, const std::string &What) {
  throw ToolError(FlagName + " '" + Spec + "': " + What);
}

// Shape of a model tensor; symbolic dims print as their expression.
std::string infoShapeString(const rt::TensorInfo &Info) {
  std::string S;
  for (size_t I = 0; I < Info.Shape.getRank(); ++I) {
    const rt::Expr &D = Info.Shape[I];
    S += I ? "x" : "";
    S += D.isConst() ? std::to_string(D.value()) : "{" + D.toString() + "}";
  }
  return S + (S.empty() ? "" : "x") + elementTypeName(Info.Type);
}

// Parses "2x2xf32" into dims and type.
void parseMetadata(const std::string &Meta, const std::string &FlagName, const std::string &Spec,
                   std::vector<int64_t> &Dims, ElementType &Type) {
  if (Meta.empty())
    specError(FlagName, Spec, "missing shape and element type (e.g. 2x2xf32=...)");
  std::vector<std::string> Parts;
  size_t Start = 0;
  while (true) {
    const size_t X = Meta.find('x', Start);
    Parts.push_back(Meta.substr(Start, X == std::string::npos ? std::string::npos : X - Start));
    if (X == std::string::npos)
      break;
    Start = X + 1;
  }
  const std::string TypeName = trim(Parts.back());
  if (!parseElementTypeName(TypeName, Type))
    specError(FlagName, Spec,
              "unknown element type '" + TypeName +
                  "' (expected one of i1 i8 si8 ui8 i16 si16 ui16 i32 si32 ui32 i64 si64 ui64 f16 bf16 "
                  "f32 f64)");
  Dims.clear();
  for (size_t I = 0; I + 1 < Parts.size(); ++I) {
    const std::string D = trim(Parts[I]);
    bool Ok = !D.empty() && D.size() <= 15 &&
              std::all_of(D.begin(), D.end(), [](char C) { return std::isdigit(static_cast<unsigned char>(C)); });
    if (!Ok)
      specError(FlagName, Spec, "invalid dimension '" + D + "' in shape '" + Meta + "'");
    Dims.push_back(std::stoll(D));
  }
}

void readRaw(std::istream &In, const std::string &Path, HostArray &A, const std::string &FlagName,
             const std::string &Spec) {
  size_t Need = 0;
  try {
    Need = dimsElementCount(A.Dims) * elementByteSize(A.Type);
  } catch (const ToolError &E) {
    specError(FlagName, Spec, E.what());
  }
  A.Bytes.assign(Need, 0);
  if (Need == 0)
    return;
  const std::streamoff Pos = In.tellg();
  In.read(reinterpret_cast<char *>(A.Bytes.data()), static_cast<std::streamsize>(Need));
  const size_t Got = static_cast<size_t>(In.gcount());
  if (Got != Need) {
    In.clear();
    specError(FlagName, Spec,
              Path + " has " + std::to_string(Got) + " bytes left at offset " + std::to_string(Pos) + ", " +
                  formatShapeAndType(A.Dims, A.Type) + " needs " + std::to_string(Need));
  }
}

bool staticDims(const rt::TensorInfo &Info, std::vector<int64_t> &Dims) {
  Dims.clear();
  for (const rt::Expr &D : Info.Shape) {
    if (!D.isConst())
      return false;
    Dims.push_back(D.value());
  }
  return true;
}

} // namespace

// ---- input streams -----------------------------------------------------------------------------

std::istream &InputStreams::open(const std::string &Path, bool Continue) {
  auto It = Streams.find(Path);
  if (It == Streams.end()) {
    auto S = std::make_unique<std::ifstream>(Path, std::ios::binary);
    if (!*S)
      throw ToolError(Path + ": cannot open file");
    It = Streams.emplace(Path, std::move(S)).first;
  } else if (!Continue) {
    It->second->clear();
    It->second->seekg(0);
  }
  return *It->second;
}

void InputStreams::checkRawFilesConsumed(const std::string &FlagName) const {
  for (const auto &KV : Raw) {
    auto It = Streams.find(KV.first);
    if (It == Streams.end())
      continue;
    std::ifstream &S = *It->second;
    S.clear();
    const std::streamoff Pos = S.tellg();
    S.seekg(0, std::ios::end);
    const std::streamoff Size = S.tellg();
    S.seekg(Pos);
    if (Pos != Size)
      throw ToolError(FlagName + ": " + KV.first + " has " + std::to_string(Size) + " bytes but the inputs read " +
                      std::to_string(Pos) + " (the file size must match the shapes given)");
  }
}

// ---- input parsing -----------------------------------------------------------------------------

std::vector<HostArray> parseInputSpec(const std::string &RawSpec, InputStreams &Streams,
                                      const rt::TensorInfo *Expected, const std::string &FlagName) {
  const std::string Spec = trim(RawSpec);
  if (Spec.empty())
    specError(FlagName, Spec, "no value given");
  std::vector<HostArray> Result;

  // Metadata-less file forms: @file.npy, +file.npy, *file.npy (and @file.bin for a static input).
  if (Spec[0] == '@' || Spec[0] == '+' || Spec[0] == '*') {
    const std::string Path = Spec.substr(1);
    if (Path.empty())
      specError(FlagName, Spec, "missing file name");
    const bool Continue = Spec[0] != '@';
    if (!endsWith(Path, ".npy")) {
      std::vector<int64_t> Dims;
      if (Spec[0] != '*' && Expected && Expected->Type != ElementType::String && staticDims(*Expected, Dims)) {
        HostArray A;
        A.Type = Expected->Type;
        A.Dims = Dims;
        try {
          std::istream &In = Streams.open(Path, Continue);
          Streams.markRaw(Path);
          readRaw(In, Path, A, FlagName, Spec);
        } catch (const ToolError &E) {
          if (startsWith(E.what(), FlagName.c_str()))
            throw;
          specError(FlagName, Spec, E.what());
        }
        Result.push_back(std::move(A));
        return Result;
      }
      specError(FlagName, Spec,
                "a file without shape and type must be a .npy file (for raw bytes give them: "
                "1x8xf32=@file.bin)");
    }
    try {
      std::istream &In = Streams.open(Path, Continue);
      if (Spec[0] == '*') {
        while (!atNpyEnd(In))
          Result.push_back(readNpy(In, Path));
      } else {
        Result.push_back(readNpy(In, Path));
      }
    } catch (const ToolError &E) {
      specError(FlagName, Spec, E.what());
    }
    return Result;
  }

  // shape+type[=contents]
  const size_t Eq = Spec.find('=');
  const std::string Meta = trim(Spec.substr(0, Eq));
  const std::string Contents = Eq == std::string::npos ? std::string() : trim(Spec.substr(Eq + 1));
  HostArray A;
  parseMetadata(Meta, FlagName, Spec, A.Dims, A.Type);
  size_t Count = 0;
  try {
    Count = dimsElementCount(A.Dims);
  } catch (const ToolError &E) {
    specError(FlagName, Spec, E.what());
  }
  const size_t Elem = elementByteSize(A.Type);

  if (!Contents.empty() && (Contents[0] == '@' || Contents[0] == '+')) {
    const std::string Path = Contents.substr(1);
    if (Path.empty())
      specError(FlagName, Spec, "missing file name");
    try {
      std::istream &In = Streams.open(Path, Contents[0] == '+');
      if (endsWith(Path, ".npy")) {
        // Shape given for a .npy file: read the array and check it matches.
        HostArray N = readNpy(In, Path);
        if (N.Type != A.Type || N.Dims != A.Dims)
          specError(FlagName, Spec,
                    Path + " holds " + formatShapeAndType(N.Dims, N.Type) + ", not " + formatShapeAndType(A.Dims, A.Type));
        A = std::move(N);
      } else {
        Streams.markRaw(Path);
        readRaw(In, Path, A, FlagName, Spec);
      }
    } catch (const ToolError &E) {
      if (startsWith(E.what(), FlagName.c_str()))
        throw;
      specError(FlagName, Spec, E.what());
    }
    Result.push_back(std::move(A));
    return Result;
  }

  A.Bytes.assign(Count * Elem, 0);
  // Tokens are separated by whitespace, commas and brackets.
  std::vector<std::string> Tokens;
  int Depth = 0;
  std::string Cur;
  for (char C : Contents) {
    const bool Sep = std::isspace(static_cast<unsigned char>(C)) || C == ',' || C == '[' || C == ']';
    if (C == '[')
      ++Depth;
    if (C == ']' && --Depth < 0)
      specError(FlagName, Spec, "unbalanced ']'");
    if (Sep) {
      if (!Cur.empty())
        Tokens.push_back(Cur);
      Cur.clear();
    } else {
      Cur += C;
    }
  }
  if (!Cur.empty())
    Tokens.push_back(Cur);
  if (Depth != 0)
    specError(FlagName, Spec, "unbalanced '['");
  if (Tokens.empty()) {
    Result.push_back(std::move(A)); // zeros
    return Result;
  }
  if (Tokens.size() != 1 && Tokens.size() != Count)
    specError(FlagName, Spec,
              std::to_string(Tokens.size()) + (Tokens.size() == 1 ? " value for " : " values for ") +
                  std::to_string(Count) + (Count == 1 ? " element" : " elements"));
  for (size_t I = 0; I < Tokens.size(); ++I) {
    const std::string Why = parseElement(Tokens[I], A.Type, A.Bytes.data() + I * Elem);
    if (!Why.empty())
      specError(FlagName, Spec, Why);
  }
  if (Tokens.size() == 1)
    for (size_t I = 1; I < Count; ++I)
      std::memcpy(A.Bytes.data() + I * Elem, A.Bytes.data(), Elem);
  Result.push_back(std::move(A));
  return Result;
}

std::vector<HostArray> parseInputSpecs(const std::vector<std::string> &Specs,
                                       const std::vector<rt::TensorInfo> &Expected, const std::string &FlagName) {
  InputStreams Streams;
  std::vector<HostArray> All;
  for (const std::string &S : Specs) {
    const rt::TensorInfo *Info = All.size() < Expected.size() ? &Expected[All.size()] : nullptr;
    std::vector<HostArray> Part = parseInputSpec(S, Streams, Info, FlagName);
    for (HostArray &A : Part)
      All.push_back(std::move(A));
  }
  Streams.checkRawFilesConsumed(FlagName);
  return All;
}

rt::Tensor parseInputSpec(const std::string &Spec, const rt::TensorInfo *Expected) {
  InputStreams Streams;
  std::vector<HostArray> A = parseInputSpec(Spec, Streams, Expected);
  if (A.size() != 1)
    specError("--input", Spec, std::to_string(A.size()) + " arrays where one was expected");
  Streams.checkRawFilesConsumed("--input");
  if (Expected)
    validateInputs(A, {*Expected});
  return toTensor(A[0]);
}

// ---- validation --------------------------------------------------------------------------------

void validateInputs(const std::vector<HostArray> &Inputs, const std::vector<rt::TensorInfo> &Infos) {
  if (Inputs.size() != Infos.size()) {
    std::string List;
    for (size_t I = 0; I < Infos.size(); ++I)
      List += (I ? ", " : "") + Infos[I].Name + ": " + infoShapeString(Infos[I]);
    throw ToolError("the model takes " + std::to_string(Infos.size()) + (Infos.size() == 1 ? " input" : " inputs") +
                    (List.empty() ? "" : " (" + List + ")") + " but " + std::to_string(Inputs.size()) +
                    (Inputs.size() == 1 ? " was" : " were") + " given with --input");
  }
  std::map<std::string, int64_t> Symbols;
  std::map<std::string, std::string> SymbolOrigin;
  for (size_t I = 0; I < Inputs.size(); ++I) {
    const HostArray &A = Inputs[I];
    const rt::TensorInfo &Info = Infos[I];
    const std::string Who = "input " + std::to_string(I) + " '" + Info.Name + "'";
    const std::string Want = infoShapeString(Info), Got = formatShapeAndType(A.Dims, A.Type);
    if (A.Type != Info.Type)
      throw ToolError(Who + ": expected element type " + elementTypeName(Info.Type) + " (" + Want + "), got " +
                      elementTypeName(A.Type) + " (" + Got + ")");
    if (A.Dims.size() != Info.Shape.getRank())
      throw ToolError(Who + ": expected shape " + Want + " (rank " + std::to_string(Info.Shape.getRank()) + "), got " +
                      Got + " (rank " + std::to_string(A.Dims.size()) + ")");
    for (size_t D = 0; D < A.Dims.size(); ++D) {
      const rt::Expr &E = Info.Shape[D];
      if (E.isConst()) {
        if (E.value() != A.Dims[D])
          throw ToolError(Who + ": expected shape " + Want + ", got " + Got + " (dim " + std::to_string(D) +
                          " is " + std::to_string(A.Dims[D]) + ", expected " + std::to_string(E.value()) + ")");
      } else if (E.isSymbol()) {
        const std::string Sym = E.symbol();
        auto It = Symbols.find(Sym);
        if (It == Symbols.end()) {
          Symbols[Sym] = A.Dims[D];
          SymbolOrigin[Sym] = Who + " dim " + std::to_string(D);
        } else if (It->second != A.Dims[D]) {
          throw ToolError(Who + ": expected shape " + Want + ", got " + Got + " (dim " + std::to_string(D) + " '" +
                          Sym + "' is " + std::to_string(A.Dims[D]) + " but " + SymbolOrigin[Sym] + " set it to " +
                          std::to_string(It->second) + ")");
        }
      }
    }
  }
}

// ---- tensors -----------------------------------------------------------------------------------

rt::Tensor toTensor(const HostArray &A) {
  rt::Tensor T = rt::tensor(A.Type, rt::TensorShape::fromDims(A.Dims));
  if (!A.Bytes.empty())
    std::memcpy(T.data(), A.Bytes.data(), A.Bytes.size());
  return T;
}

HostArray fromTensor(const rt::Tensor &T) {
  HostArray A;
  A.Type = T.getType();
  A.Dims = T.getShape().getDims();
  if (elementByteSize(A.Type) == 0)
    throw ToolError(std::string("tensors of element type ") + elementTypeName(A.Type) + " are not supported by optimium-run");
  const size_t Bytes = dimsElementCount(A.Dims) * elementByteSize(A.Type);
  A.Bytes.resize(Bytes);
  if (Bytes)
    std::memcpy(A.Bytes.data(), T.data(), Bytes);
  return A;
}

} // namespace tools
} // namespace optimium
