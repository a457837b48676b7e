// .npy reading/writing; see Npy.h. Format reference: numpy/lib/format.py (NEP 1).
#include "core/Npy.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace optimium {
namespace npy {

using runtime::ElementType;

size_t HostArray::elementCount() const { return dimsElementCount(Dims); }

size_t elementByteSize(ElementType Type) {
  switch (Type) {
  case ElementType::Bool:
  case ElementType::I8:
  case ElementType::U8:
    return 1;
  // Low-precision types: one stored byte per element (see ElementType.h).
  case ElementType::F8E4M3FN:
  case ElementType::F8E4M3FNUZ:
  case ElementType::F8E5M2:
  case ElementType::F8E5M2FNUZ:
  case ElementType::F8E8M0:
  case ElementType::F4E2M1:
  case ElementType::I4:
  case ElementType::U4:
  case ElementType::I2:
  case ElementType::U2:
    return 1;
  case ElementType::I16:
  case ElementType::U16:
  case ElementType::F16:
  case ElementType::BF16:
    return 2;
  case ElementType::I32:
  case ElementType::U32:
  case ElementType::F32:
    return 4;
  case ElementType::I64:
  case ElementType::U64:
  case ElementType::F64:
    return 8;
  default:
    return 0;
  }
}

size_t dimsElementCount(const std::vector<int64_t> &Dims) {
  size_t N = 1;
  for (int64_t D : Dims) {
    if (D < 0)
      throw NpyError("negative dimension " + std::to_string(D));
    if (D != 0 && N > std::numeric_limits<size_t>::max() / static_cast<size_t>(D))
      throw NpyError("shape has too many elements");
    N *= static_cast<size_t>(D);
  }
  return N;
}

std::string npyDescr(ElementType Type) {
  switch (Type) {
  case ElementType::Bool: return "|b1";
  case ElementType::I8: return "|i1";
  case ElementType::U8: return "|u1";
  case ElementType::I16: return "<i2";
  case ElementType::U16: return "<u2";
  case ElementType::I32: return "<i4";
  case ElementType::U32: return "<u4";
  case ElementType::I64: return "<i8";
  case ElementType::U64: return "<u8";
  case ElementType::F16: return "<f2";
  case ElementType::BF16: return "<u2"; // no NumPy dtype: raw bits as uint16
  case ElementType::F32: return "<f4";
  case ElementType::F64: return "<f8";
  case ElementType::F8E4M3FN:
  case ElementType::F8E4M3FNUZ:
  case ElementType::F8E5M2:
  case ElementType::F8E5M2FNUZ:
  case ElementType::F8E8M0:
  case ElementType::F4E2M1:
  case ElementType::I4:
  case ElementType::U4:
  case ElementType::I2:
  case ElementType::U2:
    return "|u1"; // no NumPy dtype: the stored byte per element (float8 bits, 4/2-bit codes)
  default:
    throw NpyError("element type cannot be stored in a .npy file");
  }
}

namespace {

struct Descr {
  ElementType Type = ElementType::Undefined;
  bool BigEndian = false;
};

Descr parseDescr(const std::string &D) {
  Descr R;
  if (D.size() < 2)
    throw NpyError("unsupported dtype '" + D + "'");
  char Order = D[0];
  std::string Body = D.substr(1);
  if (Order != '<' && Order != '>' && Order != '|' && Order != '=') {
    Order = '=';
    Body = D;
  }
  R.BigEndian = Order == '>';
  static const struct {
    const char *Name;
    ElementType Type;
  } Table[] = {{"b1", ElementType::Bool}, {"i1", ElementType::I8},  {"u1", ElementType::U8},
               {"i2", ElementType::I16},  {"u2", ElementType::U16}, {"i4", ElementType::I32},
               {"u4", ElementType::U32},  {"i8", ElementType::I64}, {"u8", ElementType::U64},
               {"f2", ElementType::F16},  {"f4", ElementType::F32}, {"f8", ElementType::F64},
               {"?", ElementType::Bool}};
  for (const auto &E : Table)
    if (Body == E.Name) {
      R.Type = E.Type;
      return R;
    }
  throw NpyError("unsupported dtype '" + D +
                  "' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, little- or big-endian)");
}

// A tiny parser of the Python dict literal of a .npy header.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &S) : S(S) {}

