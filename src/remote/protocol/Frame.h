// The remote protocol's framing (docs/remote-protocol.md): a 24-byte little-endian header
// (magic, version, message type, flags, request id, payload length) and the payload, zstd-
// compressed when the connection negotiated compression and the payload is large enough.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "remote/protocol/Stream.h"

namespace optimium {
namespace remote {

/// "OPRM" as the first four bytes on the wire.
constexpr uint32_t kFrameMagic = 0x4D52504Fu;
constexpr uint16_t kProtocolVersion = 2; // 2: PerModelOptions ends with the compute precision
constexpr size_t kFrameHeaderSize = 24;
/// Largest payload (after decompression) a peer accepts unless configured otherwise.
constexpr uint64_t kDefaultMaxMessageBytes = 256ull << 20;
/// Payloads smaller than this are never compressed.
constexpr size_t kCompressionThreshold = 4096;

enum FrameFlags : uint32_t {
  kFlagCompressed = 1u, ///< payload = u64 uncompressed size + one zstd frame
};

enum class MsgType : uint16_t {
  // Handshake.
  ClientHello = 1,
  ServerHello = 2,
  // Requests (client -> server); each is answered by Ok or Error with the same request id.
  LoadModel = 16,
  ModelInfo = 17,
  Infer = 18,
  Profile = 19,
  Cancel = 20,
  SetTensor = 21,
  GetTensor = 22,
  GetProfileEvents = 23,
  GetProfileDurations = 24,
  InferShape = 25,
  IsSavedTensor = 26,
  ReleaseModel = 27,
  CreateGroup = 32,
  GroupAdd = 33,
  MemberRun = 34,
  ReleaseGroup = 35,
  ReleaseMember = 36,
  Close = 48,
  // Replies and notices (server -> client).
  Ok = 64,
  Error = 65,
  RunDone = 66, ///< an infer()/profile() accepted earlier ended (request id of that call)
};

/// Name of a message type for logs ("LoadModel"; "type 999" when unknown).
std::string toString(MsgType Type);
bool isKnownMsgType(uint16_t Type);

struct FrameHeader {
  uint16_t Version = kProtocolVersion;
  uint16_t Type = 0;
  uint32_t Flags = 0;
  uint32_t RequestId = 0;
  uint64_t PayloadBytes = 0; ///< on the wire
};

void encodeFrameHeader(const FrameHeader &H, uint8_t Out[kFrameHeaderSize]);
/// Parses and checks a header: the magic, known flags and PayloadBytes <= MaxBytes (compressed
/// payloads: + 8 + the zstd bound). Throws FrameError naming what is wrong.
FrameHeader decodeFrameHeader(const uint8_t In[kFrameHeaderSize], uint64_t MaxBytes);

/// A frame that breaks the framing rules (bad magic, oversized, undecompressable). The peer's
/// connection ends: framing errors cannot be resynchronized.
class FrameError : public std::runtime_error {
public:
  explicit FrameError(const std::string &Message) : std::runtime_error(Message) {}
};

struct Frame {
  FrameHeader Header;
  std::vector<uint8_t> Payload; ///< decompressed
  MsgType type() const { return static_cast<MsgType>(Header.Type); }
};

/// Decompresses a compressed payload in place (a no-op for a raw one); FrameError when the
/// declared size exceeds MaxBytes or the data is not one valid zstd frame of that size.
void decodePayload(Frame &F, uint64_t MaxBytes);

/// Reads one frame. false at an orderly end of stream before a header; FrameError / StreamError
/// otherwise. The header's version is returned as sent (the handshake checks it).
bool readFrame(Stream &S, uint64_t MaxBytes, Frame &Out);

/// Writes frames to a stream from many threads, one frame at a time.
class FrameWriter {
public:
  explicit FrameWriter(Stream &S) : S(S) {}
  void setCompression(bool On) { Compress = On; }
  bool compression() const { return Compress; }
  /// Compresses Payload when compression is on and it is at least kCompressionThreshold bytes
  /// (and only if that makes it smaller).
  void write(MsgType Type, uint32_t RequestId, const std::vector<uint8_t> &Payload);

private:
  Stream &S;
  bool Compress = false;
  std::mutex Mu;
};

} // namespace remote
} // namespace optimium
