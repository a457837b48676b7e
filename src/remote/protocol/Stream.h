// A byte stream the protocol reads frames from and writes frames to: a TCP socket, a TLS session
// over one (src/remote/transport/), or memory (the fuzzer). Errors throw StreamError.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace optimium {
namespace remote {

/// The connection failed: reset, closed in the middle of a frame, a TLS error, a timeout.
class StreamError : public std::runtime_error {
public:
  explicit StreamError(const std::string &Message) : std::runtime_error(Message) {}
};

class Stream {
public:
  virtual ~Stream() = default;
  /// Reads 1..Size bytes; 0 at an orderly end of stream. Blocks until something arrives.
  virtual size_t readSome(void *Data, size_t Size) = 0;
  /// Waits up to TimeoutMs (-1 = forever) for readable data; false on timeout.
  virtual bool waitReadable(int TimeoutMs) = 0;
  virtual void writeAll(const void *Data, size_t Size) = 0;
  /// Wakes a blocked reader and ends the stream in both directions (thread-safe, idempotent).
  virtual void shutdown() = 0;

  /// Reads exactly Size bytes. false when the stream ended before the first byte (and AtStart);
  /// StreamError when it ends in the middle.
  bool readExact(void *Data, size_t Size, bool AtStart = false) {
    size_t Got = 0;
    while (Got < Size) {
      const size_t N = readSome(static_cast<char *>(Data) + Got, Size - Got);
      if (N == 0) {
        if (Got == 0 && AtStart)
          return false;
        throw StreamError("connection closed in the middle of a frame");
      }
      Got += N;
    }
    return true;
  }
};

} // namespace remote
} // namespace optimium
