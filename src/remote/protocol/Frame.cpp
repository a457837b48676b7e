// Frame headers, zstd payload compression and frame I/O over a Stream.
#include "remote/protocol/Frame.h"

#include <zstd.h>

#include "remote/protocol/Wire.h"

namespace optimium {
namespace remote {

std::string toString(MsgType Type) {
  switch (Type) {
  case MsgType::ClientHello: return "ClientHello";
  case MsgType::ServerHello: return "ServerHello";
  case MsgType::LoadModel: return "LoadModel";
  case MsgType::ModelInfo: return "ModelInfo";
  case MsgType::Infer: return "Infer";
  case MsgType::Profile: return "Profile";
  case MsgType::Cancel: return "Cancel";
  case MsgType::SetTensor: return "SetTensor";
  case MsgType::GetTensor: return "GetTensor";
  case MsgType::GetProfileEvents: return "GetProfileEvents";
  case MsgType::GetProfileDurations: return "GetProfileDurations";
  case MsgType::InferShape: return "InferShape";
  case MsgType::IsSavedTensor: return "IsSavedTensor";
  case MsgType::ReleaseModel: return "ReleaseModel";
  case MsgType::CreateGroup: return "CreateGroup";
  case MsgType::GroupAdd: return "GroupAdd";
  case MsgType::MemberRun: return "MemberRun";
  case MsgType::ReleaseGroup: return "ReleaseGroup";
  case MsgType::ReleaseMember: return "ReleaseMember";
  case MsgType::Close: return "Close";
  case MsgType::Ok: return "Ok";
  case MsgType::Error: return "Error";
  case MsgType::RunDone: return "RunDone";
  }
  return "type " + std::to_string(static_cast<unsigned>(Type));
}

bool isKnownMsgType(uint16_t Type) { return toString(static_cast<MsgType>(Type)).rfind("type ", 0) != 0; }

void encodeFrameHeader(const FrameHeader &H, uint8_t Out[kFrameHeaderSize]) {
  Writer W;
  W.u32(kFrameMagic);
  W.u16(H.Version);
  W.u16(H.Type);
  W.u32(H.Flags);
  W.u32(H.RequestId);
  W.u64(H.PayloadBytes);
  std::memcpy(Out, W.buffer().data(), kFrameHeaderSize);
}

FrameHeader decodeFrameHeader(const uint8_t In[kFrameHeaderSize], uint64_t MaxBytes) {
  Reader R(In, kFrameHeaderSize);
  const uint32_t Magic = R.u32();
  if (Magic != kFrameMagic) {
    // A TLS ClientHello starts with 0x16 0x03: name the likely cause.
    if (In[0] == 0x16 && In[1] == 0x03)
      throw FrameError("bad frame magic: the peer speaks TLS (is TLS enabled on one side only?)");
    throw FrameError("bad frame magic (not an Optimium remote peer)");
  }
  FrameHeader H;
  H.Version = R.u16();
  H.Type = R.u16();
  H.Flags = R.u32();
  H.RequestId = R.u32();
  H.PayloadBytes = R.u64();
  if (H.Flags & ~static_cast<uint32_t>(kFlagCompressed))
    throw FrameError("unknown frame flags " + std::to_string(H.Flags));
  uint64_t Limit = MaxBytes;
  if (H.Flags & kFlagCompressed)
    Limit = 8 + ZSTD_compressBound(static_cast<size_t>(MaxBytes));
  if (H.PayloadBytes > Limit)
    throw FrameError("frame of " + std::to_string(H.PayloadBytes) + " bytes exceeds the limit of " +
                     std::to_string(MaxBytes) + " bytes");
  return H;
}

void decodePayload(Frame &F, uint64_t MaxBytes) {
  if (!(F.Header.Flags & kFlagCompressed))
    return;
  Reader R(F.Payload);
  uint64_t Raw;
  try {
    Raw = R.u64();
  } catch (const DecodeError &) {
    throw FrameError("compressed payload without its size");
  }
  if (Raw > MaxBytes)
    throw FrameError("compressed payload of " + std::to_string(Raw) + " bytes exceeds the limit of " +
                     std::to_string(MaxBytes) + " bytes");
  const size_t In = R.remaining();
  const uint8_t *Src = R.raw(In);
  const unsigned long long Declared = ZSTD_getFrameContentSize(Src, In);
  if (Declared != Raw)
    throw FrameError("compressed payload: zstd frame size does not match the declared size");
  std::vector<uint8_t> Out(static_cast<size_t>(Raw));
  const size_t Got = ZSTD_decompress(Out.data(), Out.size(), Src, In);
  if (ZSTD_isError(Got) || Got != Raw)
    throw FrameError(std::string("compressed payload: ") +
                     (ZSTD_isError(Got) ? ZSTD_getErrorName(Got) : "size mismatch"));
  F.Payload = std::move(Out);
  F.Header.Flags &= ~static_cast<uint32_t>(kFlagCompressed);
}

bool readFrame(Stream &S, uint64_t MaxBytes, Frame &Out) {
  uint8_t H[kFrameHeaderSize];
  if (!S.readExact(H, 1, /*AtStart=*/true))
    return false;
  S.readExact(H + 1, kFrameHeaderSize - 1);
  Out.Header = decodeFrameHeader(H, MaxBytes);
  Out.Payload.resize(static_cast<size_t>(Out.Header.PayloadBytes));
  if (!Out.Payload.empty())
    S.readExact(Out.Payload.data(), Out.Payload.size());
  decodePayload(Out, MaxBytes);
  return true;
}

namespace {

/// Whether compressing Payload is likely to pay: a large payload is probed first by compressing a
/// 16 KiB sample from its middle (tensor bytes, past the message's header fields); random-looking
/// data (float noise, already-compressed images) is sent raw without paying a full compression.
bool worthCompressing(const std::vector<uint8_t> &Payload) {
  constexpr size_t kProbeBytes = 16 * 1024;
  if (Payload.size() < 4 * kProbeBytes)
    return true;
  thread_local std::vector<uint8_t> Probe(ZSTD_compressBound(kProbeBytes));
  const uint8_t *Sample = Payload.data() + (Payload.size() - kProbeBytes) / 2;
  const size_t N = ZSTD_compress(Probe.data(), Probe.size(), Sample, kProbeBytes, 1);
  return !ZSTD_isError(N) && N * 10 <= kProbeBytes * 9; // at least 10% smaller
}

} // namespace

void FrameWriter::write(MsgType Type, uint32_t RequestId, const std::vector<uint8_t> &Payload) {
  FrameHeader H;
  H.Type = static_cast<uint16_t>(Type);
  H.RequestId = RequestId;
  std::vector<uint8_t> Packed;
  const std::vector<uint8_t> *Body = &Payload;
  if (Compress && Payload.size() >= kCompressionThreshold && worthCompressing(Payload)) {
    Packed.resize(8 + ZSTD_compressBound(Payload.size()));
    const size_t N = ZSTD_compress(Packed.data() + 8, Packed.size() - 8, Payload.data(), Payload.size(), 1);
    // Sent compressed only when it saves at least 1/16: decompressing costs the receiver too.
    if (!ZSTD_isError(N) && (N + 8) * 16 <= Payload.size() * 15) {
      Writer W;
      W.u64(Payload.size());
      std::memcpy(Packed.data(), W.buffer().data(), 8);
      Packed.resize(8 + N);
      Body = &Packed;
      H.Flags |= kFlagCompressed;
    }
  }
  H.PayloadBytes = Body->size();
  uint8_t Head[kFrameHeaderSize];
  encodeFrameHeader(H, Head);
  std::lock_guard<std::mutex> Lock(Mu);
  // Small frames go out in one write (one TCP segment with TCP_NODELAY).
  if (Body->size() <= 64 * 1024) {
    std::vector<uint8_t> All(Head, Head + kFrameHeaderSize);
    All.insert(All.end(), Body->begin(), Body->end());
    S.writeAll(All.data(), All.size());
  } else {
    S.writeAll(Head, kFrameHeaderSize);
    S.writeAll(Body->data(), Body->size());
  }
}

} // namespace remote
} // namespace optimium
