// AWS Signature Version 4 (the Authorization header form), as the AWS SDKs sign a JSON request:
// the canonical request, the string to sign, the derived signing key and the signature.
// compute_signature() is the algorithm on plain values (what the published test suite checks);
// sign_request() applies it to an outgoing http::Request at a given time.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "aws/credentials.h"
#include "http/client.h"

namespace onepass::aws {

struct SigningScope {
  std::string region;   // "us-east-1"
  std::string service;  // "sagemaker"
};

// What the signature covers. `path` and `query` as they appear in the request line
// (percent-encoded); `headers` are the ones to sign, host included, in any order and case.
struct CanonicalInput {
  std::string method;
  std::string path = "/";
  std::string query;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string payload_sha256_hex;
};

struct Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signed_headers;  // "content-type;host;x-amz-date"
  std::string signature;       // hex
  std::string authorization;   // the Authorization header's value
};

// "20150830T123600Z"
std::string amz_date(WallClock::time_point time);

// RFC 3986 encoding of everything but unreserved characters (A-Z a-z 0-9 - _ . ~), upper-case
// hex; '/' kept when `keep_slash`.
std::string uri_encode(std::string_view text, bool keep_slash);

Signature compute_signature(const CanonicalInput& input, const Credentials& credentials,
                            const SigningScope& scope, WallClock::time_point time);

// Adds X-Amz-Date, X-Amz-Content-Sha256, X-Amz-Security-Token (with a session token) and
// Authorization to `request` bound for `url`, signing every header it carries plus the Host the
// client will send (Url::authority()). Headers that proxies may rewrite (User-Agent, Connection)
// stay unsigned. Any Authorization or X-Amz-* header already there is replaced.
void sign_request(http::Request& request, const http::Url& url, const Credentials& credentials,
                  const SigningScope& scope, WallClock::time_point time);

}  // namespace onepass::aws
