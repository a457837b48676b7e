// Little-endian byte buffers for the remote protocol's payloads: Writer appends, Reader consumes
// with bounds checks. A Reader never trusts a count: every read is checked against the bytes left,
// so a hostile payload costs at most its own size (DecodeError otherwise).
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace optimium {
namespace remote {

/// A payload that does not follow the documented layout (truncated, bad count, bad enum value).
class DecodeError : public std::runtime_error {
public:
  explicit DecodeError(const std::string &Message) : std::runtime_error(Message) {}
};

class Writer {
public:
  void u8(uint8_t V) { Buf.push_back(V); }
  void boolean(bool V) { u8(V ? 1 : 0); }
  void u16(uint16_t V) { put(V); }
  void u32(uint32_t V) { put(V); }
  void u64(uint64_t V) { put(V); }
  void i32(int32_t V) { put(static_cast<uint32_t>(V)); }
  void i64(int64_t V) { put(static_cast<uint64_t>(V)); }
  void f32(float V) {
    uint32_t B;
    std::memcpy(&B, &V, 4);
    put(B);
  }
  void str(const std::string &S) {
    u32(static_cast<uint32_t>(S.size()));
    raw(S.data(), S.size());
  }
  void raw(const void *Data, size_t Size) {
    if (Size)
      Buf.insert(Buf.end(), static_cast<const uint8_t *>(Data), static_cast<const uint8_t *>(Data) + Size);
  }
  /// Room for Size bytes written in place (a tensor's data), returned as a pointer.
  uint8_t *grow(size_t Size) {
    const size_t At = Buf.size();
    Buf.resize(At + Size);
    return Buf.data() + At;
  }
  std::vector<uint8_t> &buffer() { return Buf; }
  std::vector<uint8_t> take() { return std::move(Buf); }

private:
  template <typename T> void put(T V) {
    uint8_t B[sizeof(T)];
    for (size_t I = 0; I < sizeof(T); ++I)
      B[I] = static_cast<uint8_t>(V >> (8 * I));
    raw(B, sizeof(T));
  }
  std::vector<uint8_t> Buf;
};

class Reader {
public:
  Reader(const uint8_t *Data, size_t Size) : P(Data), N(Size) {}
  explicit Reader(const std::vector<uint8_t> &V) : P(V.data()), N(V.size()) {}

  uint8_t u8() { return get<uint8_t>(); }
  bool boolean() {
    const uint8_t V = u8();
    if (V > 1)
      throw DecodeError("bad boolean " + std::to_string(V));
    return V == 1;
  }
  uint16_t u16() { return get<uint16_t>(); }
  uint32_t u32() { return get<uint32_t>(); }
  uint64_t u64() { return get<uint64_t>(); }
  int32_t i32() { return static_cast<int32_t>(get<uint32_t>()); }
  int64_t i64() { return static_cast<int64_t>(get<uint64_t>()); }
  float f32() {
    const uint32_t B = get<uint32_t>();
    float V;
    std::memcpy(&V, &B, 4);
    return V;
  }
  std::string str() {
    const uint32_t Len = u32();
    const uint8_t *D = raw(Len);
    return std::string(reinterpret_cast<const char *>(D), Len);
  }
  const uint8_t *raw(size_t Size) {
    need(Size);
    const uint8_t *D = P + Pos;
    Pos += Size;
    return D;
  }
  /// A count of items each at least MinItemBytes long: refused when the payload cannot hold them.
  uint32_t count(size_t MinItemBytes = 1) {
    const uint32_t C = u32();
    if (MinItemBytes && C > remaining() / MinItemBytes)
      throw DecodeError("count " + std::to_string(C) + " exceeds the payload");
    return C;
  }
  size_t remaining() const { return N - Pos; }
  void expectEnd() const {
    if (Pos != N)
      throw DecodeError(std::to_string(N - Pos) + " trailing byte(s) in the payload");
  }

private:
  void need(size_t Size) const {
    if (Size > N - Pos)
      throw DecodeError("truncated payload (need " + std::to_string(Size) + " byte(s), " +
                        std::to_string(N - Pos) + " left)");
  }
  template <typename T> T get() {
    const uint8_t *B = raw(sizeof(T));
    T V = 0;
    for (size_t I = 0; I < sizeof(T); ++I)
      V = static_cast<T>(V | (static_cast<T>(B[I]) << (8 * I)));
    return V;
  }
  const uint8_t *P;
  size_t N;
  size_t Pos = 0;
};

} // namespace remote
} // namespace optimium
