// HTTP/1.1 request parsing and response serialization (see Http.h).
#include "Http.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include <nlohmann/json.hpp>

namespace optimium {
namespace remote {
namespace oip {

namespace {

bool isTokenChar(char C) {
  // RFC 9110 tchar.
  if (std::isalnum(static_cast<unsigned char>(C)))
    return true;
  return std::strchr("!#$%&'*+-.^_`|~", C) != nullptr && C != '\0';
}

std::string lower(std::string S) {
  for (char &C : S)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  return S;
}

std::string trim(const std::string &S) {
  size_t B = 0, E = S.size();
  while (B < E && (S[B] == ' ' || S[B] == '\t'))
    ++B;
  while (E > B && (S[E - 1] == ' ' || S[E - 1] == '\t'))
    --E;
  return S.substr(B, E - B);
}

// Comma-separated list membership, case-insensitive ("Connection: keep-alive, Upgrade").
bool listHas(const std::string &Value, const char *Token) {
  size_t Pos = 0;
  while (Pos <= Value.size()) {
    size_t Comma = Value.find(',', Pos);
    if (Comma == std::string::npos)
      Comma = Value.size();
    if (lower(trim(Value.substr(Pos, Comma - Pos))) == Token)
      return true;
    Pos = Comma + 1;
  }
  return false;
}

bool parseDecimal(const std::string &S, uint64_t &Out) {
  if (S.empty() || S.size() > 19)
    return false;
  uint64_t V = 0;
  for (char C : S) {
    if (C < '0' || C > '9')
      return false;
    V = V * 10 + static_cast<uint64_t>(C - '0');
  }
  Out = V;
  return true;
}

int hexValue(char C) {
  if (C >= '0' && C <= '9')
    return C - '0';
  if (C >= 'a' && C <= 'f')
    return C - 'a' + 10;
  if (C >= 'A' && C <= 'F')
    return C - 'A' + 10;
  return -1;
}

bool fail(HttpError &Err, int Status, std::string Message) {
  Err.Status = Status;
  Err.Message = std::move(Message);
  return false;
}

} // namespace

const std::string *HttpRequest::header(const std::string &Name) const {
  for (const auto &H : Headers)
    if (H.first == Name)
      return &H.second;
  return nullptr;
}

size_t findHeadEnd(const char *Data, size_t Size, size_t From) {
  for (size_t I = From; I < Size; ++I) {
    if (Data[I] != '\n')
      continue;
    if (I + 1 < Size && Data[I + 1] == '\n')
      return I + 2;
    if (I + 2 < Size && Data[I + 1] == '\r' && Data[I + 2] == '\n')
      return I + 3;
  }
  return 0;
}

bool percentDecode(const std::string &In, std::string &Out) {
  Out.clear();
  Out.reserve(In.size());
  for (size_t I = 0; I < In.size(); ++I) {
    if (In[I] != '%') {
      Out.push_back(In[I]);
      continue;
    }
    if (I + 2 >= In.size())
      return false;
    int Hi = hexValue(In[I + 1]), Lo = hexValue(In[I + 2]);
    if (Hi < 0 || Lo < 0 || (Hi == 0 && Lo == 0))
      return false;
    Out.push_back(static_cast<char>(Hi * 16 + Lo));
    I += 2;
  }
  return true;
}

bool parseRequestHead(const char *Data, size_t Size, const HttpLimits &Limits, HttpRequest &Out,
                      HttpError &Err) {
  if (Size > Limits.MaxHeadBytes)
    return fail(Err, 431, "request head larger than " + std::to_string(Limits.MaxHeadBytes) + " bytes");
  // Split into lines (CRLF or LF); a leading empty line is tolerated (RFC 9112 2.2).
  std::vector<std::string> Lines;
  size_t Pos = 0;
  while (Pos < Size) {
    const char *Nl = static_cast<const char *>(std::memchr(Data + Pos, '\n', Size - Pos));
    size_t End = Nl ? static_cast<size_t>(Nl - Data) : Size;
    size_t LineEnd = End;
    if (LineEnd > Pos && Data[LineEnd - 1] == '\r')
      --LineEnd;
    std::string Line(Data + Pos, LineEnd - Pos);
    if (Line.find('\r') != std::string::npos || Line.find('\0') != std::string::npos)
      return fail(Err, 400, "bare CR or NUL in the request head");
    if (Line.empty() && Lines.empty()) {
      Pos = End + 1;
      continue;
    }
    if (Line.empty())
      break;
    Lines.push_back(std::move(Line));
    Pos = End + 1;
  }
  if (Lines.empty())
    return fail(Err, 400, "empty request");

  // Request line: METHOD SP TARGET SP HTTP/1.x
  const std::string &RL = Lines[0];
  size_t S1 = RL.find(' ');
  size_t S2 = S1 == std::string::npos ? std::string::npos : RL.find(' ', S1 + 1);
  if (S1 == std::string::npos || S2 == std::string::npos || RL.find(' ', S2 + 1) != std::string::npos)
    return fail(Err, 400, "malformed request line");
  Out.Method = RL.substr(0, S1);
  Out.Target = RL.substr(S1 + 1, S2 - S1 - 1);
  std::string Version = RL.substr(S2 + 1);
  if (Out.Method.empty() || !std::all_of(Out.Method.begin(), Out.Method.end(), isTokenChar))
    return fail(Err, 400, "malformed method");
  if (Version.size() != 8 || Version.compare(0, 5, "HTTP/") != 0 || Version[6] != '.' ||
      !std::isdigit(static_cast<unsigned char>(Version[5])) || !std::isdigit(static_cast<unsigned char>(Version[7])))
    return fail(Err, 400, "malformed HTTP version");
  if (Version[5] != '1')
    return fail(Err, 505, "only HTTP/1.x is supported");
  Out.MinorVersion = Version[7] - '0';
  if (Out.Target.empty() || Out.Target[0] != '/') {
    // Absolute form (a proxy's "http://host/path"): keep the path.
    size_t Scheme = Out.Target.find("://");
    size_t Slash = Scheme == std::string::npos ? std::string::npos : Out.Target.find('/', Scheme + 3);
    if (Slash == std::string::npos)
      return fail(Err, 400, "malformed request target");
    Out.Target = Out.Target.substr(Slash);
  }
  size_t Q = Out.Target.find('?');
  std::string RawPath = Out.Target.substr(0, Q);
  Out.Query = Q == std::string::npos ? "" : Out.Target.substr(Q + 1);
  if (!percentDecode(RawPath, Out.Path))
    return fail(Err, 400, "malformed percent-encoding in the path");

  Out.Headers.clear();
  for (size_t I = 1; I < Lines.size(); ++I) {
    const std::string &L = Lines[I];
    if (L[0] == ' ' || L[0] == '\t')
      return fail(Err, 400, "obsolete header line folding");
    size_t Colon = L.find(':');
    if (Colon == std::string::npos || Colon == 0)
      return fail(Err, 400, "malformed header line");
    std::string Name = L.substr(0, Colon);
    if (!std::all_of(Name.begin(), Name.end(), isTokenChar))
      return fail(Err, 400, "malformed header name");
    Out.Headers.emplace_back(lower(Name), trim(L.substr(Colon + 1)));
  }

  // Framing (RFC 9112 6.3): Transfer-Encoding wins; two different Content-Lengths are an error.
  Out.HasContentLength = false;
  Out.ContentLength = 0;
  Out.Chunked = false;
  bool HasTransferEncoding = false;
  for (const auto &H : Out.Headers) {
    if (H.first == "content-length") {
      uint64_t V = 0;
      if (!parseDecimal(H.second, V))
        return fail(Err, 400, "malformed Content-Length");
      if (Out.HasContentLength && V != Out.ContentLength)
        return fail(Err, 400, "conflicting Content-Length headers");
      Out.HasContentLength = true;
      Out.ContentLength = V;
    } else if (H.first == "transfer-encoding") {
      HasTransferEncoding = true;
      if (lower(H.second) != "chunked")
        return fail(Err, 501, "unsupported Transfer-Encoding '" + H.second + "' (only chunked)");
      Out.Chunked = true;
    }
  }
  if (HasTransferEncoding && Out.HasContentLength)
    return fail(Err, 400, "both Transfer-Encoding and Content-Length");
  if (Out.HasContentLength && Out.ContentLength > Limits.MaxBodyBytes)
    return fail(Err, 413, "request body of " + std::to_string(Out.ContentLength) +
                              " bytes exceeds the limit of " + std::to_string(Limits.MaxBodyBytes));
  if (!Out.HasContentLength && !Out.Chunked && (Out.Method == "POST" || Out.Method == "PUT"))
    return fail(Err, 411, "a " + Out.Method + " request needs Content-Length (or chunked encoding)");

  const std::string *Conn = Out.header("connection");
  if (Out.MinorVersion == 0)
    Out.KeepAlive = Conn && listHas(*Conn, "keep-alive");
  else
    Out.KeepAlive = !(Conn && listHas(*Conn, "close"));
  const std::string *Expect = Out.header("expect");
  Out.ExpectContinue = Expect && lower(*Expect) == "100-continue" && Out.MinorVersion >= 1;
  return true;
}

ChunkedDecoder::Result ChunkedDecoder::feed(const char *Data, size_t Size, std::string &Body,
                                            size_t &Consumed, HttpError &Err) {
  constexpr size_t kMaxLine = 4096;
  size_t I = 0;
  auto error = [&](int Status, std::string Msg) {
    Consumed = I;
    Err.Status = Status;
    Err.Message = std::move(Msg);
    return Result::Error;
  };
  while (I < Size) {
    char C = Data[I];
    switch (St) {
    case State::Size:
      if (++LineLength > kMaxLine)
        return error(400, "chunk size line too long");
      if (C == '\r') {
        ++I;
        St = State::SizeLineEnd;
        continue;
      }
      if (C == '\n') {
        St = State::SizeLineEnd;
        continue; // handled below without consuming
      }
      if (InExtension) {
        ++I;
        continue;
      }
      if (C == ';' || C == ' ' || C == '\t') {
        if (!SawDigit)
          return error(400, "malformed chunk size");
        InExtension = true;
        ++I;
        continue;
      }
      {
        int H = hexValue(C);
        if (H < 0)
          return error(400, "malformed chunk size");
        if (Remaining > (MaxBody >> 4))
          return error(413, "chunk larger than the body limit of " + std::to_string(MaxBody) + " bytes");
        Remaining = Remaining * 16 + static_cast<uint64_t>(H);
        SawDigit = true;
        ++I;
      }
      continue;
    case State::SizeLineEnd:
      if (C != '\n')
        return error(400, "malformed chunk size line");
      ++I;
      if (!SawDigit)
        return error(400, "malformed chunk size");
      if (Body.size() + Remaining > MaxBody)
        return error(413, "request body exceeds the limit of " + std::to_string(MaxBody) + " bytes");
      LineLength = 0;
      SawDigit = false;
      InExtension = false;
      St = Remaining == 0 ? State::Trailer : State::Data;
      continue;
    case State::Data: {
      size_t Take = static_cast<size_t>(std::min<uint64_t>(Remaining, Size - I));
      Body.append(Data + I, Take);
      I += Take;
      Remaining -= Take;
      if (Remaining == 0)
        St = State::DataCr;
      continue;
    }
    case State::DataCr:
      if (C == '\r') {
        ++I;
        St = State::DataLf;
        continue;
      }
      St = State::DataLf;
      continue;
    case State::DataLf:
      if (C != '\n')
        return error(400, "chunk data not followed by CRLF");
      ++I;
      St = State::Size;
      continue;
    case State::Trailer:
      // Trailer lines until an empty one; LineLength counts the current line's bytes.
      if (C == '\r') {
        ++I;
        continue;
      }
      if (C == '\n') {
        ++I;
        if (LineLength == 0) {
          St = State::Done;
          Consumed = I;
          return Result::Done;
        }
        LineLength = 0;
        continue;
      }
      if (++LineLength > kMaxLine)
        return error(400, "chunk trailer line too long");
      ++I;
      continue;
    case State::Done:
      Consumed = I;
      return Result::Done;
    }
  }
  Consumed = I;
  return St == State::Done ? Result::Done : Result::NeedMore;
}

const char *reasonPhrase(int Status) {
  switch (Status) {
  case 100: return "Continue";
  case 200: return "OK";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 408: return "Request Timeout";
  case 411: return "Length Required";
  case 413: return "Content Too Large";
  case 415: return "Unsupported Media Type";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  case 501: return "Not Implemented";
  case 503: return "Service Unavailable";
  case 505: return "HTTP Version Not Supported";
  default: return "Unknown";
  }
}

std::string serializeResponseHead(const HttpResponse &Response, bool HeadRequest) {
  (void)HeadRequest;
  std::string Out = "HTTP/1.1 " + std::to_string(Response.Status) + " " + reasonPhrase(Response.Status) + "\r\n";
  for (const auto &H : Response.Headers)
    Out += H.first + ": " + H.second + "\r\n";
  Out += "Content-Length: " + std::to_string(Response.Body.size()) + "\r\n";
  if (Response.Close)
    Out += "Connection: close\r\n";
  Out += "\r\n";
  return Out;
}

HttpResponse errorResponse(int Status, const std::string &Message) {
  HttpResponse R;
  R.Status = Status;
  R.Headers.emplace_back("Content-Type", "application/json");
  nlohmann::json J = {{"error", Message}};
  R.Body = J.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return R;
}

} // namespace oip
} // namespace remote
} // namespace optimium
