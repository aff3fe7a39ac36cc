#include "hub/protocol.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "http/client.h"

namespace onepass::hub {
namespace {

constexpr std::chrono::seconds kTimeout{30};
constexpr int kMaxRedirects = 10;
constexpr int kDownloadTries = 5;

struct Location {
  std::string scheme;
  std::string host;
  std::uint16_t port = 0;
  std::string target;  // path and query

  std::string origin() const { return scheme + "://" + host + ":" + std::to_string(port); }
};

Location parse_location(const std::string& url) {
  Location out;
  const auto sep = url.find("://");
  if (sep == std::string::npos) throw Error(ErrorKind::kInvalidArgument, "not a URL: " + url);
  out.scheme = url.substr(0, sep);
  if (out.scheme != "http" && out.scheme != "https")
    throw Error(ErrorKind::kInvalidArgument, "unsupported URL scheme in " + url);
  const auto rest = url.substr(sep + 3);
  const auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  out.target = slash == std::string::npos ? "/" : rest.substr(slash);
  out.port = out.scheme == "https" ? 443 : 80;
  const auto colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']') == std::string::npos) {
    const std::string port = authority.substr(colon + 1);
    char* end = nullptr;
    const long value = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || value <= 0 || value > 65535)
      throw Error(ErrorKind::kInvalidArgument, "bad port in URL " + url);
    out.port = static_cast<std::uint16_t>(value);
    authority = authority.substr(0, colon);
  }
  if (authority.empty()) throw Error(ErrorKind::kInvalidArgument, "no host in URL " + url);
  out.host = authority;
  return out;
}

// The next location of a redirect: absolute URLs replace everything, "/path" keeps the origin.
Location follow(const Location& from, const std::string& location) {
  if (location.find("://") != std::string::npos) return parse_location(location);
  Location out = from;
  if (!location.empty() && location.front() == '/') {
    out.target = location;
  } else {
    const auto dir = from.target.rfind('/', from.target.find('?'));
    out.target = from.target.substr(0, dir + 1) + location;
  }
  return out;
}

bool is_redirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

std::string normalize_etag(std::string etag) {
  if (etag.rfind("W/", 0) == 0) etag = etag.substr(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"')
    etag = etag.substr(1, etag.size() - 2);
  return etag;
}

struct Exchange {
  http::Response response;
  Location where;  // where the answer came from
};

// One request, following redirects. Absolute redirects are followed only when `absolute` is
// true (downloads). The token goes only to the endpoint's own origin: never to the storage host
// an LFS file is redirected to (requests drops Authorization on such a redirect too).
Exchange send(const Environment& env, Location where, http::Request request, bool absolute,
              const std::string& what) {
  const std::string first_origin = parse_location(env.endpoint).origin();
  for (int hop = 0; hop <= kMaxRedirects; ++hop) {
    http::Url url;
    url.host = where.host;
    url.port = where.port;
    url.tls = where.scheme == "https";
    http::Request req = request;
    req.target = where.target;
    if (!env.token.empty() && where.origin() == first_origin)
      req.headers.emplace_back("Authorization", "Bearer " + env.token);
    req.headers.emplace_back("User-Agent", "onepass/0.1; hf_hub-compatible");
    http::Connection connection(url, kTimeout);
    http::Response response;
    try {
      response = connection.send(req);
    } catch (const http::TransportError& e) {
      if (e.failure() == http::TransportFailure::kConnect ||
          (e.failure() == http::TransportFailure::kTimeout && request.body_sink == nullptr))
        throw NetworkError("cannot reach " + where.origin() + " for " + what + ": " + e.what());
      throw;
    }
    const std::string location = response.header("Location");
    if (!is_redirect(response.status) || location.empty()) return {std::move(response), where};
    const Location next = follow(where, location);
    if (next.origin() != where.origin() && !absolute) return {std::move(response), where};
    where = next;
  }
  throw Error(ErrorKind::kUnavailable, "too many redirects for " + what);
}

// Maps a failed Hub answer to an error naming what the user can do about it.
[[noreturn]] void fail(const http::Response& response, const HubId& id, const std::string& what,
                       bool have_token) {
  const std::string code = response.header("X-Error-Code");
  const std::string repo = "'" + id.repo_id + "'";
  if (code == "RevisionNotFound" || (response.status == 404 && code == "EntryNotFound")) {
    throw Error(ErrorKind::kNotFound,
                "revision '" + id.revision + "' not found in repository " + repo);
  }
  if (code == "GatedRepo") {
    throw Error(ErrorKind::kInvalidArgument,
                "repository " + repo + " is gated: " +
                    (have_token ? "the token in HF_TOKEN has no access (accept the model's terms "
                                  "on its Hub page)"
                                : "set HF_TOKEN (or log in with huggingface-cli) to download it"));
  }
  if (code == "RepoNotFound" || response.status == 404 || response.status == 401) {
    throw Error(ErrorKind::kNotFound,
                "repository " + repo + " not found on the Hub" +
                    (have_token ? std::string()
                                : " (if it is private or gated, set HF_TOKEN to a token with "
                                  "access)"));
  }
  if (response.status == 403) {
    throw Error(ErrorKind::kInvalidArgument,
                "access to repository " + repo + " is forbidden" +
                    (have_token ? " for this HF_TOKEN" : ": set HF_TOKEN"));
  }
  throw Error(ErrorKind::kUnavailable,
              "the Hub answered HTTP " + std::to_string(response.status) + " for " + what);
}

}  // namespace

std::string url_quote(const std::string& text, bool keep_slash) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : text) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
                            c == '~' || (keep_slash && c == '/');
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

HubClient::HubClient(const Environment& env) : env_(env) {}