  void parse(std::string &DescrOut, bool &FortranOut, std::vector<int64_t> &ShapeOut) {
    bool HaveDescr = false, HaveFortran = false, HaveShape = false;
    expect('{');
    while (true) {
      skipWs();
      if (peek() == '}') {
        ++P;
        break;
      }
      std::string Key = parseString();
      expect(':');
      skipWs();
      if (Key == "descr") {
        if (peek() != '\'' && peek() != '"')
          fail("structured dtypes are not supported");
        DescrOut = parseString();
        HaveDescr = true;
      } else if (Key == "fortran_order") {
        FortranOut = parseBool();
        HaveFortran = true;
      } else if (Key == "shape") {
        ShapeOut = parseTuple();
        HaveShape = true;
      } else {
        fail("unexpected header key '" + Key + "'");
      }
      skipWs();
      if (peek() == ',') {
        ++P;
        continue;
      }
      expect('}');
      break;
    }
    if (!HaveDescr || !HaveFortran || !HaveShape)
      fail("header lacks 'descr', 'fortran_order' or 'shape'");
  }

private:
  [[noreturn]] void fail(const std::string &Why) { throw NpyError("malformed .npy header: " + Why); }
  char peek() const { return P < S.size() ? S[P] : '\0'; }
  void skipWs() {
    while (P < S.size() && std::isspace(static_cast<unsigned char>(S[P])))
      ++P;
  }
  void expect(char C) {
    skipWs();
    if (peek() != C)
      fail(std::string("expected '") + C + "'");
    ++P;
  }
  std::string parseString() {
    skipWs();
    char Q = peek();
    if (Q != '\'' && Q != '"')
      fail("expected a string");
    ++P;
    size_t End = S.find(Q, P);
    if (End == std::string::npos)
      fail("unterminated string");
    std::string R = S.substr(P, End - P);
    P = End + 1;
    return R;
  }
  bool parseBool() {
    if (S.compare(P, 4, "True") == 0) {
      P += 4;
      return true;
    }
    if (S.compare(P, 5, "False") == 0) {
      P += 5;
      return false;
    }
    fail("expected True or False");
  }
  std::vector<int64_t> parseTuple() {
    std::vector<int64_t> R;
    expect('(');
    while (true) {
      skipWs();
      if (peek() == ')') {
        ++P;
        return R;
      }
      size_t Start = P;
      while (P < S.size() && std::isdigit(static_cast<unsigned char>(S[P])))
        ++P;
      if (Start == P)
        fail("expected a dimension");
      // Python 2 era files may write "3L".
      std::string Digits = S.substr(Start, P - Start);
      if (peek() == 'L')
        ++P;
      if (Digits.size() > 18)
        fail("dimension too large");
      R.push_back(std::stoll(Digits));
      skipWs();
      if (peek() == ',')
        ++P;
      else if (peek() != ')')
        fail("expected ',' or ')' in shape");
    }
  }

  const std::string &S;
  size_t P = 0;
};

uint32_t readLE(const unsigned char *P, int N) {
  uint32_t V = 0;
  for (int I = N - 1; I >= 0; --I)
    V = (V << 8) | P[I];
  return V;
}

} // namespace

ElementType elementTypeFromNpyDescr(const std::string &D) { return parseDescr(D).Type; }

bool atNpyEnd(std::istream &In) {
  return In.peek() == std::char_traits<char>::eof();
}

HostArray readNpy(std::istream &In, const std::string &Name) {
  try {
    unsigned char Magic[8];
    In.read(reinterpret_cast<char *>(Magic), 8);
    if (In.gcount() == 0)
      throw NpyError("no array left to read (end of file)");
    if (In.gcount() != 8 || std::memcmp(Magic, "\x93NUMPY", 6) != 0)
      throw NpyError("not a .npy file (bad magic)");
    const int Major = Magic[6];
    uint32_t HeaderLen = 0;
    if (Major == 1) {
      unsigned char L[2];
      In.read(reinterpret_cast<char *>(L), 2);
      if (In.gcount() != 2)
        throw NpyError("truncated .npy header");
      HeaderLen = readLE(L, 2);
    } else if (Major == 2 || Major == 3) {
      unsigned char L[4];
      In.read(reinterpret_cast<char *>(L), 4);
      if (In.gcount() != 4)
        throw NpyError("truncated .npy header");
      HeaderLen = readLE(L, 4);
    } else {
      throw NpyError("unsupported .npy format version " + std::to_string(Major) + "." +
                      std::to_string(Magic[7]));
    }
    if (HeaderLen > (1u << 24))
      throw NpyError("malformed .npy header: header too long");
    std::string Header(HeaderLen, '\0');
    In.read(&Header[0], HeaderLen);
    if (static_cast<uint32_t>(In.gcount()) != HeaderLen)
      throw NpyError("truncated .npy header");

    std::string DescrStr;
    bool Fortran = false;
    HostArray A;
    HeaderParser(Header).parse(DescrStr, Fortran, A.Dims);
    const Descr D = parseDescr(DescrStr);
    A.Type = D.Type;
    const size_t Count = dimsElementCount(A.Dims);
    if (Fortran && A.Dims.size() > 1) {
      size_t NonTrivial = 0;
      for (int64_t Dim : A.Dims)
        NonTrivial += Dim > 1;
      if (NonTrivial > 1)
        throw NpyError("Fortran-order arrays are not supported (save it with "
                        "numpy.ascontiguousarray)");
    }
    const size_t Elem = elementByteSize(A.Type);
    if (Count > std::numeric_limits<size_t>::max() / Elem)
      throw NpyError("array too large");
    A.Bytes.resize(Count * Elem);
    if (!A.Bytes.empty()) {
      In.read(reinterpret_cast<char *>(A.Bytes.data()), static_cast<std::streamsize>(A.Bytes.size()));
      const size_t Got = static_cast<size_t>(In.gcount());
      if (Got != A.Bytes.size())
        throw NpyError("truncated data: expected " + std::to_string(A.Bytes.size()) + " bytes, got " +
                        std::to_string(Got));
    }
    if (D.BigEndian && Elem > 1)
      for (size_t I = 0; I < Count; ++I)
        std::reverse(A.Bytes.begin() + I * Elem, A.Bytes.begin() + (I + 1) * Elem);
    return A;
  } catch (const NpyError &E) {
    throw NpyError(Name + ": " + E.what());
  }
}

