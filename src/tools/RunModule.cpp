// optimium-run; see RunModule.h for the supported syntax.
#include "tools/RunModule.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <numeric>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "core/LowPrecision.h"

namespace optimium {
namespace tools {

namespace rt = optimium::runtime;
namespace lowp = optimium::runtime::detail::lowp;
using rt::ElementType;

namespace {

std::string trim(const std::string &S) {
  size_t B = 0, E = S.size();
  while (B < E && std::isspace(static_cast<unsigned char>(S[B])))
    ++B;
  while (E > B && std::isspace(static_cast<unsigned char>(S[E - 1])))
    --E;
  return S.substr(B, E - B);
}

bool startsWith(const std::string &S, const char *P) { return S.compare(0, std::strlen(P), P) == 0; }
bool endsWith(const std::string &S, const char *Suffix) {
  const size_t N = std::strlen(Suffix);
  return S.size() >= N && S.compare(S.size() - N, N, Suffix) == 0;
}

bool fileExists(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0;
}
bool isDirectory(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0 && S_ISDIR(St.st_mode);
}

std::string oneLine(std::string S) {
  for (char &C : S)
    if (C == '\n' || C == '\r')
      C = ' ';
  while (!S.empty() && S.back() == ' ')
    S.pop_back();
  return S;
}

[[noreturn]] void specError(const std::string &FlagName, const std::string &Spec, const std::string &What) {
  throw ToolError(FlagName + " '" + Spec + "': " + What);
}

std::string dimsString(const std::vector<int64_t> &Dims) {
  std::string S;
  for (size_t I = 0; I < Dims.size(); ++I)
    S += (I ? "x" : "") + std::to_string(Dims[I]);
  return S;
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

// ---- element parsing / formatting -------------------------------------------------------------

template <typename T> void storeAs(uint8_t *Dst, T V) { std::memcpy(Dst, &V, sizeof(T)); }

bool parseInteger(const std::string &Tok, bool Unsigned, int64_t &S, uint64_t &U) {
  if (Tok.empty())
    return false;
  errno = 0;
  char *End = nullptr;
  if (Unsigned) {
    if (Tok[0] == '-')
      return false;
    U = std::strtoull(Tok.c_str(), &End, 10);
  } else {
    S = std::strtoll(Tok.c_str(), &End, 10);
  }
  return errno == 0 && End && *End == '\0';
}

// Parses one element; returns "" on success, else why not.
std::string parseElement(const std::string &Tok, ElementType Type, uint8_t *Dst) {
  const std::string TypeName = elementTypeName(Type);
  auto Range = [&] { return "value '" + Tok + "' is out of range for " + TypeName; };
  auto Bad = [&] { return "value '" + Tok + "' is not a valid " + TypeName; };
  switch (Type) {
  case ElementType::Bool: {
    if (Tok == "true" || Tok == "True" || Tok == "1") {
      *Dst = 1;
      return "";
    }
    if (Tok == "false" || Tok == "False" || Tok == "0") {
      *Dst = 0;
      return "";
    }
    return Bad() + " (use 0/1 or true/false)";
  }
  case ElementType::I8:
  case ElementType::I16:
  case ElementType::I32:
  case ElementType::I64: {
    int64_t V = 0;
    uint64_t Unused = 0;
    if (!parseInteger(Tok, false, V, Unused))
      return errno == ERANGE ? Range() : Bad();
    const size_t Bits = elementByteSize(Type) * 8;
    if (Bits < 64) {
      const int64_t Lo = -(int64_t(1) << (Bits - 1)), Hi = (int64_t(1) << (Bits - 1)) - 1;
      if (V < Lo || V > Hi)
        return Range();
    }
    if (Type == ElementType::I8)
      storeAs<int8_t>(Dst, static_cast<int8_t>(V));
    else if (Type == ElementType::I16)
      storeAs<int16_t>(Dst, static_cast<int16_t>(V));
    else if (Type == ElementType::I32)
      storeAs<int32_t>(Dst, static_cast<int32_t>(V));
    else
      storeAs<int64_t>(Dst, V);
    return "";
  }
  case ElementType::U8:
  case ElementType::U16:
  case ElementType::U32:
  case ElementType::U64: {
    int64_t Unused = 0;
    uint64_t V = 0;
    if (!parseInteger(Tok, true, Unused, V))
      return errno == ERANGE || (!Tok.empty() && Tok[0] == '-') ? Range() : Bad();
    const size_t Bits = elementByteSize(Type) * 8;
    if (Bits < 64 && V > ((uint64_t(1) << Bits) - 1))
      return Range();
    if (Type == ElementType::U8)
      storeAs<uint8_t>(Dst, static_cast<uint8_t>(V));
    else if (Type == ElementType::U16)
      storeAs<uint16_t>(Dst, static_cast<uint16_t>(V));
    else if (Type == ElementType::U32)
      storeAs<uint32_t>(Dst, static_cast<uint32_t>(V));
    else
      storeAs<uint64_t>(Dst, V);
    return "";
  }
  case ElementType::F16:
  case ElementType::BF16:
  case ElementType::F32:
  case ElementType::F64: {
    errno = 0;
    char *End = nullptr;
    const double V = std::strtod(Tok.c_str(), &End);
    if (!End || *End != '\0' || Tok.empty())
      return Bad();
    if (Type == ElementType::F64)
      storeAs<double>(Dst, V);
    else if (Type == ElementType::F32)
      storeAs<float>(Dst, static_cast<float>(V));
    else if (Type == ElementType::F16)
      storeAs<uint16_t>(Dst, rt::float16::fromFloat(static_cast<float>(V)));
    else
      storeAs<uint16_t>(Dst, rt::bfloat16::fromFloat(static_cast<float>(V)));
    return "";
  }
  default:
    if (lowp::isLowPrecisionFloat(Type)) {
      char *End = nullptr;
      const double V = std::strtod(Tok.c_str(), &End);
      if (!End || *End != '\0' || Tok.empty())
        return Bad();
      storeAs<uint8_t>(Dst, lowp::doubleToLowPrecision(Type, V, true));
      return "";
    }
    if (lowp::isSubByteInt(Type)) {
      int64_t V = 0;
      uint64_t Unused = 0;
      if (!parseInteger(Tok, false, V, Unused))
        return Bad();
      int32_t Lo, Hi;
      lowp::intRange(Type, Lo, Hi);
      if (V < Lo || V > Hi)
        return Range();
      storeAs<uint8_t>(Dst, static_cast<uint8_t>(static_cast<int8_t>(V)));
      return "";
    }
    return "element type is not supported";
  }
}

// Reads element I as double (floats), or exact integers through the two out-params.
double elementAsDouble(const HostArray &A, size_t I) {
  const uint8_t *P = A.Bytes.data() + I * elementByteSize(A.Type);
  switch (A.Type) {
  case ElementType::Bool: return *P ? 1.0 : 0.0;
  case ElementType::I8: { int8_t V; std::memcpy(&V, P, 1); return V; }
  case ElementType::U8: return *P;
  case ElementType::I16: { int16_t V; std::memcpy(&V, P, 2); return V; }
  case ElementType::U16: { uint16_t V; std::memcpy(&V, P, 2); return V; }
  case ElementType::I32: { int32_t V; std::memcpy(&V, P, 4); return V; }
  case ElementType::U32: { uint32_t V; std::memcpy(&V, P, 4); return V; }
  case ElementType::I64: { int64_t V; std::memcpy(&V, P, 8); return static_cast<double>(V); }
  case ElementType::U64: { uint64_t V; std::memcpy(&V, P, 8); return static_cast<double>(V); }
  case ElementType::F16: { uint16_t V; std::memcpy(&V, P, 2); return rt::float16::toFloat(V); }
  case ElementType::BF16: { uint16_t V; std::memcpy(&V, P, 2); return rt::bfloat16::toFloat(V); }
  case ElementType::F32: { float V; std::memcpy(&V, P, 4); return V; }
  case ElementType::F64: { double V; std::memcpy(&V, P, 8); return V; }
  default: return lowp::isLowPrecision(A.Type) ? lowp::lowPrecisionToDouble(A.Type, *P) : 0;
  }
}

bool isFloatType(ElementType T) {
  return T == ElementType::F16 || T == ElementType::BF16 || T == ElementType::F32 || T == ElementType::F64 ||
         lowp::isLowPrecisionFloat(T);
}

std::string formatElement(const HostArray &A, size_t I) {
  const uint8_t *P = A.Bytes.data() + I * elementByteSize(A.Type);
  char Buf[64];
  switch (A.Type) {
  case ElementType::Bool: return *P ? "1" : "0";
  case ElementType::I64: { int64_t V; std::memcpy(&V, P, 8); return std::to_string(V); }
  case ElementType::U64: { uint64_t V; std::memcpy(&V, P, 8); return std::to_string(V); }
  case ElementType::F16:
  case ElementType::BF16:
  case ElementType::F32:
  case ElementType::F64:
    std::snprintf(Buf, sizeof(Buf), "%G", elementAsDouble(A, I));
    return Buf;
  default:
    if (lowp::isLowPrecisionFloat(A.Type)) {
      std::snprintf(Buf, sizeof(Buf), "%G", elementAsDouble(A, I));
      return Buf;
    }
    return std::to_string(static_cast<int64_t>(elementAsDouble(A, I)));
  }
}

void formatRecursive(const HostArray &A, size_t Dim, size_t Offset, size_t &Remaining, std::string &Out) {
  const size_t Rank = A.Dims.size();
  if (Rank == 0) { // scalar
    if (Remaining > 0) {
      Out += formatElement(A, 0);
      --Remaining;
    } else {
      Out += "...";
    }
    return;
  }
  const size_t N = static_cast<size_t>(A.Dims[Dim]);
  if (Dim + 1 < Rank) {
    size_t Inner = 1;
    for (size_t I = Dim + 1; I < Rank; ++I)
      Inner *= static_cast<size_t>(A.Dims[I]);
    for (size_t I = 0; I < N; ++I) {
      Out += '[';
      formatRecursive(A, Dim + 1, Offset + I * Inner, Remaining, Out);
      Out += ']';
    }
    return;
  }
  const size_t Count = std::min(Remaining, N);
  Remaining -= Count;
  for (size_t I = 0; I < Count; ++I) {
    if (I)
      Out += ' ';
    Out += formatElement(A, Offset + I);
  }
  if (Count < N)
    Out += "...";
}

std::string indexString(const std::vector<int64_t> &Dims, size_t Flat) {
  std::vector<int64_t> Idx(Dims.size());
  for (size_t I = Dims.size(); I-- > 0;) {
    const int64_t D = Dims[I] ? Dims[I] : 1;
    Idx[I] = static_cast<int64_t>(Flat % static_cast<size_t>(D));
    Flat /= static_cast<size_t>(D);
  }
  std::string S = "[";
  for (size_t I = 0; I < Idx.size(); ++I)
    S += (I ? "," : "") + std::to_string(Idx[I]);
  return S + "]";
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

// ---- element types -----------------------------------------------------------------------------

std::string elementTypeName(ElementType Type) {
  switch (Type) {
  case ElementType::Bool: return "i1";
  case ElementType::I8: return "i8";
  case ElementType::I16: return "i16";
  case ElementType::I32: return "i32";
  case ElementType::I64: return "i64";
  case ElementType::U8: return "ui8";
  case ElementType::U16: return "ui16";
  case ElementType::U32: return "ui32";
  case ElementType::U64: return "ui64";
  case ElementType::F16: return "f16";
  case ElementType::BF16: return "bf16";
  case ElementType::F32: return "f32";
  case ElementType::F64: return "f64";
  case ElementType::String: return "string";
  // MLIR / IREE spellings of the low-precision types.
  case ElementType::F8E4M3FN: return "f8E4M3FN";
  case ElementType::F8E4M3FNUZ: return "f8E4M3FNUZ";
  case ElementType::F8E5M2: return "f8E5M2";
  case ElementType::F8E5M2FNUZ: return "f8E5M2FNUZ";
  case ElementType::F8E8M0: return "f8E8M0FNU";
  case ElementType::F4E2M1: return "f4E2M1FN";
  case ElementType::I4: return "i4";
  case ElementType::U4: return "ui4";
  case ElementType::I2: return "i2";
  case ElementType::U2: return "ui2";
  default: return "undefined";
  }
}

bool parseElementTypeName(const std::string &Name, ElementType &Type) {
  static const std::map<std::string, ElementType> Names = {
      {"i1", ElementType::Bool},   {"i8", ElementType::I8},     {"si8", ElementType::I8},
      {"ui8", ElementType::U8},    {"i16", ElementType::I16},   {"si16", ElementType::I16},
      {"ui16", ElementType::U16},  {"i32", ElementType::I32},   {"si32", ElementType::I32},
      {"ui32", ElementType::U32},  {"i64", ElementType::I64},   {"si64", ElementType::I64},
      {"ui64", ElementType::U64},  {"f16", ElementType::F16},   {"bf16", ElementType::BF16},
      {"f32", ElementType::F32},   {"f64", ElementType::F64},
      {"f8E4M3FN", ElementType::F8E4M3FN},     {"f8E4M3FNUZ", ElementType::F8E4M3FNUZ},
      {"f8E5M2", ElementType::F8E5M2},         {"f8E5M2FNUZ", ElementType::F8E5M2FNUZ},
      {"f8E8M0FNU", ElementType::F8E8M0},      {"f4E2M1FN", ElementType::F4E2M1},
      {"i4", ElementType::I4},   {"si4", ElementType::I4},   {"ui4", ElementType::U4},
      {"i2", ElementType::I2},   {"si2", ElementType::I2},   {"ui2", ElementType::U2}};
  auto It = Names.find(Name);
  if (It == Names.end())
    return false;
  Type = It->second;
  return true;
}

std::string formatShapeAndType(const std::vector<int64_t> &Dims, ElementType Type) {
  const std::string D = dimsString(Dims);
  return D.empty() ? elementTypeName(Type) : D + "x" + elementTypeName(Type);
}

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

// ---- output ------------------------------------------------------------------------------------

std::string formatBufferView(const HostArray &A, size_t MaxElements) {
  std::string Out = formatShapeAndType(A.Dims, A.Type) + "=";
  size_t Remaining = MaxElements;
  if (dimsElementCount(A.Dims) == 0 && !A.Dims.empty())
    return Out;
  formatRecursive(A, 0, 0, Remaining, Out);
  return Out;
}

std::string formatOutput(size_t Index, const HostArray &A, size_t MaxElements) {
  return "result[" + std::to_string(Index) + "]: hal.buffer_view\n" + formatBufferView(A, MaxElements);
}

std::string formatOutput(size_t Index, const rt::Tensor &T, size_t MaxElements) {
  return formatOutput(Index, fromTensor(T), MaxElements);
}

void writeOutput(const std::string &Spec, size_t Index, const HostArray &A, std::ostream &Out, size_t MaxElements) {
  if (Spec.empty())
    return;
  if (Spec == "-") {
    Out << formatOutput(Index, A, MaxElements) << "\n";
    return;
  }
  const bool Append = Spec[0] == '+';
  if (Spec[0] != '@' && Spec[0] != '+')
    throw ToolError("--output '" + Spec + "': expected '-', '' (skip), '@file' (write) or '+file' (append)");
  const std::string Path = Spec.substr(1);
  if (Path.empty())
    throw ToolError("--output '" + Spec + "': missing file name");
  try {
    if (endsWith(Path, ".npy")) {
      writeNpyFile(Path, A, Append);
    } else {
      std::ofstream F(Path, std::ios::binary | (Append ? std::ios::app : std::ios::trunc));
      if (!F)
        throw ToolError(Path + ": cannot open file for writing");
      F.write(reinterpret_cast<const char *>(A.Bytes.data()), static_cast<std::streamsize>(A.Bytes.size()));
      F.flush();
      if (!F)
        throw ToolError(Path + ": write failed");
    }
  } catch (const ToolError &E) {
    throw ToolError("--output '" + Spec + "' (result " + std::to_string(Index) + "): " + E.what());
  }
}

std::string compareArrays(const HostArray &Expected, const HostArray &Actual, double Tolerance) {
  if (Expected.Type != Actual.Type || Expected.Dims != Actual.Dims)
    return "expected " + formatShapeAndType(Expected.Dims, Expected.Type) + ", got " +
           formatShapeAndType(Actual.Dims, Actual.Type);
  const size_t N = dimsElementCount(Actual.Dims);
  const bool Float = isFloatType(Actual.Type);
  const size_t Elem = elementByteSize(Actual.Type);
  size_t Mismatches = 0, First = 0;
  for (size_t I = 0; I < N; ++I) {
    bool Ok;
    if (Float) {
      const double E = elementAsDouble(Expected, I), A = elementAsDouble(Actual, I);
      if (std::isnan(E) || std::isnan(A))
        Ok = std::isnan(E) && std::isnan(A);
      else if (std::isinf(E) || std::isinf(A))
        Ok = E == A;
      else
        Ok = std::fabs(A - E) <= Tolerance * std::max(1.0, std::fabs(E));
    } else if (Actual.Type == ElementType::Bool) {
      Ok = (Expected.Bytes[I] != 0) == (Actual.Bytes[I] != 0);
    } else {
      Ok = std::memcmp(Expected.Bytes.data() + I * Elem, Actual.Bytes.data() + I * Elem, Elem) == 0;
    }
    if (!Ok && Mismatches++ == 0)
      First = I;
  }
  if (Mismatches == 0)
    return "";
  std::ostringstream S;
  S << Mismatches << " of " << N << " elements differ; first at " << indexString(Actual.Dims, First) << ": got "
    << formatElement(Actual, First) << ", expected " << formatElement(Expected, First);
  if (Float)
    S << " (tolerance " << Tolerance << " * max(1, |expected|))";
  return S.str();
}

// ---- flags -------------------------------------------------------------------------------------

std::string usage() {
  return R"(optimium-run: runs one inference of a model, like iree-run-module.

Usage: optimium-run --module=PATH [--input=SPEC]... [flags]
       optimium-run                 (no arguments: runs the bundled digits model over its test set)

Flags:
  --module=PATH                  model: an .onnx file or a folder holding model.onnx
  --function=NAME                function to run (default main; models export only "main")
  --device=NAME                  native (default; local-task and local-sync are aliases) or
                                 another driver present on this host (see --dump_devices)
  --hw_type=NAME                 backend of drivers with several (native has none)
  --device_allocator=auto|cpu|dmabuf   buffer allocator (default auto)
  --threads=N                    worker threads (default: one per core)
  --input=SPEC                   one per model input, in order (repeatable):
                                   2x2xf32=1 2 3 4   2x2xf32=[[1,2][3,4]]   2x2xf32=1 (fill)
                                   2x2xf32 (zeros)   1x8xf32=@file.bin   1x8xf32=+file.bin
                                   @file.npy   +file.npy (next array)   *file.npy (all arrays)
                                 element types: i1 i8 si8 ui8 i16 si16 ui16 i32 si32 ui32
                                   i64 si64 ui64 f16 bf16 f32 f64
  --output=SPEC                  one per model output: - (print), empty (skip), @file.npy,
                                 +file.npy (append), @file.bin (raw bytes), +file.bin
  --expected_output=SPEC         one per model output, --input syntax, or (ignored);
                                 exit code 1 on a mismatch
  --expected_tolerance=X         float tolerance: |a-e| <= X*max(1,|e|) (default 1e-4)
  --output_max_element_count=N   elements printed per result (default 1024)
  --print_statistics             print load time, inference time and peak memory
  --dump_devices                 list the devices of this host and exit
  --flagfile=PATH                read flags from PATH, one per line ('#' comments)
  --help                         this text
)";
}

std::vector<std::string> expandFlagfiles(const std::vector<std::string> &Args, int Depth) {
  if (Depth > 16)
    throw ToolError("--flagfile nesting deeper than 16 (a flagfile includes itself?)");
  std::vector<std::string> Out;
  for (const std::string &A : Args) {
    if (!startsWith(A, "--flagfile=") && !startsWith(A, "-flagfile=")) {
      Out.push_back(A);
      continue;
    }
    const std::string Path = A.substr(A.find('=') + 1);
    std::ifstream F(Path);
    if (Path.empty() || !F)
      throw ToolError("--flagfile: cannot open '" + Path + "'");
    std::vector<std::string> Lines;
    std::string Line;
    while (std::getline(F, Line)) {
      Line = trim(Line);
      if (Line.empty() || Line[0] == '#')
        continue;
      Lines.push_back(Line);
    }
    for (std::string &L : expandFlagfiles(Lines, Depth + 1))
      Out.push_back(std::move(L));
  }
  return Out;
}

namespace {

bool parseBoolValue(const std::string &Flag, const std::string &V, bool HasValue) {
  if (!HasValue || V == "true" || V == "1")
    return true;
  if (V == "false" || V == "0")
    return false;
  throw ToolError("--" + Flag + "=" + V + ": expected true or false");
}

int64_t parseIntValue(const std::string &Flag, const std::string &V, int64_t Min) {
  int64_t S = 0;
  uint64_t U = 0;
  if (!parseInteger(V, false, S, U) || S < Min)
    throw ToolError("--" + Flag + "=" + V + ": expected an integer >= " + std::to_string(Min));
  return S;
}

} // namespace

RunModuleOptions parseFlags(int Argc, const char *const *Argv) {
  RunModuleOptions O;
  if (Argc <= 1) {
    O.NoArguments = true;
    return O;
  }
  std::vector<std::string> Raw;
  for (int I = 1; I < Argc; ++I)
    Raw.push_back(Argv[I]);
  const std::vector<std::string> Args = expandFlagfiles(Raw);
  for (const std::string &Arg : Args) {
    if (Arg.size() < 2 || Arg[0] != '-' || Arg == "--")
      throw ToolError("unexpected argument '" + Arg + "' (flags are --name=value; see --help)");
    const std::string Body = Arg.substr(Arg[1] == '-' ? 2 : 1);
    const size_t Eq = Body.find('=');
    const std::string Name = Body.substr(0, Eq);
    const bool HasValue = Eq != std::string::npos;
    const std::string Value = HasValue ? Body.substr(Eq + 1) : std::string();
    auto NeedValue = [&] {
      if (!HasValue)
        throw ToolError("--" + Name + " needs a value (--" + Name + "=...)");
    };
    if (Name == "module") {
      NeedValue();
      O.Module = Value;
    } else if (Name == "function") {
      NeedValue();
      O.Function = Value;
    } else if (Name == "device") {
      NeedValue();
      O.Device = Value;
      O.DeviceGiven = true;
    } else if (Name == "hw_type") {
      NeedValue();
      O.HwType = Value;
    } else if (Name == "device_allocator") {
      NeedValue();
      if (Value != "auto" && Value != "cpu" && Value != "dmabuf")
        throw ToolError("--device_allocator=" + Value + ": expected auto, cpu or dmabuf");
      O.DeviceAllocator = Value;
    } else if (Name == "input") {
      NeedValue();
      O.Inputs.push_back(Value);
    } else if (Name == "output") {
      NeedValue();
      O.Outputs.push_back(Value);
    } else if (Name == "expected_output") {
      NeedValue();
      O.ExpectedOutputs.push_back(Value);
    } else if (Name == "output_max_element_count") {
      NeedValue();
      O.OutputMaxElementCount = static_cast<size_t>(parseIntValue(Name, Value, 0));
    } else if (Name == "expected_tolerance") {
      NeedValue();
      char *End = nullptr;
      const double T = std::strtod(Value.c_str(), &End);
      if (Value.empty() || !End || *End || !(T >= 0))
        throw ToolError("--expected_tolerance=" + Value + ": expected a number >= 0");
      O.ExpectedTolerance = T;
    } else if (Name == "threads") {
      NeedValue();
      O.Threads = static_cast<int>(parseIntValue(Name, Value, 0));
    } else if (Name == "print_statistics") {
      O.PrintStatistics = parseBoolValue(Name, Value, HasValue);
    } else if (Name == "dump_devices") {
      O.DumpDevices = parseBoolValue(Name, Value, HasValue);
    } else if (Name == "help" || Name == "h") {
      O.Help = true;
    } else {
      throw ToolError("unknown flag '--" + Name + "' (see --help)");
    }
  }
  return O;
}

// ---- devices -----------------------------------------------------------------------------------

namespace {

std::string platformName(rt::PlatformKind P) {
  switch (P) {
  case rt::PlatformKind::Native: return "native";
  case rt::PlatformKind::XNNPack: return "xnnpack";
  case rt::PlatformKind::CUDA: return "cuda";
  case rt::PlatformKind::Vulkan: return "vulkan";
  case rt::PlatformKind::OpenCL: return "opencl";
  case rt::PlatformKind::SNPE: return "snpe";
  case rt::PlatformKind::QNN: return "qnn";
  case rt::PlatformKind::Synaptics: return "synaptics";
  case rt::PlatformKind::Hexagon: return "hexagon";
  }
  return "unknown";
}

std::string lower(std::string S) {
  for (char &C : S)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  return S;
}

std::vector<rt::DeviceID> localDevices() {
  const rt::HostInfo H = rt::getLocalInfo();
  return std::vector<rt::DeviceID>(H.Devices.begin(), H.Devices.end());
}

std::string availableDeviceNames(const std::vector<rt::DeviceID> &Devices) {
  std::vector<std::string> Names;
  for (const rt::DeviceID &D : Devices) {
    const std::string N = platformName(D.getPlatform());
    if (std::find(Names.begin(), Names.end(), N) == Names.end())
      Names.push_back(N);
  }
  std::string S;
  for (size_t I = 0; I < Names.size(); ++I)
    S += (I ? ", " : "") + Names[I];
  return S.empty() ? "none" : S;
}

// Resolves --device (and validates --hw_type / --device_allocator) into the devices to load on.
std::vector<rt::DeviceID> resolveDevice(const RunModuleOptions &O) {
  std::string Name = lower(O.Device);
  if (Name == "local-task" || Name == "local-sync" || Name == "cpu" || Name == "llvm-cpu")
    Name = "native";
  const std::vector<rt::DeviceID> All = localDevices();
  static const rt::PlatformKind Platforms[] = {
      rt::PlatformKind::Native, rt::PlatformKind::XNNPack, rt::PlatformKind::CUDA,
      rt::PlatformKind::Vulkan, rt::PlatformKind::OpenCL,  rt::PlatformKind::SNPE,
      rt::PlatformKind::QNN,    rt::PlatformKind::Synaptics, rt::PlatformKind::Hexagon};
  bool Known = false;
  rt::PlatformKind Platform = rt::PlatformKind::Native;
  for (rt::PlatformKind P : Platforms)
    if (platformName(P) == Name) {
      Known = true;
      Platform = P;
    }
  if (!Known)
    throw ToolError("--device=" + O.Device + ": unknown device; available devices: " + availableDeviceNames(All) +
                    " (local-task and local-sync are aliases of native)");
  std::vector<rt::DeviceID> Picked;
  for (const rt::DeviceID &D : All)
    if (D.getPlatform() == Platform)
      Picked.push_back(D);
  if (Picked.empty())
    throw ToolError("--device=" + O.Device + ": no such device on this host; available devices: " +
                    availableDeviceNames(All));
  if (!O.HwType.empty())
    throw ToolError("--hw_type=" + O.HwType + ": device '" + Name + "' has no selectable hardware backends");
  if (O.DeviceAllocator == "dmabuf")
    throw ToolError("--device_allocator=dmabuf: device '" + Name +
                    "' allocates host memory only (use auto or cpu)");
  return Picked;
}

void dumpDevices(std::ostream &Out) {
  const rt::HostInfo H = rt::getLocalInfo();
  Out << "host " << H.ID << ": " << H.Name.str() << " (" << rt::toString(H.Architecture) << ", "
      << rt::toString(H.OS) << ")\n";
  size_t I = 0;
  for (const rt::DeviceID &D : H.Devices) {
    Out << "device[" << I++ << "]: --device=" << platformName(D.getPlatform()) << "  " << D.toString()
        << "  platform=" << rt::toString(D.getPlatform()) << " kind=" << rt::toString(D.getDeviceKind())
        << " index=" << D.getIndex() << "  capability: " << D.getCapability().toString() << "\n";
  }
  if (I == 0)
    Out << "(no devices)\n";
}

size_t peakRssKiB() {
  std::ifstream F("/proc/self/status");
  std::string Line;
  while (std::getline(F, Line))
    if (startsWith(Line, "VmHWM:"))
      return static_cast<size_t>(std::strtoull(Line.c_str() + 6, nullptr, 10));
  return 0;
}

double msSince(std::chrono::steady_clock::time_point T0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - T0).count();
}

std::string fmtMs(double Ms) {
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%.3f", Ms);
  return Buf;
}

int fail(std::ostream &Err, const std::string &Message) {
  Err << "optimium-run: error: " << oneLine(Message) << std::endl;
  return 1;
}

int runModuleImpl(const RunModuleOptions &O, std::ostream &Out, std::ostream &Err) {
  if (O.Help) {
    Out << usage();
    return 0;
  }
  if (O.NoArguments) {
    const std::string Dir = findBundledModelDir();
    if (Dir.empty())
      return fail(Err, "the bundled model (models/digits) was not found; pass --module=PATH (see --help)");
    return runBundledModel(Dir, Out, Err);
  }
  rt::AutoInit Init;
  if (O.DumpDevices) {
    dumpDevices(Out);
    return 0;
  }
  if (O.Module.empty())
    return fail(Err, "--module=PATH is required (see --help)");
  if (!fileExists(O.Module))
    return fail(Err, "--module=" + O.Module + ": no such file or folder");
  if (O.Function != "main")
    return fail(Err, "--function=" + O.Function + ": no such function in " + O.Module + "; available functions: main");

  rt::ModelLoadOptions LoadOptions;
  LoadOptions.Devices = resolveDevice(O);

  // Specs are parsed before the (possibly slow) model load, so a typo fails fast. Only a raw file
  // given without shape/type (`@file.bin`) needs the model's input metadata first.
  bool InputsNeedModel = false;
  for (const std::string &S : O.Inputs) {
    const std::string T = trim(S);
    InputsNeedModel |= !T.empty() && (T[0] == '@' || T[0] == '+') && !endsWith(T, ".npy");
  }
  std::vector<HostArray> Inputs;
  if (!InputsNeedModel)
    Inputs = parseInputSpecs(O.Inputs, {}, "--input");
  // Expected outputs, in order; "(ignored)" skips one output.
  std::vector<HostArray> Expected;
  std::vector<bool> Ignored;
  {
    InputStreams ExpectedStreams;
    for (const std::string &S : O.ExpectedOutputs) {
      if (trim(S) == "(ignored)" || trim(S) == "(null)") {
        Expected.emplace_back();
        Ignored.push_back(true);
        continue;
      }
      for (HostArray &A : parseInputSpec(S, ExpectedStreams, nullptr, "--expected_output")) {
        Expected.push_back(std::move(A));
        Ignored.push_back(false);
      }
    }
    ExpectedStreams.checkRawFilesConsumed("--expected_output");
  }

  for (const std::string &S : O.Outputs)
    if (!S.empty() && S != "-" && ((S[0] != '@' && S[0] != '+') || S.size() == 1))
      return fail(Err, "--output '" + S + "': expected '-', '' (skip), '@file' (write) or '+file' (append)");

  LoadOptions.Strict = O.DeviceGiven;
  LoadOptions.ThreadCount = O.Threads;

  const auto LoadStart = std::chrono::steady_clock::now();
  rt::Model Model = rt::loadModel(O.Module, LoadOptions);
  const double LoadMs = msSince(LoadStart);

  const size_t NumInputs = Model.getInputNames().size();
  const size_t NumOutputs = Model.getOutputNames().size();
  std::vector<rt::TensorInfo> InputInfos, OutputInfos;
  for (size_t I = 0; I < NumInputs; ++I)
    InputInfos.push_back(Model.getInputTensorInfo(I));
  for (size_t I = 0; I < NumOutputs; ++I)
    OutputInfos.push_back(Model.getOutputTensorInfo(I));

  // Everything is checked before running.
  if (InputsNeedModel)
    Inputs = parseInputSpecs(O.Inputs, InputInfos, "--input");
  validateInputs(Inputs, InputInfos);
  if (!O.Outputs.empty() && O.Outputs.size() != NumOutputs)
    return fail(Err, std::to_string(O.Outputs.size()) + " --output flags given but the model has " +
                         std::to_string(NumOutputs) + " outputs (give one per output; an empty --output= skips one)");
  if (!O.ExpectedOutputs.empty() && Expected.size() != NumOutputs)
    return fail(Err, std::to_string(Expected.size()) + " expected outputs given but the model has " +
                         std::to_string(NumOutputs) + " outputs (use --expected_output=(ignored) to skip one)");

  std::vector<rt::Tensor> Tensors;
  for (const HostArray &A : Inputs)
    Tensors.push_back(toTensor(A));

  rt::InferRequest Request = Model.createRequest();
  const auto InferStart = std::chrono::steady_clock::now();
  Request.infer(Tensors);
  Request.wait();
  const double InferMs = msSince(InferStart);

  std::vector<HostArray> Results;
  for (size_t I = 0; I < NumOutputs; ++I)
    Results.push_back(fromTensor(Request.getOutput(I)));

  // Like iree-run-module: results print by default, but not when checking expectations.
  std::vector<std::string> OutSpecs = O.Outputs;
  if (OutSpecs.empty())
    OutSpecs.assign(NumOutputs, O.ExpectedOutputs.empty() ? "-" : "");
  for (size_t I = 0; I < NumOutputs; ++I)
    writeOutput(OutSpecs[I], I, Results[I], Out, O.OutputMaxElementCount);

  int Code = 0;
  if (!O.ExpectedOutputs.empty()) {
    size_t Failed = 0;
    for (size_t I = 0; I < NumOutputs; ++I) {
      if (Ignored[I])
        continue;
      const std::string Why = compareArrays(Expected[I], Results[I], O.ExpectedTolerance);
      if (!Why.empty()) {
        ++Failed;
        Out << "[FAILED] result[" << I << "] '" << OutputInfos[I].Name << "': " << Why << "\n";
      }
    }
    if (Failed) {
      Out << "[FAILED] " << Failed << " of " << NumOutputs << " outputs did not match their expectations\n";
      Code = 1;
    } else {
      Out << "[SUCCESS] all function outputs matched their expectations\n";
    }
  }

  Out << "optimium-run: inference took " << fmtMs(InferMs) << " ms\n";
  if (O.PrintStatistics) {
    Out << "optimium-run: model load took " << fmtMs(LoadMs) << " ms\n";
    Out << "optimium-run: peak resident memory " << peakRssKiB() << " KiB\n";
  }
  Out.flush();
  return Code;
}

} // namespace

int runModule(const RunModuleOptions &O, std::ostream &Out, std::ostream &Err) {
  try {
    return runModuleImpl(O, Out, Err);
  } catch (const rt::Exception &E) {
    return fail(Err, E.what());
  } catch (const ToolError &E) {
    return fail(Err, E.what());
  } catch (const std::bad_alloc &) {
    return fail(Err, "out of memory");
  } catch (const std::exception &E) {
    return fail(Err, E.what());
  } catch (...) {
    return fail(Err, "unknown error");
  }
}

// ---- bundled model -----------------------------------------------------------------------------

std::string findBundledModelDir() {
  std::vector<std::string> Candidates;
  char Exe[4096];
  const ssize_t N = ::readlink("/proc/self/exe", Exe, sizeof(Exe) - 1);
  if (N > 0) {
    Exe[N] = '\0';
    std::string Dir(Exe);
    Dir = Dir.substr(0, Dir.find_last_of('/'));
    Candidates.push_back(Dir + "/../share/optimium/models/digits");
  }
#ifdef OPTIMIUM_DEFAULT_MODEL_DIR
  Candidates.push_back(OPTIMIUM_DEFAULT_MODEL_DIR);
#endif
#ifdef OPTIMIUM_SOURCE_MODEL_DIR
  Candidates.push_back(OPTIMIUM_SOURCE_MODEL_DIR);
#endif
  for (const std::string &C : Candidates)
    if (isDirectory(C) && fileExists(C + "/model.onnx") && fileExists(C + "/test_images.npy") &&
        fileExists(C + "/test_labels.npy"))
      return C;
  return "";
}

int runBundledModel(const std::string &Dir, std::ostream &Out, std::ostream &Err) {
  try {
    rt::AutoInit Init;
    const HostArray Images = readNpyFile(Dir + "/test_images.npy");
    const HostArray Labels = readNpyFile(Dir + "/test_labels.npy");
    if (Images.Type != ElementType::F32 || Images.Dims.size() != 4 || Images.Dims[1] != 1 || Images.Dims[2] != 8 ||
        Images.Dims[3] != 8)
      return fail(Err, Dir + "/test_images.npy: expected Nx1x8x8xf32, got " + formatShapeAndType(Images.Dims, Images.Type));
    const size_t Count = static_cast<size_t>(Images.Dims[0]);
    if (Labels.Type != ElementType::I64 || dimsElementCount(Labels.Dims) != Count)
      return fail(Err, Dir + "/test_labels.npy: expected " + std::to_string(Count) + " i64 labels, got " +
                           formatShapeAndType(Labels.Dims, Labels.Type));

    rt::Model Model = rt::loadModel(Dir + "/model.onnx");
    rt::InferRequest Request = Model.createRequest();
    rt::Tensor Input = rt::tensor(ElementType::F32, rt::TensorShape::fromDims({1, 1, 8, 8}));
    const size_t ImageBytes = 64 * sizeof(float);
    std::vector<double> Latencies;
    Latencies.reserve(Count);
    size_t Correct = 0;
    for (size_t I = 0; I < Count; ++I) {
      std::memcpy(Input.data(), Images.Bytes.data() + I * ImageBytes, ImageBytes);
      const auto T0 = std::chrono::steady_clock::now();
      Request.infer(rt::ArrayRef<rt::Tensor>(Input));
      Request.wait();
      Latencies.push_back(msSince(T0));
      const HostArray Probs = fromTensor(Request.getOutput(0));
      const size_t N = dimsElementCount(Probs.Dims);
      size_t Best = 0;
      for (size_t K = 1; K < N; ++K)
        if (elementAsDouble(Probs, K) > elementAsDouble(Probs, Best))
          Best = K;
      int64_t Label;
      std::memcpy(&Label, Labels.Bytes.data() + I * 8, 8);
      Correct += static_cast<int64_t>(Best) == Label;
    }
    std::vector<double> Sorted = Latencies;
    std::sort(Sorted.begin(), Sorted.end());
    const double Total = std::accumulate(Latencies.begin(), Latencies.end(), 0.0);
    const double Median = Sorted.empty() ? 0
                          : Sorted.size() % 2 ? Sorted[Sorted.size() / 2]
                                              : (Sorted[Sorted.size() / 2 - 1] + Sorted[Sorted.size() / 2]) / 2;
    const double Mean = Count ? Total / Count : 0;
    char Acc[32];
    std::snprintf(Acc, sizeof(Acc), "%.2f", Count ? 100.0 * Correct / Count : 0.0);
    Out << "bundled model " << Dir << ": " << Count << " held-out digits, accuracy " << Acc << "% (" << Correct << "/"
        << Count << "), latency median " << fmtMs(Median) << " ms mean " << fmtMs(Mean) << " ms, total "
        << fmtMs(Total) << " ms\n";
    Out << "(run optimium-run --help to run your own model)\n";
    Out.flush();
    return 0;
  } catch (const std::exception &E) {
    return fail(Err, E.what());
  } catch (...) {
    return fail(Err, "unknown error");
  }
}

int runModuleMain(int Argc, char **Argv) {
  RunModuleOptions O;
  try {
    O = parseFlags(Argc, Argv);
  } catch (const std::exception &E) {
    return fail(std::cerr, E.what());
  }
  return runModule(O, std::cout, std::cerr);
}

} // namespace tools
} // namespace optimium
