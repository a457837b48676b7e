// HTTP/1.1 request parsing for the Open Inference Protocol endpoint: the request head, Content-Length
// and chunked bodies, limits, and response serialization. Pure functions over bytes (no sockets), so
// the unit tests and the fuzzer drive them directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace optimium {
namespace remote {
namespace oip {

/// An HTTP error to answer with: status code and a message for the JSON {"error": ...} body.
struct HttpError {
  int Status = 0;
  std::string Message;
};

struct HttpRequest {
  std::string Method;  ///< "GET", "POST", ...
  std::string Target;  ///< as sent: "/v2/models/x/infer?a=b"
  std::string Path;    ///< percent-decoded path without the query
  std::string Query;   ///< raw query string (after '?'), may be empty
  int MinorVersion = 1; ///< HTTP/1.<MinorVersion>
  std::vector<std::pair<std::string, std::string>> Headers; ///< names lower-cased, values trimmed
  std::string Body;

  // Derived from the headers by parseRequestHead().
  bool HasContentLength = false;
  uint64_t ContentLength = 0;
  bool Chunked = false;
  bool KeepAlive = true;
  bool ExpectContinue = false;

  /// The value of header Name (lower-case), or null.
  const std::string *header(const std::string &Name) const;
};

struct HttpLimits {
  size_t MaxHeadBytes = 64 << 10;
  size_t MaxBodyBytes = 64 << 20;
};

/// Finds the end of the request head ("\r\n\r\n", bare "\n\n" accepted) in Data[0..Size):
/// the number of bytes the head takes including its terminator, or 0 when it is not complete.
/// From lets a caller resume the search where it stopped (a few bytes before the previous end).
size_t findHeadEnd(const char *Data, size_t Size, size_t From = 0);

/// Parses a complete request head (as delimited by findHeadEnd) into Out (everything but Body).
/// Errors: 400 malformed, 501 unknown transfer coding, 505 other HTTP versions, 413 a
/// Content-Length over Limits.MaxBodyBytes, 411 a POST/PUT without a length or chunked coding.
bool parseRequestHead(const char *Data, size_t Size, const HttpLimits &Limits, HttpRequest &Out,
                      HttpError &Err);

/// Incremental decoder of a chunked body (RFC 9112 section 7.1): chunk extensions and trailers are
/// read and ignored. Feed it bytes as they arrive.
class ChunkedDecoder {
public:
  enum class Result { NeedMore, Done, Error };
  explicit ChunkedDecoder(size_t MaxBodyBytes) : MaxBody(MaxBodyBytes) {}
  /// Consumes bytes of Data[0..Size) (sets Consumed; on Done the rest belongs to the next
  /// request) and appends the payload to Body.
  Result feed(const char *Data, size_t Size, std::string &Body, size_t &Consumed, HttpError &Err);

private:
  enum class State { Size, SizeLineEnd, Data, DataCr, DataLf, Trailer, Done };
  State St = State::Size;
  uint64_t Remaining = 0;
  bool SawDigit = false;
  bool InExtension = false;
  size_t LineLength = 0; // bytes of the current size or trailer line (bounded)
  size_t MaxBody;
};

/// Percent-decodes a path ("%2F" -> "/"); false on a malformed escape or a decoded NUL.
bool percentDecode(const std::string &In, std::string &Out);

/// One response, serialized by serializeResponse().
struct HttpResponse {
  int Status = 200;
  std::vector<std::pair<std::string, std::string>> Headers; ///< besides Content-Length/Connection
  std::string Body;
  bool Close = false; ///< send "Connection: close" and close the connection after it
};

const char *reasonPhrase(int Status);

/// The status line and headers (Content-Length and Connection added); the body is sent after it.
std::string serializeResponseHead(const HttpResponse &Response, bool HeadRequest = false);

/// A JSON error response: {"error": Message}.
HttpResponse errorResponse(int Status, const std::string &Message);

} // namespace oip
} // namespace remote
} // namespace optimium
