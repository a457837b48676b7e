// .npy version 1.0: magic, little-endian header length, a Python dict literal padded to 64 bytes.
#include "core/NpyWriter.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace optimium {
namespace runtime {
namespace detail {

namespace {
const char *npyDescr(ElementType T) {
  switch (T) {
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
  case ElementType::BF16: return "<u2"; // numpy has no bfloat16: raw bits
  case ElementType::F32: return "<f4";
  case ElementType::F64: return "<f8";
  case ElementType::F8E4M3FN: case ElementType::F8E4M3FNUZ: case ElementType::F8E5M2:
  case ElementType::F8E5M2FNUZ: case ElementType::F8E8M0: case ElementType::F4E2M1:
  case ElementType::I4: case ElementType::U4: case ElementType::I2: case ElementType::U2:
    return "|u1"; // numpy has no such dtypes: the stored byte per element
  default: return nullptr;
  }
}
} // namespace

Status writeNpy(const std::string &Path, ElementType Type, const std::vector<int64_t> &Dims, const void *Data) {
  const char *Descr = npyDescr(Type);
  if (!Descr)
    return makeError(ErrorCode::Type, "cannot write ", toString(Type), " tensors as .npy ('", Path, "')");
  std::string Shape = "(";
  size_t Count = 1;
  for (size_t I = 0; I < Dims.size(); ++I) {
    Shape += std::to_string(Dims[I]) + (Dims.size() == 1 ? "," : (I + 1 < Dims.size() ? ", " : ""));
    Count *= static_cast<size_t>(Dims[I]);
  }
  Shape += ")";
  std::string Header = std::string("{'descr': '") + Descr + "', 'fortran_order': False, 'shape': " + Shape + ", }";
  const size_t Total = 10 + Header.size() + 1;
  Header.append((64 - Total % 64) % 64, ' ');
  Header += '\n';
  std::FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F)
    return makeError(ErrorCode::IO, "cannot write '", Path, "': ", std::strerror(errno));
  const unsigned char Magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  const uint16_t Len = static_cast<uint16_t>(Header.size());
  const unsigned char LenBytes[2] = {static_cast<unsigned char>(Len & 0xff), static_cast<unsigned char>(Len >> 8)};
  const size_t Bytes = Count * getElementSize(Type);
  bool Ok = std::fwrite(Magic, 1, 8, F) == 8 && std::fwrite(LenBytes, 1, 2, F) == 2 &&
            std::fwrite(Header.data(), 1, Header.size(), F) == Header.size() &&
            (Bytes == 0 || std::fwrite(Data, 1, Bytes, F) == Bytes);
  Ok = (std::fclose(F) == 0) && Ok;
  if (!Ok)
    return makeError(ErrorCode::IO, "failed writing '", Path, "'");
  return Status::ok();
}

} // namespace detail
} // namespace runtime
} // namespace optimium
