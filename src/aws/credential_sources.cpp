#include "aws/credential_sources.h"

#include <nlohmann/json.hpp>

#include "aws/sigv4.h"
#include "base/error.h"
#include "base/read_file.h"
#include "http/client.h"

namespace onepass::aws {
namespace {

constexpr std::size_t kTokenFileLimitBytes = 64 * 1024;
constexpr std::chrono::milliseconds kServiceTimeout{5000};

Error failure(const std::string& message) { return Error(ErrorKind::kInvalidArgument, message); }

// One request to a full URL: its path and query (kept byte for byte, a trailing '/' included)
// become the target. Transport failures become a message naming `what`.
http::Response call(const std::string& url_text, http::Request request,
                    std::chrono::milliseconds timeout, const std::string& what) {
  const std::size_t scheme = url_text.find("://");
  const std::size_t slash = url_text.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  const http::Url url = http::Url::parse(url_text.substr(0, slash));
  request.target = slash == std::string::npos ? "/" : url_text.substr(slash);
  http::Connection connection(url, timeout);
  try {
    return connection.send(request);
  } catch (const http::TransportError& e) {
    throw failure(what + " at " + url.to_string() + " did not answer: " + e.what());
  }
}

std::string xml_unescape(std::string text) {
  static const std::pair<const char*, const char*> kEntities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}};
  for (const auto& [entity, plain] : kEntities) {
    for (std::size_t at; (at = text.find(entity)) != std::string::npos;)
      text.replace(at, std::string_view(entity).size(), plain);
  }
  return text;
}

// The text of the first <tag>...</tag> in a small, trusted-shape XML document.
std::string xml_element(const std::string& xml, const std::string& tag) {
  const std::string open = "<" + tag + ">", close = "</" + tag + ">";
  const std::size_t start = xml.find(open);
  if (start == std::string::npos) return {};
  const std::size_t end = xml.find(close, start + open.size());
  if (end == std::string::npos) return {};
  return xml_unescape(xml.substr(start + open.size(), end - start - open.size()));
}

// The JSON document ECS and IMDS answer: AccessKeyId, SecretAccessKey, Token, Expiration.
Credentials credentials_from_json(const std::string& body, const std::string& source) {
  const auto doc = nlohmann::json::parse(body, nullptr, false);
  auto text = [&](const char* key) {
    return doc.is_object() && doc.contains(key) && doc[key].is_string()
               ? doc[key].get<std::string>()
               : std::string();
  };
  if (!doc.is_object()) throw failure(source + " answered something that is not JSON");
  if (const std::string code = text("Code"); !code.empty() && code != "Success") {
    throw failure(source + " answered Code " + code + ": " + text("Message"));
  }
  Credentials out;
  out.access_key_id = text("AccessKeyId");
  out.secret_access_key = text("SecretAccessKey");
  out.session_token = text("Token");
  out.expiration = parse_iso8601(text("Expiration"));
  out.source = source;
  if (out.empty()) throw failure(source + " answered without AccessKeyId and SecretAccessKey");
  return out;
}

std::string trim(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  std::size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  return text.substr(start);
}

bool allowed_plain_http_host(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "[::1]" || host == "169.254.170.2" ||
         host == "169.254.170.23" || host == "[fd00:ec2::23]" || host.rfind("127.", 0) == 0;
}

}  // namespace

