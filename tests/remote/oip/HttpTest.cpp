// HTTP/1.1 request-head parsing, chunked bodies and response serialization of the OIP endpoint.
#include <gtest/gtest.h>

#include "Http.h"

using namespace optimium::remote::oip;

namespace {

bool parse(const std::string &Head, HttpRequest &Req, HttpError &Err, size_t MaxBody = 1 << 20) {
  HttpLimits L;
  L.MaxBodyBytes = MaxBody;
  return parseRequestHead(Head.data(), Head.size(), L, Req, Err);
}

int status(const std::string &Head, size_t MaxBody = 1 << 20) {
  HttpRequest Req;
  HttpError Err;
  return parse(Head, Req, Err, MaxBody) ? 0 : Err.Status;
}

} // namespace

TEST(OipHttp, FindHeadEnd) {
  const std::string A = "GET / HTTP/1.1\r\nHost: x\r\n\r\nBODY";
  EXPECT_EQ(findHeadEnd(A.data(), A.size()), A.size() - 4);
  const std::string B = "GET / HTTP/1.1\nHost: x\n\nBODY";
  EXPECT_EQ(findHeadEnd(B.data(), B.size()), B.size() - 4);
  const std::string C = "GET / HTTP/1.1\r\nHost: x\r\n";
  EXPECT_EQ(findHeadEnd(C.data(), C.size()), 0u);
}

TEST(OipHttp, ParsesRequestLineHeadersAndFraming) {
  HttpRequest R;
  HttpError E;
  ASSERT_TRUE(parse("POST /v2/models/m%2Dx/infer?q=1 HTTP/1.1\r\nHost: h\r\nContent-Length:  12 \r\n"
                    "Inference-Header-Content-Length: 7\r\n\r\n",
                    R, E))
      << E.Message;
  EXPECT_EQ(R.Method, "POST");
  EXPECT_EQ(R.Path, "/v2/models/m-x/infer");
  EXPECT_EQ(R.Query, "q=1");
  EXPECT_TRUE(R.HasContentLength);
  EXPECT_EQ(R.ContentLength, 12u);
  ASSERT_NE(R.header("inference-header-content-length"), nullptr);
  EXPECT_EQ(*R.header("inference-header-content-length"), "7");
  EXPECT_TRUE(R.KeepAlive);
  EXPECT_FALSE(R.Chunked);
}

TEST(OipHttp, KeepAliveRules) {
  HttpRequest R;
  HttpError E;
  ASSERT_TRUE(parse("GET / HTTP/1.1\r\nConnection: close\r\n\r\n", R, E));
  EXPECT_FALSE(R.KeepAlive);
  ASSERT_TRUE(parse("GET / HTTP/1.0\r\n\r\n", R, E));
  EXPECT_FALSE(R.KeepAlive);
  ASSERT_TRUE(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", R, E));
  EXPECT_TRUE(R.KeepAlive);
  ASSERT_TRUE(parse("POST / HTTP/1.1\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n", R, E));
  EXPECT_TRUE(R.ExpectContinue);
}

TEST(OipHttp, ErrorStatuses) {
  EXPECT_EQ(status("POST /v2 HTTP/1.1\r\nHost: x\r\n\r\n"), 411);
  EXPECT_EQ(status("GET /v2 HTTP/1.1\r\n\r\n"), 0); // a GET needs no length
  EXPECT_EQ(status("POST / HTTP/1.1\r\nContent-Length: 2000\r\n\r\n", 1000), 413);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nContent-Length: 1000\r\n\r\n", 1000), 0);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n"), 400);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), 400);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n"), 400);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), 400);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"), 501);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n"), 400);
  EXPECT_EQ(status("GET / HTTP/2.0\r\n\r\n"), 505);
  EXPECT_EQ(status("GET /\r\n\r\n"), 400);
  EXPECT_EQ(status("GET  / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(status("G(T / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nNo colon here\r\n\r\n"), 400);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n"), 400);
  EXPECT_EQ(status("GET /a%2 HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(status("GET /a%00 HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(status("GET nopath HTTP/1.1\r\n\r\n"), 400);
  HttpLimits L;
  L.MaxHeadBytes = 64;
  HttpRequest R;
  HttpError E;
  const std::string Big = "GET / HTTP/1.1\r\nX: " + std::string(100, 'a') + "\r\n\r\n";
  EXPECT_FALSE(parseRequestHead(Big.data(), Big.size(), L, R, E));
  EXPECT_EQ(E.Status, 431);
}

TEST(OipHttp, AbsoluteFormTarget) {
  HttpRequest R;
  HttpError E;
  ASSERT_TRUE(parse("GET http://host:8000/v2/health/live HTTP/1.1\r\n\r\n", R, E));
  EXPECT_EQ(R.Path, "/v2/health/live");
}

TEST(OipHttp, ChunkedBodyInPieces) {
  const std::string Wire = "4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\nNEXT";
  // Every split point must give the same body, and the decoder must stop before "NEXT".
  for (size_t Split = 0; Split <= Wire.size(); ++Split) {
    ChunkedDecoder D(1 << 20);
    std::string Body;
    HttpError E;
    size_t Used = 0;
    auto R1 = D.feed(Wire.data(), Split, Body, Used, E);
    ASSERT_NE(R1, ChunkedDecoder::Result::Error) << E.Message;
    std::string Rest = Wire.substr(Used);
    size_t Used2 = 0;
    auto R2 = R1 == ChunkedDecoder::Result::Done ? R1 : D.feed(Rest.data(), Rest.size(), Body, Used2, E);
    ASSERT_EQ(R2, ChunkedDecoder::Result::Done) << "split " << Split << ": " << E.Message;
    EXPECT_EQ(Body, "Wikipedia in\r\n\r\nchunks.");
    EXPECT_EQ(Rest.substr(Used2), "NEXT");
  }
}

TEST(OipHttp, ChunkedErrors) {
  auto run = [](const std::string &Wire, size_t Max = 1 << 20) {
    ChunkedDecoder D(Max);
    std::string Body;
    HttpError E;
    size_t Used = 0;
    return D.feed(Wire.data(), Wire.size(), Body, Used, E) == ChunkedDecoder::Result::Error ? E.Status : 0;
  };
  EXPECT_EQ(run("zz\r\n"), 400);
  EXPECT_EQ(run("\r\n"), 400);
  EXPECT_EQ(run("4\r\nabcdX"), 400);
  EXPECT_EQ(run("ffffffffffffffffffff\r\n"), 413);
  EXPECT_EQ(run("10\r\n", 8), 413);
  EXPECT_EQ(run("3\r\nabc\r\n", 8), 0);
}

TEST(OipHttp, ResponseSerialization) {
  HttpResponse R = errorResponse(404, "model 'x' not found");
  R.Close = true;
  std::string Head = serializeResponseHead(R);
  EXPECT_EQ(Head.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u);
  EXPECT_NE(Head.find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_NE(Head.find("Content-Length: " + std::to_string(R.Body.size()) + "\r\n"), std::string::npos);
  EXPECT_NE(Head.find("Connection: close\r\n\r\n"), std::string::npos);
  EXPECT_EQ(R.Body, "{\"error\":\"model 'x' not found\"}");
}
