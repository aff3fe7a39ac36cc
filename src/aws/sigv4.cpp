#include "aws/sigv4.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>

#include "aws/digest.h"

namespace onepass::aws {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Header values are trimmed and runs of spaces collapse to one (the suite's
// get-header-value-trim).
std::string canonical_value(std::string_view value) {
  std::string out;
  bool space = false;
  for (const char c : value) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int hi = hex_value(text[i + 1]);
      const int lo = hex_value(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

// The path as sent, dot segments and empty segments removed (as the SDKs do for every service
// but S3), each segment encoded again: a '%' already in the request line becomes "%25".
std::string canonical_path(std::string_view path) {
  std::vector<std::string_view> segments;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view segment = path.substr(start, end - start);
    if (segment == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!segment.empty() && segment != ".") {
      segments.push_back(segment);
    }
    start = end + 1;
  }
  std::string out;
  for (const auto& segment : segments) {
    out += '/';
    out += uri_encode(segment, false);
  }
  if (out.empty() || (path.size() > 1 && path.back() == '/')) out += "/";
  return out;
}

// Parameters sorted by encoded name, then value; a name without '=' gets an empty value.
std::string canonical_query(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t start = 0;
  while (start < query.size()) {
    std::size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view item = query.substr(start, end - start);
    if (!item.empty()) {
      const std::size_t eq = item.find('=');
      const std::string_view name = item.substr(0, eq);
      const std::string_view value =
          eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
      pairs.emplace_back(uri_encode(percent_decode(name), false),
                         uri_encode(percent_decode(value), false));
    }
    start = end + 1;
  }
  std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (const auto& [name, value] : pairs) {
    if (!out.empty()) out += '&';
    out += name + "=" + value;
  }
  return out;
}

// Headers a proxy or the transport may add, drop or rewrite: never signed (the SDKs' list).
bool unsignable(std::string_view lower_name) {
  static constexpr std::string_view kNames[] = {"authorization",
                                                "connection",
                                                "content-length",
                                                "expect",
                                                "keep-alive",
                                                "user-agent",
                                                "te",
                                                "trailer",
                                                "transfer-encoding",
                                                "upgrade",
                                                "x-amzn-trace-id"};
  return std::find(std::begin(kNames), std::end(kNames), lower_name) != std::end(kNames);
}

}  // namespace

std::string amz_date(WallClock::time_point time) {
  const std::time_t t = WallClock::to_time_t(time);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char out[20];
  std::strftime(out, sizeof out, "%Y%m%dT%H%M%SZ", &tm);
  return out;
}

std::string uri_encode(std::string_view text, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += c;
    } else {
      out += '%';
      out += kDigits[byte >> 4];
      out += kDigits[byte & 0xf];
    }
  }
  return out;
}

Signature compute_signature(const CanonicalInput& input, const Credentials& credentials,
                            const SigningScope& scope, WallClock::time_point time) {
  // Same-named headers join with ',' in the order given; names sort.
  std::map<std::string, std::string> headers;
  for (const auto& [name, value] : input.headers) {
    std::string& joined = headers[lower(name)];
    if (!joined.empty()) joined += ',';
    joined += canonical_value(value);
  }
  Signature out;
  std::string canonical_headers;
  for (const auto& [name, value] : headers) {
    canonical_headers += name + ":" + value + "\n";
    if (!out.signed_headers.empty()) out.signed_headers += ';';
    out.signed_headers += name;
  }
  out.canonical_request = input.method + "\n" + canonical_path(input.path) + "\n" +
                          canonical_query(input.query) + "\n" + canonical_headers + "\n" +
                          out.signed_headers + "\n" + input.payload_sha256_hex;

  const std::string stamp = amz_date(time);
  const std::string day = stamp.substr(0, 8);
  const std::string credential_scope =
      day + "/" + scope.region + "/" + scope.service + "/aws4_request";
  out.string_to_sign = std::string(kAlgorithm) + "\n" + stamp + "\n" + credential_scope + "\n" +
                       sha256_hex(out.canonical_request);
  std::string secret_key = "AWS4";
  secret_key += credentials.secret_access_key;
  std::string key = hmac_sha256(secret_key, day);
  key = hmac_sha256(key, scope.region);
  key = hmac_sha256(key, scope.service);
  key = hmac_sha256(key, "aws4_request");
  out.signature = hex(hmac_sha256(key, out.string_to_sign));
  out.authorization = std::string(kAlgorithm) + " Credential=" + credentials.access_key_id + "/" +
                      credential_scope + ", SignedHeaders=" + out.signed_headers +
                      ", Signature=" + out.signature;
  return out;
}

void sign_request(http::Request& request, const http::Url& url, const Credentials& credentials,
                  const SigningScope& scope, WallClock::time_point time) {
  auto& headers = request.headers;
  headers.erase(std::remove_if(headers.begin(), headers.end(),
                               [](const auto& h) {
                                 const std::string name = lower(h.first);
                                 return name == "authorization" || name == "host" ||
                                        name == "x-amz-date" || name == "x-amz-content-sha256" ||
                                        name == "x-amz-security-token";
                               }),
                headers.end());
  const std::string payload_hash = sha256_hex(request.body);
  headers.emplace_back("X-Amz-Date", amz_date(time));
  headers.emplace_back("X-Amz-Content-Sha256", payload_hash);
  if (!credentials.session_token.empty())
    headers.emplace_back("X-Amz-Security-Token", credentials.session_token);

  CanonicalInput input;
  input.method = request.method;
  const std::string target = url.prefix + request.target;
  const std::size_t question = target.find('?');
  input.path = target.substr(0, question);
  if (question != std::string::npos) input.query = target.substr(question + 1);
  input.payload_sha256_hex = payload_hash;
  input.headers.emplace_back("host", url.authority());
  for (const auto& [name, value] : headers) {
    if (!unsignable(lower(name))) input.headers.emplace_back(name, value);
  }
  headers.emplace_back("Authorization",
                       compute_signature(input, credentials, scope, time).authorization);
}

}  // namespace onepass::aws
