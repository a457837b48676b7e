// Little-endian byte writer and a bounds-checked reader for the compiled model folder's files.
// The reader never reads past its range: every get checks the bytes left, a failed check records
// one ContainerError naming the file and what was expected, and later gets return zeros, so a
// decoder can read a whole record and test ok() once.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/Status.h"

namespace optimium {
namespace runtime {
namespace detail {

class ByteWriter {
public:
  std::vector<uint8_t> Bytes;

  template <typename T> void put(T V) {
    static_assert(sizeof(T) <= 8, "scalar");
    uint8_t B[sizeof(T)];
    std::memcpy(B, &V, sizeof(T)); // x86-64 and AArch64 Linux are little-endian
    Bytes.insert(Bytes.end(), B, B + sizeof(T));
  }
  void u8(uint8_t V) { put(V); }
  void u32(uint32_t V) { put(V); }
  void u64(uint64_t V) { put(V); }
  void i32(int32_t V) { put(V); }
  void i64(int64_t V) { put(V); }
  void f32(float V) { put(V); }
  void f64(double V) { put(V); }
  void str(const std::string &S) {
    u32(static_cast<uint32_t>(S.size()));
    raw(S.data(), S.size());
  }
  void raw(const void *P, size_t N) {
    const uint8_t *B = static_cast<const uint8_t *>(P);
    Bytes.insert(Bytes.end(), B, B + N);
  }
  void padTo(size_t Alignment) {
    while (Bytes.size() % Alignment)
      Bytes.push_back(0);
  }
};

class ByteReader {
public:
  ByteReader() {}
  ByteReader(const uint8_t *Data, size_t Size, std::string File) : Data(Data), Size(Size), File(std::move(File)) {}

  bool ok() const { return Error.isOk(); }
  const Status &status() const { return Error; }
  size_t position() const { return Pos; }
  size_t remaining() const { return Error.isOk() ? Size - Pos : 0; }
  const std::string &file() const { return File; }

  /// Records the first error (ContainerError naming the file and the offset).
  template <typename... Args> void fail(const Args &...Parts) {
    if (Error.isOk())
      Error = makeError(ErrorCode::Container, "compiled model file '", File, "' is corrupt at byte ", Pos, ": ", Parts...);
  }

  template <typename T> T get(const char *What) {
    T V{};
    if (!Error.isOk())
      return V;
    if (Size - Pos < sizeof(T)) {
      fail("truncated: ", What, " needs ", sizeof(T), " bytes, ", Size - Pos, " left");
      return V;
    }
    std::memcpy(&V, Data + Pos, sizeof(T));
    Pos += sizeof(T);
    return V;
  }
  uint8_t u8(const char *What) { return get<uint8_t>(What); }
  uint32_t u32(const char *What) { return get<uint32_t>(What); }
  uint64_t u64(const char *What) { return get<uint64_t>(What); }
  int32_t i32(const char *What) { return get<int32_t>(What); }
  int64_t i64(const char *What) { return get<int64_t>(What); }
  float f32(const char *What) { return get<float>(What); }
  double f64(const char *What) { return get<double>(What); }
  bool flag(const char *What) {
    const uint8_t V = u8(What);
    if (V > 1)
      fail(What, " must be 0 or 1, found ", static_cast<int>(V));
    return V == 1;
  }
  std::string str(const char *What) {
    const uint32_t N = u32(What);
    if (!Error.isOk())
      return {};
    if (N > Size - Pos) {
      fail("truncated: ", What, " of ", N, " bytes, ", Size - Pos, " left");
      return {};
    }
    std::string S(reinterpret_cast<const char *>(Data + Pos), N);
    Pos += N;
    return S;
  }
  /// A count of items each at least MinItemBytes long: more than the bytes left can hold is an
  /// error (so a corrupt count never drives a long loop or a huge allocation).
  uint32_t count(const char *What, size_t MinItemBytes) {
    const uint32_t N = u32(What);
    if (Error.isOk() && MinItemBytes && N > (Size - Pos) / MinItemBytes) {
      fail(What, " is ", N, ", more than the ", Size - Pos, " bytes left can hold");
      return 0;
    }
    return Error.isOk() ? N : 0;
  }
  /// N raw bytes in place (null on error).
  const uint8_t *bytes(size_t N, const char *What) {
    if (!Error.isOk())
      return nullptr;
    if (N > Size - Pos) {
      fail("truncated: ", What, " of ", N, " bytes, ", Size - Pos, " left");
      return nullptr;
    }
    const uint8_t *P = Data + Pos;
    Pos += N;
    return P;
  }

private:
  const uint8_t *Data = nullptr;
  size_t Size = 0;
  size_t Pos = 0;
  std::string File;
  Status Error;
};

} // namespace detail
} // namespace runtime
} // namespace optimium
