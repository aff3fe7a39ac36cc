// onepass's SigV4 signer against two oracles: the published SigV4 test suite (canonical request,
// string to sign, Authorization) and SageMaker requests signed by the AWS SDK's own signer
// (@smithy/signature-v4; the goldens are re-checked against it by the sagemaker client test).
#include "aws/sigv4.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "aws/credentials.h"
#include "aws/digest.h"

namespace onepass::aws {
namespace {

using nlohmann::json;

json read_sigv4_data(const char* name) {
  std::ifstream in(std::filesystem::path(ONEPASS_TEST_DATA_DIR) / "sigv4" / name);
  return json::parse(in);
}

WallClock::time_point at(const std::string& iso) {
  const auto time = parse_iso8601(iso);
  EXPECT_TRUE(time.has_value()) << iso;
  return time.value_or(WallClock::time_point{});
}

TEST(SigV4, PublishedSuite) {
  const json suite = read_sigv4_data("aws-sig-v4-test-suite.json");
  const Credentials credentials{suite["access_key_id"], suite["secret_access_key"], "",
                                std::nullopt, "test"};
  const SigningScope scope{suite["region"], suite["service"]};
  ASSERT_GE(suite["cases"].size(), 6u);
  for (const json& c : suite["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    CanonicalInput input;
    input.method = c["method"];
    // The path as the signer sees it (what goes on the request line); the canonical form
    // encodes each segment once more (get-utf8).
    input.path = c["path"];
    input.query = c["query"];
    for (const json& h : c["headers"]) input.headers.emplace_back(h[0], h[1]);
    input.payload_sha256_hex = sha256_hex(c["body"].get<std::string>());
    const Signature s = compute_signature(input, credentials, scope, at(suite["time"]));
    EXPECT_EQ(s.canonical_request, c["creq"].get<std::string>());
    EXPECT_EQ(s.string_to_sign, c["sts"].get<std::string>());
    EXPECT_EQ(s.authorization, c["authz"].get<std::string>());
  }
}

TEST(SigV4, SageMakerRequestsMatchTheAwsSdkSigner) {
  const json goldens = read_sigv4_data("sagemaker-requests.json");
  ASSERT_GE(goldens["cases"].size(), 3u);
  for (const json& c : goldens["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const http::Url url = http::Url::parse(c["url"].get<std::string>());
    ASSERT_EQ(url.authority(), c["host"].get<std::string>());
    http::Request request;
    request.target = "/invocations";
    for (const json& h : c["headers"]) request.headers.emplace_back(h[0], h[1]);
    request.body = c["body"];
    const Credentials credentials{c["access_key_id"], c["secret_access_key"], c["session_token"],
                                  std::nullopt, "test"};
    sign_request(request, url, credentials, {c["region"], "sagemaker"}, at(c["time"]));
    const http::Response as_headers{0, request.headers, ""};
    EXPECT_EQ(as_headers.header("Authorization"), c["authorization"].get<std::string>());
    EXPECT_EQ(as_headers.header("X-Amz-Content-Sha256"),
              c["x_amz_content_sha256"].get<std::string>());
    EXPECT_EQ(as_headers.header("X-Amz-Security-Token"), c["session_token"].get<std::string>());
    EXPECT_EQ(as_headers.header("X-Amz-Date").size(), 16u);
  }
}

TEST(SigV4, SigningAgainReplacesTheOldSignature) {
  http::Request request;
  request.target = "/invocations";
  request.body = "{}";
  request.headers = {{"Content-Type", "application/json"}, {"User-Agent", "x"}};
  const http::Url url =
      http::Url::parse("https://runtime.sagemaker.us-east-1.amazonaws.com/endpoints/e");
  const Credentials credentials{"AKID", "SECRET", "TOKEN", std::nullopt, "test"};
  sign_request(request, url, credentials, {"us-east-1", "sagemaker"}, at("2026-01-01T00:00:00Z"));
  sign_request(request, url, credentials, {"us-east-1", "sagemaker"}, at("2026-01-01T00:00:07Z"));
  std::size_t authorizations = 0, dates = 0;
  for (const auto& [name, value] : request.headers) {
    authorizations += name == "Authorization";
    dates += name == "X-Amz-Date";
    if (name == "X-Amz-Date") {
      EXPECT_EQ(value, "20260101T000007Z");
    }
    if (name == "Authorization") {
      // User-Agent is left unsigned (proxies rewrite it), as the SDKs leave it.
      EXPECT_NE(value.find("SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;"
                           "x-amz-security-token,"),
                std::string::npos)
          << value;
    }
  }
  EXPECT_EQ(authorizations, 1u);
  EXPECT_EQ(dates, 1u);
}

TEST(SigV4, CanonicalPathsAndQueries) {
  const Credentials credentials{"AKID", "SECRET", "", std::nullopt, "test"};
  auto creq = [&](const std::string& path, const std::string& query) {
    CanonicalInput input{"GET", path, query, {{"Host", "h"}}, sha256_hex("")};
    const std::string c = compute_signature(input, credentials, {"r", "s"}, WallClock::time_point{})
                              .canonical_request;
    // Its second and third lines: the canonical path and query.
    const std::size_t path_at = c.find('\n') + 1;
    const std::size_t query_at = c.find('\n', path_at) + 1;
    return c.substr(path_at, c.find('\n', query_at) - path_at);
  };
  EXPECT_EQ(creq("/a/./b/../c//d/", ""), "/a/c/d/\n");
  EXPECT_EQ(creq("/a%20b", ""), "/a%2520b\n");  // encoded again, as every service but S3
  EXPECT_EQ(creq("", "b=2&a=1&a=0&flag"), "/\na=0&a=1&b=2&flag=");
  EXPECT_EQ(creq("/", "k=a%20b&j=%7E&x=a+b"), "/\nj=~&k=a%20b&x=a%2Bb");
}

TEST(Credentials, DescribeNamesNoSecret) {
  const Credentials c{"AKIAEXAMPLEKEY12WXYZ", "the-secret", "the-token", at("2026-12-07T14:00:00Z"),
                      "profile dev"};
  const std::string text = c.describe();
  EXPECT_EQ(text, "key ...WXYZ from profile dev, expires 2026-12-07T14:00:00Z");
  EXPECT_EQ(text.find("secret"), std::string::npos);
  EXPECT_EQ(text.find("token"), std::string::npos);
}

TEST(Credentials, Iso8601AsStsEcsAndImdsWriteIt) {
  EXPECT_EQ(format_iso8601(at("2026-12-07T14:00:00Z")), "2026-12-07T14:00:00Z");
  EXPECT_EQ(format_iso8601(at("2026-12-07T14:00:00.123Z")), "2026-12-07T14:00:00Z");
  EXPECT_EQ(format_iso8601(at("2026-12-07T14:00:00+00:00")), "2026-12-07T14:00:00Z");
  EXPECT_FALSE(parse_iso8601("next tuesday"));
  EXPECT_FALSE(parse_iso8601("2026-12-07T14:00:00+02:00"));
}

}  // namespace
}  // namespace onepass::aws