Credentials fetch_web_identity(const Getenv& getenv, const WebIdentity& identity,
                               const std::string& region) {
  const auto token = read_file_if_present(identity.token_file, kTokenFileLimitBytes);
  if (!token) {
    throw failure("web identity: cannot read the token file " + identity.token_file +
                  " (AWS_WEB_IDENTITY_TOKEN_FILE)");
  }
  std::string endpoint = getenv("AWS_ENDPOINT_URL_STS");
  if (endpoint.empty()) endpoint = getenv("AWS_ENDPOINT_URL");
  if (endpoint.empty()) {
    endpoint =
        region.empty() ? "https://sts.amazonaws.com" : "https://sts." + region + ".amazonaws.com";
  }
  const std::string session =
      identity.session_name.empty()
          ? "onepass-" + std::to_string(WallClock::now().time_since_epoch().count() / 1000000)
          : identity.session_name;
  http::Request request;
  request.method = "POST";
  request.headers = {{"Content-Type", "application/x-www-form-urlencoded"},
                     {"Accept", "application/xml"}};
  request.body = "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=" +
                 uri_encode(identity.role_arn, false) +
                 "&RoleSessionName=" + uri_encode(session, false) +
                 "&WebIdentityToken=" + uri_encode(trim(*token), false);
  const std::string what = "STS AssumeRoleWithWebIdentity for " + identity.role_arn;
  const http::Response response = call(endpoint, request, kServiceTimeout, what);
  if (response.status != 200) {
    const std::string code = xml_element(response.body, "Code");
    throw failure(what + " failed (HTTP " + std::to_string(response.status) + " " +
                  (code.empty() ? std::string("no error code") : code) +
                  "): " + xml_element(response.body, "Message"));
  }
  Credentials out;
  out.access_key_id = xml_element(response.body, "AccessKeyId");
  out.secret_access_key = xml_element(response.body, "SecretAccessKey");
  out.session_token = xml_element(response.body, "SessionToken");
  out.expiration = parse_iso8601(xml_element(response.body, "Expiration"));
  out.source = "web identity (" + identity.role_arn + ")";
  if (out.empty()) throw failure(what + " answered without credentials");
  return out;
}

Credentials fetch_container(const Getenv& getenv) {
  std::string url;
  if (const std::string relative = getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
      !relative.empty()) {
    url = "http://169.254.170.2" + relative;
  } else {
    url = getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    const http::Url parsed = http::Url::parse(url);
    if (!parsed.tls && !allowed_plain_http_host(parsed.host)) {
      throw failure("AWS_CONTAINER_CREDENTIALS_FULL_URI " + url +
                    ": plain http is allowed only to a loopback or the ECS/EKS address");
    }
  }
  http::Request request;
  request.method = "GET";
  std::string authorization;
  if (const std::string file = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); !file.empty()) {
    const auto token = read_file_if_present(file, kTokenFileLimitBytes);
    if (!token) {
      throw failure("container credentials: cannot read " + file +
                    " (AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE)");
    }
    authorization = trim(*token);
  } else {
    authorization = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
  }
  if (!authorization.empty()) request.headers.emplace_back("Authorization", authorization);
  const std::string what = "the container credentials endpoint";
  const http::Response response = call(url, request, kServiceTimeout, what);
  if (response.status != 200) {
    throw failure(what + " " + url + " answered HTTP " + std::to_string(response.status));
  }
  return credentials_from_json(response.body, "container credentials endpoint");
}

Credentials fetch_imds(const Getenv& getenv, std::chrono::milliseconds timeout) {
  std::string base = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  if (base.empty()) base = "http://169.254.169.254";
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string what = "the EC2 instance metadata service (IMDSv2)";

  http::Request token_request;
  token_request.method = "PUT";
  token_request.headers = {{"X-aws-ec2-metadata-token-ttl-seconds", "21600"}};
  const http::Response token = call(base + "/latest/api/token", token_request, timeout, what);
  if (token.status != 200) {
    throw failure(what + " refused a session token (HTTP " + std::to_string(token.status) + ")");
  }
  http::Request get;
  get.method = "GET";
  get.headers = {{"X-aws-ec2-metadata-token", token.body}};
  const std::string roles_url = base + "/latest/meta-data/iam/security-credentials/";
  const http::Response roles = call(roles_url, get, timeout, what);
  if (roles.status != 200) {
    throw failure(what + " has no instance role (HTTP " + std::to_string(roles.status) +
                  "): attach an instance profile");
  }
  const std::string role = trim(roles.body.substr(0, roles.body.find('\n')));
  const http::Response found = call(roles_url + role, get, timeout, what);
  if (found.status != 200) {
    throw failure(what + " answered HTTP " + std::to_string(found.status) + " for role " + role);
  }
  Credentials out = credentials_from_json(found.body, "instance metadata (role " + role + ")");
  return out;
}

}  // namespace onepass::aws