RepoInfo HubClient::repo_info(const HubId& id) const {
  Location where = parse_location(env_.endpoint);
  while (!where.target.empty() && where.target.back() == '/') where.target.pop_back();
  where.target += "/api/models/" + id.repo_id + "/revision/" + url_quote(id.revision, false);
  http::Request request;
  request.method = "GET";
  const auto what = "the file list of " + id.repo_id + "@" + id.revision;
  const auto answer = send(env_, where, request, false, what);
  if (answer.response.status != 200) fail(answer.response, id, what, !env_.token.empty());
  RepoInfo info;
  try {
    const auto json = nlohmann::json::parse(answer.response.body);
    info.commit = json.at("sha").get<std::string>();
    for (const auto& sibling : json.value("siblings", nlohmann::json::array()))
      info.files.push_back(sibling.at("rfilename").get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::kUnavailable,
                "the Hub's answer for " + what + " is not what the Hub API returns: " + e.what());
  }
  if (!is_commit_hash(info.commit))
    throw Error(ErrorKind::kUnavailable, "the Hub gave no commit for " + what);
  return info;
}

FileMeta HubClient::file_meta(const std::string& repo_id, const std::string& commit,
                              const std::string& path) const {
  Location where = parse_location(env_.endpoint);
  while (!where.target.empty() && where.target.back() == '/') where.target.pop_back();
  where.target += "/" + repo_id + "/resolve/" + commit + "/" + url_quote(path, true);
  http::Request request;
  request.method = "HEAD";
  request.headers.emplace_back("Accept-Encoding", "identity");
  const std::string what = repo_id + "/" + path;
  // Like huggingface_hub: relative redirects (a renamed repo) are followed, an absolute one (the
  // LFS storage) is not: its headers already describe the file, and it is where the GET goes.
  const auto answer = send(env_, where, request, false, what);
  const auto& r = answer.response;
  if (r.status != 200 && !is_redirect(r.status)) {
    HubId id{repo_id, commit, true};
    fail(r, id, what, !env_.token.empty());
  }
  FileMeta meta;
  meta.commit = r.header("X-Repo-Commit");
  std::string linked = r.header("X-Linked-Etag");
  meta.lfs = !linked.empty();
  meta.etag = normalize_etag(meta.lfs ? linked : r.header("ETag"));
  const std::string size = r.header(meta.lfs ? "X-Linked-Size" : "Content-Length");
  meta.size = std::strtoull(size.c_str(), nullptr, 10);
  if (meta.etag.empty() || meta.etag.find('/') != std::string::npos || meta.etag == "." ||
      meta.etag == "..")
    throw Error(ErrorKind::kUnavailable, "the Hub gave no usable ETag for " + what);
  const Location from =
      is_redirect(r.status) ? follow(answer.where, r.header("Location")) : answer.where;
  meta.download_url =
      from.scheme + "://" + from.host + ":" + std::to_string(from.port) + from.target;
  return meta;
}

void HubClient::download(const FileMeta& meta, const std::string& partial,
                         const ProgressFn& progress) const {
  for (int attempt = 1;; ++attempt) {
    std::FILE* out = std::fopen(partial.c_str(), "ab");
    if (out == nullptr)
      throw Error(ErrorKind::kUnavailable, "cannot write " + partial + ": " + std::strerror(errno));
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> guard(out, std::fclose);
    std::fseek(out, 0, SEEK_END);
    std::uint64_t have = static_cast<std::uint64_t>(std::ftell(out));
    if (meta.size > 0 && have >= meta.size) return;
    http::Request request;
    request.method = "GET";
    request.headers.emplace_back("Accept-Encoding", "identity");
    const std::uint64_t resumed_from = have;
    if (have > 0) request.headers.emplace_back("Range", "bytes=" + std::to_string(have) + "-");
    bool write_failed = false;
    std::string write_error;
    request.body_sink = [&](std::string_view bytes) {
      if (std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size()) {
        write_failed = true;
        write_error = std::strerror(errno);
        throw Error(ErrorKind::kUnavailable, write_error);
      }
      have += bytes.size();
      if (progress) progress(have, meta.size);
    };
    try {
      const auto answer = send(env_, parse_location(meta.download_url), request, true,
                               "the download of " + meta.download_url);
      if (answer.response.status == 416 && meta.size > 0 && have >= meta.size) return;
      if (answer.response.status == 200 && resumed_from > 0) {
        // The server ignored Range and sent the whole file after our prefix: start over.
        guard.reset();
        std::FILE* again = std::fopen(partial.c_str(), "wb");
        if (again != nullptr) std::fclose(again);
        if (attempt < kDownloadTries) continue;
        throw Error(ErrorKind::kUnavailable, "the server ignores Range for " + meta.download_url);
      }
      if (answer.response.status != 200 && answer.response.status != 206) {
        throw Error(ErrorKind::kUnavailable, "downloading " + meta.download_url + " failed: HTTP " +
                                                 std::to_string(answer.response.status));
      }
      if (std::fflush(out) != 0) {
        throw Error(ErrorKind::kUnavailable,
                    "cannot write " + partial + ": " + std::strerror(errno) +
                        " (is the disk full?); the partial download is kept and resumed later");
      }
      return;
    } catch (const NetworkError&) {
      if (attempt >= kDownloadTries) throw;
    } catch (const http::TransportError& e) {
      if (attempt >= kDownloadTries)
        throw Error(ErrorKind::kUnavailable, "downloading " + meta.download_url + " failed after " +
                                                 std::to_string(attempt) + " tries: " + e.what());
    } catch (const Error& e) {
      if (write_failed) {
        throw Error(ErrorKind::kUnavailable,
                    "cannot write " + partial + ": " + write_error +
                        " (is the disk full?); the partial download is kept and resumed later");
      }
      throw;
    }
  }
}

}  // namespace onepass::hub
