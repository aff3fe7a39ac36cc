// The Hub's HTTP protocol as huggingface_hub speaks it (file_download.py, hf_api.py):
//   GET  {endpoint}/api/models/{repo}/revision/{rev}   -> {"sha": commit, "siblings": [...]}
//   HEAD {endpoint}/{repo}/resolve/{rev}/{path}         -> X-Repo-Commit, ETag or X-Linked-Etag,
//        X-Linked-Size; large (LFS) files answer 302 to another host, whose URL the GET uses.
//   GET  the same, with Range: bytes=N- to resume a partial download.
// Relative redirects are followed on every request; absolute ones on downloads only, and the
// Authorization header never goes to another host. Errors become onepass::Error with a message
// a user can act on (a token for gated repos, the revision that does not exist).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "hub/environment.h"
#include "hub/reference.h"

namespace onepass::hub {

struct RepoInfo {
  std::string commit;
  std::vector<std::string> files;  // every path in the repo at that commit
};

struct FileMeta {
  std::string commit;
  std::string etag;  // quotes and W/ removed; the sha256 of an LFS file
  std::uint64_t size = 0;
  bool lfs = false;          // X-Linked-Etag was given: etag is the content's sha256
  std::string download_url;  // absolute URL the GET starts from
};

// Raised when the endpoint cannot be reached at all (refused, unresolvable, timed out); the
// resolver turns it into a message about the cache and HF_HUB_OFFLINE.
class NetworkError : public Error {
 public:
  explicit NetworkError(const std::string& message) : Error(ErrorKind::kUnavailable, message) {}
};

// Called with (bytes so far, total bytes) while a file downloads.
using ProgressFn = std::function<void(std::uint64_t, std::uint64_t)>;

class HubClient {
 public:
  explicit HubClient(const Environment& env);

  RepoInfo repo_info(const HubId& id) const;
  FileMeta file_meta(const std::string& repo_id, const std::string& commit,
                     const std::string& path) const;
  // Appends the rest of the file to `partial` (which may hold a prefix from an earlier try:
  // asked for with Range), retrying a dropped connection a few times. Throws on failure,
  // leaving `partial` for the next try.
  void download(const FileMeta& meta, const std::string& partial, const ProgressFn& progress) const;

 private:
  Environment env_;
};

// Percent-encodes everything but unreserved characters (urllib.parse.quote(s, safe="")).
std::string url_quote(const std::string& text, bool keep_slash);

}  // namespace onepass::hub
