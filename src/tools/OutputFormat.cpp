// Printing, writing and comparing results; see OutputFormat.h.
#include "tools/OutputFormat.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tools/ElementText.h"
#include "tools/InputSpec.h"
#include "tools/TextUtil.h"

namespace optimium {
namespace tools {

namespace rt = optimium::runtime;
using rt::ElementType;

namespace {

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

} // namespace

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

} // namespace tools
} // namespace optimium