HostArray readNpyFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    throw NpyError(Path + ": cannot open file");
  return readNpy(In, Path);
}

std::vector<HostArray> readAllNpy(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    throw NpyError(Path + ": cannot open file");
  std::vector<HostArray> R;
  while (!atNpyEnd(In))
    R.push_back(readNpy(In, Path));
  return R;
}

void writeNpy(std::ostream &Out, ElementType Type, const std::vector<int64_t> &Dims, const void *Data,
              size_t Bytes) {
  const size_t Expected = dimsElementCount(Dims) * elementByteSize(Type);
  std::ostringstream H;
  H << "{'descr': '" << npyDescr(Type) << "', 'fortran_order': False, 'shape': (";
  for (size_t I = 0; I < Dims.size(); ++I)
    H << (I ? ", " : "") << Dims[I];
  if (Dims.size() == 1)
    H << ",";
  H << "), }";
  if (Bytes != Expected)
    throw NpyError("data size " + std::to_string(Bytes) + " does not match the shape (" +
                    std::to_string(Expected) + " bytes)");
  std::string Header = H.str();
  // Pad so that magic + version + length + header (ending in '\n') is a multiple of 64 bytes.
  size_t Prefix = 10;
  size_t Total = Prefix + Header.size() + 1;
  if ((Total + 63) / 64 * 64 - Prefix > 65535)
    Prefix = 12;
  Total = Prefix + Header.size() + 1;
  Header.append((64 - Total % 64) % 64, ' ');
  Header.push_back('\n');
  const uint32_t Len = static_cast<uint32_t>(Header.size());
  Out.write("\x93NUMPY", 6);
  if (Prefix == 10) {
    const char V[4] = {1, 0, static_cast<char>(Len & 0xff), static_cast<char>((Len >> 8) & 0xff)};
    Out.write(V, 4);
  } else {
    const char V[6] = {2, 0, static_cast<char>(Len & 0xff), static_cast<char>((Len >> 8) & 0xff),
                       static_cast<char>((Len >> 16) & 0xff), static_cast<char>((Len >> 24) & 0xff)};
    Out.write(V, 6);
  }
  Out.write(Header.data(), static_cast<std::streamsize>(Header.size()));
  if (Bytes)
    Out.write(static_cast<const char *>(Data), static_cast<std::streamsize>(Bytes));
  if (!Out)
    throw NpyError("write failed");
}

void writeNpy(std::ostream &Out, const HostArray &A) {
  writeNpy(Out, A.Type, A.Dims, A.Bytes.data(), A.Bytes.size());
}

void writeNpyFile(const std::string &Path, ElementType Type, const std::vector<int64_t> &Dims, const void *Data,
                  size_t Bytes, bool Append) {
  std::ofstream Out(Path, std::ios::binary | (Append ? std::ios::app : std::ios::trunc));
  if (!Out)
    throw NpyError(Path + ": cannot open file for writing");
  try {
    writeNpy(Out, Type, Dims, Data, Bytes);
    Out.flush();
    if (!Out)
      throw NpyError("write failed");
  } catch (const NpyError &E) {
    throw NpyError(Path + ": " + E.what());
  }
}

void writeNpyFile(const std::string &Path, const HostArray &A, bool Append) {
  writeNpyFile(Path, A.Type, A.Dims, A.Bytes.data(), A.Bytes.size(), Append);
}

} // namespace npy
} // namespace optimium
